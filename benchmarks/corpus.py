"""Corpus loading: files per second and peak memory, before and after, one process, worker processes, Dask.

    .venv/bin/python benchmarks/corpus.py                 # 2,000 generated sessions
    .venv/bin/python benchmarks/corpus.py --sessions 5000 --kinds messages usage --workers 2

Generates a corpus of small synthetic sessions (:func:`write_corpus`: Pi's JSONL v3 format, a
tool call with a truncated result, usage, some compactions, branches and failed responses) in a
temporary directory, then loads the five frames in several ways, each in a fresh subprocess (so
peak memory is the loader's own): ``baseline`` (pi_nb at :data:`BASELINE_REV`, extracted with
``git archive``: one ``<kind>_df(directory)`` call per frame), ``pandas`` (the same calls today),
``one_pass`` (:func:`load_corpus` in this process: each file read once for every frame),
``parallel`` (:func:`load_corpus` with worker processes, bounded in-flight files) and ``dask``
(:func:`corpus_dask` on a ``distributed`` LocalCluster of N worker processes, every kind in one
``dask.compute``; timed once the cluster is up and its workers have imported pi_nb, both of which
are printed). Imports happen before the clock starts. Prints files/s, the CPU time of the measuring process and the peak resident memory
(``ru_maxrss`` of the process and its largest child), and checks that every method of this tree
gives the same frames, dtype for dtype.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _usage(inp: int, out: int) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": inp + out,
        "cost": {
            "input": 0.0001 * inp,
            "output": 0.0002 * out,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 0.0,
        },
    }


def session_lines(i: int) -> list[str]:
    """One synthetic session (deterministic in ``i``): two or three turns, a read with a
    truncated result, usage on every answer; every 7th has a compaction, every 5th a second
    branch, every 11th a failed (error) response."""
    sid = f"0193a1b2-0000-7000-8000-{i:012x}"
    t0 = 1767225600000 + i * 60_000
    n = 0

    def ts(k: int) -> str:
        ms = t0 + k * 1000
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"

    entries: list[dict[str, Any]] = []
    tip: list[str | None] = [None]  # the main line's last entry

    def add(entry: dict[str, Any], parent: str | None = None, main: bool = True) -> str:
        nonlocal n
        n += 1
        eid = f"{i:05x}{n:03x}"
        entries.append(
            {"id": eid, "parentId": parent if parent is not None else tip[0], "timestamp": ts(n), **entry}
        )
        if main:
            tip[0] = eid
        return eid

    def asst(content: list[dict[str, Any]], usage: dict[str, Any], stop: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "api": "offline",
            "provider": "pi_nb",
            "model": "offline",
            "usage": usage,
            "stopReason": stop,
            "timestamp": t0 + n * 1000,
        }

    add({"type": "model_change", "provider": "pi_nb", "modelId": "offline"})
    add({"type": "thinking_level_change", "thinkingLevel": "off"})
    lines_total = 40 + i % 300
    for turn in range(2 + i % 2):
        text = f"read notes{turn}.txt for session {i}"
        user = add(
            {
                "type": "message",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": t0 + n * 1000,
                },
            }
        )
        call = f"call_{i}_{turn}"
        call_block = {
            "type": "toolCall",
            "id": call,
            "name": "read",
            "arguments": {"path": f"notes{turn}.txt"},
        }
        add(
            {
                "type": "message",
                "message": asst([call_block], _usage(800 + 300 * turn + i % 97, 20), "toolUse"),
            }
        )
        kept = min(lines_total, 30)
        body = "".join(f"line {k} of notes{turn} ünïcødé\n" for k in range(1, kept + 1))
        details: dict[str, Any] = {}
        if lines_total > 30:
            body += f"\n[Showing lines 1-30 of {lines_total}. Use offset=31 to continue.]"
            details = {
                "truncation": {
                    "content": "",
                    "truncated": True,
                    "truncatedBy": "lines",
                    "totalLines": lines_total,
                    "totalBytes": lines_total * 30,
                    "outputLines": 30,
                    "outputBytes": 900,
                    "lastLinePartial": False,
                    "firstLineExceedsLimit": False,
                    "maxLines": 30,
                    "maxBytes": 51200,
                }
            }
        add(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": call,
                    "toolName": "read",
                    "content": [{"type": "text", "text": body}],
                    "details": details,
                    "isError": False,
                    "timestamp": t0 + n * 1000,
                },
            }
        )
        if i % 11 == 0 and turn == 0:
            failed = asst([], _usage(0, 0), "error")
            failed["errorMessage"] = "rate limit exceeded"
            add({"type": "message", "message": failed})
        answer = add(
            {
                "type": "message",
                "message": asst(
                    [{"type": "text", "text": f"notes{turn} has {lines_total} lines."}],
                    _usage(1200 + 400 * turn + i % 89, 15),
                    "stop",
                ),
            }
        )
        if i % 7 == 0 and turn == 0:
            add(
                {
                    "type": "compaction",
                    "summary": f"## Goal\nread notes for session {i}",
                    "firstKeptEntryId": user,
                    "tokensBefore": 1300 + i % 89,
                    "details": {"readFiles": [f"notes{turn}.txt"], "modifiedFiles": []},
                }
            )
        if i % 5 == 0 and turn == 0:  # a side branch off the answer, left behind (labelled)
            side = add(
                {
                    "type": "message",
                    "message": {"role": "user", "content": "a side question", "timestamp": t0 + n * 1000},
                },
                answer,
                main=False,
            )
            add(
                {
                    "type": "message",
                    "message": asst([{"type": "text", "text": "side answer"}], _usage(900, 5), "stop"),
                },
                side,
                main=False,
            )
            add({"type": "label", "targetId": answer, "label": "before the side branch"})
    header = {"type": "session", "version": 3, "id": sid, "timestamp": ts(0), "cwd": f"/tmp/corpus/{i % 13}"}
    return [_line(header), *(_line(e) for e in entries)]


def write_corpus(directory: str | os.PathLike[str], sessions: int) -> list[str]:
    """``sessions`` synthetic session files under ``directory`` (13 project folders, Pi's file
    names); returns their paths."""
    root = Path(directory)
    paths = []
    for i in range(sessions):
        folder = root / f"--tmp-corpus-{i % 13}--"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"2026-01-01T00-00-00-000Z_0193a1b2-0000-7000-8000-{i:012x}.jsonl"
        path.write_text("\n".join(session_lines(i)) + "\n", encoding="utf-8")
        paths.append(str(path))
    return paths


# ---------------------------------------------------------------------------------------------
# the loaders, each measured in its own process

KINDS = ["entries", "messages", "tool_results", "usage", "compactions"]
BASELINE_REV = "6637d6a"
"""The last commit before the one-pass frames (each frame function reading every file itself,
pandas guessing the dtypes): the "today" of the corpus row of issue 16."""
METHODS = ("baseline", "pandas", "one_pass", "parallel", "dask")
DESCRIBE = {
    "baseline": f"{BASELINE_REV}: one <kind>_df(directory) call per frame",
    "pandas": "one <kind>_df(directory) call per frame",
    "one_pass": "load_corpus(directory, workers=1): every file read once for every frame",
    "parallel": "load_corpus(directory, workers=N): worker processes",
    "dask": "corpus_dask(directory, kinds) on a LocalCluster (N worker processes), warm",
}


def _import_frames() -> None:
    import pi_nb.notebook.corpus  # noqa: F401


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # worker processes that have ended
    return usage.ru_utime + usage.ru_stime


def _run_one(method: str, directory: str, kinds: list[str], workers: int, out: str, repeat: int) -> None:
    import pandas as pd

    from pi_nb.notebook import frames  # imported before the clock starts: files/s of the loader

    extra: dict[str, float] = {}
    best: tuple[float, float] = (float("inf"), float("inf"))
    result: dict[str, Any] = {}

    workers_cpu: list[float] = []

    def timed(load: Any, others: Any = _children_cpu) -> None:
        nonlocal best, result
        for _ in range(repeat):
            start, cpu, theirs = time.perf_counter(), time.process_time(), others()
            result = load()
            took = (time.perf_counter() - start, time.process_time() - cpu)
            workers_cpu.append(others() - theirs)
            best = min(best, took)

    if method in ("pandas", "baseline"):
        timed(lambda: {k: getattr(frames, f"{k}_df")(directory) for k in kinds})
    elif method in ("one_pass", "parallel"):
        from pi_nb.notebook.corpus import load_corpus

        n = 1 if method == "one_pass" else workers
        timed(lambda: load_corpus(directory, kinds, workers=n, progress=False))
    else:
        import dask
        from dask.distributed import Client, LocalCluster

        from pi_nb.notebook.corpus import corpus_dask, corpus_files

        t = time.perf_counter()
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            extra["cluster_start_s"] = time.perf_counter() - t
            t = time.perf_counter()  # every worker imports pi_nb (once per worker process)
            client.run(_import_frames)
            extra["first_task_s"] = time.perf_counter() - t
            per = max(1, -(-len(corpus_files(directory)) // (4 * workers)))

            def on_dask() -> dict[str, Any]:
                lazy = corpus_dask(directory, kinds, files_per_partition=per)
                computed = dask.compute(*lazy.values())
                return {k: df.reset_index(drop=True) for k, df in zip(lazy, computed, strict=True)}

            timed(on_dask, lambda: sum(client.run(_own_cpu).values()))
    elapsed, cpu = best
    extra["workers_cpu_s"] = min(workers_cpu)
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    pd.to_pickle(result, out)
    print(
        json.dumps(
            {
                "seconds": elapsed,
                "cpu_s": cpu,
                "self_mb": self_kb / 1024,
                "children_mb": child_kb / 1024,
                **extra,
            }
        )
    )


def _baseline_tree(tmp: str) -> str | None:
    """pi_nb as it was at :data:`BASELINE_REV` (``git archive``), or None outside a git checkout."""
    target = Path(tmp) / "baseline"
    target.mkdir()
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BASELINE_REV, "pi_nb"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return str(target)


def run(
    sessions: int = 2000, workers: int = 2, kinds: list[str] | None = None, repeat: int = 3
) -> dict[str, Any]:
    """Every method on one generated corpus; checks they give the same frames. Returns
    ``{"files": n, "mb": size, "methods": {method: stats}, "rows": {kind: n}}``."""
    import pandas as pd
    from pandas.testing import assert_frame_equal

    kinds = kinds or KINDS
    with tempfile.TemporaryDirectory(prefix="pi_nb-corpus-") as tmp:
        files = write_corpus(Path(tmp) / "sessions", sessions)
        size = sum(os.path.getsize(f) for f in files)
        baseline = _baseline_tree(tmp)
        stats: dict[str, Any] = {}
        results: dict[str, Any] = {}
        for method in METHODS:
            if method == "baseline" and baseline is None:
                continue
            out = str(Path(tmp) / f"{method}.pkl")
            env = dict(os.environ)
            path = baseline if method == "baseline" else str(ROOT)
            env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys, runpy; sys.path.insert(0, sys.argv[1]); sys.argv = sys.argv[2:]; "
                    "runpy.run_path(sys.argv[0], run_name='__main__')",
                    path,
                    __file__,
                    "--workers",
                    str(workers),
                    "--repeat",
                    str(repeat),
                    "--kinds",
                    *kinds,
                    "--_run",
                    method,
                    str(Path(tmp) / "sessions"),
                    out,
                ],
                capture_output=True,
                text=True,
                check=True,
                env=env,
                cwd=tmp,
            )
            stats[method] = json.loads(proc.stdout.strip().splitlines()[-1])
            results[method] = pd.read_pickle(out)
        for method in ("one_pass", "parallel", "dask"):
            for kind in kinds:
                assert_frame_equal(results[method][kind], results["pandas"][kind], check_exact=True)
        return {
            "repeat": repeat,
            "files": len(files),
            "mb": size / 1e6,
            "methods": stats,
            "rows": {k: len(results["pandas"][k]) for k in kinds},
        }


def repeat_of(r: dict[str, Any]) -> int:
    return int(r.get("repeat", 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--kinds", nargs="+", default=KINDS)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs of each method")
    parser.add_argument("--_run", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._run:
        method, directory, out = args._run
        _run_one(method, directory, args.kinds, args.workers, out, args.repeat)
        return
    r = run(args.sessions, args.workers, args.kinds, args.repeat)
    print(
        f"corpus: {r['files']:,} sessions, {r['mb']:.1f} MB; frames {', '.join(args.kinds)}; "
        f"{args.workers} workers; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    for method, st in r["methods"].items():
        print(
            f"{method:>9}: {r['files'] / st['seconds']:7.0f} files/s  (best of {repeat_of(r)}: {st['seconds']:.2f} s, "
            f"CPU of the process {st['cpu_s']:.2f} s)  peak RSS {st['self_mb']:.0f} MB (process), "
            f"{st['children_mb']:.0f} MB (largest child)  - {DESCRIBE[method]}"
        )
        if method == "dask":
            print(
                f"{'':>11}cluster start {st['cluster_start_s']:.2f} s, pi_nb imported on the workers "
                f"{st['first_task_s']:.2f} s: with those, "
                f"{r['files'] / (st['seconds'] + st['cluster_start_s'] + st['first_task_s']):.0f} files/s"
            )
    base = r["methods"].get("baseline")
    one = r["methods"]["one_pass"]
    if base:
        print(
            f"one process: {base['seconds'] / one['seconds']:.1f}x the files/s of {BASELINE_REV} on the clock, "
            f"{base['cpu_s'] / one['cpu_s']:.1f}x in CPU time of the process (target 3x; the CPU time is "
            "the measure when other processes share the CPUs)"
        )
    for method in ("parallel", "dask"):
        st = r["methods"][method]
        total = st["cpu_s"] + st["workers_cpu_s"]
        print(
            f"{method}: {one['seconds'] / st['seconds']:.2f}x the speed of one process (target for Dask: 1x or "
            f"more); CPU of every process of the run {total:.2f} s (one process: {one['cpu_s']:.2f} s), "
            f"so on {args.workers} idle cores about {total / args.workers:.2f} s"
        )
    rows = ", ".join(f"{k} {n:,}" for k, n in r["rows"].items())
    print(f"same frames from every method ({rows} rows)")


if __name__ == "__main__":
    main()
