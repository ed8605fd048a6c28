"""Branch summaries: what the abandoned branch contributed, carried to the branch you return to.

When the user navigates the session tree from the current leaf to another entry, the entries only
on the old branch (from the deepest common ancestor, exclusive, to the old leaf) leave the
context. ``collect_entries_for_branch_summary`` finds them; the walk does **not** stop at
compactions or earlier branch summaries on the way: their summaries become part of what is
summarised. ``prepare_branch_entries`` turns them into messages newest-first within a token
budget (tool results are skipped: the assistant's tool call carries their meaning, and file
operations are tracked from the calls; a summary entry that overshoots the budget is still taken
while less than 90 % of the budget is used). ``generate_branch_summary`` asks the model for the
summary; the result starts with Pi's preamble and ends with the file lists.

Ports Pi's ``core/compaction/branch-summarization.ts``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from pi_nb._js import UNDEFINED
from pi_nb._js import js_truthy as _truthy
from pi_nb.compaction._types import BranchPreparationDict, BranchSummaryResultDict, CollectEntriesResultDict
from pi_nb.compaction.prompts import BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT
from pi_nb.compaction.retry import RetryCallbacks, SleepFn
from pi_nb.compaction.serialization import (
    SUMMARIZATION_SYSTEM_PROMPT,
    FileOperations,
    compute_file_lists,
    content_text,
    create_file_ops,
    extract_file_ops_from_message,
    format_file_operations,
    serialize_conversation,
)
from pi_nb.compaction.settings import DEFAULT_RESERVE_TOKENS, RetrySettings
from pi_nb.compaction.summaries import complete_summarization, get_summarization_failure
from pi_nb.errors import CompactionError, EntryNotFoundError
from pi_nb.messages import (
    AgentMessage,
    Usage,
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from pi_nb.providers.base import Context, Model, StreamOptions, SupportsAbort, now_ms
from pi_nb.session.types import SessionEntry
from pi_nb.tokens import estimate_tokens

__all__ = [
    "DEFAULT_BRANCH_SUMMARY_CONTEXT_WINDOW",
    "BranchPreparation",
    "BranchSummaryResult",
    "CollectEntriesResult",
    "SessionTreeReader",
    "collect_entries_for_branch_summary",
    "generate_branch_summary",
    "prepare_branch_entries",
]

DEFAULT_BRANCH_SUMMARY_CONTEXT_WINDOW = 128000
"""The window Pi assumes for the budget when the model reports none."""


class SessionTreeReader(Protocol):
    """What branch collection reads from a session (``SessionManager`` satisfies it)."""

    def get_branch(self, from_id: str | None = None) -> Sequence[SessionEntry]: ...

    def get_entry(self, id: str) -> SessionEntry | None: ...


@dataclass(frozen=True)
class CollectEntriesResult:
    """Pi's ``CollectEntriesResult {entries, commonAncestorId}`` (entries oldest first)."""

    entries: list[SessionEntry]
    common_ancestor_id: str | None

    def to_dict(self) -> CollectEntriesResultDict:
        return {"entries": list(self.entries), "commonAncestorId": self.common_ancestor_id}


def _get_entry(session: SessionTreeReader, entry_id: str) -> SessionEntry | None:
    try:
        return session.get_entry(entry_id)
    except EntryNotFoundError:
        return None


def collect_entries_for_branch_summary(
    session: SessionTreeReader, old_leaf_id: str | None, target_id: str
) -> CollectEntriesResult:
    """The entries that leave the context when moving from ``old_leaf_id`` to ``target_id``.

    The common ancestor is the deepest entry of the target's root path that is also on the old
    leaf's root path; the result is the old leaf's ancestors down to (not including) it, oldest
    first. No old leaf (``None``/empty): nothing to summarise and no ancestor.
    """
    if not old_leaf_id:
        return CollectEntriesResult([], None)
    old_path = {e.get("id") for e in session.get_branch(old_leaf_id)}
    target_path = session.get_branch(target_id)
    common: str | None = None
    for entry in reversed(target_path):
        if entry.get("id") in old_path:
            common = entry.get("id")
            break
    collected: list[SessionEntry] = []
    current: str | None = old_leaf_id
    seen: set[str] = set()
    while current and current != common:
        if current in seen:
            raise CompactionError(f"Entry {current} has a parentId chain that loops")
        seen.add(current)
        entry = _get_entry(session, current)
        if entry is None:
            break
        collected.append(entry)
        current = entry.get("parentId")
    collected.reverse()
    return CollectEntriesResult(collected, common)


