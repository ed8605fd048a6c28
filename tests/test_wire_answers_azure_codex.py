"""What pi_nb records of each answer of the ``azure-openai-responses`` and ``openai-codex-responses``
APIs equals what pi-ai 0.85.0 records (``tests/golden/wire_answers_azure_codex.json``, made by
``tests/golden/make_wire_answers_azure_codex.py``): every Responses answer of the
``openai-responses`` answer cases (HTTP errors, in-stream errors, recorded streams, reasoning,
grammar tools, deferred tools...) through both, Codex's own answers (ChatGPT usage limits,
``response.done`` with ``end_turn``, unknown statuses, its SSE framing), and both retry loops. The
final message, the event sequence and the number of requests; for the grammar and deferred-tool
conversations, the request too.

pi_nb's real providers run over an in-process transport serving the same bytes (no Node)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

GOLDEN_DIR = Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN_DIR))
import make_wire_answers_azure_codex as azure_codex  # noqa: E402
import make_wire_answers_responses as answers  # noqa: E402

GOLDEN = json.loads((GOLDEN_DIR / "wire_answers_azure_codex.json").read_text(encoding="utf-8"))
CASES = {c["name"]: c for c in azure_codex.cases()}


@pytest.fixture(scope="module", autouse=True)
def _fake_keys() -> Any:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    env = wire_cases.fake_env({p: list(provider_api_key_env(p)) for p in list_providers()})
    saved = {k: os.environ.get(k) for k in [*env, "PI_CACHE_RETENTION"]}
    os.environ.update(env)
    os.environ.pop("PI_CACHE_RETENTION", None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _run(case: dict[str, Any]) -> tuple[list[dict[str, Any]], Any, list[list[Any]]]:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.catalog import find_model
    from pi_nb.providers.registry import get_model

    spec = find_model(case["provider"], case["model"])
    assert spec is not None
    transport = CaptureTransport(case["responses"])
    # Pi's provider retries are off unless settings ask for them (retry.provider.maxRetries)
    model = get_model(
        f"{case['provider']}/{case['model']}", transport=transport, max_retries=case["max_retries"]
    )
    ctx = answers.context_for(dict(spec.raw), case["conversation"])
    level = case["level"]
    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)

    async def go() -> tuple[Any, list[list[Any]]]:
        events: list[list[Any]] = []
        final = None
        async for event in model.stream(
            Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), options
        ):
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
    return transport.requests, final, events


def _clean(message: Any) -> Any:
    return json.loads(json.dumps({**message, "timestamp": 0}))


def test_the_golden_has_every_case() -> None:
    assert set(GOLDEN) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pi_nb_records_what_pi_ai_records(name: str) -> None:
    want = GOLDEN[name]
    requests, message, events = _run(CASES[name])
    assert len(requests) == want["requests"]
    if "request" in want:  # grammar and strict tools, custom calls; tools a result adds (deferred)
        from pi_nb.providers.simple_options import pi_user_agent

        assert wire_cases.comparable(requests[0], pi_user_agent()) == want["request"]
    assert _clean(message) == _clean(want["message"])
    assert events == want["events"]


@pytest.mark.parametrize(
    ("name", "path"),
    [
        (
            "azure-openai-responses|recorded_reasoning_summary|azure-openai-responses/gpt-5.5|tools|medium",
            "/openai/v1/responses",
        ),
        (
            "azure-openai-responses|http_400_context_length|azure-openai-responses/gpt-5.5|tools|medium",
            "/openai/v1/responses",
        ),
        (
            "openai-codex-responses|recorded_reasoning_summary|openai-codex/gpt-5.5|tools|medium",
            "/codex/responses",
        ),
        (
            "openai-codex-responses|codex_usage_limit_plan|openai-codex/gpt-5.5|tools|medium",
            "/codex/responses",
        ),
    ],
)
def test_over_a_real_socket_the_answer_is_the_same(
    name: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a transport the providers use their own HTTP clients (the SDK's Azure client, plain
    httpx for Codex): served from a local server, the recorded message is pi-ai's."""
    from replay_server import ReplayServer

    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.catalog import find_model
    from pi_nb.providers.registry import get_model

    case = CASES[name]
    response = case["responses"][0]
    server = ReplayServer()
    try:
        content_type = (response["headers"] or {}).get("content-type", "application/octet-stream")
        server.routes[path] = (response["status"], content_type, (response["body"] or "").encode("utf-8"))
        spec = find_model(case["provider"], case["model"])
        assert spec is not None
        # Azure: the model's base URL is the last choice, after $AZURE_OPENAI_BASE_URL / _RESOURCE_NAME
        monkeypatch.delenv("AZURE_OPENAI_RESOURCE_NAME", raising=False)
        base_url = server.url + path.removesuffix("/responses")  # .../openai/v1, .../codex
        model = get_model(f"{case['provider']}/{case['model']}", base_url=base_url, max_retries=0)
        ctx = answers.context_for(dict(spec.raw), case["conversation"])
        options = StreamOptions(reasoning=case["level"], session_id=wire_cases.SESSION_ID)
        message = asyncio.run(
            model.complete(Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), options)
        )
        assert _clean(message) == _clean(GOLDEN[name]["message"])
        assert len(server.requests) == 1 and server.requests[0]["path"].split("?")[0] == path
    finally:
        server.shutdown()


def test_an_aborted_signal_stops_codex_before_it_sends() -> None:
    """pi-ai's Codex loop checks the signal before each attempt: nothing is sent, the message is
    ``aborted`` with ``Request was aborted``."""
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model

    class Aborted:
        aborted = True

    transport = CaptureTransport([wire_cases.canned_response("openai-codex-responses")])
    model = get_model("openai-codex/gpt-5.5", transport=transport)
    message = asyncio.run(
        model.complete(
            Context("s", [{"role": "user", "content": "hi", "timestamp": 1}]), StreamOptions(signal=Aborted())
        )
    )
    assert (message["stopReason"], message.get("errorMessage")) == ("aborted", "Request was aborted")
    assert transport.requests == []
