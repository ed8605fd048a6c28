"""A kernel interrupt during a tool call, during streaming and during compaction leaves a session
that reloads and continues.

The interrupt is what Jupyter sends: a real ``SIGINT`` to the kernel process (from a timer
thread), caught as ``KeyboardInterrupt`` by the main thread, inside ``%%pi`` / ``%pi compact`` of
a real IPython ``InteractiveShell``. After each one: the cell returned (or raised
``KeyboardInterrupt`` to the user) promptly, nothing keeps running in the background (no shell
process, no compaction finishing later), the session file reloads without problems, its context
is well formed (every tool call answered), and both the same kernel and a fresh ``AgentSession``
on the reloaded file take the next turn.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_nb import SessionManager
from pi_nb.providers import OfflineModel
from pi_nb.providers.base import AssistantMessageEvent, Context, StreamOptions
from pi_nb.session.jsonl import read_session_file

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")


def _interrupt_in(seconds: float) -> threading.Timer:
    """A real SIGINT to this process after ``seconds`` (what a notebook's interrupt button sends)."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


class SlowSummaries(OfflineModel):
    """The offline model; its summaries (compaction requests) stream slowly, so an interrupt lands
    while one is being written."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.summary_requests = 0

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        summarizing = bool(context.messages) and "<conversation>" in str(context.messages[0].get("content"))
        if summarizing:
            self.summary_requests += 1
        model = self.with_overrides(chunk_delay=0.1) if summarizing else self
        async for event in OfflineModel.stream(model, context, options):  # type: ignore[arg-type]
            yield event


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    from pi_nb.notebook.magics import PiMagics

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("first line\nsecond line\n")
    (project / "big.txt").write_text("".join(f"line {i} of a long file\n" for i in range(1, 3001)))
    monkeypatch.chdir(project)
    sh = InteractiveShell.instance()
    magics = PiMagics(sh)
    sh.register_magics(magics)
    sh.user_ns["_pi_magics"] = magics
    yield sh
    magics.session = None
    sh.config.pop("PiMagics", None)


def _check_file_and_continue(sh: Any, agent_dir: Path) -> None:
    """The file reloads cleanly, its context is well formed, and both the kernel and a fresh
    AgentSession on the reloaded file take another turn."""
    from pi_nb.agent import AgentSession

    magics = sh.user_ns["_pi_magics"]
    path = magics.session.session_file
    assert path is not None
    contents = read_session_file(path)
    assert contents.valid and not contents.problems
    reloaded = SessionManager.open(path)
    messages = reloaded.build_session_context().messages
    calls = {
        b["id"] for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"
    }
    results = {m["toolCallId"] for m in messages if m["role"] == "toolResult"}
    assert calls <= results  # every tool call has its result (an aborted one says so)
    again = sh.run_cell_magic("pi", "--no-render", "read notes.txt")
    assert "first line" in again.text and not again.interrupted
    fresh = AgentSession(SessionManager.open(path), OfflineModel(), agent_dir=str(agent_dir))
    assert "first line" in asyncio.run(fresh.prompt("read notes.txt")).text
    assert not read_session_file(path).problems


def _pids_of_children() -> set[int]:
    me = os.getpid()
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == me and fields[0] not in ("Z", "X"):
                out.add(int(d.name))
    return out


def test_interrupt_during_a_tool_call(shell: Any, tmp_path: Path) -> None:
    magics = shell.user_ns["_pi_magics"]
    shell.run_line_magic("pi", "new")
    before = _pids_of_children()
    timer = _interrupt_in(0.8)
    started = time.monotonic()
    r = shell.run_cell_magic("pi", "--no-render", "run `sleep 30`")
    timer.cancel()
    assert r.interrupted and time.monotonic() - started < 15
    # the shell command is gone, not left running
    for _ in range(100):
        if _pids_of_children() <= before:
            break
        time.sleep(0.05)
    assert _pids_of_children() <= before
    assert not magics.session.is_streaming
    _check_file_and_continue(shell, tmp_path / "agent")


def test_interrupt_during_streaming(shell: Any, tmp_path: Path) -> None:
    magics = shell.user_ns["_pi_magics"]
    shell.run_line_magic("pi", "new")
    shell.run_cell_magic("pi", "--no-render", "read notes.txt")  # the file exists from here on
    magics.session.set_model(OfflineModel(chunk_delay=0.3))  # ~15 chunks: seconds
    timer = _interrupt_in(0.6)
    started = time.monotonic()
    r = shell.run_cell_magic("pi", "", "read big.txt lines 1-200 and tell me about them")
    timer.cancel()
    assert r.interrupted and time.monotonic() - started < 15
    entries = magics.session.session_manager.get_entries()
    last = entries[-1]
    assert last["type"] == "message"
    # what was streamed before the interrupt is kept as an aborted answer, or the turn stopped
    # before its first answer; either way the file is valid and the next turn works
    if last["message"]["role"] == "assistant":
        assert last["message"]["stopReason"] in ("aborted", "toolUse", "stop")
    magics.session.set_model(OfflineModel())
    _check_file_and_continue(shell, tmp_path / "agent")


def _fill_for_compaction(shell: Any, reads: int = 3) -> None:
    magics = shell.user_ns["_pi_magics"]
    magics.context_window = 6000
    magics.reserve_tokens = 1000
    magics.keep_recent_tokens = 400
    shell.run_line_magic("pi", "new")
    magics.session.set_model(SlowSummaries(context_window=60_000))  # no automatic compaction yet
    for i in range(reads):
        shell.run_cell_magic("pi", "--no-render", f"read big.txt lines {1 + 100 * i}-{100 * (i + 1)}")


def test_interrupt_during_manual_compaction(shell: Any, tmp_path: Path) -> None:
    magics = shell.user_ns["_pi_magics"]
    _fill_for_compaction(shell)
    model = magics.session.model
    entries_before = len(magics.session.session_manager.get_entries())
    timer = _interrupt_in(0.8)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        shell.run_line_magic("pi", "compact")
    timer.cancel()
    assert time.monotonic() - started < 15
    assert model.summary_requests >= 1  # the interrupt landed while the summary was being written
    # nothing finishes behind the user's back: no compaction entry appears later
    time.sleep(1.5)
    entries = magics.session.session_manager.get_entries()
    assert len(entries) == entries_before and not any(e["type"] == "compaction" for e in entries)
    assert not magics.session.is_compacting
    _check_file_and_continue(shell, tmp_path / "agent")
    # and compaction itself still works afterwards
    magics.session.set_model(OfflineModel(context_window=60_000))
    outcome = shell.run_line_magic("pi", "compact")
    assert "summary" in outcome


def test_interrupt_during_automatic_compaction_in_a_turn(shell: Any, tmp_path: Path) -> None:
    magics = shell.user_ns["_pi_magics"]
    _fill_for_compaction(shell, reads=6)
    model = SlowSummaries(context_window=6000)  # now the context is over the threshold (5,000)
    magics.session.set_model(model)
    timer = _interrupt_in(1.0)
    started = time.monotonic()
    r = shell.run_cell_magic("pi", "--no-render", "read notes.txt")
    timer.cancel()
    # the interrupt stops the whole run at once: the compaction, and the turn that would follow it
    assert time.monotonic() - started < 4
    assert model.summary_requests >= 1  # the turn started with a compaction
    assert r.interrupted
    assert not magics.session.is_compacting
    time.sleep(1.0)
    n = len(magics.session.session_manager.get_entries())
    time.sleep(0.5)
    assert len(magics.session.session_manager.get_entries()) == n  # nothing still running
    magics.session.set_model(OfflineModel(context_window=60_000))
    _check_file_and_continue(shell, tmp_path / "agent")
