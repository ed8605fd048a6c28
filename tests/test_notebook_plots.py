"""matplotlib plots (pi_nb.notebook.plots) on the Agg backend: the data behind them, the
artists they draw (window, threshold, markers), and that they render to PNG."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.figure import Figure

from pi_nb.errors import NotebookError
from pi_nb.notebook.budget import MESSAGE_CATEGORIES
from pi_nb.notebook.plots import (
    composition_series,
    context_series,
    plot_context_tokens,
    plot_token_composition,
    plot_truncation,
)
from pi_nb.notebook.views import load_session
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import count_message_tokens

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"
DEMO = HERE / "fixtures" / "sessions" / "--tmp-demo--"


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    data = buf.getvalue()
    assert data.startswith(b"\x89PNG") and len(data) > 5000
    return data


def test_context_series_of_pis_fixture() -> None:
    sm = load_session(FIXTURE)
    sm.branch("e15")
    data = context_series(sm)
    assert [(t[1], t[2]) for t in data["turns"]] == [
        ("e4", 1200),
        ("e6", 1500),
        ("e8", 2100),
        ("e10", 2300),
        ("e13", 2600),
        ("e15", 2700),
    ]
    kinds = {(m[1], m[2]) for m in data["markers"]}
    assert kinds == {("model_change", "e2"), ("branch_point", "e10"), ("compaction", "e11")}
    data = context_series(FIXTURE)  # leaf b9: the other branch
    assert ("branch_summary", "b1") in {(m[1], m[2]) for m in data["markers"]}


def test_plot_context_tokens_draws_window_threshold_and_markers() -> None:
    sm = load_session(FIXTURE)
    sm.branch("e15")
    fig = plot_context_tokens(sm, context_window=4000, reserve_tokens=500)
    ax = fig.axes[0]
    hlines = sorted(
        round(line.get_ydata()[0])
        for line in ax.get_lines()
        if len(set(line.get_ydata())) == 1 and line.get_xdata()[0] == 0
    )
    assert 4000 in hlines and 3500 in hlines and 2800 in hlines and 3600 in hlines
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    for needle in (
        "context tokens (provider usage)",
        "context window 4.0k",
        "threshold 3.5k",
        "compaction",
        "model change",
        "branch point",
    ):
        assert needle in labels
    texts = [t.get_text() for t in ax.texts]
    assert "compaction (5.0k before)" in texts
    _png(fig)
    with pytest.raises(NotebookError):
        plot_context_tokens(sm, context_window=0)


def test_composition_follows_compaction() -> None:
    sm = load_session(FIXTURE)
    sm.branch("e15")
    data = composition_series(sm)
    assert data["entry_ids"] == ["e4", "e6", "e8", "e10", "e13", "e15"]
    # at e13 the context is: summary + e7..e10 (kept) + e12
    entries = {e["id"]: e for e in sm.get_entries()}
    i = data["entry_ids"].index("e13")
    kept_user = count_message_tokens(entries["e7"]["message"]) + count_message_tokens(
        entries["e12"]["message"]
    )
    assert data["categories"]["user"][i] == kept_user
    assert data["categories"]["summaries"][i] > 0
    assert data["categories"]["tool results"][i] == count_message_tokens(entries["e9"]["message"])
    # before the compaction there are no summaries
    assert data["categories"]["summaries"][: data["entry_ids"].index("e10") + 1] == [0, 0, 0, 0]
    fig = plot_token_composition(sm)
    assert len(fig.axes[0].collections) == 4
    _png(fig)


def test_composition_equals_the_rebuilt_context() -> None:
    """Each response's composition equals tiktoken of the context Pi rebuilds at its parent."""
    from pi_nb.notebook.budget import MESSAGE_CATEGORIES, message_category

    sm = load_session(FIXTURE)
    for leaf in ("e15", "b6"):
        sm.branch(leaf)
        data = composition_series(sm)
        for i, eid in enumerate(data["entry_ids"]):
            parent = sm.get_entry(eid)["parentId"]  # type: ignore[index]
            probe = load_session(FIXTURE)
            probe.branch(parent)
            want = dict.fromkeys(MESSAGE_CATEGORIES, 0)
            for m in probe.build_session_context().messages:
                want[message_category(m)] += count_message_tokens(m)  # type: ignore[index]
            assert {c: data["categories"][c][i] for c in MESSAGE_CATEGORIES} == want


