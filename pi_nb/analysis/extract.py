"""Rows of sessions, in plain Python: what each frame row is made from (no pandas, no IPython).

:class:`LoadedSession` is one session loaded for the frames, with the lookups several columns
share computed once and only when a column asks (children counts, depths, the messages each entry
puts in context, token estimates, the tool calls by id). For each frame kind a *row context*
class holds one row's inputs (the entry, its message, ...); the columns of
:mod:`pi_nb.analysis.columns` read their value from it. ``<kind>_contexts(session)`` lists the
row contexts of a session in frame order.

Stored entries are read tolerantly (whatever JSON a session line holds): a field of the wrong
type is read as missing, never raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

from pi_nb._js import UNDEFINED, Undefined, js_stringify
from pi_nb.errors import EntryCycleError, InvalidMessageError, PiNbError
from pi_nb.messages import Usage
from pi_nb.session.context import (
    SessionContext,
    build_session_context,
    context_from_path,
    session_entry_to_context_messages,
)
from pi_nb.session.lazy import LazyEntries, LazyIndex, context_from_positions, leaf_positions
from pi_nb.session.manager import SessionManager
from pi_nb.session.types import SessionEntry
from pi_nb.tokens import calculate_context_tokens, count_message_tokens, estimate_tokens

__all__ = [
    "CompactionRow",
    "EntryRow",
    "LoadedSession",
    "MessageRow",
    "SessionRow",
    "ToolResultRow",
    "UsageRow",
    "compaction_contexts",
    "entry_contexts",
    "message_contexts",
    "session_contexts",
    "tool_result_contexts",
    "usage_contexts",
]

# ---------------------------------------------------------------------------------------------
# tolerant readers


def as_text(v: Any) -> str | None:
    """A value as frame text: a string as it is, anything else as its JSON."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    try:
        return js_stringify(v)
    except Exception:  # a value JSON cannot hold (never from a file)
        return str(v)


def as_int(v: Any) -> int | None:
    """A JSON number as a 64-bit integer, ``None`` where it is not one."""
    if type(v) is int:
        return v if -(2**63) <= v < 2**63 else None
    if type(v) is float and math.isfinite(v) and v.is_integer() and abs(v) < 2**63:
        return int(v)
    return None


def as_float(v: Any) -> float | None:
    """A JSON number as a float, ``None`` where it is not one."""
    if type(v) is float:
        return v
    if type(v) is int:
        return float(v)
    return None


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def is_map(b: Any) -> bool:
    return type(b) is dict or isinstance(b, Mapping)


def content_text(content: Any) -> str:
    """The text blocks of a message content joined by newlines (a string content as it is)."""
    if type(content) is str:
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if is_map(b) and b.get("type") == "text" and type(b.get("text")) is str
        )
    if isinstance(content, str):
        return content
    return ""


def content_images(content: Any) -> int:
    """How many image blocks a content holds."""
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if is_map(b) and b.get("type") == "image")


def entry_id(e: SessionEntry) -> str | None:
    """An entry's id as a frame shows it: ``None`` (missing) for an entry without one, never the
    text ``"None"``."""
    eid = e.get("id")
    return None if eid is None else str(eid)


def countable(count: Callable[[Any], int], messages: Sequence[Any]) -> int | None:
    """``sum(count(m) for m in messages)``, or ``None`` where a message cannot be counted."""
    try:
        return sum(count(m) for m in messages)
    except InvalidMessageError:
        return None


def usage_context_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """Pi's ``calculateContextTokens`` of a stored usage (not validated: ``None`` where it fails)."""
    if not usage:
        return None
    try:
        return calculate_context_tokens(cast("Usage", usage))  # checked there: InvalidMessageError
    except InvalidMessageError:
        return None


_ENTRY_ROLES = {
    "custom_message": "custom",
    "branch_summary": "branchSummary",
    "compaction": "compactionSummary",
}


