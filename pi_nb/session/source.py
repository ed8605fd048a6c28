"""Session sources: the one place that turns what a caller passes for "a session" (or several)
into sessions.

A *session source* is a :class:`~pi_nb.session.manager.SessionManager`, an
:class:`~pi_nb.agent.AgentSession` (its manager is used), a session file, a directory of Pi
session files (searched recursively for ``*.jsonl``, sorted), a list of entries (one session,
header optional), or a list of any of those. Files are only read, never written: an old format
is migrated in memory, a torn last line stays.

* :func:`open_session_source` — ONE session as a manager (the views, the tree model).
* :func:`split_session_source` — several sessions, one item each, not yet loaded (the views
  that show one view per session).
* :func:`resolve_session_source` — the managers and files of a source, each file marked as named
  by the caller or found in a directory (the frames and the corpus loader).
* :func:`load_session_source` — every session of a source loaded, with what happens to a line or
  a file that cannot be used decided by ``strict`` (see :func:`load_session_item`).

Nothing here imports the agent, pandas or IPython.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from pi_nb.errors import (
    InvalidSessionFileError,
    NotebookError,
    PiNbError,
    SessionFileCorruptError,
    SessionFileTypeError,
)
from pi_nb.session.jsonl import SessionFileContents, read_session_file
from pi_nb.session.lazy import read_session_file_lazy
from pi_nb.session.manager import SessionManager
from pi_nb.session.paths import session_files_under

__all__ = [
    "Problem",
    "SessionFile",
    "SessionLoadWarning",
    "SessionSource",
    "is_agent_session",
    "load_session_file",
    "load_session_item",
    "load_session_source",
    "not_a_session",
    "open_session_source",
    "read_session",
    "register_foreign_reader",
    "resolve_session_source",
    "session_file_items",
    "split_session_source",
    "warn_problems",
]

SessionSource: TypeAlias = Any
"""A SessionManager, an AgentSession, a session file, a directory of session files, a list of
entries, or a list of these (checked at run time: the agent is never imported for the check)."""

Problem: TypeAlias = tuple[str, int | None, str]
"""A line or a file that could not be used: ``(file, line, reason)`` (``line`` 1-based, ``None``
for the whole file)."""


class SessionLoadWarning(UserWarning):
    """A line or a file of a session source could not be used and was skipped (as Pi skips it)."""


@dataclass(frozen=True)
class SessionFile:
    """A session file of a source, not yet read."""

    path: str
    explicit: bool
    """Named by the caller (not found by walking a directory): a problem with it raises."""


_KINDS = (
    "a session source must be a SessionManager, an AgentSession, a session file, a directory "
    "of session files or a list of those"
)


ForeignReader: TypeAlias = Callable[[str], Any]
"""A reader of another harness's session files: ``reader(path)`` returns ``None`` (not its
format) or an object with ``entries`` (Pi file entries, header first) and ``problems``
(``[(line, reason)]``): a :class:`pi_nb.harness.ForeignSession`."""

_FOREIGN_READERS: list[ForeignReader] = []


_FOREIGN_FORMATS: list[str] = []


def register_foreign_reader(reader: ForeignReader, formats: str = "") -> None:
    """Offer every file that is not a Pi session to ``reader`` before refusing it (importing
    :mod:`pi_nb.harness` registers the Claude Code and Codex readers); ``formats`` names what it
    reads, for the error of a file nobody reads."""
    if reader not in _FOREIGN_READERS:
        _FOREIGN_READERS.append(reader)
        if formats:
            _FOREIGN_FORMATS.append(formats)


def not_a_session(path: str) -> str:
    """The reason a file is refused: not a Pi session, nor a transcript a registered reader reads."""
    if not _FOREIGN_READERS:
        return f"not a pi session (no header with a string id): {path}"
    what = " or ".join(_FOREIGN_FORMATS) or "another agent's transcript pi_nb reads"
    return f"not a pi session (no header with a string id), nor a {what}: {path}"


def _read_foreign(path: str) -> Any | None:
    """The first registered reader's mapping of ``path``, or ``None``."""
    for reader in _FOREIGN_READERS:
        found = reader(path)
        if found is not None:
            return found
    return None


