"""Lazy session entries: a session file indexed in one pass, its entries parsed when asked for.

Opening a large session used to parse every line into dicts (most of the time and memory of an
open), although the context of a long session holds a few thousand of its entries. Here the file
is read once, block by block, and each line goes through ``msgspec`` with a struct of the few
fields the session tree needs (``id``, ``parentId``, ``type``, ``message.role``): a C pass that
checks the whole line is JSON but builds nothing else. What is kept per entry is that index and
the line's byte span; the entry itself is parsed (by exactly the parser
:func:`~pi_nb.session.jsonl.read_session_file` uses: orjson, then the ``JSON.parse`` emulation
where orjson refuses) the first time something asks for it, and cached.

Exactness: a line the struct pass does not accept (malformed JSON, an ``id`` that is not a string,
a ``message`` that is not an object, a lone surrogate escape, invalid UTF-8 in a field of the
struct, a line that might nest deeply...) takes the eager path of ``read_session_file`` at once,
so problems, line numbers and recovery are that function's. ``msgspec`` rejects everything
``JSON.parse`` rejects (NaN, trailing commas, control characters in strings, a BOM...), so a line
it accepts is one ``JSON.parse`` accepts too; ``tests/test_lazy_sessions.py`` compares the lazy and
the eager load on every fixture and on random files.

The file: its descriptor stays open (read-only) while some entry is not parsed yet; entries are
read back with ``pread`` (consecutive entries in one read). Pi's semantics is a snapshot at open:
appending (Pi's and pi_nb's only write) keeps every span valid, and a file replaced by a rename
keeps its old content behind the open descriptor. A file rewritten in place is detected when an
entry read back no longer has the id the index holds
(:class:`~pi_nb.errors.SessionError` naming the file).
"""

from __future__ import annotations

import importlib
import io
import os
import threading
import weakref
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import accumulate, compress, repeat
from operator import add, attrgetter, eq
from typing import Any, cast, overload

from pi_nb._js import UNDEFINED, Undefined
from pi_nb._js import js_truthy as _truthy
from pi_nb.errors import EntryCycleError, SessionError
from pi_nb.session import jsonl as _jsonl
from pi_nb.session.context import (
    SessionContext,
    SessionContextModel,
    _last_index,
    _model,
    _strict_eq,
    context_messages,
)
from pi_nb.session.jsonl import (
    _DEEP,
    _JSON_WS,
    _MAX_FAST_OPENERS,
    _SCAN_ONCE,
    LoadProblem,
    SessionFileContents,
    _first_value,
    _is_header,
    _js_blank,
    _json_parse,
    _LineReader,
    _orjson_loads,
    _problem,
    _shallow,
    gc_paused,
)
from pi_nb.session.migrations import CURRENT_SESSION_VERSION, _js_number
from pi_nb.session.types import FileEntry, SessionEntry, SessionHeader

__all__ = ["EntriesView", "LazyEntries", "LazyIndex", "entries_parsed", "read_session_file_lazy"]

_msgspec: Any
try:
    _msgspec = importlib.import_module("msgspec")
except ImportError:  # pragma: no cover - exercised where msgspec is missing: eager loading
    _msgspec = None

NOT_AN_OBJECT: Any = object()
"""The ``roles`` value of a ``message`` entry whose ``message`` is not a JSON object."""

_NOT_OPENERS = bytes(c for c in range(256) if c not in b"[{")
_MAX_READ = 8 << 20  # bytes read back in one pread when materialising a run of entries


_parsed_total = 0


def entries_parsed() -> int:
    """How many entries every :class:`LazyEntries` of this process parsed so far (a counter for
    tests and benchmarks: that an operation parses only the entries it needs)."""
    return _parsed_total


def _count_parsed(n: int) -> None:
    global _parsed_total
    _parsed_total += n


def _make_decoder() -> Callable[[bytes], Any] | None:
    if _msgspec is None:  # pragma: no cover
        return None
    unset = _msgspec.UNSET
    unset_type = _msgspec.UnsetType
    message = _msgspec.defstruct("_Message", [("role", Any, None)], gc=False)
    stub = _msgspec.defstruct(
        "_Stub",
        [
            ("id", str | unset_type, unset),
            ("parentId", str | unset_type | None, unset),
            ("type", str | unset_type, unset),
            ("message", message | unset_type, unset),
        ],
        gc=False,
    )
    decode: Callable[[bytes], Any] = _msgspec.json.Decoder(stub).decode
    return decode


