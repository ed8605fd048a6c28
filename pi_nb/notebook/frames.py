"""pandas frames of sessions: sessions, entries, messages, tool results (with truncation), usage, compactions.

In the style of Inspect AI's ``evals_df``/``messages_df``: one function per kind of row, each
taking a *session source* — a :class:`~pi_nb.session.SessionManager`, an
:class:`~pi_nb.agent.AgentSession`, a session file, a directory of Pi session files (searched
recursively for ``*.jsonl``) or a list of those — and returning one frame with stable id columns
(``session_id``, ``session_file``, ``entry_id``, ``parent_id``) and the branch membership of every
row (``on_active_branch``: on the root -> leaf path; ``in_context``: among the entries the model
sees at the leaf, after compaction). :func:`sessions_df` has one row per session.

Every column has one fixed dtype, whatever the data and the pandas version (2 or 3), also when
the frame is empty: ids and text ``string`` (Python storage), flags ``boolean``, counts ``Int64``, costs
``Float64``, times ``datetime64[us, UTC]`` (:data:`FRAME_DTYPES` lists them). Missing values are
``<NA>`` / ``NaT``.

Files are only read, never changed: an old format is migrated in memory, a torn last line stays.
What happens to a line or a file that cannot be used depends on ``strict``:

* ``strict=None`` (the default): the session opens as Pi opens it (the line is skipped) and a
  :class:`SessionLoadWarning` names the file and the line; a file found in a directory that is not
  a Pi session is skipped with a warning. A file named explicitly that does not exist or is not a
  session raises.
* ``strict=True``: the first problem raises (:class:`~pi_nb.errors.SessionFileCorruptError` for
  lines that do not parse, :class:`~pi_nb.errors.InvalidSessionFileError` for a file that is not a
  session, :class:`~pi_nb.errors.NotebookError` for a missing file).
* ``strict=False``: nothing raises or warns; the function returns ``(frame, errors)`` where
  ``errors`` has one row per problem with the columns ``file``, ``line`` (1-based, ``<NA>`` for a
  whole file) and ``reason``.

``progress``: a progress bar (tqdm's notebook-aware ``tqdm.auto``) over the session files.
``None`` shows it only when loading takes more than a second, ``True`` always, ``False`` never.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from pi_nb._js import js_stringify, js_utf8_encode
from pi_nb.errors import (
    InvalidMessageError,
    InvalidSessionFileError,
    MissingDependencyError,
    NotebookError,
    PiNbError,
    SessionFileCorruptError,
    SessionFileTypeError,
)
from pi_nb.messages import Usage
from pi_nb.session.context import (
    build_session_context,
    session_entry_to_context_messages,
)
from pi_nb.session.jsonl import SessionFileContents, gc_paused, open_session_for_read, read_session_file
from pi_nb.session.manager import SessionManager
from pi_nb.session.paths import session_files_under
from pi_nb.session.types import FileEntry, SessionEntry
from pi_nb.tokens import calculate_context_tokens, count_message_tokens, estimate_tokens

__all__ = [
    "ERROR_COLUMNS",
    "FRAME_DTYPES",
    "FRAME_KINDS",
    "SESSION_COLUMNS",
    "SessionLoadWarning",
    "SessionSource",
    "compactions_df",
    "entries_df",
    "iter_sessions",
    "messages_df",
    "session_frames",
    "session_list_df",
    "session_managers",
    "sessions_df",
    "tool_results_df",
    "usage_df",
]

SessionSource = Any
"""A SessionManager, an AgentSession, a session file, a directory of session files, or a list of these."""


class SessionLoadWarning(UserWarning):
    """A line or a file of a session source could not be used and was skipped (as Pi skips it)."""


ERROR_COLUMNS = ("file", "line", "reason")
TIMESTAMP_DTYPE = "datetime64[us, UTC]"
STRING_DTYPE = pd.StringDtype("python")
"""The dtype of the text columns: pandas' ``string`` with ``<NA>`` for missing, stored as Python
strings whatever the pandas version (pandas 3 would pick pyarrow storage where pyarrow is
installed, pandas 2 Python storage: a frame would then differ between machines)."""

TRUNCATION_FIELDS = (
    ("truncated", "truncated"),
    ("truncatedBy", "truncated_by"),
    ("totalLines", "total_lines"),
    ("totalBytes", "total_bytes"),
    ("outputLines", "output_lines"),
    ("outputBytes", "output_bytes"),
    ("lastLinePartial", "last_line_partial"),
    ("firstLineExceedsLimit", "first_line_exceeds_limit"),
    ("maxLines", "max_lines"),
    ("maxBytes", "max_bytes"),
)

# ---------------------------------------------------------------------------------------------
# columns and their dtypes

ENTRY_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "type",
    "role",
    "text",
    "label",
    "depth",
    "children",
    "on_active_branch",
    "in_context",
    "is_leaf",
    "estimate_tokens",
)
MESSAGE_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "role",
    "text",
    "text_chars",
    "thinking_chars",
    "images",
    "tool_calls",
    "tool_names",
    "tool_call_id",
    "tool_name",
    "is_error",
    "stop_reason",
    "provider",
    "model",
    "on_active_branch",
    "in_context",
    "estimate_tokens",
)
TOOL_RESULT_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "tool_call_id",
    "tool_name",
    "call_entry_id",
    "arguments",
    "is_error",
    "content_chars",
    "content_bytes",
    "images",
    *(snake for _, snake in TRUNCATION_FIELDS),
    "full_output_path",
    "match_limit_reached",
    "result_limit_reached",
    "entry_limit_reached",
    "lines_truncated",
    "on_active_branch",
    "in_context",
)
USAGE_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "provider",
    "model",
    "api",
    "stop_reason",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "context_tokens",
    "usable",
    "cost_input",
    "cost_output",
    "cost_cache_read",
    "cost_cache_write",
    "cost_total",
    "on_active_branch",
    "in_context",
)
COMPACTION_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "tokens_before",
    "first_kept_entry_id",
    "summary",
    "summary_chars",
    "summary_estimate_tokens",
    "estimate_tokens_after",
    "read_files",
    "modified_files",
    "from_hook",
    "usage_total_tokens",
    "on_active_branch",
    "in_context",
)
SESSION_COLUMNS = (
    "session_id",
    "session_file",
    "cwd",
    "name",
    "parent_session",
    "start",
    "end",
    "model",
    "models",
    "entries",
    "messages",
    "turns",
    "responses",
    "tool_calls",
    "tool_errors",
    "error_responses",
    "compactions",
    "branch_summaries",
    "branch_points",
    "leaves",
    "active_branch_entries",
    "leaf_id",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "total_tokens",
    "last_context_tokens",
    "peak_context_tokens",
    "cost_total",
    "unpriced_responses",
    "problems",
)
"""The columns of :func:`sessions_df` (``columns=`` picks among them)."""
SESSION_LIST_COLUMNS = (
    "session_id",
    "session_file",
    "cwd",
    "name",
    "parent_session_file",
    "created",
    "modified",
    "message_count",
    "first_message",
)

_TIME_COLUMNS = frozenset({"timestamp", "start", "end", "created", "modified"})
_INT_COLUMNS = frozenset(
    {
        "depth",
        "children",
        "estimate_tokens",
        "tokens",
        "text_chars",
        "thinking_chars",
        "images",
        "tool_calls",
        "content_chars",
        "content_bytes",
        "total_lines",
        "total_bytes",
        "output_lines",
        "output_bytes",
        "max_lines",
        "max_bytes",
        "input",
        "output",
        "cache_read",
        "cache_write",
        "total_tokens",
        "context_tokens",
        "tokens_before",
        "summary_chars",
        "summary_estimate_tokens",
        "estimate_tokens_after",
        "usage_total_tokens",
        "entries",
        "messages",
        "turns",
        "responses",
        "tool_errors",
        "error_responses",
        "compactions",
        "branch_summaries",
        "branch_points",
        "leaves",
        "active_branch_entries",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "last_context_tokens",
        "peak_context_tokens",
        "unpriced_responses",
        "problems",
        "message_count",
        "line",
    }
)
_BOOL_COLUMNS = frozenset(
    {
        "on_active_branch",
        "in_context",
        "is_leaf",
        "is_error",
        "truncated",
        "last_line_partial",
        "first_line_exceeds_limit",
        "match_limit_reached",
        "result_limit_reached",
        "entry_limit_reached",
        "lines_truncated",
        "usable",
        "from_hook",
    }
)
_FLOAT_COLUMNS = frozenset({"cost_input", "cost_output", "cost_cache_read", "cost_cache_write", "cost_total"})


def column_dtype(column: str) -> str:
    """The dtype every frame gives ``column``: ``datetime64[us, UTC]``, ``Int64``, ``boolean``,
    ``Float64`` or ``string``."""
    if column in _TIME_COLUMNS:
        return TIMESTAMP_DTYPE
    if column in _INT_COLUMNS:
        return "Int64"
    if column in _BOOL_COLUMNS:
        return "boolean"
    if column in _FLOAT_COLUMNS:
        return "Float64"
    return "string"


FRAME_KINDS = ("entries", "messages", "tool_results", "usage", "compactions", "sessions")
"""The frames of a session source (``<kind>_df``)."""
FRAME_COLUMNS: dict[str, tuple[str, ...]] = {
    "entries": ENTRY_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "tool_results": TOOL_RESULT_COLUMNS,
    "usage": USAGE_COLUMNS,
    "compactions": COMPACTION_COLUMNS,
    "sessions": SESSION_COLUMNS,
}
FRAME_DTYPES: dict[str, dict[str, str]] = {
    kind: {c: column_dtype(c) for c in cols} for kind, cols in FRAME_COLUMNS.items()
}
"""The dtype of every column of every frame kind (with ``encoding=``, entries and messages also
have ``tokens``: ``Int64``)."""


# ---------------------------------------------------------------------------------------------
# typed columns


def _as_text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v
    try:
        return js_stringify(v)
    except Exception:  # a value JSON cannot hold (never from a file)
        return str(v)


def _as_int(v: Any) -> int | None:
    if type(v) is int:
        return v if -(2**63) <= v < 2**63 else None
    if type(v) is float and math.isfinite(v) and v.is_integer() and abs(v) < 2**63:
        return int(v)
    return None


def _as_float(v: Any) -> float | None:
    if type(v) is float:
        return v
    if type(v) is int:
        return float(v)
    return None


_NONE = type(None)


def _typed(values: list[Any], dtype: str) -> Any:
    """``values`` (plain Python, ``None`` = missing) as a pandas array of ``dtype``; a value of the
    wrong JSON type (a string where a count belongs, from a hand-edited file) becomes missing."""
    types = set(map(type, values))
    if dtype == "string":
        if not types <= {str, _NONE}:
            values = [_as_text(v) for v in values]
        return pd.array(values, dtype=STRING_DTYPE)
    if dtype == "Int64":
        if not types <= {int, _NONE}:
            values = [_as_int(v) for v in values]
        try:
            return pd.array(values, dtype="Int64")
        except (OverflowError, TypeError, ValueError):  # an integer past 64 bits
            return pd.array([_as_int(v) for v in values], dtype="Int64")
    if dtype == "boolean":
        if not types <= {bool, _NONE}:
            values = [v if type(v) is bool else None for v in values]
        return pd.array(values, dtype="boolean")
    if dtype == "Float64":
        return pd.array([_as_float(v) for v in values], dtype="Float64")
    if dtype == TIMESTAMP_DTYPE:
        if not values:
            return pd.Series([], dtype=TIMESTAMP_DTYPE).array
        if not types <= {str, _NONE}:
            values = [v if type(v) is str else None for v in values]
        fast = _pi_times(values)
        if fast is not None:
            return fast
        parsed = pd.to_datetime(pd.Series(values, dtype=object), utc=True, errors="coerce", format="ISO8601")
        return parsed.astype(TIMESTAMP_DTYPE).array
    raise AssertionError(dtype)  # pragma: no cover


def _pi_times(values: list[str | None]) -> Any:
    """Times as Pi writes them (``YYYY-MM-DDTHH:MM:SS.sssZ``, JavaScript's ``toISOString``)
    parsed by numpy (several times faster than pandas 2's ISO 8601 parser); ``None`` when any
    value has another shape (then pandas parses them all)."""
    texts: list[str] = []
    for v in values:
        if v is None:
            texts.append("NaT")
        elif len(v) == 24 and v[23] == "Z" and v[10] == "T" and v[19] == "." and v[4] == "-" and v[13] == ":":
            texts.append(v[:23])
        else:
            return None
    try:
        parsed = np.array(texts, dtype="datetime64[us]")
    except ValueError:  # a date that does not exist (month 13): pandas makes it NaT
        return None
    return pd.Series(pd.DatetimeIndex(parsed).tz_localize("UTC")).astype(TIMESTAMP_DTYPE).array


def _frame(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """A frame of ``rows`` (tuples in ``columns`` order) with every column in its fixed dtype."""
    data = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    arrays = {c: _typed(list(v), column_dtype(c)) for c, v in zip(columns, data, strict=True)}
    return pd.DataFrame(arrays, columns=list(columns))


def errors_frame(problems: Sequence[tuple[str, int | None, str]]) -> Any:
    """The ``errors`` frame of ``strict=False``: ``file``, ``line`` (``Int64``), ``reason``."""
    return _frame(ERROR_COLUMNS, [tuple(p) for p in problems])


# ---------------------------------------------------------------------------------------------
# loading

_orjson: Any
try:  # the fast path of session files (an optional speed-up; the exact reader is the fallback)
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

_LONG_DIGITS = re.compile(rb"[0-9]{20,}")


def read_session(path: str) -> SessionFileContents:
    """:func:`~pi_nb.session.jsonl.read_session_file`, faster where ``orjson`` is installed.

    The fast path takes a file only when every non-blank line is a JSON object that ``orjson``
    accepts, the first is a session header, the file ends with a newline and no run of 20
    digits appears (``orjson`` reads integers past 64 bits as floats, Python and the exact
    reader keep them whole). Anything else (invalid UTF-8, lone surrogates, a torn or broken
    line, a byte-order mark, JavaScript-only whitespace) goes to the exact reader, so both give
    the same entries.
    """
    if _orjson is None:
        return read_session_file(path)
    try:
        # the kind check of every reader (a FIFO, a device or a socket is refused before a byte
        # is read), and only the bytes the file held at the open: one still being written is
        # read up to that size, never up to its growing end
        with open_session_for_read(path) as f:
            data = f.read(os.fstat(f.fileno()).st_size)
    except FileNotFoundError:
        return read_session_file(path)
    if not data.endswith(b"\n") or _LONG_DIGITS.search(data) is not None:
        return read_session_file(path)
    loads = _orjson.loads
    entries: list[dict[str, Any]] = []  # the lines' JSON objects, as read_session_file gives them
    try:
        for raw in data.split(b"\n"):
            if not raw.strip(b" \t\r"):
                continue
            value = loads(raw)
            if type(value) is not dict:
                return read_session_file(path)
            entries.append(value)
    except _orjson.JSONDecodeError:
        return read_session_file(path)
    header = entries[0] if entries else None
    if not (
        isinstance(header, dict) and header.get("type") == "session" and isinstance(header.get("id"), str)
    ):
        return read_session_file(path)
    # every line was checked to be a JSON object above; the header just now
    return SessionFileContents(
        path, True, len(data), True, cast("list[FileEntry]", entries), (), True, data.count(b"\n")
    )


@dataclass
class LoadedSession:
    """One session, loaded for frames: the manager and the lookups every frame needs."""

    session_id: str
    session_file: str | None
    manager: SessionManager
    entries: list[SessionEntry] = field(default_factory=list)
    active_ids: set[int] = field(default_factory=set)
    """The entries on the active branch, by object (``id(entry)``): Pi reads a session by id,
    the last entry of an id wins, so of two entries with one id only the last is on the branch."""
    context_ids: set[int] = field(default_factory=set)
    """The entries whose messages are in context, by object (``id(entry)``)."""
    leaf_id: str | None = None
    problems: int = 0
    leaf: SessionEntry | None = None
    """The entry Pi takes as the leaf (the last one of the leaf's id)."""
    _messages: list[list[Any]] | None = None
    _estimates: list[int | None] | None = None
    _json: dict[int, tuple[Any, str]] = field(default_factory=dict)

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
    def of(cls, manager: SessionManager, session_file: str | None, problems: int = 0) -> LoadedSession:
        entries = manager.get_entries()
        branch = manager.get_branch()
        active = {id(e) for e in branch}
        leaf = manager.get_leaf_id()
        # Pi's buildContextEntries(): from the leaf, or from the last entry when the leaf has no id
        context = {id(e) for e in manager.build_context_entries()}
        leaf_entry = manager.get_leaf_entry()
        return cls(
            manager.get_session_id(),
            session_file,
            manager,
            list(entries),
            active,
            context,
            leaf,
            problems,
            leaf=leaf_entry,
        )

    def context_messages(self) -> list[list[Any]]:
        """Per entry (file order): the messages it puts in context (computed once)."""
        if self._messages is None:
            self._messages = [session_entry_to_context_messages(e) for e in self.entries]
        return self._messages

    def estimates(self) -> list[int | None]:
        """Per entry: Pi's token estimate of what it puts in context (computed once); ``None``
        (``<NA>`` in a frame) for a message Pi opens but cannot count (a ``null`` content block:
        Pi's estimate throws there), so one such entry does not fail the whole frame."""
        if self._estimates is None:
            self._estimates = [_countable(estimate_tokens, ms) for ms in self.context_messages()]
        return self._estimates


def _countable(count: Callable[[Any], int], messages: Sequence[Any]) -> int | None:
    """``sum(count(m) for m in messages)``, or ``None`` where a message cannot be counted."""
    try:
        return sum(count(m) for m in messages)
    except InvalidMessageError:
        return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class _FileSource:
    path: str
    explicit: bool
    """Named by the caller (not found by walking a directory)."""


def _flatten_sources(source: SessionSource) -> Iterator[SessionManager | _FileSource]:
    if isinstance(source, (SessionManager, _FileSource)):
        yield source
        return
    manager = getattr(source, "session_manager", None)
    if isinstance(manager, SessionManager):  # an AgentSession (or anything that holds one)
        yield manager
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if os.path.isdir(path):
            yield from (_FileSource(p, False) for p in session_files_under(path))
        else:
            yield _FileSource(path, True)
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        for item in source:
            if isinstance(item, Mapping):
                raise NotebookError(
                    "a list of entries is not a session source here: use SessionManager.in_memory(entries=...)"
                )
            yield from _flatten_sources(item)
    else:
        raise NotebookError(
            "a session source must be a SessionManager, an AgentSession, a session file, a directory "
            f"of session files or a list of them, got {type(source).__name__}"
        )


def file_sources(source: Any) -> list[_FileSource]:
    """The session files of a directory, a file or a list of them, each marked as named by the
    caller or found in a directory (a file found there that is not a session is skipped with a
    warning, one named that is not raises)."""
    out: list[_FileSource] = []
    for item in _flatten_sources(source):
        if not isinstance(item, _FileSource):
            raise NotebookError(
                f"a corpus is a directory, a session file or a list of them, got {type(item).__name__}"
            )
        out.append(item)
    return out


class Progress:
    """tqdm.auto over the session files, or nothing (see the module docstring for ``progress``)."""

    def __init__(self, total: int, progress: bool | None, desc: str = "sessions") -> None:
        self.bar: Any = None
        if progress is False or total == 0:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError as exc:
            if progress:
                raise MissingDependencyError(
                    "progress=True needs tqdm: pip install tqdm (a dependency of pi_nb)"
                ) from exc
            return
        self.bar = tqdm(
            total=total, desc=desc, unit="file", delay=0 if progress else 1.0, leave=bool(progress)
        )

    def update(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def warn_problems(path: str, problems: Sequence[tuple[str, int | None, str]]) -> None:
    """The :class:`SessionLoadWarning` for the problems of one file."""
    lines = [f"line {n}: {r}" if n is not None else r for _, n, r in problems]
    shown = "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
    what = f"{len(lines)} line(s) of {path} could not be used and were skipped, as Pi skips them"
    if len(problems) == 1 and problems[0][1] is None:
        what = f"{path} was skipped"
    warnings.warn(f"{what}: {shown} (strict=True raises instead)", SessionLoadWarning, stacklevel=2)


def _load_file(
    item: _FileSource, strict: bool | None, problems: list[tuple[str, int | None, str]]
) -> LoadedSession | None:
    path = item.path
    try:
        contents = read_session(path)
    except (SessionFileTypeError, OSError) as exc:
        # a FIFO, a device or a socket (refused unread), a link that loops, a file that cannot be
        # opened: one bad file of a folder is skipped with its reason, it does not end the folder
        if strict or (strict is None and item.explicit):
            raise
        problems.append((path, None, str(exc)))
        if strict is None:
            warn_problems(path, problems[-1:])
        return None
    if not contents.exists:
        if strict or (strict is None and item.explicit):
            raise NotebookError(f"no such session file: {path}")
        problems.append((path, None, "file not found"))
        if strict is None:
            warn_problems(path, problems[-1:])
        return None
    if not contents.valid:
        if strict or (strict is None and item.explicit):
            raise InvalidSessionFileError(f"Session file is not a valid pi session: {path}")
        problems.append((path, None, "not a pi session (no header with a string id)"))
        if strict is None:
            warn_problems(path, problems[-1:])
        return None
    file_problems = [(path, p.line_number, p.reason) for p in contents.problems]
    if file_problems:
        if strict:
            raise SessionFileCorruptError(
                f"{len(file_problems)} line(s) of {path} could not be used: "
                + "; ".join(f"line {n}: {r}" for _, n, r in file_problems[:3]),
                [(n or 0, r) for _, n, r in file_problems],
            )
        if strict is None:
            warn_problems(path, file_problems)
        problems.extend(file_problems)
    header = contents.entries[0]
    raw_cwd = header.get("cwd")
    cwd = raw_cwd if isinstance(raw_cwd, str) else None
    try:
        manager = SessionManager.in_memory(cwd, entries=contents.entries)
        return LoadedSession.of(manager, path, len(file_problems))
    except PiNbError as exc:
        if strict:
            raise
        problems.append((path, None, f"{type(exc).__name__}: {exc}"))
        if strict is None:
            warn_problems(path, problems[-1:])
        return None


def _iter_loaded(
    source: SessionSource,
    strict: bool | None,
    problems: list[tuple[str, int | None, str]],
    progress: bool | None = None,
    desc: str = "sessions",
) -> Iterator[LoadedSession]:
    """Each session of ``source``, loaded one at a time (memory holds one parsed file)."""
    items = list(_flatten_sources(source))
    bar = Progress(sum(1 for i in items if isinstance(i, _FileSource)), progress, desc)
    try:
        for item in items:
            if isinstance(item, SessionManager):
                yield LoadedSession.of(item, item.get_session_file())
                continue
            loaded = _load_file(item, strict, problems)
            bar.update()
            if loaded is not None:
                yield loaded
    finally:
        bar.close()


def iter_sessions(
    source: SessionSource, *, strict: bool | None = None, progress: bool | None = None
) -> tuple[list[LoadedSession], list[tuple[str, int | None, str]]]:
    """Load every session of ``source`` without writing: ``(sessions, problems)``.

    The one normalisation of a session source that the frames, the plots and the views share.
    ``strict`` as in the module docstring (``False`` and ``None`` both return the problems;
    ``None`` also warns).
    """
    problems: list[tuple[str, int | None, str]] = []
    sessions = list(_iter_loaded(source, strict, problems, progress))
    return sessions, problems


def session_managers(
    source: SessionSource, *, strict: bool | None = None, progress: bool | None = None
) -> list[SessionManager]:
    """The :class:`SessionManager` of every session of ``source`` (files loaded in memory, never
    written; a manager or an AgentSession's manager used as it is)."""
    return [s.manager for s in iter_sessions(source, strict=strict, progress=progress)[0]]


# ---------------------------------------------------------------------------------------------
# text helpers


def _is_map(b: Any) -> bool:
    return type(b) is dict or isinstance(b, Mapping)


def _text(content: Any) -> str:
    if type(content) is str:
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if (type(b) is dict or isinstance(b, Mapping))
            and b.get("type") == "text"
            and type(b.get("text")) is str
        )
    if isinstance(content, str):
        return content
    return ""


def _images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if (type(b) is dict or isinstance(b, Mapping)) and b.get("type") == "image")


_ENTRY_ROLES = {
    "custom_message": "custom",
    "branch_summary": "branchSummary",
    "compaction": "compactionSummary",
}


def _role(entry: SessionEntry) -> Any:
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        return msg.get("role") if isinstance(msg, Mapping) else None
    return _ENTRY_ROLES.get(str(etype))


def _short(entry: SessionEntry, limit: int = 200, stringify: Callable[[Any], str] = js_stringify) -> str:
    etype = entry.get("type")
    if etype == "message":
        msg = _mapping(entry.get("message"))
        if msg.get("role") == "bashExecution":
            text = str(msg.get("command") or "")
        else:
            text = _text(msg.get("content"))
            if not text and msg.get("role") == "assistant":
                text = " ".join(
                    f"{b.get('name')}({stringify(b.get('arguments'))})"
                    for b in msg.get("content") or []
                    if _is_map(b) and b.get("type") == "toolCall"
                )
    elif etype == "custom_message":
        text = _text(entry.get("content"))
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


def _depths(parent_of: Mapping[str, object]) -> dict[str, int]:
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


def _entry_id(e: SessionEntry) -> str | None:
    """An entry's id as a frame shows it: ``None`` (missing) for an entry without one, never the
    text ``"None"``."""
    eid = e.get("id")
    return None if eid is None else str(eid)


def _entry_depth(e: SessionEntry, depth: Mapping[str, int], last: Mapping[str, SessionEntry]) -> int:
    """The entry's distance from the root. ``depth`` is by id (the last entry of an id, as Pi
    reads them); an entry without an id, or an earlier one of two with the same id, sits one
    below the parent it names."""
    eid = e.get("id")
    if eid is not None and last.get(str(eid)) is e:
        return depth.get(str(eid), 0)
    parent = e.get("parentId")
    return depth[str(parent)] + 1 if parent is not None and str(parent) in depth else 0


_UNDEFINED = object()  # a key JavaScript reads as `undefined` (the field is missing)


def _js_key(entry: SessionEntry, field: str) -> object:
    """``entry[field]`` as a JavaScript ``Map`` key: missing is ``undefined`` (not ``null``), an
    object or array is a key of its own."""
    if field not in entry:
        return _UNDEFINED
    value = entry.get(field)
    try:
        hash(value)
    except TypeError:
        return ("<object>", id(value))
    return value


def _pi_tree_leaves(entries: Sequence[SessionEntry]) -> int:
    """The leaf nodes of Pi's ``getTree()``: one node per entry, keyed by id (the last entry of
    an id is every node of that id, with its children), so an entry without an id, or with an id
    used twice, is a node of its own and a subtree under a repeated id is counted at each place
    it shows. Counted without walking the repeated subtrees (and without looping where the
    parents form a cycle, where Pi's walk would not end)."""
    keys = [_js_key(e, "id") for e in entries]
    present = set(keys)
    children: dict[object, list[object]] = {}
    roots: list[object] = []
    for e, k in zip(entries, keys, strict=True):
        parent = _js_key(e, "parentId")
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


def _children(s: LoadedSession) -> dict[str, int]:
    children: dict[str, int] = {}
    for e in s.entries:
        p = e.get("parentId")
        if p is not None:
            children[str(p)] = children.get(str(p), 0) + 1
    return children


def _usage_context_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """Pi's ``calculateContextTokens`` of a stored usage (not validated: ``None`` where it fails)."""
    if not usage:
        return None
    try:
        return calculate_context_tokens(cast("Usage", usage))  # checked there: InvalidMessageError
    except InvalidMessageError:
        return None


# ---------------------------------------------------------------------------------------------
# rows of each kind, for one session (tuples in the kind's column order)


def _entry_rows(s: LoadedSession, encoding: str | None) -> list[tuple[Any, ...]]:
    children = _children(s)
    last = {str(e.get("id")): e for e in s.entries if e.get("id") is not None}
    depth = _depths({k: e.get("parentId") for k, e in last.items()})
    estimates = s.estimates()
    msgs = s.context_messages() if encoding else None
    sid, sfile, active, context, leaf = s.session_id, s.session_file, s.active_ids, s.context_ids, s.leaf
    label = s.manager.get_label
    rows: list[tuple[Any, ...]] = []
    for i, e in enumerate(s.entries):
        eid = _entry_id(e)
        row: tuple[Any, ...] = (
            sid,
            sfile,
            eid,
            e.get("parentId"),
            e.get("timestamp"),
            e.get("type"),
            _role(e),
            _short(e, 200, s.stringify),
            label(eid) if eid is not None else None,
            _entry_depth(e, depth, last),
            children.get(eid, 0) if eid is not None else 0,
            id(e) in active,
            id(e) in context,
            e is leaf,
            estimates[i],
        )
        if msgs is not None and encoding:
            row = (*row, _countable(lambda m: count_message_tokens(m, encoding), msgs[i]))
        rows.append(row)
    return rows


def _message_rows(s: LoadedSession, encoding: str | None) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    estimates = s.estimates()
    sid, sfile, active, context = s.session_id, s.session_file, s.active_ids, s.context_ids
    for i, msgs in enumerate(s.context_messages()):
        if not msgs:
            continue
        e = s.entries[i]
        m = msgs[0]
        role = m.get("role")
        content = m.get("content")
        thinking = 0
        calls: list[str] = []
        if role == "assistant" and isinstance(content, list):
            for b in content:
                if not (type(b) is dict or isinstance(b, Mapping)):
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
            text = _text(content)
        eid = _entry_id(e)
        row: tuple[Any, ...] = (
            sid,
            sfile,
            eid,
            e.get("parentId"),
            e.get("timestamp"),
            role,
            text,
            len(text),
            thinking,
            _images(content),
            len(calls),
            ",".join(calls),
            m.get("toolCallId"),
            m.get("toolName"),
            m.get("isError") if role == "toolResult" else None,
            m.get("stopReason"),
            m.get("provider"),
            m.get("model"),
            id(e) in active,
            id(e) in context,
            estimates[i],
        )
        if encoding:
            row = (*row, _countable(lambda m: count_message_tokens(m, encoding), msgs))
        rows.append(row)
    return rows


def _tool_result_rows(s: LoadedSession) -> list[tuple[Any, ...]]:
    calls: dict[str, tuple[str | None, Any]] = {}
    # (entry, its toolResult message as stored: checked to be a mapping, its fields read tolerantly)
    results: list[tuple[SessionEntry, Mapping[str, Any]]] = []
    for e in s.entries:
        if e.get("type") != "message":
            continue
        m = e.get("message")
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        if role == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if _is_map(b) and b.get("type") == "toolCall":
                    calls[str(b.get("id"))] = (_entry_id(e), b.get("arguments"))
        elif role == "toolResult":
            results.append((e, m))
    rows: list[tuple[Any, ...]] = []
    for e, m in results:
        eid = _entry_id(e)
        details = _mapping(m.get("details"))
        trunc = _mapping(details.get("truncation"))
        call = calls.get(str(m.get("toolCallId")))
        text = _text(m.get("content"))
        truncation = [trunc.get(camel) for camel, _ in TRUNCATION_FIELDS]
        if not trunc:
            truncation[0] = False
        rows.append(
            (
                s.session_id,
                s.session_file,
                eid,
                e.get("parentId"),
                e.get("timestamp"),
                m.get("toolCallId"),
                m.get("toolName"),
                call[0] if call else None,
                s.stringify(call[1]) if call and call[1] is not None else None,
                bool(m.get("isError")),
                len(text),
                len(js_utf8_encode(text)),
                _images(m.get("content")),
                *truncation,
                details.get("fullOutputPath"),
                details.get("matchLimitReached"),
                details.get("resultLimitReached"),
                details.get("entryLimitReached"),
                details.get("linesTruncated"),
                id(e) in s.active_ids,
                id(e) in s.context_ids,
            )
        )
    return rows


def _assistant(e: SessionEntry) -> Mapping[str, Any] | None:
    """The entry's message if it is an assistant's (as stored: its fields are read tolerantly)."""
    m = e.get("message") if e.get("type") == "message" else None
    return m if isinstance(m, Mapping) and m.get("role") == "assistant" else None


def _usage_rows(s: LoadedSession) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for e in s.entries:
        m = _assistant(e)
        if m is None:
            continue
        raw = m.get("usage")
        usage: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        cost = _mapping(usage.get("cost"))
        ctx = _usage_context_tokens(usage)
        eid = _entry_id(e)
        rows.append(
            (
                s.session_id,
                s.session_file,
                eid,
                e.get("parentId"),
                e.get("timestamp"),
                m.get("provider"),
                m.get("model"),
                m.get("api"),
                m.get("stopReason"),
                usage.get("input"),
                usage.get("output"),
                usage.get("cacheRead"),
                usage.get("cacheWrite"),
                usage.get("totalTokens"),
                ctx,
                bool(ctx and ctx > 0 and m.get("stopReason") not in ("aborted", "error")),
                cost.get("input"),
                cost.get("output"),
                cost.get("cacheRead"),
                cost.get("cacheWrite"),
                cost.get("total"),
                id(e) in s.active_ids,
                id(e) in s.context_ids,
            )
        )
    return rows


def _compaction_rows(s: LoadedSession) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for i, e in enumerate(s.entries):
        if e.get("type") != "compaction":
            continue
        eid = _entry_id(e)
        after = build_session_context(s.entries, eid).messages
        details = _mapping(e.get("details"))
        usage = _mapping(e.get("usage"))
        raw_summary = e.get("summary")
        summary = raw_summary if isinstance(raw_summary, str) else ""
        rows.append(
            (
                s.session_id,
                s.session_file,
                eid,
                e.get("parentId"),
                e.get("timestamp"),
                e.get("tokensBefore"),
                e.get("firstKeptEntryId"),
                summary,
                len(summary),
                s.estimates()[i],
                sum(estimate_tokens(m) for m in after),
                json.dumps(details.get("readFiles")) if "readFiles" in details else None,
                json.dumps(details.get("modifiedFiles")) if "modifiedFiles" in details else None,
                e.get("fromHook"),
                usage.get("totalTokens"),
                id(e) in s.active_ids,
                id(e) in s.context_ids,
            )
        )
    return rows


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
        return _as_float(calculate_cost(spec, usage)["total"])
    except (PiNbError, TypeError, ValueError):
        return None


def _session_row(s: LoadedSession) -> tuple[Any, ...]:
    header = _mapping(s.manager.get_header())
    children = _children(s)
    models: dict[str, None] = {}
    last_model: str | None = None
    turns = responses = tool_calls = tool_errors = error_responses = 0
    compactions = branch_summaries = messages = 0
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
            messages += 1
        if etype == "compaction":
            compactions += 1
        elif etype == "branch_summary":
            branch_summaries += 1
        elif etype == "model_change":
            spec = f"{e.get('provider')}/{e.get('modelId')}"
            models.setdefault(spec)
            last_model = spec
        if etype != "message":
            continue
        m = _mapping(e.get("message"))
        role = m.get("role")
        if role == "user":
            turns += 1
        elif role == "toolResult" and m.get("isError") is True:
            tool_errors += 1
        elif role == "assistant":
            responses += 1
            if m.get("stopReason") == "error":
                error_responses += 1
            content = m.get("content")
            if isinstance(content, list):
                tool_calls += sum(1 for b in content if _is_map(b) and b.get("type") == "toolCall")
            if isinstance(m.get("provider"), str) and isinstance(m.get("model"), str):
                spec = f"{m['provider']}/{m['model']}"
                models.setdefault(spec)
                last_model = spec
            usage = _mapping(m.get("usage"))
            for key in sums:
                value = usage.get(key)
                if type(value) is int or type(value) is float:
                    sums[key] += value
            cost = _as_float(_mapping(usage.get("cost")).get("total"))
            if cost is None and usage:
                cost = _price(m.get("provider"), m.get("model"), usage)
            if cost is None:
                unpriced += 1
            else:
                cost_total = (cost_total or 0.0) + cost
    last_ctx: int | None = None
    peak: int | None = None
    for e in s.manager.get_branch():
        a = _assistant(e)
        if a is None or a.get("stopReason") in ("aborted", "error"):
            continue
        ctx = _usage_context_tokens(a.get("usage") if isinstance(a.get("usage"), Mapping) else None)
        if ctx:
            last_ctx = ctx
            peak = ctx if peak is None else max(peak, ctx)
    start = (
        header.get("timestamp") if isinstance(header.get("timestamp"), str) else (times[0] if times else None)
    )
    return (
        s.session_id,
        s.session_file,
        header.get("cwd"),
        s.manager.get_session_name(),
        header.get("parentSession"),
        start,
        _latest(times) if times else start,
        last_model,
        ",".join(models),
        len(s.entries),
        messages,
        turns,
        responses,
        tool_calls,
        tool_errors,
        error_responses,
        compactions,
        branch_summaries,
        sum(1 for n in children.values() if n > 1),
        _pi_tree_leaves(s.entries),
        len(s.active_ids),
        s.leaf_id,
        *(_as_int(sums[k]) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")),
        last_ctx,
        peak,
        cost_total,
        unpriced,
        s.problems,
    )


def _latest(times: list[str]) -> str | None:
    """The latest of ISO 8601 times (Pi writes ``YYYY-MM-DDTHH:MM:SS.sssZ``: those compare as text)."""
    n = len(times[0])
    if all(len(t) == n and t.endswith("Z") for t in times):
        return max(times)
    parsed = pd.to_datetime(pd.Series(times, dtype=object), utc=True, errors="coerce", format="ISO8601")
    if parsed.isna().all():
        return None
    return str(times[int(parsed.argmax())])


# ---------------------------------------------------------------------------------------------
# the frames


_ROW_BUILDERS: dict[str, Callable[[LoadedSession, str | None], list[tuple[Any, ...]]]] = {
    "entries": _entry_rows,
    "messages": _message_rows,
    "tool_results": lambda s, _enc: _tool_result_rows(s),
    "usage": lambda s, _enc: _usage_rows(s),
    "compactions": lambda s, _enc: _compaction_rows(s),
    "sessions": lambda s, _enc: [_session_row(s)],
}


def _columns(kind: str, encoding: str | None) -> tuple[str, ...]:
    cols = FRAME_COLUMNS[kind]
    return (*cols, "tokens") if encoding and kind in ("entries", "messages") else cols


def _check_kinds(kinds: Sequence[str]) -> None:
    for kind in kinds:
        if kind not in FRAME_COLUMNS:
            raise NotebookError(f"unknown frame kind {kind!r} (one of {', '.join(FRAME_KINDS)})")


def session_rows(
    source: SessionSource,
    kinds: Sequence[str],
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
) -> tuple[dict[str, list[tuple[Any, ...]]], list[tuple[str, int | None, str]]]:
    """The rows of each frame kind for ``source`` (each file read once, for every kind), and the
    problems met. :func:`frame_of_rows` turns rows into the frame."""
    _check_kinds(kinds)
    problems: list[tuple[str, int | None, str]] = []
    rows: dict[str, list[tuple[Any, ...]]] = {k: [] for k in kinds}
    builders = [(rows[k], _ROW_BUILDERS[k]) for k in kinds]
    # the rows and the parsed sessions hold no reference cycles: a collector pass over the
    # growing heap would cost a fifth of the time
    with gc_paused():
        for s in _iter_loaded(source, strict, problems, progress):
            for out, build in builders:
                out.extend(build(s, encoding))
    return rows, problems


def frame_of_rows(kind: str, rows: Sequence[Sequence[Any]], *, encoding: str | None = None) -> Any:
    """The frame of ``kind`` from rows of :func:`session_rows` (every column in its fixed dtype)."""
    _check_kinds([kind])
    return _frame(_columns(kind, encoding), rows)


def session_frames(
    source: SessionSource,
    kinds: Sequence[str] = FRAME_KINDS,
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
) -> Any:
    """Several frames of ``source`` at once, reading each session file once: ``{kind: frame}``
    (``kinds`` among :data:`FRAME_KINDS`); each frame equals ``<kind>_df(source)``. With
    ``strict=False``: ``({kind: frame}, errors)``."""
    rows, problems = session_rows(source, kinds, strict=strict, encoding=encoding, progress=progress)
    frames = {k: frame_of_rows(k, rows[k], encoding=encoding) for k in kinds}
    return frames if strict is not False else (frames, errors_frame(problems))


def _one(
    kind: str, source: SessionSource, strict: bool | None, encoding: str | None, progress: bool | None
) -> Any:
    rows, problems = session_rows(source, [kind], strict=strict, encoding=encoding, progress=progress)
    df = frame_of_rows(kind, rows[kind], encoding=encoding)
    return df if strict is not False else (df, errors_frame(problems))


def entries_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
) -> Any:
    """One row per session entry (file order).

    Columns: the id columns, ``type``, ``role`` (message role; ``custom`` / ``branchSummary`` /
    ``compactionSummary`` for the entries that become those messages), ``text`` (a short
    one-line text), ``label`` (the entry's current label), ``depth`` (0 for a root),
    ``children``, ``on_active_branch``, ``in_context``, ``is_leaf``, ``estimate_tokens`` (Pi's
    chars/4 estimate of what the entry puts in context) and, with ``encoding``, ``tokens``
    (tiktoken).
    """
    return _one("entries", source, strict, encoding, progress)


def messages_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
) -> Any:
    """One row per entry that puts a message in context (``message``, ``custom_message``,
    ``branch_summary`` with a summary, ``compaction``), with the message's role, its full text
    (``text``: text blocks joined; a bash execution's command and output; a summary) and its
    parts; ``is_error`` is set for tool results only; ``estimate_tokens`` is Pi's estimate,
    ``tokens`` (with ``encoding``) tiktoken."""
    return _one("messages", source, strict, encoding, progress)


def tool_results_df(
    source: SessionSource, *, strict: bool | None = None, progress: bool | None = None
) -> Any:
    """One row per ``toolResult`` message, with the call that asked for it and Pi's truncation
    details (``details.truncation`` fields as snake_case columns; ``<NA>`` where the tool
    stored none), ``full_output_path`` (bash) and the grep/find/ls limit flags.

    ``content_bytes`` is the UTF-8 size of what the model saw (kept text plus notice);
    ``arguments`` is the call's arguments as compact JSON.
    """
    return _one("tool_results", source, strict, None, progress)


def usage_df(source: SessionSource, *, strict: bool | None = None, progress: bool | None = None) -> Any:
    """One row per assistant message with its provider usage (and cost, as the message stored it).

    ``context_tokens`` is Pi's ``calculateContextTokens`` (``totalTokens``, or the sum of the
    parts when it is 0); ``usable`` is Pi's test for a usage its threshold maths may use (not
    aborted or errored, more than 0 tokens). Branch summaries and compactions that carry the
    usage of their summarising call are not included (see :func:`compactions_df`).
    """
    return _one("usage", source, strict, None, progress)


def compactions_df(source: SessionSource, *, strict: bool | None = None, progress: bool | None = None) -> Any:
    """One row per ``compaction`` entry: ``tokens_before`` (Pi's estimate when it compacted),
    ``first_kept_entry_id``, the summary, ``estimate_tokens_after`` (Pi's ``estimatedTokensAfter``:
    the sum of ``estimateTokens`` over the context rebuilt at the compaction), the file lists
    from ``details`` (as JSON arrays), ``from_hook`` and the summarising call's total tokens."""
    return _one("compactions", source, strict, None, progress)


def sessions_df(
    source: SessionSource,
    columns: Sequence[str] | None = None,
    progress: bool | None = None,
    *,
    strict: bool | None = None,
) -> Any:
    """One row per session (like Inspect AI's ``evals_df``), in the order the files are read.

    Columns (:data:`SESSION_COLUMNS`; ``columns=`` picks some, in that order): ``session_id``,
    ``session_file``, ``cwd``, ``name`` (the latest ``session_info`` name), ``parent_session``
    (the header's), ``start`` (the header's time) and ``end`` (the latest entry's time), ``model`` (the last model used)
    and ``models`` (every ``provider/model`` used, comma-separated, in order of first use);
    counts: ``entries`` (without the header), ``messages`` (entries that put a message in
    context), ``turns`` (user prompts), ``responses`` (assistant messages), ``tool_calls``,
    ``tool_errors``, ``error_responses``, ``compactions``, ``branch_summaries``,
    ``branch_points`` (entries with more than one child), ``leaves`` (the leaf nodes of Pi's
    session tree: one per branch; an entry without an id is a node of its own, a subtree under
    an id used twice counts at each place Pi shows it), ``active_branch_entries``, ``leaf_id``; tokens summed over every response
    (``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``,
    ``total_tokens``), ``last_context_tokens`` / ``peak_context_tokens`` (Pi's context size from
    the usable usages on the active branch); ``cost_total`` (the sum of ``usage.cost.total``;
    a response whose usage stores no cost is priced from the model catalog where pi_nb has
    one, else counted in ``unpriced_responses``; ``<NA>`` when no response has a cost) and
    ``problems`` (lines of the file that could not be used).

    ``progress`` as in the module docstring; ``strict`` too.
    """
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        unknown = [c for c in columns if c not in SESSION_COLUMNS]
        if unknown:
            raise NotebookError(
                f"unknown sessions_df column(s) {', '.join(map(repr, unknown))}; "
                f"the columns are: {', '.join(SESSION_COLUMNS)}"
            )
    result = _one("sessions", source, strict, None, progress)
    if columns is None:
        return result
    if strict is False:
        return result[0][list(columns)], result[1]
    return result[list(columns)]


def session_list_df(infos: Sequence[Any]) -> Any:
    """A frame of Pi's session list (:func:`pi_nb.session.paths.list_sessions`'s
    :class:`~pi_nb.session.paths.SessionInfo` objects), one row each, in their order: the
    snake_case columns of the other frames (``session_id``, ``session_file``, ``cwd``, ``name``,
    ``parent_session_file``, ``created`` and ``modified`` as UTC datetimes, ``message_count``,
    ``first_message``), the same columns and dtypes when the list is empty."""
    rows = [
        (
            i.id,
            i.path,
            i.cwd,
            i.name,
            i.parent_session_path,
            _iso_utc(i.created),
            _iso_utc(i.modified),
            i.message_count,
            i.first_message,
        )
        for i in infos
    ]
    return _frame(SESSION_LIST_COLUMNS, rows)


def _iso_utc(value: Any) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        return str(value.isoformat()) + "Z"
    return str(value.isoformat())
