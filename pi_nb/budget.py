"""The token budget of a context window: a pure model (no pandas, no widgets).

What is in the window, by category, and how close it is to Pi's compaction threshold
``context_window - reserve_tokens``. Three sources of numbers are kept apart and labelled:

``usage``
    What the provider reported on the last usable assistant message
    (:func:`pi_nb.tokens.calculate_context_tokens`). It describes the request *that* response
    answered, so it lags one turn behind and says nothing about categories.
``estimate``
    Pi's own number: :func:`pi_nb.tokens.estimate_context_tokens` (last usage + chars/4 of what
    came after). This is what Pi compares with the threshold, what its footer shows as a
    percentage of the window (``percent``, ``level``), and what it calls *unknown* right after a
    compaction (see :func:`get_context_usage`).
``tiktoken``
    Exact counts with a bundled encoding, per category (system prompt, tool schemas, context
    files, skills list, user, assistant, tool results, summaries). Exact for OpenAI models,
    approximate for others; the bar is drawn from these.

Pi's warning colours are its footer's: strictly above 70 % of the window is ``"warning"``,
strictly above 90 % is ``"error"`` (``contextPercentValue > 70`` / ``> 90`` in
``footer.js``), and an unknown percentage is drawn uncoloured.

:class:`BudgetTracker` caches per-message counts so that a refresh after one more turn of a
10,000-entry session counts only the new messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from pi_nb._js import js_round, js_stringify, js_to_fixed
from pi_nb._wire import wire_dict
from pi_nb.compaction.settings import DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS
from pi_nb.errors import NotebookError
from pi_nb.messages import AgentMessage, Usage
from pi_nb.session.context import session_entry_to_context_messages
from pi_nb.tokens import (
    DEFAULT_ENCODING,
    ContextTokenEstimate,
    ContextTokenEstimateDict,
    calculate_context_tokens,
    count_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    message_token_breakdown,
)

if TYPE_CHECKING:
    from pi_nb.providers.base import ToolSchema
    from pi_nb.session.manager import SessionManager
    from pi_nb.session.types import SessionEntry

__all__ = [
    "MESSAGE_CATEGORIES",
    "PI_DEFAULT_KEEP_RECENT_TOKENS",
    "PI_DEFAULT_RESERVE_TOKENS",
    "BudgetCategory",
    "BudgetCategoryDict",
    "BudgetInput",
    "BudgetTracker",
    "ContextUsage",
    "ContextUsageDict",
    "KeepRecentWindow",
    "KeepRecentWindowDict",
    "TokenBudget",
    "TokenBudgetDict",
    "budget_input_from_session",
    "compaction_kept_messages",
    "compute_budget",
    "context_level",
    "format_tokens",
    "get_context_usage",
    "has_usage_after_latest_compaction",
    "message_category",
]

PI_DEFAULT_RESERVE_TOKENS = DEFAULT_RESERVE_TOKENS
"""Pi's ``DEFAULT_COMPACTION_SETTINGS.reserveTokens`` (:data:`pi_nb.compaction.settings.DEFAULT_RESERVE_TOKENS`)."""
PI_DEFAULT_KEEP_RECENT_TOKENS = DEFAULT_KEEP_RECENT_TOKENS
"""Pi's ``DEFAULT_COMPACTION_SETTINGS.keepRecentTokens``."""

SYSTEM_PROMPT = "system prompt"
TOOL_SCHEMAS = "tool schemas"
MESSAGE_CATEGORIES: tuple[str, ...] = ("user", "assistant", "tool results", "summaries")
"""Categories of the agent's messages, in bar order (see :func:`message_category`)."""

_ROLE_CATEGORY = {
    "user": "user",
    # bashExecution (``!cmd``) and custom (extension) messages reach the model as user messages
    # (``convert_to_llm``), so they are counted where the model sees them.
    "bashExecution": "user",
    "custom": "user",
    "assistant": "assistant",
    "toolResult": "tool results",
    "branchSummary": "summaries",
    "compactionSummary": "summaries",
}

# Pi's cut-point roles (compaction.ts isCutPointMessage), for the keep-recent window. A
# compactionSummary message stands for the compaction *entry*, which is never a cut point.
_CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary"})

Level = Literal["ok", "warning", "error"]


def message_category(message: AgentMessage) -> str | None:
    """The budget category of an agent message, or ``None`` for roles the model never sees."""
    role = message.get("role")
    return _ROLE_CATEGORY.get(role) if isinstance(role, str) else None


