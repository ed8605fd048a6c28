"""The answers of the ``anthropic-messages`` API as pi-ai 0.85.0 records them: for each canned
answer of ``tests/golden/wire_answers_anthropic.json.gz`` (made by
``tests/golden/make_wire_answers_anthropic.py``: every HTTP error shape, in-stream errors, SSE
framing quirks, refusals, stop reasons, redacted thinking and signatures, cache usage, the
server-side fallback, the auth variants), pi_nb's ``AnthropicModel`` sends the same requests and
records the same final message and events, and overflow detection agrees with Pi's.

The provider runs its real HTTP code over an in-process capturing transport.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import wire_cases
from wire_capture import CaptureTransport

from pi_nb.compaction import is_context_overflow
from pi_nb.providers.base import Context, StreamOptions
from pi_nb.providers.registry import get_model

with gzip.open(
    Path(__file__).parent / "golden" / "wire_answers_anthropic.json.gz", "rt", encoding="utf-8"
) as _f:
    GOLDEN = json.load(_f)
CASES = {c["name"]: c for c in GOLDEN["cases"]}
UA = json.loads((Path(__file__).parent / "golden" / "wire_user_agent.json").read_text("utf-8"))["userAgent"]
CASE_ENV = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "PI_CACHE_RETENTION")


def _rle(events: list[dict[str, Any]]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for event in events:
        idx = event.get("contentIndex")
        if out and out[-1][0] == event["type"] and out[-1][1] == idx:
            out[-1][2] += 1
        else:
            out.append([event["type"], idx, 1])
    return out


def _clean(message: Any) -> Any:
    """The message as JSON, its wall-clock times (and the diagnostics') zeroed."""
    message = json.loads(json.dumps(message))
    if isinstance(message, dict):
        message["timestamp"] = 0
        for diagnostic in message.get("diagnostics") or []:
            diagnostic["timestamp"] = 0
    return message


@pytest.fixture
def case_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    for name, value in wire_cases.fake_env(
        {p: list(provider_api_key_env(p)) for p in list_providers()}
    ).items():
        monkeypatch.setenv(name, value)
    for name in CASE_ENV:
        monkeypatch.delenv(name, raising=False)

    def apply(env: dict[str, str]) -> None:
        for name, value in env.items():
            monkeypatch.setenv(name, value)

    return apply


def _run(case: dict[str, Any]) -> tuple[list[dict[str, Any]], Any, list[list[Any]], Any]:
    from pi_nb.providers.simple_options import pi_user_agent

    transport = CaptureTransport(case["responses"])
    # Pi's retry.provider.maxRetries setting is the model's max_retries (unset: 0 in both)
    retries = {} if case["maxRetries"] is None else {"max_retries": case["maxRetries"]}
    model = get_model(f"{case['provider']}/{case['model']}", transport=transport, **retries)
    raw = model.pi_ai_model()
    ctx = case.get("context") or wire_cases.context_for(raw, case["conversation"])
    context = Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools"))
    level = case["level"]
    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)

    async def go() -> tuple[list[dict[str, Any]], Any]:
        events, final = [], None
        async for event in model.stream(context, options):
            events.append(event)
            if event["type"] == "done":
                final = event["message"]
            elif event["type"] == "error":
                final = event["error"]
        return events, final

    events, final = asyncio.run(go())
    ua = pi_user_agent()
    requests = [wire_cases.comparable(q, ua) for q in transport.requests]
    return requests, final, _rle(events), model


@pytest.mark.parametrize("name", list(CASES))
def test_answer_is_recorded_as_pi_ai_records_it(name: str, case_env: Any) -> None:
    case = CASES[name]
    case_env(case["env"])
    requests, final, events, model = _run(case)
    assert requests == case["requests"]
    assert _clean(final) == _clean(case["message"])
    assert events == case["events"]
    assert is_context_overflow(final, model.context_window) is case["overflow"]


def test_the_golden_covers_the_shapes() -> None:
    """Every error status and framing quirk the brief of this API names is a case."""
    assert {c["responses"][0]["status"] for c in GOLDEN["cases"]} >= {200, 400, 401, 413, 429, 500, 502, 529}
    messages = {n: c["message"] for n, c in CASES.items()}
    assert messages["no_trailing_newline"]["stopReason"] == "stop"
    assert (
        "request_too_large" in messages["http_413_json"]["errorMessage"]
        and CASES["http_413_json"]["overflow"]
    )
    assert any(b.get("redacted") for b in messages["redacted_thinking"]["content"])
    assert messages["usage_cache_reads_and_writes"]["usage"]["cacheWrite1h"] == 1000
    assert CASES["oauth_subscription_token"]["requests"][0]["headers"]["authorization"].startswith(
        "Bearer sk-ant-oat"
    )
    assert "x-api-key" not in CASES["auth_token_bearer"]["requests"][0]["headers"]


class _Signal:
    """An abort signal that fires once it has been read ``after`` times."""

    def __init__(self, after: int) -> None:
        self.after = after

    @property
    def aborted(self) -> bool:
        self.after -= 1
        return self.after < 0


@pytest.mark.parametrize(
    ("after", "message", "requests"),
    [
        # aborted before the request: the SDK's abort, worded by pi-ai's retryProviderRequest
        (0, "Request aborted", 0),
        # aborted while the answer streams: pi-ai's SSE reader
        (1, "Request was aborted", 1),
    ],
)
def test_abort_is_recorded_as_pi_ai_records_it(
    after: int, message: str, requests: int, case_env: Any
) -> None:
    transport = CaptureTransport([wire_cases.canned_response("anthropic-messages")])
    model = get_model("anthropic/claude-sonnet-4-5", transport=transport)
    context = Context("be brief", [{"role": "user", "content": "hi", "timestamp": 1}])

    async def go() -> list[dict[str, Any]]:
        return [e async for e in model.stream(context, StreamOptions(signal=_Signal(after)))]

    events = asyncio.run(go())
    assert events[-1]["type"] == "error" and events[-1]["reason"] == "aborted"
    assert events[-1]["error"]["stopReason"] == "aborted"
    assert events[-1]["error"]["errorMessage"] == message
    assert len(transport.requests) == requests


class _CutStream(httpx.AsyncByteStream):
    def __init__(self, head: bytes) -> None:
        self.head = head

    async def __aiter__(self) -> Any:
        yield self.head
        raise httpx.ReadError("connection reset by peer")


class _CutTransport(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = wire_cases.canned_response("anthropic-messages")["body"].encode()
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=_CutStream(body[:400])
        )


def test_a_connection_lost_mid_answer_fails_as_nodes_fetch_does(case_env: Any) -> None:
    """Node's fetch rejects the body read with ``TypeError: terminated``; pi-ai records its message."""
    model = get_model("anthropic/claude-sonnet-4-5", transport=_CutTransport())
    context = Context("be brief", [{"role": "user", "content": "hi", "timestamp": 1}])

    async def go() -> list[dict[str, Any]]:
        return [e async for e in model.stream(context, StreamOptions())]

    events = asyncio.run(go())
    assert [e["type"] for e in events][0] == "start"
    assert events[-1]["type"] == "error" and events[-1]["error"]["errorMessage"] == "terminated"
    assert events[-1]["error"]["responseId"] == "msg_1"  # what arrived before the cut is kept