def entry_role(entry: SessionEntry) -> Any:
    """The message role of an entry (``custom`` / ``branchSummary`` / ``compactionSummary`` for
    the entries that become those messages)."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        return msg.get("role") if isinstance(msg, Mapping) else None
    return _ENTRY_ROLES.get(str(etype))


def short_text(entry: SessionEntry, limit: int = 200, stringify: Callable[[Any], str] = js_stringify) -> str:
    """A short one-line text of an entry."""
    etype = entry.get("type")
    if etype == "message":
        msg = mapping(entry.get("message"))
        if msg.get("role") == "bashExecution":
            text = str(msg.get("command") or "")
        else:
            text = content_text(msg.get("content"))
            if not text and msg.get("role") == "assistant":
                text = " ".join(
                    f"{b.get('name')}({stringify(b.get('arguments'))})"
                    for b in msg.get("content") or []
                    if is_map(b) and b.get("type") == "toolCall"
                )
    elif etype == "custom_message":
        text = content_text(entry.get("content"))
    elif etype in ("compaction", "branch_summary"):
        text = str(entry.get("summary") or "")
    elif etype == "model_change":
        text = f"{entry.get('provider')}/{entry.get('modelId')}"
    elif etype == "thinking_level_change":
        text = str(entry.get("thinkingLevel"))
    elif etype == "label":
        text = f"{entry.get('targetId')}: {entry.get('label') or '(cleared)'}"
    elif etype == "session_info":
        text = str(entry.get("name") or "")
    elif etype == "custom":
        text = str(entry.get("customType") or "")
    else:
        text = ""
    text = text.replace("\n", " ").replace("\t", " ").strip()
    return text[:limit]


def depths(parent_of: Mapping[str, object]) -> dict[str, int]:
    """Distance from the root for every entry (a missing parent makes a root; loops stop).

    ``parent_of`` maps each id to its ``parentId`` as stored (any JSON value; compared as ``str``)."""
    depth: dict[str, int] = {}
    for eid in parent_of:
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = eid
        while cur is not None and cur not in depth and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            parent = parent_of.get(cur)
            cur = str(parent) if parent is not None and str(parent) in parent_of else None
        base = depth[cur] if cur is not None and cur in depth else -1
        for c in reversed(chain):
            base += 1
            depth[c] = base
    return depth


_UNDEFINED = object()  # a key JavaScript reads as `undefined` (the field is missing)


def _js_key(entry: SessionEntry, name: str) -> object:
    """``entry[name]`` as a JavaScript ``Map`` key: missing is ``undefined`` (not ``null``), an
    object or array is a key of its own."""
    if name not in entry:
        return _UNDEFINED
    value = entry.get(name)
    try:
        hash(value)
    except TypeError:
        return ("<object>", id(value))
    return value


def pi_tree_leaves(entries: Sequence[SessionEntry]) -> int:
    """The leaf nodes of Pi's ``getTree()``: one node per entry, keyed by id (the last entry of
    an id is every node of that id, with its children), so an entry without an id, or with an id
    used twice, is a node of its own and a subtree under a repeated id is counted at each place
    it shows. Counted without walking the repeated subtrees (and without looping where the
    parents form a cycle, where Pi's walk would not end)."""
    keys = [_js_key(e, "id") for e in entries]
    return _tree_leaves(keys, [_js_key(e, "parentId") for e in entries])


def _column_key(value: Any) -> object:
    """:func:`_js_key` of a value of the lazy index's ``ids``/``parent_ids`` columns."""
    if isinstance(value, Undefined):
        return _UNDEFINED
    try:
        hash(value)
    except TypeError:
        return ("<object>", id(value))
    return value


def _tree_leaves(keys: list[object], parents: list[object]) -> int:
    present = set(keys)
    children: dict[object, list[object]] = {}
    roots: list[object] = []
    for parent, k in zip(parents, keys, strict=True):
        if parent is None or parent == k or parent not in present:
            roots.append(k)
        else:
            children.setdefault(parent, []).append(k)
    leaves: dict[object, int] = {}
    for root in roots:
        stack: list[tuple[object, bool]] = [(root, False)]
        on_path: set[object] = set()
        while stack:
            k, done = stack.pop()
            kids = children.get(k, ())
            if done:
                leaves[k] = sum(leaves.get(c, 0) for c in kids) if kids else 1
                on_path.discard(k)
            elif k not in leaves and k not in on_path:
                on_path.add(k)
                stack.append((k, True))
                stack.extend((c, False) for c in kids if c not in leaves and c not in on_path)
    return min(sum(leaves.get(r, 0) for r in roots), 2**63 - 1)


def latest_time(times: list[str]) -> str | None:
    """The latest of ISO 8601 times. Pi writes ``YYYY-MM-DDTHH:MM:SS.sssZ`` (those compare as
    text); other shapes are compared as the instants they name (a text that is not a time never
    wins; ``None`` when none is)."""
    from datetime import UTC, datetime

    n = len(times[0])
    if all(len(t) == n and t.endswith("Z") for t in times):
        return max(times)
    best: tuple[datetime, str] | None = None
    for t in times:
        try:
            when = datetime.fromisoformat(t[:-1] + "+00:00" if t.endswith("Z") else t)
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        if best is None or when > best[0]:
            best = (when, t)
    return best[1] if best else None


# ---------------------------------------------------------------------------------------------
# one loaded session


@dataclass
class LoadedSession:
    """One session, loaded for frames: the manager and the lookups every frame needs.

    A session file indexed lazily (:mod:`pi_nb.session.lazy`) keeps its entries unparsed:
    :attr:`lazy` is then the index (``entries`` is the same object), the branch and context are
    positions (:attr:`active_pos`, :attr:`context_pos`), and each frame kind parses only the
    entries its rows and columns read (the index knows each entry's type and message role)."""

    session_id: str
    session_file: str | None
    manager: SessionManager
    entries: Sequence[SessionEntry] = field(default_factory=list)
    active_ids: set[int] = field(default_factory=set)
    """The entries on the active branch, by object (``id(entry)``): Pi reads a session by id,
    the last entry of an id wins, so of two entries with one id only the last is on the branch."""
    context_ids: set[int] = field(default_factory=set)
    """The entries whose messages are in context, by object (``id(entry)``)."""
    leaf_id: str | None = None
    problems: int = 0
    leaf: SessionEntry | None = None
    """The entry Pi takes as the leaf (the last one of the leaf's id)."""
    encoding: str | None = None
    """The tiktoken encoding of the ``tokens`` columns (``None``: no such column)."""
    harness: str = "pi"
    """The agent that wrote the session: ``"pi"``, or the ``harness`` of a header mapped from
    another agent's transcript (:mod:`pi_nb.harness`)."""
    lazy: LazyEntries | None = None
    """The lazy entries (``entries`` itself) of a lazily indexed file, else ``None``."""
    active_pos: set[int] | None = None
    """Lazy mode: the positions of the active branch (``active_ids`` is then unused)."""
    context_pos: set[int] | None = None
    """Lazy mode: the positions of the entries in context."""
    _messages: list[list[Any]] | None = None
    _estimates: list[int | None] | None = None
    _messages_at: dict[int, list[Any]] = field(default_factory=dict)
    _estimates_at: dict[int, int | None] = field(default_factory=dict)
    _json: dict[int, tuple[Any, str]] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict)

    def stringify(self, value: Any) -> str:
        """``JSON.stringify(value)``, once per object of the session (tool-call arguments are
        shown by two frames)."""
        hit = self._json.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = js_stringify(value)
        self._json[id(value)] = (value, text)
        return text

    @classmethod
    def of(
        cls, manager: SessionManager, session_file: str | None, problems: int = 0, encoding: str | None = None
    ) -> LoadedSession:
        lazy = manager.lazy_entries()
        if lazy is not None:
            return cls._of_lazy(manager, lazy, session_file, problems, encoding)
        entries = manager.get_entries()
        active = {id(e) for e in manager.get_branch()}
        # Pi's buildContextEntries(): from the leaf, or from the last entry when the leaf has no id
        context = {id(e) for e in manager.build_context_entries()}
        header = manager.get_header()
        harness = header.get("harness") if header is not None else None
        return cls(
            manager.get_session_id(),
            session_file,
            manager,
            list(entries),
            active,
            context,
            manager.get_leaf_id(),
            problems,
            leaf=manager.get_leaf_entry(),
            encoding=encoding,
            harness=harness if isinstance(harness, str) and harness else "pi",
        )

    @classmethod
    def _of_lazy(
        cls,
        manager: SessionManager,
        lazy: LazyEntries,
        session_file: str | None,
        problems: int,
        encoding: str | None,
    ) -> LoadedSession:
        """:meth:`of` for lazy entries: the branch and the context as positions (nothing parsed
        but a compaction on the path and the leaf)."""
        active = manager.branch_positions()
        context = manager.context_entry_positions()
        assert active is not None and context is not None  # (the manager's entries are lazy)
        header = manager.get_header()
        harness = header.get("harness") if header is not None else None
        return cls(
            manager.get_session_id(),
            session_file,
            manager,
            lazy,
            set(),
            set(),
            manager.get_leaf_id(),
            problems,
            leaf=manager.get_leaf_entry(),
            encoding=encoding,
            harness=harness if isinstance(harness, str) and harness else "pi",
            lazy=lazy,
            active_pos=set(active),
            context_pos=set(context),
        )

    def on_active_branch(self, i: int, e: SessionEntry) -> bool:
        """Whether entry ``e`` (at position ``i``) is on the active branch."""
        if self.active_pos is not None:
            return i in self.active_pos
        return id(e) in self.active_ids

    def in_context(self, i: int, e: SessionEntry) -> bool:
        """Whether entry ``e`` (at position ``i``) puts its messages in context."""
        if self.context_pos is not None:
            return i in self.context_pos
        return id(e) in self.context_ids

    def active_branch_entries(self) -> int:
        return len(self.active_pos) if self.active_pos is not None else len(self.active_ids)

    def positions(self, etype: str, role: Any = UNDEFINED) -> Sequence[int] | None:
        """Lazy mode: the positions of the entries whose ``type`` is ``etype`` (and, given a
        ``role``, whose ``message.role`` is it), read from the index; ``None`` otherwise."""
        lazy = self.lazy
        if lazy is None:
            return None
        types = lazy.types
        if isinstance(role, Undefined):
            return [i for i, t in enumerate(types) if t == etype]
        roles = lazy.roles
        return [i for i, t in enumerate(types) if t == etype and roles[i] == role]

    def context_messages(self) -> list[list[Any]]:
        """Per entry (file order): the messages it puts in context (computed once)."""
        if self._messages is None:
            at = self._messages_at
            self._messages = [
                at[i] if i in at else session_entry_to_context_messages(e) for i, e in enumerate(self.entries)
            ]
        return self._messages

    def context_messages_at(self, i: int) -> list[Any]:
        """``context_messages()[i]``, computing only that entry's."""
        if self._messages is not None:
            return self._messages[i]
        got = self._messages_at.get(i)
        if got is None:
            got = session_entry_to_context_messages(self.entries[i])
            self._messages_at[i] = got
        return got

    def estimate_at(self, i: int) -> int | None:
        """``estimates()[i]``, computing only that entry's."""
        if self._estimates is not None:
            return self._estimates[i]
        if i not in self._estimates_at:
            self._estimates_at[i] = countable(estimate_tokens, self.context_messages_at(i))
        return self._estimates_at[i]

    def lazy_index(self) -> LazyIndex | None:
        """Lazy mode: ``{id: entry}`` over the index (``None`` otherwise, or where an id cannot be
        a key: the eager path then decides)."""
        if self.lazy is None:
            return None
        if "index" not in self._cache:
            try:
                self._cache["index"] = LazyIndex(self.lazy)
            except TypeError:
                self._cache["index"] = None
        return cast("LazyIndex | None", self._cache["index"])

    def context_at(self, leaf_id: Any) -> SessionContext:
        """``build_session_context(entries, leaf_id)``; in lazy mode only the entries of that
        context (and the path's settings) are parsed."""
        index = self.lazy_index()
        if self.lazy is not None and index is not None:
            try:
                path = leaf_positions(self.lazy, index, UNDEFINED if leaf_id is None else leaf_id)
            except EntryCycleError:
                path = None  # (the eager walk raises its own error)
            if path is not None:
                found = context_from_positions(self.lazy, path)
                return found if found is not None else context_from_path(self.lazy.materialize(path))
        return build_session_context(self.entries, leaf_id)

    def estimates(self) -> list[int | None]:
        """Per entry: Pi's token estimate of what it puts in context (computed once); ``None``
        (``<NA>`` in a frame) for a message Pi opens but cannot count (a ``null`` content block:
        Pi's estimate throws there), so one such entry does not fail the whole frame."""
        if self._estimates is None:
            at = self._estimates_at
            self._estimates = [
                at[i] if i in at else countable(estimate_tokens, ms)
                for i, ms in enumerate(self.context_messages())
            ]
        return self._estimates

    def tokens(self, messages: Sequence[Any]) -> int | None:
        """tiktoken's count of ``messages`` in :attr:`encoding` (``None`` without one)."""
        encoding = self.encoding
        if not encoding:
            return None
        return countable(lambda m: count_message_tokens(m, encoding), messages)

    def children(self) -> dict[str, int]:
        """How many entries name each id as their parent."""
        got = self._cache.get("children")
        if got is None:
            got = {}
            for p in self._parent_ids():
                if p is not None:
                    got[str(p)] = got.get(str(p), 0) + 1
            self._cache["children"] = got
        return cast("dict[str, int]", got)

    def tree_leaves(self) -> int:
        """:func:`pi_tree_leaves` of the entries (from the index's columns in lazy mode)."""
        if self.lazy is None:
            return pi_tree_leaves(self.entries)
        return _tree_leaves(
            list(map(_column_key, self.lazy.ids)), list(map(_column_key, self.lazy.parent_ids))
        )

    def _ids(self) -> list[Any]:
        """Every entry's ``e.get("id")``, from the index in lazy mode."""
        if self.lazy is not None:
            return [None if isinstance(v, Undefined) else v for v in self.lazy.ids]
        return [e.get("id") for e in self.entries]

    def _parent_ids(self) -> list[Any]:
        """Every entry's ``e.get("parentId")``, from the index in lazy mode."""
        if self.lazy is not None:
            return [None if isinstance(v, Undefined) else v for v in self.lazy.parent_ids]
        return [e.get("parentId") for e in self.entries]

    def _last_by_id(self) -> dict[str, int]:
        """``{str(id): position of the last entry of that id}``."""
        got = self._cache.get("last")
        if got is None:
            got = {str(eid): i for i, eid in enumerate(self._ids()) if eid is not None}
            self._cache["last"] = got
        return cast("dict[str, int]", got)

    def depth(self, e: SessionEntry, i: int | None = None) -> int:
        """The entry's distance from the root (``i``: its position; found by object otherwise).
        Depths are by id (the last entry of an id, as Pi reads them); an entry without an id, or
        an earlier one of two with the same id, sits one below the parent it names."""
        by_id = self._cache.get("depth")
        last = self._last_by_id()
        if by_id is None:
            parents = self._parent_ids()
            by_id = depths({k: parents[pos] for k, pos in last.items()})
            self._cache["depth"] = by_id
        eid = e.get("id")
        if eid is not None:
            pos = last.get(str(eid))
            if pos is not None and (pos == i if i is not None else self.entries[pos] is e):
                return cast(int, by_id.get(str(eid), 0))
        parent = e.get("parentId")
        return cast(int, by_id[str(parent)] + 1) if parent is not None and str(parent) in by_id else 0

    def tool_calls(self) -> dict[str, tuple[str | None, Any]]:
        """Every tool call of the session's assistant messages: ``{call id: (entry id, arguments)}``
        (the last call of an id wins)."""
        got = self._cache.get("calls")
        if got is None:
            got = {}
            at = self.positions("message", "assistant")
            for e in self.entries if at is None else self._entries_at(at):
                m = e.get("message") if e.get("type") == "message" else None
                if (
                    isinstance(m, Mapping)
                    and m.get("role") == "assistant"
                    and isinstance(m.get("content"), list)
                ):
                    for b in m["content"]:
                        if is_map(b) and b.get("type") == "toolCall":
                            got[str(b.get("id"))] = (entry_id(e), b.get("arguments"))
            self._cache["calls"] = got
        return cast("dict[str, tuple[str | None, Any]]", got)


    def _entries_at(self, positions: Sequence[int]) -> list[SessionEntry]:
        assert self.lazy is not None
        return self.lazy.materialize(positions)

    def indexed(self, etype: str, role: Any = UNDEFINED) -> Iterator[tuple[int, SessionEntry]]:
        """``(position, entry)`` of every entry that may be of type ``etype`` (and role): in
        lazy mode only those the index names (parsed now), else every entry."""
        at = self.positions(etype, role)
        if at is None:
            yield from enumerate(self.entries)
        else:
            yield from zip(at, self._entries_at(at), strict=True)


