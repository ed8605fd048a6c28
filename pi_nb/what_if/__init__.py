"""What-if replay of Pi's automatic compaction over a recorded session (beyond Pi; no pandas).

:func:`replay` walks the active branch of a recorded session (pi_nb's or Pi's own files) in order
and re-decides, with another policy (context window, ``reserveTokens``, ``keepRecentTokens``), every
automatic-compaction decision Pi 0.85.0 makes, without calling a model:

* **after a run** (``agent_end``): on the last assistant of a run, i.e. an assistant with no tool
  call, or one that stopped with ``error``/``aborted`` (aborted ones are skipped, as Pi does);
* **before a new prompt**: on the last assistant of the agent state, just before a ``user``
  message that starts a new prompt (aborted ones included, as Pi does);
* **between turns** (Pi's ``prepareNextTurn``): after a tool-result batch, before the next
  assistant request (or a steering message), on ``estimateContextTokens`` of the agent state.

Each checkpoint runs Pi's ``_checkCompaction`` rules verbatim (:func:`pi_nb.compaction.should_compact`,
:func:`~pi_nb.compaction.is_context_overflow`, :func:`~pi_nb.compaction.is_recoverable_length`, the
one-retry overflow flag, the "older than the latest compaction" rule). Where Pi would compact,
:func:`~pi_nb.compaction.prepare_compaction` runs on the *simulated* path and a compaction entry is
inserted there, so every later decision sees the compacted context exactly as Pi would: the agent
state is rebuilt from the path (``buildSessionContext``), the trailing failed response is dropped
for an overflow retry, and later cut points start at the simulated ``firstKeptEntryId``. The
recorded compaction entries are taken out of the simulated path (they are the recorded policy's
decisions) but are reported beside the simulated ones.

Reading a recorded session this way needs a few rules of its own; they are all here.

**Runs.** A session file does not mark where a run ended. A ``user`` message after a tool-result
batch is taken as a steering message of the same run (between-turns checkpoint before it); a
``user`` message after a final answer starts a new prompt (after-run checkpoint on the answer,
then the pre-prompt checkpoint right before the user message, after any model change or other
entries between them). A follow-up queued while a run was streaming therefore counts as a new
prompt, and a run that a tool ended (``terminate``) counts as going on. An assistant right after a
run-ending one (Pi's ``agent.continue()`` after an overflow compaction) starts a run with no
between-turns checkpoint before it, as in Pi.

**Retries first.** A run that ends with a transient error (overload, rate limit, a dropped
connection; never an overflow) which the recording follows with another answer was retried by Pi
before any compaction check: the replay drops the error from the agent state, as Pi does, and
records a ``"retried"`` decision instead of checking.

**The model in force** is Pi's: the latest ``model_change`` entry or assistant message walked (the
model Pi restores when a session is opened). An overflow error of another model does not count.
The context window (``context_window``) is still looked up by the latest ``model_change``.

**Pi versions.** ``rules`` picks the Pi version whose checkpoints apply (:data:`PI_RULE_CHANGES`):
before 0.84.4 there is no between-turns checkpoint, before 0.23.3 no pre-prompt one.

**Order instead of clocks.** Pi decides "this usage is older than the latest compaction" by
comparing timestamps. The replay knows the order of everything it walked, so a message is stale
when it was walked before the latest *simulated* compaction (the same answer, without depending
on equal milliseconds).

**Stale usage.** A recorded assistant usage counts the context that was really sent. After the
simulated history diverges from the recorded one (a compaction one side made and the other did
not, at another cut, or with another summary), that number describes a context the simulated
agent never sent. The replay then *rebases* it: ``input`` (and ``totalTokens``) move by
``Δ = Σ estimateTokens(simulated request) - Σ estimateTokens(recorded request)``, where a request
is the agent state right before that assistant was asked (Pi's own per-message estimate, the same
one it uses for the trailing messages); when ``input`` would go below 0 the rest comes off
``cacheRead``. Output tokens are what the model wrote and stay. Everything downstream then uses the
rebased message exactly where Pi uses the real one: ``calculateContextTokens`` of the triggering
assistant, the overflow checks, ``estimateContextTokens`` anchors and ``tokensBefore``. While the
two histories are the same, Δ is 0 and the recorded message is used untouched, so replaying the
recorded policy reproduces the recorded decisions. With ``usage="recorded"`` the recorded numbers
are used as they are (stale after a divergence: useful to see how far off that is).

**Recorded failures stay.** The conversation is what was recorded: a response that overflowed the
recorded window is still an overflow error in the replay (Pi's rule reads the provider's error
text, whatever the window), and a retry that followed it still follows. A simulated overflow
compaction with ``willRetry`` where the recording went on with a new prompt is reported, but the
retry the model would have made is not invented.

**Summaries.** When a simulated compaction falls at the same place, with the same
``firstKeptEntryId``, as a recorded one, and the history up to there is the same, the recorded
summary (and entry id and timestamp) is reused: that is what the model wrote there. Otherwise the
summary is a placeholder of a realistic length (``summary_tokens`` estimated tokens, by default the
mean of the recorded summaries of the session, else 1,000; capped by Pi's output caps of
``0.8 * reserveTokens``, plus ``0.5 * reserveTokens`` for a split turn's prefix) with Pi's section
headings and the exact ``<read-files>``/``<modified-files>`` lists, or, with a ``model``, a real
summary from :func:`pi_nb.compaction.compact` (:func:`areplay`; :func:`replay` runs it with
``asyncio.run`` outside an event loop). A recorded compaction where Pi's rule, run on the recorded
state with the replay's policy, asks for none is reported as ``"manual"`` (the user's
``/compact``); manual compactions are not replayed.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict, TypeGuard, cast, overload

from pi_nb.compaction.decision import Checkpoint, CompactionDecision, ContextCount, ModelRef, decide
from pi_nb.compaction.overflow import is_context_overflow
from pi_nb.compaction.preparation import CompactionPreparation, prepare_compaction
from pi_nb.compaction.retry import is_retryable_assistant_error
from pi_nb.compaction.serialization import compute_file_lists, format_file_operations
from pi_nb.compaction.settings import DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, CompactionSettings
from pi_nb.errors import InvalidSessionFileError, ReplayError
from pi_nb.harness import open_foreign
from pi_nb.messages import AgentMessage, AssistantMessage, Usage
from pi_nb.session.context import session_entry_to_context_messages
from pi_nb.session.manager import SessionManager
from pi_nb.session.source import not_a_session
from pi_nb.session.types import (
    CompactionEntry,
    FileEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionMessageEntry,
)
from pi_nb.tokens import calculate_context_tokens, checked_context_tokens, estimate_tokens

if TYPE_CHECKING:
    from pi_nb.providers.base import Model
    from pi_nb.what_if.policies.base import ContextPolicy
    from pi_nb.what_if.policies.replay import PolicyReplay

__all__ = [
    "CHECKPOINTS",
    "DEFAULT_SUMMARY_TOKENS",
    "PI_RULE_CHANGES",
    "PiRules",
    "RecordedCompaction",
    "RecordedCompactionDict",
    "ReplayCompaction",
    "ReplayCompactionDict",
    "ReplayDecision",
    "ReplayDecisionDict",
    "ReplayOutcome",
    "ReplayResult",
    "ReplayResultDict",
    "ReplayStep",
    "ReplayStepDict",
    "SweepOutcome",
    "SweepOutcomeDict",
    "areplay",
    "pi_rules",
    "placeholder_summary",
    "replay",
    "sweep",
]

CHECKPOINTS: tuple[Checkpoint, ...] = ("after_run", "pre_prompt", "between_turns")
"""The three places Pi 0.85.0 checks for automatic compaction, in pi_nb's names."""

DEFAULT_SUMMARY_TOKENS = 1000
"""Estimated tokens of a placeholder summary when the session has no recorded summary to go by."""

PI_RULE_CHANGES: tuple[tuple[str, str, str], ...] = (
    ("0.23.3", "2025-12-17", "the pre-prompt checkpoint (an aborted answer can trigger a compaction)"),
    ("0.80.4", "2026-07-09", "custom messages count toward keepRecentTokens (before: message entries only)"),
    ("0.84.4", "2026-08-28", "the between-turns checkpoint (compact after tool results, mid-run)"),
    ("0.85.0", "2026-09-04", "the version pi_nb follows"),
)
"""The Pi releases that changed when or how automatic compaction runs: (version, release date, what)."""


