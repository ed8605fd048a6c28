"""Following a session file another process writes (pi_nb.notebook.following, pi_nb.session.tail):
a real writer subprocess appends entries (one line torn across two writes); the follower's tree,
budget and turn log catch up, only new bytes are read, and stop() ends the thread."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pi_nb.errors import NotebookError
from pi_nb.notebook.following import SessionFollower, follow
from pi_nb.session.tail import SessionTail

HEADER = {"type": "session", "version": 3, "id": "follow-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}



def catalog_window(provider: str, model_id: str) -> int:
    """The window the model catalog gives (Pi's catalog when pi_nb has it, else the registry)."""
    try:
        from pi_nb.providers.catalog import context_window_for  # type: ignore[import-not-found]
    except ImportError:
        from pi_nb.providers.registry import KNOWN_MODELS  # type: ignore[attr-defined]

        return int(KNOWN_MODELS[f"{provider}/{model_id}"].context_window)
    return int(context_window_for(provider, model_id))


def entry(i: int, parent: str | None) -> dict:
    role = "user" if i % 2 == 0 else "assistant"
    msg: dict = {"role": role, "content": [{"type": "text", "text": f"message {i}"}], "timestamp": 1_767_225_600_000 + i}
    if role == "assistant":
        msg.update(provider="anthropic", model="claude-sonnet-4-5", stopReason="stop",
                   usage={"input": 100 + i, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110 + i,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
    return {"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": f"2026-01-01T00:00:{i % 60:02d}.000Z",
            "message": msg}


def line(obj: dict) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


WRITER = textwrap.dedent(
    """
    import sys, time, json
    path, lines_file, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    lines = open(lines_file, "rb").read().split(b"\\n")[:-1]
    with open(path, "ab", buffering=0) as f:
        for i, raw in enumerate(lines):
            raw += b"\\n"
            if i == len(lines) // 2:          # one line torn across two writes
                f.write(raw[:10]); time.sleep(delay * 4); f.write(raw[10:])
            else:
                f.write(raw)
            time.sleep(delay)
    """
)


def test_follower_catches_up_with_a_writer_subprocess(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(entry(0, None)))
    more = [entry(i, f"e{i - 1}") for i in range(1, 25)]
    (tmp_path / "lines").write_bytes(b"".join(line(e) for e in more))
    follower = follow(path, interval=0.02, live=False)
    try:
        assert follower.running and follower.entries_seen == 1
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(tmp_path / "lines"), "0.01"],
        )
        assert proc.wait(timeout=60) == 0
        deadline = time.monotonic() + 20
        while follower.tree.model.entry_count < 25 and time.monotonic() < deadline:
            time.sleep(0.02)
        model = follower.tree.model
        assert model.entry_count == 25 and model.leaf_id == "e24"
        assert model.rebuilds == 1  # the index was extended, never rebuilt
        # every byte read exactly once: only new bytes on each poll
        assert follower.tail.bytes_read == path.stat().st_size and follower.tail.resets == 0
        assert follower.tail.problems == []  # the torn line was not reported as corrupt
        assert follower.budget is not None and follower.budget.budget.leaf_id == "e24"
        # the session's model, from the catalog
        assert follower.budget.budget.context_window == catalog_window("anthropic", "claude-sonnet-4-5")
        assert any("e24" in line and "message 24" in line for line in follower.log)
        assert "e24" in follower.to_text() and "Session follow" in follower.to_html()
    finally:
        follower.stop()
    assert not follower.running
    assert "stopped" in follower.to_text()


def test_tail_keeps_a_torn_line_until_it_ends(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    full = line(HEADER) + line(entry(0, None))
    path.write_bytes(full[:-7])
    tail = SessionTail(path)
    assert tail.poll() == [] and tail.torn and tail.header is not None
    with open(path, "ab") as f:
        f.write(full[-7:])
    new = tail.poll()
    assert [e["id"] for e in new] == ["e0"] and not tail.torn
    assert tail.bytes_read == len(full)


def test_tail_reads_again_when_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(entry(0, None)) + line(entry(1, "e0")))
    tail = SessionTail(path)
    assert len(tail.poll()) == 2
    tmp = tmp_path / "new.jsonl"
    tmp.write_bytes(line(HEADER) + line(entry(5, None)))
    os.replace(tmp, path)  # a rewrite (another inode, a shorter file)
    assert [e["id"] for e in tail.poll()] == ["e5"] and tail.resets == 1
    assert [e["id"] for e in tail.get_entries()] == ["e5"]


def test_follower_rebuilds_the_tree_after_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(entry(0, None)) + line(entry(1, "e0")))
    follower = follow(path, start=False, live=False, model_context_window=1000)
    assert follower.tree.model.entry_count == 2
    path.write_bytes(line(HEADER) + line(entry(7, None)))
    follower.poll_once()
    assert follower.tree.model.leaf_id == "e7" and follower.tree.model.entry_count == 1
    assert follower.budget is not None and follower.budget.budget.context_window == 1000


