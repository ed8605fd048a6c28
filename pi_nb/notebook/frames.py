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

The rows are the engine's (:mod:`pi_nb.analysis`: the columns declared in
:mod:`pi_nb.analysis.columns`, read from the row contexts of :mod:`pi_nb.analysis.extract`,
sessions loaded by :mod:`pi_nb.session.source`); this module makes the frames (one fixed dtype
per column) and shows the progress bar. Every frame function takes ``columns=`` (default all):
only the columns asked for are read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pi_nb.analysis import columns as _cols
from pi_nb.analysis.columns import COMPACTION_COLUMNS as COMPACTION_COLUMNS
from pi_nb.analysis.columns import ENTRY_COLUMNS as ENTRY_COLUMNS
from pi_nb.analysis.columns import FRAME_COLUMNS as FRAME_COLUMNS
from pi_nb.analysis.columns import FRAME_DTYPES as FRAME_DTYPES
from pi_nb.analysis.columns import FRAME_KINDS as FRAME_KINDS
from pi_nb.analysis.columns import MESSAGE_COLUMNS as MESSAGE_COLUMNS
from pi_nb.analysis.columns import SESSION_COLUMNS as SESSION_COLUMNS
from pi_nb.analysis.columns import TIMESTAMP_DTYPE as TIMESTAMP_DTYPE
from pi_nb.analysis.columns import TOOL_RESULT_COLUMNS as TOOL_RESULT_COLUMNS
from pi_nb.analysis.columns import USAGE_COLUMNS as USAGE_COLUMNS
from pi_nb.analysis.columns import Column as Column
from pi_nb.analysis.columns import ColumnPick, check_kinds, select_columns
from pi_nb.analysis.columns import column_dtype as column_dtype
from pi_nb.analysis.extract import LoadedSession as LoadedSession
from pi_nb.analysis.extract import as_float, as_int, as_text
from pi_nb.analysis.rows import iter_loaded
from pi_nb.analysis.rows import session_rows as _engine_rows
from pi_nb.errors import MissingDependencyError
from pi_nb.session.manager import SessionManager
from pi_nb.session.source import Problem, SessionFile, session_file_items
from pi_nb.session.source import SessionLoadWarning as SessionLoadWarning
from pi_nb.session.source import SessionSource as SessionSource
from pi_nb.session.source import read_session as read_session
from pi_nb.session.source import warn_problems as warn_problems

__all__ = [
    "ERROR_COLUMNS",
    "FRAME_DTYPES",
    "FRAME_KINDS",
    "SESSION_COLUMNS",
    "SessionLoadWarning",
    "SessionSource",
    "compactions_df",
    "entries_df",
    "estimate_drift_df",
    "iter_sessions",
    "messages_df",
    "retention_df",
    "retention_summary_df",
    "session_frames",
    "session_list_df",
    "session_managers",
    "sessions_df",
    "tool_results_df",
    "usage_df",
]

# the engine's names, importable from here as before
_FileSource = SessionFile
file_sources = session_file_items
_as_text, _as_int, _as_float = as_text, as_int, as_float

ERROR_COLUMNS = tuple(name for name, _dtype in _cols.ERROR_COLUMNS)
SESSION_LIST_COLUMNS = tuple(name for name, _dtype in _cols.SESSION_LIST_COLUMNS)
TRUNCATION_FIELDS = tuple((camel, snake) for camel, snake, _dtype in _cols.TRUNCATION_FIELDS)
STRING_DTYPE = pd.StringDtype("python")
"""The dtype of the text columns: pandas' ``string`` with ``<NA>`` for missing, stored as Python
strings whatever the pandas version (pandas 3 would pick pyarrow storage where pyarrow is
installed, pandas 2 Python storage: a frame would then differ between machines)."""


# ---------------------------------------------------------------------------------------------
# typed columns

_NONE = type(None)


def _typed(values: list[Any], dtype: str) -> Any:
    """``values`` (plain Python, ``None`` = missing) as a pandas array of ``dtype``; a value of the
    wrong JSON type (a string where a count belongs, from a hand-edited file) becomes missing."""
    types = set(map(type, values))
    if dtype == "string":
        if not types <= {str, _NONE}:
            values = [as_text(v) for v in values]
        return pd.array(values, dtype=STRING_DTYPE)
    if dtype == "Int64":
        if not types <= {int, _NONE}:
            values = [as_int(v) for v in values]
        try:
            return pd.array(values, dtype="Int64")
        except (OverflowError, TypeError, ValueError):  # an integer past 64 bits
            return pd.array([as_int(v) for v in values], dtype="Int64")
    if dtype == "boolean":
        if not types <= {bool, _NONE}:
            values = [v if type(v) is bool else None for v in values]
        return pd.array(values, dtype="boolean")
    if dtype == "Float64":
        return pd.array([as_float(v) for v in values], dtype="Float64")
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


