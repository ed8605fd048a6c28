"""``SessionManager``: Pi's append-only session tree in a JSONL file (``core/session-manager.ts``).

Every entry has an ``id`` and a ``parentId``; the *leaf* is where the next entry goes. Appending
makes a child of the leaf and moves the leaf to it; :meth:`SessionManager.branch` moves the leaf
back to an earlier entry, so the next append starts a sibling branch. Nothing is ever edited or
deleted. :meth:`SessionManager.build_session_context` projects the root -> leaf path to the
messages the LLM sees (compaction-aware; see :mod:`pi_nb.session.context`).

Files are Pi's, byte for byte (``JSON.stringify`` of each entry with Pi's key order), and Pi's
persistence rule holds: **nothing is written until the session has an assistant message**; then
the header and every entry so far are written at once, and from then on each new entry is
appended as one line. A session that never got an answer leaves no file behind.

What pi_nb adds to Pi (see :mod:`pi_nb.session.jsonl` for the mechanics):

* **Durability.** Each append is one ``write()`` of a complete line under an exclusive lock; the
  first write creates the file atomically; a rewrite (migration of an old file) is atomic and
  keeps the original beside it as ``<file>.bak``. A writer killed at any moment leaves a file that
  loads with every entry whose write had returned.
* **Nothing is dropped silently.** Lines that are not used when loading (malformed JSON, a torn last
  line, a non-object) are listed in :attr:`SessionManager.load_problems` with their line numbers;
  ``strict=True`` raises :class:`~pi_nb.errors.SessionFileCorruptError` instead (before anything is
  changed on disk). A torn last line gets a ``\\n`` appended (as Pi does), so the next entry starts
  on a line of its own; the torn bytes stay in the file.
* **Lazy entries.** Opening a file (:meth:`SessionManager.open`, :meth:`set_session_file`,
  :meth:`in_memory_from_file`) indexes every line's ``id``, ``parentId``, ``type`` and message role
  without building the entries (:mod:`pi_nb.session.lazy`); an entry is parsed the first time it is
  asked for (the leaf's context parses only what it holds). Every read returns what loading every
  entry at once returns.
* **Concurrent appenders.** Two pi_nb processes appending to the same file both succeed and their
  lines never interleave (each waits for the other's lock, up to ``lock_timeout`` seconds, then
  :class:`~pi_nb.errors.SessionLockedError`). Each process only knows its own entries, so both write
  children of the leaf *they* hold: after a reload the file shows two branches, nothing lost.

``undefined`` versus ``null``: optional arguments default to :data:`~pi_nb._js.UNDEFINED`
(the field is left out of the entry, as Pi leaves out ``undefined``). ``None`` writes ``null``
where Pi's type allows any value (``details``, ``data``); where Pi's type has no ``null``
(``fromHook``, ``usage``, a label) ``None`` also leaves the field out.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq, ne
from typing import Any, Concatenate, NotRequired, ParamSpec, TypedDict, TypeGuard, TypeVar, cast

from pi_nb._js import UNDEFINED, Undefined, js_stringify
from pi_nb._js import js_trim as _js_trim
from pi_nb._js import js_truthy as _js_truthy
from pi_nb._js import js_truthy as _truthy
from pi_nb.config import APP_NAME, normalize_path, resolve_path
from pi_nb.errors import (
    EntryCycleError,
    EntryNotFoundError,
    InvalidEntryError,
    InvalidSessionFileError,
    SessionError,
    SessionFileCorruptError,
    SessionWriteError,
)
from pi_nb.messages import AgentMessage, ImageContent, TextContent, Usage, js_date_ms
from pi_nb.session import ids as _ids
from pi_nb.session.context import (
    SessionContext,
    _build_session_path,
    _lookup,
    context_entries_from_path,
    context_from_path,
    get_branch_entries,
)
from pi_nb.session.jsonl import (
    DEFAULT_LOCK_TIMEOUT,
    LoadProblem,
    SessionFileContents,
    append_to_file,
    create_file_exclusive,
    ensure_trailing_newline,
    gc_paused,
    read_session_file,
    rewrite_file_atomic,
    serialize_entry,
)
from pi_nb.session.lazy import (
    FileEntriesView,
    LazyEntries,
    LazyIndex,
    context_from_positions,
    context_positions,
    leaf_positions,
    read_session_file_lazy,
)
from pi_nb.session.migrations import CURRENT_SESSION_VERSION, migrate_to_current_version
from pi_nb.session.paths import (
    default_session_dir_path,
    find_most_recent_session,
    get_default_session_dir,
    session_file_name,
)
from pi_nb.session.types import FileEntry, LabelEntry, SessionEntry, SessionHeader

__all__ = [
    "SessionManager",
    "SessionTreeNode",
    "SessionTreeNodeDict",
]

_NEWLINES = re.compile(r"[\r\n]+")


class SessionTreeNodeDict(TypedDict):
    """:meth:`SessionTreeNode.to_dict`: Pi's ``SessionTreeNode`` JSON ``{entry, children, label?,
    labelTimestamp?}``."""

    entry: SessionEntry
    children: list[SessionTreeNodeDict]
    label: NotRequired[str]
    labelTimestamp: NotRequired[str]


def _node_dict(node: SessionTreeNode) -> SessionTreeNodeDict:
    """One node's dict, its children still to be filled in."""
    out: SessionTreeNodeDict = {"entry": node.entry, "children": []}
    if node.label is not None:
        out["label"] = node.label
    if node.label_timestamp is not None:
        out["labelTimestamp"] = node.label_timestamp
    return out


@dataclass(frozen=True)
class SessionTreeNode:
    """One node of :meth:`SessionManager.get_tree`: the entry, its children (oldest first) and the
    entry's resolved label, if any (Pi's ``SessionTreeNode``)."""

    entry: SessionEntry
    children: tuple[SessionTreeNode, ...] = field(default=())
    label: str | None = None
    label_timestamp: str | None = None

    def to_dict(self) -> SessionTreeNodeDict:
        """Pi's JSON shape ``{entry, children, label?, labelTimestamp?}`` (built without recursion,
        so a 100,000-entry linear session does not hit Python's recursion limit)."""
        root_out = _node_dict(self)
        stack: list[tuple[SessionTreeNode, SessionTreeNodeDict]] = [(self, root_out)]
        while stack:
            node, out = stack.pop()
            kids = out["children"]
            for child in node.children:
                child_out = _node_dict(child)
                kids.append(child_out)
                stack.append((child, child_out))
        return root_out

    def walk(self) -> Iterable[SessionTreeNode]:
        """This node and all below it, depth first in child order (iterative)."""
        stack: list[SessionTreeNode] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def _omit_none(value: Any) -> Any:
    """For fields whose Pi type has no ``null``: ``None`` behaves like ``undefined``."""
    return UNDEFINED if value is None else value


def _put(entry: dict[str, Any], key: str, value: Any) -> None:
    """Set ``entry[key]`` unless the value is ``undefined`` (on an entry being built, see ``_base``)."""
    if not isinstance(value, Undefined):
        entry[key] = value


def _as_dicts(entries: Sequence[FileEntry]) -> list[dict[str, Any]]:
    """The entry list for the C paths that map ``dict.get`` over it; the caller has checked that
    every entry is a plain ``dict`` (the manager's ``_plain``)."""
    return cast(list[dict[str, Any]], entries)


def _is_header_entry(value: object) -> TypeGuard[SessionHeader]:
    """A preloaded file entry that is taken for the header: a dict with ``type: "session"`` (its
    other fields are read as they are)."""
    return isinstance(value, dict) and value.get("type") == "session"


def _is_assistant_entry(entry: SessionEntry) -> bool:
    if entry.get("type") != "message":
        return False
    message = entry.get("message")
    return isinstance(message, Mapping) and message.get("role") == "assistant"


