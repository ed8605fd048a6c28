"""Golden parity with Pi 0.85.0 over 110 generated session trees (no oracle needed).

Replays tests/golden/branch_summary_trees.jsonl (written by tests/golden/make_branch_summary.py):
``collectEntriesForBranchSummary`` for many (old leaf, target) pairs and ``prepareBranchEntries``
with several budgets per collection, including both sides of Pi's 90 % rule for summaries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_nb.compaction import collect_entries_for_branch_summary, prepare_branch_entries
from pi_nb.session.context import build_entry_index, get_branch_entries

GOLDEN = Path(__file__).parent / "golden" / "branch_summary_trees.jsonl"


def _load() -> list[dict[str, Any]]:
    lines = GOLDEN.read_text(encoding="utf-8").split("\n")
    assert json.loads(lines[0])["source"] == "Pi 0.85.0 via pi-oracle"
    return [json.loads(line) for line in lines[1:] if line]


RECORDS = _load()


class EntryTree:
    """A read-only session over an entry list: Pi's ``SessionManager.inMemory(cwd, _, entries)``.

    The leaf is the last entry; ``get_branch``/``get_entry`` are the session module's functions.
    """

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.index = build_entry_index(entries)
        self.leaf = entries[-1]["id"] if entries else None

    def get_branch(self, from_id: str | None = None) -> Sequence[Mapping[str, Any]]:
        return get_branch_entries(self.entries, from_id if from_id is not None else self.leaf, self.index)

    def get_entry(self, id: str) -> Mapping[str, Any] | None:
        return self.index.get(id)


def _expand(messages: list[Any], entries: list[dict[str, Any]], table: list[Any]) -> list[Any]:
    return [entries[m["$entry"]]["message"] if "$entry" in m else table[m["$m"]] for m in messages]


def test_golden_file_covers_the_brief() -> None:
    assert len(RECORDS) >= 100
    budgets = [
        c["args"].get("tokenBudget")
        for rec in RECORDS
        for c in rec["calls"]
        if c["fn"] == "prepareBranchEntries"
    ]
    assert {None, 0, 1, -5, 10**9} <= set(budgets)
    assert len(set(budgets)) > 200
    collected = [c for rec in RECORDS for c in rec["calls"] if c["fn"] == "collectEntriesForBranchSummary"]
    assert any(c["args"].get("oldLeafId", "") is None for c in collected)
    assert any(c["response"]["result"]["commonAncestorId"] is None for c in collected)
    summaries = {
        rec["entries"][ref["$tree"]]["type"]
        for rec in RECORDS
        for c in rec["calls"]
        if c["fn"] == "collectEntriesForBranchSummary"
        for ref in c["response"]["result"]["entries"]
    }
    assert {"compaction", "branch_summary", "message"} <= summaries


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["name"])
def test_matches_pi(record: dict[str, Any]) -> None:
    entries = record["entries"]
    table = record["messages"]
    tree = EntryTree(entries)
    position = {id(e): k for k, e in enumerate(entries)}
    for call in record["calls"]:
        fn, args, response = call["fn"], call["args"], call["response"]
        assert response["ok"], response
        want = response["result"]
        if fn == "collectEntriesForBranchSummary":
            old_leaf = args.get("oldLeafId", tree.leaf)
            got = collect_entries_for_branch_summary(tree, old_leaf, args["targetId"])
            assert {
                "entries": [{"$tree": position[id(e)]} for e in got.entries],
                "commonAncestorId": got.common_ancestor_id,
                "oldLeafId": old_leaf,
            } == want, f"{record['name']}: {args}"
        else:
            refs = record["calls"][args["entries"]["$collected"]]["response"]["result"]["entries"]
            branch = [entries[r["$tree"]] for r in refs]
            prep = prepare_branch_entries(branch, args.get("tokenBudget", 0))
            expected = {**want, "messages": _expand(want["messages"], entries, table)}
            assert prep.to_dict() == expected, f"{record['name']}: budget {args.get('tokenBudget')}"
