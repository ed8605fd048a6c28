"""Differential checks against the real Pi 0.85.0 on fresh random sessions (needs the pi-oracle).

Skipped when the oracle is not installed; the committed golden files (test_compaction_golden.py,
test_branch_summary_golden.py) cover the same functions without it. Seeds differ from the golden
generators', so every run of this file checks sessions the golden files do not contain.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
sys.path.insert(0, str(ROOT / "tests" / "golden"))

try:
    from oracle_client import Oracle, oracle_available
except ImportError:  # pragma: no cover - the shared folder is absent
    oracle_available = None  # type: ignore[assignment]

from make_branch_summary import leaves, make_tree  # noqa: E402
from make_compaction import make_path  # noqa: E402

from pi_nb.compaction import (  # noqa: E402
    CompactionSettings,
    collect_entries_for_branch_summary,
    compute_file_lists,
    create_file_ops,
    extract_file_ops_from_message,
    find_cut_point,
    find_valid_cut_points,
    prepare_branch_entries,
    prepare_compaction,
    serialize_conversation,
)
from pi_nb.messages import convert_to_llm  # noqa: E402
from pi_nb.session.manager import SessionManager  # noqa: E402

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(oracle_available is None or not oracle_available(), reason="pi-oracle not installed"),
]


@pytest.fixture(scope="module")
def oracle() -> Iterator[Any]:
    with Oracle() as o:
        yield o


@pytest.mark.parametrize("seed", range(7_000_000, 7_000_040))
def test_paths_match_pi(oracle: Any, seed: int) -> None:
    entries = make_path(seed)
    rng = random.Random(seed)
    n = len(entries)
    assert find_valid_cut_points(entries) == oracle.call("findValidCutPoints", entries=entries)
    for keep in (1, rng.randint(1, 3000), 20000):
        ours = find_cut_point(entries, 0, n, keep).to_dict()
        assert ours == oracle.call("findCutPoint", entries=entries, keepRecentTokens=keep)
        prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=keep))
        pi = oracle.call("prepareCompaction", entries=entries, settings={"keepRecentTokens": keep})
        assert (None if prep is None else prep.to_dict()) == pi
    messages = oracle.call("buildSessionContext", entries=entries)["messages"]
    llm = convert_to_llm(messages)
    assert serialize_conversation(llm) == oracle.call("serializeConversation", messages=llm)
    ops = create_file_ops()
    for m in messages:
        extract_file_ops_from_message(m, ops)
    pi_lists = oracle.call("computeFileLists", messages=messages)
    assert compute_file_lists(ops).to_dict() == {k: pi_lists[k] for k in ("readFiles", "modifiedFiles")}


@pytest.mark.parametrize("seed", range(8_000_000, 8_000_015))
def test_trees_match_pi(oracle: Any, seed: int) -> None:
    g = make_tree(seed)
    entries = g.entries
    sm = SessionManager.in_memory("/tmp/proj", entries=entries)
    rng = random.Random(seed)
    ids = [e["id"] for e in entries]
    for _ in range(4):
        old, target = rng.choice(leaves(entries)), rng.choice(ids)
        got = collect_entries_for_branch_summary(sm, old, target)
        pi = oracle.call("collectEntriesForBranchSummary", entries=entries, oldLeafId=old, targetId=target)
        assert got.to_dict() == {k: pi[k] for k in ("entries", "commonAncestorId")}
        for budget in (0, 50, 500, 5000):
            pi_prep = oracle.call("prepareBranchEntries", entries=pi["entries"], tokenBudget=budget)
            assert prepare_branch_entries(got.entries, budget).to_dict() == pi_prep