def format_tokens(count: int | float) -> str:
    """Pi's footer ``formatTokens``: ``999``, ``1.2k``, ``45k``, ``1.5M``, ``12M``."""
    if count < 1000:
        return str(int(count)) if float(count).is_integer() else str(count)
    if count < 10000:
        return f"{js_to_fixed(count / 1000, 1)}k"
    if count < 1000000:
        return f"{_js_round(count / 1000)}k"
    if count < 10000000:
        return f"{js_to_fixed(count / 1000000, 1)}M"
    return f"{_js_round(count / 1000000)}M"


_js_round = js_round


def context_level(percent: float | None) -> Level:
    """Pi's footer colour for a context percentage: ``> 90`` error, ``> 70`` warning.

    ``None`` (unknown, right after a compaction) is ``"ok"``: Pi shows ``?`` uncoloured.
    """
    if percent is None:
        return "ok"
    if percent > 90:
        return "error"
    if percent > 70:
        return "warning"
    return "ok"


# ---------------------------------------------------------------------------------------------
# Pi's AgentSession.getContextUsage
# ---------------------------------------------------------------------------------------------


class ContextUsageDict(TypedDict):
    """:meth:`ContextUsage.to_dict`: Pi's ``{tokens, contextWindow, percent}``."""

    tokens: int | None
    contextWindow: int
    percent: float | None


