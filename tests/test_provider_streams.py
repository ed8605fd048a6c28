"""Real recorded provider streams replayed through pi_nb's providers, compared with pi-ai 0.85.0.

Each case of ``tests/golden/make_streams.py`` serves one body of ``tests/fixtures/streams/``
(recordings from public SDK test suites and VCR cassettes, sources in ``SOURCES.md``) from a local
server; pi_nb's provider reads it through the real ``openai`` / ``anthropic`` SDK. The final assistant
message and the event sequence must equal what pi-ai made of the same bytes
(``tests/golden/streams.json``), after removing what legitimately differs (timestamps). Where pi_nb
is deliberately better the difference is asserted explicitly: error texts keep the provider's message
whatever the body shape (pi-ai loses Gemini's array body), Mistral's typed content parts become text
and thinking (pi-ai concatenates the objects as ``[object Object]``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("anthropic")

from replay_server import ReplayServer

from pi_nb.compaction import is_context_overflow
from pi_nb.providers import Context, StreamOptions
from pi_nb.providers._stream_common import parse_streaming_json, parse_tool_arguments
from pi_nb.providers.anthropic_provider import AnthropicModel, to_anthropic_messages
from pi_nb.providers.base import Model
from pi_nb.providers.openai_compat import OpenAICompatModel, to_openai_messages
from pi_nb.providers.openai_responses import OpenAIResponsesProvider, short_hash, to_responses_input

GOLDEN_DIR = Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN_DIR))
import make_streams  # noqa: E402
from make_streams import CASES, A, C, Case, R  # noqa: E402

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "streams.json").read_text("utf-8"))
PI = GOLDEN["cases"]
BY_NAME = {case.name: case for case in CASES}

# pi_nb's errorMessage for every failing case: "{HTTP status} {the provider's own message}"
# (anthropic-messages: pi-ai's own text).
ERRORS = {
    "openrouter_reasoning_text_length": "Token limit reached",
    "deepseek_cut_before_finish": "Stream ended without finish_reason",
    # Chat Completions: pi-ai's texts (formatProviderError of the JS SDK's error)
    "error_lmstudio_string": '400 "The number of tokens to keep from the initial prompt is greater than the '
    'context length. Try to load the model with a larger context length, or provide a shorter input"',
    "error_lmstudio_in_stream": '"The number of tokens to keep from the initial prompt is greater than the '
    'context length. Try to load the model with a larger context length, or provide a shorter input"',
    "error_gemini_array": "400 status code (no body)",
    "error_groq_context_length": '400: {"message":"Please reduce the length of the messages or completion.",'
    '"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}',
    "error_llamacpp_context_size": '400: {"code":400,"message":"the request exceeds the available context size. '
    'try increasing the context size or enable context shift","type":"exceed_context_size_error",'
    '"n_prompt_tokens":14429,"n_ctx":8192}',
    # anthropic-messages: the JS SDK's text, "{status} {the body's JSON}", as pi-ai writes it
    "error_anthropic_prompt_too_long": '400 {"type":"error","error":{"type":"invalid_request_error",'
    '"message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}',
    "error_anthropic_rate_limit": '429 {"type":"error","error":{"type":"rate_limit_error","message":"This request '
    "would exceed the rate limit for your organization (d3f27ff7-9afe-4ee2-9645-76ecfc73c2b7) of 40,000 input "
    "tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the "
    "response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try "
    "again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options "
    'for a rate limit increase."}}',
    "responses_error_event": "You exceeded your current quota, please check your plan and billing details. "
    "For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "responses_context_length_event": "Your input exceeds the context window of this model. "
    "Please adjust your input and try again.",
}
# pi-ai 0.85.0 drops the body of an error whose JSON is an array (the JS SDK reads only objects)
PI_LOSES_TEXT = {"error_gemini_array"}


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    srv = ReplayServer()
    make_streams.serve(srv)
    yield srv
    srv.shutdown()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", make_streams.API_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", make_streams.API_KEY)


def provider_for(case: Case, server: ReplayServer) -> Model:
    kwargs: dict[str, Any] = {
        "provider": case.provider,
        "base_url": make_streams.base_url(server.url, case),
        "context_window": make_streams.CONTEXT_WINDOW,
        "max_tokens": 8192,
        "reasoning": case.reasoning,
        "max_retries": 0,
    }
    cls = {C: OpenAICompatModel, A: AnthropicModel, R: OpenAIResponsesProvider}[case.api]
    return cls(case.model, **kwargs)


def run(model: Model, case: Case) -> tuple[dict[str, Any], list[list[Any]]]:
    ctx = Context(
        make_streams.SYSTEM_PROMPT,
        make_streams.MESSAGES,
        make_streams.TOOLS if case.tools else None,  # type: ignore[arg-type]
    )

    async def go() -> tuple[dict[str, Any], list[list[Any]]]:
        events: list[list[Any]] = []
        final: dict[str, Any] | None = None
        async for event in model.stream(ctx, StreamOptions()):
            idx = event.get("contentIndex")
            if events and events[-1][0] == event["type"] and events[-1][1] == idx:
                events[-1][2] += 1
            else:
                events.append([event["type"], idx, 1])
            if event["type"] == "done":
                final = event["message"]
            elif event["type"] == "error":
                final = event["error"]
        assert final is not None
        return json.loads(json.dumps(final)), events

    return asyncio.run(go())


def normalise(message: dict[str, Any]) -> dict[str, Any]:
    """Drop what differs legitimately; compare Responses reasoning items as JSON values."""
    out = {k: v for k, v in message.items() if k not in ("timestamp", "errorMessage")}
    content = []
    for block in out.get("content", []):
        block = dict(block)
        if block.get("type") == "thinking" and str(block.get("thinkingSignature", "")).startswith(("{", "[")):
            block["thinkingSignature"] = json.loads(block["thinkingSignature"])
        content.append(block)
    out["content"] = content
    return out


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_replay_equals_pi(name: str, server: ReplayServer) -> None:
    case = BY_NAME[name]
    mine, events = run(provider_for(case, server), case)
    pi = PI[name]
    if case.api == R and pi["events"] and pi["events"][0][0] != "start":
        # pi-ai emits "start" only once the HTTP response is accepted; pi_nb's Responses provider
        # always opens the stream (its Chat Completions and Anthropic providers are pi-ai's)
        assert events[0] == ["start", None, 1]
        events = events[1:]
    if name == "mistral_list_content" and case.api != C:
        # Better than Pi: typed content parts are thinking and text (Pi: "[object Object]" x 3)
        assert pi["message"]["content"] == [{"type": "text", "text": "[object Object]" * 3}]
        assert mine["content"] == [
            {"type": "thinking", "thinking": "The user is asking for 2+2. This is basic arithmetic. 2+2=4."},
            {"type": "text", "text": "2 + 2 = 4"},
        ]
        assert {**normalise(mine), "content": []} == {**normalise(pi["message"]), "content": []}
        return
    assert normalise(mine) == normalise(pi["message"])
    assert events == pi["events"]
    expected_error = ERRORS.get(name)
    assert mine.get("errorMessage") == expected_error
    if expected_error is not None and name not in PI_LOSES_TEXT:
        provider_text = expected_error.split(" ", 1)[1] if expected_error[:3].isdigit() else expected_error
        assert provider_text.replace('"', "") in pi["message"]["errorMessage"].replace('\\"', "").replace(
            '"', ""
        )
    assert is_context_overflow(mine, make_streams.CONTEXT_WINDOW) is pi["overflow"]


def test_every_fixture_has_a_source_and_a_case() -> None:
    sources = (Path(__file__).parent / "fixtures" / "streams" / "SOURCES.md").read_text("utf-8")
    fixtures = {
        p.name for p in (Path(__file__).parent / "fixtures" / "streams").iterdir() if p.name != "SOURCES.md"
    }
    # the Gemini recordings are replayed by the Google answers golden (make_wire_answers_google.py)
    google_script = (Path(__file__).parent / "golden" / "make_wire_answers_google.py").read_text("utf-8")
    google = {name for name in fixtures if f'"{name}"' in google_script}
    assert google and fixtures - google == {case.fixture for case in CASES} - google
    for name in fixtures:
        assert f"`{name}`" in sources, name
    assert set(PI) == set(BY_NAME)


def test_signatures_let_the_reasoning_go_back(server: ReplayServer) -> None:
    """The next turn sends each provider's reasoning back in the field it came in."""
    deepseek, _ = run(
        provider_for(BY_NAME["deepseek_reasoning_tool_call"], server), BY_NAME["deepseek_reasoning_tool_call"]
    )
    groq, _ = run(provider_for(BY_NAME["groq_reasoning_field"], server), BY_NAME["groq_reasoning_field"])
    orouter, _ = run(
        provider_for(BY_NAME["openrouter_reasoning_encrypted"], server),
        BY_NAME["openrouter_reasoning_encrypted"],
    )
    assert deepseek["content"][0]["thinkingSignature"] == "reasoning_content"
    assert groq["content"][0]["thinkingSignature"] == "reasoning"
    details = json.loads(orouter["content"][0]["thinkingSignature"])
    assert [d["type"] for d in details] == ["reasoning.encrypted"] and details[0]["data"].startswith("gAAAAA")

    def sent(msg: dict[str, Any], case: Case) -> dict[str, Any]:
        ctx = Context(
            None, [*make_streams.MESSAGES, msg, {"role": "user", "content": "more", "timestamp": 3}]
        )
        return to_openai_messages(ctx, target=(case.provider, C, case.model))[1]

    ds = sent(deepseek, BY_NAME["deepseek_reasoning_tool_call"])
    assert ds["reasoning_content"] == deepseek["content"][0]["thinking"] and ds["tool_calls"]
    assert sent(groq, BY_NAME["groq_reasoning_field"])["reasoning"] == groq["content"][0]["thinking"]
    assert sent(orouter, BY_NAME["openrouter_reasoning_encrypted"])["reasoning_details"] == details
    # another model gets the reasoning as text, never the other provider's fields
    other = to_openai_messages(Context(None, [deepseek]), target=("openai", C, "gpt-4.1"))[0]
    assert "reasoning_content" not in other and deepseek["content"][0]["thinking"] in other["content"]


