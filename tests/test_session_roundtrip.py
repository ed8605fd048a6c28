"""Round trips against the real Pi 0.85.0 (golden files from tests/golden/make_session_roundtrip.py).

* ``session_roundtrip_ops.json``: the real ``SessionManager`` ran scripted operations with pinned
  randomness and clock; pi_nb replays them and must write the same bytes under the same names,
  return the same ids and error texts, and end in the same state (entries, branch, context entries,
  context, tree, labels, name).
* ``session_roundtrip_files.json``: files written by pi_nb, files written by Pi, the oracle's
  fixture and hand-made odd files, as the real Pi saw them on open (``SessionManager.inspect``)
  and at every leaf (``buildSessionContext``); pi_nb opens the same bytes and must see the same.
* ``session_roundtrip_pure.json``: ``parseSessionEntries`` and ``migrateSessionEntries``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_nb import (
    EntryCycleError,
    InvalidSessionFileError,
    SessionManager,
    migrate_session_entries,
    parse_session_entries,
)
from pi_nb._js import js_stringify

GOLDEN = Path(__file__).parent / "golden"
REPO_ROOT = Path(__file__).resolve().parents[1]
RECORDED_REPO_ROOT = "/work/main"  # where tests/golden/make_session_roundtrip.py ran (the process cwd)
sys.path.insert(0, str(GOLDEN))
import make_session_roundtrip as rt  # noqa: E402

OPS = json.loads((GOLDEN / "session_roundtrip_ops.json").read_text(encoding="utf-8"))
FILES = json.loads((GOLDEN / "session_roundtrip_files.json").read_text(encoding="utf-8"))
PURE = json.loads((GOLDEN / "session_roundtrip_pure.json").read_text(encoding="utf-8"))
PI_NB_FILES = {c["source"]: c["text"] for c in FILES if c["source"].startswith("pi_nb:")}


def ordered(value: Any) -> str:
    """Compare with key order: JSON.stringify's text of the value."""
    return js_stringify(value)


# ---------------------------------------------------------------------------------------------
# scripted operations


