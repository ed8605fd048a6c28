"""The built-in tools on realistic inputs, pi_nb next to Pi 0.85.0 (when the pi-oracle is installed).

    .venv/bin/python benchmarks/tools.py            # default sizes (about a minute on 2 CPUs)
    .venv/bin/python benchmarks/tools.py --no-pi    # without node

Each row is one tool call on a generated tree in a temp dir, best of ``--repeat`` runs:

* ``read``: a 3000-line file (truncated at 2000 lines), a 20 MB file (50 KB kept), a 1 MB single line;
* ``bash``: ``seq 100000`` (tail kept, full-output file written) and 200 MB of output (``yes | head``);
  for this one the peak RSS of a fresh interpreter running only that call is reported too;
* ``grep``: a literal over 2000 files (limit 100 reached) and a regex with ``context=2`` in one file;
* ``edit``: one replacement in a 5000-line file, and a rewrite of 1000 of 1000 lines (jsdiff's
  O((N+M)·D) diff, the slowest case);
* ``ls`` of 5000 entries; ``find`` (pi_nb's Python walk) of ``**/*.py`` over 10000 files.

Pi's time is the wall time of the oracle's ``tool`` call (prepareArguments, validation, execute),
measured from Python, so it includes the JSON pipe (a few ms for a 50 KB answer). Pi's ``find``
cannot run in the oracle (no fd >= 8.7), so that row has no Pi column.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))

from pi_nb.tools import create_tool, execute_tool_call  # noqa: E402


def build(root: Path) -> None:
    (root / "r").mkdir()
    (root / "r" / "lines3000.txt").write_text("".join(f"line {i}\n" for i in range(3000)))
    (root / "r" / "big20mb.txt").write_text(("x" * 99 + "\n") * (20 * 1024 * 1024 // 100))
    (root / "r" / "oneline.txt").write_text("y" * (1024 * 1024))
    for i in range(2000):
        d = root / "g" / f"d{i // 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(
            "".join(f"row {j} needle {i}\n" if j % 7 == 0 else f"row {j}\n" for j in range(50))
        )
    (root / "g1.txt").write_text(
        "".join(f"item {i} {'match' if i % 50 == 0 else ''}\n" for i in range(20000))
    )
    (root / "e").mkdir()
    (root / "ls").mkdir()
    for i in range(5000):
        (root / "ls" / f"entry-{i:05d}.txt").write_text("")
    for i in range(10000):
        d = root / "f" / f"pkg{i // 500}" / f"sub{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.{'py' if i % 3 else 'txt'}").write_text("")


def reset_edit_files(root: Path) -> None:
    (root / "e" / "five.txt").write_text("".join(f"line {i:05d}\n" for i in range(5000)))
    (root / "e" / "rewrite.txt").write_text("".join(f"old {i}\n" for i in range(1000)))
    for name in ("alt2000.txt", "rew2000.txt", "mix2000.txt"):
        (root / "e" / name).write_text(OLD_2000)


OLD_2000 = "".join(f"line {i:05d} of the file with some text\n" for i in range(2000))
ALT_2000 = "".join(
    f"CHANGED {i:05d} new text here\n" if i % 2 else f"line {i:05d} of the file with some text\n"
    for i in range(2000)
)
REW_2000 = "".join(f"rewritten {i:05d} entirely different\n" for i in range(2000))
# about a third of the lines changed, at places that do not repeat (a seeded draw)
MIX_2000 = "".join(
    f"edited {i:05d}\n" if (i * 7919) % 13 < 4 else f"line {i:05d} of the file with some text\n"
    for i in range(2000)
)


REWRITE_OLD = "".join(f"old {i}\n" for i in range(1000))
REWRITE_NEW = "".join(f"new {i}\n" for i in range(1000))

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("read 3000 lines", "read", {"path": "r/lines3000.txt"}),
    ("read 20 MB file", "read", {"path": "r/big20mb.txt"}),
    ("read 1 MB single line", "read", {"path": "r/oneline.txt"}),
    ("bash seq 100000", "bash", {"command": "seq 100000"}),
    (
        "bash 200 MB output",
        "bash",
        {"command": "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000"},
    ),
    ("grep literal, 2000 files", "grep", {"pattern": "needle", "path": "g", "literal": True}),
    ("grep regex, context 2", "grep", {"pattern": "item \\d+ match", "path": "g1.txt", "context": 2}),
    (
        "edit 1 line of 5000",
        "edit",
        {"path": "e/five.txt", "edits": [{"oldText": "line 02500\n", "newText": "changed\n"}]},
    ),
    (
        "edit rewrite 1000 lines",
        "edit",
        {"path": "e/rewrite.txt", "edits": [{"oldText": REWRITE_OLD, "newText": REWRITE_NEW}]},
    ),
    (
        "edit 2000 lines, every 2nd changed",
        "edit",
        {"path": "e/alt2000.txt", "edits": [{"oldText": OLD_2000, "newText": ALT_2000}]},
    ),
    (
        "edit 2000 lines, a third changed",
        "edit",
        {"path": "e/mix2000.txt", "edits": [{"oldText": OLD_2000, "newText": MIX_2000}]},
    ),
    (
        "edit rewrite 2000 lines",
        "edit",
        {"path": "e/rew2000.txt", "edits": [{"oldText": OLD_2000, "newText": REW_2000}]},
    ),
    ("ls 5000 entries", "ls", {"path": "ls"}),
    ("find **/*.py, 10000 files", "find", {"pattern": "**/*.py", "path": "f"}),
]


def best(fn: Callable[[], Any], repeat: int, before: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


RSS_SCRIPT = textwrap.dedent(
    """
    import json, os, resource, sys

    def peak_kb():
        # VmHWM: this process's own peak. ru_maxrss would also count the parent's memory at
        # spawn time (Linux keeps the pre-exec high-water mark), i.e. pytest's or the benchmark's.
        try:
            with open("/proc/self/status") as f:
                return int(next(l for l in f if l.startswith("VmHWM:")).split()[1])
        except (OSError, StopIteration):
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    sys.path.insert(0, sys.argv[2])
    from pi_nb.tools import run_tool
    out = run_tool("bash", sys.argv[1], {"command": sys.argv[3]}, options={"bash": {"tmpdir": sys.argv[1]}})
    os.remove(out.details["fullOutputPath"])
    print(json.dumps({"rss_mb": peak_kb() / 1024}))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pi", action="store_true")
    parser.add_argument("--only", default="", help="run only the calls whose label contains this text")
    args = parser.parse_args()

    oracle = None
    if not args.no_pi:
        try:
            from oracle_client import Oracle, oracle_available

            if oracle_available():
                oracle = Oracle()
        except ImportError:
            pass

    tmp = Path(tempfile.mkdtemp(prefix="pi-nb-bench-tools-")).resolve()
    try:
        build(tmp)
        (tmp / "out").mkdir()
        rows = []
        for label, name, params in CASES:
            if args.only not in label:
                continue
            options = {"bash": {"tmpdir": str(tmp / "out")}, "find": {"backend": "python"}}
            tool = create_tool(name, str(tmp), options)
            before = (lambda: reset_edit_files(tmp)) if name == "edit" else None

            def ours(tool: Any = tool, params: dict[str, Any] = params) -> None:
                outcome = asyncio.run(execute_tool_call(tool, "bench", params))
                assert not outcome.is_error, outcome.text

            t_ours = best(ours, args.repeat, before)
            t_pi = None
            if oracle is not None and name != "find":

                def pi(name: str = name, params: dict[str, Any] = params) -> None:
                    r = oracle.call(
                        "tool", name=name, cwd=str(tmp), params=params, env={"TMPDIR": str(tmp / "out")}
                    )
                    assert not r["isError"], r["content"]

                t_pi = best(pi, args.repeat, before)
            for leftover in (tmp / "out").glob("pi-bash-*.log"):
                leftover.unlink()
            rows.append((label, t_ours, t_pi))

        rss_mb: float | None = None
        if args.only in CASES[4][0]:
            rss = subprocess.run(
                [sys.executable, "-c", RSS_SCRIPT, str(tmp / "out"), str(ROOT), CASES[4][2]["command"]],
                capture_output=True,
                text=True,
                check=True,
            )
            rss_mb = json.loads(rss.stdout)["rss_mb"]

        print(f"{'call':32} {'pi_nb ms':>10} {'Pi ms':>10} {'Pi/pi_nb':>9}")
        for label, t_ours, t_pi in rows:
            pi_ms = f"{t_pi * 1000:10.1f}" if t_pi is not None else f"{'-':>10}"
            ratio = f"{t_pi / t_ours:8.2f}x" if t_pi is not None else f"{'-':>9}"
            print(f"{label:32} {t_ours * 1000:10.1f} {pi_ms} {ratio}")
        if rss_mb is not None:
            print(f"\nbash 200 MB output: peak RSS of a fresh interpreter running it: {rss_mb:.1f} MB")
    finally:
        if oracle is not None:
            oracle.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