def _entry_message(entry: SessionEntry) -> AgentMessage | None:
    """Pi's ``getMessageFromEntry`` for branch summaries (tool results skipped; every summary kept)."""
    etype = entry.get("type")
    # ("type" in entry and entry["type"] == ...: etype == ..., narrowing the entry)
    if "type" in entry and entry["type"] == "message":
        message = entry.get("message")  # may be missing or not an object in a corrupt file
        if not isinstance(message, Mapping):
            raise CompactionError(f"message entry {entry.get('id')!r} has no message object")
        if message.get("role") == "toolResult":
            return None
        return message
    if etype == "custom_message":
        return create_custom_message(
            entry.get("customType", UNDEFINED),
            entry.get("content", UNDEFINED),
            entry.get("display", UNDEFINED),
            entry.get("details", UNDEFINED),
            entry.get("timestamp", UNDEFINED),
        )
    if etype == "branch_summary":
        # unlike the context projection, an empty summary still becomes a message here
        return create_branch_summary_message(
            entry.get("summary", UNDEFINED), entry.get("fromId", UNDEFINED), entry.get("timestamp", UNDEFINED)
        )
    if etype == "compaction":
        return create_compaction_summary_message(
            entry.get("summary", UNDEFINED),
            entry.get("tokensBefore", UNDEFINED),
            entry.get("timestamp", UNDEFINED),
        )
    return None


@dataclass(frozen=True)
class BranchPreparation:
    """Pi's ``BranchPreparation {messages, fileOps, totalTokens}``."""

    messages: list[AgentMessage]
    file_ops: FileOperations = field(default_factory=FileOperations)
    total_tokens: int = 0

    def to_dict(self) -> BranchPreparationDict:
        return {
            "messages": list(self.messages),
            "fileOps": self.file_ops.to_dict(),
            "totalTokens": self.total_tokens,
        }