def _version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        raise ReplayError(f"rules must be a Pi version like '0.84.4' or 'auto', got {version!r}") from None


@dataclass(frozen=True)
class PiRules:
    """The compaction rules of one Pi version, as far as they differ from 0.85.0's.

    ``pre_prompt``: the check before a new prompt exists (since 0.23.3); ``between_turns``: the
    check after a tool-result batch exists (since 0.84.4); ``custom_messages_kept``: custom
    messages count toward ``keepRecentTokens`` (since 0.80.4; before, the replay's cut counts
    only ``message`` entries, as Pi did).
    """

    version: str
    pre_prompt: bool = True
    between_turns: bool = True
    custom_messages_kept: bool = True


def pi_rules(version: str = "0.85.0", header: Mapping[str, Any] | None = None) -> PiRules:
    """The rules of Pi ``version``; ``"auto"``: of the newest release on or before the day the
    session ``header`` was written (0.85.0 without a header or a readable date)."""
    if version == "auto":
        day = header.get("timestamp") if header is not None else None
        version = "0.85.0"
        if isinstance(day, str) and len(day) >= 10:
            released = [v for v, date, _ in PI_RULE_CHANGES if date <= day[:10]]
            version = released[-1] if released else "0.23.2"
    if not isinstance(version, str):
        raise ReplayError(f"rules must be a Pi version like '0.84.4' or 'auto', got {version!r}")
    key = _version_key(version)
    return PiRules(
        version=version,
        pre_prompt=key >= (0, 23, 3),
        between_turns=key >= (0, 84, 4),
        custom_messages_kept=key >= (0, 80, 4),
    )


WindowSpec: TypeAlias = int | Mapping[str, int] | Callable[[ModelChangeEntry | None], int]
"""A context window: one number, a mapping ``"provider/modelId"`` (or ``"modelId"``, or ``"*"``)
-> window, or a callable given the ``model_change`` entry in force (``None`` before the first)."""

SessionInput: TypeAlias = SessionManager | str | os.PathLike[str] | Sequence[FileEntry]
"""A session to replay: a manager, a session file, or its entries (the header optional)."""

_PI_HEADINGS = (
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
)
_PREFIX_HEADINGS = ("## Original Request", "## Early Progress", "## Context for Suffix")
_SPLIT_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
_MESSAGE_ROLES_AFTER_TOOLS = frozenset({"user", "assistant", "custom", "bashExecution", "branchSummary"})


# =============================================================================================
# results
# =============================================================================================


Reason: TypeAlias = Literal["threshold", "overflow"]
RecordedReason: TypeAlias = Literal["threshold", "overflow", "manual"]
SummarySource: TypeAlias = Literal["recorded", "placeholder", "model"]
TokensSource: TypeAlias = Literal["usage", "rebased_usage", "estimate"]


class ReplayCompactionDict(TypedDict):
    """:meth:`ReplayCompaction.to_dict` (camelCase keys; the entry itself is left out)."""

    id: str
    checkpoint: Checkpoint
    reason: Reason
    willRetry: bool
    position: int
    afterEntryId: str | None
    firstKeptEntryId: str
    tokensBefore: int
    tokensAfter: int
    isSplitTurn: bool
    messagesSummarized: int
    turnPrefixMessages: int
    tokensSummarized: int
    summaryChars: int
    summarySource: SummarySource


class ReplayDecisionDict(TypedDict):
    """:meth:`ReplayDecision.to_dict` (camelCase keys)."""

    index: int
    checkpoint: Checkpoint
    position: int
    pathLength: int
    afterEntryId: str | None
    messageEntryId: str | None
    contextWindow: int
    threshold: int
    tokens: int | None
    tokensSource: TokensSource | None
    reason: Reason | None
    outcome: str
    willRetry: bool
    compaction: ReplayCompactionDict | None


class RecordedCompactionDict(TypedDict):
    """:meth:`RecordedCompaction.to_dict` (camelCase keys)."""

    id: str
    checkpoint: Checkpoint
    reason: RecordedReason
    position: int
    afterEntryId: str | None
    firstKeptEntryId: str | None
    tokensBefore: int | None
    tokensAfter: int
    summaryChars: int


class ReplayStepDict(TypedDict):
    """:meth:`ReplayStep.to_dict` (camelCase keys)."""

    position: int
    entryId: str | None
    kind: str
    simulatedTokens: int
    recordedTokens: int
    usageTokens: int | None
    simulatedUsageTokens: int | None


class ReplayOutcome(TypedDict):
    """:meth:`ReplayResult.outcome`: the numbers a policy sweep compares (snake_case keys, a table row)."""

    compactions: int
    threshold_compactions: int
    overflow_compactions: int
    split_turns: int
    skipped_nothing_to_compact: int
    tokens_summarized: int
    peak_context_tokens: int
    final_context_tokens: int
    recorded_compactions: int
    recorded_peak_context_tokens: int


class ReplayResultDict(TypedDict):
    """:meth:`ReplayResult.to_dict` (camelCase keys; the simulated entries are left out)."""

    sessionId: str | None
    sessionFile: str | None
    settings: Mapping[str, Any]  # CompactionSettings.to_dict(): Pi's compaction settings object
    contextWindow: int | None
    usageMode: Literal["rebase", "recorded"]
    decisions: list[ReplayDecisionDict]
    compactions: list[ReplayCompactionDict]
    recordedCompactions: list[RecordedCompactionDict]
    steps: list[ReplayStepDict]


class SweepOutcomeDict(ReplayOutcome):
    """:meth:`SweepOutcome.to_dict`: the policy, then :class:`ReplayOutcome` (one table row)."""

    session_id: str | None
    session_file: str | None
    context_window: int
    reserve_tokens: int
    keep_recent_tokens: int


@dataclass(frozen=True)
class ReplayCompaction:
    """A compaction the replayed policy made (or a recorded one it reproduced).

    ``after_entry_id`` is the recorded entry it follows (its parent in the simulated path);
    ``position`` the number of recorded (non-compaction) entries walked before it.
    ``tokens_after`` is Pi's ``estimatedTokensAfter`` (estimates of the rebuilt context);
    ``tokens_summarized`` the estimated tokens of the messages sent to the summariser (history and
    turn prefix). ``summary_source``: ``"recorded"``, ``"placeholder"`` or ``"model"``.
    """

    id: str
    checkpoint: Checkpoint
    reason: Reason
    will_retry: bool
    position: int
    after_entry_id: str | None
    first_kept_entry_id: str
    tokens_before: int
    tokens_after: int
    is_split_turn: bool
    messages_summarized: int
    turn_prefix_messages: int
    tokens_summarized: int
    summary_chars: int
    summary_source: SummarySource
    entry: CompactionEntry = field(repr=False, compare=False)

    def to_dict(self) -> ReplayCompactionDict:
        return {
            "id": self.id,
            "checkpoint": self.checkpoint,
            "reason": self.reason,
            "willRetry": self.will_retry,
            "position": self.position,
            "afterEntryId": self.after_entry_id,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "isSplitTurn": self.is_split_turn,
            "messagesSummarized": self.messages_summarized,
            "turnPrefixMessages": self.turn_prefix_messages,
            "tokensSummarized": self.tokens_summarized,
            "summaryChars": self.summary_chars,
            "summarySource": self.summary_source,
        }