# ---------------------------------------------------------------------------------------------
# row contexts, one class per frame kind


class EntryRow:
    """One session entry (every entry is a row of ``entries``)."""

    __slots__ = ("e", "eid", "i", "s")

    def __init__(self, s: LoadedSession, i: int, e: SessionEntry) -> None:
        self.s, self.i, self.e, self.eid = s, i, e, entry_id(e)


def entry_contexts(s: LoadedSession) -> Iterator[EntryRow]:
    for i, e in enumerate(s.entries):
        yield EntryRow(s, i, e)


class MessageRow(EntryRow):
    """An entry that puts a message in context, and that message (the first, if several)."""

    __slots__ = ("_parts", "content", "m", "msgs", "role")

    def __init__(self, s: LoadedSession, i: int, e: SessionEntry, msgs: list[Any]) -> None:
        super().__init__(s, i, e)
        self.msgs = msgs
        self.m: Mapping[str, Any] = msgs[0]
        self.role = self.m.get("role")
        self.content = self.m.get("content")
        self._parts: tuple[str, int, list[str]] | None = None

    def parts(self) -> tuple[str, int, list[str]]:
        """``(text, thinking characters, tool call names)``: the full text (text blocks joined;
        a bash execution's command and output; a summary)."""
        if self._parts is None:
            m, role, content = self.m, self.role, self.content
            thinking = 0
            calls: list[str] = []
            if role == "assistant" and isinstance(content, list):
                for b in content:
                    if not is_map(b):
                        continue
                    btype = b.get("type")
                    if btype == "thinking" and isinstance(b.get("thinking"), str):
                        thinking += len(b["thinking"])
                    elif btype == "toolCall":
                        calls.append(str(b.get("name")))
            if role == "bashExecution":
                text = f"{m.get('command') or ''}\n{m.get('output') or ''}"
            elif role in ("branchSummary", "compactionSummary"):
                text = str(m.get("summary") or "")
            else:
                text = content_text(content)
            self._parts = (text, thinking, calls)
        return self._parts


