"""pandas frames (pi_nb.notebook.frames): Pi's own session file, a directory of sessions with
broken files, stable ids, branch membership checked against Pi (golden), strict/non-strict."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pi_nb.errors import InvalidSessionFileError, NotebookError, SessionFileCorruptError
from pi_nb.notebook.frames import (
    ERROR_COLUMNS,
    SessionLoadWarning,
    compactions_df,
    entries_df,
    messages_df,
    tool_results_df,
    usage_df,
)
from pi_nb.notebook.views import load_session
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import count_message_tokens, estimate_tokens

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"
SESSIONS = HERE / "fixtures" / "sessions"
DEMO = SESSIONS / "--tmp-demo--"
FIXTURE_ID = "0193a1b2-0000-7000-8000-000000000001"


def _golden_sessions() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sources: dict[str, Any] = {}
    cases: list[dict[str, Any]] = []
    with open(HERE / "golden" / "notebook.json", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "sessionSource" in row:
                sources[row["sessionSource"]["name"]] = row["sessionSource"]["entries"]
            elif "session" in row:
                cases.append(row["session"])
    return sources, cases


SOURCES, SESSION_CASES = _golden_sessions()
FRAMES = (entries_df, messages_df, tool_results_df, usage_df, compactions_df)


def test_entries_of_pis_fixture() -> None:
    df = entries_df(FIXTURE, encoding="o200k_base")
    assert list(df["entry_id"]) == [
        *(f"e{i}" for i in range(1, 16)),
        *(f"b{i}" for i in range(1, 10)),
    ]
    assert (df["session_id"] == FIXTURE_ID).all() and (df["session_file"] == str(FIXTURE)).all()
    by = df.set_index("entry_id")
    assert pd.isna(by.loc["e1", "parent_id"]) and by.loc["b1", "parent_id"] == "e10"
    assert pd.api.types.is_string_dtype(df["entry_id"]) and pd.api.types.is_string_dtype(df["parent_id"])
    assert by.loc["e11", "type"] == "compaction" and by.loc["e11", "role"] == "compactionSummary"
    assert by.loc["e7", "label"] == "checkpoint"
    assert by.loc["e10", "children"] == 2 and by.loc["b1", "depth"] == 10
    assert by.loc["b9", "is_leaf"] and df["is_leaf"].sum() == 1
    # the active branch is e1..e10 + b1..b9; e11..e15 are the other branch
    assert set(df.loc[df["on_active_branch"], "entry_id"]) == {f"e{i}" for i in range(1, 11)} | {
        f"b{i}" for i in range(1, 10)
    }
    assert isinstance(df["timestamp"].dtype, pd.DatetimeTZDtype) and str(df["timestamp"].dt.tz) == "UTC"
    assert by.loc["e1", "timestamp"] == pd.Timestamp("2026-01-01T00:00:01Z")
    sm = load_session(FIXTURE)
    e5 = sm.get_entry("e5")
    assert e5 is not None
    assert by.loc["e5", "estimate_tokens"] == estimate_tokens(e5["message"])
    assert by.loc["e5", "tokens"] == count_message_tokens(e5["message"])
    assert "tokens" not in entries_df(FIXTURE).columns


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda c: c["name"])
def test_branch_membership_matches_pi(case: dict[str, Any]) -> None:
    sm = SessionManager.in_memory(None, entries=copy.deepcopy(SOURCES[case["source"]]))
    if case["leaf"] != "<absent>":
        sm.branch(case["leaf"])
    df = entries_df(sm)
    assert set(df.loc[df["on_active_branch"], "entry_id"]) == set(case["inspect"]["branch"])
    assert set(df.loc[df["in_context"], "entry_id"]) == set(case["inspect"]["contextEntries"])
    msgs = messages_df(sm)
    in_ctx = msgs[msgs["in_context"]]
    # the messages frame's in-context rows are exactly Pi's context messages, in path order
    assert sorted(in_ctx["role"]) == sorted(m["role"] for m in case["messages"])


def test_messages_frame() -> None:
    df = messages_df(FIXTURE)
    assert len(df) == 20  # every entry with a context message (no settings/label/info entries)
    by = df.set_index("entry_id")
    assert (
        by.loc["e4", "role"] == "assistant"
        and by.loc["e4", "tool_names"] == "read"
        and by.loc["e4", "thinking_chars"] == 23
    )
    assert by.loc["e5", "tool_call_id"] == "call_1" and by.loc["e5", "text"] == "# Readme\nHello world\n"
    assert by.loc["b3", "role"] == "custom"
    assert by.loc["b7", "text"] == "ls\nmain.py\nnew.py"
    assert by.loc["e11", "text"] == "## Goal\nRead README and edit main.py"
    assert by.loc["e6", "model"] == "claude-sonnet-4-5" and by.loc["e6", "stop_reason"] == "stop"


def test_tool_results_frame_with_truncation_fields() -> None:
    df = tool_results_df(DEMO)
    trunc = df[df["session_id"].str.endswith("d001")].set_index("entry_id")
    assert list(trunc.index) == ["t03", "t07", "t11", "t15"]
    assert trunc.loc["t03", "truncated_by"] == "lines" and trunc.loc["t03", "output_lines"] == 2000
    assert trunc.loc["t03", "total_lines"] == 2600 and trunc.loc["t03", "max_bytes"] == 51200
    assert (
        trunc.loc["t07", "truncated_by"] == "bytes"
        and trunc.loc["t07", "full_output_path"] == "bash-full-output.log"
    )
    assert bool(trunc.loc["t11", "last_line_partial"]) and trunc.loc["t11", "output_bytes"] == 51199
    assert not trunc.loc["t15", "truncated"] and pd.isna(trunc.loc["t15", "total_lines"])
    assert (
        trunc.loc["t07", "call_entry_id"] == "t06"
        and trunc.loc["t07", "arguments"] == '{"command":"./gen.sh"}'
    )
    assert trunc.loc["t03", "content_bytes"] > trunc.loc["t03", "output_bytes"]  # the notice is extra
    assert str(df["total_bytes"].dtype) == "Int64"


def test_usage_frame() -> None:
    df = usage_df(FIXTURE)
    assert list(df["entry_id"]) == ["e4", "e6", "e8", "e10", "e13", "e15", "b4", "b6"]
    assert list(df["context_tokens"]) == [1200, 1500, 2100, 2300, 2600, 2700, 3000, 3100]
    assert df["usable"].all()
    assert df["cost_total"].sum() == pytest.approx(0.024)
    assert list(df.loc[~df["on_active_branch"], "entry_id"]) == ["e13", "e15"]


def test_usage_frame_marks_unusable_usage() -> None:
    frames = [usage_df(SessionManager.in_memory(None, entries=copy.deepcopy(e))) for e in SOURCES.values()]
    df = pd.concat(frames)
    bad = df[df["stop_reason"].isin(["aborted", "error"])]
    assert len(bad) and not bad["usable"].any()
    assert df.loc[df["stop_reason"].isin(["stop", "toolUse"]), "usable"].all()


def test_compactions_frame() -> None:
    df = compactions_df(FIXTURE)
    row = df.iloc[0]
    assert row["entry_id"] == "e11" and row["tokens_before"] == 5000 and row["first_kept_entry_id"] == "e7"
    assert json.loads(row["read_files"]) == ["README.md"] and json.loads(row["modified_files"]) == ["main.py"]
    # Pi's estimatedTokensAfter: the context rebuilt at the compaction (summary + e7..e10)
    sm = load_session(FIXTURE)
    sm.branch("e11")
    assert row["estimate_tokens_after"] == sum(
        estimate_tokens(m) for m in sm.build_session_context().messages
    )
    assert not row["on_active_branch"]


def test_directory_of_sessions_strict_and_not(tmp_path: Path) -> None:
    # a clean directory loads strictly
    df = entries_df(DEMO)
    assert df["session_id"].nunique() == 2
    assert df.groupby("session_id").size().to_dict() == {
        "0193a1b2-0000-7000-8000-00000000d001": 16,
        "0193a1b2-0000-7000-8000-00000000d002": 15,
    }
    # with the broken files: strict raises, non-strict reports (file, line, reason), the
    # default skips what Pi skips and warns
    with pytest.raises((SessionFileCorruptError, InvalidSessionFileError)):
        entries_df(SESSIONS, strict=True)
    with pytest.warns(SessionLoadWarning) as caught:
        lenient = entries_df(SESSIONS)
    assert {str(w.message).split(" ")[0] for w in caught} >= {"2"}
    assert any("notes.jsonl was skipped" in str(w.message) for w in caught)
    for frame in FRAMES:
        df, errors = frame(SESSIONS, strict=False)
        assert list(errors.columns) == list(ERROR_COLUMNS)
        reasons = errors.set_index("line")["reason"]
        assert any("invalid JSON" in r for r in reasons)
        assert any("torn last line" in r for r in reasons)
        assert errors["line"].isna().sum() == 1 and errors["file"].str.endswith("notes.jsonl").sum() == 1
        assert str(errors["line"].dtype) == "Int64"
    df, errors = entries_df(SESSIONS, strict=False)
    pd.testing.assert_frame_equal(df, lenient)
    broken = df[df["session_id"].str.endswith("d003")]
    assert list(broken["entry_id"]) == ["k01", "k02"]  # the good lines of the broken file are kept
    torn = errors[errors["reason"].str.contains("torn")].iloc[0]
    assert torn["line"] == 5
    # frames never write: the torn file keeps its missing newline
    path = next((SESSIONS / "broken").glob("*.jsonl"))
    assert not path.read_bytes().endswith(b"\n")


def test_mixed_sources_and_missing_files(tmp_path: Path) -> None:
    copy_path = tmp_path / "copy.jsonl"
    shutil.copy(FIXTURE, copy_path)
    sm = load_session(FIXTURE)
    df = entries_df([sm, copy_path])
    assert len(df) == 48 and df["session_file"].isna().sum() == 24
    with pytest.raises(NotebookError, match="no such"):
        entries_df(tmp_path / "missing.jsonl")
    df, errors = entries_df([tmp_path / "missing.jsonl", FIXTURE], strict=False)
    assert len(df) == 24 and errors.iloc[0]["reason"] == "file not found"
    with pytest.raises(NotebookError, match="session source"):
        entries_df(42)
    with pytest.raises(NotebookError, match="list of entries"):
        entries_df([{"type": "session"}])


def test_old_format_is_migrated_in_memory_only(tmp_path: Path) -> None:
    v1 = [
        {"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/tmp"},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {"role": "hookMessage", "content": "x", "timestamp": 2},
        },
    ]
    path = tmp_path / "v1.jsonl"
    text = "".join(json.dumps(e) + "\n" for e in v1)
    path.write_text(text)
    df = entries_df(path)
    assert len(df) == 2 and df["entry_id"].str.fullmatch(r"[0-9a-f]{8}").all()
    assert list(df["role"]) == ["user", "custom"]  # hookMessage -> custom (v2 -> v3)
    assert path.read_text() == text and not (tmp_path / "v1.jsonl.bak").exists()


def test_empty_frames_have_their_columns() -> None:
    sm = SessionManager.in_memory("/tmp")
    for frame in FRAMES:
        df = frame(sm)
        assert df.empty and "entry_id" in df.columns and "session_id" in df.columns


def test_import_does_not_happen_at_package_import() -> None:
    import subprocess
    import sys

    code = "import sys, pi_nb.notebook\nprint('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