def test_plot_truncation_per_tool() -> None:
    fig = plot_truncation(DEMO)
    ax1, ax2 = fig.axes[:2]
    assert [t.get_text() for t in ax1.get_xticklabels()] == ["bash", "edit", "grep", "read"]
    heights = {}
    for container, label in zip(ax1.containers, ["complete", "cut by lines", "cut by bytes"], strict=True):
        heights[label] = [p.get_height() for p in container]
    assert heights["cut by bytes"] == [2, 0, 0, 0] and heights["cut by lines"] == [0, 0, 0, 1]
    assert heights["complete"] == [0, 1, 1, 0]
    assert ax2.get_yscale() == "log"
    _png(fig)


def test_plots_of_an_empty_session() -> None:
    sm = SessionManager.in_memory("/tmp")
    for fig in (
        plot_context_tokens(sm, context_window=1000),
        plot_token_composition(sm),
        plot_truncation(sm),
    ):
        _png(fig)


def test_plot_into_given_axes_draws_once_and_returns_that_axes() -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_context_tokens(FIXTURE, ax=ax, context_window=8000) is ax
    assert fig.axes == [ax]
    assert [line.get_label() for line in ax.get_lines()].count("context tokens (provider usage)") == 1
    fig2 = Figure()
    ax2 = fig2.add_subplot()
    assert plot_token_composition(FIXTURE, ax=ax2) is ax2
    assert len(ax2.collections) == len(MESSAGE_CATEGORIES) and fig2.axes == [ax2]
    fig3 = Figure()
    axes = list(fig3.subplots(1, 2))
    assert plot_truncation(DEMO, axes=axes) == axes and fig3.axes == axes
    assert len(axes[0].containers) == 3  # complete / cut by lines / cut by bytes, once
    with pytest.raises(NotebookError, match="two matplotlib Axes"):
        plot_truncation(FIXTURE, axes=[axes[0]])
    with pytest.raises(NotebookError, match="matplotlib Axes"):
        plot_context_tokens(FIXTURE, ax=fig)
    # without ax: a new Figure each time
    assert isinstance(plot_context_tokens(FIXTURE), Figure)


def _agent_session(tmp_path: Path) -> Any:
    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel

    sm = load_session(FIXTURE)
    return AgentSession(sm, ScriptedModel(), agent_dir=str(tmp_path / "agent"), tools=[], active_tools=[])


def _axis_labels(fig: Figure) -> list[tuple[str, str]]:
    return [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]


@pytest.mark.parametrize("plot", [plot_context_tokens, plot_token_composition, plot_truncation])
def test_every_plot_takes_every_kind_of_source(plot: Any, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(FIXTURE, copy)
    sources = {
        "manager": load_session(FIXTURE),
        "agent session": _agent_session(tmp_path),
        "file": FIXTURE,
        "file as str": str(FIXTURE),
        "directory": DEMO,
        "list": [FIXTURE, load_session(copy), DEMO],
    }
    for name, source in sources.items():
        fig = plot(source)
        assert isinstance(fig, Figure), name
        _png(fig)
        for xlabel, ylabel in _axis_labels(fig):
            assert xlabel and ylabel, (name, xlabel, ylabel)
    # several sessions: one line per session
    fig = plot_context_tokens(DEMO)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert sorted(x for x in labels if x.startswith("session ")) == ["session 0000d001", "session 0000d002"]
    assert "2 sessions" in fig.axes[0].get_title()
    with pytest.raises(NotebookError, match="one session, got 2"):
        context_series(DEMO)
    with pytest.raises(NotebookError, match="session source"):
        plot(42)


def test_axes_are_labelled_with_units_and_counts_have_integer_ticks() -> None:
    from matplotlib.ticker import MaxNLocator

    for fig in (
        plot_context_tokens(FIXTURE, context_window=8000),
        plot_token_composition(FIXTURE),
        plot_token_composition(DEMO),
    ):
        ax = fig.axes[0]
        assert "(tokens" in ax.get_ylabel()
        assert isinstance(ax.yaxis.get_major_locator(), MaxNLocator)
        assert all(float(t).is_integer() for t in ax.get_yticks())
        if "entry index" in ax.get_xlabel():
            assert isinstance(ax.xaxis.get_major_locator(), MaxNLocator)
            assert all(float(t).is_integer() for t in ax.get_xticks())
    # a short session: without the integer locator, matplotlib would tick at 0.5 entries
    tiny = SessionManager.in_memory("/tmp")
    tiny.append_message({"role": "user", "content": "hi", "timestamp": 1})
    fig = plot_context_tokens(tiny)
    assert all(float(t).is_integer() for t in fig.axes[0].get_xticks())
    ax1, ax2 = plot_truncation(DEMO).axes[:2]
    assert ax1.get_ylabel() == "tool results (count)" and isinstance(
        ax1.yaxis.get_major_locator(), MaxNLocator
    )
    assert ax2.get_ylabel() == "output size (bytes, log scale)"
    assert ax1.get_xlabel() == ax2.get_xlabel() == "tool"