def message_contexts(s: LoadedSession) -> Iterator[MessageRow]:
    for i, msgs in enumerate(s.context_messages()):
        if msgs:
            yield MessageRow(s, i, s.entries[i], msgs)


_UNSET_CALL: Any = object()


class ToolResultRow(EntryRow):
    """A ``toolResult`` message entry, its details and the call that asked for it."""

    __slots__ = ("_call", "details", "m", "trunc")

    def __init__(self, s: LoadedSession, i: int, e: SessionEntry, m: Mapping[str, Any]) -> None:
        super().__init__(s, i, e)
        self.m = m
        self.details = mapping(m.get("details"))
        self.trunc = mapping(self.details.get("truncation"))
        self._call: Any = _UNSET_CALL

    @property
    def call(self) -> tuple[str | None, Any] | None:
        """``(entry id, arguments)`` of the call that asked for this result (looked up when a
        column reads it: the session's tool calls are gathered then)."""
        if self._call is _UNSET_CALL:
            self._call = self.s.tool_calls().get(str(self.m.get("toolCallId")))
        return cast("tuple[str | None, Any] | None", self._call)

    def text(self) -> str:
        return content_text(self.m.get("content"))


def tool_result_contexts(s: LoadedSession) -> Iterator[ToolResultRow]:
    for i, e in s.indexed("message", "toolResult"):
        if e.get("type") != "message":
            continue
        m = e.get("message")
        if isinstance(m, Mapping) and m.get("role") == "toolResult":
            yield ToolResultRow(s, i, e, m)