@dataclass(frozen=True)
class ReplayDecision:
    """One checkpoint the replay passed, and what Pi's rules decided there.

    ``tokens`` is the number Pi compared with ``threshold`` (``None`` when a rule stopped before
    any number was needed) and ``tokens_source`` where it came from: ``"usage"`` (the recorded
    assistant usage), ``"rebased_usage"`` (see the module docstring) or ``"estimate"``.
    ``outcome``: ``"compacted"``, ``"below_threshold"``, ``"nothing_to_compact"`` (Pi skips
    silently), ``"stale"`` (the message or its usage anchor is older than the latest
    compaction), ``"aborted"`` (after a run), ``"recovery_failed"`` (a second overflow in a row),
    ``"disabled"``, ``"no_window"`` (between turns with a window of 0), ``"retried"`` (after a
    run: a transient error Pi retried before any check; the error left the agent state).
    ``position`` counts the recorded (non-compaction) entries walked before the checkpoint and
    ``path_length`` the simulated path's entries then (``result.entries[:path_length]`` is the
    branch Pi's rules looked at).
    """

    index: int
    checkpoint: Checkpoint
    position: int
    path_length: int
    after_entry_id: str | None
    message_entry_id: str | None
    context_window: int
    threshold: int
    tokens: int | None
    tokens_source: TokensSource | None
    reason: Reason | None
    outcome: str
    will_retry: bool = False
    compaction: ReplayCompaction | None = None

    @property
    def fired(self) -> bool:
        """Pi's rules asked for a compaction here (it may still have had nothing to cut)."""
        return self.reason is not None and self.outcome in ("compacted", "nothing_to_compact")

    def to_dict(self) -> ReplayDecisionDict:
        return {
            "index": self.index,
            "checkpoint": self.checkpoint,
            "position": self.position,
            "pathLength": self.path_length,
            "afterEntryId": self.after_entry_id,
            "messageEntryId": self.message_entry_id,
            "contextWindow": self.context_window,
            "threshold": self.threshold,
            "tokens": self.tokens,
            "tokensSource": self.tokens_source,
            "reason": self.reason,
            "outcome": self.outcome,
            "willRetry": self.will_retry,
            "compaction": self.compaction.to_dict() if self.compaction is not None else None,
        }


@dataclass(frozen=True)
class RecordedCompaction:
    """A compaction entry of the recording, where it sat, and the checkpoint it most likely came from.

    ``checkpoint`` is inferred from its place: after a tool-result batch -> ``"between_turns"``;
    after a failed (overflow/length) response -> ``"after_run"`` with reason ``"overflow"``;
    after a final answer -> ``"pre_prompt"`` when other entries (a model change...) came between
    the answer and it or the answer was aborted, else ``"after_run"`` (timestamps cannot tell:
    both are written right after the summary call). ``reason`` is ``"overflow"`` after a failed
    response; otherwise Pi's decision is run on the recorded state there with the replay's policy:
    ``"threshold"`` when it asks for a compaction, else ``"manual"`` (the user's ``/compact``: below
    the threshold, or right after another compaction). Give the recorded policy to tell them apart.
    """

    id: str
    checkpoint: Checkpoint
    reason: RecordedReason
    position: int
    after_entry_id: str | None
    first_kept_entry_id: str | None
    tokens_before: int | None
    tokens_after: int
    summary_chars: int

    def to_dict(self) -> RecordedCompactionDict:
        return {
            "id": self.id,
            "checkpoint": self.checkpoint,
            "reason": self.reason,
            "position": self.position,
            "afterEntryId": self.after_entry_id,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "summaryChars": self.summary_chars,
        }


@dataclass(frozen=True)
class ReplayStep:
    """The context size after one walked entry (or compaction), in both histories.

    ``simulated_tokens`` / ``recorded_tokens`` are ``estimateContextTokens(agent state).tokens``
    of the simulated and the recorded agent; ``usage_tokens`` / ``simulated_usage_tokens`` the
    recorded and the (possibly rebased) ``calculateContextTokens`` of an assistant's usage.
    ``kind`` is the message role, ``"compaction"`` (simulated) or ``"recorded_compaction"``.
    """

    position: int
    entry_id: str | None
    kind: str
    simulated_tokens: int
    recorded_tokens: int
    usage_tokens: int | None = None
    simulated_usage_tokens: int | None = None

    def to_dict(self) -> ReplayStepDict:
        return {
            "position": self.position,
            "entryId": self.entry_id,
            "kind": self.kind,
            "simulatedTokens": self.simulated_tokens,
            "recordedTokens": self.recorded_tokens,
            "usageTokens": self.usage_tokens,
            "simulatedUsageTokens": self.simulated_usage_tokens,
        }