_stub_decode = _make_decoder()
_GET_ID = attrgetter("id")
_GET_PARENT = attrgetter("parentId")
_GET_TYPE = attrgetter("type")
_GET_MESSAGE = attrgetter("message")
_UNSET: Any = getattr(_msgspec, "UNSET", object())
_ERRORS: tuple[type[Exception], ...] = (
    (_msgspec.DecodeError, _msgspec.ValidationError) if _msgspec is not None else (ValueError,)
)


def _parse_line(raw: bytes) -> Any:
    """One line as read_session_file parses a line that starts with ``{`` (orjson, else the C
    scanner of json, then the exact ``JSON.parse`` emulation). Raises ValueError/RecursionError."""
    fast = _orjson_loads
    if len(raw) >= _DEEP and not _shallow(raw):
        fast = None  # (read_session_file's rule: such a line goes to the json module's parsers)
    if fast is not None:
        try:
            return fast(raw)
        except ValueError:
            pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
    if fast is None:
        try:
            value, end = _SCAN_ONCE(text, 0)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if end == len(text) or not text[end:].strip(_JSON_WS):
                return value
    return _json_parse(text)


class LazyEntries(Sequence[SessionEntry]):
    """The entries of a session file after its header, in file order, parsed on first access.

    Behaves like the list the manager holds (``len``, indexing, slicing, iteration, ``append``);
    each access of a not yet parsed entry parses it once. Beside it, columns read without parsing:
    :attr:`ids` (``UNDEFINED`` where an entry has none), :attr:`parent_ids` (``UNDEFINED`` where
    none), :attr:`types` (``UNDEFINED`` where none), :attr:`roles` (``message.role``, read only
    for ``message`` entries: :data:`NOT_AN_OBJECT` for one without a message object; anything for
    other types).
    """

    def __init__(
        self,
        path: str,
        fd: int,
        *,
        keep_open: bool = False,
        parse: Callable[[bytes], Any] | None = None,
        data: bytes | None = None,
    ) -> None:
        self.path = path
        self._fd = fd
        self._data = data  # the file's bytes, when it was read into memory (then no descriptor)
        self._keep_open = keep_open  # a file still growing: more spans may come (closed on close())
        self._parse = parse  # the parser of a line (default: read_session_file's)
        self._cache: list[Any] = []
        self._starts = array("q")
        self._ends = array("q")
        self.ids: list[Any] = []
        self.parent_ids: list[Any] = []
        self.types: list[Any] = []
        self.roles: list[Any] = []
        self._unparsed = 0
        self._shared: dict[Any, Any] = {}  # one object per distinct type or role string
        self._lock = threading.Lock()  # (two threads may ask for unparsed entries at once)
        self._closer = weakref.finalize(self, _close_fd, fd)
        if data is not None:
            self._closer.detach()

    # --- building -------------------------------------------------------------------------

    def _add_span(self, start: int, end: int, stub: Any) -> None:
        self._cache.append(None)
        self._starts.append(start)
        self._ends.append(end)
        ids = self.ids
        eid = stub.id
        ids.append(UNDEFINED if eid is _UNSET else eid)
        pid = stub.parentId
        if pid is _UNSET:
            pid = UNDEFINED
        elif len(ids) > 1 and pid == ids[-2]:
            pid = ids[-2]  # the common case: the previous entry's id, one string object for both
        self.parent_ids.append(pid)
        etype = stub.type
        self.types.append(UNDEFINED if etype is _UNSET else etype)
        if etype == "message":
            message = stub.message
            self.roles.append(NOT_AN_OBJECT if message is _UNSET else message.role)
        else:
            self.roles.append(None)
        self._unparsed += 1

    def _extend_stubs(self, offset: int, lines: list[bytes], stubs: list[Any]) -> None:
        """:meth:`_add_span` for a block of lines that each decoded (``lines[0]`` at ``offset``),
        column by column in C (``map`` over the structs)."""
        k = len(lines)
        lens = list(map(len, lines))
        starts = list(accumulate(map((1).__add__, lens), initial=offset))[:k]
        self._starts.extend(starts)
        self._ends.extend(map(add, starts, lens))
        self._cache.extend(repeat(None, k))
        ids = list(map(_GET_ID, stubs))
        if _UNSET in ids:
            ids = [UNDEFINED if v is _UNSET else v for v in ids]
        parents = list(map(_GET_PARENT, stubs))
        if _UNSET in parents:
            parents = [UNDEFINED if v is _UNSET else v for v in parents]
        # a parentId is nearly always the previous line's id: hold that one string object for both
        canonical = dict(zip(ids, ids, strict=True))  # (the block's ids: str or UNDEFINED)
        parents = list(map(canonical.get, parents, parents))
        self.ids.extend(ids)
        self.parent_ids.extend(parents)
        # types and roles are a handful of strings: one object each, not one per entry
        types = list(map(_GET_TYPE, stubs))
        if _UNSET in types:
            types = [UNDEFINED if v is _UNSET else v for v in types]
        self.types.extend(map(self._shared.setdefault, types, types))
        # message.role (read only where the type is "message"; a missing message has none)
        roles = list(map(getattr, map(_GET_MESSAGE, stubs), repeat("role"), repeat(NOT_AN_OBJECT)))
        base = len(self.roles)
        try:
            self.roles.extend(map(self._shared.setdefault, roles, roles))
        except TypeError:  # a role that is a JSON object or array: the block's roles as they are
            del self.roles[base:]
            self.roles.extend(roles)
        self._unparsed += k

    def index_line(self, start: int, raw: bytes) -> bool:
        """Index one complete line (``raw``, without its newline, at byte ``start`` of the file)
        when the struct pass accepts it and it is not a ``session`` line; ``False`` otherwise (the
        caller then takes its eager path)."""
        decode = _stub_decode
        if decode is None or raw[:1] != b"{" or (len(raw) >= _DEEP and not _shallow(raw)):
            return False
        try:
            stub = decode(raw)
        except _ERRORS:
            return False
        if stub.type == "session":
            return False
        self._add_span(start, start + len(raw), stub)
        return True

    def append(self, entry: Any) -> None:
        """Add a parsed entry (a dict) at the end: a line that took the eager path, or an entry
        appended to the session."""
        self._cache.append(entry)
        self._starts.append(-1)
        self._ends.append(-1)
        get = entry.get
        self.ids.append(get("id", UNDEFINED))
        self.parent_ids.append(get("parentId", UNDEFINED))
        etype = get("type")
        self.types.append(UNDEFINED if "type" not in entry else etype)
        if etype == "message":
            message = get("message")
            role = (
                message.get("role")
                if type(message) is dict or isinstance(message, Mapping)
                else NOT_AN_OBJECT
            )
            self.roles.append(role)
        else:
            self.roles.append(None)

    # --- reading --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._cache)

    @overload
    def __getitem__(self, index: int) -> SessionEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[SessionEntry]: ...
    def __getitem__(self, index: int | slice) -> SessionEntry | list[SessionEntry]:
        if isinstance(index, slice):
            return self.materialize(range(len(self._cache))[index])
        entry = self._cache[index]
        if entry is None:
            pos = index if index >= 0 else index + len(self._cache)
            self._load([pos])
            entry = self._cache[pos]
        return cast(SessionEntry, entry)

    def __iter__(self) -> Iterator[SessionEntry]:
        if self._unparsed:
            self._load(range(len(self._cache)))
        return iter(cast(list[SessionEntry], self._cache))

    def __reversed__(self) -> Iterator[SessionEntry]:
        for pos in range(len(self._cache) - 1, -1, -1):
            yield self[pos]

    def materialize(self, positions: Sequence[int]) -> list[SessionEntry]:
        """The entries at these positions (parsed now where not yet), as a new list."""
        cache = self._cache
        if self._unparsed:
            missing = [p for p in positions if cache[p] is None]
            if missing:
                self._load(missing)
        return [cache[p] for p in positions]

    def all_parsed(self) -> bool:
        return self._unparsed == 0

    def _load(self, positions: Sequence[int]) -> None:
        with self._lock:
            self._load_locked(positions)

    def _load_locked(self, positions: Sequence[int]) -> None:
        cache = self._cache
        todo = sorted({p for p in positions if cache[p] is None})
        if not todo:
            return
        starts, ends = self._starts, self._ends
        with gc_paused():
            i = 0
            while i < len(todo):
                # a run of entries whose lines follow each other in the file: one read
                j = i
                first = starts[todo[i]]
                while (
                    j + 1 < len(todo)
                    and todo[j + 1] == todo[j] + 1
                    and ends[todo[j + 1]] - first <= _MAX_READ
                ):
                    j += 1
                last_end = ends[todo[j]]
                data = self._pread(first, last_end - first)
                view = memoryview(data)
                loads = cast(Callable[[memoryview], Any] | None, _orjson_loads)  # (orjson reads buffers)
                if self._parse is not None:
                    loads = None
                ids = self.ids
                for p in todo[i : j + 1]:
                    line = view[starts[p] - first : ends[p] - first]
                    value: Any = None
                    if loads is not None and len(line) < _DEEP:
                        try:  # the common case of _parse_line, without copying the line
                            value = loads(line)
                        except ValueError:
                            value = None
                    if type(value) is dict and value.get("id", UNDEFINED) == ids[p]:
                        cache[p] = value
                        self._unparsed -= 1
                        _count_parsed(1)
                    else:
                        self._set(p, line.tobytes())
                i = j + 1
        if self._unparsed == 0 and not self._keep_open:
            self._closer()
            self._data = None  # (every entry parsed: the bytes are no longer needed)

    def _pread(self, offset: int, size: int) -> bytes:
        if self._data is not None:
            return self._data[offset : offset + size]
        chunks = []
        got = 0
        while got < size:
            chunk = os.pread(self._fd, size - got, offset + got)
            if not chunk:
                raise SessionError(
                    f"Session file changed since it was opened (it is shorter now): {self.path}; open it again"
                )
            chunks.append(chunk)
            got += len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _set(self, pos: int, raw: bytes) -> None:
        try:
            value = (self._parse or _parse_line)(raw)
        except (ValueError, RecursionError):
            value = None
        if type(value) is not dict or value.get("id", UNDEFINED) != self.ids[pos]:
            raise SessionError(
                f"Session file changed since it was opened (line of entry {self.ids[pos]!r} differs): "
                f"{self.path}; open it again"
            )
        self._cache[pos] = value
        self._unparsed -= 1
        _count_parsed(1)

    def last_of_type(self, etype: str) -> SessionEntry | None:
        """The last entry whose ``type`` is ``etype`` (only that one is parsed)."""
        pos = _last_index(self.types, etype)
        return None if pos < 0 else self[pos]

    def positions_of_type(self, etype: str) -> list[int]:
        """The positions of the entries whose ``type`` is ``etype``, in file order."""
        return list(compress(range(len(self.types)), map(eq, self.types, repeat(etype))))

    def close(self) -> None:
        """Parse what is left and close the file (the entries no longer depend on it)."""
        if self._unparsed:
            self._load(range(len(self._cache)))
        self._closer()


