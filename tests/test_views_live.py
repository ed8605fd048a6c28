"""Views in a live notebook: every view follows its session, actions act on the session as it is
now (or refuse in one line), no-op navigation says so, fold is disabled where nothing folds, rows
are never cut, the detail shows the whole text as Markdown, inputs of every shape. The widget
callbacks are driven directly in Python (no browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_nb.errors import NotebookError
from pi_nb.notebook import session_tree, token_budget, tool_result_truncation, truncation_view
from pi_nb.notebook._base import ViewGroup, markdown_html
from pi_nb.notebook.budget_bar import BudgetView
from pi_nb.notebook.tree import SUMMARY_CHOICES, SessionTreeView
from pi_nb.session import SessionManager

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"

LONG = "word " * 200 + "THE-END"
ANSWER = "Here is code:\n\n```python\nprint('hi')\n```\n\nand **bold**."



def catalog_window(provider: str, model_id: str) -> int:
    """The window the model catalog gives (Pi's catalog when pi_nb has it, else the registry)."""
    try:
        from pi_nb.providers.catalog import context_window_for  # type: ignore[import-not-found]
    except ImportError:
        from pi_nb.providers.registry import KNOWN_MODELS  # type: ignore[attr-defined]

        return int(KNOWN_MODELS[f"{provider}/{model_id}"].context_window)
    return int(context_window_for(provider, model_id))


def build() -> tuple[SessionManager, dict[str, str]]:
    sm = SessionManager.in_memory("/tmp")
    ids = {}
    ids["u1"] = sm.append_message({"role": "user", "content": LONG, "timestamp": 1})
    ids["a1"] = sm.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": ANSWER}], "provider": "anthropic",
         "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": 2,
         "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}
    )
    ids["u2"] = sm.append_message({"role": "user", "content": "second", "timestamp": 3})
    sm.branch(ids["a1"])
    ids["u3"] = sm.append_message({"role": "user", "content": "tried-head", "timestamp": 4})
    return sm, ids


class Recorder:
    def __init__(self, sm: SessionManager) -> None:
        self.sm = sm
        self.calls: list[tuple[str, bool, str | None]] = []

    def __call__(self, target: str, summarize: bool, custom: str | None) -> dict[str, Any]:
        self.calls.append((target, summarize, custom))
        self.sm.branch(target)
        return {"cancelled": False}


def test_every_tree_view_follows_the_session_and_names_its_leaf() -> None:
    sm, ids = build()
    early = SessionTreeView(sm, live=False)
    early.widget()
    assert f"leaf {ids['u3']}" in early.to_text()
    sm.branch(ids["u2"])  # a later cell navigates
    sm.append_label_change(ids["u1"], "start")  # ... and labels
    assert early.refresh() is True
    leaf = sm.get_leaf_id()  # the label entry, appended under u2
    assert f"leaf {leaf}" in early.to_text() and "[label: start]" in early.to_text()
    assert leaf in early.header.value and "follows the session" in early.header.value
    assert "start" in early.rows.options[0][0]  # the labelled row shows its label
    budget = token_budget(sm, model_context_window=100_000)
    assert isinstance(budget, BudgetView) and budget.budget.leaf_id == leaf
    sm.branch(ids["u3"])
    assert budget.refresh() is True and budget.budget.leaf_id == ids["u3"]
    assert f"at leaf {ids['u3']}" in budget.to_text() and ids["u3"] in budget.to_html()


def test_an_action_on_a_stale_view_refuses_and_redraws() -> None:
    sm, ids = build()
    rec = Recorder(sm)
    view = SessionTreeView(sm, on_navigate=rec, live=False)
    view.widget()
    view.select(ids["u2"])
    sm.branch(ids["u1"])  # moved elsewhere after the view was drawn (no cell ran in between)
    with pytest.raises(NotebookError, match="session moved since this view was drawn"):
        view.navigate(ids["u2"], summarize=True, custom_instructions="focus on X")
    assert rec.calls == [] and view.model.leaf_id == ids["u1"]
    # from the widget: one line in the status, no exception into the kernel
    view.select(ids["u2"])
    sm.branch(ids["a1"])
    view.summary_choice.value = SUMMARY_CHOICES[2]
    view.instructions.value = "focus on X"
    view.navigate_button.click()
    assert rec.calls == [] and "session moved" in view.status.value
    assert "\n" not in view.last_status
    # now it is current: the action runs with the instructions
    view.select(ids["u2"])
    view.navigate_button.click()
    assert rec.calls == [(ids["u2"], True, "focus on X")]
    assert "navigated to" in view.status.value and view.model.leaf_id == ids["u2"]


def test_navigating_to_the_current_leaf_says_nothing_changed() -> None:
    sm, ids = build()
    rec = Recorder(sm)
    view = SessionTreeView(sm, on_navigate=rec, live=False)
    view.widget()
    assert view.model.selected_id == ids["u3"]
    assert view.navigate_button.disabled and "already the leaf" in view.navigate_button.tooltip
    assert view.navigate(ids["u3"], summarize=True) is None
    assert rec.calls == [] and "nothing changed" in view.last_status and "nothing changed" in view.status.value


