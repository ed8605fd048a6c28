"""Golden file for the what-if replay: simulated compactions checked by the real Pi 0.85.0.

Run by hand when the cases change (needs ../shared/pi-oracle installed):

    .venv/bin/python tests/golden/make_replay.py

The replay (pi_nb/replay.py) is beyond Pi, but every decision it simulates is made of Pi's
functions. For each case (a committed session file and a policy other than the one it was
recorded with) this records, in ``tests/golden/replay.json``:

* for every simulated compaction, the simulated branch right before it and Pi's
  ``prepareCompaction`` of that branch with the policy's settings (where Pi cuts, ``tokensBefore``,
  the split turn, what it summarises);
* Pi's ``buildSessionContext`` and ``estimateContextTokens`` of the whole simulated path;
* for every checkpoint where the threshold was crossed but nothing could be cut, Pi's
  ``prepareCompaction`` of the branch there (``null``).

Branches are stored compactly: an item ``{"ref": id}`` is the entry of the case's session file
with that id, unchanged except ``parentId`` = the previous item's id (the simulated path is a
chain); anything else (a simulated compaction, an assistant whose usage was rebased) is stored
whole. :func:`expand_branch` rebuilds what Pi was sent, byte for byte.

The module is imported by tests/test_replay.py for the cases, the scenario prompts and the
project builder; the oracle is imported only by :func:`main`.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pi_nb._js import js_stringify  # noqa: E402
from pi_nb.what_if import ReplayResult, replay  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"

# --------------------------------------------------------------------------------------------
# the recording scenarios of tests/test_replay.py (a project with notes and a big file)

NOTE_DAYS = 12


def build_project(root: Path) -> None:
    """Notes to read and grep (one per day) and a 3,000-line file that cannot fit a small window."""
    notes = root / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for day in range(1, NOTE_DAYS + 1):
        (notes / f"day{day}.txt").write_text(
            "".join(f"day {day} note {i}: measured {day * i} units; status ok\n" for i in range(1, 31)),
            "utf-8",
        )
    (root / "big.txt").write_text("".join(f"{i} ünïcødé ✓\n" for i in range(1, 3001)), "utf-8")


def note_prompt(day: int) -> str:
    return f"read notes/day{day}.txt and run `grep -c ok notes/day{day}.txt`"


def chat_prompt(k: int) -> str:
    sentence = f"Fact number {k} is that the meeting about topic {k} moved to room {100 + k} on a rainy day. "
    return f"Please keep this in mind. {sentence * 16}".strip()


SCENARIO_PROMPTS: dict[str, list[str]] = {
    "between_turns": [note_prompt(d) for d in range(1, NOTE_DAYS + 1)],
    "after_run": [chat_prompt(k) for k in range(1, 19)],
    "overflow": [*(note_prompt(d) for d in range(1, 4)), "read big.txt and run `seq 5000`", note_prompt(4)],
}
SCENARIO_CHECKPOINT = {"between_turns": "between_turns", "after_run": "after_run", "overflow": "after_run"}

# --------------------------------------------------------------------------------------------
# the golden cases: committed session files under other policies

FILES = {
    "between": "tests/fixtures/e2e/compaction_between_turns.jsonl",
    "after": "tests/fixtures/e2e/compaction_after_run.jsonl",
    "overflow": "tests/fixtures/e2e/compaction_overflow.jsonl",
    "pre": "tests/fixtures/e2e/compaction_pre_prompt.jsonl",
    "tools": "tests/fixtures/e2e/tools_session.jsonl",
    "pi": "tests/fixtures/pi_session.jsonl",
}

CASES: list[dict[str, Any]] = [
    # (name, file, policy); "windows" gives one window per model_change, in file order
    {"name": "between, smaller keep", "file": "between", "policy": {"contextWindow": 8000, "reserveTokens": 2000, "keepRecentTokens": 800}},
    {"name": "between, tight window", "file": "between", "policy": {"contextWindow": 5500, "reserveTokens": 1500, "keepRecentTokens": 1000}},
    {"name": "between, larger window", "file": "between", "policy": {"contextWindow": 12000, "reserveTokens": 2000, "keepRecentTokens": 3000}},
    {"name": "between, recorded usage", "file": "between", "policy": {"contextWindow": 5500, "reserveTokens": 1500, "keepRecentTokens": 1000, "usage": "recorded"}},
    {"name": "after, smaller window", "file": "after", "policy": {"contextWindow": 6000, "reserveTokens": 2000, "keepRecentTokens": 1500}},
    {"name": "after, bigger reserve", "file": "after", "policy": {"contextWindow": 8000, "reserveTokens": 4000, "keepRecentTokens": 500, "summaryTokens": 300}},
    {"name": "after, larger window", "file": "after", "policy": {"contextWindow": 9000, "reserveTokens": 2000, "keepRecentTokens": 2500}},
    {"name": "overflow, same window, small keep", "file": "overflow", "policy": {"contextWindow": 8000, "reserveTokens": 2000, "keepRecentTokens": 500}},
    {"name": "overflow, bigger window", "file": "overflow", "policy": {"contextWindow": 20000, "reserveTokens": 2000, "keepRecentTokens": 2000}},
    {"name": "overflow, small window", "file": "overflow", "policy": {"contextWindow": 3500, "reserveTokens": 1000, "keepRecentTokens": 800}},
    {"name": "pre, windows per model", "file": "pre", "policy": {"windows": [128000, 7000], "reserveTokens": 2000, "keepRecentTokens": 1500}},
    {"name": "pre, one small window", "file": "pre", "policy": {"contextWindow": 7000, "reserveTokens": 2000, "keepRecentTokens": 1500}},
    {"name": "tools, small window", "file": "tools", "policy": {"contextWindow": 30000, "reserveTokens": 4000, "keepRecentTokens": 5000}},
    {"name": "pi fixture, tiny window", "file": "pi", "policy": {"contextWindow": 60, "reserveTokens": 10, "keepRecentTokens": 10}},
]


@cache
def _file_entries(key: str) -> tuple[dict[str, Any], ...]:
    path = ROOT / FILES[key]
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return tuple(e for e in lines if e.get("type") != "session")


def run_case(case: dict[str, Any]) -> ReplayResult:
    """The replay a case describes (the tests run it again and compare with Pi's answers)."""
    policy = case["policy"]
    window: Any = policy.get("contextWindow")
    if "windows" in policy:
        changes = [e["id"] for e in _file_entries(case["file"]) if e.get("type") == "model_change"]
        table = dict(zip(changes, policy["windows"], strict=True))

        def window(change: dict[str, Any] | None) -> int:
            return int(policy["windows"][0] if change is None else table[change["id"]])

    return replay(
        ROOT / FILES[case["file"]],
        context_window=window,
        reserve_tokens=policy["reserveTokens"],
        keep_recent_tokens=policy["keepRecentTokens"],
        summary_tokens=policy.get("summaryTokens"),
        usage=policy.get("usage", "rebase"),
    )


def _jsonish(value: Any) -> Any:
    return json.loads(js_stringify(value))


def compact_branch(branch: list[dict[str, Any]], case: dict[str, Any]) -> list[Any]:
    by_id = {e["id"]: e for e in _file_entries(case["file"])}
    out: list[Any] = []
    prev = None
    for entry in branch:
        original = by_id.get(entry["id"])
        if original is not None and _jsonish({**original, "parentId": prev}) == _jsonish(entry):
            out.append({"ref": entry["id"]})
        else:
            out.append(_jsonish(entry))
        prev = entry["id"]
    return out


def expand_branch(items: list[Any], case: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {e["id"]: e for e in _file_entries(case["file"])}
    out: list[dict[str, Any]] = []
    prev = None
    for item in items:
        entry = {**by_id[item["ref"]], "parentId": prev} if set(item) == {"ref"} else item
        out.append(_jsonish(entry))
        prev = entry["id"]
    return out


def main() -> None:
    sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
    from oracle_client import Oracle

    out_cases = []
    with Oracle() as o:
        for case in CASES:
            result = run_case(case)
            entries = [dict(e) for e in result.entries]
            ids = [e["id"] for e in entries]
            settings = {
                "enabled": True,
                "reserveTokens": case["policy"]["reserveTokens"],
                "keepRecentTokens": case["policy"]["keepRecentTokens"],
            }
            compactions = []
            for comp in result.compactions:
                branch = _jsonish(entries[: ids.index(comp.id)])
                answer = o.request("prepareCompaction", {"entries": branch, "settings": settings})
                compactions.append({"id": comp.id, "branch": compact_branch(branch, case), "prepareCompaction": answer})
            skipped = []
            for d in result.decisions:
                if d.outcome != "nothing_to_compact":
                    continue
                cut = d.path_length
                branch = _jsonish(entries[:cut])
                answer = o.request("prepareCompaction", {"entries": branch, "settings": settings})
                skipped.append(
                    {"position": d.position, "branch": compact_branch(branch, case), "prepareCompaction": answer}
                )
            context = o.request("buildSessionContext", {"entries": _jsonish(entries)})
            estimate = o.request("estimateContextTokens", {"messages": context["result"]["messages"]})
            out_cases.append(
                {
                    **case,
                    "expectCompactions": len(result.compactions),
                    "compactions": compactions,
                    "skipped": skipped,
                    "context": context,
                    "estimate": estimate,
                }
            )
            print(case["name"], [(c.checkpoint, c.reason, c.summary_source) for c in result.compactions])
    doc = {
        "source": "Pi 0.85.0 via pi-oracle (prepareCompaction, buildSessionContext, estimateContextTokens)",
        "generator": "tests/golden/make_replay.py",
        "cases": out_cases,
    }
    target = GOLDEN / "replay.json"
    target.write_text(
        "{\n"
        + f' "source": {json.dumps(doc["source"])},\n "generator": {json.dumps(doc["generator"])},\n "cases": [\n'
        + ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in out_cases)
        + "\n ]\n}\n",
        encoding="utf-8",
    )
    print(f"wrote {target} ({target.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