def test_responses_reasoning_items_are_sent_back(server: ReplayServer) -> None:
    case = BY_NAME["responses_reasoning_encrypted_tool_call"]
    model = provider_for(case, server)
    first, _ = run(model, case)
    calls = [b for b in first["content"] if b["type"] == "toolCall"]
    assert first["stopReason"] == "toolUse" and len(calls) == 3
    assert all("|fc_" in c["id"] for c in calls)
    history = [
        *make_streams.MESSAGES,
        first,
        *(
            {
                "role": "toolResult",
                "toolCallId": c["id"],
                "toolName": c["name"],
                "content": [{"type": "text", "text": "19"}],
                "isError": False,
                "timestamp": 2,
            }
            for c in calls
        ),
    ]
    items = to_responses_input(
        Context("be brief", history), provider="openai", model_id=case.model, reasoning=True
    )
    assert items[0] == {"role": "developer", "content": "be brief"}
    reasoning = items[2]
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"].startswith("gAAAAA")
    assert reasoning == json.loads(first["content"][0]["thinkingSignature"])
    fcs = [i for i in items if i.get("type") == "function_call"]
    assert [f["id"] for f in fcs] == [c["id"].split("|")[1] for c in calls]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [c["id"].split("|")[0] for c in calls]
    # the request the provider really sends carries them, with store: false and the encrypted include
    server.requests.clear()
    asyncio.run(model.complete(Context("be brief", history), StreamOptions(reasoning="high", max_tokens=8)))
    body = server.requests[-1]["body"]
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"} and body["max_output_tokens"] == 16
    assert body["input"][2]["encrypted_content"] == reasoning["encrypted_content"]
    # a different model of the same API does not get the reasoning item
    other = to_responses_input(Context(None, history), provider="openai", model_id="gpt-4.1")
    assert not any(i.get("type") == "reasoning" for i in other)
    assert not any("id" in i for i in other if i.get("type") == "function_call")