def prepare_branch_entries(entries: Sequence[SessionEntry], token_budget: int = 0) -> BranchPreparation:
    """Pi's ``prepareBranchEntries``: messages newest first within ``token_budget`` (0 = no limit).

    Pass 1 takes the file lists of every earlier (non-hook) branch summary, even ones that will
    not fit. Pass 2 walks newest -> oldest, records file operations of each message *before* the
    budget check, and stops at the first message that does not fit; a compaction or branch
    summary that does not fit is still taken while the total is under 90 % of the budget. A
    budget <= 0 means unlimited (as in Pi, so a window smaller than the reserve is unlimited too).
    """
    file_ops = create_file_ops()
    for entry in entries:
        if (
            entry.get("type") == "branch_summary"
            and not _truthy(entry.get("fromHook"))
            and _truthy(entry.get("details"))
        ):
            details = entry.get("details")
            if not isinstance(details, Mapping):
                continue
            for key, target in (("readFiles", file_ops.read), ("modifiedFiles", file_ops.edited)):
                files = details.get(key)
                if isinstance(files, list):
                    for f in files:
                        if not isinstance(f, str):
                            raise CompactionError(
                                f"branch summary details.{key} must hold file paths, got {f!r}"
                            )
                        target.add(f)

    messages: list[AgentMessage] = []
    total = 0
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        message = _entry_message(entry)
        if message is None:
            continue
        extract_file_ops_from_message(message, file_ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return BranchPreparation(messages=messages, file_ops=file_ops, total_tokens=total)


@dataclass(frozen=True)
class BranchSummaryResult:
    """Pi's ``BranchSummaryResult``: a summary, or ``aborted``, or an ``error`` text.

    ``summary`` is ``"No content to summarize"`` (no usage, no file lists) when nothing on the
    branch produced a message.
    """

    summary: str | None = None
    usage: Usage | None = None
    read_files: list[str] | None = None
    modified_files: list[str] | None = None
    aborted: bool = False
    error: str | None = None

    def to_dict(self) -> BranchSummaryResultDict:
        out: BranchSummaryResultDict = {}
        if self.summary is not None:
            out["summary"] = self.summary
        if self.usage is not None:
            out["usage"] = self.usage
        if self.read_files is not None:
            out["readFiles"] = list(self.read_files)
        if self.modified_files is not None:
            out["modifiedFiles"] = list(self.modified_files)
        if self.aborted:
            out["aborted"] = True
        if self.error is not None:
            out["error"] = self.error
        return out


def branch_summary_instructions(custom_instructions: str | None, replace_instructions: bool | None) -> str:
    """The instructions part of the prompt: custom text alone, default + ``Additional focus``, or default."""
    if replace_instructions and custom_instructions:
        return custom_instructions
    if custom_instructions:
        return f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    return BRANCH_SUMMARY_PROMPT


async def generate_branch_summary(
    entries: Sequence[SessionEntry],
    *,
    model: Model,
    signal: SupportsAbort | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool | None = None,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    retry: RetrySettings | Mapping[str, Any] | None = None,
    callbacks: RetryCallbacks | None = None,
    sleep: SleepFn | None = None,
) -> BranchSummaryResult:
    """Pi's ``generateBranchSummary``: summarise the abandoned entries with ``model``.

    Budget ``(model.context_window or 128000) - reserve_tokens``; output limit
    ``min(4096, model.max_tokens)``; no reasoning option, no tools, ``cacheRetention: "none"``, a
    fresh session id, retried like compaction. Failures come back as values, as in Pi:
    ``aborted=True`` for an aborted call, ``error`` for an error/length stop or a tool call.
    """
    window = getattr(model, "context_window", 0) or DEFAULT_BRANCH_SUMMARY_CONTEXT_WINDOW
    prep = prepare_branch_entries(entries, window - reserve_tokens)
    if not prep.messages:
        return BranchSummaryResult(summary="No content to summarize")

    conversation = serialize_conversation(convert_to_llm(prep.messages))
    instructions = branch_summary_instructions(custom_instructions, replace_instructions)
    prompt = f"<conversation>\n{conversation}\n</conversation>\n\n{instructions}"
    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": now_ms()}],
    )
    model_max = getattr(model, "max_tokens", 0) or 0
    max_tokens = min(4096, model_max) if model_max > 0 else 4096
    response = await complete_summarization(
        model, context, StreamOptions(max_tokens=max_tokens, signal=signal), retry, callbacks, sleep=sleep
    )
    if response.get("stopReason") == "aborted":
        return BranchSummaryResult(aborted=True)
    failure = get_summarization_failure(response, "Branch summarization")
    if failure:
        return BranchSummaryResult(error=failure)
    content = response.get("content")
    blocks = content if isinstance(content, list) else []
    if any(isinstance(b, Mapping) and b.get("type") == "toolCall" for b in blocks):
        return BranchSummaryResult(error="Branch summarization attempted to call a tool")
    lists = compute_file_lists(prep.file_ops)
    summary = (
        BRANCH_SUMMARY_PREAMBLE
        + content_text(blocks)
        + format_file_operations(lists.read_files, lists.modified_files)
    )
    usage = response.get("usage")
    return BranchSummaryResult(
        summary=summary or "No summary generated",
        # (a copy of the provider's usage object: its numbers as reported)
        usage=cast(Usage, dict(usage)) if isinstance(usage, Mapping) else None,
        read_files=lists.read_files,
        modified_files=lists.modified_files,
    )
