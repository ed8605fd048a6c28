"""%%pi and %pi in a real IPython InteractiveShell, on the offline model (no network, no key)."""

from __future__ import annotations

import _thread
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from pi_nb.notebook.magics import PiMagics
from pi_nb.notebook.turn import TurnResult


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("first line\nsecond line\n")
    (project / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    monkeypatch.chdir(project)
    sh = InteractiveShell.instance()
    magics = PiMagics(sh)
    sh.register_magics(magics)
    sh.user_ns["_pi_magics"] = magics
    yield sh
    magics.session = None
    sh.config.pop("PiMagics", None)  # %config in one test must not leak into the next


def test_load_ext_registers_the_magics() -> None:
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "pi_nb")
    assert "pi" in sh.magics_manager.magics["cell"] and "pi" in sh.magics_manager.magics["line"]


def test_cell_runs_a_turn_and_returns_a_result(shell: Any, tmp_path: Path) -> None:
    result = shell.run_cell_magic("pi", "", "read notes.txt and run `echo hello`")
    assert isinstance(result, TurnResult)
    assert "first line" in result.text and "hello" in result.text
    assert len(result.entry_ids) == 6  # user, assistant+read, result, assistant+bash, result, answer
    assert result.usage["input"] > 0
    meta = result.metadata()["pi_nb"]
    assert meta["sessionId"] == result.session_id and meta["entryIds"] == result.entry_ids
    # the session is a file in Pi's layout under $PI_CODING_AGENT_DIR
    path = Path(result.session_file)
    assert (
        path.parent.parent == tmp_path / "agent" / "sessions"
        and path.parent.name.startswith("--")
        and path.exists()
    )
    # the next cell continues the same session
    second = shell.run_cell_magic("pi", "", "read big.txt")
    assert second.session_id == result.session_id
    assert "truncated" not in second.text or "2000" in second.text


def test_options_and_notebook_context(shell: Any) -> None:
    shell.user_ns["secret_number"] = 42
    r = shell.run_cell_magic("pi", "--no-tools --vars secret_number --context-window 50000", "what is it?")
    assert r.text  # offline model answers
    magics = shell.user_ns["_pi_magics"]
    assert magics.session.get_active_tool_names() == []
    assert magics.session.model.context_window == 50000
    sent = magics.session.messages[0]["content"][0]["text"]
    assert '<variable name="secret_number">\n42\n</variable>' in sent
    shell.user_ns["fname"] = "notes.txt"
    r2 = shell.run_cell_magic("pi", "--interpolate --tools read", "read {fname}")
    assert "first line" in r2.text
    with pytest.raises(UsageError):
        shell.run_cell_magic("pi", "--vars missing_var", "x")
    with pytest.raises(UsageError):
        shell.run_cell_magic("pi", "", "   ")
    with pytest.raises(UsageError):
        shell.run_cell_magic("pi", "--bogus-flag", "x")