def _foreign_manager(found: Any) -> SessionManager:
    raw_cwd = found.entries[0].get("cwd")
    return SessionManager.in_memory(raw_cwd if isinstance(raw_cwd, str) else None, entries=found.entries)


def is_agent_session(value: Any) -> bool:
    """True for a :class:`pi_nb.agent.AgentSession` (checked without importing the agent)."""
    mod = sys.modules.get("pi_nb.agent.session")
    cls = getattr(mod, "AgentSession", None) if mod is not None else None
    return cls is not None and isinstance(value, cls)


def _held_manager(value: Any) -> SessionManager | None:
    """The manager an AgentSession (or anything holding one as ``session_manager``) holds."""
    manager = getattr(value, "session_manager", None)
    return manager if isinstance(manager, SessionManager) else None


def _is_entries(value: Any) -> bool:
    """A list (or tuple) of entry mappings: one session given by its entries."""
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(e, Mapping) for e in value)


def load_session_file(path: str) -> SessionManager:
    """A session file loaded in memory (the file is never written), its errors as one
    :class:`~pi_nb.errors.NotebookError` line: a missing file, or one that is not a session."""
    try:
        return SessionManager.in_memory_from_file(path)
    except FileNotFoundError:
        raise NotebookError(f"no such session file: {path}") from None
    except InvalidSessionFileError as exc:
        found = _read_foreign(path)
        if found is not None:
            if found.problems:
                warn_problems(path, [(path, n, r) for n, r in found.problems])
            return _foreign_manager(found)
        raise NotebookError(not_a_session(path) if _FOREIGN_READERS else str(exc)) from None


def read_session(path: str | os.PathLike[str]) -> SessionFileContents:
    """A session file's contents, read without changing it: the one reader of session files,
    :func:`pi_nb.session.jsonl.read_session_file` (with its orjson fast path)."""
    return read_session_file(path)


def open_session_source(source: SessionSource) -> SessionManager:
    """ONE session of ``source`` as a :class:`SessionManager`, without ever writing to disk.

    A manager is used as it is; an ``AgentSession`` gives its manager; a path (or a
    :class:`SessionFile`) is read with :func:`pi_nb.session.jsonl.read_session_file` and loaded
    in memory; a list of entries (header optional) is loaded in memory. A directory raises (it is
    several sessions: see :func:`split_session_source`)."""
    if isinstance(source, SessionManager):
        return source
    held = _held_manager(source)
    if held is not None:
        return held
    if isinstance(source, SessionFile):
        source = source.path
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if os.path.isdir(path):
            raise NotebookError(
                f"{path} is a directory: pass one session file (views take a directory as a list of its files)"
            )
        return load_session_file(path)
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes)):
        if all(isinstance(e, Mapping) for e in source):
            return SessionManager.in_memory(None, entries=list(source))
    raise NotebookError(f"{_KINDS}, got {type(source).__name__}")


def split_session_source(source: SessionSource) -> list[Any]:
    """``source`` split into single sessions, not loaded: a directory becomes its ``*.jsonl``
    files (sorted), a list of sessions/files/directories is flattened; a list of entries stays one
    session. Raises :class:`NotebookError` for an empty directory or list."""
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(os.fspath(source)):
        files = session_files_under(os.fspath(source))
        if not files:
            raise NotebookError(f"no session files (*.jsonl) in {os.fspath(source)}")
        return list(files)
    if isinstance(source, (list, tuple)) and not all(isinstance(e, Mapping) for e in source):
        out: list[Any] = []
        for item in source:
            out.extend(split_session_source(item))
        if not out:
            raise NotebookError("an empty list of sessions")
        return out
    if isinstance(source, (list, tuple)) and not source:
        raise NotebookError("an empty list of sessions")
    return [source]


