"""The compaction settings of a session's own directory (its header's ``cwd``: the project's
``.pi/settings.json`` over the agent dir's) drive every threshold a view shows: follow, token_budget,
budget_input_from_session, plot_context_tokens. The settings merge is Pi's (golden
``compaction_reserve`` of tests/golden/pi_files.json: global reserveTokens 2000 / keepRecentTokens
5000, project keepRecentTokens 3000 -> Pi compacts with reserve 2000, keep 3000)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_nb.budget import budget_input_from_session, format_tokens
from pi_nb.notebook.budget_bar import token_budget
from pi_nb.notebook.following import follow
from pi_nb.resources.settings import compaction_settings_for_session, session_cwd, settings_for_session
from pi_nb.resources.trust import ProjectTrustStore
from pi_nb.session.manager import SessionManager

GOLDEN = json.loads((Path(__file__).parent / "golden" / "pi_files.json").read_text())["cases"][
    "compaction_reserve"
]
WINDOW = 10_000


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def _session_file(tmp_path: Path, cwd: Path) -> Path:
    path = tmp_path / "s.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(cwd),
    }
    user = {"role": "user", "content": "hi", "timestamp": 1}
    usage = {"input": 4000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 4010}
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "hello"}],
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "stopReason": "stop",
        "timestamp": 2,
        "usage": usage,
    }
    ts = "2026-01-01T00:00:01.000Z"
    path.write_bytes(
        _line(header)
        + _line({"type": "message", "id": "u1", "parentId": None, "timestamp": ts, "message": user})
        + _line({"type": "message", "id": "a1", "parentId": "u1", "timestamp": ts, "message": answer})
    )
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent = tmp_path / "agent"
    cwd = tmp_path / "project"
    (cwd / ".pi").mkdir(parents=True)
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    (agent / "settings.json").write_text(json.dumps(GOLDEN["input"]["settings"]))
    (cwd / ".pi" / "settings.json").write_text(json.dumps(GOLDEN["input"]["project"]))
    # the kernel runs elsewhere: its own directory must not matter
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return cwd


def test_settings_for_session_are_pis_for_its_directory(tmp_path: Path, project: Path) -> None:
    path = _session_file(tmp_path, project)
    assert session_cwd(str(path)) == str(project)
    comp = compaction_settings_for_session(str(path))
    pi = GOLDEN["pi"]["settings"]["compaction"]
    assert (comp.enabled, comp.reserve_tokens, comp.keep_recent_tokens) == (
        pi["enabled"],
        pi["reserveTokens"],
        pi["keepRecentTokens"],
    )
    # a manager, its header, and the path agree
    sm = SessionManager.open(str(path))
    assert compaction_settings_for_session(sm) == comp
    assert compaction_settings_for_session(sm.get_header()) == comp


def test_a_project_known_untrusted_keeps_only_the_global_settings(tmp_path: Path, project: Path) -> None:
    path = _session_file(tmp_path, project)
    agent = tmp_path / "agent"
    ProjectTrustStore(str(agent)).set(str(project), False)
    settings = settings_for_session(str(path))
    assert not settings.is_project_trusted()
    assert (
        settings.get_compaction_settings().keep_recent_tokens
        == GOLDEN["input"]["settings"]["compaction"]["keepRecentTokens"]
    )


def test_every_view_draws_pis_threshold(tmp_path: Path, project: Path) -> None:
    path = _session_file(tmp_path, project)
    reserve = GOLDEN["pi"]["settings"]["compaction"]["reserveTokens"]
    keep = GOLDEN["pi"]["settings"]["compaction"]["keepRecentTokens"]
    sm = SessionManager.open(str(path))
    inp = budget_input_from_session(sm, model_context_window=WINDOW)
    assert (inp.reserve_tokens, inp.keep_recent_tokens) == (reserve, keep)
    view = token_budget(str(path), model_context_window=WINDOW)
    assert view.budget.threshold == WINDOW - reserve  # type: ignore[union-attr]
    assert f"threshold {WINDOW - reserve}" in view.to_text()  # type: ignore[union-attr]
    follower = follow(path, interval=0.05, model_context_window=WINDOW, live=False)
    try:
        assert follower.budget is not None
        assert follower.budget.budget.threshold == WINDOW - reserve
        assert follower.budget.budget.reserve_tokens == reserve
    finally:
        follower.stop()
    # explicit values still win
    assert (
        token_budget(str(path), model_context_window=WINDOW, reserve_tokens=100).budget.threshold
        == WINDOW - 100
    )  # type: ignore[union-attr]


def test_the_plot_marks_pis_threshold(tmp_path: Path, project: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from pi_nb.notebook.plots import plot_context_tokens

    path = _session_file(tmp_path, project)
    reserve = GOLDEN["pi"]["settings"]["compaction"]["reserveTokens"]
    fig = plot_context_tokens(str(path), context_window=WINDOW)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert f"threshold {format_tokens(WINDOW - reserve)}" in labels


def test_a_session_without_a_cwd_gets_the_global_settings(tmp_path: Path, project: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    comp = compaction_settings_for_session(header)
    assert comp.reserve_tokens == GOLDEN["input"]["settings"]["compaction"]["reserveTokens"]
    assert comp.keep_recent_tokens == GOLDEN["input"]["settings"]["compaction"]["keepRecentTokens"]