def test_line_commands(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_cell_magic("pi", "", "read notes.txt")
    magics = shell.user_ns["_pi_magics"]
    status = shell.run_line_magic("pi", "status")
    assert "model pi_nb/offline" in status and "entries" in status
    settings = shell.run_line_magic("pi", "settings reserveTokens=1000 keepRecentTokens=100")
    assert settings["compaction"]["reserveTokens"] == 1000
    assert "context_window=8000" in shell.run_line_magic("pi", "model --context-window 8000")
    ctx = shell.run_line_magic("pi", "context")
    assert "system prompt" in ctx.to_text() and ctx.total_tokens > 0
    budget = shell.run_line_magic("pi", "budget")
    assert (
        "8,000" in budget._repr_mimebundle_()["text/plain"]
        or "8000" in budget._repr_mimebundle_()["text/plain"]
    )
    tree = shell.run_line_magic("pi", "tree")
    assert "text/html" in tree._repr_mimebundle_()
    entries = shell.run_line_magic("pi", "entries")
    assert len(entries) == len(magics.session.session_manager.get_entries())
    first_user = next(e for e in magics.session.session_manager.get_entries() if e["type"] == "message")
    assert "label" in shell.run_line_magic("pi", f"label {first_user['id']} start")
    nav = shell.run_line_magic("pi", f"navigate {first_user['id']}")
    assert nav["editorText"] == "read notes.txt"
    shell.run_line_magic("pi", "turns all")
    shell.run_line_magic("pi", "help")
    assert "%pi navigate" in capsys.readouterr().out
    with pytest.raises(UsageError):
        shell.run_line_magic("pi", "frobnicate")
    with pytest.raises(UsageError):
        shell.run_line_magic("pi", "settings nonsense=1")
    with pytest.raises(UsageError):
        shell.run_line_magic("pi", "navigate")


def test_compaction_shows_up_with_a_small_window(shell: Any) -> None:
    shell.run_line_magic("config", "PiMagics.in_memory = True")
    magics = shell.user_ns["_pi_magics"]
    assert magics.in_memory is True  # set through %config
    magics.context_window = 4000
    magics.reserve_tokens = 1000
    magics.keep_recent_tokens = 500
    shell.run_line_magic("pi", "new")
    compactions = 0
    for _ in range(6):
        r = shell.run_cell_magic("pi", "", "read big.txt lines 1-200 and run `seq 100`")
        compactions += len(r.compactions)
    assert compactions >= 1
    assert any(e["type"] == "compaction" for e in magics.session.session_manager.get_entries())
    outcome = shell.run_line_magic("pi", "compact focus on numbers")
    assert "summary" in outcome or "status" in outcome


def test_open_recent_and_new(shell: Any, tmp_path: Path) -> None:
    r = shell.run_cell_magic("pi", "", "read notes.txt")
    msg = shell.run_line_magic("pi", "new")
    assert msg.startswith("new session")
    opened = shell.run_line_magic("pi", f"open {r.session_file}")
    assert "entries" in opened
    with pytest.raises(UsageError):
        shell.run_line_magic("pi", f"open {tmp_path / 'nope.jsonl'}")


def test_trust_question_is_answerable(shell: Any, tmp_path: Path) -> None:
    (Path.cwd() / ".pi").mkdir()
    (Path.cwd() / ".pi" / "settings.json").write_text('{"compaction": {"reserveTokens": 1234}}')
    out = shell.run_line_magic("pi", "trust")
    assert "Trust project folder?" in out
    r = shell.run_line_magic("pi", "trust once")
    assert "trusted" in r and "this kernel only" in r
    shell.run_line_magic("pi", "new")
    magics = shell.user_ns["_pi_magics"]
    assert magics.session.settings.get_compaction_settings().reserve_tokens == 1234


def test_a_session_started_before_the_answer_is_untrusted_until_answered(shell: Any, tmp_path: Path) -> None:
    """The engine's trust question, asked while a session is built, waits for %pi trust."""
    from pi_nb.resources.trust import ProjectTrustStore

    (Path.cwd() / ".pi").mkdir()
    (Path.cwd() / ".pi" / "settings.json").write_text('{"compaction": {"reserveTokens": 1234}}')
    shell.run_line_magic("pi", "new --in-memory")
    magics = shell.user_ns["_pi_magics"]
    assert not magics.session.settings.is_project_trusted()
    assert magics.session.settings.get_compaction_settings().reserve_tokens == 16384
    assert magics._trust_prompt is not None and magics._trust_prompt.cwd == str(Path.cwd())
    assert "Not trusted until you answer" in shell.run_line_magic("pi", "trust")
    assert shell.run_line_magic("pi", "trust yes") == f"{Path.cwd()}: trusted (saved)"
    assert magics.session.settings.get_compaction_settings().reserve_tokens == 1234
    assert ProjectTrustStore(str(tmp_path / "agent")).get(str(Path.cwd())) is True
    shell.run_line_magic("pi", "new --in-memory")  # saved: decided without asking
    assert magics._trust_prompt is None and magics.session.settings.is_project_trusted()


def test_unload_removes_the_magics_and_stops_their_loop() -> None:
    from pi_nb.notebook.magics import load_ipython_extension, unload_ipython_extension

    sh = InteractiveShell.instance()
    load_ipython_extension(sh)
    magics = sh.magics_manager.registry["PiMagics"]
    thread = magics.loop.thread
    assert thread.is_alive()
    try:
        unload_ipython_extension(sh)
        assert "PiMagics" not in sh.magics_manager.registry
        assert "pi" not in sh.magics_manager.magics["line"] and "pi" not in sh.magics_manager.magics["cell"]
        thread.join(5)
        assert not thread.is_alive()
    finally:
        load_ipython_extension(sh)


def test_interrupt_aborts_the_turn_and_keeps_the_session(shell: Any) -> None:
    magics = shell.user_ns["_pi_magics"]
    shell.run_line_magic("pi", "new")
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    r = shell.run_cell_magic("pi", "", "run `sleep 20`")
    timer.cancel()
    assert r.interrupted
    from pi_nb.session import SessionManager

    reopened = SessionManager.open(magics.session.session_file) if magics.session.session_file else None
    if reopened is not None:
        assert reopened.get_entries()
    again = shell.run_cell_magic("pi", "", "run `echo still alive`")
    assert "still alive" in again.text
    assert not os.system("true")


def test_session_access_and_text_answers(shell: Any) -> None:
    from pi_nb.notebook import current_session
    from pi_nb.notebook.magics import PiText

    shell.run_cell_magic("pi", "", "read notes.txt")
    s = shell.run_line_magic("pi", "session")
    assert s is current_session()
    status = shell.run_line_magic("pi", "status")
    assert isinstance(status, PiText) and repr(status) == str(status)  # shows as text, not a quoted string
    # the sync API works inside a running event loop (as in a notebook cell)
    import asyncio

    async def inside_a_loop() -> str:
        return s.run("run `echo from a loop`").text

    assert "from a loop" in asyncio.run(inside_a_loop())


def test_a_command_is_one_entry_of_the_table(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dispatcher, --help and Tab read the command table: one entry adds a command."""
    import argparse

    from pi_nb.notebook.magics import PiText, commands, completions
    from pi_nb.notebook.magics.parsing import Command

    def echo_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("text", nargs="*", metavar="TEXT", help="what to say")
        p.add_argument("--loud", action="store_true", help="in capitals")

    def echo(m: PiMagics, a: argparse.Namespace) -> str:
        text = " ".join(a.text)
        return text.upper() if a.loud else text

    monkeypatch.setitem(commands._BY_NAME, "echo", Command("echo", "[TEXT]", "say it", echo_args, echo))
    said = shell.run_line_magic("pi", "echo hello there --loud")
    assert isinstance(said, PiText) and said == "HELLO THERE"
    assert shell.run_line_magic("pi", "echo --help") is None
    with pytest.raises(
        UsageError, match=r"^%pi echo: unrecognized arguments: --quiet \(see %pi echo --help\)$"
    ):
        shell.run_line_magic("pi", "echo --quiet")
    assert completions("%pi echo --") == ["--loud"]