def test_fold_is_disabled_where_there_is_nothing_to_fold() -> None:
    sm, ids = build()
    view = SessionTreeView(sm, live=False)
    view.widget()
    view.select(ids["u3"])  # a leaf
    assert view.fold_button.disabled and "nothing to fold" in view.fold_button.tooltip
    with pytest.raises(NotebookError, match="nothing to fold"):
        view.toggle_fold(ids["u3"])
    view.fold_button.click()  # even if clicked: one line, no exception
    assert "nothing to fold" in view.status.value
    view.select(ids["a1"])  # a branch point
    assert not view.fold_button.disabled
    view.fold_button.click()
    assert ids["a1"] in view.model.folded and view.fold_button.description == "unfold"


def test_long_rows_are_whole_and_the_detail_renders_markdown() -> None:
    sm, ids = build()
    view = SessionTreeView(sm, live=False)
    view.widget()
    html = view.to_html()
    assert "white-space:pre-wrap" in html and "text-overflow:ellipsis" not in html
    assert view.rows.layout.width == "max-content" and view.rows_box.layout.overflow == "auto"
    view.select(ids["u1"])
    assert view.detail_markdown().endswith("THE-END")  # the whole text, not Pi's 200 characters
    view.select(ids["a1"])
    assert view.detail_markdown() == ANSWER
    outputs = view.detail_text.outputs
    # rendered by pi_nb (raw HTML escaped, remote images as links), not by the front end
    assert outputs and outputs[0]["data"]["text/html"] == markdown_html(ANSWER)


def test_views_take_directories_lists_and_agent_sessions(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_bytes(FIXTURE.read_bytes())
    trees = session_tree(tmp_path)
    assert isinstance(trees, ViewGroup) and len(trees) == 2 and "2 sessions" in trees.to_text()
    assert len(session_tree([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])) == 2
    budgets = token_budget([tmp_path])
    assert isinstance(budgets, ViewGroup) and len(budgets) == 2
    assert all(v.budget.context_window == catalog_window("anthropic", "claude-sonnet-4-5") for v in budgets.views)
    with pytest.raises(NotebookError, match="no session files"):
        session_tree(tmp_path / "empty") if (tmp_path / "empty").mkdir() is None else None
    with pytest.raises(NotebookError, match="a session source must be"):
        session_tree(42)

    from test_agent_session import make_session

    from pi_nb.providers import ScriptedModel

    model = ScriptedModel()
    model.enqueue(model.text("first answer"), model.text("second answer"))
    agent = make_session(tmp_path, model)
    agent.run("hello")
    tree = session_tree(agent)
    budget = token_budget(agent)
    assert isinstance(tree, SessionTreeView) and tree.on_navigate is not None
    assert budget.budget.context_window == agent.model.context_window
    leaf = agent.session_manager.get_leaf_id()
    agent.run("again")  # agent events refresh the tree
    assert tree.model.leaf_id == agent.session_manager.get_leaf_id() != leaf
    assert budget.budget.leaf_id == tree.model.leaf_id  # the budget followed the turn too
    assert budget.budget.system_prompt_known
    target = next(
        e["id"] for e in agent.session_manager.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    tree.navigate(target)  # through the AgentSession (Pi's navigateTree)
    assert agent.session_manager.get_leaf_id() == target == tree.model.leaf_id
    from pi_nb.notebook.context_view import ContextView

    assert f"at leaf {target}" in ContextView.from_session(agent).to_text()  # a snapshot says where


def test_truncation_view_refuses_what_is_not_text(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("a\nb\n")
    with pytest.raises(NotebookError, match="not a path"):
        truncation_view(f)  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="is a file path"):
        truncation_view(str(f))
    with pytest.raises(NotebookError, match="tool_result_truncation"):
        truncation_view({"role": "toolResult"})  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="str or bytes"):
        truncation_view(12)  # type: ignore[arg-type]
    assert "not truncated" in truncation_view("just text").to_text()


def test_read_line_counts_are_explained(tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(5000))
    (tmp_path / "big.txt").write_text(text)
    import asyncio

    from pi_nb.tools import create_read_tool as make_read

    tool = make_read(str(tmp_path))
    result = asyncio.run(tool.execute("c1", {"path": "big.txt"}))
    content = result.content if hasattr(result, "content") else result["content"]
    details = result.details if hasattr(result, "details") else result["details"]
    msg = {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": content, "details": details,
           "isError": False, "timestamp": 1}
    view = tool_result_truncation(msg, tool_call={"name": "read", "arguments": {"path": "big.txt"}}, cwd=str(tmp_path))
    out = view.to_text()
    assert "of 5000 lines" in out and 'the notice says "of 5001"' in out and "final newline" in out


def test_slider_and_dropdown_labels_are_not_cut() -> None:
    view = truncation_view("x\n" * 3000)
    view.widget()
    assert view.lines_slider.style.description_width == "initial"
    sm, _ids = build()
    tree = SessionTreeView(sm, live=False)
    tree.widget()
    assert tree.summary_choice.style.description_width == "initial"