def assistant_message(e: SessionEntry) -> Mapping[str, Any] | None:
    """The entry's message if it is an assistant's (as stored: its fields are read tolerantly)."""
    m = e.get("message") if e.get("type") == "message" else None
    return m if isinstance(m, Mapping) and m.get("role") == "assistant" else None


class UsageRow(EntryRow):
    """An assistant message entry and its usage."""

    __slots__ = ("context_tokens", "cost", "m", "usage")

    def __init__(self, s: LoadedSession, i: int, e: SessionEntry, m: Mapping[str, Any]) -> None:
        super().__init__(s, i, e)
        self.m = m
        self.usage = mapping(m.get("usage"))
        # another agent's model the catalog does not price: its zeros are no price (missing)
        unknown = mapping(e.get("raw")).get("costUnknown") is True
        self.cost = {} if unknown else mapping(self.usage.get("cost"))
        self.context_tokens = usage_context_tokens(self.usage)

    def usable(self) -> bool:
        """Pi's test for a usage its threshold maths may use (not aborted or errored, more than 0
        tokens)."""
        ctx = self.context_tokens
        return bool(ctx and ctx > 0 and self.m.get("stopReason") not in ("aborted", "error"))


def usage_contexts(s: LoadedSession) -> Iterator[UsageRow]:
    for i, e in s.indexed("message", "assistant"):
        m = assistant_message(e)
        if m is not None:
            yield UsageRow(s, i, e, m)


