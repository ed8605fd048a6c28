"""Reading and writing Pi session files: JSON lines, one entry per line, the header first.

Reading follows Pi's ``loadEntriesFromFile`` and ``parseSessionEntries``: the bytes are decoded as
UTF-8 (invalid bytes become U+FFFD, like Node's ``StringDecoder``), split on ``\\n`` only, blank
lines are skipped, lines that ``JSON.parse`` rejects are skipped. Python's ``json`` is stricter or
looser than ``JSON.parse`` in a few places and those are made to agree: ``NaN``/``Infinity``
literals are rejected, a UTF-8 byte-order mark is not skipped, "blank" means blank to JavaScript's
``trim()`` (which removes U+FEFF but not U+001C..U+001F).

Unlike Pi, pi_nb never drops a line silently: every line that is not used is reported as a
:class:`LoadProblem` (line number, reason, the first characters), and a last line without its
newline that does not parse (a writer killed mid-write) is reported as torn.

Writing: each line is ``JSON.stringify(entry) + "\\n"`` (:func:`pi_nb._js.js_stringify`), so files
are byte-identical to the ones Pi writes. Durability and concurrency, which Pi does not address:

* **Append** (:func:`append_to_file`): the file is opened ``O_APPEND``, an exclusive advisory lock
  (``flock`` on the session file itself; a ``.lock`` file via ``filelock`` where ``fcntl`` does not
  exist) is taken, and the whole line goes out in one ``write()``. Two pi_nb processes appending to
  the same session therefore both succeed and their lines never interleave; a process that cannot
  get the lock within ``lock_timeout`` seconds gets :class:`~pi_nb.errors.SessionLockedError`. If
  the file does not end with ``\\n`` (a torn line left by a killed writer), a ``\\n`` is written
  first so the new entry never glues onto the torn bytes; the torn bytes stay in the file.
* **Create** (:func:`create_file_exclusive`): the complete content is written to a temporary file
  in the same directory and hard-linked into place, so the session file either does not exist or
  is complete; an existing file is never overwritten (Pi's ``"wx"``). (A writer killed at that
  moment can leave a ``.<name>.<pid>.<random>.tmp`` file behind; it never ends in ``.jsonl``, so
  listings ignore it.)
* **Rewrite** (:func:`rewrite_file_atomic`, used by migrations): a hard link (or copy) of the
  original is kept beside it as ``<file>.bak`` (``.bak.2``, ``.bak.3``... when taken), the new
  content goes to a temporary file, is fsynced and renamed over the original. No byte the user had
  is lost, and a crash leaves either the old or the new file.

Processes that do not use this locking (the real Pi) append without a lock; ``O_APPEND`` writes of
one line still do not interleave on a local file system, but that is the kernel's courtesy, not a
guarantee pi_nb can give.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import importlib
import os
import shutil
import stat
import time
import uuid
import warnings
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeGuard, cast

from pi_nb._fs import file_kind, open_regular
from pi_nb._js import JS_JSON_DECODER, js_json_parse, js_stringify, js_utf8_encode
from pi_nb._js import JS_WHITESPACE as _JS_WS
from pi_nb._js import js_trim as _js_trim
from pi_nb._js import js_truthy as _js_truthy
from pi_nb._wire import wire_dict
from pi_nb.errors import SessionError, SessionFileTypeError, SessionLockedError
from pi_nb.session.types import FileEntry, SessionHeader

try:  # POSIX
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

# The fast path of reading: orjson parses a line about 3x faster than the json module. Where it
# refuses a line (a lone surrogate escape, a number beyond double range, bytes that are not UTF-8,
# anything malformed) the line goes through the exact JSON.parse emulation below, so what a file
# loads to does not depend on whether orjson is installed (see read_session_file).
_orjson_loads: Callable[[bytes], Any] | None
try:
    _orjson_loads = importlib.import_module("orjson").loads
except ImportError:  # pragma: no cover - exercised where orjson is missing
    _orjson_loads = None

__all__ = [
    "LoadProblem",
    "LoadProblemDict",
    "SessionFileContents",
    "load_entries_from_file",
    "parse_session_entries",
    "read_session_file",
    "read_session_header",
]

DEFAULT_LOCK_TIMEOUT = 10.0
"""Seconds an append waits for another process's lock before raising SessionLockedError."""

