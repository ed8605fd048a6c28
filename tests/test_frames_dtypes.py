"""Every column of every frame has one dtype, whatever the data and the pandas version (2 or 3):
ids and text ``string``, flags ``boolean``, counts ``Int64``, costs ``Float64``, times
``datetime64[us, UTC]`` — on real Pi sessions and on empty inputs (columns kept when empty)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pi_nb.notebook import frames as F
from pi_nb.session.manager import SessionManager

ROOT = Path(__file__).resolve().parents[1]
REAL_PI = sorted((ROOT / "notebooks" / "data" / "real-pi").glob("*.jsonl"))
TIME = "datetime64[us, UTC]"

# What each frame must hold, spelled out here (not read from the module): the columns that are
# not strings, by dtype; every other column is "string".
NON_STRING: dict[str, dict[str, tuple[str, ...]]] = {
    "entries": {
        "Int64": ("depth", "children", "estimate_tokens"),
        "boolean": ("on_active_branch", "in_context", "is_leaf"),
        TIME: ("timestamp",),
    },
    "messages": {
        "Int64": ("text_chars", "thinking_chars", "images", "tool_calls", "estimate_tokens"),
        "boolean": ("is_error", "on_active_branch", "in_context"),
        TIME: ("timestamp",),
    },
    "tool_results": {
        "Int64": (
            "content_chars",
            "content_bytes",
            "images",
            "total_lines",
            "total_bytes",
            "output_lines",
            "output_bytes",
            "max_lines",
            "max_bytes",
        ),
        "boolean": (
            "is_error",
            "truncated",
            "last_line_partial",
            "first_line_exceeds_limit",
            "match_limit_reached",
            "result_limit_reached",
            "entry_limit_reached",
            "lines_truncated",
            "on_active_branch",
            "in_context",
        ),
        TIME: ("timestamp",),
    },
    "usage": {
        "Int64": ("input", "output", "cache_read", "cache_write", "total_tokens", "context_tokens"),
        "boolean": ("usable", "on_active_branch", "in_context"),
        "Float64": ("cost_input", "cost_output", "cost_cache_read", "cost_cache_write", "cost_total"),
        TIME: ("timestamp",),
    },
    "compactions": {
        "Int64": (
            "tokens_before",
            "summary_chars",
            "summary_estimate_tokens",
            "estimate_tokens_after",
            "usage_total_tokens",
        ),
        "boolean": ("from_hook", "on_active_branch", "in_context"),
        TIME: ("timestamp",),
    },
    "sessions": {
        "Int64": (
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
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "total_tokens",
            "last_context_tokens",
            "peak_context_tokens",
            "unpriced_responses",
            "problems",
        ),
        "Float64": ("cost_total",),
        TIME: ("start", "end"),
    },
}
STRING_COLUMNS = {
    "entries": (
        "harness",
        "session_id",
        "session_file",
        "entry_id",
        "parent_id",
        "type",
        "role",
        "text",
        "label",
        "raw",
    ),
    "messages": (
        "harness",
        "session_id",
        "session_file",
        "entry_id",
        "parent_id",
        "role",
        "text",
        "tool_names",
        "tool_call_id",
        "tool_name",
        "stop_reason",
        "provider",
        "model",
        "raw",
    ),
    "tool_results": (
        "harness",
        "session_id",
        "session_file",
        "entry_id",
        "parent_id",
        "tool_call_id",
        "tool_name",
        "call_entry_id",
        "arguments",
        "truncated_by",
        "full_output_path",
        "raw",
    ),
    "usage": (
        "harness",
        "session_id",
        "session_file",
        "entry_id",
        "parent_id",
        "provider",
        "model",
        "api",
        "stop_reason",
        "raw",
    ),
    "compactions": (
        "harness",
        "session_id",
        "session_file",
        "entry_id",
        "parent_id",
        "first_kept_entry_id",
        "summary",
        "read_files",
        "modified_files",
        "raw",
    ),
    "sessions": (
        "harness",
        "harness_version",
        "session_id",
        "session_file",
        "cwd",
        "name",
        "parent_session",
        "model",
        "models",
        "leaf_id",
    ),
}
FUNCS = {
    "entries": F.entries_df,
    "messages": F.messages_df,
    "tool_results": F.tool_results_df,
    "usage": F.usage_df,
    "compactions": F.compactions_df,
    "sessions": F.sessions_df,
}


def expected(kind: str) -> dict[str, str]:
    want = dict.fromkeys(STRING_COLUMNS[kind], "string")
    for dtype, cols in NON_STRING[kind].items():
        want.update(dict.fromkeys(cols, dtype))
    return want


def dtypes(df: Any) -> dict[str, str]:
    return {c: str(t) for c, t in df.dtypes.items()}


def check(kind: str, df: Any, extra: dict[str, str] | None = None) -> None:
    want = {**expected(kind), **(extra or {})}
    assert set(df.columns) == set(want), (kind, set(df.columns) ^ set(want))
    assert dtypes(df) == {c: want[c] for c in df.columns}, kind
    for col in df.columns:
        if want[col] == "string":
            dtype = df[col].dtype
            # the same storage on every machine (pandas 3 would pick pyarrow where installed)
            assert (
                isinstance(dtype, pd.StringDtype) and dtype.na_value is pd.NA and dtype.storage == "python"
            ), col


def test_the_expected_columns_are_the_frames_columns() -> None:
    for kind in FUNCS:
        assert set(F.FRAME_COLUMNS[kind]) == set(expected(kind)), kind
        assert F.FRAME_DTYPES[kind] == {c: expected(kind)[c] for c in F.FRAME_COLUMNS[kind]}


@pytest.mark.parametrize("path", REAL_PI, ids=lambda p: p.stem)
@pytest.mark.parametrize("kind", list(FUNCS))
def test_every_column_of_a_real_pi_session(kind: str, path: Path) -> None:
    df = FUNCS[kind](path)
    check(kind, df)
    if kind in ("entries", "messages"):
        check(kind, FUNCS[kind](path, encoding="o200k_base"), {"tokens": "Int64"})


@pytest.mark.parametrize("kind", list(FUNCS))
def test_every_column_when_empty(kind: str, tmp_path: Path) -> None:
    for source in (tmp_path, [], SessionManager.in_memory("/tmp")):
        df = FUNCS[kind](source)
        if kind == "sessions" and isinstance(source, SessionManager):
            assert len(df) == 1  # one (empty) session
        else:
            assert df.empty
        check(kind, df)
    df, errors = FUNCS[kind](tmp_path, strict=False)
    check(kind, df)
    assert dtypes(errors) == {"file": "string", "line": "Int64", "reason": "string"}


def test_values_keep_their_types_where_pandas_would_guess() -> None:
    tools = F.tool_results_df(ROOT / "notebooks" / "data" / "real-pi" / "tools.jsonl")
    assert tools["is_error"].tolist() == [False] * len(tools)  # was object before
    assert tools["match_limit_reached"].isna().all()  # was float64 NaN before
    usage = F.usage_df(REAL_PI)
    assert usage["cost_total"].sum() == 0.0 and str(usage["cost_total"].dtype) == "Float64"  # was int64
    messages = F.messages_df(REAL_PI)
    results = messages[messages["role"] == "toolResult"]
    assert (
        results["is_error"].notna().all()
        and messages.loc[messages["role"] != "toolResult", "is_error"].isna().all()
    )


def test_times_in_other_shapes_than_pis_parse_as_pandas_parses_them(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in REAL_PI[0].read_text().splitlines() if line.strip()]
    shapes = [
        "2026-12-02T10:33:56Z",
        "2026-12-02T11:33:56.768+01:00",
        "2026-13-02T10:33:56.768Z",
        "yesterday",
    ]
    for e, shape in zip(lines[1:], shapes, strict=False):
        e["timestamp"] = shape
    path = tmp_path / "times.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    ts = F.entries_df(path)["timestamp"]
    assert str(ts.dtype) == TIME
    assert ts.iloc[0] == pd.Timestamp("2026-12-02T10:33:56Z")
    assert ts.iloc[1] == pd.Timestamp("2026-12-02T10:33:56.768Z")
    assert ts.iloc[2:4].isna().all() and ts.iloc[4:].notna().all()
    clean = F.entries_df(REAL_PI[0])["timestamp"]  # Pi's own shape: the fast parser
    first = json.loads(REAL_PI[0].read_text().splitlines()[1])["timestamp"]
    assert clean.iloc[0] == pd.Timestamp(first)
    assert clean.notna().all()


def test_values_of_the_wrong_json_type_become_missing(tmp_path: Path) -> None:
    # a hand-edited file: strings where counts belong, a number where a flag belongs
    lines = [json.loads(line) for line in REAL_PI[0].read_text().splitlines() if line.strip()]
    edited = copy.deepcopy(lines)
    for e in edited:
        msg = e.get("message")
        if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("usage"), dict):
            msg["usage"]["input"] = "many"
            msg["usage"]["cost"]["total"] = True
        if isinstance(msg, dict) and msg.get("role") == "toolResult":
            msg["isError"] = 1
            msg["toolName"] = 7
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in edited))
    usage = F.usage_df(path)
    check("usage", usage)
    assert usage["input"].isna().all() and usage["cost_total"].isna().all()
    messages = F.messages_df(path)
    check("messages", messages)
    results = messages[messages["role"] == "toolResult"]
    assert results["is_error"].isna().all() and (results["tool_name"] == "7").all()
    sessions = F.sessions_df(path)
    check("sessions", sessions)
    assert sessions.loc[0, "unpriced_responses"] == sessions.loc[0, "responses"]
    assert pd.isna(sessions.loc[0, "cost_total"])


def test_session_list_frame_for_pi_list(tmp_path: Path) -> None:
    from pi_nb.session.paths import list_all_sessions

    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for p in REAL_PI:
        shutil.copy(p, sessions / p.name)
    empty = F.session_list_df([])
    want = {
        "session_id": "string",
        "session_file": "string",
        "cwd": "string",
        "name": "string",
        "parent_session_file": "string",
        "created": TIME,
        "modified": TIME,
        "message_count": "Int64",
        "first_message": "string",
    }
    assert empty.empty and dtypes(empty) == want
    all_infos = list_all_sessions(session_dir=str(sessions))
    assert len(all_infos) == len(REAL_PI)
    df = F.session_list_df(all_infos)
    assert dtypes(df) == want and len(df) == len(all_infos)
    for info, row in zip(all_infos, df.itertuples(index=False), strict=True):
        assert row.session_file == info.path and row.message_count == info.message_count
        assert row.modified == pd.Timestamp(info.modified).tz_convert("UTC")
