"""Durability of the session store: nothing the user had, and nothing a write completed, is lost.

* crash test: a forked child appends entries (small and multi-megabyte) and reports each id after
  the append returned; the parent SIGKILLs it at a random moment (150 runs, some during the very
  first write of the file). Every run's file loads and holds every reported entry; a torn last
  line is reported, and the next append does not glue onto it;
* a child killed while a migration rewrites the file leaves the original or the migrated file
  (plus the ``.bak`` copy of the original), never a mix;
* two processes appending to one file both succeed without interleaving; a lock that is not freed
  in time gives SessionLockedError and leaves the session as it was;
* strict mode, a file deleted under an open session, a torn line written by someone else.
"""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from pi_nb import SessionFileCorruptError, SessionLockedError, SessionManager
from pi_nb.session.jsonl import read_session_file

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork-based tests need POSIX")

SIZES = [10, 300, 20_000, 400_000, 3_000_000]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "p",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 2,
    }


def _base_file(directory: Path) -> bytes:
    sm = SessionManager.create("/tmp/proj", str(directory))
    sm.append_message(_user("q"))
    sm.append_message(_assistant("a"))
    path = sm.get_session_file()
    assert path is not None
    return Path(path).read_bytes()


def _child_append_forever(mode: str, path: str, session_dir: str, wfd: int, seed: int) -> None:
    """Runs in the forked child; never returns."""
    try:
        rng = random.Random(seed)
        if mode == "scratch":
            sm = SessionManager.create("/tmp/proj", session_dir)
            u = sm.append_message(_user("q"))
            a = sm.append_message(_assistant("a"))  # the first write of the file happens here
            os.write(wfd, f"{u}\n{a}\n".encode())
        else:
            sm = SessionManager.open(path)
        n = 0
        while True:
            size = rng.choice(SIZES)
            eid = sm.append_custom_entry("crash", {"n": n, "p": "x" * size})
            os.write(wfd, f"{eid}\n".encode())
            n += 1
    finally:
        os._exit(0)


def _read_all(rfd: int) -> str:
    chunks = []
    while True:
        data = os.read(rfd, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(rfd)
    return b"".join(chunks).decode()


def test_sigkill_at_random_moments_loses_no_completed_entry(tmp_path: Path) -> None:
    template = _base_file(tmp_path / "template")
    template_ids = {e["id"] for e in read_session_file(next((tmp_path / "template").iterdir())).entries[1:]}
    rng = random.Random(20260101)
    runs = 150
    torn_runs = killed_before_file = 0
    for run in range(runs):
        run_dir = tmp_path / f"run{run}"
        run_dir.mkdir()
        mode = "scratch" if run % 3 == 0 else "existing"
        path = run_dir / "session.jsonl"
        if mode == "existing":
            path.write_bytes(template)
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(rfd)
            _child_append_forever(mode, str(path), str(run_dir), wfd, run)
        os.close(wfd)
        time.sleep(rng.uniform(0, 0.025))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        reported = [line for line in _read_all(rfd).split("\n")[:-1] if line]  # complete lines only

        files = [p for p in run_dir.iterdir() if p.name.endswith(".jsonl")]
        if not files:
            assert mode == "scratch" and reported == []  # killed before the file was written
            killed_before_file += 1
            continue
        assert len(files) == 1
        session_file = files[0]
        contents = read_session_file(session_file)
        assert contents.valid, f"run {run}: file does not load"
        loaded = {e["id"]: e for e in contents.entries[1:]}
        missing = [i for i in reported if i not in loaded]
        assert missing == [], f"run {run}: completed appends lost: {missing}"
        for e in loaded.values():  # every loaded entry is whole
            if e["type"] == "custom":
                assert len(e["data"]["p"]) in SIZES
        already = len(template_ids) if mode == "existing" else 0
        in_flight = len(loaded) - already - len(reported)
        # at most the write in flight landed whole: one line, or the first write (header + 2 entries)
        assert in_flight in (0, 1) or (in_flight == 2 and mode == "scratch" and not reported)
        if contents.problems:
            (problem,) = contents.problems  # only ever the last line, and it is reported
            assert problem.reason.startswith("torn last line")
            assert problem.line_number == contents.line_count
            torn_runs += 1
        # the next append never glues onto a torn line
        sm = SessionManager.open(str(session_file))
        new_id = sm.append_custom_entry("after-crash", {"ok": True})
        again = read_session_file(session_file)
        ids = [e["id"] for e in again.entries[1:]]
        assert ids[-1] == new_id and set(loaded) <= set(ids)
        assert all(not p.reason.startswith("torn") for p in again.problems)
        shutil.rmtree(run_dir)
    print(f"\n{runs} runs: {torn_runs} torn last lines, {killed_before_file} killed before the first write")


V1_LINES = [
    '{"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/p"}',
    *[
        f'{{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{"y" * 200} {i}","timestamp":{i}}}}}'
        for i in range(1500)
    ],
]
V1_TEXT = "\n".join(V1_LINES) + "\n"


def test_sigkill_during_migration_rewrite_leaves_old_or_new_file(tmp_path: Path) -> None:
    rng = random.Random(7)
    outcomes = {"original": 0, "migrated": 0}
    for run in range(20):
        run_dir = tmp_path / f"m{run}"
        run_dir.mkdir()
        path = run_dir / "old.jsonl"
        path.write_text(V1_TEXT)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                SessionManager.open(str(path))
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.01, 0.1))  # a migrating open of this file takes ~0.05-0.1 s
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        text = path.read_text()
        backup = run_dir / "old.jsonl.bak"
        if text == V1_TEXT:
            outcomes["original"] += 1
            if backup.exists():
                assert backup.read_text() == V1_TEXT
        else:
            outcomes["migrated"] += 1
            assert backup.read_text() == V1_TEXT  # the original, kept
            contents = read_session_file(path)
            assert contents.valid and not contents.problems
            assert contents.entries[0]["version"] == 3 and len(contents.entries) == len(V1_LINES)
        # no stray session files: temporary names never end in .jsonl
        assert sorted(p.name for p in run_dir.iterdir() if p.name.endswith(".jsonl")) == ["old.jsonl"]
        # and it opens (finishing the migration if it had not happened)
        assert len(SessionManager.open(str(path)).get_entries()) == 1500
    print(f"\nmigration kills: {outcomes}")