@dataclass(frozen=True)
class ContextUsage:
    """Pi's ``ContextUsage {tokens, contextWindow, percent}``; ``tokens``/``percent`` are ``None``
    when the size is unknown (a compaction with no usable response after it)."""

    tokens: int | None
    context_window: int
    percent: float | None

    def to_dict(self) -> ContextUsageDict:
        return cast(ContextUsageDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


def has_usage_after_latest_compaction(branch_entries: Sequence[SessionEntry]) -> bool:
    """``True`` unless the branch has a compaction with no usable assistant usage after it.

    Pi's reasoning (``AgentSession.getContextUsage``): after a compaction the last usage
    describes the context *before* it, so the size is unknown until the next response.
    """
    last_compaction = -1
    for i in range(len(branch_entries) - 1, -1, -1):
        if branch_entries[i].get("type") == "compaction":
            last_compaction = i
            break
    if last_compaction < 0:
        return True
    return get_last_assistant_usage(branch_entries[last_compaction + 1 :]) is not None


def get_context_usage(
    branch_entries: Sequence[SessionEntry],
    messages: Sequence[AgentMessage],
    context_window: int,
) -> ContextUsage | None:
    """Pi's ``AgentSession.getContextUsage()`` for a branch and the agent's context messages.

    ``None`` when the window is not positive (Pi: ``undefined``). After a compaction with no
    usable assistant usage since, ``tokens`` and ``percent`` are ``None``. Otherwise
    ``tokens = estimate_context_tokens(messages).tokens`` and ``percent = tokens / window * 100``.
    """
    if not context_window or context_window <= 0:
        return None
    if not has_usage_after_latest_compaction(branch_entries):
        return ContextUsage(None, context_window, None)
    tokens = estimate_context_tokens(messages).tokens
    return ContextUsage(tokens, context_window, tokens / context_window * 100)


# ---------------------------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BudgetInput:
    """Everything the budget needs, as plain data (the AgentSession builds one per refresh).

    Attributes:
        system_prompt: the system prompt sent to the model, or ``None`` when it is not known
            (a plain session file): its categories are then shown as unknown, not as 0.
        system_prompt_parts: category name -> text, for parts of the system prompt to show
            separately (``"context files"``, ``"skills list"``, ``"append"`` ...). Each text must
            occur in ``system_prompt``; it is cut out of the "system prompt" category.
        tools: the tool schemas sent with the request (dicts with ``name``, ``description``,
            ``parameters``); each is counted as its compact JSON.
        messages: the agent's context messages (``AgentMessage`` dicts, before ``convert_to_llm``).
        context_window: the model's context window in tokens.
        reserve_tokens: Pi's ``compaction.reserveTokens``; the threshold is the window minus it.
        keep_recent_tokens: Pi's ``compaction.keepRecentTokens``: what a compaction keeps verbatim.
        compaction_enabled: Pi's ``compaction.enabled`` (``should_compact`` is false without it).
        last_usage: the provider usage of the last usable assistant response (``None``: none yet).
        compacted_since_last_usage: a compaction happened and no usable response came after it;
            Pi then reports the context size as unknown.
        encoding: the tiktoken encoding for the per-category counts.
        compaction_kept_messages: when ``messages`` start with a compaction summary, how many of
            the following messages the compaction kept from before it (the rest came after it).
            Pi's cut walk needs the summary at its place in the path; ``None`` infers the count
            from the timestamps (:func:`budget_input_from_session` counts it exactly).
        leaf_id: the session entry these messages end at, when they come from a session (views
            name it in their header, so a reader knows which point of the session they show).
    """

    messages: Sequence[AgentMessage]
    context_window: int
    system_prompt: str | None = None
    system_prompt_parts: Mapping[str, str] = field(default_factory=dict)
    tools: Sequence[ToolSchema] = ()
    reserve_tokens: int = PI_DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = PI_DEFAULT_KEEP_RECENT_TOKENS
    compaction_enabled: bool = True
    last_usage: Usage | None = None
    compacted_since_last_usage: bool = False
    encoding: str = DEFAULT_ENCODING
    compaction_kept_messages: int | None = None
    leaf_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("context_window", "reserve_tokens", "keep_recent_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NotebookError(f"BudgetInput.{name} must be a non-negative int, got {value!r}")
        if self.context_window <= 0:
            raise NotebookError(f"BudgetInput.context_window must be positive, got {self.context_window}")
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            raise NotebookError("BudgetInput.system_prompt must be a str or None")
        if isinstance(self.messages, (str, bytes)) or not isinstance(self.messages, Sequence):
            raise NotebookError("BudgetInput.messages must be a sequence of message dicts")
        for name, text in self.system_prompt_parts.items():
            if not isinstance(name, str) or not isinstance(text, str):
                raise NotebookError("BudgetInput.system_prompt_parts must map str -> str")
            if name in (SYSTEM_PROMPT, TOOL_SCHEMAS, *MESSAGE_CATEGORIES):
                raise NotebookError(f"system prompt part {name!r} clashes with a built-in category")
            if text and self.system_prompt is not None and text not in self.system_prompt:
                raise NotebookError(f"system prompt part {name!r} is not part of the system prompt")


class BudgetCategoryDict(TypedDict):
    """:meth:`BudgetCategory.to_dict`: ``{name, tokens, kind, known, count}``."""

    name: str
    tokens: int
    kind: Literal["system", "tools", "messages"]
    known: bool
    count: int


@dataclass(frozen=True)
class BudgetCategory:
    """One segment of the bar: tiktoken tokens of one category.

    ``known`` is false for system-prompt categories when the system prompt is not known;
    ``count`` is how many messages (or tools, or parts) it holds.
    """

    name: str
    tokens: int
    kind: Literal["system", "tools", "messages"]
    known: bool = True
    count: int = 0

    def to_dict(self) -> BudgetCategoryDict:
        return cast(BudgetCategoryDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


class KeepRecentWindowDict(TypedDict):
    """:meth:`KeepRecentWindow.to_dict`: ``{startIndex, messageCount, estimateTokens, tokens,
    reached, includesPreviousSummary}``."""

    startIndex: int
    messageCount: int
    estimateTokens: int
    tokens: int
    reached: bool
    includesPreviousSummary: bool


@dataclass(frozen=True)
class KeepRecentWindow:
    """The newest messages a compaction now would keep verbatim (Pi's ``prepareCompaction`` cut).

    ``start_index`` is the index, in the budget's messages, of the message of Pi's first kept
    entry (``len(messages)`` when there is nothing to keep); the window is that message and all
    after it, plus - when the cut falls among the messages an earlier compaction kept - that
    compaction's summary (``includes_previous_summary``: Pi keeps the old compaction entry, and
    its summary stays in context). ``estimate_tokens`` is Pi's chars/4 sum over the window,
    ``tokens`` the tiktoken sum. ``reached`` is false when the whole conversation fits in
    ``keep_recent_tokens`` (Pi then keeps everything from the first cut point on).
    """

    start_index: int
    message_count: int
    estimate_tokens: int
    tokens: int
    reached: bool
    includes_previous_summary: bool = False

    def to_dict(self) -> KeepRecentWindowDict:
        return cast(KeepRecentWindowDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


class TokenBudgetDict(TypedDict):
    """:meth:`TokenBudget.to_dict`: the budget with camelCase keys (``leaf_id`` is not in it)."""

    encoding: str
    contextWindow: int
    reserveTokens: int
    keepRecentTokens: int
    threshold: int
    categories: list[BudgetCategoryDict]
    tokens: int
    freeTokens: int
    usageTokens: int | None
    estimate: ContextTokenEstimateDict
    estimateTokens: int | None
    percent: float | None
    level: Level
    unknown: bool
    shouldCompact: bool | None
    keepRecent: KeepRecentWindowDict
    messageCount: int
    systemPromptKnown: bool


@dataclass(frozen=True)
class TokenBudget:
    """The context window by category, with Pi's threshold maths and all three token sources.

    Attributes:
        categories: the bar's segments, in order (system prompt, its parts, tool schemas, user,
            assistant, tool results, summaries).
        tokens: tiktoken total of the known categories (the drawn length of the bar).
        free_tokens: ``context_window - tokens`` (negative when the window overflows).
        threshold: ``context_window - reserve_tokens``, where Pi compacts.
        usage_tokens: the provider's number (``calculate_context_tokens(last_usage)``), ``None``
            without a usage.
        estimate: Pi's ``estimate_context_tokens`` over the messages, always computed (it is
            *stale* when ``unknown``: the usage it starts from predates the compaction).
        estimate_tokens: Pi's number, ``None`` when unknown.
        percent: ``estimate_tokens / context_window * 100`` (Pi's footer), ``None`` when unknown.
        level: Pi's footer colour of ``percent`` (``ok``/``warning``/``error``).
        unknown: Pi would say "unknown until the next response" (compaction without usage since).
        should_compact: Pi's ``shouldCompact(estimate_tokens, window, settings)``; ``None`` when
            unknown.
        keep_recent: the part of the conversation a compaction now would keep.
        leaf_id: the session entry the budget was computed at (``BudgetInput.leaf_id``).
    """

    encoding: str
    context_window: int
    reserve_tokens: int
    keep_recent_tokens: int
    threshold: int
    categories: tuple[BudgetCategory, ...]
    tokens: int
    free_tokens: int
    usage_tokens: int | None
    estimate: ContextTokenEstimate
    estimate_tokens: int | None
    percent: float | None
    level: Level
    unknown: bool
    should_compact: bool | None
    keep_recent: KeepRecentWindow
    message_count: int
    system_prompt_known: bool
    leaf_id: str | None = None

    def category(self, name: str) -> BudgetCategory:
        """The category called ``name`` (``KeyError`` if the budget has none)."""
        for cat in self.categories:
            if cat.name == name:
                return cat
        raise KeyError(name)

    @property
    def over_threshold(self) -> bool:
        """The tiktoken total is past ``threshold`` (the drawn bar crosses the marker)."""
        return self.tokens > self.threshold

    def to_dict(self) -> TokenBudgetDict:
        return {
            "encoding": self.encoding,
            "contextWindow": self.context_window,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
            "threshold": self.threshold,
            "categories": [c.to_dict() for c in self.categories],
            "tokens": self.tokens,
            "freeTokens": self.free_tokens,
            "usageTokens": self.usage_tokens,
            "estimate": self.estimate.to_dict(),
            "estimateTokens": self.estimate_tokens,
            "percent": self.percent,
            "level": self.level,
            "unknown": self.unknown,
            "shouldCompact": self.should_compact,
            "keepRecent": self.keep_recent.to_dict(),
            "messageCount": self.message_count,
            "systemPromptKnown": self.system_prompt_known,
        }


# ---------------------------------------------------------------------------------------------
# the incremental counter
# ---------------------------------------------------------------------------------------------


def _content_key(message: AgentMessage) -> tuple[object, ...]:
    """What a message's counts depend on: its role, timestamp, call id and the *identity* of its
    content (or summary, or command and output).

    A context rebuilt from the session (``build_session_context``) makes new message dicts but
    shares their content objects with the stored entries, so the key finds them again; the
    tracker keeps a reference to every keyed object, so an id cannot be reused while cached.
    """
    raw: Mapping[str, object] = message  # any message, as it is: malformed ones are keyed too
    role = raw.get("role")
    if role == "bashExecution":
        body: tuple[object, ...] = (
            id(raw.get("command")),
            id(raw.get("output")),
            raw.get("excludeFromContext"),
            raw.get("exitCode"),
            raw.get("cancelled"),
            raw.get("truncated"),
            raw.get("fullOutputPath"),
        )
    elif role == "branchSummary" or role == "compactionSummary":
        body = (id(raw.get("summary")),)
    else:
        body = (id(raw.get("content")),)
    ts = raw.get("timestamp")
    try:
        hash(ts)
    except TypeError:
        ts = id(ts)
    return (role, ts, raw.get("toolCallId"), body)


@dataclass
class _Counted:
    message: AgentMessage
    key: tuple[object, ...]
    category: str | None
    tokens: int
    estimate: int


class BudgetTracker:
    """Computes :class:`TokenBudget` values, remembering every message it has counted.

    A message is recognised again by identity (the same dict) or, when the context was rebuilt
    from the session (new dicts around the same content objects), by its role, timestamp, call
    id and the identity of its content. Messages are treated as immutable once counted (Pi's
    are), except the last one of the list, which is always recounted because a streaming
    response grows in place; after editing an older message in place, call :meth:`clear`.
    Messages that left the context are forgotten on the next :meth:`compute`.

    ``counted`` is the number of messages tokenized so far (for tests and benchmarks).
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self.encoding = encoding
        self._by_id: dict[int, _Counted] = {}
        self._by_key: dict[tuple[object, ...], _Counted] = {}
        self._text_cache: dict[str, int] = {}
        self._prev: list[AgentMessage] = []
        self._prev_counts: list[_Counted] = []
        self._prev_tokens: dict[str, int] = {}
        self._prev_msg_counts: dict[str, int] = {}
        # (session, leaf id, leaf entry, context entries, messages) of the last session_input
        self._session_state: (
            tuple[SessionManager, str | None, SessionEntry | None, list[SessionEntry], list[AgentMessage]]
            | None
        ) = None
        self.counted = 0

    def clear(self) -> None:
        """Forget every count (after editing messages in place)."""
        self._by_id.clear()
        self._by_key.clear()
        self._prev = []
        self._session_state = None
        self._text_cache.clear()

    # -- counting ---------------------------------------------------------------------------

    def _count_text(self, text: str, encoding: str) -> int:
        if encoding != self.encoding:
            return count_tokens(text, encoding)
        hit = self._text_cache.get(text)
        if hit is None:
            hit = count_tokens(text, encoding)
            if len(self._text_cache) > 256:
                self._text_cache.clear()
            self._text_cache[text] = hit
        return hit

    def _count_message(self, message: AgentMessage, key: tuple[object, ...], encoding: str) -> _Counted:
        self.counted += 1
        category = message_category(message)
        tokens = message_token_breakdown(message, encoding).total if category is not None else 0
        return _Counted(message, key, category, tokens, estimate_tokens(message))

    def _count_one(self, i: int, message: AgentMessage, last: int, encoding: str) -> _Counted:
        hit = self._by_id.get(id(message))
        if hit is not None and hit.message is message and i != last:
            return hit
        if not isinstance(message, Mapping):
            raise NotebookError(f"message {i} must be a mapping, got {type(message).__name__}")
        key = _content_key(message)
        hit = None if i == last else self._by_key.get(key)
        if hit is None:
            hit = self._count_message(message, key, encoding)
        elif hit.message is not message:
            hit = _Counted(message, key, hit.category, hit.tokens, hit.estimate)
        return hit

    def _counts(
        self, messages: Sequence[AgentMessage], encoding: str
    ) -> tuple[list[_Counted], dict[str, int], dict[str, int]]:
        """Per-message counts and per-category totals (tokens, messages).

        Fast path: when the list starts with the previous one (the usual case: a turn appended
        messages), the previous counts and totals are reused and only the new tail is looked at;
        the check is one C-level list comparison (identity first, then equality).
        """
        if encoding != self.encoding:
            self.encoding = encoding
            self._by_id.clear()
            self._by_key.clear()
            self._prev = []
        msgs = messages if isinstance(messages, list) else list(messages)
        prev, last = self._prev, len(msgs) - 1
        k = len(prev) - 1  # the previous last message may have grown: never reused
        if k > 0 and len(msgs) > k and msgs[:k] == prev[:k]:
            out = self._prev_counts[:k]
            tokens = dict(self._prev_tokens)
            counts = dict(self._prev_msg_counts)
            dropped = self._prev_counts[k]
            if dropped.category is not None:
                tokens[dropped.category] -= dropped.tokens
                counts[dropped.category] -= 1
            for i in range(k, len(msgs)):
                hit = self._count_one(i, msgs[i], last, encoding)
                self._by_id[id(msgs[i])] = hit
                self._by_key[hit.key] = hit
                out.append(hit)
                if hit.category is not None:
                    tokens[hit.category] += hit.tokens
                    counts[hit.category] += 1
        else:
            new_by_id: dict[int, _Counted] = {}
            new_by_key: dict[tuple[object, ...], _Counted] = {}
            out = []
            tokens = dict.fromkeys(MESSAGE_CATEGORIES, 0)
            counts = dict.fromkeys(MESSAGE_CATEGORIES, 0)
            for i, message in enumerate(msgs):
                hit = self._count_one(i, message, last, encoding)
                new_by_id[id(message)] = hit
                new_by_key[hit.key] = hit
                out.append(hit)
                if hit.category is not None:
                    tokens[hit.category] += hit.tokens
                    counts[hit.category] += 1
            self._by_id, self._by_key = new_by_id, new_by_key
        self._prev, self._prev_counts = msgs if msgs is not messages else list(msgs), out
        self._prev_tokens, self._prev_msg_counts = tokens, counts
        return out, tokens, counts

    # -- the budget -------------------------------------------------------------------------

    def session_input(self, session_manager: SessionManager, **kwargs: Any) -> BudgetInput:
        """:func:`budget_input_from_session`, incrementally: when the leaf only moved forward
        (new entries appended since the last call, no new compaction), the previous path,
        context entries and messages are extended instead of rebuilt, so the cost is that of the
        new entries. Anything else (a navigation, a compaction, another session) rebuilds.
        """
        leaf = session_manager.get_leaf_id()
        state = self._session_state
        context_entries: list[SessionEntry] | None = None
        if state is not None and state[0] is session_manager and leaf is not None:
            prev_leaf_id, prev_leaf, prev_ctx, prev_msgs = state[1:]
            new: list[SessionEntry] = []
            cur = session_manager.get_entry(leaf)
            while cur is not None and cur.get("id") != prev_leaf_id and len(new) <= 1000:
                new.append(cur)
                parent = cur.get("parentId")
                cur = session_manager.get_entry(parent) if isinstance(parent, str) else None
            if cur is not None and cur is prev_leaf and not any(e.get("type") == "compaction" for e in new):
                new.reverse()
                context_entries = [*prev_ctx, *new]
                messages = [*prev_msgs, *(m for e in new for m in session_entry_to_context_messages(e))]
        if context_entries is None:
            context_entries = list(session_manager.build_context_entries())
            messages = [m for e in context_entries for m in session_entry_to_context_messages(e)]
        leaf_entry = session_manager.get_entry(leaf) if leaf is not None else None
        self._session_state = (session_manager, leaf, leaf_entry, context_entries, messages)
        return _input_from_context(
            session_manager, context_entries, messages, encoding=self.encoding, **kwargs
        )

    def compute(self, inp: BudgetInput) -> TokenBudget:
        """The budget for ``inp``; only messages not seen before are tokenized."""
        encoding = inp.encoding
        counts, msg_tokens, msg_counts = self._counts(inp.messages, encoding)
        categories: list[BudgetCategory] = []

        known = inp.system_prompt is not None
        remainder = inp.system_prompt or ""
        part_cats: list[BudgetCategory] = []
        for name, text in inp.system_prompt_parts.items():
            if known and text:
                at = remainder.find(text)
                if at < 0:  # the same text given twice, or overlapping parts
                    raise NotebookError(f"system prompt part {name!r} overlaps another part")
                remainder = remainder[:at] + remainder[at + len(text) :]
            tokens = self._count_text(text, encoding) if known and text else 0
            part_cats.append(BudgetCategory(name, tokens, "system", known, 1 if text else 0))
        categories.append(
            BudgetCategory(
                SYSTEM_PROMPT,
                self._count_text(remainder, encoding) if known else 0,
                "system",
                known,
                1 if known else 0,
            )
        )
        tool_tokens = sum(self._count_text(_tool_json(t), encoding) for t in inp.tools)
        categories.append(BudgetCategory(TOOL_SCHEMAS, tool_tokens, "tools", True, len(inp.tools)))
        categories.extend(part_cats)

        for name in MESSAGE_CATEGORIES:
            categories.append(BudgetCategory(name, msg_tokens[name], "messages", True, msg_counts[name]))

        total = sum(c.tokens for c in categories)
        estimate = _estimate_from_counts(inp.messages, counts)
        unknown = inp.compacted_since_last_usage
        estimate_tokens = None if unknown else estimate.tokens
        percent = None if estimate_tokens is None else estimate_tokens / inp.context_window * 100
        threshold = inp.context_window - inp.reserve_tokens
        should = None
        if estimate_tokens is not None:
            should = inp.compaction_enabled and estimate_tokens > threshold
        usage_tokens = calculate_context_tokens(inp.last_usage) if inp.last_usage else None
        return TokenBudget(
            encoding=encoding,
            context_window=inp.context_window,
            reserve_tokens=inp.reserve_tokens,
            keep_recent_tokens=inp.keep_recent_tokens,
            threshold=threshold,
            categories=tuple(categories),
            tokens=total,
            free_tokens=inp.context_window - total,
            usage_tokens=usage_tokens,
            estimate=estimate,
            estimate_tokens=estimate_tokens,
            percent=percent,
            level=context_level(percent),
            unknown=unknown,
            should_compact=should,
            keep_recent=_keep_recent(
                inp.messages, counts, inp.keep_recent_tokens, inp.compaction_kept_messages
            ),
            message_count=len(inp.messages),
            system_prompt_known=known,
            leaf_id=inp.leaf_id,
        )


def _tool_json(tool: ToolSchema) -> str:
    if not isinstance(tool, Mapping):
        raise NotebookError(f"a tool schema must be a mapping, got {type(tool).__name__}")
    raw: Mapping[str, object] = tool  # a caller's schema may lack keys: count what it has
    schema = {k: raw[k] for k in ("name", "description", "parameters") if k in raw}
    return js_stringify(schema or dict(raw))


def _estimate_from_counts(
    messages: Sequence[AgentMessage], counts: Sequence[_Counted]
) -> ContextTokenEstimate:
    """:func:`pi_nb.tokens.estimate_context_tokens` with the per-message estimates cached."""
    # find the last usable usage the same way Pi does, but only estimate the messages after it
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") != "assistant":
            continue
        tail = estimate_context_tokens(messages[index : index + 1])  # is its usage usable?
        if tail.last_usage_index == 0:
            trailing = sum(c.estimate for c in counts[index + 1 :])
            return ContextTokenEstimate(tail.usage_tokens + trailing, tail.usage_tokens, trailing, index)
    estimated = sum(c.estimate for c in counts)
    return ContextTokenEstimate(estimated, 0, estimated, None)


def _kept_before_compaction(messages: Sequence[AgentMessage]) -> int:
    """How many messages after a leading compaction summary come from before the compaction.

    Used when the caller did not say: the kept messages were all created before the compaction,
    so they are the leading run whose timestamps are earlier than the summary's (the summary
    takes the compaction entry's time, after the summarising call returned).
    """
    ts = messages[0].get("timestamp")
    if not isinstance(ts, (int, float)):
        return 0
    k = 0
    for m in messages[1:]:
        t = m.get("timestamp")
        if not isinstance(t, (int, float)) or t >= ts:
            break
        k += 1
    return k


def _keep_recent(
    messages: Sequence[AgentMessage],
    counts: Sequence[_Counted],
    keep_recent_tokens: int,
    kept_before: int | None,
) -> KeepRecentWindow:
    """Pi's ``prepareCompaction`` cut over the context messages.

    Pi walks the *path* entries from the previous compaction's first kept entry: the kept
    messages, then the compaction entry itself (its summary counts tokens but is never a cut
    point), then what came after. The context lists the summary first, so the walk uses that
    path order (position ``p`` -> message index ``at(p)``). The walk stops as soon as the
    window is full, so it costs the size of the window, not of the session.
    """
    n = len(messages)
    summary_at = -1  # position of a leading compaction summary in path order
    if n and messages[0].get("role") == "compactionSummary":
        summary_at = (
            _kept_before_compaction(messages) if kept_before is None else max(0, min(kept_before, n - 1))
        )

    def at(p: int) -> int:
        if summary_at < 0 or p > summary_at:
            return p
        return 0 if p == summary_at else p + 1

    def next_cut_point(p: int) -> int:
        while p < n and messages[at(p)].get("role") not in _CUT_POINT_ROLES:
            p += 1
        return p

    reached = False
    cut = n
    accumulated = 0
    for p in range(n - 1, -1, -1):
        est = counts[at(p)].estimate
        if est == 0:
            continue
        accumulated += est
        if accumulated >= keep_recent_tokens:
            reached = True
            cut = next_cut_point(p)
            break
    if cut == n:  # not reached, or no cut point after it: Pi keeps from the first cut point
        cut = next_cut_point(0)
        if cut == n:
            return KeepRecentWindow(n, 0, 0, 0, False)
    kept = [counts[at(p)] for p in range(cut, n)]
    return KeepRecentWindow(
        at(cut),
        len(kept),
        sum(c.estimate for c in kept),
        sum(c.tokens for c in kept),
        reached,
        cut < summary_at,
    )


def compute_budget(inp: BudgetInput) -> TokenBudget:
    """The token budget of ``inp`` (a fresh :class:`BudgetTracker`; keep one for live updates)."""
    return BudgetTracker(inp.encoding).compute(inp)


def _split_at_compaction(
    context_entries: Sequence[SessionEntry],
) -> tuple[Sequence[SessionEntry], Sequence[SessionEntry]] | None:
    """``(kept entries, entries after the compaction)`` of compaction-led context entries.

    Pi's context entries are ``[C] + kept (path entries before C) + after (path entries after
    C)``; the first "after" entry is C's child on the path. ``None`` without a leading compaction.
    """
    if not context_entries or context_entries[0].get("type") != "compaction":
        return None
    cid = context_entries[0].get("id")
    for i in range(1, len(context_entries)):
        if context_entries[i].get("parentId") == cid:
            return context_entries[1:i], context_entries[i:]
    return context_entries[1:], ()


def compaction_kept_messages(context_entries: Sequence[SessionEntry]) -> int | None:
    """For :attr:`BudgetInput.compaction_kept_messages`: how many context messages come from the
    entries a compaction kept (``None`` when the context does not start with a compaction).

    ``context_entries`` is Pi's ``buildContextEntries`` at the leaf
    (:meth:`SessionManager.build_context_entries`).
    """
    split = _split_at_compaction(context_entries)
    if split is None:
        return None
    return sum(len(session_entry_to_context_messages(e)) for e in split[0])


def budget_input_from_session(
    session_manager: SessionManager,
    *,
    model_context_window: int,
    reserve_tokens: int | None = None,
    keep_recent_tokens: int | None = None,
    compaction_enabled: bool | None = None,
    system_prompt: str | None = None,
    system_prompt_parts: Mapping[str, str] | None = None,
    tools: Iterable[ToolSchema] = (),
    encoding: str = DEFAULT_ENCODING,
) -> BudgetInput:
    """A :class:`BudgetInput` for a session at its current leaf.

    The compaction values not given (``reserve_tokens``, ``keep_recent_tokens``,
    ``compaction_enabled``) are the settings of the session's own directory
    (:func:`pi_nb.resources.settings.compaction_settings_for_session`: its header's ``cwd``, the
    project's ``.pi/settings.json`` over the agent dir's), so the threshold is where Pi compacts.

    The messages are the session's context (``build_session_context``), the usage is the last
    usable one on the branch, and the unknown state follows Pi (a compaction on the branch with
    no usable response after it). A session file does not record the system prompt or the tool
    schemas: pass them if you know them, else those categories show as unknown / 0.

    One walk of the root -> leaf path (``build_context_entries``); everything else is read from
    the context entries, so a refresh of a long session stays cheap.
    """
    if reserve_tokens is None or keep_recent_tokens is None or compaction_enabled is None:
        from pi_nb.resources.settings import compaction_settings_for_session

        comp = compaction_settings_for_session(session_manager)
        reserve_tokens = comp.reserve_tokens if reserve_tokens is None else reserve_tokens
        keep_recent_tokens = comp.keep_recent_tokens if keep_recent_tokens is None else keep_recent_tokens
        compaction_enabled = comp.enabled if compaction_enabled is None else compaction_enabled
    context_entries = session_manager.build_context_entries()
    messages = [m for e in context_entries for m in session_entry_to_context_messages(e)]
    return _input_from_context(
        session_manager,
        context_entries,
        messages,
        model_context_window=model_context_window,
        reserve_tokens=reserve_tokens,
        keep_recent_tokens=keep_recent_tokens,
        compaction_enabled=compaction_enabled,
        system_prompt=system_prompt,
        system_prompt_parts=system_prompt_parts,
        tools=tools,
        encoding=encoding,
    )


def _input_from_context(
    session_manager: SessionManager,
    context_entries: Sequence[SessionEntry],
    messages: Sequence[AgentMessage],
    *,
    model_context_window: int,
    reserve_tokens: int = PI_DEFAULT_RESERVE_TOKENS,
    keep_recent_tokens: int = PI_DEFAULT_KEEP_RECENT_TOKENS,
    compaction_enabled: bool = True,
    system_prompt: str | None = None,
    system_prompt_parts: Mapping[str, str] | None = None,
    tools: Iterable[ToolSchema] = (),
    encoding: str = DEFAULT_ENCODING,
) -> BudgetInput:
    split = _split_at_compaction(context_entries)
    last_usage = get_last_assistant_usage(context_entries)
    compacted = False
    kept_messages = None
    if split is not None:
        kept, after = split
        kept_messages = sum(len(session_entry_to_context_messages(e)) for e in kept)
        compacted = get_last_assistant_usage(after) is None
        if last_usage is None:  # the last usable response is older than the kept entries
            last_usage = get_last_assistant_usage(session_manager.get_branch())
    return BudgetInput(
        messages=messages,
        context_window=model_context_window,
        system_prompt=system_prompt,
        system_prompt_parts=dict(system_prompt_parts or {}),
        tools=tuple(tools),
        reserve_tokens=reserve_tokens,
        keep_recent_tokens=keep_recent_tokens,
        compaction_enabled=compaction_enabled,
        last_usage=last_usage,
        compacted_since_last_usage=compacted,
        encoding=encoding,
        compaction_kept_messages=kept_messages,
        leaf_id=session_manager.get_leaf_id(),
    )