class CompactionRow(EntryRow):
    """A ``compaction`` entry."""

    __slots__ = ("details", "summary", "usage")

    def __init__(self, s: LoadedSession, i: int, e: SessionEntry) -> None:
        super().__init__(s, i, e)
        self.details = mapping(e.get("details"))
        self.usage = mapping(e.get("usage"))
        raw = e.get("summary")
        self.summary = raw if isinstance(raw, str) else ""

    def estimate_after(self) -> int:
        """Pi's ``estimatedTokensAfter``: ``estimateTokens`` summed over the context rebuilt at
        the compaction."""
        return sum(estimate_tokens(m) for m in self.s.context_at(self.eid).messages)


def compaction_contexts(s: LoadedSession) -> Iterator[CompactionRow]:
    for i, e in s.indexed("compaction"):
        if e.get("type") == "compaction":
            yield CompactionRow(s, i, e)


def _price(provider: Any, model: Any, usage: Mapping[str, Any]) -> float | None:
    """The cost of a response whose usage carries none, priced from the model catalog as Pi would
    (``pi_nb.calculate_cost``); ``None`` when the catalog does not know the model (or the stored
    usage, read as it is, cannot be priced)."""
    from pi_nb.providers.catalog import calculate_cost, find_model

    if not isinstance(provider, str) or not isinstance(model, str):
        return None
    spec = find_model(provider, model)
    if spec is None:
        return None
    try:
        return as_float(calculate_cost(spec, usage)["total"])
    except (PiNbError, TypeError, ValueError):
        return None


