"""Session files under attack: special files, symlinks, failed writes, damaged trees.

Faults are real: FIFOs, sockets, directories and device symlinks on disk; ``RLIMIT_FSIZE`` in a
subprocess for a full disk; a subprocess without the right to write for "permission denied".
What Pi 0.85.0 does on the damaged trees is recorded in ``golden/session_safety.json``
(``golden/make_session_safety.py``); no Node is needed here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from pi_nb import SessionManager
from pi_nb.errors import (
    EntryCycleError,
    SessionError,
    SessionFileTypeError,
    SessionWriteError,
)
from pi_nb.session.jsonl import SessionFileWarning, read_session_file, read_session_header
from pi_nb.session.paths import find_most_recent_session, list_all_sessions, list_sessions

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((Path(__file__).parent / "golden" / "session_safety.json").read_text())["cases"]
CWD = "/tmp/pi-nb-safety"


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


def _good_session(directory: Path) -> str:
    sm = SessionManager.create(CWD, str(directory))
    sm.append_message(_user("hello"))
    sm.append_message(_assistant("hi"))
    path = sm.get_session_file()
    assert path is not None and os.path.isfile(path)
    return path


def _context_texts(sm: SessionManager) -> list[Any]:
    return [m.get("content") for m in sm.build_session_context().messages]


# ---------------------------------------------------------------------------------------------
# special files


def _make_special(kind: str, path: Path) -> Any:
    """Create a special file of ``kind`` at ``path``; returns something to keep alive."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        return sock
    elif kind in ("dev_zero", "dev_urandom", "dev_null"):
        os.symlink("/dev/" + kind.split("_")[1], path)
    else:  # pragma: no cover
        raise AssertionError(kind)
    return None


SPECIAL = ["fifo", "directory", "socket", "dev_zero", "dev_urandom", "dev_null"]


def _mode(path: Path) -> int:
    return stat.S_IFMT(os.stat(path).st_mode)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", SPECIAL)