def _frame(columns: Sequence[str | Column], rows: Sequence[Sequence[Any]]) -> Any:
    """A frame of ``rows`` (tuples in ``columns`` order) with every column in its dtype (a
    :class:`~pi_nb.analysis.columns.Column`'s own, a name's :func:`column_dtype`)."""
    names = [c if isinstance(c, str) else c.name for c in columns]
    dtypes = [column_dtype(c) if isinstance(c, str) else c.dtype for c in columns]
    data = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    arrays = {n: _typed(list(v), d) for n, d, v in zip(names, dtypes, data, strict=True)}
    return pd.DataFrame(arrays, columns=names)


def errors_frame(problems: Sequence[Problem]) -> Any:
    """The ``errors`` frame of ``strict=False``: ``file``, ``line`` (``Int64``), ``reason``."""
    return _frame(ERROR_COLUMNS, [tuple(p) for p in problems])


# ---------------------------------------------------------------------------------------------
# the progress bar


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


def _bar(progress: bool | None, desc: str = "sessions") -> Any:
    """The progress bar factory the engine's loader calls with the number of files."""
    return lambda total: Progress(total, progress, desc)


# ---------------------------------------------------------------------------------------------
# sessions


def iter_sessions(
    source: SessionSource, *, strict: bool | None = None, progress: bool | None = None
) -> tuple[list[LoadedSession], list[Problem]]:
    """Load every session of ``source`` without writing: ``(sessions, problems)``.

    The sessions of the frames, the plots and the views (:mod:`pi_nb.session.source`).
    ``strict`` as in the module docstring (``False`` and ``None`` both return the problems;
    ``None`` also warns).
    """
    problems: list[Problem] = []
    sessions = list(iter_loaded(source, strict, problems, _bar(progress)))
    return sessions, problems


def session_managers(
    source: SessionSource, *, strict: bool | None = None, progress: bool | None = None
) -> list[SessionManager]:
    """The :class:`SessionManager` of every session of ``source`` (files loaded in memory, never
    written; a manager or an AgentSession's manager used as it is)."""
    return [s.manager for s in iter_sessions(source, strict=strict, progress=progress)[0]]


# ---------------------------------------------------------------------------------------------
# the frames

Columns = Mapping[str, ColumnPick]
"""``{kind: the column names to read}`` (a kind missing, or ``None``: every column)."""


def session_rows(
    source: SessionSource,
    kinds: Sequence[str],
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
    columns: Columns | None = None,
) -> tuple[dict[str, list[tuple[Any, ...]]], list[Problem]]:
    """The rows of each frame kind for ``source`` (each file read once, for every kind), and the
    problems met. :func:`frame_of_rows` turns rows into the frame (with the same ``columns``)."""
    _picked, rows, problems = _engine_rows(
        source, kinds, columns=columns, strict=strict, encoding=encoding, progress=_bar(progress)
    )
    return rows, problems


def frame_of_rows(
    kind: str,
    rows: Sequence[Sequence[Any]],
    *,
    encoding: str | None = None,
    columns: ColumnPick = None,
) -> Any:
    """The frame of ``kind`` from rows of :func:`session_rows` (every column in its fixed dtype)."""
    return _frame(select_columns(kind, columns, encoding=encoding), rows)


def session_frames(
    source: SessionSource,
    kinds: Sequence[str] = FRAME_KINDS,
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
    columns: Columns | None = None,
) -> Any:
    """Several frames of ``source`` at once, reading each session file once: ``{kind: frame}``
    (``kinds`` among :data:`FRAME_KINDS`; ``columns={kind: [names]}`` reads only those columns
    of a kind); each frame equals ``<kind>_df(source)``. With ``strict=False``:
    ``({kind: frame}, errors)``."""
    picked, rows, problems = _engine_rows(
        source, kinds, columns=columns, strict=strict, encoding=encoding, progress=_bar(progress)
    )
    frames = {k: _frame(picked[k], rows[k]) for k in kinds}
    return frames if strict is not False else (frames, errors_frame(problems))