_RAW_PREFIX_CHARS = 120
_HEADER_SCAN_LIMIT = 1024 * 1024  # Pi's MAX_SESSION_HEADER_SCAN_BYTES
_HEADER_READ_CHUNK = 4096

# JavaScript's String.prototype.trim() whitespace: WhiteSpace + LineTerminator.
_JS_WS_SET = frozenset(_JS_WS)


def _js_blank(s: str) -> bool:
    """``!s.trim()``: empty after JavaScript's trim."""
    if not s:
        return True
    if s[0] not in _JS_WS_SET:
        return False
    return not s.strip(_JS_WS)


_DECODER = JS_JSON_DECODER
_decode = _DECODER.decode
_SCAN_ONCE: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
_JSON_WS = " \t\n\r"
_json_parse = js_json_parse


def _is_header(v: object) -> TypeGuard[SessionHeader]:
    """A parsed value that Pi takes for a session header: an object with ``type: "session"`` and a
    string ``id`` (nothing else is checked: an old or hand-edited header may lack ``cwd``)."""
    return isinstance(v, dict) and v.get("type") == "session" and isinstance(v.get("id"), str)


def parse_session_entries(content: str) -> list[Any]:
    """Pi's ``parseSessionEntries``: every line of ``content`` that ``JSON.parse`` accepts.

    ``content`` is trimmed (JavaScript's ``trim``), split on ``\\n``; blank and malformed lines are
    skipped. Like Pi, whatever a line parses to is returned (normally an object; ``null`` or a number
    too), and nothing checks that the first one is a header.
    """
    if not isinstance(content, str):
        raise TypeError(f"content must be str, not {type(content).__name__}")
    entries: list[Any] = []
    for line in _js_trim(content).split("\n"):
        if _js_blank(line):
            continue
        try:
            entries.append(_json_parse(line))
        except (ValueError, RecursionError):
            continue
    return entries


class LoadProblemDict(TypedDict):
    """:meth:`LoadProblem.to_dict`: ``{lineNumber, reason, rawPrefix}``."""

    lineNumber: int
    reason: str
    rawPrefix: str


