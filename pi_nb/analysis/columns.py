"""The columns of every session frame, declared as data: name, dtype, and how the value is read.

As in Inspect AI's ``columns.py``: a frame kind is a tuple of :class:`Column`; each column reads
its value from the kind's row context (:mod:`pi_nb.analysis.extract`: an entry, its message, the
session). A frame asked for some columns computes only those (``columns=``). The dtypes are
pandas dtype names, kept here as text: this module imports neither pandas nor IPython
(:mod:`pi_nb.notebook.frames` makes the frames).

Every column has one fixed dtype: ids and text ``string``, flags ``boolean``, counts ``Int64``,
costs ``Float64``, times ``datetime64[us, UTC]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

import orjson

from pi_nb._js import js_utf8_encode
from pi_nb.analysis.extract import (
    CompactionRow,
    EntryRow,
    MessageRow,
    SessionRow,
    ToolResultRow,
    UsageRow,
    content_images,
    entry_role,
    short_text,
)
from pi_nb.errors import NotebookError

__all__ = [
    "COMPACTION_COLUMNS",
    "ENTRY_COLUMNS",
    "ERROR_COLUMNS",
    "FRAME_COLUMNS",
    "FRAME_DTYPES",
    "FRAME_KINDS",
    "FRAME_SPECS",
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "SESSION_LIST_COLUMNS",
    "TIMESTAMP_DTYPE",
    "TOKENS_COLUMN",
    "TOOL_RESULT_COLUMNS",
    "TRUNCATION_FIELDS",
    "USAGE_COLUMNS",
    "Column",
    "ColumnPick",
    "ColumnType",
    "column_dtype",
    "select_columns",
]

ColumnType = Literal["string", "Int64", "boolean", "Float64", "datetime64[us, UTC]"]
TIMESTAMP_DTYPE: Final = "datetime64[us, UTC]"
S: Final = "string"
I: Final = "Int64"  # noqa: E741 - the short names keep the declarations one line each
B: Final = "boolean"
F: Final = "Float64"
T: Final = TIMESTAMP_DTYPE


@dataclass(frozen=True)
class Column:
    """One column of a frame: its ``name``, its pandas ``dtype`` and ``value``, the function that
    reads it from a row context of its kind (plain Python values, ``None`` for missing; a value of
    the wrong JSON type is made missing when the frame is made)."""

    name: str
    dtype: ColumnType
    value: Callable[[Any], Any]


# -- the id and branch columns every entry-based frame starts / ends with ------------------


def _ids() -> tuple[Column, ...]:
    return (
        Column("harness", S, lambda r: r.s.harness),
        Column("session_id", S, lambda r: r.s.session_id),
        Column("session_file", S, lambda r: r.s.session_file),
        Column("entry_id", S, lambda r: r.eid),
        Column("parent_id", S, lambda r: r.e.get("parentId")),
        Column("timestamp", T, lambda r: r.e.get("timestamp")),
    )


def _raw(r: EntryRow) -> str | None:
    """The fields of another agent's record that have no Pi counterpart, as JSON (``None`` for
    Pi's own entries: :mod:`pi_nb.harness` keeps them in the entry's ``raw``)."""
    raw = r.e.get("raw")
    if not raw:
        return None
    try:  # JSON text of what the source file held (not a Pi value: no JSON.stringify rules)
        return orjson.dumps(raw, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits, say
        return r.s.stringify(raw)


def _branch() -> tuple[Column, ...]:
    return (
        Column("on_active_branch", B, lambda r: r.s.on_active_branch(r.i, r.e)),
        Column("in_context", B, lambda r: r.s.in_context(r.i, r.e)),
        Column("raw", S, _raw),
    )


def _label(r: EntryRow) -> str | None:
    return r.s.manager.get_label(r.eid) if r.eid is not None else None


ENTRY_SPEC: tuple[Column, ...] = (
    *_ids(),
    Column("type", S, lambda r: r.e.get("type")),
    Column("role", S, lambda r: entry_role(r.e)),
    Column("text", S, lambda r: short_text(r.e, 200, r.s.stringify)),
    Column("label", S, _label),
    Column("depth", I, lambda r: r.s.depth(r.e, r.i)),
    Column("children", I, lambda r: r.s.children().get(r.eid, 0) if r.eid is not None else 0),
    *_branch(),
    Column("is_leaf", B, lambda r: r.e is r.s.leaf),
    Column("estimate_tokens", I, lambda r: r.s.estimate_at(r.i)),
)

TOKENS_COLUMN = Column("tokens", I, lambda r: r.s.tokens(r.s.context_messages_at(r.i)))
"""``tokens`` (tiktoken's count, with ``encoding=``) of entries and messages."""


def _m(key: str) -> Callable[[MessageRow], Any]:
    return lambda r: r.m.get(key)


MESSAGE_SPEC: tuple[Column, ...] = (
    *_ids(),
    Column("role", S, lambda r: r.role),
    Column("text", S, lambda r: r.parts()[0]),
    Column("text_chars", I, lambda r: len(r.parts()[0])),
    Column("thinking_chars", I, lambda r: r.parts()[1]),
    Column("images", I, lambda r: content_images(r.content)),
    Column("tool_calls", I, lambda r: len(r.parts()[2])),
    Column("tool_names", S, lambda r: ",".join(r.parts()[2])),
    Column("tool_call_id", S, _m("toolCallId")),
    Column("tool_name", S, _m("toolName")),
    Column("is_error", B, lambda r: r.m.get("isError") if r.role == "toolResult" else None),
    Column("stop_reason", S, _m("stopReason")),
    Column("provider", S, _m("provider")),
    Column("model", S, _m("model")),
    *_branch(),
    Column("estimate_tokens", I, lambda r: r.s.estimate_at(r.i)),
)

TRUNCATION_FIELDS: tuple[tuple[str, str, ColumnType], ...] = (
    ("truncated", "truncated", B),
    ("truncatedBy", "truncated_by", S),
    ("totalLines", "total_lines", I),
    ("totalBytes", "total_bytes", I),
    ("outputLines", "output_lines", I),
    ("outputBytes", "output_bytes", I),
    ("lastLinePartial", "last_line_partial", B),
    ("firstLineExceedsLimit", "first_line_exceeds_limit", B),
    ("maxLines", "max_lines", I),
    ("maxBytes", "max_bytes", I),
)
"""Pi's ``details.truncation`` fields: ``(field, column, dtype)``."""


def _trunc(camel: str) -> Callable[[ToolResultRow], Any]:
    if camel == "truncated":  # a result without truncation details was not truncated
        return lambda r: r.trunc.get("truncated") if r.trunc else False
    return lambda r: r.trunc.get(camel)


def _detail(key: str) -> Callable[[ToolResultRow], Any]:
    return lambda r: r.details.get(key)


def _arguments(r: ToolResultRow) -> str | None:
    return r.s.stringify(r.call[1]) if r.call and r.call[1] is not None else None


TOOL_RESULT_SPEC: tuple[Column, ...] = (
    *_ids(),
    Column("tool_call_id", S, lambda r: r.m.get("toolCallId")),
    Column("tool_name", S, lambda r: r.m.get("toolName")),
    Column("call_entry_id", S, lambda r: r.call[0] if r.call else None),
    Column("arguments", S, _arguments),
    Column("is_error", B, lambda r: bool(r.m.get("isError"))),
    Column("content_chars", I, lambda r: len(r.text())),
    Column("content_bytes", I, lambda r: len(js_utf8_encode(r.text()))),
    Column("images", I, lambda r: content_images(r.m.get("content"))),
    *(Column(snake, dtype, _trunc(camel)) for camel, snake, dtype in TRUNCATION_FIELDS),
    Column("full_output_path", S, _detail("fullOutputPath")),
    Column("match_limit_reached", B, _detail("matchLimitReached")),
    Column("result_limit_reached", B, _detail("resultLimitReached")),
    Column("entry_limit_reached", B, _detail("entryLimitReached")),
    Column("lines_truncated", B, _detail("linesTruncated")),
    *_branch(),
)


def _u(key: str) -> Callable[[UsageRow], Any]:
    return lambda r: r.usage.get(key)


def _cost(key: str) -> Callable[[UsageRow], Any]:
    return lambda r: r.cost.get(key)


USAGE_SPEC: tuple[Column, ...] = (
    *_ids(),
    Column("provider", S, lambda r: r.m.get("provider")),
    Column("model", S, lambda r: r.m.get("model")),
    Column("api", S, lambda r: r.m.get("api")),
    Column("stop_reason", S, lambda r: r.m.get("stopReason")),
    Column("input", I, _u("input")),
    Column("output", I, _u("output")),
    Column("cache_read", I, _u("cacheRead")),
    Column("cache_write", I, _u("cacheWrite")),
    Column("total_tokens", I, _u("totalTokens")),
    Column("context_tokens", I, lambda r: r.context_tokens),
    Column("usable", B, lambda r: r.usable()),
    Column("cost_input", F, _cost("input")),
    Column("cost_output", F, _cost("output")),
    Column("cost_cache_read", F, _cost("cacheRead")),
    Column("cost_cache_write", F, _cost("cacheWrite")),
    Column("cost_total", F, _cost("total")),
    *_branch(),
)


def _files(key: str) -> Callable[[CompactionRow], Any]:
    return lambda r: json.dumps(r.details.get(key)) if key in r.details else None


COMPACTION_SPEC: tuple[Column, ...] = (
    *_ids(),
    Column("tokens_before", I, lambda r: r.e.get("tokensBefore")),
    Column("first_kept_entry_id", S, lambda r: r.e.get("firstKeptEntryId")),
    Column("summary", S, lambda r: r.summary),
    Column("summary_chars", I, lambda r: len(r.summary)),
    Column("summary_estimate_tokens", I, lambda r: r.s.estimate_at(r.i)),
    Column("estimate_tokens_after", I, lambda r: r.estimate_after()),
    Column("read_files", S, _files("readFiles")),
    Column("modified_files", S, _files("modifiedFiles")),
    Column("from_hook", B, lambda r: r.e.get("fromHook")),
    Column("usage_total_tokens", I, lambda r: r.usage.get("totalTokens")),
    *_branch(),
)


def _sum(key: str) -> Callable[[SessionRow], Any]:
    return lambda r: r.sums()[key]


def _tok(key: str) -> Callable[[SessionRow], Any]:
    return lambda r: r.sums()["tokens"][key]


def _h(key: str) -> Callable[[SessionRow], Any]:
    return lambda r: r.header.get(key)


SESSION_SPEC: tuple[Column, ...] = (
    Column("harness", S, lambda r: r.s.harness),
    Column("harness_version", S, _h("harnessVersion")),
    Column("session_id", S, lambda r: r.s.session_id),
    Column("session_file", S, lambda r: r.s.session_file),
    Column("cwd", S, _h("cwd")),
    Column("name", S, lambda r: r.s.manager.get_session_name()),
    Column("parent_session", S, _h("parentSession")),
    Column("start", T, _sum("start")),
    Column("end", T, _sum("end")),
    Column("model", S, _sum("model")),
    Column("models", S, _sum("models")),
    Column("entries", I, lambda r: len(r.s.entries)),
    Column("messages", I, _sum("messages")),
    Column("turns", I, _sum("turns")),
    Column("responses", I, _sum("responses")),
    Column("tool_calls", I, _sum("tool_calls")),
    Column("tool_errors", I, _sum("tool_errors")),
    Column("error_responses", I, _sum("error_responses")),
    Column("compactions", I, _sum("compactions")),
    Column("branch_summaries", I, _sum("branch_summaries")),
    Column("branch_points", I, lambda r: sum(1 for n in r.s.children().values() if n > 1)),
    Column("leaves", I, lambda r: r.s.tree_leaves()),
    Column("active_branch_entries", I, lambda r: r.s.active_branch_entries()),
    Column("leaf_id", S, lambda r: r.s.leaf_id),
    Column("input_tokens", I, _tok("input")),
    Column("output_tokens", I, _tok("output")),
    Column("cache_read_tokens", I, _tok("cacheRead")),
    Column("cache_write_tokens", I, _tok("cacheWrite")),
    Column("total_tokens", I, _tok("totalTokens")),
    Column("last_context_tokens", I, lambda r: r.context()[0]),
    Column("peak_context_tokens", I, lambda r: r.context()[1]),
    Column("cost_total", F, _sum("cost_total")),
    Column("unpriced_responses", I, _sum("unpriced")),
    Column("problems", I, lambda r: r.s.problems),
)

FRAME_KINDS = ("entries", "messages", "tool_results", "usage", "compactions", "sessions")
"""The frames of a session source (``<kind>_df``)."""

FRAME_SPECS: dict[str, tuple[Column, ...]] = {
    "entries": ENTRY_SPEC,
    "messages": MESSAGE_SPEC,
    "tool_results": TOOL_RESULT_SPEC,
    "usage": USAGE_SPEC,
    "compactions": COMPACTION_SPEC,
    "sessions": SESSION_SPEC,
}
"""The column declarations of every frame kind, in frame order."""

FRAME_COLUMNS: dict[str, tuple[str, ...]] = {k: tuple(c.name for c in v) for k, v in FRAME_SPECS.items()}
ENTRY_COLUMNS = FRAME_COLUMNS["entries"]
MESSAGE_COLUMNS = FRAME_COLUMNS["messages"]
TOOL_RESULT_COLUMNS = FRAME_COLUMNS["tool_results"]
USAGE_COLUMNS = FRAME_COLUMNS["usage"]
COMPACTION_COLUMNS = FRAME_COLUMNS["compactions"]
SESSION_COLUMNS = FRAME_COLUMNS["sessions"]
"""The columns of ``sessions_df`` (``columns=`` picks among them)."""

SESSION_LIST_COLUMNS: tuple[tuple[str, ColumnType], ...] = (
    ("session_id", S),
    ("session_file", S),
    ("cwd", S),
    ("name", S),
    ("parent_session_file", S),
    ("created", T),
    ("modified", T),
    ("message_count", I),
    ("first_message", S),
)
"""The columns of a frame of Pi's session list, with their dtypes."""

ERROR_COLUMNS: tuple[tuple[str, ColumnType], ...] = (("file", S), ("line", I), ("reason", S))
"""The columns of the ``errors`` frame of ``strict=False``."""

_DTYPES: dict[str, ColumnType] = {
    TOKENS_COLUMN.name: TOKENS_COLUMN.dtype,
    **dict(SESSION_LIST_COLUMNS),
    **dict(ERROR_COLUMNS),
    **{c.name: c.dtype for spec in FRAME_SPECS.values() for c in spec},
}


def column_dtype(column: str) -> ColumnType:
    """The dtype every frame gives ``column``: ``datetime64[us, UTC]``, ``Int64``, ``boolean``,
    ``Float64`` or ``string`` (a name no frame declares is ``string``)."""
    return _DTYPES.get(column, S)


FRAME_DTYPES: dict[str, dict[str, str]] = {
    kind: {c.name: c.dtype for c in spec} for kind, spec in FRAME_SPECS.items()
}
"""The dtype of every column of every frame kind (with ``encoding=``, entries and messages also
have ``tokens``: ``Int64``)."""


def check_kinds(kinds: Sequence[str]) -> None:
    """Raise :class:`~pi_nb.errors.NotebookError` for a kind that is not a frame kind."""
    for kind in kinds:
        if kind not in FRAME_SPECS:
            raise NotebookError(f"unknown frame kind {kind!r} (one of {', '.join(FRAME_KINDS)})")


ColumnPick: TypeAlias = "str | Column | Sequence[str | Column] | None"
"""What ``columns=`` takes: a column name, a :class:`Column`, a list of those, or ``None`` (all)."""


def select_columns(
    kind: str, columns: ColumnPick = None, *, encoding: str | None = None
) -> tuple[Column, ...]:
    """The declarations of ``kind``'s columns: all of them (with ``tokens`` for entries and
    messages when an ``encoding`` is given), or the ones named in ``columns``, in that order.
    A :class:`Column` in ``columns`` is a column of the caller's own, read from the kind's row
    context (:mod:`pi_nb.analysis.extract`) like the declared ones. An unknown name raises
    :class:`~pi_nb.errors.NotebookError` listing the columns."""
    check_kinds([kind])
    spec = FRAME_SPECS[kind]
    if encoding and kind in ("entries", "messages"):
        spec = (*spec, TOKENS_COLUMN)
    if columns is None:
        return spec
    items: list[str | Column] = [columns] if isinstance(columns, (str, Column)) else list(columns)
    by_name: Mapping[str, Column] = {c.name: c for c in spec}
    unknown = [c for c in items if isinstance(c, str) and c not in by_name]
    if unknown:
        hint = " (tokens needs encoding=)" if "tokens" in unknown and kind in ("entries", "messages") else ""
        raise NotebookError(
            f"unknown {kind}_df column(s) {', '.join(map(repr, unknown))}{hint}; "
            f"the columns are: {', '.join(by_name)}"
        )
    for c in items:
        if isinstance(c, Column) and c.dtype not in _DTYPE_NAMES:
            raise NotebookError(
                f"column {c.name!r}: dtype must be one of {', '.join(_DTYPE_NAMES)}, got {c.dtype!r}"
            )
    picked = tuple(c if isinstance(c, Column) else by_name[c] for c in items)
    names = [c.name for c in picked]
    if len(set(names)) != len(names):
        raise NotebookError(f"a column is asked for twice: {', '.join(names)}")
    return picked


_DTYPE_NAMES: tuple[str, ...] = (S, I, B, F, T)


def rows_of(contexts: Any, spec: Sequence[Column]) -> list[tuple[Any, ...]]:
    """One tuple per row context, the values of ``spec``'s columns in order."""
    getters = [c.value for c in spec]
    return [tuple([g(r) for g in getters]) for r in contexts]