def _one(
    kind: str,
    source: SessionSource,
    strict: bool | None,
    encoding: str | None,
    progress: bool | None,
    columns: ColumnPick = None,
) -> Any:
    check_kinds([kind])
    got = session_frames(
        source, [kind], strict=strict, encoding=encoding, progress=progress, columns={kind: columns}
    )
    return got[kind] if strict is not False else (got[0][kind], got[1])


def entries_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
    columns: ColumnPick = None,
) -> Any:
    """One row per session entry (file order).

    Columns: the id columns, ``type``, ``role`` (message role; ``custom`` / ``branchSummary`` /
    ``compactionSummary`` for the entries that become those messages), ``text`` (a short
    one-line text), ``label`` (the entry's current label), ``depth`` (0 for a root),
    ``children``, ``on_active_branch``, ``in_context``, ``is_leaf``, ``estimate_tokens`` (Pi's
    chars/4 estimate of what the entry puts in context) and, with ``encoding``, ``tokens``
    (tiktoken). ``columns=`` reads only some, in that order.
    """
    return _one("entries", source, strict, encoding, progress, columns)


def messages_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: bool | None = None,
    columns: ColumnPick = None,
) -> Any:
    """One row per entry that puts a message in context (``message``, ``custom_message``,
    ``branch_summary`` with a summary, ``compaction``), with the message's role, its full text
    (``text``: text blocks joined; a bash execution's command and output; a summary) and its
    parts; ``is_error`` is set for tool results only; ``estimate_tokens`` is Pi's estimate,
    ``tokens`` (with ``encoding``) tiktoken. ``columns=`` reads only some, in that order."""
    return _one("messages", source, strict, encoding, progress, columns)


def tool_results_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    progress: bool | None = None,
    columns: ColumnPick = None,
) -> Any:
    """One row per ``toolResult`` message, with the call that asked for it and Pi's truncation
    details (``details.truncation`` fields as snake_case columns; ``<NA>`` where the tool
    stored none), ``full_output_path`` (bash) and the grep/find/ls limit flags.

    ``content_bytes`` is the UTF-8 size of what the model saw (kept text plus notice);
    ``arguments`` is the call's arguments as compact JSON. ``columns=`` reads only some.
    """
    return _one("tool_results", source, strict, None, progress, columns)


def usage_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    progress: bool | None = None,
    columns: ColumnPick = None,
) -> Any:
    """One row per assistant message with its provider usage (and cost, as the message stored it).

    ``context_tokens`` is Pi's ``calculateContextTokens`` (``totalTokens``, or the sum of the
    parts when it is 0); ``usable`` is Pi's test for a usage its threshold maths may use (not
    aborted or errored, more than 0 tokens). Branch summaries and compactions that carry the
    usage of their summarising call are not included (see :func:`compactions_df`).
    ``columns=`` reads only some.
    """
    return _one("usage", source, strict, None, progress, columns)


def compactions_df(
    source: SessionSource,
    *,
    strict: bool | None = None,
    progress: bool | None = None,
    columns: ColumnPick = None,
) -> Any:
    """One row per ``compaction`` entry: ``tokens_before`` (Pi's estimate when it compacted),
    ``first_kept_entry_id``, the summary, ``estimate_tokens_after`` (Pi's ``estimatedTokensAfter``:
    the sum of ``estimateTokens`` over the context rebuilt at the compaction), the file lists
    from ``details`` (as JSON arrays), ``from_hook`` and the summarising call's total tokens.
    ``columns=`` reads only some (``estimate_tokens_after`` rebuilds a context: leave it out
    when it is not needed)."""
    return _one("compactions", source, strict, None, progress, columns)


