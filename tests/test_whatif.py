"""Frames and plots of what-if replays and policy sweeps (pi_nb/notebook/what_if.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from pi_nb.errors import NotebookError
from pi_nb.notebook.what_if import (
    DECISION_COLUMNS,
    SWEEP_COLUMNS,
    compactions_compare_df,
    decisions_df,
    plot_replay,
    plot_sweep,
    steps_df,
    sweep_df,
)
from pi_nb.what_if import replay, sweep

ROOT = Path(__file__).resolve().parents[1]
E2E = ROOT / "tests" / "fixtures" / "e2e"
REAL_PI = ROOT / "notebooks" / "data" / "real-pi"


def test_decisions_frame_has_one_row_per_checkpoint() -> None:
    same = replay(
        E2E / "compaction_between_turns.jsonl",
        context_window=8000,
        reserve_tokens=2000,
        keep_recent_tokens=2000,
    )
    other = replay(
        E2E / "compaction_between_turns.jsonl",
        context_window=6000,
        reserve_tokens=1500,
        keep_recent_tokens=800,
    )
    df = decisions_df([same, other])
    assert list(df.columns) == list(DECISION_COLUMNS)
    assert len(df) == len(same.decisions) + len(other.decisions)
    mine = df[df["compacted"]]
    assert len(mine) == len(same.compactions) + len(other.compactions)
    first = mine.iloc[: len(same.compactions)]
    assert first["matches_recorded"].all()  # the recorded policy reproduces the recording
    assert list(first["first_kept_entry_id"]) == [c.first_kept_entry_id for c in same.compactions]
    assert str(df["tokens_before"].dtype) == "Int64" and df["tokens_before"].isna().sum() == len(df) - len(
        mine
    )
    assert set(df["checkpoint"]) <= {"after_run", "pre_prompt", "between_turns"}
    with pytest.raises(NotebookError):
        decisions_df(["not a result"])  # type: ignore[list-item]


def test_compare_and_steps_frames() -> None:
    result = replay(
        E2E / "compaction_after_run.jsonl", context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500
    )
    cmp = compactions_compare_df(result)
    assert cmp["sim_id"].notna().sum() == len(result.compactions)
    assert cmp["rec_id"].notna().sum() == len(result.recorded_compactions)
    assert list(cmp["position"]) == sorted(cmp["position"])
    same = replay(
        E2E / "compaction_after_run.jsonl", context_window=8000, reserve_tokens=2000, keep_recent_tokens=2000
    )
    assert compactions_compare_df(same)["same"].all()
    steps = steps_df(result)
    assert len(steps) == len(result.steps)
    assert steps["simulated_tokens"].max() == result.peak_context_tokens
    assert set(steps["kind"]) >= {"user", "assistant", "compaction", "recorded_compaction"}


def test_plot_replay_draws_both_runs_and_the_threshold() -> None:
    result = replay(
        REAL_PI / "compaction.jsonl", context_window=5000, reserve_tokens=1500, keep_recent_tokens=1000
    )
    fig = plot_replay(result)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["recorded run", "replayed policy"]
    assert any(lbl.startswith("replayed compactions (") for lbl in labels)
    assert any(lbl.startswith("recorded compactions (2)") for lbl in labels)
    assert sum(1 for lbl in labels if lbl.startswith("threshold ")) == 1
    assert ax.lines[0].get_ydata().tolist() == [s.recorded_tokens for s in result.steps]
    assert ax.lines[1].get_ydata().tolist() == [s.simulated_tokens for s in result.steps]
    threshold_line = ax.lines[2]
    assert list(threshold_line.get_ydata()) == [3500, 3500]
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue().startswith(b"\x89PNG")


def test_sweep_frame_and_plot(tmp_path: Path) -> None:
    sources = [REAL_PI, E2E / "compaction_after_run.jsonl"]
    df = sweep_df(
        sources, context_window=[5000, 8000, 20000], reserve_tokens=[1000, 2000], keep_recent_tokens=[1500]
    )
    assert list(df.columns) == list(SWEEP_COLUMNS)
    assert df["session_id"].nunique() == 4 and len(df) == 4 * 6
    assert (df["threshold"] == df["context_window"] - df["reserve_tokens"]).all()
    # a larger window never needs more compactions on these sessions
    by_window = df.groupby("context_window")["compactions"].sum()
    assert by_window.loc[20000] <= by_window.loc[8000] <= by_window.loc[5000]
    parallel = sweep_df(
        sources,
        context_window=[5000, 8000, 20000],
        reserve_tokens=[1000, 2000],
        keep_recent_tokens=[1500],
        workers=2,
    )
    assert parallel.equals(df)
    engine = [
        o.to_dict()
        for o in sweep(
            [E2E / "compaction_after_run.jsonl"],
            context_window=[5000],
            reserve_tokens=[1000],
            keep_recent_tokens=[1500],
        )
    ]
    row = df[
        (df["session_file"] == str(E2E / "compaction_after_run.jsonl"))
        & (df["context_window"] == 5000)
        & (df["reserve_tokens"] == 1000)
    ].iloc[0]
    assert all(row[k] == v for k, v in engine[0].items())
    fig = plot_sweep(df, y="peak_context_tokens")
    assert isinstance(fig, Figure) and len(fig.axes[0].lines) == 2
    assert isinstance(plot_sweep(df, hue=None), Figure)
    with pytest.raises(NotebookError, match="no column"):
        plot_sweep(df, y="nope")
    # given an Axes, a plot draws there once and returns that Axes (no second figure to display)
    host = Figure()
    ax = host.add_subplot()
    assert plot_sweep(df, y="peak_context_tokens", ax=ax) is ax and len(ax.lines) == 2


def test_notebook_07_runs_offline_and_shows_the_replay(tmp_path: Path) -> None:
    """notebooks/07_what_if.ipynb, executed the way tools/run_notebooks.py runs every notebook."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import run_notebooks

    nb = run_notebooks.execute_notebook(
        ROOT / "notebooks" / "07_what_if.ipynb", agent_dir=str(tmp_path / "agent")
    )
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    text = "\n".join(
        o.get("text", "") if o.output_type == "stream" else str(o.get("data", {}).get("text/plain", ""))
        for o in outputs
    )
    for expected in (
        "between_turns                5e5e88d4               5321",  # Pi's own compaction, found again
        "4,500-token window: 6 compactions",
        "12,000-token window: 0 compactions",
        "rebased_usage",
        "## Goal",  # a real summary from the offline model
        "60 rows",
        "provider usage (output)",
        "overhead_tokens",
        "same frame: yes",
        "6 partitions",
    ):
        assert expected in text, expected
    assert sum(1 for o in outputs if "image/png" in o.get("data", {})) == 2
