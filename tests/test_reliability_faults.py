"""Faults: a process killed mid-write, a full disk, a failing rename. The session always reloads
with every completed entry, and the bytes the user had are kept.

Complements ``tests/test_session_durability.py`` (random SIGKILLs of a forked appender, a killed
migration, two appenders): here the kills hit real agent work in a separate interpreter (an
``AgentSession`` turn, a compaction: at random moments and exactly in the middle of writing the
compaction line), the disk fills up (a 64 KiB tmpfs where the test may mount one, a file-size
limit of the kernel otherwise, and a simulated ``ENOSPC`` after a partial write), and each step of
the atomic rewrite of a migration fails in turn.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_nb import SessionManager
from pi_nb.session import jsonl
from pi_nb.session.jsonl import read_session_file

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and file-size limits need POSIX")


def _user(text: str, t: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": t}


def _assistant(text: str, t: int = 2, tokens: int = 500) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "scripted",
        "provider": "scripted",
        "model": "scripted",
        "usage": {"input": tokens, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + 10},
        "stopReason": "stop",
        "timestamp": t,
    }


def _session_with_turns(directory: Path, turns: int, size: int = 400) -> Path:
    sm = SessionManager.create(str(directory), str(directory))
    for i in range(turns):
        sm.append_message(_user(f"question {i} " + "q" * size, 10 * i))
        sm.append_message(_assistant(f"answer {i} " + "a" * size, 10 * i + 1, tokens=1000 + 50 * i))
    path = sm.get_session_file()
    assert path is not None
    return Path(path)


def _check_reloads(path: Path, original: bytes, *, allow_torn: bool = True) -> SessionManager:
    """The file starts with the original bytes, loads, and has every original entry."""
    data = path.read_bytes()
    assert data.startswith(original), "the bytes the user had were changed"
    contents = read_session_file(path)
    assert contents.valid
    original_ids = [e["id"] for e in read_session_file_bytes(original, path.parent)]
    ids = [e.get("id") for e in contents.entries[1:]]
    assert ids[: len(original_ids)] == original_ids
    for p in contents.problems:
        assert allow_torn and p.reason.startswith("torn last line") and p.line_number == contents.line_count
    return SessionManager.open(str(path))


def read_session_file_bytes(data: bytes, directory: Path) -> list[dict[str, Any]]:
    tmp = directory / ".orig-check.jsonl"
    tmp.write_bytes(data)
    try:
        return read_session_file(tmp).entries[1:]
    finally:
        tmp.unlink()


# ---------------------------------------------------------------------------------------------
# SIGKILL during agent work (separate interpreter)

CHILD = textwrap.dedent(
    r"""
    import asyncio, os, signal, sys
    sys.path.insert(0, sys.argv[1])
    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.session import SessionManager
    from pi_nb.session import jsonl

    path, mode, agent_dir = sys.argv[2], sys.argv[3], sys.argv[4]
    if mode == "torn-compaction":
        # SIGKILL exactly in the middle of writing the compaction line
        real = jsonl._write_all
        def write_half_then_die(fd, data):
            if b'"type":"compaction"' in data:
                real(fd, data[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            real(fd, data)
        jsonl._write_all = write_half_then_die
    sm = SessionManager.open(path)
    # compaction: each summary request takes ~0.1 s, so a kill can land while it is being made
    model = ScriptedModel(delay=0.05 if "compaction" in mode else 0.002)
    settings = SettingsManager.in_memory({"compaction": {"keepRecentTokens": 300}})
    session = AgentSession(sm, model, agent_dir=agent_dir, settings=settings, tools=[], active_tools=[])
    print("ready", flush=True)
    if mode in ("compaction", "torn-compaction"):
        summary = model.text("## Goal\n" + "summary " * 20000)
        model.enqueue(summary, summary)  # history and split-turn prefix
        asyncio.run(session.compact())
        print("compacted", flush=True)
    else:  # turns
        n = 0
        while True:
            model.enqueue(model.text("reply " * 3000, usage=model.usage(2000, 10)))
            asyncio.run(session.prompt(f"turn {n} " + "p" * 5000))
            print("turn", n, sm.get_leaf_id(), flush=True)
            n += 1
    """
)


def _spawn(path: Path, mode: str, agent_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ROOT), str(path), mode, str(agent_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"child did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")


def _in_memory_settings_exist() -> bool:
    from pi_nb.resources.settings import SettingsManager

    return hasattr(SettingsManager, "in_memory")


@pytest.mark.skipif(not _in_memory_settings_exist(), reason="SettingsManager.in_memory missing")
def test_sigkill_during_compaction_keeps_every_entry(tmp_path: Path) -> None:
    """Run 0 lets a compaction finish and times it; the next runs are killed at fractions of that
    time (while the summaries are being made, around the write of the entry)."""
    outcomes = {"before": 0, "compacted": 0}
    duration = 0.0
    for run, fraction in enumerate([None, 0.1, 0.4, 0.7, 0.95]):
        d = tmp_path / f"c{run}"
        d.mkdir()
        path = _session_with_turns(d, 30)
        original = path.read_bytes()
        proc = _spawn(path, "compaction", d)
        _wait_ready(proc)
        started = time.monotonic()
        if fraction is None:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "compacted"
            duration = time.monotonic() - started
            proc.wait(timeout=30)
        else:
            time.sleep(duration * fraction)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        sm = _check_reloads(path, original)
        compactions = [e for e in sm.get_entries() if e["type"] == "compaction"]
        assert len(compactions) <= 1
        outcomes["compacted" if compactions else "before"] += 1
        for c in compactions:  # a compaction that made it is whole
            assert c["summary"].startswith("## Goal") and c["firstKeptEntryId"] in {
                e["id"] for e in sm.get_entries()
            }
        _continue_after_crash(sm, d)
    print(f"\ncompaction kills: {outcomes} (a compaction takes {duration:.2f} s here)")


@pytest.mark.skipif(not _in_memory_settings_exist(), reason="SettingsManager.in_memory missing")
def test_sigkill_in_the_middle_of_the_compaction_line(tmp_path: Path) -> None:
    path = _session_with_turns(tmp_path, 30)
    original = path.read_bytes()
    proc = _spawn(path, "torn-compaction", tmp_path)
    _wait_ready(proc)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    data = path.read_bytes()
    assert len(data) > len(original) and not data.endswith(b"\n")  # half a line was written
    contents = read_session_file(path)
    assert [p.reason.split(",")[0] for p in contents.problems] == [
        "torn last line (no newline at end of file)"
    ]
    sm = _check_reloads(path, original)
    assert not any(e["type"] == "compaction" for e in sm.get_entries())
    # the torn bytes stay (nothing the user had is deleted); the next entry starts on its own line
    _continue_after_crash(sm, tmp_path)
    assert path.read_bytes().startswith(data)


def _continue_after_crash(sm: SessionManager, agent_dir: Path) -> None:
    """The reloaded session takes another turn, and the file still loads cleanly after it."""
    import asyncio

    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel

    model = ScriptedModel([ScriptedModel().text("still here")])
    session = AgentSession(sm, model, agent_dir=str(agent_dir), tools=[], active_tools=[])
    before = len(sm.get_entries())
    result = asyncio.run(session.prompt("are you there?"))
    assert result.text == "still here"
    path = sm.get_session_file()
    assert path is not None
    again = SessionManager.open(path)
    assert len(again.get_entries()) == before + 2
    assert all(not p.reason.startswith("torn") for p in read_session_file(path).problems[1:])


def test_sigkill_during_agent_turns_loses_no_reported_entry(tmp_path: Path) -> None:
    rng = random.Random(5)
    for run in range(3):
        d = tmp_path / f"t{run}"
        d.mkdir()
        path = _session_with_turns(d, 3)
        original = path.read_bytes()
        proc = _spawn(path, "turns", d)
        _wait_ready(proc)
        time.sleep(rng.uniform(0.05, 0.3))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        leaves = [line.split()[2] for line in out.splitlines() if line.startswith("turn ")]
        sm = _check_reloads(path, original)
        ids = {e["id"] for e in sm.get_entries()}
        assert set(leaves) <= ids  # every turn the child finished is in the file


# ---------------------------------------------------------------------------------------------
# disk full


def _fill_and_append(sm: SessionManager, path: Path) -> tuple[list[str], BaseException]:
    """Append ever larger entries until a write fails; return the ids that were appended."""
    done: list[str] = []
    for i in range(10_000):
        try:
            done.append(sm.append_custom_entry("fill", {"i": i, "pad": "x" * 3000}))
        except OSError as error:
            return done, error
    raise AssertionError("the disk never filled up")


def _check_after_full(sm: SessionManager, path: Path, original: bytes, done: list[str]) -> None:
    # the manager did not record the entry whose write failed
    assert [e["id"] for e in sm.get_entries()][-len(done) :] == done
    contents = read_session_file(path)
    assert contents.valid
    assert [e["id"] for e in contents.entries[1:]][-len(done) :] == done
    data = path.read_bytes()
    assert data.startswith(original)
    # the partial line of the failed write was taken back: the file ends with the last whole entry
    assert not contents.problems and data.endswith(b"\n")


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                          capture_output=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()[:100]}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_disk_full_on_a_real_tmpfs(small_tmpfs: Path) -> None:
    path = _session_with_turns(small_tmpfs, 2, size=100)
    original = path.read_bytes()
    hog = small_tmpfs / "other.bin"
    hog.write_bytes(b"h" * 8192)  # something else on the disk, freed later
    sm = SessionManager.open(str(path))
    done, error = _fill_and_append(sm, path)
    assert isinstance(error, OSError) and error.errno == errno.ENOSPC
    _check_after_full(sm, path, original, done)
    # space comes back (another file on the disk goes away): the same session goes on
    hog = small_tmpfs / "other.bin"
    hog.write_bytes(b"")
    sm.append_message(_user("after the disk was full"))
    again = SessionManager.open(str(path))
    assert again.get_entries()[-1]["message"]["content"] == "after the disk was full"
    assert not again.load_problems


FSIZE_CHILD = textwrap.dedent(
    r"""
    import json, resource, signal, sys
    sys.path.insert(0, sys.argv[1])
    from pi_nb.session import SessionManager
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing us
    path, limit = sys.argv[2], int(sys.argv[3])
    sm = SessionManager.open(path)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    done = []
    try:
        for i in range(10000):
            done.append(sm.append_custom_entry("fill", {"i": i, "pad": "x" * 3000}))
    except OSError as error:
        print(json.dumps({"done": done, "errno": error.errno, "leaf": sm.get_leaf_id(),
                          "entries": len(sm.get_entries())}))
    """
)


def test_file_size_limit_while_appending(tmp_path: Path) -> None:
    """The kernel refuses the write part-way (RLIMIT_FSIZE: a partial write, then EFBIG), the
    unprivileged stand-in for a full disk."""
    path = _session_with_turns(tmp_path, 2, size=100)
    original = path.read_bytes()
    limit = len(original) + 20_000
    proc = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(ROOT), str(path), str(limit)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    r = json.loads(proc.stdout)
    assert r["errno"] == errno.EFBIG and r["done"]
    assert r["leaf"] == r["done"][-1]  # the failed entry never became the leaf
    assert path.stat().st_size <= limit
    _check_after_full(SessionManager.open(str(path)), path, original, r["done"])


def test_simulated_enospc_after_a_partial_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session_with_turns(tmp_path, 2)
    original = path.read_bytes()
    sm = SessionManager.open(str(path))
    ok = sm.append_message(_user("fits"))
    real_write = os.write

    def write_some_then_fail(fd: int, data: Any) -> int:
        if len(data) > 50:
            real_write(fd, bytes(data[:50]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl.os, "write", write_some_then_fail)
    leaf = sm.get_leaf_id()
    with pytest.raises(OSError) as info:
        sm.append_message(_user("does not fit " * 20))
    assert info.value.errno == errno.ENOSPC
    assert sm.get_leaf_id() == leaf == ok  # the session in memory is unchanged
    monkeypatch.setattr(jsonl.os, "write", real_write)
    _check_after_full(sm, path, original, [ok])
    # the next append (space is back) goes on from there; everything reloads, nothing to report
    new = sm.append_message(_user("space is back"))
    again = SessionManager.open(str(path))
    assert [e["id"] for e in again.get_entries()][-2:] == [ok, new]
    assert not again.load_problems


# ---------------------------------------------------------------------------------------------
# a rewrite (migration) that fails at each step

V1 = (
    '{"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/p"}\n'
    + "".join(
        f'{{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"m{i}","timestamp":{i}}}}}\n'
        for i in range(50)
    )
).encode()


@pytest.mark.parametrize("step", ["link", "write", "fsync", "replace"])
def test_migration_rewrite_failing_at_each_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """A crash (here: an OSError) at any step of the atomic rewrite leaves the original file
    untouched or replaced whole, and the original bytes are always somewhere (the file or .bak)."""
    path = tmp_path / "old.jsonl"
    path.write_bytes(V1)
    boom = OSError(errno.EIO, f"injected failure at {step}")
    real = getattr(os, step)

    def fail(*args: Any, **kwargs: Any) -> Any:
        if step == "write":  # part of the temp file is written, then the disk fails
            fd, data = args
            real(fd, bytes(data[: len(data) // 2]))
        raise boom

    monkeypatch.setattr(jsonl.os, step, fail)
    if step == "link":  # no hard links: the backup is a copy, and the rewrite goes on
        SessionManager.open(str(path))
        monkeypatch.undo()
    else:
        with pytest.raises(OSError):
            SessionManager.open(str(path))
        monkeypatch.undo()
        assert path.read_bytes() == V1  # untouched
    backup = tmp_path / "old.jsonl.bak"
    assert path.read_bytes() == V1 or backup.read_bytes() == V1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temp file left behind
    # and it opens (migrating now)
    sm = SessionManager.open(str(path))
    assert len(sm.get_entries()) == 50
    assert any(p.read_bytes() == V1 for p in tmp_path.iterdir() if p.name.startswith("old.jsonl.bak"))