def sessions_df(
    source: SessionSource,
    columns: ColumnPick = None,
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

    ``progress`` as in the module docstring; ``strict`` too. Only the columns asked for are
    read.
    """
    return _one("sessions", source, strict, None, progress, columns)


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


# ---------------------------------------------------------------------------------------------
# research frames: what compactions keep, how far the estimates drift


def _is_replay(value: Any) -> bool:
    return hasattr(value, "compactions") and hasattr(value, "entries") and hasattr(value, "decisions")


def _retention_groups(source: Any, strict: bool | None, progress: bool | None) -> list[Any]:
    """``(session id, file, policy, simulated, retentions)`` for a replay, ``{policy: replay}``,
    a list of replays, or a session source (its recorded compactions)."""
    from pi_nb.analysis.retention import replay_retention, session_retention

    if _is_replay(source):
        source = {None: source}
    if (
        isinstance(source, Sequence)
        and source
        and not isinstance(source, str)
        and all(map(_is_replay, source))
    ):
        source = {None: source[0]} if len(source) == 1 else {f"replay {i}": r for i, r in enumerate(source)}
    if isinstance(source, Mapping) and source and all(map(_is_replay, source.values())):
        return [
            (r.session_id, r.session_file, policy, True, replay_retention(r)) for policy, r in source.items()
        ]
    sessions, _problems = iter_sessions(source, strict=strict, progress=progress)
    return [(s.session_id, s.session_file, None, False, session_retention(s.entries)) for s in sessions]


def retention_df(source: Any, *, strict: bool | None = None, progress: bool | None = None) -> Any:
    """One row per (compaction, artifact): what the summarised span held and where it survives.

    ``source``: a session source (its recorded compactions), a
    :class:`~pi_nb.what_if.ReplayResult` (the compactions a replayed policy made), a list of
    those, or ``{policy label: ReplayResult}``. Columns: ``session_id``, ``session_file``,
    ``policy`` (the label, ``<NA>`` for recorded compactions), ``simulated``,
    ``compaction_index`` (0-based, per session / replay), ``compaction_id``, ``span``
    (``dropped``: summarised; ``kept``: still in context), ``entry_id`` (where the artifact
    first shows), ``kind`` (``file_read``, ``file_modified``, ``command``, ``identifier``,
    ``error``, ``instruction``), ``value`` and ``survived_in`` (``kept``, ``summary`` or
    ``none``). The rules are :mod:`pi_nb.analysis.retention`'s.
    """
    from pi_nb.analysis.retention import RETENTION_COLUMNS, retention_rows

    return _frame(RETENTION_COLUMNS, retention_rows(_retention_groups(source, strict, progress)))


def retention_summary_df(source: Any, *, strict: bool | None = None, progress: bool | None = None) -> Any:
    """One row per (compaction, artifact kind) over the dropped span: ``artifacts``,
    ``in_kept``, ``in_summary``, ``lost`` and ``survival_rate`` ((kept + summary) / artifacts),
    with the compaction's ``first_kept_entry_id``, ``dropped_entries``, ``kept_entries`` and
    ``summary_chars``. ``source`` as in :func:`retention_df`."""
    from pi_nb.analysis.retention import RETENTION_SUMMARY_COLUMNS, retention_summary_rows

    return _frame(
        RETENTION_SUMMARY_COLUMNS, retention_summary_rows(_retention_groups(source, strict, progress))
    )


def estimate_drift_df(
    source: SessionSource,
    *,
    by: str = "kind",
    tiktoken: bool = True,
    strict: bool | None = None,
    progress: bool | None = None,
) -> Any:
    """How far Pi's chars/4 estimate and tiktoken are from the provider's recorded usage, over
    the active branch of every session of ``source`` (a session, a directory: a corpus).

    ``by="kind"`` (default): one row per kind of content (``user_text``, ``assistant_text``,
    ``thinking``, ``tool_call``, ``bash_output``, ``code``, ``json``, ``image``, ``summary``,
    ``tool_result:<tool>``...) summed over the whole source: ``parts``, ``chars``,
    ``estimate_tokens``, ``tiktoken_tokens``, ``recorded_tokens`` (the share of the recorded
    increments attributed to it) and ``estimate_drift`` / ``tiktoken_drift`` (``estimate /
    recorded - 1``: ``+0.12`` is 12 % too high). ``by="interval"``: one row per interval between
    two consecutive responses (``usable``, ``reason`` when left out, the sums, the recorded
    increment); ``by="part"``: one row per part. ``tiktoken=False`` skips tiktoken (faster).
    How recorded tokens are attributed: :mod:`pi_nb.analysis.drift`."""
    from pi_nb.analysis.drift import drift_intervals, drift_rows

    sessions, _problems = iter_sessions(source, strict=strict, progress=progress)
    groups = [
        (s.session_id, s.session_file, drift_intervals(s.manager.get_branch(), tiktoken=tiktoken))
        for s in sessions
    ]
    spec, rows = drift_rows(groups, by)
    return _frame(spec, rows)