@pytest.mark.parametrize("case", OPS, ids=[c["scenario"]["name"] for c in OPS])
def test_replay_writes_what_pi_writes(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario, pi = case["scenario"], case["pi"]
    # Scenarios that open a file without a cwd record the process cwd of the recording run (the repo
    # root there); the replay runs from this checkout's root, wherever it is cloned.
    monkeypatch.chdir(REPO_ROOT)
    pi = json.loads(json.dumps(pi).replace(RECORDED_REPO_ROOT, str(REPO_ROOT)))
    mine = rt.replay(scenario, pi.get("sessionIds", []), str(tmp_path))
    backups = mine.pop("backups", {})
    mine.pop("loadProblems", None)
    # the same files, byte for byte, and the same everything else
    assert mine.get("files") == pi.get("files")
    assert mine == pi
    # key order too (dict equality ignores it; the file bytes above do not)
    if "final" in pi:
        assert ordered(mine["final"]["entries"]) == ordered(pi["final"]["entries"])
        assert ordered(mine["final"]["tree"]) == ordered(pi["final"]["tree"])
    # the files Pi read in session_roundtrip_files.json are the ones pi_nb still writes
    for name, text in mine.get("files", {}).items():
        key = f"pi_nb:{scenario['name']}/{name}"
        if key in PI_NB_FILES:
            assert PI_NB_FILES[key].replace(RECORDED_REPO_ROOT, str(REPO_ROOT)) == text
    # a rewrite (migration) keeps the original beside the file
    for name, original in scenario.get("files", {}).items():
        if f"{name}.bak" in backups:
            assert backups[f"{name}.bak"] == original


def test_ops_golden_covers_every_append_kind() -> None:
    calls = {step["call"][0] for c in OPS for step in c["pi"]["steps"]}
    assert {
        "appendMessage",
        "appendThinkingLevelChange",
        "appendModelChange",
        "appendCompaction",
        "appendCustomEntry",
        "appendCustomMessageEntry",
        "appendLabelChange",
        "appendSessionInfo",
        "branch",
        "resetLeaf",
        "branchWithSummary",
        "createBranchedSession",
    } <= calls


def test_migrated_file_keeps_backup_and_problems_are_reported(tmp_path: Path) -> None:
    case = next(c for c in OPS if c["scenario"]["name"] == "open_v1_migrates")
    mine = rt.replay(case["scenario"], case["pi"]["sessionIds"], str(tmp_path))
    assert mine["backups"] == {"old.jsonl.bak": rt.V1_FILE}
    messy = next(c for c in OPS if c["scenario"]["name"] == "open_malformed_and_blank_lines")
    mine = rt.replay(messy["scenario"], messy["pi"]["sessionIds"], str(tmp_path / "messy"))
    assert [(p["lineNumber"], p["rawPrefix"]) for p in mine["loadProblems"]] == [(5, "not json")]


# ---------------------------------------------------------------------------------------------
# files opened by the real Pi


def _open_like_oracle(case: dict[str, Any], tmp_path: Path) -> tuple[SessionManager, bytes, bytes]:
    path = tmp_path / os.path.basename(case["name"])
    rt.write_text_bytes(str(path), case["text"])
    before = path.read_bytes()
    sm = SessionManager.open(str(path))
    return sm, before, path.read_bytes()


@pytest.mark.parametrize("case", FILES, ids=[c["source"] for c in FILES])
def test_file_opens_like_in_pi(case: dict[str, Any], tmp_path: Path) -> None:
    inspect = case["inspect"]
    if not inspect["ok"]:
        if "not a valid pi session" in inspect["error"]:
            with pytest.raises(InvalidSessionFileError, match="Session file is not a valid pi session: "):
                _open_like_oracle(case, tmp_path)
            return
        assert inspect["errorName"] == "RangeError"  # a parentId loop on the leaf's path
        sm, _, _ = _open_like_oracle(case, tmp_path)
        with pytest.raises(EntryCycleError):
            sm.get_branch()
        return
    sm, before, after = _open_like_oracle(case, tmp_path)
    snap = rt._snapshot(sm)
    mine = {
        "header": snap["header"],
        "sessionId": snap["sessionId"],
        "cwd": snap["cwd"],
        "sessionName": snap["sessionName"],
        "leafId": snap["leafId"],
        "entries": snap["entries"],
        "branch": snap["branch"],
        "contextEntries": snap["contextEntries"],
        "tree": snap["tree"],
        "fileChanged": before != after,
        "fileTextAfterOpen": after.decode("utf-8", "replace"),  # readFileSync(path, "utf8")
    }
    mine = json.loads(json.dumps(rt._jsonish(mine)).replace(str(tmp_path), rt.DIR))
    expected = dict(inspect["result"])
    expected.setdefault("sessionName", None)  # undefined in Pi, left out of its JSON
    assert mine == expected
    assert ordered(mine["tree"]) == ordered(expected["tree"])

    for leaf, answer in case["contexts"].items():
        if leaf == "<null>":
            sm.reset_leaf()
        else:
            sm.branch(leaf)
        if not answer["ok"]:
            assert answer["errorName"] == "RangeError"
            with pytest.raises(EntryCycleError):
                sm.build_session_context()
            continue
        got = rt._jsonish({**sm.build_session_context().to_dict(), "leafId": sm.get_leaf_id()})
        want = {k: v for k, v in answer["result"].items() if k not in ("fileChanged", "fileTextAfterOpen")}
        assert got == want, leaf


def test_files_golden_has_every_source_kind() -> None:
    kinds = {c["source"].split(":")[0] for c in FILES}
    assert kinds == {"pi_nb", "pi", "extra"}
    assert any(c["source"] == "extra:oracle_fixture" for c in FILES)
    assert sum(len(c["contexts"]) for c in FILES) > 300


# ---------------------------------------------------------------------------------------------
# pure functions


def _canonical_ids(entries: list[Any]) -> str:
    """Text of the entries with every 8-hex id Pi or pi_nb drew replaced by its first position."""
    text = js_stringify(entries)
    drawn: dict[str, str] = {}
    for e in entries:
        if isinstance(e, dict) and isinstance(e.get("id"), str) and re.fullmatch(r"[0-9a-f]{8}", e["id"]):
            drawn.setdefault(e["id"], f"ID{len(drawn)}")
    for k, v in drawn.items():
        text = text.replace(f'"{k}"', f'"{v}"')
    return text


@pytest.mark.parametrize(
    "case", [c for c in PURE if c["kind"] == "parse"], ids=lambda c: repr(c["content"][:30])
)
def test_parse_session_entries(case: dict[str, Any]) -> None:
    got = parse_session_entries(case["content"])
    assert json.loads(js_stringify(got)) == case["response"]["result"]


@pytest.mark.parametrize(
    "case", [c for c in PURE if c["kind"] == "migrate"], ids=lambda c: js_stringify(c["entries"])[:40]
)
def test_migrate_session_entries(case: dict[str, Any]) -> None:
    entries = json.loads(json.dumps(case["entries"]))
    migrate_session_entries(entries)
    # v1 files get random ids: compare with each drawn id replaced by its position
    assert _canonical_ids(entries) == _canonical_ids(case["response"]["result"])


@pytest.mark.parametrize(
    "case", [c for c in PURE if c["kind"] == "migrate_v1"], ids=lambda c: js_stringify(c["entries"])[:40]
)
def test_migrate_v1_assigns_ids_and_chain_like_pi(case: dict[str, Any]) -> None:
    entries = json.loads(json.dumps(case["entries"]))
    assert migrate_session_entries(entries) is True
    assert _canonical_ids(entries) == _canonical_ids(case["response"]["result"])
    ids = [e["id"] for e in entries if e.get("type") != "session"]
    assert len(set(ids)) == len(ids)


# ---------------------------------------------------------------------------------------------
# live differential check (needs the oracle; the goldens above are the coverage without it)


def _oracle_ready() -> bool:
    sys.path.insert(0, str(rt.ORACLE_DIR))
    try:
        from oracle_client import oracle_available  # type: ignore[import-not-found]
    except ImportError:
        return False
    return bool(oracle_available())


def _random_scenario(seed: int) -> dict[str, Any]:
    import random

    rng = random.Random(seed)
    refs: list[str] = []
    ops: list[dict[str, Any]] = []

    def some_ref() -> Any:
        return rt.ref(rng.choice(refs)) if refs and rng.random() < 0.9 else "missing-id"

    for i in range(rng.randint(5, 40)):
        name = f"r{i}"
        kind = rng.random()
        if kind < 0.3:
            ops.append(rt.op("appendMessage", rt.user(f"u{i} " + "é😀" * rng.randint(0, 2), i), as_=name))
        elif kind < 0.5:
            ops.append(rt.op("appendMessage", rt.assistant(f"a{i}", i, total=1000 + i), as_=name))
        elif kind < 0.55:
            ops.append(
                rt.op(
                    "appendCustomEntry", "ext", rng.choice([rt.UNDEF, None, {"i": i, "f": i / 7}]), as_=name
                )
            )
        elif kind < 0.6:
            ops.append(
                rt.op(
                    "appendLabelChange", some_ref(), rng.choice(["L", "", rt.UNDEF, f"label {i}"]), as_=name
                )
            )
        elif kind < 0.68:
            ops.append(rt.op("branch", some_ref()))
            continue
        elif kind < 0.71:
            ops.append(rt.op("resetLeaf"))
            continue
        elif kind < 0.77:
            ops.append(
                rt.op(
                    "branchWithSummary",
                    rng.choice([some_ref(), None]),
                    rng.choice(["", f"summary {i}"]),
                    as_=name,
                )
            )
        elif kind < 0.83:
            ops.append(
                rt.op(
                    "appendCompaction",
                    f"compacted {i}",
                    some_ref(),
                    100 * i,
                    {"k": i},
                    rng.choice([True, False]),
                    as_=name,
                )
            )
        elif kind < 0.87:
            ops.append(rt.op("appendModelChange", "openai", f"gpt-{i}", as_=name))
        elif kind < 0.9:
            ops.append(rt.op("appendThinkingLevelChange", rng.choice(["low", "high"]), as_=name))
        elif kind < 0.93:
            ops.append(rt.op("appendSessionInfo", f" name\n{i} ", as_=name))
        elif kind < 0.97:
            ops.append(
                rt.op("appendCustomMessageEntry", "note", f"note {i}", rng.choice([True, False]), as_=name)
            )
        else:
            ops.append(rt.op("createBranchedSession", some_ref()))
            continue
        refs.append(name)
    return {
        "name": f"random_{seed}",
        "start": {"kind": "create", "cwd": rt.CWD},
        "clockStep": rng.choice([0, 250, 1000]),
        "ops": ops,
    }


@pytest.mark.oracle
@pytest.mark.skipif(not _oracle_ready(), reason="pi-oracle not installed")
def test_random_operation_sequences_against_live_pi(tmp_path: Path) -> None:
    scenarios = [_random_scenario(seed) for seed in range(25)]
    pi_results = rt.run_pi_ops(scenarios)
    for i, (sc, pi) in enumerate(zip(scenarios, pi_results, strict=True)):
        base = tmp_path / str(i)
        base.mkdir()
        mine = rt.replay(json.loads(json.dumps(sc)), pi.get("sessionIds", []), str(base))
        mine.pop("backups", None)
        mine.pop("loadProblems", None)
        assert mine == pi, sc["name"]