@dataclass(frozen=True)
class LoadProblem:
    """A line of a session file that was not used: where, why, and how it started."""

    line_number: int
    """1-based line number in the file."""
    reason: str
    raw_prefix: str
    """The first characters of the line (decoded), to recognise it."""

    def to_dict(self) -> LoadProblemDict:
        return cast(LoadProblemDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


@dataclass(frozen=True)
class SessionFileContents:
    """What :func:`read_session_file` found in a file.

    ``entries`` is what Pi's ``loadEntriesFromFile`` returns (header first) when ``valid``; an
    invalid file (its first parsed value is not a header with a string id) has ``entries == []``.
    The header is checked that far; every other entry is a line that parsed to a JSON object, its
    fields unchecked (read them with ``.get``, as the session code does).
    """

    path: str
    exists: bool
    size: int
    valid: bool
    entries: list[FileEntry]
    problems: tuple[LoadProblem, ...] = field(default=())
    ends_with_newline: bool = True
    """False when the last byte is not ``\\n`` (Pi then appends one on open)."""
    line_count: int = 0
    line_numbers: array[int] | None = None
    """The 1-based line of each entry of ``entries``; ``None`` when entry ``i`` is on line ``i + 1``
    (no line was skipped). Use :meth:`line_of`."""

    def line_of(self, index: int) -> int:
        """The file line of ``entries[index]`` (1-based)."""
        return index + 1 if self.line_numbers is None else self.line_numbers[index]


def _decode_line(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def _problem(line_number: int, reason: str, text: str) -> LoadProblem:
    return LoadProblem(line_number, reason, text[:_RAW_PREFIX_CHARS])


_kind = file_kind


def check_regular_file(path: str, st: os.stat_result | None = None) -> None:
    """Raise :class:`~pi_nb.errors.SessionFileTypeError` unless ``path`` (followed through
    symlinks) is a regular file. Missing paths pass (callers treat them as new sessions)."""
    if st is None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return
    if not stat.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        via = ""
        if os.path.islink(path):
            via = f" (a symlink to {os.path.realpath(path)})"
        raise SessionFileTypeError(
            f"Session path is {kind}, not a regular file: {path}{via}; refusing to read or replace it",
            path,
            kind,
        )


def _session_refusal(path: str, kind: str) -> SessionFileTypeError:
    via = ""
    if os.path.islink(path):
        via = f" (a symlink to {os.path.realpath(path)})"
    return SessionFileTypeError(
        f"Session path is {kind}, not a regular file: {path}{via}; refusing to read or replace it",
        path,
        kind,
    )


def open_session_for_read(path: str) -> Any:
    """Open a session file for reading in binary mode, refusing anything that is not a regular file.

    :func:`pi_nb._fs.open_regular` (the kind checked on the path and again on the open descriptor,
    a non-blocking open) with :class:`~pi_nb.errors.SessionFileTypeError` as the refusal. Raises
    FileNotFoundError for a missing path, OSError (``ELOOP``) for a link that loops.
    """
    return open_regular(path, refuse=_session_refusal)


def read_session_file(path: str | os.PathLike[str]) -> SessionFileContents:
    """Read a session file without changing it: entries, problems, validity, trailing newline.

    Problems reported: a line that is not JSON (``invalid JSON: ...``), a torn last line (no
    newline and not JSON), a line that is JSON but not an object (Pi would keep some of those and
    trip over them later), and the first value of a file that is not a session. A path that is
    not a regular file (a FIFO, a directory, a device, directly or through a symlink) raises
    :class:`~pi_nb.errors.SessionFileTypeError` before anything is read.

    Speed: lines are read one at a time (no second copy of the file in memory). Each line that
    starts with ``{`` is parsed by orjson when it is installed, else by the C scanner of
    :mod:`json`; a line the fast parser refuses is parsed again by the exact ``JSON.parse``
    emulation, which decides (lone surrogates are kept, numbers beyond double range become
    infinities, invalid UTF-8 becomes U+FFFD, NaN is refused). Both parsers agree with JavaScript on
    duplicate keys (the last value wins, at the first key's place). The one representational
    difference is harmless: orjson gives an integer beyond 64 bits as a float where :mod:`json`
    gives an ``int``; JavaScript holds both as the same double, and pi_nb writes them the same.
    The cyclic garbage collector is paused while the entries are built (parsed JSON has no
    reference cycles, and a collection pass over a growing heap of dicts would otherwise take
    half the time).
    """
    p = os.fspath(path)
    try:
        f = open_session_for_read(p)
    except FileNotFoundError:
        return SessionFileContents(p, False, 0, False, [])
    entries: list[FileEntry] = []
    # each value appended is the header (checked by _is_header) or a line that parsed to a dict:
    # an entry, its fields unchecked (the boundary where parsed JSON becomes a FileEntry)
    append: Callable[[Any], None] = entries.append
    problems: list[LoadProblem] = []
    line_numbers: array[int] | None = None
    header_seen = False
    valid = True
    n = 0
    scan = _SCAN_ONCE
    fast = _orjson_loads
    with gc_paused(), f:
        # Read what the file held when it was opened, no more: a line another process appends
        # meanwhile is then either whole or the torn last line, never split in two by a read
        # that met the end of the file in the middle of it.
        reader = _LineReader(f, os.fstat(f.fileno()).st_size)
        for block in reader:
            for raw in block:  # one line, without its "\n"
                n += 1
                value: Any
                if fast is not None and raw[:1] == b"{" and (len(raw) < _DEEP or _shallow(raw)):
                    try:
                        value = fast(raw)
                    except ValueError:  # orjson.JSONDecodeError: take the exact path below
                        pass
                    else:
                        if header_seen and type(value) is dict:
                            append(value)
                            if line_numbers is not None:
                                line_numbers.append(n)
                            continue
                        outcome = _first_value(value, n, raw.decode("utf-8"), entries, problems, header_seen)
                        if outcome is None:
                            line_numbers = _skipped(line_numbers, entries)
                            continue
                        header_seen = True
                        if line_numbers is not None:  # (a line before the header was skipped)
                            line_numbers.append(n)
                        if not outcome:
                            valid = False
                            break
                        continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    text = raw.decode("utf-8", "replace")
                # fast path without orjson: one object, then nothing but JSON whitespace
                if fast is None and text[:1] == "{":
                    try:
                        value, end = scan(text, 0)
                    except (StopIteration, ValueError, RecursionError):
                        pass
                    else:
                        if end == len(text) or not text[end:].strip(_JSON_WS):
                            if header_seen and type(value) is dict:
                                append(value)
                                if line_numbers is not None:
                                    line_numbers.append(n)
                                continue
                            outcome = _first_value(value, n, text, entries, problems, header_seen)
                            if outcome is None:
                                line_numbers = _skipped(line_numbers, entries)
                                continue
                            header_seen = True
                            if line_numbers is not None:
                                line_numbers.append(n)
                            if not outcome:
                                valid = False
                                break
                            continue
                # slow path: exactly JSON.parse's rules, with the error text
                line_numbers = _skipped(line_numbers, entries)
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
                if header_seen:
                    if type(value) is dict:
                        append(value)
                        line_numbers.append(n)
                    else:
                        problems.append(_problem(n, "not a JSON object (skipped)", text))
                    continue
                outcome = _first_value(value, n, text, entries, problems, header_seen)
                if outcome is None:
                    continue
                header_seen = True
                if not outcome:
                    valid = False
                    break
                line_numbers.append(n)
            if not valid:
                break
        if not valid:
            reader.drain()  # count the rest of the file so `size` and `line_count` stay true
    if not header_seen:
        valid = False
    if (
        line_numbers is not None
        and len(line_numbers) == len(entries)
        and all(line == i for i, line in enumerate(line_numbers, 1))
    ):
        line_numbers = None  # the slow path parsed a line but skipped none: lines are positions
    return SessionFileContents(
        path=p,
        exists=True,
        size=reader.size,
        valid=valid,
        entries=entries if valid else [],
        problems=tuple(problems),
        ends_with_newline=not reader.torn,
        line_count=reader.lines,
        line_numbers=line_numbers if valid else None,
    )


_READ_BLOCK = 1 << 20  # Pi reads session files in 1 MiB blocks too


class _LineReader:
    """The lines of binary file ``f`` within its first ``limit`` bytes, as lists (one list per
    1 MiB block read, each line without its ``\\n``; a line longer than a block is gathered
    from its pieces without copying them more than once). The last line, when the bytes end
    without a newline, comes last in its own list: :attr:`torn` is then true.

    After iteration: :attr:`size` (bytes read), :attr:`lines` (lines seen, the torn one
    included), :attr:`torn`.
    """

    def __init__(self, f: Any, limit: int) -> None:
        self._f = f
        self._left = limit
        self.size = 0
        self.lines = 0
        self.torn = False
        self._blocks = self._read_blocks()

    def __iter__(self) -> Iterator[list[bytes]]:
        return self._blocks

    def _read_blocks(self) -> Iterator[list[bytes]]:
        pieces: list[bytes] = []
        read = self._f.read
        while self._left > 0:
            block = read(min(_READ_BLOCK, self._left))
            if not block:
                break
            self._left -= len(block)
            self.size += len(block)
            if b"\n" not in block:
                pieces.append(block)
                continue
            parts = block.split(b"\n")
            if pieces:
                pieces.append(parts[0])
                parts[0] = b"".join(pieces)
                pieces = []
            tail = parts.pop()
            if tail:
                pieces.append(tail)
            self.lines += len(parts)
            yield parts
        if pieces:
            self.lines += 1
            self.torn = True
            yield [b"".join(pieces)]

    def drain(self) -> None:
        for _ in self._blocks:
            pass


# Nesting deeper than Python's recursion limit makes the json module refuse a line (reported as
# invalid) where orjson may accept it; a line that might be that deep (more opening brackets than
# the limit leaves room for) skips orjson, so the outcome never depends on which parser ran. Such
# a line needs at least _DEEP bytes, so shorter lines are not even counted.
_MAX_FAST_OPENERS = 800
_DEEP = 2 * _MAX_FAST_OPENERS


def _shallow(raw: bytes) -> bool:
    return raw.count(b"[") + raw.count(b"{") <= _MAX_FAST_OPENERS


def _skipped(line_numbers: array[int] | None, entries: list[FileEntry]) -> array[int]:
    """A line was not kept: from now on entries need their line numbers recorded."""
    if line_numbers is None:
        return array("I", range(1, len(entries) + 1))
    return line_numbers


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects (parsed JSON, context
    messages, tree nodes): its passes over a large, growing heap would otherwise cost as much as
    the work itself. Restores the previous state; nothing cyclic is created meanwhile.

    On the way out, what was allocated meanwhile is moved to the oldest generation in one step
    (``gc.freeze()`` + ``gc.unfreeze()``, two list splices): otherwise the first allocation after
    the pause would run a young-generation pass over every object just built (a million dicts and
    lists for a 100,000-entry session: a third of the load time). Those objects are long-lived
    anyway; nothing is kept from being collected (unfreeze returns everything to the collector).
    Skipped when the program froze objects itself (``gc.get_freeze_count()`` is not 0), so its
    frozen objects stay frozen."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _first_value(
    value: Any,
    n: int,
    text: str,
    entries: list[FileEntry],
    problems: list[LoadProblem],
    header_seen: bool,
) -> bool | None:
    """Before the header: None = skip this value (JS-falsy), True = header kept, False = not a session."""
    if not _js_truthy(value):
        problems.append(_problem(n, "not a JSON object (skipped)", text.rstrip("\r\n")))
        return None
    if not _is_header(value):
        problems.append(_problem(n, "first entry is not a session header", text.rstrip("\r\n")))
        return False
    entries.append(value)
    return True


def load_entries_from_file(path: str | os.PathLike[str]) -> list[FileEntry]:
    """Pi's ``loadEntriesFromFile``: the file's entries (header first), or ``[]``.

    ``[]`` for a missing, empty, header-less or unparseable file. A valid file whose last line
    lacks its ``\\n`` gets one appended (Pi's repair; the bytes already there are kept).
    """
    contents = read_session_file(path)
    if contents.valid and not contents.ends_with_newline:
        ensure_trailing_newline(contents.path)
    return contents.entries


def read_session_header(path: str | os.PathLike[str]) -> SessionHeader | None:
    """The header of a session file, reading at most 1 MiB (Pi's ``readSessionHeader``).

    Blank and malformed lines are skipped; the first value that parses decides: a header with a
    string id is returned, anything else gives ``None``. A file whose first value starts past
    1 MiB raises ``ValueError`` (Pi's ``SessionHeaderScanLimitError``).
    """
    p = os.fspath(path)
    with open_session_for_read(p) as f:
        data = f.read(_HEADER_SCAN_LIMIT)
        at_eof = len(data) < _HEADER_SCAN_LIMIT or f.read(1) == b""
    lines = data.split(b"\n")
    complete = lines[:-1]
    for raw in complete:
        verdict = _header_candidate(_decode_line(raw))
        if not isinstance(verdict, _KeepScanning):
            return verdict
    if at_eof:
        verdict = _header_candidate(_decode_line(lines[-1]))
        return None if isinstance(verdict, _KeepScanning) else verdict
    raise ValueError(f"Session header exceeds {_HEADER_SCAN_LIMIT}-byte scan limit: {p}")


class _KeepScanning:
    """The verdict of :func:`_header_candidate` for a line that does not decide."""


_KEEP_SCANNING = _KeepScanning()


def _header_candidate(line: str) -> SessionHeader | _KeepScanning | None:
    if _js_blank(line):
        return _KEEP_SCANNING
    try:
        value = _json_parse(line)
    except (ValueError, RecursionError):
        return _KEEP_SCANNING
    if not _js_truthy(value):
        return _KEEP_SCANNING
    return value if _is_header(value) else None


def read_session_header_quiet(path: str | os.PathLike[str]) -> SessionHeader | None:
    """:func:`read_session_header`, but ``None`` for unreadable or oversized files (discovery).

    A path that is not a regular file (a FIFO, directory or device named ``*.jsonl``) is skipped
    with a :class:`~pi_nb.session.jsonl.SessionFileWarning` naming it, never read."""
    try:
        return read_session_header(path)
    except SessionFileTypeError as exc:
        warn_skipped(str(exc))
        return None
    except (OSError, ValueError):
        return None


class SessionFileWarning(UserWarning):
    """Listing sessions skipped a ``*.jsonl`` path that is not a regular file (a FIFO, a
    directory, a device, a socket, or a symlink to one); the message names the path."""


def warn_skipped(message: str) -> None:
    """Warn that a listing skipped a session path (:class:`SessionFileWarning`)."""
    warnings.warn(f"skipped: {message}", SessionFileWarning, stacklevel=3)


# ---------------------------------------------------------------------------------------------
# writing


def serialize_entry(entry: Any) -> bytes:
    """One line as Pi writes it: ``JSON.stringify(entry) + "\\n"`` in UTF-8."""
    return js_utf8_encode(js_stringify(entry) + "\n")


def _fsync_dir(directory: str) -> None:
    if os.name != "posix":  # pragma: no cover
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _temp_path(path: str) -> str:
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def _write_temp(path: str, data: bytes) -> str:
    tmp = _temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def create_file_exclusive(path: str | os.PathLike[str], data: bytes) -> None:
    """Create ``path`` holding ``data``, atomically; raise SessionError if it already exists.

    The data is written and fsynced under a temporary name, then hard-linked to ``path`` (which
    fails when ``path`` exists, like Pi's ``openSync(path, "wx")``). Where hard links are not
    available the file is created with ``O_EXCL`` and written in one call.
    """
    p = os.fspath(path)
    tmp = _write_temp(p, data)
    try:
        try:
            os.link(tmp, p)
        except FileExistsError:
            raise SessionError(f"Session file already exists: {p}") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            # no hard links here: plain exclusive create
            try:
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
            except FileExistsError:
                raise SessionError(f"Session file already exists: {p}") from None
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _fsync_dir(os.path.dirname(p) or ".")


def _backup_name(path: str) -> str:
    candidate = f"{path}.bak"
    i = 2
    while os.path.lexists(candidate):
        candidate = f"{path}.bak.{i}"
        i += 1
    return candidate


def rewrite_file_atomic(path: str | os.PathLike[str], data: bytes, *, backup: bool = True) -> str | None:
    """Replace the content of ``path`` with ``data`` atomically; return the backup's path.

    With ``backup`` (and a non-empty original) the original is kept as ``<path>.bak`` (or
    ``.bak.N``): a hard link to the old inode when possible, else a copy; either way a regular
    file holding the original bytes. The session lock is held during the swap, so a pi_nb process
    appending at the same moment waits and then appends to the new file (appenders re-check the
    inode after locking).

    A symlinked session file stays a symlink: the new content replaces the link's *target* (the
    temporary file is made beside the target), the ``.bak`` goes beside the link. A path that is
    not a regular file (a FIFO, a device) raises :class:`~pi_nb.errors.SessionFileTypeError` and is
    left alone.
    """
    p = os.fspath(path)
    target = os.path.realpath(p) if os.path.islink(p) else p
    check_regular_file(p)
    backup_path: str | None = None
    try:
        fd = os.open(target, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        fd = -1
    try:
        with _locked(fd, p, DEFAULT_LOCK_TIMEOUT) if fd >= 0 else contextlib.nullcontext():
            if backup and fd >= 0 and os.fstat(fd).st_size > 0:
                backup_path = _backup_name(p)
                try:
                    os.link(target, backup_path)
                except OSError:
                    shutil.copyfile(target, backup_path)
                    shutil.copystat(target, backup_path)
            tmp = _write_temp(target, data)
            try:
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            _fsync_dir(os.path.dirname(target) or ".")
    finally:
        if fd >= 0:
            os.close(fd)
    return backup_path


@contextlib.contextmanager
def _locked(fd: int, path: str, timeout: float) -> Iterator[None]:
    """Hold an exclusive advisory lock on the open file ``fd`` (``flock``), or raise SessionLockedError."""
    if _fcntl is None:  # pragma: no cover - Windows: a sidecar lock file
        import filelock

        lock = filelock.FileLock(path + ".lock")
        try:
            lock.acquire(timeout=timeout)
        except filelock.Timeout:
            raise SessionLockedError(
                f"Session file is locked by another process: {path} (waited {timeout:g} s)"
            ) from None
        try:
            yield
        finally:
            lock.release()
        return
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise SessionLockedError(
                    f"Session file is locked by another process: {path} (waited {timeout:g} s)"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    try:
        yield
    finally:
        _fcntl.flock(fd, _fcntl.LOCK_UN)


def _last_byte(fd: int, size: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, size - 1)
    os.lseek(fd, size - 1, os.SEEK_SET)  # pragma: no cover
    return os.read(fd, 1)  # pragma: no cover


def _same_file(fd: int, path: str) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    fst = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)


def append_to_file(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    fsync: bool = False,
) -> None:
    """Append ``data`` (whole lines) to an existing file under the session lock, in one write.

    If the file does not end with ``\\n`` a newline is written first (torn-line repair; the torn
    bytes stay). A write that fails part-way (a full disk) is cut back to the previous end of the
    file before the OSError propagates, so no partial line is left. Raises FileNotFoundError when
    the file does not exist and
    :class:`~pi_nb.errors.SessionLockedError` when the lock is not free within ``lock_timeout``.
    """
    p = os.fspath(path)
    flags = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        check_regular_file(p)
        fd = os.open(p, flags)
        try:
            check_regular_file(p, os.fstat(fd))
            with _locked(fd, p, lock_timeout):
                if not _same_file(fd, p):
                    continue  # replaced (rewritten) while we waited: append to the new file
                size = os.fstat(fd).st_size
                out = data
                if size > 0 and _last_byte(fd, size) != b"\n":
                    out = b"\n" + data
                if out:
                    try:
                        _write_all(fd, out)
                        if fsync:
                            os.fsync(fd)
                    except OSError:
                        # a full disk (ENOSPC, EFBIG) can fail a write part-way: take the partial
                        # line back out (we hold the lock), so the file ends where it ended before
                        with contextlib.suppress(OSError):
                            os.ftruncate(fd, size)
                        raise
                return
        finally:
            os.close(fd)
    raise SessionError(f"Session file keeps being replaced while appending: {p}")  # pragma: no cover


def ensure_trailing_newline(
    path: str | os.PathLike[str], *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> None:
    """Append ``\\n`` if the file's last byte is not one (Pi's repair on open)."""
    append_to_file(path, b"", lock_timeout=lock_timeout)
