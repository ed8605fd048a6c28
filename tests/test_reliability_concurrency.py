"""Concurrency: two processes on one session file, two notebooks on one trust store.

* Two interpreters run agent turns (``AgentSession`` on a scripted model) on the *same* session
  file at the same time while this process keeps loading it: every load is a valid session (at
  most a torn last line, reported), each writer's entries are all there afterwards, whole and in
  order, as two branches from where both started. (The raw append mechanics are covered by
  ``tests/test_session_durability.py``.)
* Two interpreters flip trust decisions for their own projects in one ``trust.json`` while this
  process reads the file: it is always complete JSON, and no saved decision is lost (each write
  is a read-modify-write under ``trust.json.lock``). Then two real IPython shells answer
  ``%pi trust`` for their projects at the same time.
* A process killed while it holds ``trust.json.lock`` does not lock the store forever.
"""

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

from pi_nb import SessionManager
from pi_nb.errors import TrustStoreError
from pi_nb.resources.trust import ProjectTrustStore
from pi_nb.session.jsonl import read_session_file

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX processes and signals")


def _start_file(directory: Path) -> Path:
    sm = SessionManager.create(str(directory), str(directory))
    sm.append_message({"role": "user", "content": "hello", "timestamp": 1})
    sm.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "provider": "p",
            "model": "m",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    path = sm.get_session_file()
    assert path is not None
    return Path(path)


WRITER = textwrap.dedent(
    r"""
    import asyncio, json, os, sys, time
    sys.path.insert(0, sys.argv[1])
    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel
    from pi_nb.session import SessionManager

    path, name, turns, go = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    sm = SessionManager.open(path)
    model = ScriptedModel()
    session = AgentSession(sm, model, agent_dir=os.path.dirname(path), tools=[], active_tools=[])
    print("ready", flush=True)
    while not os.path.exists(go):  # start together
        time.sleep(0.001)
    ids = []
    for k in range(turns):
        model.enqueue(model.text(f"{name} answer {k} " + "z" * (k * 500), usage=model.usage(100, 5)))
        result = asyncio.run(session.prompt(f"{name} question {k}"))
        ids.extend(result.entry_ids)
    print(json.dumps(ids))
    """
)