class SessionRow:
    """One session (the row of ``sessions``): the counts and sums over its entries, computed in
    one pass on first use."""

    def __init__(self, s: LoadedSession) -> None:
        self.s = s
        self._sums: dict[str, Any] | None = None
        self._context: tuple[int | None, int | None] | None = None

    @cached_property
    def header(self) -> Mapping[str, Any]:
        return mapping(self.s.manager.get_header())

    def sums(self) -> dict[str, Any]:
        """Counts, token sums, cost, models and times over every entry."""
        if self._sums is not None:
            return self._sums
        s = self.s
        models: dict[str, None] = {}
        last_model: str | None = None
        c = dict.fromkeys(
            ("turns", "responses", "tool_calls", "tool_errors", "error_responses", "compactions"), 0
        )
        c["branch_summaries"] = c["messages"] = 0
        sums: dict[str, int | float] = {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
        }
        cost_total: float | None = None
        unpriced = 0
        times = [t for t in (e.get("timestamp") for e in s.entries) if isinstance(t, str)]
        for e, msgs in zip(s.entries, s.context_messages(), strict=True):
            etype = e.get("type")
            if msgs:
                c["messages"] += 1
            if etype == "compaction":
                c["compactions"] += 1
            elif etype == "branch_summary":
                c["branch_summaries"] += 1
            elif etype == "model_change":
                spec = f"{e.get('provider')}/{e.get('modelId')}"
                models.setdefault(spec)
                last_model = spec
            if etype != "message":
                continue
            m = mapping(e.get("message"))
            role = m.get("role")
            if role == "user":
                c["turns"] += 1
            elif role == "toolResult" and m.get("isError") is True:
                c["tool_errors"] += 1
            elif role == "assistant":
                c["responses"] += 1
                if m.get("stopReason") == "error":
                    c["error_responses"] += 1
                content = m.get("content")
                if isinstance(content, list):
                    c["tool_calls"] += sum(1 for b in content if is_map(b) and b.get("type") == "toolCall")
                if isinstance(m.get("provider"), str) and isinstance(m.get("model"), str):
                    spec = f"{m['provider']}/{m['model']}"
                    models.setdefault(spec)
                    last_model = spec
                usage = mapping(m.get("usage"))
                for key in sums:
                    value = usage.get(key)
                    if type(value) is int or type(value) is float:
                        sums[key] += value
                cost = as_float(mapping(usage.get("cost")).get("total"))
                if cost is None and usage:
                    cost = _price(m.get("provider"), m.get("model"), usage)
                if mapping(e.get("raw")).get("costUnknown") is True:
                    cost = None  # another agent's model the catalog does not price: a 0 is not a price
                if cost is None:
                    unpriced += 1
                else:
                    cost_total = (cost_total or 0.0) + cost
        header_time = self.header.get("timestamp")
        start = header_time if isinstance(header_time, str) else (times[0] if times else None)
        self._sums = {
            **c,
            "models": ",".join(models),
            "model": last_model,
            "tokens": {k: as_int(v) for k, v in sums.items()},
            "cost_total": cost_total,
            "unpriced": unpriced,
            "start": start,
            "end": latest_time(times) if times else start,
        }
        return self._sums

    def context(self) -> tuple[int | None, int | None]:
        """``(last, peak)`` of Pi's context size from the usable usages on the active branch."""
        if self._context is None:
            last: int | None = None
            peak: int | None = None
            for e in self.s.manager.get_branch():
                a = assistant_message(e)
                if a is None or a.get("stopReason") in ("aborted", "error"):
                    continue
                ctx = usage_context_tokens(a.get("usage") if isinstance(a.get("usage"), Mapping) else None)
                if ctx:
                    last = ctx
                    peak = ctx if peak is None else max(peak, ctx)
            self._context = (last, peak)
        return self._context


def session_contexts(s: LoadedSession) -> Iterator[SessionRow]:
    yield SessionRow(s)
