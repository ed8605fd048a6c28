"""pi_nb.tokens: Pi's estimateTokens / usage maths, replayed from Pi 0.85.0 answers, plus Pi's own cases.

tests/golden/tokens.json is recorded from the real Pi by tests/golden/make_tokens.py. An answer of
``ok:false`` (Pi threw) or ``NaN`` (recorded as ``null`` for a number) must raise
InvalidMessageError here; cases named ``deviation: ...`` are malformed inputs for which Pi returns a
number and pi_nb deliberately raises.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pi_nb
from pi_nb import (
    ContextTokenEstimate,
    InvalidMessageError,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
)
from pi_nb._js import js_stringify, utf16_len
from pi_nb.tokens import ESTIMATED_IMAGE_CHARS

GOLDEN = json.loads((Path(__file__).parent / "golden" / "tokens.json").read_text(encoding="ascii"))
CASES: list[dict[str, Any]] = GOLDEN["cases"]


def _run(fn: str, args: dict[str, Any]) -> Any:
    if fn == "estimateTokens":
        return estimate_tokens(args["message"])
    if fn == "calculateContextTokens":
        return calculate_context_tokens(args["usage"])
    if fn == "estimateContextTokens":
        return estimate_context_tokens(args["messages"]).to_dict()
    if fn == "getLastAssistantUsage":
        return get_last_assistant_usage(args["entries"])
    raise AssertionError(fn)


def _pi_raises(case: dict[str, Any]) -> bool:
    response = case["response"]
    if not response["ok"]:
        return True
    # NaN goes over the wire as null; for getLastAssistantUsage null is Pi's `undefined`
    return response["result"] is None and case["fn"] in ("estimateTokens", "calculateContextTokens")


def test_golden_file_is_big_enough_and_covers_every_kind() -> None:
    assert len(CASES) >= 500
    fns = {c["fn"] for c in CASES}
    assert fns == {
        "estimateTokens",
        "calculateContextTokens",
        "estimateContextTokens",
        "getLastAssistantUsage",
    }
    roles = {
        c["args"]["message"].get("role")
        for c in CASES
        if c["fn"] == "estimateTokens" and isinstance(c["args"]["message"], dict)
    }
    assert {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    } <= roles
    assert sum(not c["response"]["ok"] for c in CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['fn']}:{c['name']}")
def test_matches_pi(case: dict[str, Any]) -> None:
    if case["name"].startswith("deviation:"):
        assert case["response"]["ok"] and case["response"]["result"] is not None  # Pi returns a value ...
        with pytest.raises(InvalidMessageError):  # ... for malformed data pi_nb refuses
            _run(case["fn"], case["args"])
    elif _pi_raises(case):
        with pytest.raises(InvalidMessageError):
            _run(case["fn"], case["args"])
    else:
        assert _run(case["fn"], case["args"]) == case["response"]["result"]


# --- Pi's own assertions (spec §11.5, §12) -----------------------------------------------------

ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def mock_usage(i: int, o: int, cr: int = 0, cw: int = 0) -> dict[str, Any]:
    """compaction.test.ts createMockUsage: totalTokens is the sum."""
    return {
        "input": i,
        "output": o,
        "cacheRead": cr,
        "cacheWrite": cw,
        "totalTokens": i + o + cr + cw,
        "cost": ZERO_COST,
    }


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def assistant(content: list[Any], usage: dict[str, Any] | None = None, stop: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": usage or mock_usage(0, 0),
        "stopReason": stop,
        "timestamp": 1,
    }


def message_entry(i: int, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"test-id-{i}",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


IMG = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def test_calculate_context_tokens_pi_cases() -> None:
    assert calculate_context_tokens(mock_usage(1000, 500, 200, 100)) == 1800
    assert calculate_context_tokens(mock_usage(0, 0, 0, 0)) == 0


def test_get_last_assistant_usage_pi_cases() -> None:
    entries = [
        message_entry(0, user("Hello")),
        message_entry(1, assistant([], mock_usage(100, 50))),
        message_entry(2, user("more")),
        message_entry(3, assistant([], mock_usage(200, 100))),
    ]
    got = get_last_assistant_usage(entries)
    assert got is not None and got["input"] == 200
    assert got is entries[3]["message"]["usage"]  # the object itself, as in Pi
    entries[3]["message"]["stopReason"] = "aborted"
    assert (get_last_assistant_usage(entries) or {})["input"] == 100
    entries[3]["message"]["stopReason"] = "stop"
    entries[3]["message"]["usage"] = mock_usage(0, 0)
    assert (get_last_assistant_usage(entries) or {})["input"] == 100
    assert get_last_assistant_usage([message_entry(0, user("Hello"))]) is None


def test_estimate_context_tokens_pi_cases() -> None:
    messages = [
        user("Hello"),
        assistant([], mock_usage(100, 50)),
        user("continue"),
        assistant([], mock_usage(0, 0)),
    ]
    result = estimate_context_tokens(messages)
    assert result.usage_tokens == 150
    assert result.last_usage_index == 1
    assert result.trailing_tokens > 0
    assert result.tokens == 150 + result.trailing_tokens
    # harness copy: usage 20 then a user message
    harness = estimate_context_tokens([assistant([], mock_usage(10, 10)), user("next")])
    assert (harness.usage_tokens, harness.last_usage_index) == (20, 0)


def test_estimate_tokens_spec_vectors() -> None:
    assert estimate_tokens(user("plain user")) == 3
    assert estimate_tokens(user([{"type": "text", "text": "abcd"}, IMG])) == 1201
    thinking_call = assistant(
        [
            {"type": "thinking", "thinking": "thinking"},
            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "file.ts"}},
        ]
    )
    assert estimate_tokens(thinking_call) == 8
    tool_result = {
        "role": "toolResult",
        "toolCallId": "1",
        "toolName": "read",
        "content": [{"type": "text", "text": "tool text"}, IMG],
        "isError": False,
        "timestamp": 1,
    }
    assert estimate_tokens(tool_result) == 1203
    bash = {
        "role": "bashExecution",
        "command": "npm run check",
        "output": "ok",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1,
    }
    assert estimate_tokens(bash) == 4
    assert (
        estimate_tokens(
            {"role": "custom", "customType": "x", "content": "custom text", "display": True, "timestamp": 1}
        )
        == 3
    )
    assert (
        estimate_tokens(
            {"role": "compactionSummary", "summary": "compact", "tokensBefore": 1, "timestamp": 1}
        )
        == 2
    )
    # harness: toolResult with text + image is > 1000 tokens; unknown role is 0
    assert estimate_tokens({**tool_result, "content": [{"type": "text", "text": "x" * 100}, IMG]}) > 1000
    assert estimate_tokens({"role": "mystery", "content": "x" * 100}) == 0


def test_context_token_estimate_to_dict() -> None:
    est = ContextTokenEstimate(tokens=10, usage_tokens=7, trailing_tokens=3, last_usage_index=None)
    assert est.to_dict() == {"tokens": 10, "usageTokens": 7, "trailingTokens": 3, "lastUsageIndex": None}
    with pytest.raises(AttributeError):
        est.tokens = 1  # type: ignore[misc]


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: estimate_tokens(user(None)), "user message content must be a string or a list"),
        (
            lambda: estimate_tokens(assistant([{"type": "text"}])),
            "assistant text block 'text' must be a string, got null",
        ),
        (
            lambda: estimate_tokens(assistant([{"type": "toolCall", "name": "x"}])),
            "toolCall block has no 'arguments'",
        ),
        (
            lambda: estimate_tokens(assistant([{"type": "toolCall", "name": "x", "arguments": {1, 2}}])),
            "not JSON data",
        ),
        (lambda: estimate_tokens(None), "must be a mapping"),  # type: ignore[arg-type]
        (
            lambda: calculate_context_tokens({"input": 1, "totalTokens": 0}),
            "missing 'output', 'cacheRead', 'cacheWrite'",
        ),
        (lambda: calculate_context_tokens({**mock_usage(1, 1), "totalTokens": 2.5}), "not a whole number"),
        (
            lambda: calculate_context_tokens({**mock_usage(1, 1), "totalTokens": "2"}),
            "'totalTokens' must be a number, got string",
        ),
        (lambda: get_last_assistant_usage([None]), "session entry 0 must be a mapping"),  # type: ignore[list-item]
    ],
)
def test_errors_are_clear(call: Callable[[], object], fragment: str) -> None:
    with pytest.raises(InvalidMessageError, match=None) as info:
        call()
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_integral_float_usage_is_an_int() -> None:
    value = calculate_context_tokens(
        {"input": 5.0, "output": 6.0, "cacheRead": 0, "cacheWrite": None, "totalTokens": 0}
    )
    assert value == 11 and type(value) is int


# --- properties -------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(TEXT, max_size=5), images=st.integers(0, 3))
def test_user_estimate_is_ceil_of_utf16_chars_over_4(texts: list[str], images: int) -> None:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts] + [IMG] * images
    chars = sum(utf16_len(t) for t in texts) + ESTIMATED_IMAGE_CHARS * images
    assert estimate_tokens(user(blocks)) == math.ceil(chars / 4)
    assert estimate_tokens(user("".join(texts))) == math.ceil(sum(utf16_len(t) for t in texts) / 4)


@settings(max_examples=200, deadline=None)
@given(name=TEXT, args=JSON_VALUES, text=TEXT)
def test_assistant_estimate_counts_name_and_json(name: str, args: Any, text: str) -> None:
    msg = assistant(
        [{"type": "text", "text": text}, {"type": "toolCall", "id": "c", "name": name, "arguments": args}]
    )
    chars = utf16_len(text) + utf16_len(name) + utf16_len(js_stringify(args))
    assert estimate_tokens(msg) == -(-chars // 4)


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 400), max_size=8),
    usages=st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(["stop", "aborted", "error", "length", "toolUse"])),
        max_size=8,
    ),
)
def test_estimate_context_tokens_invariants(sizes: list[int], usages: list[tuple[int, str]]) -> None:
    messages: list[dict[str, Any]] = []
    for i in range(max(len(sizes), len(usages))):
        if i < len(sizes):
            messages.append(user("x" * sizes[i]))
        if i < len(usages):
            messages.append(assistant([], mock_usage(usages[i][0], 0), usages[i][1]))
    est = estimate_context_tokens(messages)
    assert est.tokens == est.usage_tokens + est.trailing_tokens
    usable = [
        i
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        and m["stopReason"] not in ("aborted", "error")
        and m["usage"]["totalTokens"] > 0
    ]
    if usable:
        assert est.last_usage_index == usable[-1]
        assert est.usage_tokens == messages[usable[-1]]["usage"]["totalTokens"]
        assert est.trailing_tokens == sum(estimate_tokens(m) for m in messages[usable[-1] + 1 :])
    else:
        assert est.last_usage_index is None and est.usage_tokens == 0
        assert est.tokens == sum(estimate_tokens(m) for m in messages)
    entries = [message_entry(i, m) for i, m in enumerate(messages)]
    last = get_last_assistant_usage(entries)
    assert last == (messages[usable[-1]]["usage"] if usable else None)


# --- public API --------------------------------------------------------------------------------


def test_exported_from_the_package() -> None:
    from pi_nb import tokens

    assert sorted(tokens.__all__) == sorted(set(tokens.__all__))  # order: ruff's RUF022 (isort style)
    for name in tokens.__all__:
        if name in pi_nb.__all__:  # the top level re-exports the user-facing ones (a curated list)
            assert getattr(pi_nb, name) is getattr(tokens, name)
    assert {"count_tokens", "estimate_tokens", "calculate_context_tokens"} <= set(pi_nb.__all__)


def test_import_does_not_load_tiktoken() -> None:
    import subprocess

    code = "import sys, pi_nb; print('tiktoken' in sys.modules, pi_nb.tokens._cache)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False {}"


# --- optional differential check against the real Pi ------------------------------------------


@pytest.mark.oracle
def test_oracle_differential_random() -> None:
    """Optional: fresh random messages and entry lists through Pi and pi_nb (skipped without the oracle)."""
    import importlib.util
    import random

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared" / "pi-oracle"))
    oracle_client = pytest.importorskip("oracle_client")
    if not oracle_client.oracle_available():
        pytest.skip("pi-oracle not installed")
    spec = importlib.util.spec_from_file_location(
        "make_tokens", Path(__file__).parent / "golden" / "make_tokens.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)  # the golden generator's random message builders

    rng = random.Random()
    with oracle_client.Oracle() as o:
        for _ in range(1500):
            message = gen.rand_message(rng)
            case = {"fn": "estimateTokens", "name": "random", "args": {"message": message}}
            case["response"] = o.request("estimateTokens", case["args"])
            test_matches_pi(case)
        for _ in range(150):
            entries = [gen.entry(rng, j) for j in range(rng.randint(0, 15))]
            messages = [e["message"] for e in entries if e["type"] == "message"]
            for fn, args in (
                ("getLastAssistantUsage", {"entries": entries}),
                ("estimateContextTokens", {"messages": messages}),
            ):
                test_matches_pi({"fn": fn, "name": "random", "args": args, "response": o.request(fn, args)})
