"""Corpus loading: files per second and peak memory, in memory vs process-parallel vs Dask.

    .venv/bin/python benchmarks/corpus.py                 # 2,000 generated sessions
    .venv/bin/python benchmarks/corpus.py --sessions 5000 --kinds messages usage --workers 2

Generates a corpus of small synthetic sessions (:func:`write_corpus`: Pi's JSONL v3 format, a
tool call with a truncated result, usage, some compactions, branches and failed responses) in a
temporary directory, then loads the frames three ways, each in a fresh subprocess (so peak memory
is the loader's own): the in-memory frames (``messages_df(directory)`` ...), :func:`load_corpus`
(worker processes, bounded in-flight files) and :func:`corpus_dask` on a ``distributed``
LocalCluster. Prints files/s and the peak resident memory (``ru_maxrss`` of the process and its
children), and checks that all three give the same frames.
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
# the three loaders, each measured in its own process


def _run_one(method: str, directory: str, kinds: list[str], workers: int, out: str) -> None:
    import pandas as pd

    start = time.perf_counter()
    if method == "pandas":
        from pi_nb.notebook import frames

        result = {k: getattr(frames, f"{k}_df")(directory) for k in kinds}
    elif method == "parallel":
        from pi_nb.notebook.corpus import load_corpus

        result = load_corpus(directory, kinds, workers=workers)
    else:
        from dask.distributed import Client, LocalCluster

        from pi_nb.notebook.corpus import corpus_dask

        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster),
        ):
            result = {
                k: corpus_dask(directory, k, files_per_partition=100).compute().reset_index(drop=True)
                for k in kinds
            }
    elapsed = time.perf_counter() - start
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    pd.to_pickle(result, out)
    print(json.dumps({"seconds": elapsed, "self_mb": self_kb / 1024, "children_mb": child_kb / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument(
        "--kinds", nargs="+", default=["entries", "messages", "tool_results", "usage", "compactions"]
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--_run", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._run:
        method, directory, out = args._run
        _run_one(method, directory, args.kinds, args.workers, out)
        return

    import pandas as pd
    from pandas.testing import assert_frame_equal

    from pi_nb.notebook.corpus import canonical

    with tempfile.TemporaryDirectory(prefix="pi_nb-corpus-") as tmp:
        t = time.perf_counter()
        files = write_corpus(Path(tmp) / "sessions", args.sessions)
        size = sum(os.path.getsize(f) for f in files)
        print(
            f"corpus: {len(files):,} sessions, {size / 1e6:.1f} MB, written in {time.perf_counter() - t:.1f} s; "
            f"frames {', '.join(args.kinds)}; {args.workers} workers; {os.cpu_count()} CPUs"
        )
        results = {}
        for method in ("pandas", "parallel", "dask"):
            out = str(Path(tmp) / f"{method}.pkl")
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--workers",
                    str(args.workers),
                    "--kinds",
                    *args.kinds,
                    "--_run",
                    method,
                    str(Path(tmp) / "sessions"),
                    out,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            stats = json.loads(proc.stdout.strip().splitlines()[-1])
            results[method] = pd.read_pickle(out)
            print(
                f"{method:>8}: {len(files) / stats['seconds']:8.0f} files/s  ({stats['seconds']:.2f} s)  "
                f"peak RSS {stats['self_mb']:.0f} MB (process), {stats['children_mb']:.0f} MB (largest child)"
            )
        for kind in args.kinds:
            assert_frame_equal(results["parallel"][kind], results["pandas"][kind], check_exact=True)
            assert_frame_equal(
                results["dask"][kind], canonical(kind, results["pandas"][kind]), check_exact=True
            )
        rows = ", ".join(f"{k} {len(results['pandas'][k]):,}" for k in args.kinds)
        print(f"same frames from all three ({rows} rows)")


if __name__ == "__main__":
    main()