def _resolve(source: SessionSource, entries: bool) -> Iterator[SessionManager | SessionFile]:
    if isinstance(source, (SessionManager, SessionFile)):
        yield source
        return
    held = _held_manager(source)
    if held is not None:
        yield held
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if os.path.isdir(path):
            yield from (SessionFile(p, False) for p in session_files_under(path))
        else:
            yield SessionFile(path, True)
    elif entries and _is_entries(source):
        yield SessionManager.in_memory(None, entries=list(source))
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        for item in source:
            if isinstance(item, Mapping):
                raise NotebookError(
                    "a list of entries is not a session source here: use SessionManager.in_memory(entries=...)"
                )
            yield from _resolve(item, entries)
    else:
        raise NotebookError(f"{_KINDS}, got {type(source).__name__}")


def resolve_session_source(
    source: SessionSource, *, entries: bool = False
) -> list[SessionManager | SessionFile]:
    """The sessions of ``source`` in order: managers (given, or held by an ``AgentSession``) and
    :class:`SessionFile` s (named, or found in a directory), none read yet. A list of entries is
    one session made in memory with ``entries=True``, refused otherwise (the frames refuse it: a
    list of dicts is more often a mistake than a session)."""
    return list(_resolve(source, entries))


def session_file_items(source: SessionSource) -> list[SessionFile]:
    """The session files of a directory, a file or a list of them (a manager or entries refused:
    a corpus is files)."""
    out: list[SessionFile] = []
    for item in _resolve(source, False):
        if not isinstance(item, SessionFile):
            raise NotebookError(
                f"a corpus is a directory, a session file or a list of them, got {type(item).__name__}"
            )
        out.append(item)
    return out


def warn_problems(path: str, problems: Sequence[Problem]) -> None:
    """The :class:`SessionLoadWarning` for the problems of one file."""
    lines = [f"line {n}: {r}" if n is not None else r for _, n, r in problems]
    shown = "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
    what = f"{len(lines)} line(s) of {path} could not be used and were skipped, as Pi skips them"
    if len(problems) == 1 and problems[0][1] is None:
        what = f"{path} was skipped"
    warnings.warn(f"{what}: {shown} (strict=True raises instead)", SessionLoadWarning, stacklevel=2)


LAZY_MIN_BYTES = 1 << 20
"""The size from which :func:`load_session_item` indexes a Pi file lazily by default."""


def _line_problems(
    path: str, file_problems: list[Problem], strict: bool | None, problems: list[Problem]
) -> None:
    """The lines of one file that could not be used: raised (``strict``), warned (``None``) or
    only collected (``False``), as :func:`load_session_item` says."""
    if not file_problems:
        return
    if strict:
        raise SessionFileCorruptError(
            f"{len(file_problems)} line(s) of {path} could not be used: "
            + "; ".join(f"line {n}: {r}" for _, n, r in file_problems[:3]),
            [(n or 0, r) for _, n, r in file_problems],
        )
    if strict is None:
        warn_problems(path, file_problems)
    problems.extend(file_problems)