def test_redacted_thinking_goes_back_opaque(server: ReplayServer) -> None:
    case = BY_NAME["anthropic_redacted_thinking"]
    msg, _ = run(provider_for(case, server), case)
    blocks = to_anthropic_messages(Context(None, [msg]))[0]["content"]
    assert [b["type"] for b in blocks] == ["redacted_thinking", "redacted_thinking", "text"]
    assert blocks[0]["data"] == msg["content"][0]["thinkingSignature"]


def test_short_hash_is_pis() -> None:
    assert GOLDEN["short_hash"] and {k: short_hash(k) for k in GOLDEN["short_hash"]} == GOLDEN["short_hash"]
    assert set(GOLDEN["short_hash"]) == set(make_streams.HASH_INPUTS)


def test_responses_signatures_are_the_items_as_sent(server: ReplayServer) -> None:
    """The reasoning item is kept as the provider's JSON, byte for byte as pi-ai keeps it."""
    for name in ("responses_reasoning_encrypted_tool_call", "responses_reasoning_summary"):
        case = BY_NAME[name]
        mine, _ = run(provider_for(case, server), case)
        pi = PI[name]["message"]
        assert [b.get("thinkingSignature") for b in mine["content"]] == [
            b.get("thinkingSignature") for b in pi["content"]
        ]
        assert [b.get("textSignature") for b in mine["content"]] == [
            b.get("textSignature") for b in pi["content"]
        ]