def test_special_file_as_session_path_is_refused_by_name(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "evil.jsonl"
    keep = _make_special(kind, path)
    mode = _mode(path)
    was_link = path.is_symlink()
    try:
        with pytest.raises(SessionFileTypeError, match=r"evil\.jsonl") as info:
            SessionManager.open(str(path))
        assert "not a regular file" in str(info.value)
        assert info.value.path == str(path)
        with pytest.raises(SessionFileTypeError):
            read_session_file(path)
        with pytest.raises(SessionFileTypeError):
            read_session_header(path)
        with pytest.raises(SessionFileTypeError):
            SessionManager.fork_from(str(path), CWD, str(tmp_path / "forks"))
        # never replaced, never turned into a file
        assert _mode(path) == mode and path.is_symlink() == was_link
        assert sorted(p.name for p in tmp_path.iterdir() if p.name != "forks") == ["evil.jsonl"]
    finally:
        if keep is not None:
            keep.close()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", SPECIAL)
def test_listing_skips_special_files_with_a_warning(kind: str, tmp_path: Path) -> None:
    good = _good_session(tmp_path)
    os.utime(good, (1, 1))  # older than the special file: "most recent" must still pick it
    path = tmp_path / "evil.jsonl"
    keep = _make_special(kind, path)
    try:
        with pytest.warns(SessionFileWarning, match=r"evil\.jsonl"):
            found = list_all_sessions(str(tmp_path))
        assert [s.path for s in found] == [good]
        with pytest.warns(SessionFileWarning, match=r"evil\.jsonl"):
            assert [s.path for s in list_sessions(CWD, str(tmp_path))] == [good]
        with pytest.warns(SessionFileWarning, match=r"evil\.jsonl"):
            assert find_most_recent_session(str(tmp_path)) == good
        with pytest.warns(SessionFileWarning, match=r"evil\.jsonl"):
            sm = SessionManager.continue_recent(CWD, str(tmp_path))
        assert sm.get_session_file() == good
    finally:
        if keep is not None:
            keep.close()


def test_append_refuses_a_session_file_swapped_for_a_fifo(tmp_path: Path) -> None:
    good = _good_session(tmp_path)
    sm = SessionManager.open(good)
    before = sm.get_entries()
    os.unlink(good)
    os.mkfifo(good)
    with pytest.raises(SessionFileTypeError, match="FIFO"):
        sm.append_message(_user("lost?"))
    assert sm.get_entries() == before  # nothing in memory that is not in a file
    assert stat.S_ISFIFO(os.stat(good).st_mode)


# ---------------------------------------------------------------------------------------------
# symlinks

V2_TEXT = (
    '{"type":"session","version":2,"id":"s2","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
    '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"hookMessage","content":"x","timestamp":1}}\n'
)


def test_migration_through_a_symlink_keeps_the_link_and_writes_its_target(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    target = store / "real.jsonl"
    target.write_text(V2_TEXT)
    link_dir = tmp_path / "sessions"
    link_dir.mkdir()
    link = link_dir / "linked.jsonl"
    link.symlink_to(target)

    sm = SessionManager.open(str(link))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text().splitlines()[0])["version"] == 3
    assert json.loads(target.read_text().splitlines()[1])["message"]["role"] == "custom"
    assert sm.backup_path is not None
    bak = Path(sm.backup_path)
    assert not bak.is_symlink() and bak.is_file()
    assert bak.read_text() == V2_TEXT  # the original bytes, not the new content through a link
    # and appends still go through the link
    sm.append_message(_user("more"))
    assert link.is_symlink() and "more" in target.read_text()
    assert SessionManager.open(str(link)).get_entries() == sm.get_entries()


def test_empty_symlinked_file_gets_its_header_in_the_target(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    SessionManager.open(str(link))
    assert link.is_symlink()
    assert json.loads(target.read_text())["type"] == "session"


# ---------------------------------------------------------------------------------------------
# failed writes (real faults in a subprocess)

_CHILD = r"""
import json, os, resource, signal, sys
from pi_nb import SessionManager
from pi_nb.errors import SessionWriteError

def user(t): return {"role": "user", "content": t, "timestamp": 1}
def assistant(t):
    return {"role": "assistant", "content": [{"type": "text", "text": t}], "provider": "p", "model": "m",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop", "timestamp": 2}

mode, path = sys.argv[1], sys.argv[2]
out = {}
def agree(sm, file_path):
    again = SessionManager.open(file_path)
    return again.get_entries() == sm.get_entries() and (
        again.build_session_context().messages == sm.build_session_context().messages)

if mode == "fsize-append":
    sm = SessionManager.open(path)
    before = open(path, "rb").read()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 100, hard))
    try:
        sm.append_message(assistant("x" * 20000))
        out["raised"] = None
    except SessionWriteError as exc:
        out["raised"] = str(exc)
        out["errno"] = exc.errno
    out["file_unchanged"] = open(path, "rb").read() == before
    out["agree"] = agree(sm, path)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    sm.append_message(user("after"))
    out["agree_after"] = agree(sm, path)
elif mode == "fsize-create":
    sm = SessionManager.create("/tmp/x", path)
    sm.append_message(user("first"))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300, hard))
    try:
        sm.append_message(assistant("y" * 20000))
        out["raised"] = None
    except SessionWriteError as exc:
        out["raised"] = str(exc)
    out["files"] = sorted(os.listdir(path))
    out["entries"] = len(sm.get_entries())
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    sm.append_message(assistant("short"))
    out["agree_after"] = agree(sm, sm.get_session_file())
    out["entries_after"] = len(sm.get_entries())
elif mode == "readonly":
    sm = SessionManager.open(path)
    before = open(path, "rb").read()
    try:
        sm.append_message(user("denied"))
        out["raised"] = None
    except SessionWriteError as exc:
        out["raised"] = str(exc)
        out["is_oserror"] = isinstance(exc, OSError)
    out["file_unchanged"] = open(path, "rb").read() == before
    out["agree"] = agree(sm, path)
print(json.dumps(out))
"""


def _child(mode: str, path: str, prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", _CHILD, mode, path],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_disk_full_append_raises_and_memory_equals_file(tmp_path: Path) -> None:
    good = _good_session(tmp_path)
    out = _child("fsize-append", good)
    assert out["raised"] and "too large" in out["raised"] and good in out["raised"]
    assert out["errno"] == 27  # EFBIG
    assert out["file_unchanged"] is True  # the partial line was cut back off
    assert out["agree"] is True and out["agree_after"] is True


def test_disk_full_on_the_first_write_leaves_no_file_and_nothing_in_memory(tmp_path: Path) -> None:
    out = _child("fsize-create", str(tmp_path))
    assert out["raised"] and "Nothing of it was kept" in out["raised"]
    assert out["files"] == []  # no session file, no temp file
    assert out["entries"] == 1  # the user message only; the assistant message is not in memory
    assert out["agree_after"] is True and out["entries_after"] == 2


def test_permission_denied_append_raises_and_memory_equals_file(tmp_path: Path) -> None:
    good = _good_session(tmp_path)
    os.chmod(good, 0o444)
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:  # root writes anything: the child runs without the override capabilities
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot take the right to write away")
        prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner")
    out = _child("readonly", good, prefix)
    assert out["raised"] and "permission denied" in out["raised"] and good in out["raised"]
    assert out["is_oserror"] is True
    assert out["file_unchanged"] is True and out["agree"] is True


def test_write_error_is_a_session_error_and_an_oserror() -> None:
    exc = SessionWriteError("boom", "/x", 28)
    assert isinstance(exc, SessionError) and isinstance(exc, OSError)
    assert exc.errno == 28 and exc.path == "/x" and str(exc) == "boom"


# ---------------------------------------------------------------------------------------------
# damaged trees, against what Pi 0.85.0 did on the same bytes

REPAIRED = {  # the longest path without a repeat, from the leaf
    "duplicate_id_closing_a_loop": ["two", "dup-a"],
    "self_parent_leaf": ["self"],
    "cycle_of_three": ["one", "two", "three"],
}


def test_golden_has_the_cases() -> None:
    names = {c["name"] for c in GOLDEN}
    assert {"leaf_without_id", "leaf_with_null_id", "duplicate_id_no_loop", *REPAIRED} <= names
    assert all(c["pi"].get("error") == "out of memory" for c in GOLDEN if c["name"] in REPAIRED)


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_damaged_tree_opens_like_pi_or_fails_by_file_and_line(case: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / f"{case['name']}.jsonl"
    path.write_text(case["text"])
    pi = case["pi"]
    if "error" not in pi:
        sm = SessionManager.open(str(path))
        expected_leaf = None if pi["leafId"] == "<undefined>" else pi["leafId"]
        assert sm.get_leaf_id() == expected_leaf
        assert _context_texts(sm) == pi["context"]
        sm.append_message(_user("next"))
        last = json.loads(path.read_text().splitlines()[-1])
        assert list(last) == pi["appendedKeys"]
        assert last.get("parentId", "<absent>") == pi["appendedParentId"]
        assert _context_texts(sm) == pi["contextAfterAppend"]
        if case["name"].startswith("duplicate"):
            assert any("duplicate id" in p.reason for p in sm.load_problems)
        return
    # Pi runs out of memory on these; pi_nb names the file and the lines, then opens on request
    before = path.read_bytes()
    with pytest.raises(EntryCycleError) as info:
        SessionManager.open(str(path))
    assert str(path) in str(info.value) and "repair=True" in str(info.value)
    assert info.value.path == str(path) and info.value.lines
    assert all(f"{n}" in str(info.value) for n in info.value.lines)
    assert path.read_bytes() == before
    sm = SessionManager.open(str(path), repair=True)
    assert _context_texts(sm) == REPAIRED[case["name"]]
    repaired = [p for p in sm.load_problems if p.reason.startswith("repaired")]
    assert repaired and all(p.line_number in info.value.lines for p in repaired)
    assert path.read_bytes() == before  # repair is in memory only
    assert len(sm.get_entries()) == len(case["text"].splitlines()) - 1  # nothing dropped
    sm.append_message(_user("next"))
    assert _context_texts(sm) == [*REPAIRED[case["name"]], "next"]


def test_cycle_off_the_leaf_path_opens_and_names_lines_when_reached(tmp_path: Path) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/t",
    }
    rows = [
        header,
        {
            "type": "custom",
            "customType": "x",
            "id": "x",
            "parentId": "y",
            "timestamp": "2026-01-01T00:00:01Z",
        },
        {
            "type": "custom",
            "customType": "y",
            "id": "y",
            "parentId": "x",
            "timestamp": "2026-01-01T00:00:01Z",
        },
        {
            "type": "message",
            "id": "m",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:02Z",
            "message": _user("ok"),
        },
    ]
    path = tmp_path / "off.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sm = SessionManager.open(str(path))  # the leaf's path is fine, as in Pi
    assert _context_texts(sm) == ["ok"]
    sm.branch("x")
    with pytest.raises(EntryCycleError) as info:
        sm.build_session_context()
    assert str(path) in str(info.value) and info.value.lines == (2, 3)
    sm.branch("m")
    with pytest.raises(EntryCycleError) as from_y:
        sm.get_branch("y")  # not the leaf: the error still names the file and the loop's lines
    assert str(path) in str(from_y.value) and from_y.value.lines == (2, 3)
    repaired = SessionManager.open(str(path), repair=True)
    assert sorted(p.line_number for p in repaired.load_problems) == [3]  # y -> x closes it
    repaired.branch("x")
    assert repaired.build_session_context().messages == []


def test_line_numbers_count_skipped_lines(tmp_path: Path) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/t",
    }
    loop = {
        "type": "message",
        "id": "b",
        "parentId": "b",
        "timestamp": "2026-01-01T00:00:02Z",
        "message": _user("b"),
    }
    path = tmp_path / "skips.jsonl"
    path.write_text(json.dumps(header) + "\n\nnot json\n" + json.dumps(loop) + "\n")
    with pytest.raises(EntryCycleError) as info:
        SessionManager.open(str(path))
    assert info.value.lines == (4,)


def test_strict_open_refuses_duplicate_ids(tmp_path: Path) -> None:
    case = next(c for c in GOLDEN if c["name"] == "duplicate_id_no_loop")
    path = tmp_path / "dup.jsonl"
    path.write_text(case["text"])
    from pi_nb.errors import SessionFileCorruptError

    with pytest.raises(SessionFileCorruptError) as info:
        SessionManager.open(str(path), strict=True)
    assert info.value.problems[0][0] == 5


def test_no_warning_for_ordinary_listing(tmp_path: Path) -> None:
    good = _good_session(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [s.path for s in list_all_sessions(str(tmp_path))] == [good]


def test_repair_of_an_old_format_file_writes_the_migration_not_the_repair(tmp_path: Path) -> None:
    v2 = V2_TEXT + (
        '{"type":"message","id":"b","parentId":"b","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"user","content":"loop","timestamp":2}}\n'
    )
    path = tmp_path / "old.jsonl"
    path.write_text(v2)
    with pytest.raises(EntryCycleError):
        SessionManager.open(str(path))
    assert path.read_text() == v2  # refused before the migration was written
    sm = SessionManager.open(str(path), repair=True)
    assert _context_texts(sm) == ["loop"]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0]["version"] == 3 and rows[2]["parentId"] == "b"  # the loop is still in the file
    assert sm.backup_path is not None and Path(sm.backup_path).read_text() == v2
