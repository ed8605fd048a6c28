"""``prepare_compaction``: everything a compaction needs, computed from the path alone (no model).

Given the root->leaf path, Pi decides *what* to summarise before it asks any model:

1. A path that already ends with a compaction has nothing new: ``None``.
2. With an earlier compaction on the path, the work starts at that compaction's kept boundary
   (its ``firstKeptEntryId``; the entry after the compaction when that id is gone), and the earlier
   summary is carried as ``previous_summary`` (the update prompt merges into it). So the messages
   kept last time are summarised once the recent window has moved past them, and a second
   compaction is skipped while everything since the last kept point still fits.
3. ``tokens_before`` is the current context size (usage + trailing estimate) of the whole path.
4. The cut (see :func:`~pi_nb.compaction.cut_points.find_cut_point`) splits the range into
   messages to summarise and, for a split turn, the turn prefix. Nothing on either side: ``None``.
5. File operations start from the previous compaction's ``details`` (only when a hook did not
   produce it: a hook's details may mean anything) and add every ``read``/``write``/``edit`` tool
   call in the summarised messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, cast

from pi_nb._js import js_truthy as _truthy
from pi_nb.compaction._types import CompactionPreparationDict
from pi_nb.compaction.cut_points import _context_messages, find_cut_point
from pi_nb.compaction.serialization import FileOperations, create_file_ops, extract_file_ops_from_message
from pi_nb.compaction.settings import DEFAULT_COMPACTION_SETTINGS, CompactionSettings
from pi_nb.errors import CompactionError
from pi_nb.messages import AgentMessage, AssistantMessage
from pi_nb.session.context import build_context_entries, context_entries_from_path
from pi_nb.session.types import SessionEntry
from pi_nb.tokens import estimate_context_tokens

__all__ = ["CompactionPreparation", "prepare_compaction"]


@dataclass(frozen=True)
class CompactionPreparation:
    """Pi's ``CompactionPreparation``: the input of :func:`~pi_nb.compaction.summaries.compact`.

    ``previous_summary`` is ``None`` when there was no earlier compaction (Pi: undefined).
    ``file_ops`` is a mutable accumulator (Pi's Sets); treat it as read-only.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations = field(default_factory=FileOperations)
    settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS

    def to_dict(self) -> CompactionPreparationDict:
        if self.previous_summary is None:
            return {
                "firstKeptEntryId": self.first_kept_entry_id,
                "messagesToSummarize": list(self.messages_to_summarize),
                "turnPrefixMessages": list(self.turn_prefix_messages),
                "isSplitTurn": self.is_split_turn,
                "tokensBefore": self.tokens_before,
                "fileOps": self.file_ops.to_dict(),
                "settings": self.settings.to_dict(),
            }
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": list(self.messages_to_summarize),
            "turnPrefixMessages": list(self.turn_prefix_messages),
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary,
            "fileOps": self.file_ops.to_dict(),
            "settings": self.settings.to_dict(),
        }


def _first_message(entry: SessionEntry) -> AgentMessage | None:
    """Pi's ``getMessageFromEntryForCompaction``: the entry's first context message (none for a compaction)."""
    if entry.get("type") == "compaction":
        return None
    messages = _context_messages(entry)
    return messages[0] if messages else None


def _first_messages(
    path_entries: Sequence[SessionEntry],
    start: int,
    end: int,
    file_ops: FileOperations | None = None,
    types: list[object] | None = None,
    links: tuple[list[object], list[object]] | None = None,
) -> list[AgentMessage]:
    """``_first_message`` over ``[start, end)``, with the plain ``message`` entry inlined (hot loop).

    With ``file_ops``, the ``read``/``write``/``edit`` calls of each assistant message are recorded
    in the same pass (what :func:`extract_file_ops_from_message` does, with its common case
    inlined: an assistant message whose content is a list of plain dicts).

    ``types``: every entry's ``type`` when every entry is a plain dict (:func:`_plain_types`),
    which saves reading it again; then ``links`` (two lists) receives each entry's ``id`` and
    ``parentId`` too, for :func:`_is_chain`. One pass: each entry is read while it is at hand."""
    if types is None:
        return _first_messages_checked(path_entries, start, end, file_ops)
    out: list[AgentMessage] = []
    append = out.append
    read_add: Callable[[str], None] = _ignore_path
    written_add: Callable[[str], None] = _ignore_path
    edited_add: Callable[[str], None] = _ignore_path
    if file_ops is not None:
        read_add, written_add, edited_add = file_ops.read.add, file_ops.written.add, file_ops.edited.add
    ids: list[object] = []
    parents: list[object] = []
    if links is not None:
        ids, parents = links
    id_append, parent_append = ids.append, parents.append
    entries = cast(list[dict[str, Any]], path_entries[start:end])  # plain dicts (``types`` says so)
    for entry, kind in zip(entries, types[start:end], strict=True):
        id_append(entry.get("id"))
        parent_append(entry.get("parentId"))
        message: Any = None
        if kind == "message":
            message = entry.get("message")
            if type(message) is not dict or message.get("content") is None:
                message = None
        if message is None:
            message = _first_message(cast(SessionEntry, entry))
            if message is None:
                continue
        append(message)
        if file_ops is None or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if type(content) is not list:
            extract_file_ops_from_message(message, file_ops)
            continue
        for block in content:
            if type(block) is not dict:
                _odd_block_file_ops(block, file_ops)
                continue
            if block.get("type") != "toolCall":
                continue
            name = block.get("name")
            if name != "read" and name != "write" and name != "edit":
                continue
            args = block.get("arguments")
            if not (type(args) is dict or isinstance(args, Mapping)):
                continue
            path = args.get("path")
            if not isinstance(path, str) or not path:
                continue
            if name == "read":
                read_add(path)
            elif name == "write":
                written_add(path)
            else:
                edited_add(path)
    return out