def test_cost_function_is_applied_when_usage_is_final(server: ReplayServer) -> None:
    seen: list[dict[str, Any]] = []

    def cost(usage: Any) -> dict[str, float]:
        seen.append(dict(usage))
        total = usage["input"] * 1e-6 + usage["output"] * 2e-6
        return {
            "input": usage["input"] * 1e-6,
            "output": usage["output"] * 2e-6,
            "cacheRead": 0.0,
            "cacheWrite": 0.0,
            "total": total,
        }

    for name in (
        "deepseek_reasoning_tool_call",
        "anthropic_thinking_signature",
        "responses_reasoning_summary",
    ):
        case = BY_NAME[name]
        model = provider_for(case, server)
        model.cost_function = cost  # type: ignore[attr-defined]
        msg, _ = run(model, case)
        assert seen[-1]["output"] == msg["usage"]["output"] > 0
        assert msg["usage"]["cost"]["total"] == pytest.approx(
            msg["usage"]["input"] * 1e-6 + msg["usage"]["output"] * 2e-6
        )


def _anthropic_shape(body: dict[str, Any]) -> dict[str, Any]:
    """The history part of a Messages request, without prompt-cache markers (pi_nb sends none) and
    with a string user content written as its one text block (the same request to the API)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    messages = []
    for m in strip(body["messages"]):
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        messages.append({"role": m["role"], "content": content})
    system = strip(body.get("system"))
    if isinstance(system, list):
        system = "".join(b["text"] for b in system)
    return {"system": system, "messages": messages}


@pytest.mark.parametrize("name", make_streams.NEXT_TURN)
def test_next_turn_sends_the_history_as_pi_does(name: str, server: ReplayServer) -> None:
    """pi-ai's own answer as history: the request pi_nb sends for the next turn carries it exactly
    as pi-ai's (reasoning fields, reasoning_details, signed/redacted thinking, reasoning items)."""
    case = BY_NAME[name]
    pi_body = GOLDEN["next_turn_requests"][name]
    model = provider_for(case, server)
    server.requests.clear()
    ctx = Context(
        make_streams.SYSTEM_PROMPT,
        make_streams.next_turn_messages(PI[name]["message"]),
        make_streams.TOOLS if case.tools else None,  # type: ignore[arg-type]
    )
    asyncio.run(model.complete(ctx, StreamOptions()))
    mine = next(r for r in reversed(server.requests) if r["path"].split("?")[0] == make_streams.route(case))[
        "body"
    ]
    if case.api == C:
        assert mine["messages"] == pi_body["messages"]
    elif case.api == R:
        # the whole request: input items, store: false, tools, reasoning. The golden is pi-ai's
        # ``stream`` (no maxTokens); Pi's agent calls ``streamSimple``, which always sends the
        # model's limit clamped to the context left (tests/test_wire_requests.py checks that)
        assert mine.pop("max_output_tokens") == 8192
        assert mine == pi_body
    else:
        assert _anthropic_shape(mine) == _anthropic_shape(pi_body)


