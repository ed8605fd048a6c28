"""Record Pi 0.85.0's branch-summary collection and budgeting over generated session trees.

    .venv/bin/python tests/golden/make_branch_summary.py [--trees 110] [--seed 9]

Writes ``tests/golden/branch_summary_trees.jsonl``: a header line, then one line per tree with
the tree's entries (in file order; the session's leaf is the last entry) and the calls:

* ``collectEntriesForBranchSummary`` for pairs (old leaf, target): sibling leaves, ancestor and
  descendant, the same entry, the root, an unknown target, a ``null`` old leaf, the session leaf;
* ``prepareBranchEntries`` over each collected list with several budgets: unlimited (absent and
  0), 1, negative, huge, cumulative totals +-1, and budgets on both sides of Pi's 90 % rule for
  summary entries (found with Pi's own ``estimateTokens``).

To keep the file small, collected entries are written as ``{"$tree": k}`` (``entries[k]`` of the
same line), the ``entries`` argument of ``prepareBranchEntries`` as ``{"$collected": i}`` (the
result of call ``i`` of the same line), and result messages as ``{"$entry": k}``
(``entries[k]["message"]``) or ``{"$m": j}`` (``messages[j]`` of the same line, for messages Pi
built from custom/summary entries); every expansion is checked here. The tests (tests/test_branch_summary_golden.py) replay the file.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_compaction import GOLDEN, ROOT, SessionGen, dumps, ref_messages


def make_tree(seed: int) -> SessionGen:
    rng = random.Random(seed)
    g = SessionGen(seed, size_scale=rng.choice([0.4, 0.8]))
    g.linear_session(rng.randint(1, 4))
    for _ in range(rng.randint(1, 5)):
        r = rng.random()
        old_leaf = g.leaf
        if r < 0.08:
            g.leaf = None  # a second root
        else:
            g.leaf = rng.choice(g.entries)["id"]
        if old_leaf is not None and rng.random() < 0.4:
            # what navigateTree(summarize) writes: a branch_summary under the new position
            entry = g.branch_summary_here(parent=g.leaf)
            entry["fromId"] = old_leaf
        for t in range(rng.randint(1, 3)):
            if t and rng.random() < 0.15:
                g.compaction_here()
            g.turn(long=rng.random() < 0.05)
        if rng.random() < 0.2:
            g.metadata()
    return g


def leaves(entries: list[dict[str, Any]]) -> list[str]:
    parents = {e["parentId"] for e in entries}
    return [e["id"] for e in entries if e["id"] not in parents]


def tree_refs(items: list[dict[str, Any]], entries: list[dict[str, Any]]) -> list[dict[str, int]]:
    pos = {id(e): k for k, e in enumerate(entries)}
    out = []
    for item in items:
        k = (
            next((j for j, e in enumerate(entries) if e == item), -1)
            if id(item) not in pos
            else pos[id(item)]
        )
        if k < 0:
            raise AssertionError("collected entry not in the tree")
        out.append({"$tree": k})
    assert [entries[r["$tree"]] for r in out] == items
    return out


def table_ref(message: Any, table: list[Any]) -> Any:
    """A message Pi built (not an entry's own message) goes into the line's table once: ``{"$m": j}``."""
    if isinstance(message, dict) and "$entry" in message:
        return message
    for j, known in enumerate(table):
        if known == message:
            return {"$m": j}
    table.append(message)
    return {"$m": len(table) - 1}


def expand(messages: list[Any], entries: list[dict[str, Any]], table: list[Any]) -> list[Any]:
    out = []
    for m in messages:
        if "$entry" in m:
            out.append(entries[m["$entry"]]["message"])
        else:
            out.append(table[m["$m"]])
    return out


def budgets_for(o: Any, messages: list[dict[str, Any]], rng: random.Random) -> list[int | None]:
    out: list[int | None] = [None, 0, 1, -5, 10**9]
    if not messages:
        return out
    tokens = [o.call("estimateTokens", message=m) for m in messages]
    cum = 0
    newest_first = list(zip(reversed(messages), reversed(tokens), strict=True))
    cums: list[int] = []
    for m, t in newest_first:
        if m.get("role") in ("branchSummary", "compactionSummary") and t > 0:
            lo = cum / 0.9  # above this: the 90 % rule lets the summary in
            inside = int(lo) + 1
            if inside < cum + t:
                out.append(inside)
            if cum > 0 and cum <= int(lo) < cum + t:
                out.append(int(lo))  # at/below it: the summary is left out
        cum += t
        cums.append(cum)
    k = rng.randrange(len(cums))
    out += [cums[k] - 1, cums[k], cums[k] + 1, max(1, cum // 2)]
    return sorted(set(out), key=lambda b: (b is not None, b or 0))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trees", type=int, default=110)
    ap.add_argument("--seed", type=int, default=9)
    ns = ap.parse_args()
    sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
    from oracle_client import Oracle

    lines = [
        dumps(
            {
                "source": "Pi 0.85.0 via pi-oracle",
                "generator": "tests/golden/make_branch_summary.py",
                "args": {"trees": ns.trees, "seed": ns.seed},
                "refs": '{"$tree": k} = entries[k]; {"$entry": k} = entries[k]["message"]; {"$m": j} = messages[j]; '
                '{"$collected": i} = response.result.entries of calls[i] (all on the same line)',
            }
        )
    ]
    n_pairs = n_prep = 0
    with Oracle() as o:
        for n in range(ns.trees):
            seed = ns.seed * 100_000 + n
            rng = random.Random(seed + 7)
            g = make_tree(seed)
            entries = g.entries
            ids = [e["id"] for e in entries]
            lv = leaves(entries)
            pairs: list[dict[str, Any]] = []
            if len(lv) >= 2:
                a, b = rng.sample(lv, 2)
                pairs += [{"oldLeafId": a, "targetId": b}, {"oldLeafId": b, "targetId": a}]
            x = rng.choice(ids)
            path = g.path_ids(x)
            pairs += [
                {"oldLeafId": x, "targetId": path[0]},  # to the root
                {"oldLeafId": path[0], "targetId": x},  # descendant
                {"oldLeafId": x, "targetId": x},  # same entry
                {"oldLeafId": rng.choice(lv), "targetId": rng.choice(ids)},
                {"oldLeafId": rng.choice(ids), "targetId": rng.choice(ids)},
                {"targetId": rng.choice(ids)},  # the session's own leaf
            ]
            if rng.random() < 0.3:
                pairs.append({"oldLeafId": None, "targetId": rng.choice(ids)})
            if rng.random() < 0.2:
                pairs.append({"oldLeafId": rng.choice(lv), "targetId": "no-such-id"})
            calls: list[dict[str, Any]] = []
            table: list[Any] = []
            for pair in pairs:
                resp = o.request("collectEntriesForBranchSummary", {"entries": entries, **pair})
                resp.pop("id", None)
                n_pairs += 1
                if not resp.get("ok"):
                    calls.append({"fn": "collectEntriesForBranchSummary", "args": pair, "response": resp})
                    continue
                collected = resp["result"]["entries"]
                resp["result"]["entries"] = tree_refs(collected, entries)
                collect_index = len(calls)
                calls.append({"fn": "collectEntriesForBranchSummary", "args": pair, "response": resp})
                unlimited = o.call("prepareBranchEntries", entries=collected)
                for budget in budgets_for(o, unlimited["messages"], rng):
                    args: dict[str, Any] = {} if budget is None else {"tokenBudget": budget}
                    presp = o.request("prepareBranchEntries", {"entries": collected, **args})
                    presp.pop("id", None)
                    if presp.get("ok"):
                        msgs = ref_messages(presp["result"]["messages"], entries)
                        presp["result"]["messages"] = [table_ref(m, table) for m in msgs]
                        assert (
                            expand(presp["result"]["messages"], entries, table)
                            == o.call("prepareBranchEntries", entries=collected, **args)["messages"]
                        )
                    calls.append(
                        {
                            "fn": "prepareBranchEntries",
                            "args": {"entries": {"$collected": collect_index}, **args},
                            "response": presp,
                        }
                    )
                    n_prep += 1
            lines.append(
                dumps(
                    {
                        "name": f"tree{n:03d}",
                        "seed": seed,
                        "entries": entries,
                        "messages": table,
                        "calls": calls,
                    }
                )
            )
    out = GOLDEN / "branch_summary_trees.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(
        f"{out.relative_to(ROOT)}: {ns.trees} trees, {n_pairs} collections, {n_prep} budgets, "
        f"{out.stat().st_size / 1e6:.2f} MB"
    )


if __name__ == "__main__":
    main()