_SUMMARY_ROLES = ("compactionSummary", "branchSummary")


def _sort_by_timestamp(kids: list[SessionEntry]) -> list[SessionEntry]:
    """Pi's ``children.sort((a, b) => time(a) - time(b))``: stable, oldest first."""
    keys = [js_date_ms(k.get("timestamp", UNDEFINED)) for k in kids]
    if all(k == k for k in keys):
        order = sorted(range(len(kids)), key=keys.__getitem__)
    else:  # NaN in the comparator: compare as equal, exactly like the JS comparator does

        def cmp(a: int, b: int) -> int:
            return _ts_cmp(keys[a], keys[b])

        order = sorted(range(len(kids)), key=functools.cmp_to_key(cmp))
    return [kids[i] for i in order]


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _synchronized(
    method: Callable[Concatenate[SessionManager, _P], _R],
) -> Callable[Concatenate[SessionManager, _P], _R]:
    """Run a method under the manager's re-entrant lock (an agent thread may append while the
    notebook thread reads the tree or the context)."""

    @functools.wraps(method)
    def wrapper(self: SessionManager, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


def _ts_cmp(a: float, b: float) -> int:
    # Array.prototype.sort with (a, b) => a - b: NaN compares as "equal"
    d = a - b
    if d != d or d == 0:
        return 0
    return -1 if d < 0 else 1


class SessionManager:
    """A session: its header, its entry tree, the leaf, and (when persisted) its file.

    Make one with :meth:`create` (new session, persisted), :meth:`open` (an existing file),
    :meth:`continue_recent`, :meth:`in_memory` (no file) or :meth:`fork_from`.

    Entries are plain dicts with Pi's camelCase keys; the manager hands out the very dicts it holds
    (as Pi does), so treat them as read-only.

    The manager is safe to share between threads (one re-entrant lock around every change and
    every multi-step read); between processes the file lock of :mod:`pi_nb.session.jsonl` applies.

    Attributes:
        load_problems: lines of the file that were not used when it was loaded (empty for a clean
            file or a new session).
        backup_path: where the original file was kept when opening rewrote it (a migration), else
            ``None``.
    """

    def __init__(
        self,
        cwd: str,
        session_dir: str,
        session_file: str | None,
        persist: bool,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        preloaded: Sequence[FileEntry] | None = None,
        preloaded_file: SessionFileContents | None = None,
        preloaded_lazy: LazyEntries | None = None,
        strict: bool = False,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        fsync: bool = False,
        repair: bool = False,
    ) -> None:
        """Use the class methods; this mirrors Pi's private constructor."""
        self._lock = threading.RLock()
        self._cwd = resolve_path(cwd)
        self._session_dir = normalize_path(session_dir) if session_dir else session_dir
        self._persist = persist
        self._strict = strict
        self._lock_timeout = lock_timeout
        self._fsync = fsync
        self._session_id = ""
        self._session_file: str | None = None
        self._flushed = False
        # the entries as loaded or appended: a loaded entry is a JSON object of the file whose
        # fields are unchecked, so they are read with .get (see pi_nb.session.jsonl)
        self._header: SessionHeader | None = None
        self._file_entries: list[FileEntry] = []
        self._entries: list[SessionEntry] = []
        # keyed by each entry's id value (a hand-edited file may hold a non-string id)
        self._by_id: dict[Any, SessionEntry] = {}
        self._labels_by_id: dict[Any, str] = {}
        self._label_timestamps_by_id: dict[Any, str] = {}
        # the leaf's id; UNDEFINED (JavaScript's undefined) when the last entry of a file has no
        # id: the context is then built from the last entry and the next append has no parentId
        self._leaf_id: str | Undefined | None = None
        self._has_assistant = False
        self._repair = repair
        # where the loaded entries sit in the file (see _line_of_index)
        self._line_numbers: array[int] | None = None
        self._loaded_count = 0
        self._loaded_lines = 0
        # the root -> leaf path, kept while appends extend it (see _leaf_path)
        self._path_cache: tuple[Any, list[SessionEntry]] | None = None
        # lazy mode (a file opened with pi_nb.session.lazy): the entries are parsed when asked
        # for; _entries is then that LazyEntries, _by_id a LazyIndex over it, _file_entries a
        # FileEntriesView, and the leaf's path is kept as positions
        self._lazy: LazyEntries | None = None
        self._pos_cache: tuple[Any, list[int]] | None = None
        # every entry is a plain dict (set by _build_index; appended entries are dicts too)
        self._plain = True
        self.load_problems: list[LoadProblem] = []
        self.backup_path: str | None = None
        if persist and self._session_dir and not os.path.exists(self._session_dir):
            os.makedirs(self._session_dir, exist_ok=True)

        if session_file:
            self._set_session_file(session_file, preloaded_file, preloaded_lazy)
        elif preloaded_lazy is not None and preloaded_file is not None:
            self._load_lazy(cast(SessionHeader, preloaded_file.entries[0]), preloaded_lazy)
        elif preloaded:
            self._load_entries(list(preloaded), session_id=session_id, parent_session=parent_session)
        else:
            self.new_session(session_id=session_id, parent_session=parent_session)

    # ------------------------------------------------------------------------------------------
    # factories

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: str | None = None,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        fsync: bool = False,
    ) -> SessionManager:
        """A new persisted session for ``cwd`` (Pi's ``SessionManager.create``).

        ``session_dir`` defaults to ``{agent dir}/sessions/--<cwd>--/`` (created). The file name is
        ``<timestamp>_<session id>.jsonl``; the file appears with the first assistant message.
        ``session_id`` is a custom id (Pi's ``options.id``; checked by
        :func:`~pi_nb.session.ids.assert_valid_session_id`).
        """
        directory = normalize_path(session_dir) if session_dir else get_default_session_dir(cwd)
        return cls(
            cwd,
            directory,
            None,
            True,
            session_id=session_id,
            parent_session=parent_session,
            lock_timeout=lock_timeout,
            fsync=fsync,
        )

    @classmethod
    def open(
        cls,
        path: str,
        session_dir: str | None = None,
        cwd_override: str | None = None,
        *,
        strict: bool = False,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        fsync: bool = False,
        repair: bool = False,
    ) -> SessionManager:
        """Open a session file (Pi's ``SessionManager.open``).

        * missing file -> a new session that will be written to exactly this path;
        * empty file -> a fresh header is written into it;
        * non-empty file that is not a pi session -> :class:`~pi_nb.errors.InvalidSessionFileError`
          (``Session file is not a valid pi session: {path}``), the file untouched;
        * an old format (v1, v2) -> migrated to v3 and rewritten (original kept as ``.bak``);
        * a last line without ``\\n`` -> one is appended.

        The cwd is the header's (or ``cwd_override``); ``session_dir`` (for new and branched
        sessions) defaults to the file's directory. ``strict`` raises
        :class:`~pi_nb.errors.SessionFileCorruptError` when any line cannot be used.

        Where pi_nb stops earlier than Pi:

        * a path that is not a regular file (a FIFO, directory or device, or a symlink to one) ->
          :class:`~pi_nb.errors.SessionFileTypeError` naming it; nothing is read or replaced;
        * the leaf's ``parentId`` chain loops (a self-parent, a cycle, or a duplicate id that
          closes one; Pi hangs and runs out of memory on such a file) ->
          :class:`~pi_nb.errors.EntryCycleError` naming the file and the lines, before anything
          is written. ``repair=True`` opens it anyway: every link that closes a loop is set aside
          (the entry is treated as a root, in memory only; the file is not changed), so the leaf's
          path is the longest one without a repeat; each repair is listed in
          :attr:`load_problems`. Duplicate ids are listed there too (the later entry wins, as in
          Pi).
        """
        resolved = resolve_path(path)
        contents: SessionFileContents | None = None
        header: SessionHeader | None = None
        lazy: LazyEntries | None = None
        if os.path.exists(resolved):
            contents, lazy = read_session_file_lazy(resolved)
            if contents.valid:
                first = contents.entries[0]  # a valid file starts with its header
                if first["type"] == "session":
                    header = first
        if cwd_override is not None:
            cwd = cwd_override
        else:
            header_cwd = header.get("cwd") if header is not None else None
            cwd = header_cwd if isinstance(header_cwd, str) else os.getcwd()
        directory = normalize_path(session_dir) if session_dir else os.path.dirname(resolved)
        return cls(
            cwd,
            directory,
            resolved,
            True,
            preloaded_file=contents,
            preloaded_lazy=lazy,
            strict=strict,
            lock_timeout=lock_timeout,
            fsync=fsync,
            repair=repair,
        )

    @classmethod
    def continue_recent(
        cls,
        cwd: str,
        session_dir: str | None = None,
        *,
        strict: bool = False,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        fsync: bool = False,
    ) -> SessionManager:
        """The most recently modified session of ``cwd``, or a new one (Pi's ``continueRecent``).

        In a custom (flat) ``session_dir`` only sessions whose header cwd is ``cwd`` count.
        """
        directory = normalize_path(session_dir) if session_dir else get_default_session_dir(cwd)
        filter_cwd = session_dir is not None and directory != default_session_dir_path(cwd)
        most_recent = find_most_recent_session(directory, cwd if filter_cwd else None)
        return cls(
            cwd,
            directory,
            most_recent,
            True,
            strict=strict,
            lock_timeout=lock_timeout,
            fsync=fsync,
        )

    @classmethod
    def in_memory_from_file(cls, path: str) -> SessionManager:
        """A session file loaded into memory, never written back (for views, frames and replays).

        An old format is migrated in memory only and a torn last line is left as it is. Raises
        ``FileNotFoundError`` for a missing file and :class:`~pi_nb.errors.InvalidSessionFileError`
        for a file that is not a pi session (both name the path); special files are refused by
        :func:`~pi_nb.session.jsonl.read_session_file`.
        """
        contents, lazy = read_session_file_lazy(path)
        if not contents.exists:
            raise FileNotFoundError(errno.ENOENT, "no such session file", path)
        if not contents.valid:
            raise InvalidSessionFileError(f"not a pi session file: {path}")
        header = contents.entries[0]  # a valid file starts with its header
        header_cwd = header.get("cwd")
        cwd = header_cwd if isinstance(header_cwd, str) else None
        if lazy is not None:
            return cls(
                cwd if cwd is not None else os.getcwd(),
                "",
                None,
                False,
                preloaded_file=contents,
                preloaded_lazy=lazy,
            )
        return cls.in_memory(cwd, entries=contents.entries)

    @classmethod
    def in_memory(
        cls,
        cwd: str | None = None,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        entries: Sequence[FileEntry] | None = None,
    ) -> SessionManager:
        """A session that is never written (Pi's ``SessionManager.inMemory(cwd, options, entries)``).

        ``entries`` (file entries, header optional) preloads it: with a header the session takes
        its id and the entries are migrated in place; without one a new header is made for them.
        """
        return cls(
            cwd if cwd is not None else os.getcwd(),
            "",
            None,
            False,
            session_id=session_id,
            parent_session=parent_session,
            preloaded=entries,
        )

    @classmethod
    def fork_from(
        cls,
        source_path: str,
        target_cwd: str,
        session_dir: str | None = None,
        *,
        session_id: str | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        fsync: bool = False,
    ) -> SessionManager:
        """Copy a session (from any project) into a new session of ``target_cwd`` (Pi's ``forkFrom``).

        The new header has the target cwd and ``parentSession`` = the source file; every entry is
        copied. Unlike Pi, the source entries are migrated first (Pi copies v1/v2 entries under a
        v3 header, which leaves them without ids).
        """
        resolved_source = resolve_path(source_path)
        resolved_target = resolve_path(target_cwd)
        contents = read_session_file(resolved_source)
        if not contents.valid:
            raise SessionError(f"Cannot fork: source session file is empty or invalid: {resolved_source}")
        if not contents.ends_with_newline:
            ensure_trailing_newline(resolved_source, lock_timeout=lock_timeout)
        source_entries: list[FileEntry] = list(contents.entries)
        migrate_to_current_version(source_entries)
        directory = normalize_path(session_dir) if session_dir else get_default_session_dir(resolved_target)
        os.makedirs(directory, exist_ok=True)
        if session_id is not None:
            _ids.assert_valid_session_id(session_id)
        new_id = session_id if session_id is not None else _ids.create_session_id()
        timestamp = _ids.now_iso()
        new_file = os.path.join(directory, session_file_name(timestamp, new_id))
        header: SessionHeader = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": new_id,
            "timestamp": timestamp,
            "cwd": resolved_target,
            "parentSession": resolved_source,
        }
        data = serialize_entry(header) + b"".join(
            serialize_entry(e)
            for e in source_entries
            if not (isinstance(e, dict) and e.get("type") == "session")
        )
        create_file_exclusive(new_file, data)
        return cls(resolved_target, directory, new_file, True, lock_timeout=lock_timeout, fsync=fsync)

    # ------------------------------------------------------------------------------------------
    # loading

    @_synchronized
    def set_session_file(self, session_file: str) -> None:
        """Switch to another session file (Pi's ``setSessionFile``, used for resume)."""
        self._set_session_file(session_file, None)

    def _set_session_file(
        self, session_file: str, preloaded: SessionFileContents | None, lazy: LazyEntries | None = None
    ) -> None:
        self._session_file = resolve_path(session_file)
        self.load_problems = []
        self.backup_path = None
        if not os.path.exists(self._session_file):
            explicit = self._session_file
            self.new_session()
            self._session_file = explicit  # keep the path the caller asked for
            return
        if preloaded is None:
            preloaded, lazy = read_session_file_lazy(self._session_file)
        contents = preloaded
        self.load_problems = list(contents.problems)
        if self._strict and contents.problems:
            self._raise_corrupt(contents.problems)
        if not contents.valid:
            explicit = self._session_file
            if os.stat(explicit).st_size > 0:
                raise InvalidSessionFileError(f"Session file is not a valid {APP_NAME} session: {explicit}")
            self.new_session()
            self._session_file = explicit
            self._rewrite_file(backup=False)
            self._flushed = True
            return
        self._line_numbers = contents.line_numbers
        self._loaded_count = len(contents.entries) + (len(lazy) if lazy is not None else 0)
        self._loaded_lines = contents.line_count
        # index and migrate in memory, check the tree, and only then touch the file
        if lazy is not None:  # (a current-version file: nothing to migrate)
            needs_rewrite = self._load_lazy(cast(SessionHeader, contents.entries[0]), lazy)
        else:
            needs_rewrite = self._load_entries(contents.entries, checked=True, defer_rewrite=True)
        migrated = self._file_entries  # (a repair below replaces entries in memory only)
        structural = self._check_structure()
        self.load_problems.extend(structural)
        if self._strict and structural:
            self._raise_corrupt(structural)
        if needs_rewrite:
            data = b"".join(serialize_entry(e) for e in migrated)
            self.backup_path = rewrite_file_atomic(self._session_file, data, backup=True)
        if not contents.ends_with_newline:
            ensure_trailing_newline(self._session_file, lock_timeout=self._lock_timeout)
        self._flushed = True

    def _raise_corrupt(self, problems: Sequence[LoadProblem]) -> None:
        raise SessionFileCorruptError(
            f"Session file has {len(problems)} unusable line(s): {self._session_file}",
            [(p.line_number, p.reason) for p in problems],
        )

    # ------------------------------------------------------------------------------------------
    # tree checks: duplicate ids, parentId loops

    def _line_index(self) -> dict[int, int]:
        """``id(entry) -> file line`` for every entry (built only when a problem is reported)."""
        out: dict[int, int] = {}
        numbers = self._line_numbers
        for k, entry in enumerate(self._file_entries):
            if k < self._loaded_count:
                out[id(entry)] = k + 1 if numbers is None else numbers[k]
            else:  # appended since: one line each after what was loaded
                out[id(entry)] = self._loaded_lines + (k - self._loaded_count) + 1
        return out

    def _check_structure(self) -> list[LoadProblem]:
        """Duplicate ids (reported, the later entry wins as in Pi) and a looping leaf path (an
        error naming the lines, or with ``repair`` every loop broken and reported)."""
        problems: list[LoadProblem] = []
        entries = self._entries
        lines: dict[int, int] | None = None
        if len(self._by_id) != len(entries):
            lines = self._line_index()
            first: dict[Any, SessionEntry] = {}
            for entry in entries:
                eid = entry.get("id", UNDEFINED)
                if eid is None or isinstance(eid, Undefined):
                    continue
                try:
                    earlier = first.setdefault(eid, entry)
                except TypeError:
                    continue
                if earlier is not entry:
                    problems.append(
                        LoadProblem(
                            lines[id(entry)],
                            f"duplicate id {eid!r} (first on line {lines[id(earlier)]}): the later "
                            "entry is the one its id finds, as in Pi",
                            js_stringify(entry)[:120],
                        )
                    )
        if self._repair:  # every loop in the file, on the leaf's path or not
            problems.extend(self._break_loops())
            self._path_cache = None
        try:
            if self._lazy is not None:
                self._leaf_positions()  # (without parsing the path)
            else:
                self._leaf_path()
        except EntryCycleError as exc:
            raise self._cycle_error(exc) from None
        return problems

    def _loop_from(self, start: SessionEntry) -> list[SessionEntry]:
        """The entries of the loop that the ``parentId`` walk from ``start`` runs into."""
        seen: dict[int, int] = {}
        chain: list[SessionEntry] = []
        current: SessionEntry | None = start
        while current is not None and id(current) not in seen:
            seen[id(current)] = len(chain)
            chain.append(current)
            parent_id = current.get("parentId")
            current = _lookup(self._by_id, parent_id) if _truthy(parent_id) else None
        return chain[seen[id(current)] :] if current is not None else []

    def _cycle_error(self, exc: EntryCycleError, from_id: Any = UNDEFINED) -> EntryCycleError:
        """The same error, naming the file and the lines of the loop (the walk from ``from_id``,
        by default from the leaf)."""
        path = self._session_file if self._persist else None
        key = self._leaf_id if from_id is UNDEFINED else from_id
        leaf = _lookup(self._by_id, key) if _truthy(key) else None
        start = leaf if leaf is not None else (self._entries[-1] if self._entries else None)
        loop = self._loop_from(start) if start is not None else []
        if not loop or path is None:
            return exc
        where = self._line_index()
        lines = tuple(sorted(where[id(e)] for e in loop if id(e) in where))
        ids = ", ".join(repr(e.get("id")) for e in loop)
        return EntryCycleError(
            f"{path}: the parentId chain of the leaf loops through line(s) "
            f"{', '.join(map(str, lines))} (entries {ids}); Pi never finishes building a context "
            "on this file. SessionManager.open(..., repair=True) opens it on the longest path "
            "without the loop (the file is not changed)",
            path,
            lines,
        )

    def _break_loops(self) -> list[LoadProblem]:
        """``repair``: set aside every ``parentId`` link that closes a loop (that entry becomes a
        root, in memory only). The walks start at the leaf first, so its path is the longest one
        without a repeat."""
        by_id = self._by_id
        state: dict[int, int] = {}  # id(entry) -> 1 on the current walk, 2 done
        cuts: list[SessionEntry] = []
        starts: list[SessionEntry] = []
        leaf = by_id.get(self._leaf_id) if _truthy(self._leaf_id) else None
        if leaf is not None:
            starts.append(leaf)
        elif self._entries:
            starts.append(self._entries[-1])
        starts.extend(self._entries)
        for start in starts:
            if id(start) in state:
                continue
            chain: list[SessionEntry] = []
            current: SessionEntry | None = start
            while current is not None and id(current) not in state:
                state[id(current)] = 1
                chain.append(current)
                parent_id = current.get("parentId")
                parent = _lookup(by_id, parent_id) if _truthy(parent_id) else None
                if parent is not None and state.get(id(parent)) == 1:
                    cuts.append(current)  # current -> parent closes the loop
                    parent = None
                current = parent
            for entry in chain:
                state[id(entry)] = 2
        if not cuts:
            return []
        where = self._line_index()
        problems = []
        replaced: dict[int, SessionEntry] = {}
        for entry in cuts:
            parent_line = ""
            target = _lookup(by_id, entry.get("parentId"))
            if target is not None and id(target) in where:
                parent_line = f" (line {where[id(target)]})"
            problems.append(
                LoadProblem(
                    where.get(id(entry), 0),
                    f"repaired: entry {entry.get('id')!r} has parentId {entry.get('parentId')!r}{parent_line}, "
                    "which closes a loop; that link is set aside (the entry is treated as a root, in "
                    "memory only)",
                    js_stringify(entry)[:120],
                )
            )
            # the same entry with its parentId set aside (``{**e}``: a plain dict, as before)
            replaced[id(entry)] = cast(SessionEntry, {**entry, "parentId": None})
        self._file_entries = [replaced.get(id(e), e) for e in self._file_entries]
        self._build_index()
        return problems

    @_synchronized
    def new_session(self, session_id: str | None = None, parent_session: str | None = None) -> str | None:
        """Start a new, empty session in this manager (Pi's ``newSession``); returns its file path
        (``None`` in memory). Nothing is written yet."""
        if session_id is not None:
            _ids.assert_valid_session_id(session_id)
        self._session_id = session_id if session_id is not None else _ids.create_session_id()
        timestamp = _ids.now_iso()
        header: SessionHeader = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": self._session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        self._header = header
        self._file_entries = [header]
        self._entries = []
        self._by_id = {}
        self._labels_by_id = {}
        self._label_timestamps_by_id = {}
        self._leaf_id = None
        self._has_assistant = False
        self._flushed = False
        self._path_cache = None
        self._lazy = None
        self._pos_cache = None
        self._line_numbers = None
        self._loaded_count = self._loaded_lines = 0
        if self._persist:
            self._session_file = os.path.join(
                self._session_dir, session_file_name(timestamp, self._session_id)
            )
        return self._session_file

    def _load_entries(
        self,
        entries: list[FileEntry],
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        checked: bool = False,
        defer_rewrite: bool = False,
    ) -> bool:
        """``checked``: ``entries`` is a fresh list of dicts from :func:`read_session_file` (header
        first), so it is taken over as it is. ``defer_rewrite``: a migration is not written yet;
        the return value says whether it must be."""
        needs_rewrite = False
        header: SessionHeader | None
        if checked:
            header = cast(SessionHeader, entries[0])  # read_session_file checked it is the header
        else:
            # (the list may come from anywhere: non-dicts are refused below)
            header = next((e for e in entries if _is_header_entry(e)), None)
        if header is not None:
            self._file_entries = entries if checked else [e for e in entries if isinstance(e, dict)]
            if len(self._file_entries) != len(entries):
                raise InvalidEntryError("session entries must be objects (dicts)")
            self._header = header
            self._session_id = header.get("id")
            if migrate_to_current_version(self._file_entries):
                needs_rewrite = True
                if not defer_rewrite:
                    self._rewrite_file(backup=True)
        else:
            self.new_session(session_id=session_id, parent_session=parent_session)
            extra = [e for e in entries if isinstance(e, dict)]
            if len(extra) != len(entries):
                raise InvalidEntryError("session entries must be objects (dicts)")
            self._file_entries = self._file_entries + extra
        self._build_index()
        return needs_rewrite and defer_rewrite

    def _load_lazy(self, header: SessionHeader, lazy: LazyEntries) -> bool:
        """Take over a lazily read file (:func:`~pi_nb.session.lazy.read_session_file_lazy`: the
        header and the indexed entries after it; a current version, so nothing to migrate)."""
        self._header = header
        self._session_id = header.get("id")
        self._file_entries = cast(list[FileEntry], FileEntriesView(header, lazy))  # (read like the list)
        self._build_index()
        return False

    def _build_index(self) -> None:
        with gc_paused():
            if isinstance(self._file_entries, FileEntriesView):
                self._build_lazy_index(self._file_entries.entries)
            else:
                self._lazy = None
                self._pos_cache = None
                self._build_index_unpaused()

    def _build_lazy_index(self, lazy: LazyEntries) -> None:
        """:meth:`_build_index_unpaused` from the columns of the lazy entries (only the label
        entries are parsed)."""
        try:
            by_id = LazyIndex(lazy)
        except TypeError:
            for eid in lazy.ids:
                try:
                    hash(eid)
                except TypeError:
                    raise InvalidEntryError(f"session entry id must be a string, got {eid!r:.80}") from None
            raise  # pragma: no cover - unreachable
        labels: dict[Any, Any] = {}
        label_ts: dict[Any, Any] = {}
        for label_entry in lazy.materialize(lazy.positions_of_type("label")):
            target = label_entry.get("targetId")
            label = label_entry.get("label")
            try:
                if _js_truthy(label):
                    labels[target] = label
                    label_ts[target] = label_entry.get("timestamp")
                else:
                    labels.pop(target, None)
                    label_ts.pop(target, None)
            except TypeError:  # an unhashable targetId cannot name an entry
                pass
        self._plain = True
        self._lazy = lazy
        self._entries = cast(list[SessionEntry], lazy)  # a Sequence that appends like the list
        self._by_id = cast(dict[Any, SessionEntry], by_id)  # a Mapping with the dict's reads
        self._labels_by_id = labels
        self._label_timestamps_by_id = label_ts
        self._leaf_id = lazy.ids[-1] if len(lazy) else None
        self._has_assistant = "assistant" in compress(lazy.roles, map(eq, lazy.types, repeat("message")))
        self._path_cache = None
        self._pos_cache = None

    def _build_index_unpaused(self) -> None:
        file_entries = self._file_entries
        # (for plain dicts, dict.get is mapped over the list in C; no Python loop per entry)
        plain = set(map(type, file_entries)) <= {dict}
        self._plain = plain
        # every file entry but the header (what is not of type "session") is a SessionEntry: this
        # is where the loaded entries get that type (their fields unchecked, read with .get)
        entries: list[SessionEntry]
        if plain:
            types = list(map(dict.get, _as_dicts(file_entries), repeat("type")))
            entries = cast(
                list[SessionEntry], list(compress(file_entries, map(ne, types, repeat("session"))))
            )
        else:
            entries = cast(list[SessionEntry], [e for e in file_entries if e.get("type") != "session"])
        try:
            if plain:
                by_id: dict[Any, SessionEntry] = dict(
                    zip(
                        map(dict.get, _as_dicts(entries), repeat("id"), repeat(UNDEFINED)),
                        entries,
                        strict=True,
                    )
                )
            else:
                by_id = {e.get("id", UNDEFINED): e for e in entries}
        except TypeError:
            for entry in entries:
                eid = entry.get("id", UNDEFINED)
                try:
                    hash(eid)
                except TypeError:
                    raise InvalidEntryError(f"session entry id must be a string, got {eid!r:.80}") from None
            raise  # pragma: no cover - unreachable
        labels: dict[Any, Any] = {}
        label_ts: dict[Any, Any] = {}
        if plain:
            label_entries = list(compress(file_entries, map(eq, types, repeat("label"))))
        else:
            label_entries = [e for e in entries if e.get("type") == "label"]
        # (targetId and label as the file holds them: Pi keeps any truthy label)
        for label_entry in label_entries:
            target = label_entry.get("targetId")
            label = label_entry.get("label")
            try:
                if _js_truthy(label):
                    labels[target] = label
                    label_ts[target] = label_entry.get("timestamp")
                else:
                    labels.pop(target, None)
                    label_ts.pop(target, None)
            except TypeError:  # an unhashable targetId cannot name an entry
                pass
        has_assistant = any(_is_assistant_entry(e) for e in entries if e.get("type") == "message")
        self._entries = entries
        self._by_id = by_id
        self._labels_by_id = labels
        self._label_timestamps_by_id = label_ts
        # the last entry's id; an entry without id leaves the leaf undefined (Pi's rule)
        self._leaf_id = entries[-1].get("id", UNDEFINED) if entries else None
        self._has_assistant = has_assistant
        self._path_cache = None

    def _file_bytes(self, extra: Sequence[SessionEntry] = ()) -> bytes:
        return b"".join(serialize_entry(e) for e in self._file_entries) + b"".join(
            serialize_entry(e) for e in extra
        )

    def _rewrite_file(self, *, backup: bool) -> None:
        if not self._persist or not self._session_file:
            return
        made = rewrite_file_atomic(self._session_file, self._file_bytes(), backup=backup)
        if made is not None:
            self.backup_path = made

    def __repr__(self) -> str:
        where = self._session_file if self._persist else "in memory"
        return (
            f"<SessionManager {self._session_id} entries={len(self._entries)} leaf={self._leaf_id} "
            f"{where}{'' if self._flushed or not self._persist else ' (not written yet)'}>"
        )

    # ------------------------------------------------------------------------------------------
    # simple getters

    def is_persisted(self) -> bool:
        return self._persist

    # --- properties: the Python way to read what Pi's getters return (get_* stay, as Pi names them) ---

    @property
    def cwd(self) -> str:
        """The working directory the session belongs to (Pi's ``getCwd()``)."""
        return self._cwd

    @property
    def session_dir(self) -> str:
        """The directory holding the session file (Pi's ``getSessionDir()``)."""
        return self._session_dir

    @property
    def session_id(self) -> str:
        """The session's id, a UUIDv7 for new sessions (Pi's ``getSessionId()``)."""
        return self._session_id

    @property
    def session_file(self) -> str | None:
        """The session file's path; ``None`` for an in-memory session (Pi's ``getSessionFile()``)."""
        return self._session_file

    @property
    def header(self) -> SessionHeader | None:
        """The session header entry (Pi's ``getHeader()``)."""
        return self.get_header()

    @property
    def session_name(self) -> str | None:
        """The name from the latest ``session_info`` entry (Pi's ``getSessionName()``)."""
        return self.get_session_name()

    @property
    def leaf_id(self) -> str | None:
        """The current leaf's id (Pi's ``getLeafId()``; see :meth:`get_leaf_id`)."""
        return self.get_leaf_id()

    @property
    def leaf_entry(self) -> SessionEntry | None:
        """The current leaf entry (Pi's ``getLeafEntry()``)."""
        return self.get_leaf_entry()

    @property
    def entries(self) -> list[SessionEntry]:
        """Every entry of the session, in file order, without the header (Pi's ``getEntries()``)."""
        return self.get_entries()

    def get_cwd(self) -> str:
        return self._cwd

    def get_session_dir(self) -> str:
        return self._session_dir

    def uses_default_session_dir(self) -> bool:
        return self._session_dir == default_session_dir_path(self._cwd)

    def get_session_id(self) -> str:
        return self._session_id

    def get_session_file(self) -> str | None:
        return self._session_file

    def get_header(self) -> SessionHeader | None:
        """The header dict (``None`` only for a degenerate in-memory list without one)."""
        return self._header

    # ------------------------------------------------------------------------------------------
    # appending

    def _persist_entry(self, entry: SessionEntry) -> None:
        if not self._persist or not self._session_file:
            return
        try:
            has_assistant = self._has_assistant or _is_assistant_entry(entry)
            if not has_assistant:
                if self._flushed:
                    self._append_line(entry)
                return
            if not self._flushed:
                create_file_exclusive(self._session_file, self._file_bytes([entry]))
                self._flushed = True
            else:
                self._append_line(entry)
        except SessionError:
            raise
        except OSError as exc:
            raise self._write_error(exc, entry) from exc

    def _write_error(self, exc: OSError, entry: SessionEntry) -> SessionWriteError:
        reason = exc.strerror or str(exc)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            reason = "the disk is full"
        elif exc.errno == errno.EFBIG:
            reason = "the file is too large (file size limit reached)"
        elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            reason = f"permission denied ({exc.strerror})"
        return SessionWriteError(
            f"Could not write the {entry.get('type')} entry to the session file {self._session_file}: "
            f"{reason}. Nothing of it was kept, in the file or in memory; the session is as it "
            "was before the call",
            self._session_file or "",
            exc.errno,
        )

    def _append_line(self, entry: SessionEntry) -> None:
        assert self._session_file is not None
        data = serialize_entry(entry)
        try:
            append_to_file(self._session_file, data, lock_timeout=self._lock_timeout, fsync=self._fsync)
        except FileNotFoundError:
            # The file was deleted under us. Pi would re-create it holding only this line (no
            # header: not a session any more); write the whole session again instead.
            create_file_exclusive(self._session_file, self._file_bytes([entry]))

    def _append_entry(self, entry: SessionEntry) -> None:
        # Persist first: if writing fails, the session in memory stays as it was (the file holds
        # no part of the entry either: a partial line is cut back off), so the two agree.
        self._persist_entry(entry)
        lazy = self._lazy
        if lazy is not None:
            lazy.append(entry)  # (the FileEntriesView shows it too)
            cast(LazyIndex, self._by_id).add_last(entry["id"])
            self._append_lazy_path(entry)
            return
        self._file_entries.append(entry)
        self._entries.append(entry)
        self._by_id[entry["id"]] = entry
        cache = self._path_cache
        parent_id = entry.get("parentId")
        if cache is not None and _truthy(parent_id) and cache[0] == parent_id and cache[1]:
            cache[1].append(entry)  # the leaf's path, one entry longer
            self._path_cache = (entry["id"], cache[1])
        elif not _truthy(parent_id):
            self._path_cache = (entry["id"], [entry])
        else:
            self._path_cache = None
        self._leaf_id = entry["id"]
        if not self._has_assistant and _is_assistant_entry(entry):
            self._has_assistant = True

    def _append_lazy_path(self, entry: SessionEntry) -> None:
        """:meth:`_append_entry`'s bookkeeping of the leaf's path, on positions (lazy mode)."""
        assert self._lazy is not None
        new = len(self._lazy) - 1
        cache = self._pos_cache
        parent_id = entry.get("parentId")
        if cache is not None and _truthy(parent_id) and cache[0] == parent_id and cache[1]:
            cache[1].append(new)
            self._pos_cache = (entry["id"], cache[1])
        elif not _truthy(parent_id):
            self._pos_cache = (entry["id"], [new])
        else:
            self._pos_cache = None
        self._leaf_id = entry["id"]
        if not self._has_assistant and _is_assistant_entry(entry):
            self._has_assistant = True

    def _base(self, etype: str) -> dict[str, Any]:
        """The start of a new entry, ``{type, id, parentId, timestamp}``, for an ``append_*`` method to
        complete and hand to :meth:`_append_built`. It is built as a plain dict in Pi's key order
        because its ``parentId`` is left out when the leaf is undefined, which no entry TypedDict
        can say."""
        entry: dict[str, Any] = {"type": etype, "id": _ids.generate_id(self._by_id)}
        _put(entry, "parentId", self._leaf_id)  # undefined (a leaf without id): left out, as in Pi
        entry["timestamp"] = _ids.now_iso()
        return entry

    def _append_built(self, entry: dict[str, Any]) -> str:
        """Append an entry an ``append_*`` method has just built (see :meth:`_base`); its id."""
        built = cast(SessionEntry, entry)  # built by the caller with its type's keys, in Pi's order
        self._append_entry(built)
        return built["id"]

    @_synchronized
    def append_message(self, message: AgentMessage) -> str:
        """Append a message (``user``, ``assistant``, ``toolResult``, ``bashExecution``, ``custom``)
        as a child of the leaf; returns the new entry id.

        The message dict is stored as given (not copied). Compaction and branch summaries are not
        messages in the file: use :meth:`append_compaction` / :meth:`branch_with_summary`.
        """
        if not isinstance(message, Mapping):
            raise InvalidEntryError(f"message must be a dict, got {type(message).__name__}")
        if message.get("role") in _SUMMARY_ROLES:
            raise InvalidEntryError(
                f"a {message.get('role')} message is not appended as a message entry; "
                "use append_compaction() or branch_with_summary()"
            )
        entry = self._base("message")
        entry["message"] = message if isinstance(message, dict) else dict(message)
        return self._append_built(entry)

    @_synchronized
    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Append a ``thinking_level_change``; returns its id."""
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = thinking_level
        return self._append_built(entry)

    @_synchronized
    def append_model_change(self, provider: str, model_id: str) -> str:
        """Append a ``model_change`` (``provider``, ``modelId``); returns its id."""
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append_built(entry)

    @_synchronized
    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = UNDEFINED,
        from_hook: bool | Undefined | None = UNDEFINED,
        usage: Usage | Undefined | None = UNDEFINED,
    ) -> str:
        """Append a ``compaction`` entry; returns its id.

        Keys in Pi's order: ``summary, firstKeptEntryId, tokensBefore, details?, usage?, fromHook?``.
        """
        entry = self._base("compaction")
        entry["summary"] = summary
        entry["firstKeptEntryId"] = first_kept_entry_id
        entry["tokensBefore"] = tokens_before
        _put(entry, "details", details)
        _put(entry, "usage", _omit_none(usage))
        _put(entry, "fromHook", _omit_none(from_hook))
        return self._append_built(entry)

    @_synchronized
    def append_custom_entry(self, custom_type: str, data: Any = UNDEFINED) -> str:
        """Append a ``custom`` entry (extension state, never in the LLM context); returns its id.

        Pi writes it as ``type, customType, data?, id, parentId, timestamp``.
        """
        # (built like _base's entries, its common fields last; see _base for why a plain dict)
        entry: dict[str, Any] = {"type": "custom", "customType": custom_type}
        _put(entry, "data", data)
        entry["id"] = _ids.generate_id(self._by_id)
        _put(entry, "parentId", self._leaf_id)
        entry["timestamp"] = _ids.now_iso()
        return self._append_built(entry)

    @_synchronized
    def append_session_info(self, name: str) -> str:
        """Append a ``session_info`` entry naming the session; returns its id.

        Runs of ``\\r``/``\\n`` become one space and the name is trimmed; an empty name clears it.
        """
        if not isinstance(name, str):
            raise InvalidEntryError(f"session name must be a string, got {type(name).__name__}")
        from pi_nb.redaction import redact

        # a name is shown in listings and stored: a key typed into it is redacted (pi_nb.redaction)
        sanitized = redact(_js_trim(_NEWLINES.sub(" ", name)))
        entry = self._base("session_info")
        entry["name"] = sanitized
        return self._append_built(entry)

    @_synchronized
    def get_session_name(self) -> str | None:
        """The name from the latest ``session_info`` entry (``None`` if none, or if it was cleared)."""
        latest: SessionEntry | None
        if self._lazy is not None:
            latest = self._lazy.last_of_type("session_info")
        else:
            latest = next((e for e in reversed(self._entries) if e.get("type") == "session_info"), None)
        if latest is None:
            return None
        name = latest.get("name")
        trimmed = _js_trim(name) if isinstance(name, str) else None
        return trimmed or None

    @_synchronized
    def append_custom_message_entry(
        self,
        custom_type: str,
        content: str | Sequence[TextContent | ImageContent],
        display: bool,
        details: Any = UNDEFINED,
    ) -> str:
        """Append a ``custom_message`` entry (an extension message that *is* in the LLM context, as a
        user message); returns its id.

        Pi writes it as ``type, customType, content, display, details?, id, parentId, timestamp``.
        """
        # (built like _base's entries, its common fields last; see _base for why a plain dict)
        entry: dict[str, Any] = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content if isinstance(content, (str, list)) else list(content),
            "display": display,
        }
        _put(entry, "details", details)
        entry["id"] = _ids.generate_id(self._by_id)
        _put(entry, "parentId", self._leaf_id)
        entry["timestamp"] = _ids.now_iso()
        return self._append_built(entry)

    @_synchronized
    def append_label_change(self, target_id: str, label: str | Undefined | None = UNDEFINED) -> str:
        """Set (or, with no/empty label, clear) the label of an entry; returns the label entry's id.

        The label entry is appended like any other (it becomes the leaf). Unknown target ->
        :class:`~pi_nb.errors.EntryNotFoundError` (``Entry {id} not found``).
        """
        if target_id not in self._by_id:
            raise EntryNotFoundError(f"Entry {target_id} not found")
        label = _omit_none(label)
        if isinstance(label, str):
            from pi_nb.redaction import redact

            label = redact(label)  # stored and shown: a key typed into a label is redacted
        entry = self._base("label")
        entry["targetId"] = target_id
        _put(entry, "label", label)
        new_id = self._append_built(entry)
        if label:
            self._labels_by_id[target_id] = cast(str, label)
            self._label_timestamps_by_id[target_id] = entry["timestamp"]
        else:
            self._labels_by_id.pop(target_id, None)
            self._label_timestamps_by_id.pop(target_id, None)
        return new_id

    def get_label(self, entry_id: str) -> str | None:
        """The current label of an entry, if any."""
        return self._labels_by_id.get(entry_id)

    # ------------------------------------------------------------------------------------------
    # tree traversal

    def get_leaf_id(self) -> str | None:
        """The leaf's id; ``None`` before the first entry, and also when the last entry of a loaded
        file has no id (Pi's leaf is then ``undefined``: the context is built from the last entry
        and the next entry is appended without a ``parentId``)."""
        leaf = self._leaf_id
        return None if isinstance(leaf, Undefined) else leaf

    @_synchronized
    def get_leaf_entry(self) -> SessionEntry | None:
        return self._by_id.get(self._leaf_id) if self._leaf_id else None

    def _leaf_path(self) -> list[SessionEntry]:
        """The root -> leaf path (Pi's ``buildSessionPath`` for the current leaf), kept between
        calls: an append extends it by one entry instead of walking the whole path again. Treat
        the list as read-only (copy it before handing it out)."""
        if self._lazy is not None:
            return self._lazy.materialize(self._leaf_positions())
        cache = self._path_cache
        leaf = self._leaf_id
        if cache is not None and (cache[0] is leaf or cache[0] == leaf):
            return cache[1]
        path = _build_session_path(self._entries, leaf, self._by_id)
        self._path_cache = (leaf, path)
        return path

    def _leaf_positions(self) -> list[int]:
        """Lazy mode: the positions of the root -> leaf path, kept like :meth:`_leaf_path`."""
        assert self._lazy is not None
        cache = self._pos_cache
        leaf = self._leaf_id
        if cache is not None and (cache[0] is leaf or cache[0] == leaf):
            return cache[1]
        path = leaf_positions(self._lazy, cast(LazyIndex, self._by_id), leaf)
        self._pos_cache = (leaf, path)
        return path

    def _checked_leaf_positions(self) -> list[int]:
        try:
            return self._leaf_positions()
        except EntryCycleError as exc:
            raise self._cycle_error(exc) from None

    def _checked_leaf_path(self) -> list[SessionEntry]:
        try:
            return self._leaf_path()
        except EntryCycleError as exc:
            raise self._cycle_error(exc) from None

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        """The entry with this id, or ``None`` (Pi returns ``undefined``)."""
        try:
            return self._by_id.get(entry_id)
        except TypeError:
            return None

    @_synchronized
    def get_children(self, parent_id: str) -> list[SessionEntry]:
        """Direct children of an entry, in file order."""
        if self._lazy is not None:
            lazy = self._lazy
            parents = lazy.parent_ids
            return lazy.materialize(
                [
                    pos
                    for pos in cast(LazyIndex, self._by_id).positions.values()
                    if (None if isinstance(parents[pos], Undefined) else parents[pos]) == parent_id
                ]
            )
        return [e for e in self._by_id.values() if e.get("parentId") == parent_id]

    @_synchronized
    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """Entries from the root to ``from_id`` (default: the leaf), following ``parentId``; the
        walk stops at a missing parent. ``[]`` for an unknown id or an empty leaf."""
        start = from_id if from_id is not None else self._leaf_id
        if start is self._leaf_id and _truthy(start) and start in self._by_id:
            return list(self._checked_leaf_path())
        try:
            return get_branch_entries(self._entries, start, self._by_id)
        except EntryCycleError as exc:
            raise self._cycle_error(exc, start) from None

    def lazy_entries(self) -> LazyEntries | None:
        """The :class:`~pi_nb.session.lazy.LazyEntries` behind :meth:`get_entries` when the file was
        indexed lazily (``None`` otherwise): its columns (ids, parent ids, types, roles) read
        without parsing, its positions are those of :meth:`get_entries`."""
        return self._lazy

    @_synchronized
    def branch_positions(self) -> list[int] | None:
        """Lazy mode: the positions (in :meth:`get_entries`) of :meth:`get_branch` ``()``, without
        parsing the branch; ``None`` when the entries are not lazy. Raises as ``get_branch``."""
        if self._lazy is None:
            return None
        start = self._leaf_id
        if _truthy(start) and start in self._by_id:
            return list(self._checked_leaf_positions())
        return []

    @_synchronized
    def context_entry_positions(self) -> list[int] | None:
        """Lazy mode: the positions of :meth:`build_context_entries` (only a compaction on the path
        is parsed); ``None`` when the entries are not lazy. Raises as ``build_context_entries``."""
        if self._lazy is None:
            return None
        return list(context_positions(self._lazy, self._checked_leaf_positions()))

    @_synchronized
    def build_context_entries(self) -> list[SessionEntry]:
        """The compaction-aware entries behind :meth:`build_session_context`."""
        with gc_paused():
            if self._lazy is not None:
                positions = self._checked_leaf_positions()
                return self._lazy.materialize(context_positions(self._lazy, positions))
            path = self._checked_leaf_path()
            out = context_entries_from_path(path, True if self._plain else None)
            return list(out) if out is path else out

    @_synchronized
    def build_session_context(self) -> SessionContext:
        """What the LLM sees at the current leaf: messages, thinking level, model."""
        with gc_paused():  # builds one dict per message; see jsonl.gc_paused
            if self._lazy is not None:
                found = context_from_positions(self._lazy, self._checked_leaf_positions())
                if found is not None:
                    return found
            return context_from_path(self._checked_leaf_path(), True if self._plain else None)

    @_synchronized
    def get_entries(self) -> list[SessionEntry]:
        """Every entry except the header, in file order (a new list; the dicts are shared)."""
        return list(self._entries)

    @_synchronized
    def get_file_entries(self) -> list[FileEntry]:
        """Header and entries, as they are (or would be) in the file."""
        return list(self._file_entries)

    @_synchronized
    def get_tree(self) -> list[SessionTreeNode]:
        """The session as a forest: roots are entries whose parent is null, themselves, or missing.

        Children are sorted by timestamp, oldest first (stable); nodes carry resolved labels.
        """
        with gc_paused():
            return self._get_tree()

    def _get_tree(self) -> list[SessionTreeNode]:
        entries = self._entries
        children_of: dict[int, list[SessionEntry]] = {}
        node_entry: dict[Any, SessionEntry] = {}
        for entry in entries:
            try:
                node_entry[entry.get("id")] = entry
            except TypeError:
                continue
        roots: list[SessionEntry] = []
        for entry in entries:
            eid = entry.get("id")
            me = node_entry.get(eid, entry)
            parent_id = entry.get("parentId", UNDEFINED)
            if parent_id is None or parent_id == eid:
                roots.append(me)
                continue
            parent = None
            if not isinstance(parent_id, Undefined):
                try:
                    parent = node_entry.get(parent_id)
                except TypeError:
                    parent = None
            if parent is not None:
                children_of.setdefault(id(parent), []).append(me)
            else:
                roots.append(me)

        for kids in children_of.values():
            if len(kids) > 1:
                kids[:] = _sort_by_timestamp(kids)

        # build frozen nodes bottom-up without recursion
        built: dict[int, SessionTreeNode] = {}
        labels = self._labels_by_id
        label_ts = self._label_timestamps_by_id
        visiting: set[int] = set()
        for root in roots:
            stack: list[tuple[SessionEntry, bool]] = [(root, False)]
            while stack:
                entry, expanded = stack.pop()
                key = id(entry)
                if key in built:
                    continue
                kids = children_of.get(key, [])
                if not expanded:
                    if key in visiting:
                        continue  # a parentId cycle: Pi's tree has no root for it either
                    visiting.add(key)
                    stack.append((entry, True))
                    stack.extend((k, False) for k in reversed(kids) if id(k) not in built)
                    continue
                eid = entry.get("id")
                try:
                    label = labels.get(eid)
                    lts = label_ts.get(eid)
                except TypeError:
                    label = lts = None
                built[key] = SessionTreeNode(
                    entry=entry,
                    children=tuple(built[id(k)] for k in kids if id(k) in built),
                    label=label,
                    label_timestamp=lts,
                )
        return [built[id(r)] for r in roots if id(r) in built]

    # ------------------------------------------------------------------------------------------
    # branching

    @_synchronized
    def branch(self, branch_from_id: str) -> None:
        """Move the leaf to an earlier entry; the next append starts a new branch there."""
        if branch_from_id not in self._by_id:
            raise EntryNotFoundError(f"Entry {branch_from_id} not found")
        self._leaf_id = branch_from_id

    @_synchronized
    def reset_leaf(self) -> None:
        """Move the leaf before the first entry: the next append is a new root (``parentId: null``)."""
        self._leaf_id = None

    @_synchronized
    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = UNDEFINED,
        from_hook: bool | Undefined | None = UNDEFINED,
        usage: Usage | Undefined | None = UNDEFINED,
    ) -> str:
        """Branch to ``branch_from_id`` (``None``: a new root) and append a ``branch_summary`` of the
        path being left; returns its id.

        Its ``fromId`` is the leaf *before* the call (``"root"`` when there was none) -- Pi 0.85's
        rule (earlier versions stored the target). Keys: ``fromId, summary, details?, usage?,
        fromHook?``.
        """
        if branch_from_id is not None and branch_from_id not in self._by_id:
            raise EntryNotFoundError(f"Entry {branch_from_id} not found")
        from_id = (
            self._leaf_id
            if self._leaf_id is not None and not isinstance(self._leaf_id, Undefined)
            else "root"
        )
        previous_leaf = self._leaf_id
        self._leaf_id = branch_from_id
        entry = self._base("branch_summary")
        entry["fromId"] = from_id
        entry["summary"] = summary
        _put(entry, "details", details)
        _put(entry, "usage", _omit_none(usage))
        _put(entry, "fromHook", _omit_none(from_hook))
        try:
            return self._append_built(entry)
        except BaseException:
            self._leaf_id = previous_leaf
            raise

    @_synchronized
    def create_branched_session(self, leaf_id: str) -> str | None:
        """Replace this session by a new one holding only the root -> ``leaf_id`` path.

        The new session gets a new id and file (``parentSession`` = the old file); label entries on
        the path are dropped and the path re-chained around them (a compaction whose
        ``firstKeptEntryId`` was a dropped label points at the next kept entry), then the labels
        of the kept entries are re-appended at the end. The file is written now if the path has
        an assistant message, else with the first one (Pi's persistence rule). Returns the new
        file path (``None`` in memory).
        """
        previous_file = self._session_file
        path = self.get_branch(leaf_id)
        if not path:
            raise EntryNotFoundError(f"Entry {leaf_id} not found")

        path_without_labels: list[SessionEntry] = []
        # (ids as the file holds them: normally strings, anything in a hand-edited file)
        replacement_by_label_id: dict[Any, Any] = {}
        pending_label_ids: list[Any] = []
        path_parent_id: Any = None
        for entry in path:
            if entry.get("type") == "label":
                pending_label_ids.append(entry.get("id"))
                continue
            for label_id in pending_label_ids:
                replacement_by_label_id[label_id] = entry.get("id")
            pending_label_ids.clear()
            # the same entry, re-chained (``{**e}``: a plain dict with the entry's keys and order)
            copy = cast(SessionEntry, {**entry, "parentId": path_parent_id})
            if "type" in copy and copy["type"] == "compaction":
                first_kept = entry.get("firstKeptEntryId", UNDEFINED)
                try:
                    replacement = replacement_by_label_id.get(first_kept, UNDEFINED)
                except TypeError:
                    replacement = UNDEFINED
                if replacement is not UNDEFINED:
                    copy["firstKeptEntryId"] = replacement
            path_without_labels.append(copy)
            path_parent_id = entry.get("id")

        new_session_id = _ids.create_session_id()
        timestamp = _ids.now_iso()
        new_file = os.path.join(self._session_dir, session_file_name(timestamp, new_session_id))
        header: SessionHeader = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": new_session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if self._persist and previous_file is not None:
            header["parentSession"] = previous_file

        path_entry_ids = {e.get("id") for e in path_without_labels}
        labels_to_write = [
            (target, label, self._label_timestamps_by_id[target])
            for target, label in self._labels_by_id.items()
            if target in path_entry_ids
        ]
        parent_id: Any = path_without_labels[-1].get("id") if path_without_labels else None
        parent_id = parent_id or None
        label_entries: list[LabelEntry] = []
        for target, label, label_timestamp in labels_to_write:
            label_entry: LabelEntry = {
                "type": "label",
                "id": _ids.generate_id(set(path_entry_ids)),
                "parentId": parent_id,
                "timestamp": label_timestamp,
                "targetId": target,
                "label": label,
            }
            path_entry_ids.add(label_entry["id"])
            label_entries.append(label_entry)
            parent_id = label_entry["id"]

        self._header = header
        self._file_entries = [header, *path_without_labels, *label_entries]
        self._session_id = new_session_id
        if self._persist:
            self._session_file = new_file
        self._build_index()
        if not self._persist:
            return None
        self._flushed = False
        if self._has_assistant:
            try:
                create_file_exclusive(new_file, self._file_bytes())
            except SessionError:
                raise
            except OSError as exc:
                # the new session stays in memory, unwritten (no partial file: the write is
                # atomic); the next append writes it whole, as for a session not yet flushed
                raise SessionWriteError(
                    f"Could not write the branched session file {new_file}: {exc.strerror or exc}. "
                    "The branched session is in memory and is written whole with its next entry; "
                    f"the previous file {previous_file} is unchanged",
                    new_file,
                    exc.errno,
                ) from exc
            self._flushed = True
        return new_file
