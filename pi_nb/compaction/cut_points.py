"""Where a compaction cuts the path: valid cut points, turn starts, and ``find_cut_point``.

Pi keeps the most recent ``keep_recent_tokens`` (estimated) of the conversation verbatim and
summarises everything before. The cut may land on any entry that puts a user-like or assistant
message into the context, **never on a tool result** (a tool result must follow the assistant
message that called the tool). Metadata entries right before the cut (model or thinking-level
changes, labels, extension state) are pulled into the kept part, so a kept stretch starts with the
settings it was produced under. When the cut lands inside a turn (on an assistant message after the
user's request), the turn is *split*: the turn's beginning is summarised separately ("turn
prefix") so the kept suffix still makes sense.

All three functions take session entries (a root->leaf path); an entry's messages are
:func:`~pi_nb.session.context.session_entry_to_context_messages`. ``find_cut_point`` estimates each
entry's tokens at most once and walks back only as far as the budget needs: O(n) in the path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from pi_nb._wire import wire_dict
from pi_nb.compaction._types import CutPointResultDict
from pi_nb.compaction.settings import DEFAULT_KEEP_RECENT_TOKENS
from pi_nb.errors import CompactionError
from pi_nb.messages import AgentMessage
from pi_nb.session.context import session_entry_to_context_messages
from pi_nb.session.types import SessionEntry
from pi_nb.tokens import estimate_tokens

__all__ = [
    "CutPointResult",
    "find_cut_point",
    "find_turn_start_index",
    "find_valid_cut_points",
    "is_cut_point_message",
    "is_turn_start_message",
]

_CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})


def is_cut_point_message(message: AgentMessage) -> bool:
    """A message a kept stretch may start with: any context role except ``toolResult``."""
    return message.get("role") in _CUT_POINT_ROLES


def is_turn_start_message(message: AgentMessage) -> bool:
    """A message that starts a turn: user-like roles (not ``assistant``, not ``toolResult``)."""
    return message.get("role") in _TURN_START_ROLES


def _context_messages(entry: SessionEntry) -> Sequence[AgentMessage]:
    """``session_entry_to_context_messages(entry)`` without copying the common case.

    A ``message`` entry with content contributes its message object itself (as in Pi, which
    returns ``[entry.message]``); everything else, including a message with null content (which
    the projection rewrites to ``content: []``), goes through the session module.
    """
    if type(entry) is dict or isinstance(entry, Mapping):
        # ("type" in entry and entry["type"] == ...: entry.get("type") == ..., spelled so that the
        # type checker narrows the entry; an entry without a type is not a message entry)
        if "type" in entry and entry["type"] == "message":
            message = entry.get("message")  # may be missing or not an object in a corrupt file
            if isinstance(message, Mapping) and not (
                message.get("content") is None and message.get("role") in _CONTENT_ROLES
            ):
                return (message,)
    return session_entry_to_context_messages(entry)


def _is_cut_point_entry(entry: SessionEntry) -> bool:
    messages = _context_messages(entry)  # raises the session module's error for a malformed entry
    if entry.get("type") == "compaction":
        return False
    for message in messages:
        if message.get("role") in _CUT_POINT_ROLES:
            return True
    return False


def _is_turn_start_entry(entry: SessionEntry) -> bool:
    messages = _context_messages(entry)  # raises the session module's error for a malformed entry
    if entry.get("type") == "compaction":
        return False
    for message in messages:
        if message.get("role") in _TURN_START_ROLES:
            return True
    return False


def _entry_tokens(entry: SessionEntry) -> int:
    tokens = 0
    for message in _context_messages(entry):
        tokens += estimate_tokens(message)
    return tokens


def _check_range(entries: Sequence[object], start: int, end: int) -> None:
    if start < end and (start < 0 or end > len(entries)):
        raise CompactionError(f"entry range [{start}, {end}) is outside the {len(entries)} entries")


def find_valid_cut_points(
    entries: Sequence[SessionEntry], start_index: int = 0, end_index: int | None = None
) -> list[int]:
    """Indices in ``[start_index, end_index)`` where a kept stretch may begin.

    Any non-``compaction`` entry with a user, assistant, bash-execution, custom, branch-summary or
    compaction-summary message: so never a tool result, a metadata entry, an empty branch summary
    or a compaction entry itself.
    """
    end = len(entries) if end_index is None else end_index
    _check_range(entries, start_index, end)
    return [i for i in range(start_index, end) if _is_cut_point_entry(entries[i])]


def find_turn_start_index(entries: Sequence[SessionEntry], entry_index: int, start_index: int = 0) -> int:
    """The nearest turn-start entry at or before ``entry_index`` (down to ``start_index``), else -1."""
    n = len(entries)
    for i in range(entry_index, start_index - 1, -1):
        if not 0 <= i < n:  # Pi reads an undefined entry there and throws
            raise CompactionError(f"entry index {i} is outside the {n} entries")
        if _is_turn_start_entry(entries[i]):
            return i
    return -1


@dataclass(frozen=True)
class CutPointResult:
    """Pi's ``CutPointResult``.

    ``first_kept_entry_index``: where the kept part starts. ``turn_start_index``: when the cut is
    inside a turn, the entry that started it (else -1). ``is_split_turn``: the cut is inside a turn
    (the prefix ``[turn_start_index, first_kept_entry_index)`` gets its own summary).
    """

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool

    def to_dict(self) -> CutPointResultDict:
        return cast(CutPointResultDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


def find_cut_point(
    entries: Sequence[SessionEntry],
    start_index: int = 0,
    end_index: int | None = None,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    *,
    message_entries_only: bool = False,
) -> CutPointResult:
    """Pi's ``findCutPoint``: keep roughly the newest ``keep_recent_tokens`` of ``[start, end)``.

    Walks back from the newest entry summing :func:`~pi_nb.tokens.estimate_tokens` of each entry's
    context messages (a compaction entry counts its summary); once the sum reaches the budget the
    cut is the first valid cut point at or after that entry (if the budget is never reached, the
    first cut point: everything is kept). Metadata entries just before the cut are then pulled in
    (stopping at a compaction or at anything with context messages). A cut on an entry that does
    not start a turn is a split turn when a turn start exists before it.

    ``message_entries_only``: Pi's rule before 0.80.4, where only ``message`` entries counted toward
    ``keep_recent_tokens`` (custom messages, branch summaries and compaction summaries did not);
    off by default (0.85.0's rule).
    """
    end = len(entries) if end_index is None else end_index
    _check_range(entries, start_index, end)
    # Pi lists every cut point of the range first; only two are ever used (the first one, and the
    # first one at or after where the budget is reached), so they are found by scanning forward
    # from those two places. Same answer, and O(entries walked) instead of O(range).
    first_cut = next((i for i in range(start_index, end) if _is_cut_point_entry(entries[i])), -1)
    if first_cut < 0:
        return CutPointResult(start_index, -1, False)

    accumulated = 0
    cut_index = first_cut
    for i in range(end - 1, start_index - 1, -1):
        if message_entries_only and entries[i].get("type") != "message":
            continue
        tokens = _entry_tokens(entries[i])
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            if i > first_cut:
                cut_index = next((c for c in range(i, end) if _is_cut_point_entry(entries[c])), first_cut)
            break

    while cut_index > start_index:
        prev = entries[cut_index - 1]
        if prev.get("type") == "compaction" or len(_context_messages(prev)) > 0:
            break
        cut_index -= 1

    if _is_turn_start_entry(entries[cut_index]):
        return CutPointResult(cut_index, -1, False)
    turn_start = find_turn_start_index(entries, cut_index, start_index)
    return CutPointResult(cut_index, turn_start, turn_start != -1)