@dataclass(frozen=True)
class ReplayResult:
    """What :func:`replay` found: every checkpoint decision, the simulated and recorded
    compactions, the context size along the way, and the simulated path itself."""

    session_id: str | None
    session_file: str | None
    settings: CompactionSettings
    context_window: int | None
    decisions: tuple[ReplayDecision, ...]
    recorded_compactions: tuple[RecordedCompaction, ...]
    steps: tuple[ReplayStep, ...]
    entries: tuple[SessionEntry, ...] = field(repr=False)
    usage_mode: Literal["rebase", "recorded"] = "rebase"

    @property
    def compactions(self) -> tuple[ReplayCompaction, ...]:
        return tuple(d.compaction for d in self.decisions if d.compaction is not None)

    @property
    def peak_context_tokens(self) -> int:
        return max((s.simulated_tokens for s in self.steps), default=0)

    @property
    def recorded_peak_context_tokens(self) -> int:
        return max((s.recorded_tokens for s in self.steps), default=0)

    @property
    def final_context_tokens(self) -> int:
        return self.steps[-1].simulated_tokens if self.steps else 0

    def outcome(self) -> ReplayOutcome:
        """The numbers a policy sweep compares (one row per session and policy)."""
        comps = self.compactions
        return {
            "compactions": len(comps),
            "threshold_compactions": sum(1 for c in comps if c.reason == "threshold"),
            "overflow_compactions": sum(1 for c in comps if c.reason == "overflow"),
            "split_turns": sum(1 for c in comps if c.is_split_turn),
            "skipped_nothing_to_compact": sum(1 for d in self.decisions if d.outcome == "nothing_to_compact"),
            "tokens_summarized": sum(c.tokens_summarized for c in comps),
            "peak_context_tokens": self.peak_context_tokens,
            "final_context_tokens": self.final_context_tokens,
            "recorded_compactions": len(self.recorded_compactions),
            "recorded_peak_context_tokens": self.recorded_peak_context_tokens,
        }

    def to_dict(self) -> ReplayResultDict:
        return {
            "sessionId": self.session_id,
            "sessionFile": self.session_file,
            "settings": self.settings.to_dict(),
            "contextWindow": self.context_window,
            "usageMode": self.usage_mode,
            "decisions": [d.to_dict() for d in self.decisions],
            "compactions": [c.to_dict() for c in self.compactions],
            "recordedCompactions": [c.to_dict() for c in self.recorded_compactions],
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass(frozen=True)
class SweepOutcome:
    """One (session, policy) cell of :func:`sweep`: the policy and :meth:`ReplayResult.outcome`."""

    session_id: str | None
    session_file: str | None
    context_window: int
    reserve_tokens: int
    keep_recent_tokens: int
    outcome: ReplayOutcome

    def to_dict(self) -> SweepOutcomeDict:
        return {
            "session_id": self.session_id,
            "session_file": self.session_file,
            "context_window": self.context_window,
            "reserve_tokens": self.reserve_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
            **self.outcome,
        }


# =============================================================================================
# placeholder summaries
# =============================================================================================


def placeholder_summary(
    preparation: CompactionPreparation, summary_tokens: int = DEFAULT_SUMMARY_TOKENS
) -> str:
    """A stand-in summary of about ``summary_tokens`` estimated tokens (no model call).

    It has the shape of Pi's: the history template's headings (and, for a split turn, the
    turn-prefix part after Pi's separator), padded to the wanted length, then the exact
    ``<read-files>``/``<modified-files>`` lists Pi appends. The length is capped by Pi's output
    caps (``0.8 * reserveTokens`` for the history, ``0.5 * reserveTokens`` for a turn prefix).
    """
    if summary_tokens < 0:
        raise ReplayError(f"summary_tokens must be 0 or more, got {summary_tokens}")
    reserve = preparation.settings.reserve_tokens
    history_tokens = min(summary_tokens, max(0, math.floor(0.8 * reserve)))
    n = len(preparation.messages_to_summarize)
    history = _padded(
        _PI_HEADINGS,
        f"(replay placeholder: no model was asked; {n} message(s) summarised here)",
        history_tokens,
    )
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        if not preparation.messages_to_summarize:
            history = "No prior history."
        prefix_tokens = min(summary_tokens // 2, max(0, math.floor(0.5 * reserve)))
        prefix = _padded(
            _PREFIX_HEADINGS,
            f"(replay placeholder: {len(preparation.turn_prefix_messages)} message(s) of the split turn)",
            prefix_tokens,
        )
        text = history + _SPLIT_SEPARATOR + prefix
    else:
        text = history
    lists = compute_file_lists(preparation.file_ops)
    return text + format_file_operations(lists.read_files, lists.modified_files)


def _padded(headings: Sequence[str], note: str, tokens: int) -> str:
    body = "\n\n".join(f"{h}\n{note if i == 0 else '-'}" for i, h in enumerate(headings))
    target = tokens * 4
    if len(body) >= target:
        return body
    filler = " placeholder"
    missing = target - len(body)
    return body + (filler * (missing // len(filler) + 1))[:missing]


# =============================================================================================
# the agent state, as Pi keeps it, with Pi's estimate kept incrementally
# =============================================================================================


# Narrowing by tag, read with ``get`` as Pi reads ``entry.type`` / ``message.role``: an entry or
# message from a file may lack the key (it is then none of these).


def _is_message_entry(entry: SessionEntry) -> TypeGuard[SessionMessageEntry]:
    return entry.get("type") == "message"


def _is_compaction(entry: SessionEntry) -> TypeGuard[CompactionEntry]:
    return entry.get("type") == "compaction"


def _is_model_change(entry: SessionEntry) -> TypeGuard[ModelChangeEntry]:
    return entry.get("type") == "model_change"


def _is_assistant(message: AgentMessage) -> TypeGuard[AssistantMessage]:
    return message.get("role") == "assistant"


def _reparented(entry: SessionEntry, parent: str | None) -> SessionEntry:
    """A copy of ``entry`` with another ``parentId`` (the same kind of entry, so the cast holds)."""
    return cast(SessionEntry, {**entry, "parentId": parent})


def _usable_usage_tokens(message: AgentMessage) -> int | None:
    """Pi's ``getAssistantUsage`` test: the context tokens of a usable assistant usage, else None."""
    if not _is_assistant(message) or "usage" not in message:
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message["usage"]
    if not usage:
        return None
    tokens = calculate_context_tokens(usage)
    return tokens if tokens > 0 else None


class _State:
    """Agent-state messages with ``estimateContextTokens`` and the estimate sum kept up to date.

    ``tags`` holds, for each message, the walk index of the entry it came from (for the "older
    than the latest compaction" rule) and ``keys`` an identity of its source (to tell whether two
    histories are the same).
    """

    __slots__ = ("est", "keys", "last_usable", "msgs", "tags", "total", "trailing", "usable")

    def __init__(self) -> None:
        self.msgs: list[AgentMessage] = []
        self.tags: list[int] = []
        self.keys: list[object] = []
        self.est: list[int] = []
        self.usable: list[int | None] = []
        self.total = 0
        self.last_usable: int | None = None
        self.trailing = 0

    def append(self, message: AgentMessage, tag: int, key: object) -> None:
        est = estimate_tokens(message)
        usable = _usable_usage_tokens(message)
        self.msgs.append(message)
        self.tags.append(tag)
        self.keys.append(key)
        self.est.append(est)
        self.usable.append(usable)
        self.total += est
        if usable is not None:
            self.last_usable = len(self.msgs) - 1
            self.trailing = 0
        else:
            self.trailing += est

    def reset(self, items: Iterable[tuple[AgentMessage, int, object]]) -> None:
        self.__init__()  # type: ignore[misc]
        for message, tag, key in items:
            self.append(message, tag, key)

    def drop_last(self) -> None:
        items = list(zip(self.msgs, self.tags, self.keys, strict=True))[:-1]
        self.reset(items)

    def tokens(self) -> int:
        """``estimateContextTokens(messages).tokens``."""
        if self.last_usable is None:
            return self.total
        usable = self.usable[self.last_usable]
        assert usable is not None
        return usable + self.trailing

    def anchor(self) -> int | None:
        """``estimateContextTokens(messages).lastUsageIndex``."""
        return self.last_usable

    def last_assistant(self) -> int | None:
        for i in range(len(self.msgs) - 1, -1, -1):
            if self.msgs[i].get("role") == "assistant":
                return i
        return None


def _context_items(
    path: Sequence[SessionEntry], tags: Sequence[int], keys: Sequence[object]
) -> list[tuple[AgentMessage, int, object]]:
    """``buildSessionContext(path).messages`` for a path ending at its latest compaction (Pi's
    ``buildContextEntries`` then ``sessionEntryToContextMessages``), with each message's tag/key."""
    comp_index = max(i for i, e in enumerate(path) if e.get("type") == "compaction")
    comp = path[comp_index]
    first_kept = comp.get("firstKeptEntryId")
    chosen: list[int] = [comp_index]
    for i in range(comp_index):
        if path[i].get("id") == first_kept and isinstance(first_kept, str):
            chosen.extend(range(i, comp_index))
            break
    chosen.extend(range(comp_index + 1, len(path)))
    out: list[tuple[AgentMessage, int, object]] = []
    for i in chosen:
        entry = path[i]
        if _is_message_entry(entry) and isinstance(entry.get("message"), Mapping):
            message = entry["message"]
            if message.get("content") is not None or message.get("role") not in (
                "user",
                "assistant",
                "toolResult",
            ):
                out.append((message, tags[i], keys[i]))
                continue
        for m in session_entry_to_context_messages(entry):
            out.append((m, tags[i], keys[i]))
    return out


def _entry_messages(entry: SessionEntry) -> list[AgentMessage]:
    if _is_message_entry(entry):
        message = entry.get("message")
        if isinstance(message, Mapping) and (
            message.get("content") is not None
            or message.get("role") not in ("user", "assistant", "toolResult")
        ):
            return [message]
    return session_entry_to_context_messages(entry)


def _role(entry: SessionEntry) -> str | None:
    if _is_message_entry(entry):
        message = entry.get("message")
        return message.get("role") if isinstance(message, Mapping) else None
    return None


def _has_tool_calls(message: AgentMessage) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "toolCall" for b in content
    )


def _ends_run(message: AgentMessage) -> bool:
    """An assistant after which the run ends: an error/abort, or no tool call to run."""
    return message.get("stopReason") in ("error", "aborted") or not _has_tool_calls(message)


def _rebased(message: AssistantMessage, delta: int) -> AssistantMessage:
    """The message with its usage moved by ``delta`` context tokens (see the module docstring)."""
    usage = message.get("usage")
    if delta == 0 or not isinstance(usage, Mapping) or not usage:
        return message
    if calculate_context_tokens(usage) <= 0:
        return message
    new: Usage = {**usage}
    inp = int(usage.get("input") or 0) + delta
    cache_read = int(usage.get("cacheRead") or 0)
    if inp < 0:
        cache_read = max(0, cache_read + inp)
        inp = 0
    moved = (inp - int(usage.get("input") or 0)) + (cache_read - int(usage.get("cacheRead") or 0))
    new["input"] = inp
    new["cacheRead"] = cache_read
    total = int(usage.get("totalTokens") or 0)
    new["totalTokens"] = max(0, total + moved) if total > 0 else 0
    return {**message, "usage": new}


def _strip_file_lists(summary: str) -> str:
    for marker in ("\n\n<read-files>\n", "\n\n<modified-files>\n"):
        at = summary.find(marker)
        if at >= 0:
            summary = summary[:at]
    return summary


# =============================================================================================
# the walk
# =============================================================================================


@dataclass
class _SummaryRequest:
    """What the walk needs from a model: a summary for this preparation."""

    preparation: CompactionPreparation


@dataclass
class _Policy:
    settings: CompactionSettings
    window: WindowSpec
    max_tokens: int
    summary_tokens: int | None
    usage_mode: Literal["rebase", "recorded"]
    has_model: bool
    rules: str = "0.85.0"
    manual: str = "skip"


def _window_for(spec: WindowSpec, model_change: ModelChangeEntry | None) -> int:
    if isinstance(spec, bool):
        raise ReplayError(f"context_window must be a number of tokens, got {spec!r}")
    if isinstance(spec, int):
        value: object = spec
    elif isinstance(spec, Mapping):
        provider = model_change.get("provider") if model_change else None
        model_id = model_change.get("modelId") if model_change else None
        for key in (f"{provider}/{model_id}", str(model_id), "*"):
            if key in spec:
                value = spec[key]
                break
        else:
            raise ReplayError(
                f"no context window for model {provider}/{model_id} (give it, or a '*' default)"
            )
    elif callable(spec):
        value = spec(model_change)
    else:
        raise ReplayError(
            f"context_window must be an int, a mapping or a callable, got {type(spec).__name__}"
        )
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReplayError(f"a context window must be a whole number >= 0, got {value!r}")
    return value


class _Walk:
    """One replay: walks the recorded path; :meth:`run` is a generator that yields a
    :class:`_SummaryRequest` when it needs a model's summary and is sent the summary text."""

    def __init__(
        self, path: Sequence[SessionEntry], policy: _Policy, header: Mapping[str, Any] | None = None
    ) -> None:
        self.policy = policy
        self.settings = policy.settings
        self.rules = pi_rules(policy.rules, header)
        self.recorded = [e for e in path if e.get("type") != "compaction"]
        # recorded compactions by the number of recorded (non-compaction) entries before them
        self.recorded_at: dict[int, list[CompactionEntry]] = {}
        self.rec_path: list[SessionEntry] = []
        self.rec_tags: list[int] = []
        self.rec_keys: list[object] = []
        n = 0
        for e in path:
            if _is_compaction(e):
                self.recorded_at.setdefault(n, []).append(e)
            else:
                n += 1
        self.recorded_ids = {str(e.get("id")) for e in path}
        # the simulated path (a chain), with tags (walk index = index in sim_path) and keys
        self.sim_path: list[SessionEntry] = []
        self.sim_keys: list[object] = []
        self.sim = _State()
        self.rec = _State()
        self.latest_compaction: int | None = None  # index in sim_path
        self.attempted = False  # Pi's _overflowRecoveryAttempted
        self.model_change: ModelChangeEntry | None = None
        # Pi's model in force: the latest model_change or assistant message (provider, model id)
        self.model_in_force: tuple[Any, Any] | None = None
        self.rec_latest_compaction: int | None = None  # tag of the latest recorded compaction
        self.decisions: list[ReplayDecision] = []
        self.recorded_compactions: list[RecordedCompaction] = []
        self.steps: list[ReplayStep] = []
        self.pending_between = False
        self.last_run_assistant: int | None = None  # index in sim state of the run's last assistant
        self.synthetic = 0
        self.summary_tokens = self._default_summary_tokens(path)
        self.window_used: set[int] = set()
        self.diverged = False  # the simulated agent state differs from the recorded one
        self.rebased: set[int] = set()  # id() of simulated messages whose usage was rebased
        self.reused: set[str] = set()  # recorded compactions the simulation reproduced
        self._path_length_at_check = 0

    # -- helpers -------------------------------------------------------------------------------
    def _default_summary_tokens(self, path: Sequence[SessionEntry]) -> int:
        if self.policy.summary_tokens is not None:
            return self.policy.summary_tokens
        sizes = [
            math.ceil(len(_strip_file_lists(e["summary"])) / 4)
            for e in path
            if _is_compaction(e) and isinstance(e.get("summary"), str)
        ]
        return round(sum(sizes) / len(sizes)) if sizes else DEFAULT_SUMMARY_TOKENS

    def _window(self) -> int:
        window = _window_for(self.policy.window, self.model_change)
        self.window_used.add(window)
        return window

    def _update_diverged(self) -> None:
        # both states append the same entries; they can only part at a compaction or a dropped
        # failed response, so this comparison runs only there
        self.diverged = self.sim.keys != self.rec.keys

    def _step(
        self,
        position: int,
        entry_id: str | None,
        kind: str,
        usage: int | None = None,
        sim_usage: int | None = None,
    ) -> None:
        self.steps.append(
            ReplayStep(position, entry_id, kind, self.sim.tokens(), self.rec.tokens(), usage, sim_usage)
        )

    def _after_entry_id(self, g: int) -> str | None:
        return str(self.recorded[g - 1].get("id")) if g > 0 else None

    # -- the walk ----------------------------------------------------------------------------------
    def run(self) -> Generator[_SummaryRequest, str, None]:
        recorded = self.recorded
        for g in range(len(recorded) + 1):
            entry = recorded[g] if g < len(recorded) else None
            # 1. checkpoints that sit before entry g
            if g > 0 and self.last_run_assistant is not None:
                idx, self.last_run_assistant = self.last_run_assistant, None
                if self._retried(idx, entry):
                    self._drop_retried(g, idx)
                else:
                    yield from self._check("after_run", g, idx)
            if entry is not None:
                role = _role(entry)
                messages = _entry_messages(entry)
                if self.pending_between and messages and role != "toolResult":
                    self.pending_between = False
                    if self.rules.between_turns:
                        yield from self._between_turns(g)
                elif role == "user" and self.rules.pre_prompt:
                    last = self.sim.last_assistant()
                    if last is not None:
                        yield from self._check("pre_prompt", g, last)
            # 2. the recorded compactions at this place
            for comp in self.recorded_at.get(g, ()):
                self._apply_recorded(comp, g)
                if self.policy.manual == "apply" and self.recorded_compactions[-1].reason == "manual":
                    self._apply_manual(comp, g)
            if entry is None:
                break
            # 3. the entry itself
            self._walk_entry(entry, g)

    def _walk_entry(self, entry: SessionEntry, g: int) -> None:
        role = _role(entry)
        if _is_model_change(entry):
            self.model_change = entry
            self.model_in_force = (entry.get("provider"), entry.get("modelId"))
        elif role == "assistant" and _is_message_entry(entry) and isinstance(entry.get("message"), Mapping):
            self.model_in_force = (entry["message"].get("provider"), entry["message"].get("model"))
        messages = _entry_messages(entry)
        sim_entry: SessionEntry = entry
        usage_tokens: int | None = None
        sim_usage_tokens: int | None = None
        if role == "assistant" and _is_message_entry(entry) and _is_assistant(entry["message"]):
            # (always true for an assistant role: _role read it from this entry's message)
            message = entry["message"]
            usage = message.get("usage")
            if isinstance(usage, Mapping) and usage:
                usage_tokens = calculate_context_tokens(usage)
            if self.policy.usage_mode == "rebase" and self.diverged:
                delta = self.sim.total - self.rec.total
                sim_message = _rebased(message, delta)
                if sim_message is not message:
                    sim_entry = {**entry, "message": sim_message}
                    messages = [sim_message]
                    self.rebased.add(id(sim_message))
            sim_usage = messages[0].get("usage")
            if isinstance(sim_usage, Mapping) and sim_usage:
                sim_usage_tokens = checked_context_tokens(sim_usage)
        parent = self.sim_path[-1].get("id") if self.sim_path else None
        if sim_entry.get("parentId") != parent:
            sim_entry = _reparented(sim_entry, parent)
        key = id(entry)
        tag = len(self.sim_path)
        self.sim_path.append(sim_entry)
        self.sim_keys.append(key)
        self.rec_path.append(entry)
        self.rec_tags.append(tag)
        self.rec_keys.append(key)
        original = _entry_messages(entry)
        for m in messages:
            self.sim.append(m, tag, key)
        for m in original:
            self.rec.append(m, tag, key)
        # Pi's overflow flag: reset on a user message_start and on a successful assistant message_end
        if role == "user":
            self.attempted = False
        elif role == "assistant":
            if messages[0].get("stopReason") not in ("error", "length"):
                self.attempted = False
        if role == "assistant":
            if _ends_run(messages[0]):
                self.last_run_assistant = len(self.sim.msgs) - 1
                self.pending_between = False
            else:
                self.pending_between = False
        elif role == "toolResult":
            self.pending_between = True
        if messages:
            self._step(g, str(entry.get("id")), str(messages[0].get("role")), usage_tokens, sim_usage_tokens)

    # -- recorded compactions ---------------------------------------------------------------------
    def _recorded_reason(self, checkpoint: Checkpoint) -> RecordedReason:
        """``"threshold"`` if Pi's rule asks for a compaction on the recorded state here (with the
        replay's policy), else ``"manual"``: nothing automatic would have compacted here."""
        state, latest, window = self.rec, self.rec_latest_compaction, self._window()

        def estimate() -> ContextCount:
            anchor = state.anchor()
            stale = anchor is not None and latest is not None and state.tags[anchor] < latest
            return ContextCount(
                state.tokens(), stale and state.msgs[cast(int, anchor)].get("role") == "assistant"
            )

        if checkpoint == "between_turns":
            decision = decide(checkpoint, None, self.settings, self._model_ref(None, window), estimate)
        else:
            index = state.last_assistant()
            if index is None:
                return "manual"
            msg = cast(AssistantMessage, state.msgs[index])
            stale = latest is not None and state.tags[index] < latest
            model = self._model_ref(msg, window)
            decision = decide(checkpoint, msg, self.settings, model, estimate, message_stale=stale)
        return "threshold" if decision.compacts else "manual"

    def _apply_recorded(self, comp: CompactionEntry, g: int) -> None:
        tag = len(self.sim_path)
        key = id(comp)
        prev_msg = next(
            (
                e["message"]
                for e in reversed(self.recorded[:g])
                if _is_message_entry(e) and isinstance(e.get("message"), Mapping)
            ),
            None,
        )
        failed = (
            prev_msg is not None
            and prev_msg.get("role") == "assistant"
            and (
                prev_msg.get("stopReason") == "length"
                or (
                    prev_msg.get("stopReason") == "error"
                    and is_context_overflow(cast(AssistantMessage, prev_msg), None)
                )
            )
        )
        checkpoint = self._infer_checkpoint(comp, g, prev_msg, failed)
        reason: RecordedReason = "overflow" if failed else self._recorded_reason(checkpoint)
        self.rec_path.append(comp)
        self.rec_tags.append(tag)
        self.rec_keys.append(key)
        self.rec_latest_compaction = tag
        items = _context_items(self.rec_path, self.rec_tags, self.rec_keys)
        self.rec.reset(items)
        tokens_after = self.rec.total
        if failed:
            last = self.rec.msgs[-1] if self.rec.msgs else None
            if (
                last is not None
                and last.get("role") == "assistant"
                and last.get("stopReason")
                in (
                    "error",
                    "length",
                )
            ):
                self.rec.drop_last()
        self.recorded_compactions.append(
            RecordedCompaction(
                id=str(comp.get("id")),
                checkpoint=checkpoint,
                reason=reason,
                position=g,
                after_entry_id=self._after_entry_id(g),
                first_kept_entry_id=comp.get("firstKeptEntryId")
                if isinstance(comp.get("firstKeptEntryId"), str)
                else None,
                tokens_before=comp.get("tokensBefore") if isinstance(comp.get("tokensBefore"), int) else None,
                tokens_after=tokens_after,
                summary_chars=len(comp["summary"]) if isinstance(comp.get("summary"), str) else 0,
            )
        )
        self._update_diverged()
        self._step(g, str(comp.get("id")), "recorded_compaction")

    def _apply_manual(self, comp: CompactionEntry, g: int) -> None:
        """``manual="apply"``: the user's ``/compact`` is made on the simulated path too (the recorded
        entry, summary and cut), so what follows it can be compared with the recording."""
        parent = self.sim_path[-1].get("id") if self.sim_path else None
        tag = len(self.sim_path)
        entry = cast(CompactionEntry, _reparented(comp, parent))
        self.sim_path.append(entry)
        self.sim_keys.append(id(comp))
        self.latest_compaction = tag
        self.sim.reset(_context_items(self.sim_path, list(range(len(self.sim_path))), self.sim_keys))
        self.attempted = False
        self._update_diverged()
        self._step(g, str(comp.get("id")), "compaction")

    def _infer_checkpoint(
        self, comp: CompactionEntry, g: int, prev_msg: AgentMessage | None, failed: bool
    ) -> Checkpoint:
        if prev_msg is None or failed:
            return "after_run"
        if prev_msg.get("role") == "toolResult":
            return "between_turns"
        last_message_pos = max((i for i in range(g) if self.recorded[i].get("type") == "message"), default=-1)
        if last_message_pos != g - 1 or prev_msg.get("stopReason") == "aborted":
            # something happened between the answer and the compaction (a model change...), or the
            # answer was aborted (the after-run check skips those; the pre-prompt one does not)
            return "pre_prompt"
        return "after_run"

    # -- checkpoints -------------------------------------------------------------------------------
    def _decision(
        self,
        checkpoint: Checkpoint,
        g: int,
        message_entry_id: str | None,
        window: int,
        tokens: int | None,
        source: TokensSource | None,
        reason: Reason | None,
        outcome: str,
        will_retry: bool = False,
        compaction: ReplayCompaction | None = None,
    ) -> ReplayDecision:
        decision = ReplayDecision(
            index=len(self.decisions),
            checkpoint=checkpoint,
            position=g,
            path_length=self._path_length_at_check,
            after_entry_id=self._after_entry_id(g),
            message_entry_id=message_entry_id,
            context_window=window,
            threshold=window - self.settings.reserve_tokens,
            tokens=tokens,
            tokens_source=source,
            reason=reason,
            outcome=outcome,
            will_retry=will_retry,
            compaction=compaction,
        )
        self.decisions.append(decision)
        return decision

    def _model_ref(self, message: AgentMessage | None, window: int) -> ModelRef:
        """The model in force, as Pi restores it: the latest ``model_change`` or assistant message
        walked; before any, the message's own model (so an overflow is always this model's)."""
        if self.model_in_force is not None:
            provider, model_id = self.model_in_force
            return ModelRef(provider, model_id, window, self.policy.max_tokens)
        fields: Mapping[str, Any] = message or {}
        return ModelRef(fields.get("provider"), fields.get("model"), window, self.policy.max_tokens)

    def _retried(self, index: int, entry: SessionEntry | None) -> bool:
        """Pi retried this run-ending answer before any compaction check: a transient error (not
        an overflow) that the recording follows with another answer (``agent.continue()``)."""
        msg = cast(AssistantMessage, self.sim.msgs[index])
        if entry is None or _role(entry) != "assistant" or msg.get("stopReason") != "error":
            return False
        return is_retryable_assistant_error(msg) and not is_context_overflow(msg, self._window())

    def _drop_retried(self, g: int, index: int) -> None:
        """Pi's retry: the failed answer leaves the agent's state (the session keeps it)."""
        self._path_length_at_check = len(self.sim_path)
        window = self._window()
        mid = str(self.sim_path[self.sim.tags[index]].get("id"))
        self._decision("after_run", g, mid, window, None, None, None, "retried")
        for state in (self.sim, self.rec):
            if state.msgs and state.msgs[-1].get("role") == "assistant":
                state.drop_last()
        self._update_diverged()

    def _between_turns(self, g: int) -> Generator[_SummaryRequest, str, None]:
        self._path_length_at_check = len(self.sim_path)
        model = self._model_ref(None, self._window())
        decision = decide(
            "between_turns", None, self.settings, model, lambda: ContextCount(self.sim.tokens())
        )
        yield from self._carry_out(decision, g, None)

    def _check(self, checkpoint: Checkpoint, g: int, index: int) -> Generator[_SummaryRequest, str, None]:
        """Pi's ``_checkCompaction`` on the state message at ``index`` (after a run, before a prompt)."""
        self._path_length_at_check = len(self.sim_path)
        window = self._window()
        msg = cast(AssistantMessage, self.sim.msgs[index])
        mid = str(self.sim_path[self.sim.tags[index]].get("id"))
        latest = self.latest_compaction  # order instead of clocks (see the module docstring)

        def estimate() -> ContextCount:
            anchor = self.sim.anchor()
            stale = (
                anchor is not None
                and latest is not None
                and self.sim.msgs[anchor].get("role") == "assistant"
                and self.sim.tags[anchor] < latest
            )
            return ContextCount(self.sim.tokens(), stale)

        decision = decide(
            checkpoint,
            msg,
            self.settings,
            self._model_ref(msg, window),
            estimate,
            message_stale=latest is not None and self.sim.tags[index] < latest,
            overflow_attempted=self.attempted,
        )
        yield from self._carry_out(decision, g, mid, rebased=id(msg) in self.rebased)

    def _carry_out(
        self, decision: CompactionDecision, g: int, mid: str | None, *, rebased: bool = False
    ) -> Generator[_SummaryRequest, str, None]:
        """The replay's side of a decision: record it, and compact on the simulated path."""
        checkpoint, window, tokens = decision.checkpoint, decision.context_window, decision.tokens
        source: TokensSource | None = decision.tokens_source
        if source == "usage" and rebased:
            source = "rebased_usage"
        if not decision.compacts:
            outcome = "stale" if decision.why == "stale_usage" else decision.why
            reason: Reason | None = "overflow" if decision.why == "recovery_failed" else None
            self._decision(checkpoint, g, mid, window, tokens, source, reason, outcome)
            return
        assert source is not None  # a firing decision always says where its count came from
        if not decision.will_retry:
            reason = "overflow" if decision.action == "overflow" else "threshold"
            yield from self._compact(checkpoint, g, mid, window, tokens, source, reason, False)
            return
        self.attempted = True
        diverged = self.diverged
        if self.sim.msgs and self.sim.msgs[-1].get("role") == "assistant":
            self.sim.drop_last()  # Pi drops the failed response from the agent state first
            self._update_diverged()
        yield from self._compact(
            checkpoint, g, mid, window, tokens, source, "overflow", True, diverged=diverged
        )

    def _compact(
        self,
        checkpoint: Checkpoint,
        g: int,
        mid: str | None,
        window: int,
        tokens: int | None,
        source: TokensSource,
        reason: Reason,
        will_retry: bool,
        *,
        diverged: bool | None = None,
    ) -> Generator[_SummaryRequest, str, None]:
        preparation = prepare_compaction(
            self.sim_path, self.settings, message_entries_only=not self.rules.custom_messages_kept
        )
        if preparation is None:
            self._decision(
                checkpoint, g, mid, window, tokens, source, reason, "nothing_to_compact", will_retry
            )
            return
        parent = self.sim_path[-1].get("id") if self.sim_path else None
        recorded = self._coinciding(g, preparation, self.diverged if diverged is None else diverged)
        if recorded is not None:
            summary = str(recorded.get("summary"))
            comp_id = str(recorded.get("id"))
            timestamp: str | None = recorded.get("timestamp")
            details = recorded.get("details")
            summary_source: Literal["recorded", "placeholder", "model"] = "recorded"
            key: object = id(recorded)
            self.reused.add(comp_id)
        else:
            if self.policy.has_model:
                summary = yield _SummaryRequest(preparation)
                summary_source = "model"
            else:
                summary = placeholder_summary(preparation, self.summary_tokens)
                summary_source = "placeholder"
            self.synthetic += 1
            comp_id = f"replay-{self.synthetic}"
            while comp_id in self.recorded_ids:
                comp_id += "x"
            timestamp = self.sim_path[-1].get("timestamp") if self.sim_path else None
            lists = compute_file_lists(preparation.file_ops)
            details = {"readFiles": lists.read_files, "modifiedFiles": lists.modified_files}
            key = ("replay", self.synthetic)
        entry: CompactionEntry = {
            "type": "compaction",
            "id": comp_id,
            "parentId": parent,
            # never None: a compaction needs a non-empty path (prepare_compaction returned one)
            "timestamp": cast(str, timestamp),
            "summary": summary,
            "firstKeptEntryId": preparation.first_kept_entry_id,
            "tokensBefore": preparation.tokens_before,
        }
        if details is not None:
            entry["details"] = details
        tag = len(self.sim_path)
        self.sim_path.append(entry)
        self.sim_keys.append(key)
        self.latest_compaction = tag
        self.sim.reset(_context_items(self.sim_path, list(range(len(self.sim_path))), self.sim_keys))
        tokens_after = self.sim.total
        if will_retry and self.sim.msgs:
            last = self.sim.msgs[-1]
            if last.get("role") == "assistant" and last.get("stopReason") in ("error", "length"):
                self.sim.drop_last()
        self._update_diverged()
        summarized = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        compaction = ReplayCompaction(
            id=comp_id,
            checkpoint=checkpoint,
            reason=reason,
            will_retry=will_retry,
            position=g,
            after_entry_id=self._after_entry_id(g),
            first_kept_entry_id=preparation.first_kept_entry_id,
            tokens_before=preparation.tokens_before,
            tokens_after=tokens_after,
            is_split_turn=preparation.is_split_turn,
            messages_summarized=len(preparation.messages_to_summarize),
            turn_prefix_messages=len(preparation.turn_prefix_messages),
            tokens_summarized=sum(estimate_tokens(m) for m in summarized),
            summary_chars=len(summary),
            summary_source=summary_source,
            entry=entry,
        )
        self._decision(
            checkpoint, g, mid, window, tokens, source, reason, "compacted", will_retry, compaction
        )
        self._step(g, comp_id, "compaction")

    def _coinciding(
        self, g: int, preparation: CompactionPreparation, diverged: bool
    ) -> CompactionEntry | None:
        """The recorded compaction this simulated one is a copy of, if any (see the module docstring)."""
        candidates = self.recorded_at.get(g)
        if not candidates or diverged:
            return None
        for comp in candidates:
            if str(comp.get("id")) in self.reused:
                continue
            if comp.get("firstKeptEntryId") == preparation.first_kept_entry_id and isinstance(
                comp.get("summary"), str
            ):
                return comp
            return None
        return None


# =============================================================================================
# entry points
# =============================================================================================


def _load(
    session: SessionInput, leaf_id: str | None
) -> tuple[list[SessionEntry], str | None, str | None, Mapping[str, Any] | None]:
    if isinstance(session, SessionManager):
        manager = session
        session_file = session.get_session_file()
    elif isinstance(session, (str, os.PathLike)):
        path = os.fspath(session)
        try:
            manager = SessionManager.in_memory_from_file(path)
        except FileNotFoundError:
            raise ReplayError(f"no such session file: {path}") from None
        except InvalidSessionFileError:
            try:  # another agent's transcript (Claude Code, Codex): read into Pi's entries
                manager = open_foreign(path)
            except InvalidSessionFileError:
                raise ReplayError(not_a_session(path)) from None
        session_file = path
    elif isinstance(session, Sequence) and not isinstance(session, (bytes, bytearray)):
        if not all(isinstance(e, Mapping) for e in session):
            raise ReplayError("a list of session entries must hold only mappings")
        manager = SessionManager.in_memory(None, entries=cast("list[FileEntry]", list(session)))
        session_file = None
    else:
        raise ReplayError(
            f"a session must be a SessionManager, a session file or a list of entries, got {type(session).__name__}"
        )
    path_entries = manager.get_branch(leaf_id)
    if leaf_id is not None and not path_entries:
        raise ReplayError(f"entry {leaf_id} is not in the session")
    return list(path_entries), manager.get_session_id(), session_file, manager.get_header()


def _policy(
    context_window: WindowSpec,
    reserve_tokens: int,
    keep_recent_tokens: int,
    enabled: bool,
    max_tokens: int | None,
    summary_tokens: int | None,
    usage: str,
    has_model: bool,
    rules: str = "0.85.0",
    manual: str = "skip",
) -> _Policy:
    for name, value in (("reserve_tokens", reserve_tokens), ("keep_recent_tokens", keep_recent_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ReplayError(f"{name} must be a whole number >= 0, got {value!r}")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0
    ):
        raise ReplayError(f"max_tokens must be a whole number >= 0 or None, got {max_tokens!r}")
    if summary_tokens is not None and (
        isinstance(summary_tokens, bool) or not isinstance(summary_tokens, int) or summary_tokens < 0
    ):
        raise ReplayError(f"summary_tokens must be a whole number >= 0 or None, got {summary_tokens!r}")
    if usage not in ("rebase", "recorded"):
        raise ReplayError(f"usage must be 'rebase' or 'recorded', got {usage!r}")
    if not isinstance(enabled, bool):
        raise ReplayError(f"enabled must be True or False, got {enabled!r}")
    if isinstance(context_window, int) and not isinstance(context_window, bool):
        _window_for(context_window, None)  # validates the number
    elif not isinstance(context_window, Mapping) and not callable(context_window):
        raise ReplayError(
            f"context_window must be an int, a mapping or a callable, got {type(context_window).__name__}"
        )
    settings = CompactionSettings(
        enabled=enabled, reserve_tokens=reserve_tokens, keep_recent_tokens=keep_recent_tokens
    )
    mode = cast(Literal["rebase", "recorded"], usage)  # checked above
    pi_rules(rules, {})  # validates the version
    if manual not in ("skip", "apply"):
        raise ReplayError(f"manual must be 'skip' or 'apply', got {manual!r}")
    return _Policy(settings, context_window, max_tokens or 0, summary_tokens, mode, has_model, rules, manual)


def _result(walk: _Walk, session_id: str | None, session_file: str | None) -> ReplayResult:
    windows = walk.window_used
    window = next(iter(windows)) if len(windows) == 1 else None
    if isinstance(walk.policy.window, int):
        window = walk.policy.window
    return ReplayResult(
        session_id=session_id,
        session_file=session_file,
        settings=walk.settings,
        context_window=window,
        decisions=tuple(walk.decisions),
        recorded_compactions=tuple(walk.recorded_compactions),
        steps=tuple(walk.steps),
        entries=tuple(walk.sim_path),
        usage_mode=walk.policy.usage_mode,
    )


def _walk_sync(
    path: Sequence[SessionEntry], policy: _Policy, header: Mapping[str, Any] | None = None
) -> _Walk:
    walk = _Walk(path, policy, header)
    for _request in walk.run():
        raise ReplayError("the walk asked for a model summary without a model")  # pragma: no cover
    return walk


@overload
def replay(
    session: SessionInput,
    *,
    context_window: WindowSpec,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    model: Model | None = None,
    leaf_id: str | None = None,
    rules: str = "0.85.0",
    manual: Literal["skip", "apply"] = "skip",
    policy: None = None,
) -> ReplayResult: ...


@overload
def replay(
    session: SessionInput,
    *,
    context_window: WindowSpec,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    model: Model | None = None,
    leaf_id: str | None = None,
    rules: str = "0.85.0",
    manual: Literal["skip", "apply"] = "skip",
    policy: ContextPolicy | str,
) -> PolicyReplay: ...


def replay(
    session: SessionInput,
    *,
    context_window: WindowSpec,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    model: Model | None = None,
    leaf_id: str | None = None,
    rules: str = "0.85.0",
    manual: Literal["skip", "apply"] = "skip",
    policy: ContextPolicy | str | None = None,
) -> ReplayResult | PolicyReplay:
    """Re-decide Pi's automatic compactions over a recorded session with another policy.

    ``session``: a :class:`~pi_nb.session.SessionManager`, a session file (Pi's or pi_nb's; read,
    never written) or a list of entries; the active branch (``leaf_id``: another leaf) is walked.
    ``context_window``: one window, a mapping by model (``"provider/modelId"``, ``"modelId"``,
    ``"*"``), or a callable given the ``model_change`` entry in force. ``max_tokens``: the model's
    output cap for Pi's recoverable-length rule (``None``: unknown, a ``length`` stop is then not
    recovered). ``summary_tokens``: the size of placeholder summaries. ``usage``: ``"rebase"``
    (default) or ``"recorded"`` (see the module docstring). ``model``: write real summaries
    with this model (only outside a running event loop; use :func:`areplay` inside one).
    ``rules``: the Pi version whose checkpoints to follow (:func:`pi_rules`): ``"0.85.0"`` (the
    default), another version such as ``"0.84.3"``, or ``"auto"``: the release current on the day
    the session was created (its header's date; a file does not say which program wrote it, and
    pi_nb writes the same header, so this is opt-in). ``manual``: ``"skip"`` (default) leaves the
    user's recorded ``/compact`` out of the simulated path; ``"apply"`` makes it there too (same
    entry, cut and summary), so the automatic compactions after it can be compared one to one.

    ``policy``: replay under a context policy instead (:mod:`pi_nb.policies`: ``PiPolicy(...)``,
    masking, trimming...; or ``"recorded"``): returns a :class:`~pi_nb.policies.PolicyReplay`
    (the requests that policy sends); then only ``context_window`` and ``leaf_id`` are read.
    ``replay(s, policy=PiPolicy(...)).pi`` is ``replay(s, **settings)`` itself.

    No model is called without ``model``; nothing is written. Bad arguments raise
    :class:`~pi_nb.errors.ReplayError`.
    """
    if policy is not None:
        from pi_nb.what_if.policies.replay import replay_policy

        return replay_policy(session, policy, context_window=context_window, leaf_id=leaf_id)
    policy_ = _policy(
        context_window,
        reserve_tokens,
        keep_recent_tokens,
        enabled,
        max_tokens,
        summary_tokens,
        usage,
        model is not None,
        rules,
        manual,
    )
    if model is not None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(
                areplay(
                    session,
                    context_window=context_window,
                    reserve_tokens=reserve_tokens,
                    keep_recent_tokens=keep_recent_tokens,
                    enabled=enabled,
                    max_tokens=max_tokens,
                    summary_tokens=summary_tokens,
                    usage=usage,
                    model=model,
                    leaf_id=leaf_id,
                    rules=rules,
                    manual=manual,
                )
            )
        raise ReplayError("replay(model=...) cannot run inside an event loop; use `await areplay(...)`")
    path, session_id, session_file, header = _load(session, leaf_id)
    return _result(_walk_sync(path, policy_, header), session_id, session_file)


async def areplay(
    session: SessionInput,
    *,
    context_window: WindowSpec,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    model: Model | None = None,
    leaf_id: str | None = None,
    thinking_level: str | None = "off",
    rules: str = "0.85.0",
    manual: Literal["skip", "apply"] = "skip",
) -> ReplayResult:
    """:func:`replay`, awaiting real summaries from ``model`` (Pi's ``compact``) where the
    simulated history needs a new one. A summary failure raises
    :class:`~pi_nb.errors.SummarizationError` (Pi's automatic compaction would report
    ``Auto-compaction failed`` and go on uncompacted; a what-if should not hide that)."""
    from pi_nb.compaction.summaries import compact

    policy = _policy(
        context_window,
        reserve_tokens,
        keep_recent_tokens,
        enabled,
        max_tokens,
        summary_tokens,
        usage,
        model is not None,
        rules,
        manual,
    )
    path, session_id, session_file, header = _load(session, leaf_id)
    walk = _Walk(path, policy, header)
    gen = walk.run()
    try:
        request = next(gen)
        while True:
            if model is None:  # pragma: no cover - the walk asks for summaries only with a model
                raise ReplayError("the walk asked for a model summary without a model")
            result = await compact(request.preparation, model, thinking_level=thinking_level)
            request = gen.send(result.summary)
    except StopIteration:
        pass
    return _result(walk, session_id, session_file)


@overload
def sweep(
    sessions: Iterable[SessionInput],
    *,
    context_window: Sequence[int],
    reserve_tokens: Sequence[int] = (DEFAULT_RESERVE_TOKENS,),
    keep_recent_tokens: Sequence[int] = (DEFAULT_KEEP_RECENT_TOKENS,),
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    rules: str = "0.85.0",
    policies: None = None,
    params: None = None,
) -> list[SweepOutcome]: ...


@overload
def sweep(
    sessions: Iterable[SessionInput],
    *,
    context_window: Sequence[int],
    reserve_tokens: Sequence[int] = (DEFAULT_RESERVE_TOKENS,),
    keep_recent_tokens: Sequence[int] = (DEFAULT_KEEP_RECENT_TOKENS,),
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    rules: str = "0.85.0",
    policies: Sequence[ContextPolicy | str],
    params: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> list[dict[str, Any]]: ...


def sweep(
    sessions: Iterable[SessionInput],
    *,
    context_window: Sequence[int],
    reserve_tokens: Sequence[int] = (DEFAULT_RESERVE_TOKENS,),
    keep_recent_tokens: Sequence[int] = (DEFAULT_KEEP_RECENT_TOKENS,),
    enabled: bool = True,
    max_tokens: int | None = None,
    summary_tokens: int | None = None,
    usage: Literal["rebase", "recorded"] = "rebase",
    rules: str = "0.85.0",
    policies: Sequence[ContextPolicy | str] | None = None,
    params: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> list[SweepOutcome] | list[dict[str, Any]]:
    """Replay every session under every policy of the grid (windows x reserves x keeps).

    Each session is loaded once (its active branch). One :class:`SweepOutcome` per (session,
    policy): sessions in the order given, policies in grid order. No model is called.

    ``policies``: sweep context policies instead (:func:`pi_nb.policies.sweep_policies`): every
    policy (each copy of it with the settings in ``params[policy.name]``) under every
    ``context_window``, one table row each with its cost; the other arguments are not read.
    """
    if policies is not None:
        from pi_nb.what_if.policies.sweep import sweep_policies

        return sweep_policies(sessions, policies, context_window=context_window, params=params)
    grid = [(w, r, k) for w in context_window for r in reserve_tokens for k in keep_recent_tokens]
    if not grid:
        raise ReplayError("the sweep grid is empty")
    settings = [
        (w, r, k, _policy(w, r, k, enabled, max_tokens, summary_tokens, usage, False, rules))
        for w, r, k in grid
    ]
    out: list[SweepOutcome] = []
    for session in sessions:
        path, session_id, session_file, header = _load(session, None)
        for window, reserve, keep, policy in settings:
            result = _result(_walk_sync(path, policy, header), session_id, session_file)
            out.append(SweepOutcome(session_id, session_file, window, reserve, keep, result.outcome()))
    return out
