"""The engine behind the frames: one session-source loader, columns declared as data, rows in
plain Python, truncation reports per tool result."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from pi_nb.analysis import columns as C
from pi_nb.analysis import extract as X
from pi_nb.analysis.rows import session_rows
from pi_nb.analysis.truncation import session_truncation_reports
from pi_nb.errors import InvalidSessionFileError, NotebookError, SessionFileCorruptError
from pi_nb.notebook import _base
from pi_nb.notebook import frames as F
from pi_nb.session import SessionManager, tree_model
from pi_nb.session import source as S

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"
DEMO = HERE / "fixtures" / "sessions" / "--tmp-demo--"
REAL_PI = sorted((ROOT / "notebooks" / "data" / "real-pi").glob("*.jsonl"))
SOURCES: list[Path] = [
    FIXTURE,
    *sorted(DEMO.glob("*.jsonl")),
    *REAL_PI,
    HERE / "fixtures" / "e2e" / "tools_session.jsonl",
]


# -- one session source --------------------------------------------------------------------


def test_the_old_normalisers_are_the_one_loader() -> None:
    assert _base.load_session is S.open_session_source
    assert _base.session_sources is S.split_session_source
    assert _base.is_agent_session is S.is_agent_session
    assert tree_model.load_session_file is S.load_session_file
    assert F.SessionLoadWarning is S.SessionLoadWarning
    assert F.file_sources is S.session_file_items


def test_open_session_source_takes_every_kind_of_one_session(tmp_path: Path) -> None:
    sm = S.open_session_source(FIXTURE)
    assert S.open_session_source(sm) is sm
    assert S.open_session_source(S.SessionFile(str(FIXTURE), True)).get_session_id() == sm.get_session_id()
    entries = [dict(e) for e in sm.get_entries()]
    assert [e["id"] for e in S.open_session_source(entries).get_entries()] == [e["id"] for e in entries]

    class Holder:  # what an AgentSession looks like to the loader
        session_manager = sm

    assert S.open_session_source(Holder()) is sm
    with pytest.raises(NotebookError, match="is a directory"):
        S.open_session_source(DEMO)
    with pytest.raises(NotebookError, match="no such session file"):
        S.open_session_source(tmp_path / "missing.jsonl")
    with pytest.raises(NotebookError, match="a session source must be"):
        S.open_session_source(42)


def test_the_tree_model_reads_through_the_loader() -> None:
    by_path = tree_model.SessionTreeModel(FIXTURE)
    sm = S.open_session_source(FIXTURE)
    assert tree_model.SessionTreeModel(sm).session is sm
    entries = [dict(e) for e in sm.get_entries()]
    assert tree_model.SessionTreeModel(entries).entry_count == by_path.entry_count == len(entries)
    with pytest.raises(NotebookError, match="a session source must be"):
        tree_model.SessionTreeModel(42)  # type: ignore[arg-type]


def test_split_and_resolve(tmp_path: Path) -> None:
    files = sorted(str(p) for p in DEMO.glob("*.jsonl"))
    assert S.split_session_source(DEMO) == files
    sm = S.open_session_source(FIXTURE)
    assert S.split_session_source([DEMO, sm]) == [*files, sm]
    entries = [dict(e) for e in sm.get_entries()]
    assert S.split_session_source(entries) == [entries]
    with pytest.raises(NotebookError, match="no session files"):
        S.split_session_source(tmp_path)
    got = S.resolve_session_source([DEMO, FIXTURE, sm])
    assert [i.path for i in got[:-1] if isinstance(i, S.SessionFile)] == [*files, str(FIXTURE)]
    assert [i.explicit for i in got[:-1] if isinstance(i, S.SessionFile)] == [False] * len(files) + [True]
    assert got[-1] is sm
    with pytest.raises(NotebookError, match="list of entries"):
        S.resolve_session_source(entries)
    made = S.resolve_session_source(entries, entries=True)
    assert len(made) == 1 and isinstance(made[0], SessionManager)


def test_load_session_source_and_strict(tmp_path: Path) -> None:
    good = tmp_path / "d" / "good.jsonl"
    good.parent.mkdir()
    shutil.copy(FIXTURE, good)
    bad = tmp_path / "d" / "bad.jsonl"
    bad.write_text(FIXTURE.read_text() + "{not json\n")
    notes = tmp_path / "d" / "notes.jsonl"
    notes.write_text('{"hello": 1}\n')
    ticks: list[int] = []
    with pytest.warns(S.SessionLoadWarning) as caught:
        loaded, problems = S.load_session_source(tmp_path / "d", on_file=lambda: ticks.append(1))
    assert len(ticks) == 3 and len(caught) == 2
    assert [(Path(f).name, n) for _, f, n in loaded] == [("bad.jsonl", 1), ("good.jsonl", 0)]
    assert [(Path(f).name, line) for f, line, _ in problems] == [("bad.jsonl", 26), ("notes.jsonl", None)]
    loaded, problems = S.load_session_source(tmp_path / "d", strict=False)
    assert len(loaded) == 2 and len(problems) == 2
    with pytest.raises(SessionFileCorruptError):
        S.load_session_source(tmp_path / "d", strict=True)
    with pytest.raises(InvalidSessionFileError):
        S.load_session_source(notes)  # named explicitly: raises even with strict=None


# -- columns as data -----------------------------------------------------------------------


def test_every_column_is_declared_once_with_its_dtype() -> None:
    dtypes = {"string", "Int64", "boolean", "Float64", C.TIMESTAMP_DTYPE}
    for kind, spec in C.FRAME_SPECS.items():
        names = [c.name for c in spec]
        assert len(names) == len(set(names)), kind
        assert all(c.dtype in dtypes and callable(c.value) for c in spec), kind
        assert F.FRAME_DTYPES[kind] == {c.name: c.dtype for c in spec}
        for c in spec:  # a name has one dtype in every frame
            assert C.column_dtype(c.name) == c.dtype, (kind, c.name)


@pytest.mark.parametrize("kind", C.FRAME_KINDS)
def test_the_frames_have_the_declared_dtypes(kind: str) -> None:
    df = getattr(F, f"{kind}_df")(SOURCES)
    assert list(df.columns) == list(C.FRAME_COLUMNS[kind])
    assert {c: str(t) for c, t in df.dtypes.items()} == C.FRAME_DTYPES[kind]


@pytest.mark.parametrize("kind", C.FRAME_KINDS)
def test_columns_picks_the_columns_of_the_full_frame(kind: str) -> None:
    fn = getattr(F, f"{kind}_df")
    full = fn(SOURCES)
    names = list(C.FRAME_COLUMNS[kind])
    picks = [names[::-3], [names[-1]], names[1::2]]
    for pick in picks:
        assert_frame_equal(fn(SOURCES, columns=pick), full[pick])
    assert_frame_equal(fn(SOURCES, columns=names[0]), full[[names[0]]])
    with pytest.raises(NotebookError, match=f"unknown {kind}_df column"):
        fn(SOURCES, columns=["nope"])


def test_tokens_is_a_column_with_an_encoding_only() -> None:
    with pytest.raises(NotebookError, match="tokens needs encoding"):
        F.entries_df(FIXTURE, columns=["tokens"])
    got = F.messages_df(FIXTURE, encoding="cl100k_base", columns=["entry_id", "tokens"])
    full = F.messages_df(FIXTURE, encoding="cl100k_base")
    assert_frame_equal(got, full[["entry_id", "tokens"]])


def test_only_the_columns_asked_for_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: dict[str, int] = {"after": 0, "estimates": 0}
    after, estimates = X.CompactionRow.estimate_after, X.LoadedSession.estimates

    def count_after(self: Any) -> int:
        calls["after"] += 1
        return after(self)

    def count_estimates(self: Any) -> Any:
        calls["estimates"] += 1
        return estimates(self)

    estimate_at = X.LoadedSession.estimate_at

    def count_estimate_at(self: Any, i: int) -> Any:  # (one entry's estimate: lazily loaded files)
        calls["estimates"] += 1
        return estimate_at(self, i)

    monkeypatch.setattr(X.CompactionRow, "estimate_after", count_after)
    monkeypatch.setattr(X.LoadedSession, "estimates", count_estimates)
    monkeypatch.setattr(X.LoadedSession, "estimate_at", count_estimate_at)
    source = HERE / "fixtures" / "e2e" / "compaction_after_run.jsonl"
    picked = F.compactions_df(source, columns=["entry_id", "tokens_before"])
    assert len(picked) == 2 and calls == {"after": 0, "estimates": 0}
    F.entries_df(source, columns=["entry_id", "type"])
    assert calls == {"after": 0, "estimates": 0}
    F.compactions_df(source)
    assert calls["after"] == 2 and calls["estimates"] >= 1


def test_rows_are_plain_python() -> None:
    picked, rows, problems = session_rows(SOURCES, C.FRAME_KINDS)
    assert not problems
    plain = (str, int, float, bool, type(None))
    for kind in C.FRAME_KINDS:
        assert [c.name for c in picked[kind]] == list(C.FRAME_COLUMNS[kind])
        assert rows[kind] and all(len(r) == len(picked[kind]) for r in rows[kind])
        assert all(isinstance(v, plain) for r in rows[kind] for v in r), kind
        assert_frame_equal(F.frame_of_rows(kind, rows[kind]), getattr(F, f"{kind}_df")(SOURCES))


def test_latest_time_compares_instants() -> None:
    assert (
        X.latest_time(["2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"]) == "2026-01-02T00:00:00.000Z"
    )
    assert X.latest_time(["2026-01-01T10:00:00+01:00", "2026-01-01T09:30:00Z", "yesterday"]) == (
        "2026-01-01T09:30:00Z"
    )
    assert X.latest_time(["yesterday", "2026-13-02T10:33:56.768Z"]) is None
    times = ["2026-12-02T10:33:56Z", "2026-12-02T11:33:56.768+01:00", "2026-12-02T09:00:00.000Z", "x"]
    parsed = pd.to_datetime(pd.Series(times, dtype=object), utc=True, errors="coerce", format="ISO8601")
    assert X.latest_time(times) == times[int(parsed.argmax())]  # as pandas picks it


# -- truncation reports --------------------------------------------------------------------


def _read_session(tmp_path: Path) -> SessionManager:
    from pi_nb.tools import create_read_tool

    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    (tmp_path / "small.txt").write_text("hello\n")
    tool = create_read_tool(str(tmp_path))
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message({"role": "user", "content": "read them", "timestamp": 1})
    calls = [
        {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": p}}
        for i, p in enumerate(["big.txt", "small.txt"])
    ]
    sm.append_message(
        {
            "role": "assistant",
            "content": calls,
            "provider": "p",
            "model": "m",
            "api": "a",
            "stopReason": "toolUse",
            "timestamp": 2,
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        }
    )
    for call in calls:
        result = asyncio.run(tool.execute(call["id"], call["arguments"]))
        content = result.content if hasattr(result, "content") else result["content"]
        details = result.details if hasattr(result, "details") else result["details"]
        sm.append_message(
            {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": "read",
                "content": content,
                "details": details,
                "isError": False,
                "timestamp": 3,
            }
        )
    return sm


def test_session_truncation_reports_say_what_was_cut_where(tmp_path: Path) -> None:
    sm = _read_session(tmp_path)
    reports = session_truncation_reports(sm)
    assert len(reports) == 1  # only the big file was cut
    (r,) = reports
    assert r.tool_name == "read" and r.tool_call_id == "c0" and r.mode == "head" and r.truncated
    assert r.full_text_source == "re-read file" and r.matches is True
    assert r.truncation is not None and r.truncation.output_lines == 2000 and r.truncation.total_lines == 5000
    assert r.cut_offset == len(r.truncation.content.encode())
    assert r.notice_total_lines() == 5001
    everything = session_truncation_reports(sm, truncated_only=False)
    assert [x.tool_call_id for x in everything] == ["c0", "c1"] and not everything[1].truncated
    # the frames and the reports agree on what was cut
    df = F.tool_results_df(sm)
    assert df["truncated"].tolist() == [True, False]
    assert int(df.loc[0, "output_lines"]) == r.truncation.output_lines


def test_the_view_renders_the_engines_report(tmp_path: Path) -> None:
    from pi_nb.analysis import truncation as engine
    from pi_nb.notebook import truncation as view

    assert view.TruncationReport is engine.TruncationReport
    assert view.truncation_report is engine.truncation_report
    assert view.truncation_report_for_text is engine.truncation_report_for_text
    (r,) = session_truncation_reports(_read_session(tmp_path))
    html = view.TruncationView(r).to_html()
    assert "truncated by lines" in html and "kept 2000 of 5000 lines" in html


def test_a_column_of_ones_own_is_read_like_the_declared_ones() -> None:
    words = C.Column("words", "Int64", lambda r: len(r.parts()[0].split()))
    df = F.messages_df(SOURCES, columns=["entry_id", words, "text"])
    assert list(df.columns) == ["entry_id", "words", "text"] and str(df["words"].dtype) == "Int64"
    assert df["words"].tolist() == [len(t.split()) for t in df["text"]]
    got = F.session_frames(
        FIXTURE, ["usage"], columns={"usage": [C.Column("io", "Int64", lambda r: r.usage.get("input"))]}
    )
    assert got["usage"]["io"].tolist() == F.usage_df(FIXTURE)["input"].tolist()
    with pytest.raises(NotebookError, match="dtype must be one of"):
        F.entries_df(FIXTURE, columns=[C.Column("x", "int", lambda r: 1)])  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="asked for twice"):
        F.entries_df(FIXTURE, columns=["entry_id", "entry_id"])


def test_the_corpus_loaders_read_only_the_columns_asked_for() -> None:
    from pi_nb.notebook.corpus import corpus_dask, load_corpus

    pick = {"usage": ["entry_id", "cost_total"], "entries": ["type"]}
    full = F.session_frames(SOURCES, ["usage", "entries"])
    for workers in (1, 2):
        got = load_corpus(SOURCES, ["usage", "entries"], workers=workers, chunk_size=2, columns=pick)
        for kind, names in pick.items():
            assert_frame_equal(got[kind], full[kind][names])
    pytest.importorskip("dask")
    import dask

    lazy = corpus_dask(SOURCES, ["usage", "entries"], files_per_partition=3, columns=pick)
    with dask.config.set(scheduler="synchronous"):
        for kind, names in pick.items():
            assert_frame_equal(lazy[kind].compute().reset_index(drop=True), full[kind][names])
