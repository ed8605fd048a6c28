"""A session file that another process is writing, read as it grows.

:class:`SessionTail` keeps an index of the file's entries and, on each :meth:`SessionTail.poll`,
reads only the bytes appended since the last one. The new complete lines extend a
:class:`~pi_nb.session.lazy.LazyEntries` index (id, parentId, type, message.role and the line's
byte span, one ``msgspec`` pass per line); an entry is parsed the first time a view asks for it
(then kept), so a refresh costs what is new, not what the file already held. Lines the index does
not take (malformed, not an object, a ``session`` line, ...) are parsed at once as before. A last line without its newline yet (the
writer is in the middle of it) is kept aside and parsed once it is complete, so a torn line is
never lost nor reported as corrupt. A file that shrank or was replaced (another inode, other first
bytes) is read again from the start.

It answers the read-only questions the tree and budget models ask of a session (entries, leaf,
labels, name, branch, context entries), so it can stand where a
:class:`~pi_nb.session.manager.SessionManager` would, without taking the file's lock or ever
writing to it.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import Any, cast

from pi_nb._fs import file_kind, open_regular
from pi_nb._js import Undefined, js_truthy
from pi_nb.errors import NotebookError
from pi_nb.session.context import build_context_entries, context_entries_from_path, get_branch_entries
from pi_nb.session.jsonl import parse_session_entries
from pi_nb.session.lazy import EntriesView, LazyEntries, LazyIndex
from pi_nb.session.types import SessionEntry, SessionHeader

__all__ = ["SessionTail"]

_PROBE = 256  # bytes compared to notice that the file was replaced by another one


def _parse_entry(raw: bytes) -> Any:
    """A line the index took, parsed as the eager reader parses it (``parse_session_entries`` on
    the line decoded with replacement); raises ValueError when it no longer parses."""
    parsed = parse_session_entries(raw.decode("utf-8", "replace"))
    if not parsed:
        raise ValueError("not JSON")
    return parsed[0]


def _refusal(path: str, kind: str) -> NotebookError:
    return NotebookError(f"{path} is {kind}, not a session file: not read")


class SessionTail:
    """The entries of a growing session file (see the module docstring).

    Attributes:
        bytes_read: how many bytes of the file were read in total (a measure that only new
            bytes are read).
        resets: how many times the file was read again from the start (shrunk or replaced).
        problems: lines that did not parse (line number, first characters); skipped like Pi does.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:  # the writer may not have created it yet
            pass
        else:
            if not stat.S_ISREG(mode):
                raise _refusal(self.path, file_kind(mode))
        self._lock = threading.RLock()
        self.bytes_read = 0
        self.resets = 0
        self.problems: list[tuple[int, str]] = []
        self._reset_state()

    def _reset_state(self) -> None:
        self._offset = 0
        self._pending = b""
        self._line_number = 0
        self._inode: tuple[int, int] | None = None
        self._probe = b""
        # entries are the file's JSON objects, their fields unchecked (read with .get)
        self.header: SessionHeader | None = None
        self._entries: LazyEntries | None = None  # (made at the first read of this file)
        self._base = 0  # byte offset in the file of the first byte of the pending buffer
        self._by_id: dict[Any, int] = {}  # id value the file holds -> position (the last wins)
        self._labels: dict[Any, str] = {}
        self._leaf: str | None = None
        self._name: str | None = None
        # the positions of the root -> leaf path, kept while entries are appended at the leaf
        self._path: list[int] | None = None

    # -- reading ----------------------------------------------------------------------------

    def poll(self) -> list[SessionEntry]:
        """Read what was appended since the last call; returns the new entries (header excluded).

        A missing file is not an error (the writer may not have created it yet): nothing is new.
        """
        with self._lock:
            try:
                # the kind check of every reader: a FIFO swapped in for the file would block
                # this read (and the thread waiting for the lock) forever
                f = open_regular(self.path, refuse=_refusal)
            except FileNotFoundError:
                return []
            with f:
                st = os.fstat(f.fileno())
                inode = (st.st_dev, st.st_ino)
                replaced = self._inode is not None and inode != self._inode
                if not replaced and self._probe:
                    f.seek(0)
                    replaced = f.read(len(self._probe)) != self._probe
                if replaced or st.st_size < self._offset:
                    self.resets += 1
                    self._reset_state()
                self._inode = inode
                if st.st_size == self._offset:
                    return []
                if self._entries is None:
                    # entries are read back with pread from this descriptor (same inode as read
                    # here; a replaced file resets the state and gets a new one)
                    self._entries = LazyEntries(
                        self.path, os.dup(f.fileno()), keep_open=True, parse=_parse_entry
                    )
                f.seek(self._offset)
                data = f.read(st.st_size - self._offset)
            self.bytes_read += len(data)
            if len(self._probe) < _PROBE:
                start = self._offset
                if start < _PROBE:
                    self._probe = (self._probe + data[: _PROBE - start])[:_PROBE]
            self._offset += len(data)
            buf = self._pending + data
            cut = buf.rfind(b"\n")
            if cut < 0:
                self._pending = buf
                return []
            complete, self._pending = buf[: cut + 1], buf[cut + 1 :]
            base = self._base
            self._base += len(complete)
            return self._add_lines(complete, base)

    def _add_lines(self, chunk: bytes, base: int) -> list[SessionEntry]:
        lazy = self._entries
        assert lazy is not None
        first = len(lazy)
        start = base
        for raw in chunk.split(b"\n")[:-1]:
            self._line_number += 1
            line_start = start
            start += len(raw) + 1
            if lazy.index_line(line_start, raw):
                self._add_indexed()
                continue
            text = raw.decode("utf-8", "replace")
            if not text.strip():
                continue
            parsed = parse_session_entries(text)
            if not parsed or not isinstance(parsed[0], dict):
                self.problems.append((self._line_number, text[:80]))
                continue
            # checked just above to be a JSON object: the header or an entry, its fields unchecked
            value: dict[str, Any] = parsed[0]
            if value.get("type") == "session":
                if self.header is None:
                    self.header = cast(SessionHeader, value)
                continue
            lazy.append(value)
            self._add_indexed()
        return cast(list[SessionEntry], EntriesView(lazy, first, len(lazy)))

    def _add_indexed(self) -> None:
        """Take in the entry just added to the index: its id, and the labels and name (only
        ``label`` and ``session_info`` entries are parsed here)."""
        lazy = self._entries
        assert lazy is not None
        pos = len(lazy) - 1
        eid = lazy.ids[pos]
        if isinstance(eid, Undefined):
            eid = None  # (entry.get("id") of an entry without one)
        try:
            known = eid in self._by_id
        except TypeError:
            return
        self._keep_path(pos, eid, known)
        self._by_id[eid] = pos
        self._leaf = eid if isinstance(eid, str) else self._leaf
        etype = lazy.types[pos]
        if etype != "label" and etype != "session_info":
            return
        entry = lazy[pos]
        if etype == "label":
            target, label = entry.get("targetId"), entry.get("label")
            try:
                if js_truthy(label):
                    self._labels[target] = str(label)
                else:
                    self._labels.pop(target, None)
            except TypeError:
                pass
        elif etype == "session_info":
            name = entry.get("name")
            self._name = name.strip() or None if isinstance(name, str) else None

    def _keep_path(self, pos: int, eid: Any, known: bool) -> None:
        """Before the entry at ``pos`` (id ``eid``, ``known``: an id already indexed) is indexed:
        extend the kept leaf path by it when it continues the leaf, else drop the path when the
        new key could change it (the walk is then done again when asked)."""
        path = self._path
        if path is None:
            return
        lazy = self._entries
        assert lazy is not None
        if known or eid == lazy.parent_ids[path[0]]:
            self._path = None  # (an id replaced, or the root's missing parent appears)
        elif isinstance(eid, str):
            parent = lazy.parent_ids[pos]
            if isinstance(parent, str) and parent == self._leaf and parent != eid:
                path.append(pos)
            else:
                self._path = None

    def _leaf_path(self) -> list[int] | None:
        """The positions of the branch of the leaf (``None`` without a leaf in the index)."""
        leaf = self._leaf
        if not leaf or leaf not in self._by_id or self._entries is None:
            return None
        if self._path is None:
            index = self._index()
            branch = get_branch_entries(EntriesView(self._entries), leaf, index)
            self._path = [self._by_id[e.get("id")] for e in branch]
        return self._path

    @property
    def offset(self) -> int:
        """Bytes of the file consumed (a torn last line counts once it is complete)."""
        return self._offset - len(self._pending)

    @property
    def torn(self) -> bool:
        """Whether the file currently ends in the middle of a line."""
        return bool(self._pending)

    # -- the read-only session protocol -------------------------------------------------------

    def get_entries(self) -> list[SessionEntry]:
        """The entries read so far (a snapshot: a sequence that parses an entry when read)."""
        with self._lock:
            return cast(list[SessionEntry], EntriesView(self._entries))

    def _index(self) -> LazyIndex | None:
        if self._entries is None:
            return None
        return LazyIndex(self._entries, self._by_id)

    def get_leaf_id(self) -> str | None:
        return self._leaf

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        try:
            pos = self._by_id.get(entry_id)
        except TypeError:
            return None
        return None if pos is None or self._entries is None else self._entries[pos]

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def get_session_name(self) -> str | None:
        return self._name

    def get_cwd(self) -> str:
        cwd = self.header.get("cwd") if self.header else None
        return cwd if isinstance(cwd, str) else os.getcwd()

    def get_header(self) -> SessionHeader | None:
        return self.header

    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        with self._lock:
            if from_id is None or from_id == self._leaf:
                path = self._leaf_path()
                if path is not None:
                    assert self._entries is not None
                    return self._entries.materialize(path)
            index = self._index()
            if index is None:
                return []
            return list(get_branch_entries(EntriesView(self._entries), from_id or self._leaf, index))

    def build_context_entries(self) -> list[SessionEntry]:
        with self._lock:
            path = self._leaf_path()
            if path is not None:
                assert self._entries is not None
                return list(context_entries_from_path(self._entries.materialize(path)))
            index = self._index()
            if index is None:
                return []
            return list(build_context_entries(EntriesView(self._entries), self._leaf, index))
