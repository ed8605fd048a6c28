"""Record pi-ai 0.85.0's ``calculateCost`` on generated usages into tests/golden/cost.json.

pi-oracle does not expose ``calculateCost``, so Node imports it from the oracle's pi-ai
(tests/golden/_pi_ai_direct.mjs) and prices each usage with the catalog model pi-ai itself holds
(``getBuiltinModel(provider, id)``). The models are every model with price tiers plus a spread of
others (Anthropic's, free ones, ones without cache prices); the usages are seeded random counts
with the tier thresholds hit exactly, one below and one above, and 1-hour cache writes (all of
``cacheWrite``, part of it, none, absent). Run by hand:

    /work/venv/bin/python tests/golden/make_cost.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_catalog import pi_ai  # noqa: E402

OUT = HERE / "cost.json"
ROOT = HERE.parents[1]


def models() -> list[dict[str, Any]]:
    data = json.loads((ROOT / "pi_nb" / "_data" / "models.json").read_text(encoding="utf-8"))
    every = [m for ms in data["providers"].values() for m in ms]
    tiered = [m for m in every if m["cost"].get("tiers")]
    rng = random.Random(15)
    others = [m for m in every if not m["cost"].get("tiers")]
    picked = {(m["provider"], m["id"]): m for m in tiered}
    anthropic = [m for m in others if m["provider"] == "anthropic"]
    for m in rng.sample(anthropic, 6) + [m for m in others if m["id"] in ("claude-sonnet-4-5", "gpt-4o")]:
        picked[(m["provider"], m["id"])] = m
    free = [m for m in others if m["cost"]["input"] == 0 and m["cost"]["output"] == 0]
    no_cache = [m for m in others if m["cost"]["cacheWrite"] == 0 and m["cost"]["input"] > 0]
    for m in rng.sample(free, min(3, len(free))) + rng.sample(no_cache, 5) + rng.sample(others, 12):
        picked[(m["provider"], m["id"])] = m
    return list(picked.values())


def usages(model: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    thresholds = [t["inputTokensAbove"] for t in model["cost"].get("tiers") or []]
    sizes = [0, 1, 999, 123_456, 1_000_000]
    for t in thresholds:
        sizes += [t - 1, t, t + 1, 2 * t]
    for size in sizes:
        read = rng.randint(0, size) if size else 0
        write = rng.randint(0, size - read) if size - read else 0
        output = rng.choice([0, 1, 512, 4096, 33_333])
        usage = {"input": size - read - write, "output": output, "cacheRead": read, "cacheWrite": write}
        usage["totalTokens"] = sum(usage.values())
        out.append(usage)
        for long in (write, write // 3, 0):
            out.append({**usage, "cacheWrite1h": long})
    for _ in range(6):
        usage = {k: rng.randint(0, 400_000) for k in ("input", "output", "cacheRead", "cacheWrite")}
        usage["totalTokens"] = sum(usage.values())
        out.append({**usage, "cacheWrite1h": rng.randint(0, usage["cacheWrite"])})
    return out


FIXTURES = ["tests/fixtures/pi_session.jsonl", "tests/fixtures/e2e/compaction_pre_prompt.jsonl"]


def read_entries(relative: str) -> list[dict[str, Any]]:
    text = (ROOT / relative).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def sessions() -> list[list[dict[str, Any]]]:
    """Session files of the fixtures (read by the test from the same path), plus one with every
    kind of billed entry (recorded here)."""
    out = [read_entries(f) for f in FIXTURES]
    rng = random.Random(7)

    def usage() -> dict[str, Any]:
        u = {k: rng.randint(0, 5000) for k in ("input", "output", "cacheRead", "cacheWrite")}
        cost = {k: rng.randint(0, 10**6) / 10**7 for k in ("input", "output", "cacheRead", "cacheWrite")}
        cost["total"] = sum(cost.values())
        return {**u, "totalTokens": sum(u.values()), "cost": cost}

    mixed: list[dict[str, Any]] = []
    for i in range(40):
        kind = rng.choice(
            ["assistant", "assistant", "respmodel", "tool", "tool_nousage", "compaction", "branch", "user"]
        )
        if kind in ("assistant", "respmodel"):
            msg: dict[str, Any] = {
                "role": "assistant",
                "provider": rng.choice(["anthropic", "openai"]),
                "model": rng.choice(["m1", "m2"]),
                "usage": usage(),
            }
            if kind == "respmodel":
                msg["responseModel"] = "m1-2026"
            mixed.append({"type": "message", "id": str(i), "message": msg})
        elif kind == "tool":
            mixed.append(
                {"type": "message", "id": str(i), "message": {"role": "toolResult", "usage": usage()}}
            )
        elif kind == "tool_nousage":
            mixed.append({"type": "message", "id": str(i), "message": {"role": "toolResult"}})
        elif kind in ("compaction", "branch"):
            mixed.append(
                {
                    "type": "compaction" if kind == "compaction" else "branch_summary",
                    "id": str(i),
                    "usage": usage(),
                }
            )
        else:
            mixed.append({"type": "message", "id": str(i), "message": {"role": "user", "content": "hi"}})
    zero = {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    mixed.append(
        {
            "type": "message",
            "id": "z",
            "message": {"role": "assistant", "provider": "x", "model": "empty", "usage": zero},
        }
    )
    out.append(mixed)
    return out


def main() -> None:
    rng = random.Random(1536)
    cases = [
        {"provider": m["provider"], "id": m["id"], "usage": usage}
        for m in models()
        for usage in usages(m, rng)
    ]
    costs = pi_ai("calculateCost", {"cases": cases})
    for case, cost in zip(cases, costs, strict=True):
        case["cost"] = cost
    session_list = sessions()
    breakdowns = pi_ai("usageCostBreakdown", {"sessions": session_list})
    recorded: list[dict[str, Any]] = [
        {"file": f, "breakdown": b} for f, b in zip(FIXTURES, breakdowns, strict=False)
    ]
    recorded += [
        {"entries": e, "breakdown": b}
        for e, b in zip(session_list[len(FIXTURES) :], breakdowns[len(FIXTURES) :], strict=True)
    ]
    lines = [json.dumps(case, separators=(",", ":")) for case in cases]
    text = (
        '{"source": "@earendil-works/pi-ai@0.85.0 calculateCost, pi-coding-agent getUsageCostBreakdown",\n'
        f'"sessions": {json.dumps(recorded, separators=(",", ":"))},\n'
        '"cases": [\n' + ",\n".join(lines) + "\n]}\n"
    )
    OUT.write_text(text, encoding="utf-8")
    print(
        f"wrote {OUT.name}: {len(cases)} cases over {len({(c['provider'], c['id']) for c in cases})} models"
    )


if __name__ == "__main__":
    main()