def test_two_processes_append_without_interleaving(tmp_path: Path) -> None:
    template = _base_file(tmp_path / "t")
    path = tmp_path / "shared.jsonl"
    path.write_bytes(template)
    per_child = 150
    pids = []
    for child in range(2):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                rng = random.Random(child)
                sm = SessionManager.open(str(path))
                for i in range(per_child):
                    sm.append_custom_entry(
                        f"child{child}", {"i": i, "p": "z" * rng.choice([5, 5000, 200_000])}
                    )
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    contents = read_session_file(path)
    assert contents.valid and contents.problems == ()
    for child in range(2):
        mine = [e["data"]["i"] for e in contents.entries if e.get("customType") == f"child{child}"]
        assert mine == list(range(per_child))
    # each process chained its own entries (a branch of its own after a reload), nothing lost
    sm = SessionManager.open(str(path))
    assert len(sm.get_entries()) == 2 + 2 * per_child
    for child in range(2):
        chain = [e for e in sm.get_entries() if e.get("customType") == f"child{child}"]
        assert [e["parentId"] for e in chain[1:]] == [e["id"] for e in chain[:-1]]


def test_lock_timeout_raises_and_keeps_session_unchanged(tmp_path: Path) -> None:
    sm = SessionManager.create("/tmp/proj", str(tmp_path))
    sm.append_message(_user("q"))
    sm.append_message(_assistant("a"))
    path = sm.get_session_file()
    assert path is not None
    sm2 = SessionManager.open(path, lock_timeout=0.2)
    before = Path(path).read_bytes()
    leaf, count = sm2.get_leaf_id(), len(sm2.get_entries())
    with open(path, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        t0 = time.monotonic()
        with pytest.raises(SessionLockedError, match="locked by another process"):
            sm2.append_message(_user("blocked"))
        assert time.monotonic() - t0 >= 0.2
        fcntl.flock(holder.fileno(), fcntl.LOCK_UN)
    assert Path(path).read_bytes() == before
    assert (sm2.get_leaf_id(), len(sm2.get_entries())) == (leaf, count)
    new = sm2.append_message(_user("now it works"))
    assert read_session_file(path).entries[-1]["id"] == new


def test_strict_mode_raises_before_touching_the_file(tmp_path: Path) -> None:
    sm = SessionManager.create("/tmp/proj", str(tmp_path))
    sm.append_message(_user("q"))
    sm.append_message(_assistant("a"))
    path = Path(sm.get_session_file())  # type: ignore[arg-type]
    damaged = path.read_bytes().replace(b"\n", b"\n{oops\n", 1) + b'{"torn'
    path.write_bytes(damaged)
    with pytest.raises(SessionFileCorruptError) as err:
        SessionManager.open(str(path), strict=True)
    assert [n for n, _ in err.value.problems] == [2, 5]
    assert "torn last line" in err.value.problems[1][1]
    assert path.read_bytes() == damaged
    lenient = SessionManager.open(str(path))
    assert [p.line_number for p in lenient.load_problems] == [2, 5]
    assert lenient.load_problems[0].raw_prefix == "{oops"
    assert path.read_bytes() == damaged + b"\n"  # Pi's repair: a newline, the torn bytes kept


def test_torn_line_left_by_another_writer(tmp_path: Path) -> None:
    sm = SessionManager.create("/tmp/proj", str(tmp_path))
    sm.append_message(_user("q"))
    sm.append_message(_assistant("a"))
    path = Path(sm.get_session_file())  # type: ignore[arg-type]
    with open(path, "ab") as f:
        f.write(b'{"type":"custom","id":"half')
    new = sm.append_custom_entry("after", None)
    contents = read_session_file(path)
    assert contents.entries[-1]["id"] == new
    assert [p.raw_prefix for p in contents.problems] == ['{"type":"custom","id":"half']


def test_file_deleted_under_open_session_is_written_again_whole(tmp_path: Path) -> None:
    sm = SessionManager.create("/tmp/proj", str(tmp_path))
    sm.append_message(_user("q"))
    sm.append_message(_assistant("a"))
    path = Path(sm.get_session_file())  # type: ignore[arg-type]
    path.unlink()
    sm.append_message(_user("again"))
    contents = read_session_file(path)
    assert contents.valid
    assert [e["id"] for e in contents.entries[1:]] == [e["id"] for e in sm.get_entries()]


def test_first_write_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    sm = SessionManager.create("/tmp/proj", str(tmp_path))
    sm.append_message(_user("q"))
    path = Path(sm.get_session_file())  # type: ignore[arg-type]
    path.write_text("someone else's file\n")
    with pytest.raises(Exception, match="already exists"):
        sm.append_message(_assistant("a"))
    assert path.read_text() == "someone else's file\n"
    assert [e["message"]["role"] for e in sm.get_entries()] == ["user"]  # type: ignore[typeddict-item]


def test_fsync_option_syncs_every_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    sm = SessionManager.create("/tmp/proj", str(tmp_path), fsync=True)
    sm.append_message(_user("q"))
    sm.append_message(_assistant("a"))  # first write: the temp file is always fsynced
    monkeypatch.setattr(os, "fsync", counting_fsync)
    sm.append_message(_user("r"))
    sm.append_message(_user("s"))
    assert len(synced) == 2
    plain = SessionManager.open(sm.get_session_file())  # type: ignore[arg-type]
    synced.clear()
    plain.append_message(_user("t"))
    assert synced == []
    assert [e["message"]["content"] for e in read_session_file(sm.get_session_file()).entries[3:]] == [
        "r",
        "s",
        "t",
    ]  # type: ignore[arg-type]


def test_threads_share_one_manager(tmp_path: Path) -> None:
    import threading

    sm = SessionManager.create("/tmp/proj", str(tmp_path))
    sm.append_message(_user("q"))
    root = sm.append_message(_assistant("a"))
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(300):
                sm.append_custom_entry(f"w{k}", i)
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(100):
                sm.get_children(root)
                sm.build_session_context()
                sm.get_tree()
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(2)] + [
        threading.Thread(target=reader)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    on_disk = read_session_file(sm.get_session_file())  # type: ignore[arg-type]
    assert [e["id"] for e in on_disk.entries[1:]] == [e["id"] for e in sm.get_entries()]
    chain = sm.get_branch()
    assert len(chain) == 602  # one linear chain: every append saw the previous leaf