def _close_fd(fd: int) -> None:
    if fd < 0:
        return  # (entries read from memory: no descriptor)
    try:
        os.close(fd)
    except OSError:  # pragma: no cover
        pass


class EntriesView(Sequence[SessionEntry]):
    """Positions ``start:stop`` of :class:`LazyEntries`, fixed at creation (a snapshot of a growing
    list): indexing parses one entry, iterating parses the range at once. Equal to a list or tuple
    of the same entries."""

    def __init__(self, entries: LazyEntries | None, start: int = 0, stop: int | None = None) -> None:
        self.entries = entries
        self.start = start
        self.stop = start if entries is None else len(entries) if stop is None else stop

    def __len__(self) -> int:
        return self.stop - self.start

    @overload
    def __getitem__(self, index: int) -> SessionEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[SessionEntry]: ...
    def __getitem__(self, index: int | slice) -> SessionEntry | list[SessionEntry]:
        positions = range(self.start, self.stop)
        if isinstance(index, slice):
            return [] if self.entries is None else self.entries.materialize(positions[index])
        pos = positions[index]  # (raises IndexError out of range)
        assert self.entries is not None
        return self.entries[pos]

    def __iter__(self) -> Iterator[SessionEntry]:
        if self.entries is None or self.stop == self.start:
            return iter(())
        return iter(self.entries.materialize(range(self.start, self.stop)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EntriesView | list | tuple):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EntriesView({len(self)} entries of {self.entries.path if self.entries else None!r})"


class FileEntriesView(Sequence[FileEntry]):
    """Header + :class:`LazyEntries`: the manager's file entries in lazy mode (read-only view;
    appends go to the lazy entries)."""

    def __init__(self, header: SessionHeader, entries: LazyEntries) -> None:
        self.header = header
        self.entries = entries

    def __len__(self) -> int:
        return 1 + len(self.entries)

    @overload
    def __getitem__(self, index: int) -> FileEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[FileEntry]: ...
    def __getitem__(self, index: int | slice) -> FileEntry | list[FileEntry]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self)
        if index == 0:
            return self.header
        if index < 0 or index > len(self.entries):
            raise IndexError("file entry index out of range")
        return self.entries[index - 1]

    def __iter__(self) -> Iterator[FileEntry]:
        yield self.header
        yield from self.entries


