"""OpenAI-compatible and Anthropic providers through their real SDKs, against a local HTTP server
on 127.0.0.1 that replays recorded streaming responses (text, tool calls, usage, an overflow error)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from pi_nb.providers import Context, StreamOptions, get_model
from pi_nb.providers.anthropic_provider import AnthropicModel, to_anthropic_messages
from pi_nb.providers.openai_compat import OpenAICompatModel, to_openai_messages

pytest.importorskip("openai")
pytest.importorskip("anthropic")

from replay_server import ReplayServer, oa_chunk, sse

OPENAI_TEXT = sse(
    [
        oa_chunk({"role": "assistant", "content": "Hel"}),
        oa_chunk({"content": "lo"}),
        oa_chunk({}, "stop"),
        oa_chunk(
            None,
            usage={
                "prompt_tokens": 100,
                "completion_tokens": 5,
                "total_tokens": 105,
                "prompt_tokens_details": {"cached_tokens": 60},
            },
        ),
        "[DONE]",
    ]
)
OPENAI_TOOL = sse(
    [
        oa_chunk(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": ""},
                    }
                ],
            }
        ),
        oa_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": '}}]}),
        oa_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"a.txt"}'}}]}),
        oa_chunk({}, "tool_calls"),
        oa_chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}),
        "[DONE]",
    ]
)
OPENAI_OVERFLOW = json.dumps(
    {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
).encode()

ANTHROPIC_TOOL = sse(
    [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 50,
                    "output_tokens": 1,
                    "cache_read_input_tokens": 20,
                    "cache_creation_input_tokens": 5,
                },
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Let me look."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "sig123"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading."}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "seq '},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '3"}'},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    ],
    named=True,
)
ANTHROPIC_OVERFLOW = json.dumps(
    {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 208000 tokens > 200000 maximum",
        },
    }
).encode()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    s = ReplayServer()
    yield s
    s.shutdown()


def collect(model: Any, ctx: Context, options: StreamOptions | None = None) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        return [dict(e) async for e in model.stream(ctx, options)]

    return asyncio.run(run())


CTX = Context(
    "be brief",
    [
        {"role": "user", "content": "hi", "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c0", "name": "read", "arguments": {"path": "x"}}],
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolCallId": "c0",
            "toolName": "read",
            "content": [{"type": "text", "text": "file"}],
            "isError": False,
            "timestamp": 2,
        },
    ],
    [
        {
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ],
)


def test_openai_text_and_usage(server: ReplayServer) -> None:
    server.routes["/v1/chat/completions"] = (200, "text/event-stream", OPENAI_TEXT)
    model = OpenAICompatModel("gpt-test", base_url=server.url + "/v1", max_retries=0)
    events = collect(model, CTX, StreamOptions(max_tokens=50))
    final = events[-1]["message"]
    assert events[-1]["type"] == "done"
    assert final["content"] == [{"type": "text", "text": "Hello"}] and final["stopReason"] == "stop"
    assert {k: final["usage"][k] for k in ("input", "output", "cacheRead", "totalTokens")} == {
        "input": 40,
        "output": 5,
        "cacheRead": 60,
        "totalTokens": 105,
    }
    body = server.requests[0]["body"]
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["messages"][-1] == {"role": "tool", "tool_call_id": "c0", "content": "file"}
    assert body["tools"][0]["function"]["name"] == "read" and body["max_completion_tokens"] == 50
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-test-not-a-real-key"
    assert "sk-test" not in json.dumps(final)


def test_openai_tool_call(server: ReplayServer) -> None:
    server.routes["/v1/chat/completions"] = (200, "text/event-stream", OPENAI_TOOL)
    final = collect(OpenAICompatModel("gpt-test", base_url=server.url + "/v1", max_retries=0), CTX)[-1][
        "message"
    ]
    assert final["stopReason"] == "toolUse"
    assert final["content"] == [
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}
    ]


def test_openai_overflow_error_is_a_value_detected_as_overflow(server: ReplayServer) -> None:
    from pi_nb.compaction import is_context_overflow

    server.routes["/v1/chat/completions"] = (400, "application/json", OPENAI_OVERFLOW)
    events = collect(OpenAICompatModel("gpt-test", base_url=server.url + "/v1", max_retries=0), CTX)
    err = events[-1]
    assert err["type"] == "error" and err["error"]["stopReason"] == "error"
    # pi-ai's text: the status and the JSON of the body's "error" object
    assert err["error"]["errorMessage"].startswith(
        '400: {"message":"This model\'s maximum context length is 8192'
    )
    assert is_context_overflow(err["error"], 8192)


def test_anthropic_thinking_text_tool_and_cache_usage(server: ReplayServer) -> None:
    server.routes["/v1/messages"] = (200, "text/event-stream", ANTHROPIC_TOOL)
    model = AnthropicModel("claude-test", base_url=server.url, max_retries=0)
    events = collect(model, CTX, StreamOptions(reasoning="low", max_tokens=1000))
    final = events[-1]["message"]
    assert [b["type"] for b in final["content"]] == ["thinking", "text", "toolCall"]
    assert final["content"][0] == {
        "type": "thinking",
        "thinking": "Let me look.",
        "thinkingSignature": "sig123",
    }
    assert final["content"][2] == {
        "type": "toolCall",
        "id": "toolu_1",
        "name": "bash",
        "arguments": {"command": "seq 3"},
    }
    assert final["stopReason"] == "toolUse"
    u = final["usage"]
    assert (u["input"], u["output"], u["cacheRead"], u["cacheWrite"], u["totalTokens"]) == (
        50,
        30,
        20,
        5,
        105,
    )
    body = server.requests[0]["body"]
    # pi-ai: the system prompt is a cached block; max_tokens 1000 + the low budget 2048 = 3048, and
    # the budget leaves 1024 tokens for the answer; a text-only tool result is one string, and the
    # last user block carries the cache marker
    cached = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "be brief", "cache_control": cached}]
    assert body["max_tokens"] == 3048
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2024, "display": "summarized"}
    assert body["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "c0",
                "content": "file",
                "is_error": False,
                "cache_control": cached,
            }
        ],
    }
    assert server.requests[0]["path"] == "/v1/messages?beta=true"
    headers = server.requests[0]["headers"]
    assert "sk-ant-test-not-a-real-key" in (headers.get("x-api-key") or headers.get("authorization", ""))


def test_anthropic_overflow(server: ReplayServer) -> None:
    from pi_nb.compaction import is_context_overflow

    server.routes["/v1/messages"] = (400, "application/json", ANTHROPIC_OVERFLOW)
    err = collect(AnthropicModel("claude-test", base_url=server.url, max_retries=0), CTX)[-1]["error"]
    # the JS SDK's text, as pi-ai writes it: the status and the body's JSON
    assert err["errorMessage"] == (
        '400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"prompt is too long: 208000 tokens > 200000 maximum"}}'
    )
    assert is_context_overflow(err)


def test_message_conversion_merges_tool_results_and_images() -> None:
    img = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    ctx = Context(
        None,
        [
            {
                "role": "toolResult",
                "toolCallId": "a",
                "toolName": "read",
                "content": [{"type": "text", "text": "one"}],
                "isError": False,
            },
            {"role": "toolResult", "toolCallId": "b", "toolName": "read", "content": [img], "isError": True},
        ],
    )
    anth = to_anthropic_messages(ctx)
    assert len(anth) == 1 and [b["tool_use_id"] for b in anth[0]["content"]] == ["a", "b"]
    # pi-ai: an image-only tool result gets a placeholder text block before the image
    assert anth[0]["content"][1]["content"][0] == {"type": "text", "text": "(see attached image)"}
    assert anth[0]["content"][1]["content"][1]["source"]["media_type"] == "image/png"
    oa = to_openai_messages(ctx)
    assert [m["role"] for m in oa] == ["tool", "tool", "user"]
    assert oa[2]["content"][1]["image_url"]["url"] == "data:image/png;base64,QUJD"


def test_registry() -> None:
    # pi-ai 0.85.0's catalog gives claude-sonnet-4-5 a 1M window (it was 200k in the old hand table)
    m = get_model("anthropic/claude-sonnet-4-5")
    assert (m.context_window, m.max_tokens, m.reasoning) == (1_000_000, 64_000, True)
    # openai's catalog models speak the Responses API; api= picks Chat Completions
    assert get_model("openai/gpt-4o", api="openai-completions", context_window=8000).context_window == 8000
    assert get_model("offline").provider == "pi_nb"
    with pytest.raises(ValueError, match="Unknown model"):
        get_model("nonsense")
