"""A real user's folder of agent transcripts, at real size: load time and peak memory, one process vs Dask.

    .venv/bin/python benchmarks/agents_corpus.py                      # 1 %, 10 %, 100 % of 4,445 files / 1.8 GB
    .venv/bin/python benchmarks/agents_corpus.py --scales 0.01 --keep /tmp/corpus

A real Claude Code folder of one heavy user held 4,445 transcripts in 1.8 GB (issue 23). This script
builds such a folder from the **real** transcripts committed as test fixtures
(``tests/fixtures/other_agents/{claude_code,codex}``, their sources in ``SOURCES.md`` there) and the
real Pi sessions of ``notebooks/data/real-pi``: 60 % Claude Code, 25 % Codex, 15 % Pi, in each
harness's own layout (``claude/projects/<project>/<session>.jsonl``,
``codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, ``pi/--<cwd>--/<time>_<id>.jsonl``). File sizes are
log-normal around the real folder's mean (405 KB). A file is one real transcript repeated until it
has its size: each repetition gets new ids (every id-valued field, at any depth, rewritten with a
tag; a session's own id once per file), and its first root is chained to the previous
repetition's last record, so each file is one long session whose ids are all distinct, read by
the same readers as the fixture itself. Files that a reader reports problems for are not used.

Then the frames of the corpus (``--kinds``, default sessions, usage, tool_results and
compactions: the token-use analysis) are loaded three ways, each in a fresh subprocess by
``benchmarks/corpus.py``'s own runner (peak RSS is the loader's own): ``one_pass``
(``load_corpus(workers=1)``), ``parallel`` (``load_corpus(workers=N)``: worker processes, bounded
in-flight chunks) and ``dask`` (``corpus_dask`` on a LocalCluster of N worker processes, warm).
Every method must give the same frames, dtype for dtype. Prints files/s, MB/s, CPU time and
peak RSS of each.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FILES = 4445
TOTAL_BYTES = 1.8e9
SHARES = {"claude-code": 0.60, "codex": 0.25, "pi": 0.15}
SIGMA = 1.0
"""The log-normal spread of the file sizes (a real folder holds many short sessions and a few long ones)."""
KINDS = ["sessions", "usage", "tool_results", "compactions"]
METHODS = ("one_pass", "parallel", "dask")

ID_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "leafUuid",
        "id",
        "tool_use_id",
        "requestId",
        "messageId",
        "call_id",
        "parentId",
        "firstKeptEntryId",
        "toolCallId",
        "targetId",
        "fromId",
        "agentId",
        "promptId",
    }
)
"""Fields whose string values are ids: rewritten per repetition."""
SESSION_KEYS = frozenset({"sessionId", "session_id"})
"""Fields whose values name the session: rewritten once per file."""


def _ids(value: Any, keys: frozenset[str], out: set[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in keys and isinstance(v, str) and len(v) >= 6:
                out.add(v)
            _ids(v, keys, out)
    elif isinstance(value, list):
        for v in value:
            _ids(v, keys, out)


def _regex(words: set[str]) -> re.Pattern[bytes] | None:
    if not words:
        return None
    alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words, key=len, reverse=True))
    return re.compile(b'(?<=")(' + alternatives + b')(?=")')


class Template:
    """One real transcript, ready to be repeated with new ids."""

    def __init__(self, harness: str, path: Path) -> None:
        self.harness, self.path = harness, path
        records = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        session: set[str] = set()
        rep: set[str] = set()
        head = 0
        if harness == "pi":
            session.add(records[0]["id"])
            head = 1
        elif harness == "codex":
            first = records[0]
            meta = first.get("payload") if first.get("type") == "session_meta" else first
            if isinstance(meta, dict) and isinstance(meta.get("id"), str):
                session.add(meta["id"])
                head = 1
        for r in records:
            _ids(r, SESSION_KEYS, session)
        for r in records[head:]:
            _ids(r, ID_KEYS, rep)
        rep -= session
        self.session_re, self.rep_re = _regex(session), _regex(rep)
        self.head = [orjson.dumps(r) for r in records[:head]]
        self.body = [orjson.dumps(r) for r in records[head:]]
        self.parent_key = {"pi": b'"parentId":null', "claude-code": b'"parentUuid":null'}.get(harness)
        self.id_key = {"pi": "id", "claude-code": "uuid"}.get(harness)
        root = next(
            (i for i, line in enumerate(self.body) if self.parent_key and self.parent_key in line), None
        )
        self.root = root
        last = None
        if self.id_key:
            for r in reversed(records[head:]):
                if isinstance(r.get(self.id_key), str):
                    last = r[self.id_key]
                    break
        self.last = last
        self.size = sum(len(x) + 1 for x in self.head + self.body)

    def write(self, out: Path, size: int, tag: str) -> int:
        """The transcript repeated to about ``size`` bytes into ``out``; returns the bytes written."""
        session_tag = tag.encode()

        def per_file(line: bytes) -> bytes:
            if self.session_re is None:
                return line
            return self.session_re.sub(lambda m: m.group(1) + b"-" + session_tag, line)

        written = 0
        prev_last: bytes | None = None
        with open(out, "wb") as f:
            for line in self.head:
                line = per_file(line) + b"\n"
                f.write(line)
                written += len(line)
            k = 0
            while written < size or k == 0:
                rt = session_tag + b"r" + str(k).encode()
                body = []
                for i, line in enumerate(self.body):
                    line = per_file(line)
                    if self.rep_re is not None:
                        line = self.rep_re.sub(lambda m, rt=rt: m.group(1) + b"-" + rt, line)  # type: ignore[misc]
                    if k and i == self.root and prev_last is not None and self.parent_key is not None:
                        line = line.replace(
                            self.parent_key, self.parent_key[:-4] + b'"' + prev_last + b'"', 1
                        )
                    body.append(line)
                chunk = b"\n".join(body) + b"\n"
                f.write(chunk)
                written += len(chunk)
                if self.last is not None:
                    prev_last = self.last.encode() + b"-" + rt
                k += 1
        return written


def templates() -> dict[str, list[Template]]:
    """The real transcripts a reader reads without a problem, by harness."""
    from pi_nb.harness import read_foreign
    from pi_nb.session.jsonl import read_session_file

    found: dict[str, list[Template]] = {h: [] for h in SHARES}
    dirs = {
        "claude-code": ROOT / "tests" / "fixtures" / "other_agents" / "claude_code",
        "codex": ROOT / "tests" / "fixtures" / "other_agents" / "codex",
        "pi": ROOT / "notebooks" / "data" / "real-pi",
    }
    for harness, d in dirs.items():
        for p in sorted(q for q in d.rglob("*.jsonl") if not q.name.startswith("synthetic")):
            try:
                if harness == "pi":
                    c = read_session_file(p)
                    ok = c.valid and not c.problems and len(c.entries) > 2
                else:
                    fs = read_foreign(p)
                    ok = fs.harness == harness and not fs.problems and len(fs.entries) > 2
            except Exception:  # a fixture of edge cases is simply not a template
                ok = False
            if ok:
                found[harness].append(Template(harness, p))
    for harness, ts in found.items():
        if not ts:
            raise SystemExit(f"no usable {harness} transcript under {dirs[harness]}")
    return found


def build(directory: Path, scale: float, seed: int = 23) -> dict[str, Any]:
    """The corpus at ``scale`` (1.0 = 4,445 files, 1.8 GB) under ``directory``."""
    rng = random.Random(seed)
    by_harness = templates()
    n = max(3, round(FILES * scale))
    mean = TOTAL_BYTES / FILES
    mu = math.log(mean) - SIGMA**2 / 2
    sizes = [rng.lognormvariate(mu, SIGMA) for _ in range(n)]
    factor = TOTAL_BYTES * scale / sum(sizes)
    counts = {h: 0 for h in SHARES}
    written = {h: 0 for h in SHARES}
    start = time.perf_counter()
    harnesses = list(SHARES)
    weights = [SHARES[h] for h in harnesses]
    for i, raw_size in enumerate(sizes):
        harness = harnesses[i % 3] if i < 3 else rng.choices(harnesses, weights)[0]
        template = rng.choice(by_harness[harness])
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        day = 1 + i % 28
        if harness == "claude-code":
            out = directory / "claude" / "projects" / f"-home-user-project{i % 37}" / f"{sid}.jsonl"
        elif harness == "codex":
            out = directory / "codex" / "sessions" / "2026" / f"{1 + i % 12:02d}" / f"{day:02d}"
            out = out / f"rollout-2026-01-{day:02d}T10-00-00-{sid}.jsonl"
        else:
            out = (
                directory
                / "pi"
                / f"--home-user-project{i % 37}--"
                / f"2026-01-{day:02d}T10-00-00-000Z_{sid}.jsonl"
            )
        out.parent.mkdir(parents=True, exist_ok=True)
        written[harness] += template.write(out, int(raw_size * factor), f"f{i}")
        counts[harness] += 1
    return {
        "files": n,
        "bytes": sum(written.values()),
        "by_harness": {h: {"files": counts[h], "mb": written[h] / 1e6} for h in SHARES},
        "templates": {h: len(v) for h, v in by_harness.items()},
        "build_s": time.perf_counter() - start,
    }


def measure(directory: Path, method: str, kinds: list[str], workers: int, out: Path) -> dict[str, Any]:
    """One loading method in a fresh interpreter (``benchmarks/corpus.py``'s runner)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "corpus.py"),
        "--workers",
        str(workers),
        "--repeat",
        "1",
        "--kinds",
        *kinds,
        "--_run",
        method,
        str(directory),
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode:
        raise SystemExit(f"{method} failed:\n{proc.stderr[-3000:]}")
    stats: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return stats


def run(
    scale: float, kinds: list[str], workers: int, keep: Path | None, methods: tuple[str, ...]
) -> dict[str, Any]:
    import pandas as pd
    from pandas.testing import assert_frame_equal

    tmp = Path(tempfile.mkdtemp(prefix="pi_nb-agents-corpus-"))
    try:
        corpus = keep if keep is not None else tmp / "corpus"
        if corpus.exists():
            shutil.rmtree(corpus)
        info = build(corpus, scale)
        stats: dict[str, Any] = {}
        frames: dict[str, Any] = {}
        for method in methods:
            out = tmp / f"{method}.pkl"
            stats[method] = measure(corpus, method, kinds, workers, out)
            frames[method] = pd.read_pickle(out)
            out.unlink()
        first = methods[0]
        for method in methods[1:]:
            for kind in kinds:
                assert_frame_equal(frames[method][kind], frames[first][kind], check_exact=True)
        rows = {k: len(frames[first][k]) for k in kinds}
        by = frames[first].get("sessions")
        harness_rows = by["harness"].value_counts().to_dict() if by is not None else {}
        return {**info, "scale": scale, "methods": stats, "rows": rows, "sessions_by_harness": harness_rows}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    parser.add_argument("--kinds", nargs="+", default=KINDS)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--keep", type=Path, help="build the corpus here and keep it (one scale)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    results = []
    print(
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; frames {', '.join(args.kinds)}; "
        f"{args.workers} workers"
    )
    for scale in args.scales:
        r = run(scale, args.kinds, args.workers, args.keep, tuple(args.methods))
        results.append(r)
        mix = ", ".join(f"{h} {v['files']} files / {v['mb']:.0f} MB" for h, v in r["by_harness"].items())
        print(
            f"\nscale {scale:g}: {r['files']:,} files, {r['bytes'] / 1e9:.2f} GB ({mix}); built in "
            f"{r['build_s']:.1f} s from {r['templates']} real transcripts"
        )
        for method, st in r["methods"].items():
            extra = ""
            if method == "dask":
                extra = f"; + cluster start {st['cluster_start_s']:.1f} s, pi_nb import {st['first_task_s']:.1f} s"
            print(
                f"  {method:>9}: {st['seconds']:7.1f} s  {r['files'] / st['seconds']:6.0f} files/s "
                f"{r['bytes'] / 1e6 / st['seconds']:6.1f} MB/s  CPU {st['cpu_s']:.1f} s (+ workers "
                f"{st['workers_cpu_s']:.1f} s)  peak RSS {st['self_mb']:.0f} MB (process), "
                f"{st['children_mb']:.0f} MB (largest child){extra}"
            )
        rows = ", ".join(f"{k} {n:,}" for k, n in r["rows"].items())
        print(
            f"  same frames from every method ({rows} rows); sessions by harness {r['sessions_by_harness']}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