class LazyIndex(Mapping[Any, SessionEntry]):
    """``{entry id: entry}`` over :class:`LazyEntries` (a later entry with the same id wins, as
    in Pi's ``Map``); looking an entry up parses it."""

    def __init__(self, entries: LazyEntries, positions: dict[Any, int] | None = None) -> None:
        self.entries = entries
        self.positions: dict[Any, int] = (
            dict(zip(entries.ids, range(len(entries.ids)), strict=True)) if positions is None else positions
        )

    def __getitem__(self, key: Any) -> SessionEntry:
        return self.entries[self.positions[key]]

    def get(self, key: Any, default: Any = None) -> Any:
        pos = self.positions.get(key)
        return default if pos is None else self.entries[pos]

    def __contains__(self, key: object) -> bool:
        return key in self.positions

    def __iter__(self) -> Iterator[Any]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)

    def add_last(self, key: Any) -> None:
        """The entry just appended to :attr:`entries` has id ``key``."""
        self.positions[key] = len(self.entries) - 1


def read_session_file_lazy(
    path: str | os.PathLike[str], *, in_memory: bool = False
) -> tuple[SessionFileContents, LazyEntries | None]:
    """:func:`~pi_nb.session.jsonl.read_session_file`, indexing the entries instead of parsing them.

    Returns the contents (its ``entries`` hold only the header when the second value is not
    ``None``) and the :class:`LazyEntries` after the header. The second value is ``None`` when the
    file is read eagerly instead: the contents are then exactly ``read_session_file``'s. That
    happens without ``msgspec``, for a missing or invalid file, an old format (a migration
    rewrites every entry), or another ``session`` line after the header (the manager leaves those
    out of its entries). Problems, line numbers, ``size``, ``line_count`` and the torn-line flag
    are those of ``read_session_file`` in every case.

    ``in_memory=True``: the file's bytes are read at once and the entries are parsed from them
    (no descriptor stays open: for loaders of many files, which would otherwise hold one per
    file until every entry of it is parsed).
    """
    from pi_nb.session.jsonl import read_session_file

    p = os.fspath(path)
    decode = _stub_decode
    if decode is None or not hasattr(os, "pread"):  # pragma: no cover - without msgspec, or pread
        return read_session_file(p), None
    try:
        f = _jsonl.open_session_for_read(p)  # (looked up on the module: the one opener of session files)
    except FileNotFoundError:
        return SessionFileContents(p, False, 0, False, []), None
    if in_memory:
        with f:
            data = _read_upto(f, os.fstat(f.fileno()).st_size)  # what the file held at the call
        result = _read_lazy(p, io.BytesIO(data), -1, decode, data)
        if result is None:
            return read_session_file(p), None
        return result
    fd = os.dup(f.fileno())
    try:
        result = _read_lazy(p, f, fd, decode)
    except BaseException:
        os.close(fd)
        raise
    if result is None:
        os.close(fd)
        return read_session_file(p), None
    return result


