"""Following a growing session file over the lazy index (pi_nb.session.tail on
pi_nb.session.lazy): a poll indexes the new complete lines without parsing them, the follower's
views parse only what is new on each refresh (counted with ``lazy.entries_parsed``), and what the
tail answers is what an eager read of the same bytes gives (random files, random cut points, torn
lines, malformed lines, a file rewritten from the start)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

from pi_nb.notebook.following import SessionFollower
from pi_nb.session import lazy
from pi_nb.session.context import build_context_entries, get_branch_entries
from pi_nb.session.jsonl import parse_session_entries
from pi_nb.session.tail import SessionTail

HEADER = {"type": "session", "version": 3, "id": "lazy-follow", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def entry(i: int, parent: str | None) -> dict[str, Any]:
    role = "user" if i % 2 == 0 else "assistant"
    msg: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": f"message {i} " + "x" * (i % 50)}],
                           "timestamp": 1_767_225_600_000 + i}
    if role == "assistant":
        msg.update(provider="anthropic", model="claude-sonnet-4-5", stopReason="stop",
                   usage={"input": 100 + i, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110 + i,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
    return {"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": msg}


def line(obj: Any) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def chain(start: int, n: int, parent: str | None) -> bytes:
    out = []
    for i in range(start, start + n):
        out.append(line(entry(i, parent)))
        parent = f"e{i}"
    return b"".join(out)


def test_poll_indexes_without_parsing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + chain(0, 3000, None)
                     + line({"type": "label", "id": "l1", "parentId": "e2999", "targetId": "e5", "label": "five"})
                     + line({"type": "session_info", "id": "n1", "parentId": "l1", "name": " named "}))
    tail = SessionTail(path)
    before = lazy.entries_parsed()
    new = tail.poll()
    assert len(new) == 3002
    assert lazy.entries_parsed() - before == 2  # the label and the session_info only
    assert tail.get_label("e5") == "five" and tail.get_session_name() == "named" and tail.get_leaf_id() == "n1"
    assert tail.get_entry("e17")["message"]["content"][0]["text"].startswith("message 17")  # type: ignore[index]
    assert lazy.entries_parsed() - before == 3
    # a branch walk parses the branch (cached: asking again parses nothing)
    branch = tail.get_branch("e99")
    assert [e["id"] for e in branch] == [f"e{i}" for i in range(100)]
    mark = lazy.entries_parsed()
    assert tail.get_branch("e99") == branch and lazy.entries_parsed() == mark


def test_follower_over_a_big_file_parses_only_new_entries(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    n = 20_000
    path.write_bytes(line(HEADER) + chain(0, n, None))
    follower = SessionFollower(path, model_context_window=200_000, log_lines=50)
    assert follower.entries_seen == n
    budget_before = follower.budget.to_text()
    assert budget_before
    parent = f"e{n - 1}"
    for round_ in range(5):
        k = 7
        with open(path, "ab") as f:
            f.write(chain(n + round_ * k, k, parent))
        parent = f"e{n + round_ * k + k - 1}"
        before = lazy.entries_parsed()
        assert follower.poll_once() == k
        follower.to_text()  # every view drawn
        parsed = lazy.entries_parsed() - before
        assert 0 < parsed <= k, (round_, parsed)  # the new entries at most: nothing old is parsed again
    assert follower.tail.get_leaf_id() == parent
    assert follower.entries_seen == n + 35
    assert follower.tree.model.leaf_id == parent
    assert list(follower.log)[-1].startswith(parent)
    # a torn line waits for its newline, still without parsing anything old
    torn = line(entry(n + 35, parent))
    with open(path, "ab") as f:
        f.write(torn[:40])
    before = lazy.entries_parsed()
    assert follower.poll_once() == 0 and follower.tail.torn
    with open(path, "ab") as f:
        f.write(torn[40:])
    assert follower.poll_once() == 1 and not follower.tail.torn
    follower.to_text()
    assert lazy.entries_parsed() - before <= 1
    assert follower.tail.problems == []


def _eager(data: bytes) -> dict[str, Any]:
    """What the tail must answer for these bytes (the complete lines), by the eager reader's rules."""
    entries: list[Any] = []
    problems: list[tuple[int, str]] = []
    header = None
    complete = data[: data.rfind(b"\n") + 1]
    for n, raw in enumerate(complete.split(b"\n")[:-1], 1):
        text = raw.decode("utf-8", "replace")
        if not text.strip():
            continue
        parsed = parse_session_entries(text)
        if not parsed or not isinstance(parsed[0], dict):
            problems.append((n, text[:80]))
            continue
        if parsed[0].get("type") == "session":
            header = header or parsed[0]
            continue
        entries.append(parsed[0])
    by_id: dict[Any, Any] = {}
    leaf = None
    for e in entries:
        try:
            by_id[e.get("id")] = e
        except TypeError:
            continue
        if isinstance(e.get("id"), str):
            leaf = e.get("id")
    return {"entries": entries, "problems": problems, "header": header, "leaf": leaf, "by_id": by_id}


