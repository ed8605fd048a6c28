"""sessions_df: one row per session file (like Inspect AI's evals_df), its counts checked against
the other frames, ``columns=``, costs (stored, priced from the catalog, or missing) and the
progress bar (tqdm.auto: shown only past a second unless asked for)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import pi_nb
from pi_nb.errors import NotebookError
from pi_nb.notebook import frames as F

ROOT = Path(__file__).resolve().parents[1]
REAL_PI = ROOT / "notebooks" / "data" / "real-pi"
FIXTURE = ROOT / "tests" / "fixtures" / "pi_session.jsonl"
sys.path.insert(0, str(ROOT / "benchmarks"))
from corpus import write_corpus  # noqa: E402


def test_one_row_per_session_with_counts_that_match_the_other_frames(tmp_path: Path) -> None:
    files = write_corpus(tmp_path / "c", 30)
    sources: list[Any] = [REAL_PI, FIXTURE, *files]
    df = F.sessions_df(sources)
    entries = F.entries_df(sources)
    usage = F.usage_df(sources)
    messages = F.messages_df(sources)
    assert len(df) == 3 + 1 + 30 and df["session_file"].is_unique
    assert list(df["session_file"]) == list(dict.fromkeys(entries["session_file"]))  # file order
    by = df.set_index("session_file")
    for sid, group in entries.groupby("session_file", sort=False):
        row = by.loc[sid]
        assert row["entries"] == len(group)
        assert row["compactions"] == (group["type"] == "compaction").sum()
        assert row["branch_summaries"] == (group["type"] == "branch_summary").sum()
        assert row["branch_points"] == (group["children"] > 1).sum()
        assert row["leaves"] == (group["children"] == 0).sum()
        assert row["active_branch_entries"] == group["on_active_branch"].sum()
        assert row["leaf_id"] == group.loc[group["is_leaf"], "entry_id"].iloc[0]
        assert row["start"] <= group["timestamp"].min() and row["end"] == group["timestamp"].max()
        msgs = messages[messages["session_file"] == sid]
        assert row["messages"] == len(msgs)
        assert row["turns"] == (msgs["role"] == "user").sum()
        assert row["responses"] == (msgs["role"] == "assistant").sum()
        assert row["tool_calls"] == msgs["tool_calls"].sum()
        u = usage[usage["session_file"] == sid]
        assert row["input_tokens"] == u["input"].sum() and row["total_tokens"] == u["total_tokens"].sum()
        assert row["error_responses"] == (u["stop_reason"] == "error").sum()
        assert row["cost_total"] == pytest.approx(u["cost_total"].sum())
        on_branch = u[u["on_active_branch"] & u["usable"]]
        if len(on_branch):
            assert row["last_context_tokens"] == on_branch["context_tokens"].iloc[-1]
            assert row["peak_context_tokens"] == on_branch["context_tokens"].max()
    fixture = by.loc[str(FIXTURE)]
    assert fixture["models"] and fixture["model"] in fixture["models"].split(",")
    assert isinstance(df["start"].dtype, pd.DatetimeTZDtype) and str(df["start"].dt.tz) == "UTC"


def test_columns_picks_and_unknown_columns_say_which_exist() -> None:
    df = F.sessions_df(REAL_PI, columns=["session_id", "turns", "cost_total"])
    assert list(df.columns) == ["session_id", "turns", "cost_total"] and len(df) == 3
    assert list(F.sessions_df(REAL_PI, "cwd").columns) == ["cwd"]
    with pytest.raises(
        NotebookError, match=r"unknown sessions_df column\(s\) 'turn'.*session_id, session_file"
    ):
        F.sessions_df(REAL_PI, columns=["session_id", "turn"])
    got, errors = F.sessions_df(REAL_PI, columns=["session_id"], strict=False)
    assert list(got.columns) == ["session_id"] and errors.empty


def _without_costs(tmp_path: Path, provider: str, model: str) -> Path:
    """A real Pi file whose answers name ``provider/model`` and store no cost."""
    lines = [json.loads(line) for line in (REAL_PI / "tools.jsonl").read_text().splitlines() if line.strip()]
    for e in lines:
        msg = e.get("message")
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            msg["usage"].pop("cost", None)
            msg["provider"], msg["model"] = provider, model
    path = tmp_path / f"nocost-{provider}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def test_costs_stored_priced_from_the_catalog_or_missing(tmp_path: Path) -> None:
    # answers of a catalog model with no stored cost are priced as Pi prices them
    path = _without_costs(tmp_path, "anthropic", "claude-sonnet-4-5")
    spec = pi_nb.find_model("anthropic", "claude-sonnet-4-5")
    assert spec is not None
    usage = F.usage_df(path)
    expected = sum(
        pi_nb.calculate_cost(spec, {k: int(r[k]) for k in ("input", "output", "cacheRead", "cacheWrite")})["total"]
        for _, r in usage.rename(columns={"cache_read": "cacheRead", "cache_write": "cacheWrite"}).iterrows()
    )
    row = F.sessions_df(path).iloc[0]
    assert row["unpriced_responses"] == 0 and expected > 0
    assert row["cost_total"] == pytest.approx(expected)
    # a stored cost is used as it is (the real file stores zeros: the offline model is free)
    assert F.sessions_df(REAL_PI / "tools.jsonl").iloc[0]["cost_total"] == 0
    # a model the catalog does not know stays unpriced
    unknown = _without_costs(tmp_path, "no-such-provider", "no-such-model")
    row = F.sessions_df(unknown).iloc[0]
    assert pd.isna(row["cost_total"]) and row["unpriced_responses"] == row["responses"] > 0


class FakeBar:
    made: list[FakeBar] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.n = 0
        self.closed = False
        FakeBar.made.append(self)

    def update(self, n: int) -> None:
        self.n += n

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_tqdm(monkeypatch: pytest.MonkeyPatch) -> type[FakeBar]:
    module = types.ModuleType("tqdm.auto")
    module.tqdm = FakeBar  # type: ignore[attr-defined]
    parent = types.ModuleType("tqdm")
    parent.auto = module  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", parent)
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    FakeBar.made = []
    return FakeBar


def test_progress_bar_over_the_files(fake_tqdm: type[FakeBar], tmp_path: Path) -> None:
    files = write_corpus(tmp_path / "c", 12)
    managers = F.session_managers(files[:2], progress=False)
    F.sessions_df(tmp_path / "c")
    (bar,) = fake_tqdm.made
    # by default the bar appears only once loading has taken a second (tqdm's delay)
    assert bar.kwargs["total"] == 12 and bar.kwargs["delay"] == 1.0 and bar.kwargs["unit"] == "file"
    assert bar.n == 12 and bar.closed
    F.sessions_df(files[:3], progress=True)
    assert fake_tqdm.made[-1].kwargs["delay"] == 0 and fake_tqdm.made[-1].n == 3
    F.sessions_df(files, progress=False)
    F.sessions_df(managers)  # nothing to read: no bar
    assert len(fake_tqdm.made) == 2
    F.entries_df(files[:2], progress=True)  # every frame has the same progress
    assert fake_tqdm.made[-1].n == 2


def test_progress_bar_with_the_real_tqdm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    files = write_corpus(tmp_path / "c", 5)
    F.sessions_df(files, progress=True)
    err = capsys.readouterr().err
    assert "5/5" in err and "file" in err
    F.sessions_df(files)  # fast: no bar at all
    assert "5/5" not in capsys.readouterr().err


def test_progress_true_without_tqdm_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_nb.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(MissingDependencyError, match="pip install tqdm"):
        F.sessions_df(REAL_PI, progress=True)
    assert len(F.sessions_df(REAL_PI)) == 3  # without the bar, the frame still comes


def test_an_agent_session_is_a_source(tmp_path: Path) -> None:
    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel

    sm = F.session_managers(FIXTURE)[0]
    session = AgentSession(sm, ScriptedModel(), agent_dir=str(tmp_path / "agent"), tools=[], active_tools=[])
    row = F.sessions_df(session).iloc[0]
    assert row["session_id"] == sm.get_session_id() and row["entries"] == len(sm.get_entries())
    pd.testing.assert_frame_equal(F.entries_df(session), F.entries_df(sm))