def _read_upto(f: Any, size: int) -> bytes:
    """The first ``size`` bytes of ``f`` (fewer if it is shorter now)."""
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = f.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _decode_block(block: list[bytes], decode: Callable[[bytes], Any]) -> list[Any] | None:
    """Every line of the block through the struct decoder, or ``None`` when one of them is not
    for the fast path (then each line takes the per-line path). A line accepted here is one the
    per-line path accepts too: the decoder is the same; lines that might nest too deeply for the
    exact parser are left to it, and a line with leading whitespace is JSON either way."""
    if max(map(len, block)) >= _DEEP:
        # (the number of "[" and "{" of each long line, in one C pass per line)
        long = [raw for raw in block if len(raw) >= _DEEP]
        if max(map(len, map(bytes.translate, long, repeat(None), repeat(_NOT_OPENERS)))) > _MAX_FAST_OPENERS:
            return None
    try:
        return list(map(decode, block))
    except _ERRORS:
        return None


def _read_lazy(
    p: str, f: Any, fd: int, decode: Callable[[bytes], Any], data: bytes | None = None
) -> tuple[SessionFileContents, LazyEntries] | None:
    head: list[FileEntry] = []
    problems: list[LoadProblem] = []
    lines = array("I")
    lazy = LazyEntries(p, fd, data=data)
    lazy._closer.detach()  # the caller closes fd on failure; re-armed below
    add_span = lazy._add_span
    add_parsed = lazy.append
    header_seen = False
    n = 0
    offset = 0
    with gc_paused(), f:
        reader = _LineReader(f, len(data) if data is not None else os.fstat(f.fileno()).st_size)
        for block in reader:
            if header_seen and block:
                stubs = _decode_block(block, decode)
                if stubs is not None:
                    if "session" in map(_GET_TYPE, stubs):
                        return None
                    lazy._extend_stubs(offset, block, stubs)
                    lines.extend(range(n + 1, n + 1 + len(block)))
                    n += len(block)
                    offset += sum(map(len, block)) + len(block)
                    continue
            for raw in block:
                n += 1
                start = offset
                offset += len(raw) + 1
                if header_seen:
                    if raw[:1] == b"{" and (len(raw) < _DEEP or _shallow(raw)):
                        try:
                            stub = decode(raw)
                        except _ERRORS:
                            pass
                        else:
                            if stub.type == "session":
                                return None
                            add_span(start, start + len(raw), stub)
                            lines.append(n)
                            continue
                    # the eager path, exactly read_session_file's for a line after the header
                    value: Any
                    if raw[:1] == b"{" and (len(raw) < _DEEP or _shallow(raw)):
                        try:
                            value = _parse_line(raw)
                        except (ValueError, RecursionError):
                            pass
                        else:
                            if type(value) is dict:
                                if value.get("type") == "session":
                                    return None
                                add_parsed(value)
                                lines.append(n)
                                continue
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        text = raw.decode("utf-8", "replace")
                    if _js_blank(text):
                        continue
                    try:
                        value = _json_parse(text)
                    except (ValueError, RecursionError) as exc:
                        reason = f"invalid JSON: {exc}"
                        if reader.torn and n == reader.lines:
                            reason = f"torn last line (no newline at end of file), {reason}"
                        problems.append(_problem(n, reason, text))
                        continue
                    if type(value) is dict:
                        if value.get("type") == "session":
                            return None
                        add_parsed(value)
                        lines.append(n)
                    else:
                        problems.append(_problem(n, "not a JSON object (skipped)", text))
                    continue
                # before the header: read_session_file's rules, on the parsed value
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    text = raw.decode("utf-8", "replace")
                if _js_blank(text):
                    continue
                try:
                    if raw[:1] == b"{" and (len(raw) < _DEEP or _shallow(raw)):
                        value = _parse_line(raw)  # (the parser read_session_file takes for it)
                    else:
                        value = _json_parse(text)
                except (ValueError, RecursionError):
                    return None  # a malformed line before the header: let the eager reader report it
                outcome = _first_value(value, n, text, head, problems, header_seen)
                if outcome is None:
                    continue
                if not outcome:
                    return None  # not a session
                header_seen = True
                lines.append(n)
    if not header_seen or not _is_header(head[0]):
        return None
    header = head[0]
    version_raw = header.get("version")
    version = 1.0 if version_raw is None else _js_number(version_raw)
    if not version >= CURRENT_SESSION_VERSION:
        return None  # an old format: migrated by the eager path
    line_numbers: array[int] | None = lines
    if all(line == i for i, line in enumerate(lines, 1)):
        line_numbers = None
    lazy._closer = weakref.finalize(lazy, _close_fd, fd)
    if lazy.all_parsed() or data is not None:
        lazy._closer()  # (no descriptor kept: closed now, or there is none)
    contents = SessionFileContents(
        path=p,
        exists=True,
        size=reader.size,
        valid=True,
        entries=[header],
        problems=tuple(problems),
        ends_with_newline=not reader.torn,
        line_count=reader.lines,
        line_numbers=line_numbers,
    )
    return contents, lazy