def _first_messages_checked(
    path_entries: Sequence[SessionEntry], start: int, end: int, file_ops: FileOperations | None
) -> list[AgentMessage]:
    """:func:`_first_messages` for entries that are not all plain dicts."""
    out: list[AgentMessage] = []
    for i in range(start, end):
        entry = path_entries[i]
        message: AgentMessage | None = None
        # ("type" in entry and entry["type"] == ...: entry.get("type") == ..., narrowing the entry)
        if type(entry) is dict and "type" in entry and entry["type"] == "message":
            message = entry.get("message")
            if type(message) is not dict or message.get("content") is None:
                message = None
        if message is None:
            message = _first_message(entry)
            if message is None:
                continue
        out.append(message)
        if file_ops is not None:
            extract_file_ops_from_message(message, file_ops)
    return out


def _odd_block_file_ops(block: object, file_ops: FileOperations) -> None:
    """The file operation of a content block that is not a plain dict (a Mapping tool call)."""
    if isinstance(block, Mapping) and block.get("type") == "toolCall":
        # a stand-in message holding just this block (only role and content are read)
        stand_in = cast(AssistantMessage, {"role": "assistant", "content": [block]})
        extract_file_ops_from_message(stand_in, file_ops)


def _ignore_path(path: str) -> None:
    """The file-operation recorder when no file operations are collected."""


def _plain_types(path_entries: Sequence[SessionEntry]) -> list[object] | None:
    """Every entry's ``type`` (``None`` when missing) if every entry is a plain dict, else ``None``."""
    if not path_entries or set(map(type, path_entries)) != {dict}:
        return None
    return list(map(dict.get, cast(list[dict[str, Any]], path_entries), repeat("type")))


def _is_chain(
    path_entries: Sequence[SessionEntry],
    plain: bool | None = None,
    links: tuple[int, list[object], list[object]] | None = None,
) -> bool:
    """True when the list already is the root -> last-entry path (unique string ids, each entry's
    parent is the entry before it, the first has no parent in the list): the parent walk of the
    projection would return it unchanged. (Checked with whole-list operations, no Python loop.)

    ``plain``: already known whether every entry is a plain dict. ``links``: ``(start, ids,
    parent_ids)`` of the entries from ``start`` on, already read (:func:`_first_messages`)."""
    if not path_entries:
        return True
    if plain is None:
        plain = set(map(type, path_entries)) == {dict}
    if not plain:
        return False
    dicts = cast(list[dict[str, Any]], path_entries)
    if links is None:
        links = (len(dicts), [], [])
    start, known_ids, known_parents = links
    stop = start + len(known_ids)

    def column(known: list[object], key: str) -> list[object]:
        # the field of every entry: the known ones, the rest read now (the known list is extended)
        if start == 0:
            known += map(dict.get, dicts[stop:], repeat(key))
            return known
        return [*map(dict.get, dicts[:start], repeat(key)), *known, *map(dict.get, dicts[stop:], repeat(key))]

    ids = column(known_ids, "id")
    if set(map(type, ids)) != {str}:
        return False
    id_set = set(ids)
    if len(id_set) != len(ids) or "" in id_set:
        return False
    parents = column(known_parents, "parentId")
    if parents[1:] != ids[:-1]:
        return False
    first_parent = parents[0]
    return not (isinstance(first_parent, str) and first_parent in id_set)


def _tokens_before(
    path_entries: Sequence[SessionEntry],
    plain: bool | None = None,
    has_compaction: bool = True,
    links: tuple[int, list[object], list[object]] | None = None,
) -> int:
    """Pi's ``estimateContextTokens(buildSessionContext(pathEntries).messages).tokens``.

    The estimate only reads the context from its end back to the last assistant message with a
    usable usage, so only that tail of messages is built (scanning the context entries from the
    end); for a list that already is a path, the parent walk of the projection is skipped too, and
    without a compaction entry in it the path is its own context.
    Same number as Pi's, without mapping a long path's every entry.
    """
    entries: Sequence[SessionEntry]
    if _is_chain(path_entries, plain, links):
        # (the projection returns entries of the path it is given: session entries; typed as such
        # here until the session module says so itself)
        entries = context_entries_from_path(list(path_entries)) if has_compaction else path_entries
    else:
        entries = build_context_entries(path_entries)
    tail: list[AgentMessage] = []
    for k in range(len(entries) - 1, -1, -1):
        for message in reversed(_context_messages(entries[k])):
            tail.append(message)
            if (
                message.get("role") == "assistant"
                and estimate_context_tokens([message]).last_usage_index == 0
            ):
                tail.reverse()
                return estimate_context_tokens(tail).tokens
    tail.reverse()
    return estimate_context_tokens(tail).tokens