def test_a_server_known_to_omit_finish_reason_can_be_accepted(server: ReplayServer) -> None:
    case = BY_NAME["deepseek_cut_before_finish"]
    model = provider_for(case, server)
    assert run(model, case)[0]["stopReason"] == "error"  # the default, as in Pi
    model.requires_finish_reason = False  # type: ignore[attr-defined]
    msg, events = run(model, case)
    assert msg["stopReason"] == "stop" and "errorMessage" not in msg and events[-1][0] == "done"
    assert msg["content"][0]["thinkingSignature"] == "reasoning_content"


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        # pi-ai's texts (the JS SDK reads only an object's "error" member), the key redacted
        (401, {"error": "Invalid key sk-test-not-a-real-key"}, '401 "Invalid key [redacted API key]"'),
        (400, {"detail": "This model's maximum context length is 4096 tokens."}, "400 status code (no body)"),
        (
            400,
            {
                "error": {
                    "message": "Provider returned error",
                    "metadata": {"raw": "prompt is too long: 9 > 8"},
                }
            },
            '400: {"message":"Provider returned error","metadata":{"raw":"prompt is too long: 9 > 8"}}',
        ),
        (500, "upstream connect error", "500 upstream connect error"),
    ],
)
def test_error_bodies_of_every_shape_keep_the_text_and_never_the_key(
    status: int, body: Any, expected: str, server: ReplayServer
) -> None:
    payload = (json.dumps(body) if not isinstance(body, str) else body).encode()
    server.routes["/shapes/v1/chat/completions"] = (status, "application/json", payload)
    model = OpenAICompatModel("m", base_url=server.url + "/shapes/v1", max_retries=0)
    msg, _ = run(model, BY_NAME["openai_chat_text"])
    assert msg["stopReason"] == "error" and msg["errorMessage"].startswith(expected)
    assert make_streams.API_KEY not in json.dumps(msg)


def test_streaming_tool_arguments_parse_as_pi() -> None:
    """Every prefix of real-looking tool arguments (and malformed ones) reads as pi-ai reads it."""
    cases = GOLDEN["parse_streaming_json"]
    assert len(cases) > 200
    assert [[text, parse_streaming_json(text)] for text, _ in cases] == cases
    assert parse_tool_arguments("[1, 2") == {} and parse_tool_arguments('{"a": [1, 2') == {"a": [1, 2]}


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages", "mistral"])
def test_a_key_echoed_by_the_server_is_redacted_by_every_provider(
    api: str, server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_nb.providers.mistral_conversations import MistralConversationsModel

    monkeypatch.setenv("MISTRAL_API_KEY", make_streams.API_KEY)
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {make_streams.API_KEY}"}}).encode()
    path, cls = {
        "openai-completions": ("/echo-c/v1/chat/completions", OpenAICompatModel),
        "openai-responses": ("/echo-r/v1/responses", OpenAIResponsesProvider),
        "anthropic-messages": ("/echo-a/v1/messages", AnthropicModel),
        "mistral": ("/echo-m/v1/chat/completions", MistralConversationsModel),
    }[api]
    server.routes[path] = (401, "application/json", body)
    base = (
        server.url
        + path[: path.index("/v1/")]
        + ("" if cls in (AnthropicModel, MistralConversationsModel) else "/v1")
    )
    model = cls("m", base_url=base)
    msg, _ = run(model, BY_NAME["openai_chat_text"])
    assert msg["stopReason"] == "error"
    assert "[redacted API key]" in msg["errorMessage"]
    assert make_streams.API_KEY not in json.dumps(msg)