# ---------------------------------------------------------------------------------------------
# the leaf's path and its context, from the index (only the entries the context holds are parsed)


def leaf_positions(entries: LazyEntries, index: LazyIndex, leaf_id: Any) -> list[int]:
    """The positions of the root -> leaf path: :func:`~pi_nb.session.context._build_session_path`
    (walk as ``_walk_plain``) on the columns. Raises EntryCycleError where it does."""
    if leaf_id is None:
        return []
    positions = index.positions
    pos: int | None = None
    if _truthy(leaf_id):
        try:
            pos = positions.get(leaf_id)
        except TypeError:
            pos = None
    if pos is None:
        if not len(entries):
            return []
        pos = len(entries) - 1
    parents = entries.parent_ids
    get = positions.get
    path: list[int] = []
    append = path.append
    for _ in range(len(positions) + 1):
        append(pos)
        parent_id = parents[pos]
        if not parent_id:
            break
        try:
            nxt = get(parent_id)
        except TypeError:  # an unhashable parentId finds nothing
            break
        if nxt is None:
            break
        pos = nxt
    else:
        leaf = entries.ids[path[0]]
        raise EntryCycleError(
            f"Entry {None if isinstance(leaf, Undefined) else leaf} has a parentId chain that loops "
            f"(Pi's buildSessionPath never ends on it: RangeError: Invalid array length)"
        )
    path.reverse()
    return path