def load_session_item(
    item: SessionManager | SessionFile,
    strict: bool | None,
    problems: list[Problem],
    *,
    lazy: bool | None = None,
) -> tuple[SessionManager, str | None, int] | None:
    """One item of :func:`resolve_session_source` loaded: ``(manager, session file, problem
    lines)``, or ``None`` for a file skipped (its problem appended to ``problems``).

    ``strict=None``: a line that cannot be used is skipped as Pi skips it, and a
    :class:`SessionLoadWarning` names it; a file found in a directory that is not a session is
    skipped with a warning; a file named explicitly that does not exist or is not a session
    raises. ``strict=True``: the first problem raises (:class:`SessionFileCorruptError`,
    :class:`InvalidSessionFileError`, :class:`NotebookError` for a missing file).
    ``strict=False``: nothing raises or warns; the problems are only appended.

    ``lazy=True``: a current-version Pi file is indexed and its entries parsed when asked for
    (:mod:`pi_nb.session.lazy`; its bytes are read at once, no descriptor stays open);
    ``lazy=False`` parses every entry now (cheaper when every entry will be read anyway);
    ``None`` (default): lazily for a file of :data:`LAZY_MIN_BYTES` or more (for a small file
    the index costs more than it saves)."""
    if isinstance(item, SessionManager):
        return item, item.get_session_file(), 0
    path = item.path
    raises = bool(strict or (strict is None and item.explicit))

    def skip(reason: str) -> None:
        problems.append((path, None, reason))
        if strict is None:
            warn_problems(path, problems[-1:])

    try:
        # a current-version Pi file is indexed, its entries parsed when a frame asks for them;
        # its bytes are read at once, so no descriptor stays open (a corpus of thousands of files)
        if lazy is None:
            try:
                lazy = os.stat(path).st_size >= LAZY_MIN_BYTES
            except OSError:
                lazy = True  # (the reader reports what is wrong, as the eager one does)
        if lazy:
            contents, lazy_entries = read_session_file_lazy(path, in_memory=True)
        else:
            contents, lazy_entries = read_session_file(path), None
    except (SessionFileTypeError, OSError) as exc:
        # a FIFO, a device or a socket (refused unread), a link that loops, a file that cannot be
        # opened: one bad file of a folder is skipped with its reason, it does not end the folder
        if raises:
            raise
        skip(str(exc))
        return None
    if not contents.exists:
        if raises:
            raise NotebookError(f"no such session file: {path}")
        skip("file not found")
        return None
    if not contents.valid:
        try:
            found = _read_foreign(path)
        except (SessionFileTypeError, OSError) as exc:
            if raises:
                raise
            skip(str(exc))
            return None
        if found is not None:
            return _load_foreign(found, path, strict, problems)
        if raises:
            raise InvalidSessionFileError(not_a_session(path))
        skip(
            "not a pi session (no header with a string id)"
            + (", nor another agent's transcript pi_nb reads" if _FOREIGN_READERS else "")
        )
        return None
    file_problems: list[Problem] = [(path, p.line_number, p.reason) for p in contents.problems]
    _line_problems(path, file_problems, strict, problems)
    raw_cwd = contents.entries[0].get("cwd")
    cwd = raw_cwd if isinstance(raw_cwd, str) else None
    try:
        if lazy_entries is not None:
            manager = SessionManager(
                cwd if cwd is not None else os.getcwd(),
                "",
                None,
                False,
                preloaded_file=contents,
                preloaded_lazy=lazy_entries,
            )
            return manager, path, len(file_problems)
        return SessionManager.in_memory(cwd, entries=contents.entries), path, len(file_problems)
    except PiNbError as exc:
        if strict:
            raise
        skip(f"{type(exc).__name__}: {exc}")
        return None


def _load_foreign(
    found: Any, path: str, strict: bool | None, problems: list[Problem]
) -> tuple[SessionManager, str | None, int] | None:
    """A file another harness wrote, mapped by its reader, with its problem lines handled as a Pi
    file's are (see :func:`load_session_item`)."""
    file_problems: list[Problem] = [(path, n, r) for n, r in found.problems]
    _line_problems(path, file_problems, strict, problems)
    try:
        return _foreign_manager(found), path, len(file_problems)
    except PiNbError as exc:
        if strict:
            raise
        problems.append((path, None, f"{type(exc).__name__}: {exc}"))
        if strict is None:
            warn_problems(path, problems[-1:])
        return None


def load_session_source(
    source: SessionSource,
    *,
    strict: bool | None = None,
    on_file: Callable[[], None] | None = None,
) -> tuple[list[tuple[SessionManager, str | None, int]], list[Problem]]:
    """Every session of ``source`` loaded without writing: ``([(manager, session file, problem
    lines)], problems)``; ``strict`` as in :func:`load_session_item`; ``on_file`` is called after
    each file is read (a progress bar)."""
    problems: list[Problem] = []
    out: list[tuple[SessionManager, str | None, int]] = []
    for item in resolve_session_source(source, entries=True):
        loaded = load_session_item(item, strict, problems)
        if isinstance(item, SessionFile) and on_file is not None:
            on_file()
        if loaded is not None:
            out.append(loaded)
    return out, problems