def test_follow_refuses_bad_input(tmp_path: Path) -> None:
    with pytest.raises(NotebookError, match="directory"):
        follow(tmp_path)
    with pytest.raises(NotebookError, match="interval"):
        follow(tmp_path / "x.jsonl", interval=0)
    # a file that does not exist yet is followed until it appears
    follower = follow(tmp_path / "later.jsonl", start=False, live=False)
    assert follower.entries_seen == 0
    (tmp_path / "later.jsonl").write_bytes(line(HEADER) + line(entry(0, None)))
    assert follower.poll_once() == 1 and follower.tree.model.leaf_id == "e0"


def test_wait_stops_cleanly_on_a_real_interrupt(tmp_path: Path) -> None:
    """A kernel interrupt is SIGINT to the main thread: sent for real while wait() blocks."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(entry(0, None)))
    follower = follow(path, interval=0.02, live=False)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    follower.wait(timeout=20)  # returns normally: the interrupt stopped the follower
    timer.join()
    assert not follower.running and time.monotonic() - started < 10


def test_follower_is_a_session_follower(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER))
    with SessionFollower(path, interval=0.05, live=False) as follower:
        assert follower.running and follower.budget is None  # no entries: no model, no window yet
        assert "budget" in follower.to_text()
    assert not follower.running


def test_the_package_name_follow_is_the_function_even_after_the_module_is_imported() -> None:
    """``pi_nb.notebook.follow`` must stay the function: a submodule of that name would shadow it."""
    import importlib

    import pi_nb.notebook as nb

    importlib.import_module("pi_nb.notebook.following")
    assert callable(nb.follow) and nb.follow.__module__ == "pi_nb.notebook.following"
    from pi_nb.notebook import follow as imported

    assert imported is nb.follow


def test_the_read_badge_explains_the_notices_line_count(tmp_path: Path) -> None:
    """The badge shows the truncation's count (the frames' total_lines) and why the notice says one more."""
    from pi_nb.notebook.turn import _truncation_badge
    from pi_nb.tools import run_tool

    (tmp_path / "big.txt").write_text("".join(f"l{i}\n" for i in range(5000)))
    r = run_tool("read", str(tmp_path), {"path": "big.txt"})
    assert "of 5001" in r.text
    badge = _truncation_badge(r.details, r.text)
    assert badge is not None and "2000/5000 lines" in badge and 'of 5001" also counts the empty line' in badge
    (tmp_path / "nonl.txt").write_text("\n".join(f"l{i}" for i in range(5000)))
    r = run_tool("read", str(tmp_path), {"path": "nonl.txt"})
    badge = _truncation_badge(r.details, r.text)
    assert badge is not None and "2000/5000" in badge and "also counts" not in badge


def test_the_turn_view_renders_the_answers_markdown_and_escapes_raw_html() -> None:
    """Code fences of an answer are a code block, not backticks; raw HTML from a model is text."""
    from pi_nb.notebook.turn import _markdown_html

    html = _markdown_html("Here:\n\n```\nfirst\n```\n\n- a *b*\n\n<script>alert(1)</script>")
    assert "<pre" in html and "<code>first\n</code>" in html and "```" not in html
    assert "<li>a <em>b</em></li>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