def _first_index_of_ids(ids: list[Any], stop: int, wanted: Any) -> int:
    """:func:`~pi_nb.session.context._first_index_of` over the ids of the path."""
    if type(wanted) is str:
        try:
            return ids.index(wanted, 0, stop)
        except ValueError:
            return -1
    return next((i for i in range(stop) if _strict_eq(ids[i], wanted)), -1)


def context_positions(entries: LazyEntries, path: list[int]) -> list[int]:
    """:func:`~pi_nb.session.context.context_entries_from_path` on positions: the latest
    compaction, the entries kept before it, everything after it (only the compaction is parsed)."""
    ptypes = list(map(entries.types.__getitem__, path))
    last = _last_index(ptypes, "compaction")
    if last < 0:
        return path
    compaction = entries[path[last]]
    pids = list(map(entries.ids.__getitem__, path[: last + 1]))
    compaction_idx = _first_index_of_ids(pids, last + 1, compaction.get("id", UNDEFINED))
    if compaction_idx < 0:
        return path
    first_kept = compaction.get("firstKeptEntryId", UNDEFINED)
    out = [path[last]]
    kept = _first_index_of_ids(pids, compaction_idx, first_kept)
    if kept >= 0:
        out.extend(path[kept:compaction_idx])
    out.extend(path[compaction_idx + 1 :])
    return out


def context_from_positions(entries: LazyEntries, path: list[int]) -> SessionContext | None:
    """:func:`~pi_nb.session.context.context_from_path` on positions; ``None`` when a message
    entry of the path has no message object (the caller then takes the path itself, which raises
    Pi's error)."""
    ptypes = list(map(entries.types.__getitem__, path))
    message_at = list(compress(range(len(ptypes)), map(eq, ptypes, repeat("message"))))
    proles = list(map(entries.roles.__getitem__, map(path.__getitem__, message_at)))
    if NOT_AN_OBJECT in proles:
        return None
    thinking_at = _last_index(ptypes, "thinking_level_change")
    thinking_level: Any = (
        entries[path[thinking_at]].get("thinkingLevel", UNDEFINED) if thinking_at >= 0 else "off"
    )
    model_change_at = _last_index(ptypes, "model_change")
    model: SessionContextModel | None = None
    assistant_at = -1
    for k in range(len(proles) - 1, -1, -1):
        if proles[k] == "assistant":
            assistant_at = message_at[k]
            break
    if assistant_at >= 0 and assistant_at > model_change_at:
        message = entries[path[assistant_at]].get("message")
        model = _model(cast(dict[str, Any], message), "provider", "model")
    elif model_change_at >= 0:
        model = _model(entries[path[model_change_at]], "provider", "modelId")
    with gc_paused():
        chosen = entries.materialize(context_positions(entries, path))
        messages = context_messages(chosen)
    return SessionContext(messages=messages, thinking_level=thinking_level, model=model)