def _add_details_files(file_ops: FileOperations, details: object) -> None:
    if not isinstance(details, Mapping):
        return
    for key, target in (("readFiles", file_ops.read), ("modifiedFiles", file_ops.edited)):
        files = details.get(key)
        if not isinstance(files, list):
            continue
        for f in files:
            if not isinstance(f, str):
                raise CompactionError(f"compaction details.{key} must hold file paths (strings), got {f!r}")
            target.add(f)


def prepare_compaction(
    path_entries: Sequence[SessionEntry],
    settings: CompactionSettings | Mapping[str, Any] = DEFAULT_COMPACTION_SETTINGS,
    *,
    message_entries_only: bool = False,
) -> CompactionPreparation | None:
    """Pi's ``prepareCompaction(pathEntries, settings)``; ``None`` when there is nothing to compact.

    ``message_entries_only``: the cut counts only ``message`` entries toward ``keepRecentTokens``
    (Pi before 0.80.4; see :func:`~pi_nb.compaction.cut_points.find_cut_point`).

    ``None`` covers: the path ends with a compaction ("Already compacted" for a manual request),
    nothing before the cut ("Nothing to compact (session too small)"), and a kept entry without an
    id (a session that needs migration).
    """
    s = CompactionSettings.coerce(settings)
    if path_entries and path_entries[-1].get("type") == "compaction":
        return None

    types = _plain_types(path_entries)  # None unless every entry is a plain dict
    prev_index = -1
    if types is not None:
        if "compaction" in types:
            prev_index = len(types) - 1 - types[::-1].index("compaction")
    else:
        for i in range(len(path_entries) - 1, -1, -1):
            if path_entries[i].get("type") == "compaction":
                prev_index = i
                break
    file_ops = create_file_ops()

    previous_summary: object = None
    boundary_start = 0
    prev: SessionEntry | None = None
    if prev_index >= 0:
        prev = path_entries[prev_index]
        previous_summary = prev.get("summary")
        kept_id = prev.get("firstKeptEntryId")
        found = next(
            (
                i
                for i, e in enumerate(path_entries)
                if "id" in e and kept_id is not None and e.get("id") == kept_id
            ),
            -1,
        )
        boundary_start = found if found >= 0 else prev_index + 1

    plain = types is not None
    has_compaction = prev_index >= 0
    # Pi computes tokensBefore first; here it is computed after the messages are collected, whose
    # pass also reads the ids and parent ids it needs. Its result, and which error comes first
    # for a broken path, stay as in Pi's order: on any error below it is computed first.
    try:
        cut = find_cut_point(
            path_entries,
            boundary_start,
            len(path_entries),
            s.keep_recent_tokens,
            message_entries_only=message_entries_only,
        )
        first_kept_id: object = None
        if cut.first_kept_entry_index < len(path_entries):
            first_kept_id = path_entries[cut.first_kept_entry_index].get("id")
        if not _truthy(first_kept_id):
            _tokens_before(path_entries, plain, has_compaction)  # (its errors, as in Pi)
            return None

        history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
        # (the file operations of the previous compaction come first in Pi's sets: the summarised
        # messages' calls are collected into a second set and merged behind them below)
        summarized_ops = create_file_ops()
        ids: list[object] = []
        parents: list[object] = []
        to_summarize = _first_messages(
            path_entries, boundary_start, history_end, summarized_ops, types, (ids, parents)
        )
        turn_prefix: list[AgentMessage] = []
        if cut.is_split_turn:
            for i in range(cut.turn_start_index, cut.first_kept_entry_index):
                msg = _first_message(path_entries[i])
                if msg is not None:
                    turn_prefix.append(msg)
    except Exception:
        _tokens_before(path_entries, plain, has_compaction)  # Pi's order: its error first
        raise
    links = (boundary_start, ids, parents) if plain and boundary_start <= history_end else None
    tokens_before = _tokens_before(path_entries, plain, has_compaction, links)
    if not to_summarize and not turn_prefix:
        return None

    if prev is not None and not _truthy(prev.get("fromHook")) and _truthy(prev.get("details")):
        _add_details_files(file_ops, prev.get("details"))
    for target, source in (
        (file_ops.read, summarized_ops.read),
        (file_ops.written, summarized_ops.written),
        (file_ops.edited, summarized_ops.edited),
    ):
        for path in source:
            target.add(path)
    if cut.is_split_turn:
        for msg in turn_prefix:
            extract_file_ops_from_message(msg, file_ops)

    return CompactionPreparation(
        first_kept_entry_id=str(first_kept_id),
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary if isinstance(previous_summary, str) else None,
        file_ops=file_ops,
        settings=s,
    )
