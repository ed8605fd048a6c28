"""Frames over lazily indexed session files (pi_nb.session.source -> pi_nb.analysis): every frame
kind, and ``columns=`` subsets, equal (values and dtypes) to the eager load of the same files, on
every fixture and on random files; each kind parses only the entries its rows need (counted with
``lazy.entries_parsed``); a corpus of more files than the descriptor limit loads (nothing stays
open)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import pi_nb.analysis.rows as rows_module
import pi_nb.session.source as source_module
from pi_nb.analysis.columns import FRAME_COLUMNS
from pi_nb.notebook.frames import session_frames
from pi_nb.session import lazy
from pi_nb.session.jsonl import read_session_file

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("entries", "messages", "tool_results", "usage", "compactions", "sessions")
FIXTURES = sorted(
    str(p)
    for base in (ROOT / "tests" / "fixtures", ROOT / "notebooks" / "data" / "real-pi")
    for p in base.rglob("*.jsonl")
)


def _eager_read(path: Any, *, in_memory: bool = False) -> tuple[Any, None]:
    return read_session_file(path), None


_LOAD = rows_module.load_session_item


@pytest.fixture(autouse=True)
def _every_file_lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files here are small: index them lazily all the same (the default is by size)."""
    monkeypatch.setattr(source_module, "LAZY_MIN_BYTES", 0)


def test_by_default_only_large_files_are_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_module, "LAZY_MIN_BYTES", 1 << 20)
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(random_session(random.Random(1), 50, odd=False))
    big.write_bytes(random_session(random.Random(2), 6000, odd=False))
    assert small.stat().st_size < 1 << 20 <= big.stat().st_size
    for path, want in ((small, False), (big, True)):
        loaded = source_module.load_session_item(source_module.SessionFile(str(path), True), False, [])
        assert loaded is not None and (loaded[0].lazy_entries() is not None) is want


def _lazy_load(item: Any, strict: Any, problems: Any, *, lazy: bool = True) -> Any:
    return _LOAD(item, strict, problems, lazy=True)  # (the entries and messages kinds too)


def frames(src: Any, eager: bool, columns: dict[str, list[str]] | None = None) -> Any:
    """Every kind's frame, each Pi file indexed lazily (or, ``eager``, parsed at once)."""
    saved = source_module.read_session_file_lazy
    if eager:
        source_module.read_session_file_lazy = _eager_read  # type: ignore[assignment]
    else:
        rows_module.load_session_item = _lazy_load  # type: ignore[assignment]
    try:
        out, errors = session_frames(src, KINDS, strict=False, columns=columns)
    finally:
        source_module.read_session_file_lazy = saved
        rows_module.load_session_item = _LOAD
    return out, errors


def _outcome(src: Any, eager: bool, columns: dict[str, list[str]] | None) -> Any:
    try:
        return frames(src, eager, columns)
    except Exception as exc:  # (an entry Pi cannot read fails the frame: the same error both ways)
        return ("raised", type(exc), str(exc))


def assert_same(src: Any, columns: dict[str, list[str]] | None = None) -> dict[str, Any]:
    want_all = _outcome(src, True, columns)
    got_all = _outcome(src, False, columns)
    if want_all[0] == "raised" or got_all[0] == "raised":
        assert got_all == want_all, src
        return {}
    want, want_errors = want_all
    got, got_errors = got_all
    for kind in KINDS:
        a, b = got[kind], want[kind]
        assert list(a.dtypes.astype(str)) == list(b.dtypes.astype(str)), (src, kind)
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=f"{kind} of {src}")
    pd.testing.assert_frame_equal(got_errors, want_errors, check_exact=True)
    return dict(got)


def test_fixtures_are_many_and_load_lazily() -> None:
    assert len(FIXTURES) >= 20
    before = lazy.entries_parsed()
    frames(str(ROOT / "notebooks" / "data" / "real-pi"), False)
    assert lazy.entries_parsed() > before  # (the comparisons below do compare a lazy load)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_fixture_lazy_equals_eager(path: str) -> None:
    assert_same(path)


def test_fixture_directories_and_column_subsets() -> None:
    rng = random.Random(5)
    assert_same(str(ROOT / "notebooks" / "data" / "real-pi"))
    for _ in range(6):
        columns = {k: rng.sample(list(FRAME_COLUMNS[k]), rng.randint(1, 4)) for k in KINDS}
        assert_same(str(ROOT / "notebooks" / "data" / "real-pi"), columns)
        assert_same(str(ROOT / "tests" / "fixtures" / "sessions"), columns)


# --- random files ----------------------------------------------------------------------------