def _random_file(rng: random.Random) -> bytes:
    lines = [line(HEADER)]
    ids: list[str] = []
    for i in range(rng.randint(0, 120)):
        r = rng.random()
        parent = rng.choice(ids) if ids and rng.random() < 0.3 else (ids[-1] if ids else None)
        if r < 0.05:
            lines.append(b'{"type":"message","id":"bad",\n')  # malformed
        elif r < 0.08:
            lines.append(b"[1,2]\n")  # not an object
        elif r < 0.1:
            lines.append(b"   \n")
        elif r < 0.12:
            lines.append(line({"type": "label", "id": f"l{i}", "parentId": parent, "targetId": rng.choice(ids or ["x"]),
                               "label": rng.choice(["a", "", None, "b"])}))
        elif r < 0.14:
            lines.append(line({"type": "session_info", "id": f"s{i}", "parentId": parent, "name": rng.choice([" n ", 3, ""])}))
        elif r < 0.16:
            lines.append(line({"type": "message", "id": rng.choice(ids or ["d"]), "parentId": parent,
                               "message": {"role": "user", "content": "dup"}}))  # a duplicate id
        elif r < 0.18:
            lines.append(line({"type": "custom", "id": 7, "parentId": parent}))  # a non-string id
        elif r < 0.2:
            lines.append(b'{"type":"message","id":"big%d","parentId":null,"n":123456789012345678901234}\n' % i)
        elif r < 0.21:
            lines.append(b'{"type":"message","id":"u%d","text":"\\ud800 \xff"}\n' % i)  # lone surrogate, bad UTF-8
        elif r < 0.22:
            lines.append(line(HEADER))  # another session line
        else:
            e = entry(i, parent)
            lines.append(line(e))
            ids.append(e["id"])
    return b"".join(lines)


def _check(tail: SessionTail, data: bytes) -> None:
    want = _eager(data)
    got = tail.get_entries()
    assert len(got) == len(want["entries"])
    assert list(got) == want["entries"]
    assert tail.problems == want["problems"]
    assert tail.header == want["header"]
    assert tail.get_leaf_id() == want["leaf"]
    leaf = want["leaf"]
    assert _outcome(tail.get_branch) == _outcome(lambda: get_branch_entries(want["entries"], leaf, want["by_id"]))
    assert _outcome(tail.build_context_entries) == _outcome(
        lambda: build_context_entries(want["entries"], leaf, want["by_id"])
    )


def _outcome(call: Any) -> Any:
    try:
        return ("ok", list(call()))
    except Exception as exc:  # (a duplicate id can make a parentId loop: both raise the same)
        return ("raised", type(exc), str(exc))


def test_random_files_grown_at_random_cuts_match_an_eager_read(tmp_path: Path) -> None:
    rng = random.Random(24)
    for k in range(40):
        data = _random_file(rng)
        path = tmp_path / f"r{k}.jsonl"
        path.write_bytes(b"")
        tail = SessionTail(path)
        cuts = [*sorted(rng.sample(range(1, len(data)), min(6, len(data) - 1))), len(data)]
        written = 0
        for cut in cuts:
            with open(path, "ab") as f:
                f.write(data[written:cut])
            written = cut
            tail.poll()
            _check(tail, data[:cut])
        assert tail.bytes_read == len(data)


def test_a_file_rewritten_from_the_start_restarts_the_index(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + chain(0, 50, None))
    tail = SessionTail(path)
    assert len(tail.poll()) == 50
    old = tail.get_entries()
    other = line({**HEADER, "id": "other"}) + chain(100, 3, None)
    path.write_bytes(other)  # shorter, other first bytes
    assert [e["id"] for e in tail.poll()] == ["e100", "e101", "e102"] and tail.resets == 1
    _check(tail, other)
    # a snapshot taken before still reads the old file's entries it held
    assert len(old) == 50
    # replaced by a rename: another inode
    new = tmp_path / "n.jsonl"
    new.write_bytes(line(HEADER) + chain(200, 2, None))
    os.replace(new, path)
    assert [e["id"] for e in tail.poll()] == ["e200", "e201"] and tail.resets == 2


def test_a_refresh_splits_only_the_new_messages_for_the_drift_line(tmp_path: Path, monkeypatch: Any) -> None:
    import pi_nb.analysis.drift as drift

    path = tmp_path / "big.jsonl"
    n = 4000
    path.write_bytes(line(HEADER) + chain(0, n, None))
    follower = SessionFollower(path, model_context_window=200_000)
    follower.to_text()
    calls = [0]
    split = drift.message_parts

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return split(*args, **kwargs)

    monkeypatch.setattr(drift, "message_parts", counting)
    drift_before = follower.budget.drift
    with open(path, "ab") as f:
        f.write(chain(n, 6, f"e{n - 1}"))
    assert follower.poll_once() == 6
    follower.to_text()
    assert 0 < calls[0] <= 6  # the new messages only, not the 4,000 of the branch
    assert follower.budget.drift is not None and drift_before is not None
    # the same line an uncached computation gives
    assert follower.budget.drift == drift.drift_line(follower.tail.get_branch())