def test_two_processes_run_turns_on_one_session_file(tmp_path: Path) -> None:
    path = _start_file(tmp_path)
    start_leaf = SessionManager.open(str(path)).get_leaf_id()
    go = tmp_path / "go"
    turns = 12
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(ROOT), str(path), name, str(turns), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for p in procs:  # both have opened the file (and hold the same leaf) before either writes
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    go.touch()
    loads = 0
    last_count = 0
    while any(p.poll() is None for p in procs):
        contents = read_session_file(path)
        assert contents.valid
        for problem in contents.problems:  # a line being written right now, at most
            assert problem.reason.startswith("torn last line") and problem.line_number == contents.line_count
        assert len(contents.entries) >= last_count
        last_count = len(contents.entries)
        loads += 1
    outs = [p.communicate() for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    written = {
        name: json.loads(out.strip().splitlines()[-1])
        for name, (out, _) in zip(("alpha", "beta"), outs, strict=True)
    }
    contents = read_session_file(path)
    assert contents.valid and not contents.problems
    sm = SessionManager.open(str(path))
    by_id = {e["id"]: e for e in sm.get_entries()}
    for name, ids in written.items():
        assert len(ids) == 2 * turns and all(i in by_id for i in ids)
        # each writer's entries form one branch that starts where both started (plus the model /
        # thinking-level entries its AgentSession recorded), with none of the other writer's
        branch = [e["id"] for e in sm.get_branch(ids[-1])]
        assert start_leaf in branch
        mine = branch[branch.index(start_leaf) + 1 :]
        assert [i for i in mine if i in ids] == ids
        assert all(by_id[i]["type"] != "message" for i in mine if i not in ids)
        texts = [by_id[i]["message"]["content"][0]["text"] for i in ids[::2]]
        assert texts == [f"{name} question {k}" for k in range(turns)]
    (root,) = sm.get_tree()
    branch_points = [n for n in root.walk() if len(n.children) > 1]
    # the writers part where both started: at the file's leaf, or, when one AgentSession recorded
    # its model / thinking level (as Pi does on opening a session without messages) before the
    # other opened the file, at that entry
    assert len(branch_points) == 1
    point = branch_points[0].entry
    assert point["id"] == start_leaf or point["type"] in ("model_change", "thinking_level_change")
    print(f"\n{loads} loads while two processes wrote {4 * turns} entries")


TRUSTER = textwrap.dedent(
    r"""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from pi_nb.errors import TrustStoreError
    from pi_nb.resources.trust import ProjectTrustStore
    agent_dir, name, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = ProjectTrustStore(agent_dir)
    last, contended = {}, 0
    for k in range(rounds):
        time.sleep(0.005)  # faster than any person answers, slow enough not to starve the other one
        cwd = f"/projects/{name}/p{k % 5}"
        decision = k % 3 != 0
        try:
            store.set(cwd, decision)
            last[cwd] = decision
            got = store.get(cwd)
        except TrustStoreError as error:
            # Pi's lock policy (10 tries, 20 ms apart) can give up under contention: a clear error
            # that names the lock, and the store stays as it was
            assert "already being held" in str(error), error
            contended += 1
            continue
        assert got == decision, (cwd, got, decision)
    print(json.dumps({"last": last, "contended": contended}))
    """
)


def test_two_processes_share_one_trust_store(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    store = ProjectTrustStore(str(agent_dir))
    store.set("/projects/shared", True)
    trust = Path(store.trust_path)
    stop = threading.Event()
    bad: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                data = json.loads(trust.read_text())
            except FileNotFoundError:
                bad.append("missing")
                continue
            except json.JSONDecodeError as error:
                bad.append(f"half-written file: {error}")
                continue
            if data.get("/projects/shared") is not True:
                bad.append("lost the shared decision")

    t = threading.Thread(target=reader)
    t.start()
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", TRUSTER, str(ROOT), str(agent_dir), name, "30"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("one", "two")
        ]
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        stop.set()
        t.join()
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    assert bad == []
    final = json.loads(trust.read_text())
    contended = 0
    for out, _ in outs:
        r = json.loads(out)
        contended += r["contended"]
        for cwd, decision in r["last"].items():
            assert final[cwd] is decision  # no lost update
    assert final["/projects/shared"] is True
    assert not (agent_dir / "trust.json.lock").exists()
    print(f"\ntrust store: 120 operations from two processes, {contended} refused under contention")


NOTEBOOK = textwrap.dedent(
    r"""
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from IPython.core.interactiveshell import InteractiveShell
    project, rounds, go = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    os.chdir(project)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "pi_nb")
    answers = []
    while not os.path.exists(go):
        pass
    for k in range(rounds):
        answer = "yes" if k % 2 == 0 else "no"
        out = shell.run_line_magic("pi", f"trust {answer}")
        answers.append(answer)
    print(json.dumps({"answers": answers, "last": out}))
    """
)


def test_two_notebooks_answer_trust_at_once(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    projects = []
    for name in ("nb1", "nb2"):
        p = tmp_path / name
        (p / ".pi").mkdir(parents=True)
        (p / ".pi" / "settings.json").write_text("{}")  # something that needs trust
        projects.append(p)
    go = tmp_path / "go"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", NOTEBOOK, str(ROOT), str(p), "9", str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for p in projects
    ]
    time.sleep(1.0)
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    store = ProjectTrustStore(str(agent_dir))
    for project, (out, _) in zip(projects, outs, strict=True):
        r = json.loads(out)
        assert r["answers"][-1] == "yes" and "trusted (saved)" in r["last"]
        assert store.get(os.path.realpath(project)) is True


HOLDER = textwrap.dedent(
    r"""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from pi_nb.resources.paths import pi_file_lock
    with pi_file_lock(sys.argv[2]):
        print("held", flush=True)
        time.sleep(120)
    """
)


def test_a_killed_lock_holder_does_not_lock_the_store_forever(tmp_path: Path) -> None:
    store = ProjectTrustStore(str(tmp_path))
    store.set("/projects/x", True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ROOT), store.trust_path + ".lock"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    with pytest.raises(TrustStoreError, match="already being held"):
        store.get("/projects/x")  # held by a live process: a clear error, after Pi's retries
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # the holder is gone: its lock is recognised as stale and the store works again
    assert store.get("/projects/x") is True
    store.set("/projects/x", False)
    assert store.get("/projects/x") is False


class _GrowsWhileRead:
    """A session file opened for reading; the moment the reader reaches the half-written last line,
    the writer finishes that line and appends another one (what a concurrent append looks like)."""

    def __init__(self, path: str, rest: bytes) -> None:
        self._f = open(path, "rb")
        self._path = path
        self._rest = rest

    def __enter__(self) -> _GrowsWhileRead:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def fileno(self) -> int:
        return self._f.fileno()

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        if data and not data.endswith(b"\n") and self._rest:
            with open(self._path, "ab") as w:
                w.write(self._rest)
            self._rest = b""
        return data

    def __iter__(self) -> _GrowsWhileRead:
        return self

    def __next__(self) -> bytes:
        line = self._f.readline()
        if line and not line.endswith(b"\n") and self._rest:
            with open(self._path, "ab") as w:
                w.write(self._rest)
            self._rest = b""
        if not line:
            raise StopIteration
        return line


def test_a_load_during_an_append_sees_a_consistent_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a concurrent writer does, one load shows the file as it was when it was opened:
    complete entries, and at most the line being written as a torn last line (never a complete
    entry reported as two broken lines)."""
    from pi_nb.session import jsonl
    from pi_nb.session.jsonl import serialize_entry

    path = _start_file(tmp_path)
    entry = {
        "type": "custom",
        "customType": "x",
        "data": {"pad": "y" * 500},
        "id": "feedbeef",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    line = serialize_entry(entry)
    with open(path, "ab") as f:
        f.write(line[:200])  # the writer is half-way through this line
    rest = line[200:] + serialize_entry({**entry, "id": "cafebabe"})
    monkeypatch.setattr(jsonl, "open_session_for_read", lambda p: _GrowsWhileRead(p, rest))
    contents = read_session_file(path)
    monkeypatch.undo()
    assert [p.reason.split(",")[0] for p in contents.problems] == [
        "torn last line (no newline at end of file)"
    ]
    assert contents.problems[0].line_number == contents.line_count == 4
    # the next load sees both new entries, whole
    again = read_session_file(path)
    assert not again.problems and [e["id"] for e in again.entries[-2:]] == ["feedbeef", "cafebabe"]