def _usage(rng: random.Random) -> dict[str, Any]:
    inp, out = rng.randint(0, 5000), rng.randint(0, 500)
    u: dict[str, Any] = {"input": inp, "output": out, "cacheRead": rng.choice([0, 10]), "cacheWrite": 0,
                         "totalTokens": rng.choice([inp + out, 0])}
    if rng.random() < 0.8:
        u["cost"] = {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}
    return u


def random_session(rng: random.Random, n: int, odd: bool = True) -> bytes:
    """A random session of ``n`` lines; ``odd``: with duplicate ids, malformed lines, entries
    without an id or a message object, non-string ids, duplicate keys."""
    lines = [json.dumps({"type": "session", "version": 3, "id": f"s{rng.random()}", "timestamp": "2026-01-01T00:00:00.000Z",
                         "cwd": "/w"})]
    ids: list[str] = []
    calls: list[str] = []

    def add(obj: dict[str, Any]) -> None:
        lines.append(json.dumps(obj))
        if isinstance(obj.get("id"), str):
            ids.append(obj["id"])

    for i in range(n):
        parent = (rng.choice(ids) if rng.random() < 0.1 else ids[-1]) if ids else None
        base = {"id": f"e{i}", "parentId": parent, "timestamp": f"2026-01-01T00:{i % 60:02d}:00.000Z"}
        r = rng.random()
        if not odd and 0.81 <= r < 0.88:
            r = 0.9
        if r < 0.2:
            add({**base, "type": "message", "message": {"role": "user", "content": f"hi {i}", "timestamp": i}})
        elif r < 0.45:
            content: list[Any] = [{"type": "text", "text": "ok " * rng.randint(0, 5)}]
            if rng.random() < 0.5:
                cid = f"c{i}"
                calls.append(cid)
                content.append({"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": f"ls {i}"}})
            if rng.random() < 0.2:
                content.insert(0, {"type": "thinking", "thinking": "hmm"})
            add({**base, "type": "message", "message": {
                "role": "assistant", "content": content, "provider": rng.choice(["anthropic", "openai"]),
                "model": rng.choice(["claude-sonnet-4-5", "gpt-5"]), "api": "x", "usage": _usage(rng),
                "stopReason": rng.choice(["stop", "toolUse", "error", "aborted"]), "timestamp": i}})
        elif r < 0.62:
            details: dict[str, Any] = {}
            if rng.random() < 0.5:
                details = {"truncation": {"truncated": True, "truncatedBy": "lines", "totalLines": 900,
                                          "outputLines": 100}, "fullOutputPath": "/tmp/x"}
            add({**base, "type": "message", "message": {
                "role": "toolResult", "toolCallId": rng.choice(calls or ["none"]), "toolName": "bash",
                "content": [{"type": "text", "text": "out\n" * rng.randint(0, 4)}], "details": details,
                "isError": rng.random() < 0.2, "timestamp": i}})
        elif r < 0.66 and ids:
            add({**base, "type": "compaction", "summary": "sum " * rng.randint(0, 3),
                 "firstKeptEntryId": rng.choice(ids), "tokensBefore": rng.randint(0, 90000),
                 "details": {"readFiles": ["a"], "modifiedFiles": []}})
        elif r < 0.69:
            add({**base, "type": "model_change", "provider": "openai", "modelId": "gpt-5"})
        elif r < 0.71:
            add({**base, "type": "thinking_level_change", "thinkingLevel": "high"})
        elif r < 0.73 and ids:
            add({**base, "type": "label", "targetId": rng.choice(ids), "label": rng.choice(["x", None])})
        elif r < 0.75:
            add({**base, "type": "session_info", "name": f"name {i}"})
        elif r < 0.77 and ids:
            add({**base, "type": "branch_summary", "fromId": rng.choice(ids), "summary": "went elsewhere"})
        elif r < 0.79:
            add({**base, "type": "custom_message", "customType": "note", "content": "c", "display": True})
        elif r < 0.81:
            add({**base, "type": "message", "message": {"role": "bashExecution", "command": "ls", "output": "a",
                                                        "exitCode": 0, "timestamp": i}})
        elif r < 0.83 and ids:
            add({**base, "id": rng.choice(ids), "type": "message",
                 "message": {"role": "user", "content": "same id again"}})  # a duplicate id
        elif r < 0.84:
            lines.append('{"type":"message","id":"torn'  )  # malformed
        elif r < 0.85:
            add({"type": "message", "parentId": parent, "message": {"role": "user", "content": "no id"}})
        elif r < 0.86:
            add({**base, "type": "message", "message": "not an object"})
        elif r < 0.87:
            add({**base, "id": 7 + i, "type": "custom", "customType": "x"})  # a non-string id
        elif r < 0.88:
            # duplicate keys: the last one wins
            lines.append('{"type":"message","id":"d' + str(i) + '","type":"custom","message":{"role":"user","role":"assistant"}}')
        else:
            add({**base, "type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "q"}]}})
    return ("\n".join(lines) + ("\n" if rng.random() < 0.8 else "")).encode()


def test_random_files_lazy_equals_eager(tmp_path: Path) -> None:
    rng = random.Random(2024)
    for k in range(30):
        path = tmp_path / f"r{k}.jsonl"
        path.write_bytes(random_session(rng, rng.randint(0, 150)))
        assert_same(str(path))
        columns = {kind: rng.sample(list(FRAME_COLUMNS[kind]), rng.randint(1, 5)) for kind in KINDS}
        assert_same(str(path), columns)
    assert_same(str(tmp_path))  # the whole folder at once


# --- what each kind parses ---------------------------------------------------------------------


def _parsed(src: str, kind: str, columns: list[str] | None = None) -> int:
    before = lazy.entries_parsed()
    session_frames(src, [kind], strict=False, columns={kind: columns} if columns else None)
    return lazy.entries_parsed() - before


def test_each_kind_parses_only_its_entries(tmp_path: Path) -> None:
    rng = random.Random(9)
    path = tmp_path / "big.jsonl"
    path.write_bytes(random_session(rng, 3000, odd=False))
    contents, entries = lazy.read_session_file_lazy(path, in_memory=True)
    assert entries is not None
    n = len(entries)
    types, roles = entries.types, entries.roles
    assistants = sum(1 for t, r in zip(types, roles, strict=True) if t == "message" and r == "assistant")
    results = sum(1 for t, r in zip(types, roles, strict=True) if t == "message" and r == "toolResult")
    compactions = types.count("compaction")
    # every load parses the labels (the manager's label index), the leaf and a compaction on
    # the leaf's path
    base = types.count("label") + 2
    src = str(path)
    usage = _parsed(src, "usage")
    assert assistants <= usage <= assistants + base < n / 2
    assert results + assistants <= _parsed(src, "tool_results") <= results + assistants + base
    # without the arguments column, the calls' assistant messages are not needed
    assert _parsed(src, "tool_results", ["entry_id", "tool_name", "is_error"]) <= results + base
    assert compactions > 0
    assert _parsed(src, "compactions", ["entry_id", "tokens_before", "on_active_branch", "in_context"]) <= (
        compactions + base
    )
    # the tree's shape, the counts of the index and the branch need no entry parsed
    shape = ["session_id", "entries", "leaf_id", "leaves", "branch_points", "active_branch_entries"]
    assert _parsed(src, "sessions", shape) <= base
    # every entry is a row of these: parsed at once (not indexed), and all of them lazily
    assert _parsed(src, "entries") == 0 and _parsed(src, "messages") == 0
    before = lazy.entries_parsed()
    frames(src, False, {"entries": ["entry_id"]})
    assert lazy.entries_parsed() - before == n


# --- descriptors -------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import os, resource, sys
    resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))
    import pi_nb.session.source
    pi_nb.session.source.LAZY_MIN_BYTES = 0  # (small files: indexed lazily all the same)
    from pi_nb.notebook.frames import session_frames
    before = len(os.listdir("/proc/self/fd"))
    frames = session_frames(sys.argv[1], ["usage", "tool_results", "compactions"], strict=False)[0]
    after = len(os.listdir("/proc/self/fd"))
    # every session held at once (the managers keep their unparsed entries)
    from pi_nb.session.source import load_session_source
    loaded, problems = load_session_source(sys.argv[1], strict=False)
    held = len(os.listdir("/proc/self/fd"))
    assert len(loaded) == 150 and not problems, (len(loaded), problems[:3])
    assert all(m.lazy_entries() is not None and not m.lazy_entries().all_parsed() for m, _, _ in loaded)
    print(len(frames["usage"]), len(frames["tool_results"]), before, max(after, held))
    """
)


def test_more_files_than_descriptors(tmp_path: Path) -> None:
    rng = random.Random(3)
    want_usage = 0
    for k in range(150):  # three times the limit the child sets
        data = random_session(rng, 40, odd=False)
        (tmp_path / f"s{k:03d}.jsonl").write_bytes(data)
    want = session_frames(str(tmp_path), ["usage", "tool_results"], strict=False)[0]
    want_usage = len(want["usage"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    usage, results, before, after = map(int, out.stdout.split())
    assert usage == want_usage and results == len(want["tool_results"])
    assert after <= before + 1  # nothing left open by the loaded sessions
