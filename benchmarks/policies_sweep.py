"""Speed and memory of a policy sweep: 5 context policies x 10 settings over 100 real-size sessions.

    .venv/bin/python benchmarks/policies_sweep.py                   # 100 sessions (the issue's size)
    .venv/bin/python benchmarks/policies_sweep.py --sessions 10     # quick

The sessions are built from the recorded real Pi sessions committed in the repository
(``notebooks/data/real-pi/*.jsonl`` and ``tests/fixtures/e2e/*.jsonl``): session ``i`` takes
fixture ``i mod n`` and repeats its active branch (its messages and model changes; its recorded
compactions left out) until it has at least ``--entries`` entries, with every entry id, tool-call
id and timestamp changed so each repetition is a new stretch of the same kind of work. Each is
written to a temporary file and read back by the sweep, as a user's sessions would be.

The sweep is :func:`pi_nb.what_if.sweep` with ``policies=`` (one :class:`~pi_nb.policies.PolicyReplay`
and one :class:`~pi_nb.what_if.policies.cost.PolicyCost` per session and policy, priced as Anthropic's
claude-sonnet-4-5 with its prefix cache), over a 64,000-token window:

* ``PiPolicy``: keepRecentTokens 2,000 ... 20,000 (reserve 8,000),
* ``ObservationMasking``: keep_turns 1 ... 10,
* ``TrimLastTokens``: 4,000 ... 40,000 tokens,
* ``ClearToolUses``: trigger 5,000 ... 50,000 (keep 3),
* ``CodexTruncation``: max_lines 16 ... 160 (max_bytes 10 KiB).

Printed: the wall time of the whole sweep, per (session, policy) cell, the peak resident memory
of the process (``ru_maxrss``) and the rows produced.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_nb.policies import (  # noqa: E402
    ClearToolUses,
    CodexTruncation,
    ObservationMasking,
    PiPolicy,
    TrimLastTokens,
)
from pi_nb.providers.catalog import find_model  # noqa: E402
from pi_nb.session.manager import SessionManager  # noqa: E402
from pi_nb.what_if.policies.sweep import sweep_policies  # noqa: E402

FIXTURES = sorted((ROOT / "notebooks" / "data" / "real-pi").glob("*.jsonl")) + sorted(
    (ROOT / "tests" / "fixtures" / "e2e").glob("*.jsonl")
)


def _branch(path: Path) -> list[dict[str, Any]]:
    manager = SessionManager.in_memory_from_file(str(path))
    return [dict(e) for e in manager.get_branch() if e.get("type") in ("message", "model_change")]


def _renamed(value: Any, prefix: str) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("id", "toolCallId") and isinstance(v, str):
                out[k] = prefix + v
            else:
                out[k] = _renamed(v, prefix)
        return out
    if isinstance(value, list):
        return [_renamed(v, prefix) for v in value]
    return value


def build_session(i: int, entries: int) -> list[dict[str, Any]]:
    """Session ``i``: a fixture's branch repeated to ``entries`` entries, ids and times changed."""
    base = _branch(FIXTURES[i % len(FIXTURES)])
    out: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": f"bench-{i:03d}",
            "timestamp": "2026-09-10T00:00:00.000Z",
            "cwd": "/b",
        }
    ]
    rep = 0
    parent = None
    while len(out) - 1 < entries:
        prefix = f"s{i}r{rep}-"
        shift = rep * 3_600_000
        for e in base:
            copy = _renamed(e, prefix)
            copy["parentId"] = parent
            message = copy.get("message")
            if isinstance(message, dict) and isinstance(message.get("timestamp"), (int, float)):
                message["timestamp"] = message["timestamp"] + shift
            out.append(copy)
            parent = copy["id"]
        rep += 1
    return out


POLICIES = [
    PiPolicy(reserve_tokens=8000, keep_recent_tokens=20000),
    ObservationMasking(),
    TrimLastTokens(),
    ClearToolUses(),
    CodexTruncation(),
]
PARAMS = {
    "pi": [{"keep_recent_tokens": 2000 * k} for k in range(1, 11)],
    "observation_masking": [{"keep_turns": k} for k in range(1, 11)],
    "trim_last_tokens": [{"tokens": 4000 * k} for k in range(1, 11)],
    "clear_tool_uses": [{"trigger": 5000 * k} for k in range(1, 11)],
    "codex_truncation": [{"max_lines": 16 * k} for k in range(1, 11)],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--window", type=int, default=64_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        total_entries = 0
        for i in range(args.sessions):
            session = build_session(i, args.entries)
            total_entries += len(session) - 1
            f = Path(tmp) / f"bench-{i:03d}.jsonl"
            f.write_text("".join(json.dumps(e) + "\n" for e in session), encoding="utf-8")
            files.append(f)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        rows = sweep_policies(
            files,
            POLICIES,
            context_window=args.window,
            params=PARAMS,
            prices=find_model("anthropic", "claude-sonnet-4-5"),
        )
        elapsed = time.perf_counter() - t0
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cells = len(rows)
    print(
        f"sessions: {args.sessions} ({total_entries:,} entries, {total_entries // args.sessions} each), window {args.window:,}"
    )
    print(f"policies: {len(POLICIES)} x {len(PARAMS['pi'])} settings -> {cells:,} (session, policy) cells")
    print(f"sweep time: {elapsed:.2f} s ({1000 * elapsed / cells:.2f} ms per cell)")
    print(f"peak RSS: {rss1 / 1024:.0f} MB (before the sweep: {rss0 / 1024:.0f} MB)")
    by_policy: dict[str, list[float]] = {}
    for r in rows:
        by_policy.setdefault(r["policy"], []).append(r["total_cost"])
    for name, costs in by_policy.items():
        print(f"  {name:22s} mean cost per session ${sum(costs) / len(costs):.4f} (over its 10 settings)")


if __name__ == "__main__":
    main()
