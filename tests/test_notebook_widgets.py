"""Live widgets (pi_nb.notebook.widgets), driven through a recording comm (no kernel): widget
state as a frontend would see it, frontend messages coming back, navigation with a fake
callback, throttled budget updates, and the static mime bundle."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import comm
import pytest
from comm.base_comm import BaseComm

from pi_nb.errors import NotebookError
from pi_nb.notebook import widgets as widgets_mod
from pi_nb.notebook.budget import BudgetInput, budget_input_from_session
from pi_nb.notebook.views import MIME_WIDGET, load_session
from pi_nb.notebook.widgets import (
    SUMMARY_CHOICES,
    BudgetView,
    SessionTreeView,
    session_tree,
    token_budget,
    tool_result_truncation,
    truncation_view,
)

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"
DEMO = HERE / "fixtures" / "sessions" / "--tmp-demo--"


class RecordingComm(BaseComm):
    """A comm that keeps every message the kernel side would send to the frontend."""

    sent: list[tuple[str, dict[str, Any]]] = []

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        RecordingComm.sent.append((msg_type, data or {}))


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    RecordingComm.sent = []
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    return RecordingComm.sent



def catalog_window(provider: str, model_id: str) -> int:
    """The window the model catalog gives (Pi's catalog when pi_nb has it, else the registry)."""
    try:
        from pi_nb.providers.catalog import context_window_for  # type: ignore[import-not-found]
    except ImportError:
        from pi_nb.providers.registry import KNOWN_MODELS  # type: ignore[attr-defined]

        return int(KNOWN_MODELS[f"{provider}/{model_id}"].context_window)
    return int(context_window_for(provider, model_id))


def _frontend_update(widget: Any, **state: Any) -> None:
    """What a frontend sends when the user changes a control."""
    widget.comm.handle_msg(
        {"content": {"data": {"method": "update", "state": state, "buffer_paths": []}}, "buffers": []}
    )


def _frontend_click(button: Any) -> None:
    button.comm.handle_msg(
        {"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []}
    )


def _updates_of(sent: list[tuple[str, dict[str, Any]]], widget: Any, key: str) -> list[Any]:
    out = []
    for msg_type, data in sent:
        if msg_type == "comm_msg" and data.get("method") == "update" and key in data.get("state", {}):
            out.append(data["state"][key])
    return out


class FakeSession:
    """Stands in for AgentSession.navigate_tree: moves the leaf, records the call."""

    def __init__(self, sm: Any) -> None:
        self.sm = sm
        self.calls: list[tuple[str, bool, str | None]] = []

    def navigate_tree(
        self, target_id: str, summarize: bool, custom_instructions: str | None
    ) -> dict[str, Any]:
        self.calls.append((target_id, summarize, custom_instructions))
        if summarize:
            self.sm.branch_with_summary(target_id, f"summary ({custom_instructions or 'default'})")
        else:
            self.sm.branch(target_id)
        return {"cancelled": False}


# =============================================================================================
# session tree
# =============================================================================================


def test_tree_widget_state_and_navigation(recorded: list[Any]) -> None:
    sm = load_session(FIXTURE)
    fake = FakeSession(sm)
    view = session_tree(sm, on_navigate=fake.navigate_tree)
    box = view.widget()
    assert view.rows.comm is not None and isinstance(view.rows.comm, RecordingComm)
    # the opened state the frontend gets: rows of the page, the leaf selected
    state = view.rows.get_state()
    labels = state["_options_labels"]
    assert len(labels) == 24 and labels[0].startswith("▌─ user: Please read README.md")
    assert view.rows.value == "b9" and "● leaf" in labels[view.rows.index]
    assert "24 entries" in view.header.value and "b9" in view.header.value
    # the user picks e7 in the frontend
    _frontend_update(view.rows, index=[e for e, (_l, k) in enumerate(view.rows.options) if k == "e7"][0])
    assert view.model.selected_id == "e7"
    assert "checkpoint" in view.detail.value and "tiktoken" in view.detail.value
    # custom instructions are only enabled for the custom-prompt choice
    assert view.instructions.disabled
    _frontend_update(view.summary_choice, index=2)
    assert view.summary_choice.value == SUMMARY_CHOICES[2] and not view.instructions.disabled
    _frontend_update(view.instructions, value="keep the test names")
    _frontend_click(view.navigate_button)
    assert fake.calls == [("e7", True, "keep the test names")]
    # the tree was re-read: a new branch summary under e7 is the leaf now
    new_leaf = sm.get_leaf_id()
    assert view.model.leaf_id == new_leaf and view.model.entry(new_leaf or "")["type"] == "branch_summary"
    assert "navigated to" in view.status.value
    assert any(new_leaf in str(v) for v in _updates_of(recorded, view.header, "value"))
    assert box.children[0] is view.header


def test_tree_widget_navigation_without_summary(recorded: list[Any]) -> None:
    sm = load_session(FIXTURE)
    fake = FakeSession(sm)
    view = SessionTreeView(sm, on_navigate=fake.navigate_tree)
    view.widget()
    view.select("e12")
    view.summary_choice.value = SUMMARY_CHOICES[0]
    view.instructions.value = "ignored"
    view.navigate_button.click()
    assert fake.calls == [("e12", False, None)]
    assert sm.get_leaf_id() == "e12" and view.model.leaf_id == "e12"


def test_tree_widget_shows_callback_errors(recorded: list[Any]) -> None:
    def failing(target: str, summarize: bool, instructions: str | None) -> None:
        raise RuntimeError("Branch summarization cancelled")

    view = SessionTreeView(FIXTURE, on_navigate=failing)
    view.widget()
    view.select("e7")
    # ipywidgets reports a callback's exception itself (logged, or a traceback in a shell); the
    # view also shows it in its status line and keeps it
    view.navigate_button.click()
    assert "RuntimeError" in view.status.value and "cancelled" in view.status.value
    assert isinstance(view.last_error, RuntimeError)


def test_tree_read_only_without_callback(recorded: list[Any]) -> None:
    view = SessionTreeView(FIXTURE)
    view.widget()
    assert view.navigate_button.disabled
    with pytest.raises(NotebookError, match="read-only"):
        view.navigate("e1")


def test_navigate_checks_its_arguments() -> None:
    view = SessionTreeView(FIXTURE, on_navigate=lambda *a: None)
    with pytest.raises(NotebookError, match="not found"):
        view.navigate("nope")
    with pytest.raises(NotebookError, match="only apply when summarizing"):
        view.navigate("e1", summarize=False, custom_instructions="x")


def test_tree_widget_fold_filter_paging(recorded: list[Any]) -> None:
    view = SessionTreeView(FIXTURE, page_size=10)
    view.widget()
    assert view.page == 1 and view.page_label.value == "page 2/3"  # the leaf's page... b9 is row 19
    _frontend_click(view.next_button)
    assert view.page == 2 and view.next_button.disabled
    _frontend_click(view.prev_button)
    _frontend_click(view.prev_button)
    assert view.page == 0 and view.prev_button.disabled
    view.select("e10")
    _frontend_click(view.fold_button)
    assert "e10" in view.model.folded and any("[+14]" in label for label, _ in view.rows.options)
    _frontend_click(view.fold_button)
    assert not view.model.folded
    _frontend_update(view.filter, index=list(view.filter.options).index("user-only"))
    assert view.model.filter_mode == "user-only"
    assert [k for _l, k in view.rows.options] == ["e1", "e7", "b2", "e12"]
    _frontend_click(view.leaf_button)
    # the leaf (b9) is hidden in user-only; its nearest visible ancestor page is shown
    assert view.model.selected_id == "b9"


def test_tree_widget_expands_collapsed_runs(recorded: list[Any]) -> None:
    sm = load_session(FIXTURE)
    for i in range(60):
        sm.append_message({"role": "user", "content": f"more {i}", "timestamp": 2_000_000_000_000 + i})
    view = SessionTreeView(sm, run_threshold=20)
    view.widget()
    keys = [k for _l, k in view.rows.options]
    run_keys = [k for k in keys if k.startswith("run:")]
    assert len(run_keys) == 1
    view.rows.value = run_keys[0]
    view.fold_button.click()
    assert not any(k.startswith("run:") for _l, k in view.rows.options)


def test_tree_of_pis_own_file_in_every_frontend(recorded: list[Any]) -> None:
    view = session_tree(FIXTURE)
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}  # no kernel: static only
    assert "Session tree" in bundle["text/plain"] and "pi-nb-tree" in bundle["text/html"]
    view.live = True
    bundle = view._repr_mimebundle_()
    assert bundle[MIME_WIDGET]["model_id"] == view.widget().model_id
    assert "text/html" in bundle  # the static fallback stays


# =============================================================================================
# budget
# =============================================================================================


def test_budget_widget_updates_live_and_throttles(
    recorded: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    sm = load_session(FIXTURE)
    inp = budget_input_from_session(sm, model_context_window=8000)
    view = BudgetView(inp, min_interval=10.0)
    html = view.widget()
    assert "Token budget" in html.value and "3,100" in html.value  # the provider usage of b6
    first = html.value
    msgs = list(inp.messages)
    grown = BudgetInput(
        messages=[*msgs, {"role": "user", "content": "another question " * 50, "timestamp": 1}],
        context_window=8000,
    )
    # the first update draws at once; one within the interval is deferred to a timer
    assert view.update(inp) is True and view.draws == 1 and html.value == first
    assert view.update(grown) is False
    assert html.value == first
    view.flush()
    assert html.value != first and view.draws == 2
    assert _updates_of(recorded, html, "value")[-1] == html.value
    # force draws at once; the trailing timer draws a deferred update by itself
    view.min_interval = 0.05
    view._last_draw = time.monotonic()
    assert view.update(inp) is False
    deadline = time.monotonic() + 5
    while view.draws < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert view.draws == 3 and html.value == first
    assert view.update(grown, force=True) is True


def test_budget_tracker_is_reused_across_updates(monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_nb.notebook import budget as budget_mod

    counted: list[str] = []
    real = budget_mod.message_token_breakdown
    monkeypatch.setattr(
        budget_mod,
        "message_token_breakdown",
        lambda m, e="o200k_base": counted.append(m["role"]) or real(m, e),
    )
    sm = load_session(FIXTURE)
    view = token_budget(sm, model_context_window=8000, min_interval=0)
    html = view.widget()
    n = len(counted)
    sm.append_message({"role": "user", "content": "one more " * 30, "timestamp": 2_000_000_000_000})
    assert view.refresh(force=True) is True
    assert len(counted) - n == 1  # only the new message was tokenized
    assert view.budget.message_count == 16 and "one more" not in html.value
    assert html.value == view.to_html()
    with pytest.raises(NotebookError, match="from_session"):
        BudgetView(view.budget).refresh()


def test_budget_view_bundle_and_errors() -> None:
    view = token_budget(FIXTURE, model_context_window=200_000)
    bundle = view._repr_mimebundle_()
    assert "provider usage" in bundle["text/plain"] and "pi-nb-budget" in bundle["text/html"]
    # without a window, the model the session used is looked up in the catalog
    found = token_budget(FIXTURE)
    assert isinstance(found, BudgetView)
    assert found.budget.context_window == catalog_window("anthropic", "claude-sonnet-4-5")
    with pytest.raises(NotebookError, match="model_context_window"):
        token_budget([{"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": "hi", "timestamp": 1}}])
    with pytest.raises(NotebookError, match="TokenBudget or a BudgetInput"):
        BudgetView("nope")  # type: ignore[arg-type]


# =============================================================================================
# truncation
# =============================================================================================


def test_truncation_widget(recorded: list[Any]) -> None:
    view = truncation_view("".join(f"line {i}\n" for i in range(3000)), "tail", max_lines=100)
    box = view.widget()
    html = view.html
    assert "truncated by lines" in html.value and "kept 100 of 3000 lines" in html.value
    before = html.value
    _frontend_update(view.lines_slider, value=0)
    assert view.context_lines == 0 and html.value != before and "the model saw" not in html.value
    assert box.children[1] is html


def test_tool_result_truncation_from_a_session_file() -> None:
    sm = load_session(next(DEMO.glob("*d001.jsonl")))
    entry = sm.get_entry("t11")  # the partial multibyte line, its full output file is gone
    assert entry is not None
    view = tool_result_truncation(entry)
    text = view.to_text()
    assert "partial line" in text and "full output not available" in text
    entry = sm.get_entry("t07")
    view = tool_result_truncation(entry, base_dir=str(DEMO))
    assert "gives the same cut" in view.to_html()
    with pytest.raises(NotebookError):
        truncation_view("x", context_lines=-1)


def test_kernel_detection_without_ipython(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert widgets_mod.kernel_has_comms() is False


def test_kernel_detection_with_a_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython

    class Shell:
        kernel = object()

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    assert widgets_mod.kernel_has_comms() is True
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert widgets_mod.kernel_has_comms() is False


def test_pis_own_session_renders_in_every_view_frame_and_plot() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from pi_nb.notebook import frames, plots

    sm = load_session(FIXTURE)
    views: list[Any] = [session_tree(FIXTURE), token_budget(FIXTURE, model_context_window=200_000)]
    for entry in sm.get_entries():
        if entry["type"] == "message" and entry["message"]["role"] == "toolResult":
            views.append(tool_result_truncation(entry))
    assert len(views) == 2 + 4
    for view in views:
        bundle = view._repr_mimebundle_()
        assert bundle["text/plain"] and bundle["text/html"].startswith("<div")
        view.widget()
    sizes = {
        f.__name__: len(f(FIXTURE))
        for f in (
            frames.entries_df,
            frames.messages_df,
            frames.tool_results_df,
            frames.usage_df,
            frames.compactions_df,
        )
    }
    assert sizes == {
        "entries_df": 24,
        "messages_df": 20,
        "tool_results_df": 4,
        "usage_df": 8,
        "compactions_df": 1,
    }
    for plot in (plots.plot_context_tokens, plots.plot_token_composition, plots.plot_truncation):
        assert plot(FIXTURE).axes
