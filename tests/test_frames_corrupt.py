"""A real Pi session with one corrupt line loads in every frame by default, as Pi opens it (the
line skipped), with a warning that names the file and the line; ``strict=True`` raises. And the
fast reader (orjson, where installed) gives exactly the frames of the exact reader."""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from pi_nb._js import js_stringify
from pi_nb.errors import InvalidSessionFileError, NotebookError, SessionFileCorruptError
from pi_nb.notebook import frames as F
from pi_nb.session import jsonl
from pi_nb.session.jsonl import read_session_file

ROOT = Path(__file__).resolve().parents[1]
REAL_PI = sorted((ROOT / "notebooks" / "data" / "real-pi").glob("*.jsonl"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from corpus import write_corpus  # noqa: E402

FUNCS = [F.entries_df, F.messages_df, F.tool_results_df, F.usage_df, F.compactions_df, F.sessions_df]


def _corrupt(tmp_path: Path, source: Path, line: int) -> Path:
    lines = source.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1][: len(lines[line - 1]) // 2]  # cut in the middle of the JSON
    path = tmp_path / source.name
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize("frame", FUNCS, ids=lambda f: f.__name__)
def test_one_corrupt_line_loads_with_a_warning_naming_file_and_line(frame: Any, tmp_path: Path) -> None:
    source = ROOT / "notebooks" / "data" / "real-pi" / "compaction.jsonl"
    path = _corrupt(tmp_path, source, 7)
    before = path.read_bytes()
    with pytest.warns(F.SessionLoadWarning) as caught:
        df = frame(path)
    (w,) = caught
    assert str(path) in str(w.message) and "line 7" in str(w.message) and "strict=True" in str(w.message)
    # exactly what Pi sees: the file without that line
    pi_view = tmp_path / "pi_view" / source.name
    pi_view.parent.mkdir()
    lines = source.read_bytes().split(b"\n")
    pi_view.write_bytes(b"\n".join(lines[:6] + lines[7:]))
    want = frame(pi_view)
    want["session_file"] = pd.array([str(path)] * len(want), dtype=F.STRING_DTYPE)
    if frame is F.sessions_df:
        want["problems"] = pd.array([1], dtype="Int64")
    assert_frame_equal(df, want)
    assert path.read_bytes() == before  # never repaired on disk
    with pytest.raises(SessionFileCorruptError, match="line 7") as err:
        frame(path, strict=True)
    assert err.value.problems and err.value.problems[0][0] == 7
    got, errors = frame(path, strict=False)
    assert_frame_equal(got, df)
    assert errors["line"].tolist() == [7] and errors["file"].tolist() == [str(path)]


def test_named_files_that_cannot_be_sessions_raise_and_found_ones_warn(tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"not": "a session"}\n')
    with pytest.raises(InvalidSessionFileError):
        F.entries_df(notes)
    with pytest.raises(NotebookError, match="no such session file"):
        F.entries_df(tmp_path / "missing.jsonl")
    shutil.copy(REAL_PI[0], tmp_path / REAL_PI[0].name)
    with pytest.warns(F.SessionLoadWarning, match="notes.jsonl was skipped"):
        df = F.entries_df(tmp_path)
    assert df["session_file"].str.endswith(REAL_PI[0].name).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.entries_df(REAL_PI)  # clean files: no warning


EDGE_CASES = {
    "big integer": '{"type":"custom","id":"x1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"customType":"n","data":{"n":123456789012345678901234567890}}',
    "lone surrogate": '{"type":"custom","id":"x2","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"customType":"\\ud800"}',
    "float past range": '{"type":"custom","id":"x3","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"customType":"f","data":1e400}',
    "not an object": "[1, 2]",
    "crlf": '{"type":"custom","id":"x4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"c"}\r',
    "torn": '{"type":"custom","id":"x5"',
}


def _edge_files(tmp_path: Path) -> list[Path]:
    header = json.dumps(
        {"type": "session", "version": 3, "id": "edge", "timestamp": "2026-01-01T00:00:00.000Z"}
    )
    out = []
    for name, line in EDGE_CASES.items():
        path = tmp_path / f"{name.replace(' ', '_')}.jsonl"
        path.write_text(header + "\n" + line + ("" if name == "torn" else "\n"), encoding="utf-8")
        out.append(path)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + header.encode() + b"\n")
    bad_utf8 = tmp_path / "bad_utf8.jsonl"
    bad_utf8.write_bytes(
        header.encode() + b'\n{"type":"custom","id":"x6","parentId":null,"customType":"\xff"}\n'
    )
    return [*out, bom, bad_utf8]


def test_the_fast_reader_reads_what_the_exact_reader_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one reader of session files (the frames' is jsonl's): its orjson path against its exact path
    if jsonl._orjson_loads is None:
        pytest.skip("orjson is not installed: there is only the exact path")
    files = [*REAL_PI, *map(Path, write_corpus(tmp_path / "c", 40)), *_edge_files(tmp_path)]
    fast_all = [F.read_session(str(path)) for path in files]
    monkeypatch.setattr(jsonl, "_orjson_loads", None)
    for path, fast in zip(files, fast_all, strict=True):
        exact = read_session_file(str(path))
        assert (fast.valid, fast.exists) == (exact.valid, exact.exists), path
        # the same JavaScript values: orjson reads an integer past 64 bits as a float, json as an
        # int; JavaScript holds both as one double and pi_nb writes them the same
        assert js_stringify(fast.entries) == js_stringify(exact.entries), path
        assert [(p.line_number, p.reason) for p in fast.problems] == [
            (p.line_number, p.reason) for p in exact.problems
        ], path


def test_the_fast_path_gives_the_frames_of_the_exact_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if jsonl._orjson_loads is None:
        pytest.skip("orjson is not installed: there is only the exact path")
    files: list[Any] = [*REAL_PI, *write_corpus(tmp_path / "c", 40), *_edge_files(tmp_path)]
    fast = F.session_frames(files, strict=False)
    monkeypatch.setattr(jsonl, "_orjson_loads", None)
    exact = F.session_frames(files, strict=False)
    for kind in F.FRAME_KINDS:
        assert_frame_equal(fast[0][kind], exact[0][kind])
    assert_frame_equal(fast[1], exact[1])
