"""Chat Completions answers of every shape: pi_nb records what pi-ai 0.85.0 records.

Each case of ``tests/golden/make_wire_answers_completions.py`` (HTTP error bodies, errors inside
the stream, odd ends of bodies, reasoning details, tool-call deltas, usage variants, finish
reasons, grammar tools as custom tools) is served by an in-process transport to pi_nb's real provider (the ``openai`` SDK and
the provider's own SSE reading); the final message, the event sequence and the number of requests
must equal pi-ai's (``tests/golden/wire_answers_completions.json``), and for the grammar-tool cases
the request too.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

GOLDEN: dict[str, Any] = json.loads(
    (Path(__file__).parent / "golden" / "wire_answers_completions.json").read_text("utf-8")
)


@pytest.fixture(scope="module", autouse=True)
def _fake_keys() -> Iterator[None]:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    env = wire_cases.fake_env({p: list(provider_api_key_env(p)) for p in list_providers()})
    names = [*env, "PI_CACHE_RETENTION"]
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(env)
    os.environ.pop("PI_CACHE_RETENTION", None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _run(case: dict[str, Any]) -> tuple[Any, list[list[Any]], list[dict[str, Any]]]:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    transport = CaptureTransport(case["responses"])
    model = get_model(case["model"], transport=transport)
    if case.get("compat"):  # Pi's models.json override of the catalog model's compat
        raw = model.pi_model_raw  # type: ignore[attr-defined]
        raw["compat"] = {**(raw.get("compat") or {}), **case["compat"]}
    ctx = case["context"]
    context = Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools"))
    extra = {"max_retries": case["max_retries"]} if "max_retries" in case else {}
    options = StreamOptions(session_id=wire_cases.SESSION_ID, extra=extra)

    async def go() -> tuple[Any, list[list[Any]]]:
        events: list[list[Any]] = []
        final = None
        async for event in model.stream(context, options):
            idx = event.get("contentIndex")
            if events and events[-1][0] == event["type"] and events[-1][1] == idx:
                events[-1][2] += 1
            else:
                events.append([event["type"], idx, 1])
            if event["type"] == "done":
                final = event["message"]
            elif event["type"] == "error":
                final = event["error"]
        return final, events

    final, events = asyncio.run(go())
    message = json.loads(json.dumps({**final, "timestamp": 0}))
    ua = pi_user_agent()
    return message, events, [wire_cases.comparable(q, ua) for q in transport.requests]


def test_the_golden_covers_every_shape() -> None:
    names = set(GOLDEN)
    for prefix in (
        "http_400",
        "http_401",
        "http_413",
        "http_429",
        "http_500",
        "stream_error",
        "reasoning_details",
    ):
        assert any(n.startswith(prefix) for n in names), prefix
    assert {"last_event_without_blank_line", "no_finish_reason", "usage_cached_and_cache_write"} <= names
    assert {"grammar_custom_tool_call_streamed", "grammar_custom_tool_call_replayed"} <= names
    assert all("sent" in GOLDEN[n] for n in names if n.startswith("grammar_"))
    assert sum(GOLDEN[n]["requests"] for n in names if n.startswith("retry_")) > len(
        [n for n in names if n.startswith("retry_")]
    )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_pi_nb_records_what_pi_ai_records(name: str) -> None:
    case = GOLDEN[name]
    message, events, requests = _run(case)
    assert message == case["message"]
    assert events == case["events"]
    assert len(requests) == case["requests"]
    if "sent" in case:
        assert requests == case["sent"]


def test_overflow_is_detected_on_pi_ais_texts() -> None:
    from pi_nb.compaction import is_context_overflow

    message, _, _ = _run(GOLDEN["http_400_context_length"])
    assert is_context_overflow(message, 8192)
    message, _, _ = _run(GOLDEN["http_400_openrouter_metadata_raw"])
    assert is_context_overflow(message, 200_000)
    message, _, _ = _run(GOLDEN["http_500_text"])
    assert not is_context_overflow(message, 200_000)
