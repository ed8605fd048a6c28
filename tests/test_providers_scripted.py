"""ScriptedModel: the queue, the recorded requests, the event stream shape."""

from __future__ import annotations

import asyncio

from pi_nb.providers import Context, ScriptedModel, StreamOptions


def _collect(model: ScriptedModel, ctx: Context) -> list[dict]:
    async def run() -> list[dict]:
        return [dict(e) async for e in model.stream(ctx, StreamOptions(max_tokens=5))]

    return asyncio.run(run())


def test_text_response_streams_and_records_the_request() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("hello", usage=m.usage(10, 2)))
    ctx = Context("sys", [{"role": "user", "content": "hi", "timestamp": 1}])
    events = _collect(m, ctx)
    assert [e["type"] for e in events] == ["start", "text_start", "text_delta", "text_end", "done"]
    final = events[-1]["message"]
    assert final["content"] == [{"type": "text", "text": "hello"}]
    assert final["usage"]["totalTokens"] == 12
    assert m.requests[0].context.system_prompt == "sys"
    assert m.requests[0].options.max_tokens == 5
    assert m.pending == 0


def test_exceptions_and_empty_queue_become_error_events() -> None:
    m = ScriptedModel([RuntimeError("prompt is too long: 300000 tokens > 200000 maximum")])
    ctx = Context(None, [])
    events = _collect(m, ctx)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["stopReason"] == "error"
    assert "prompt is too long" in events[-1]["error"]["errorMessage"]
    final = asyncio.run(m.complete(ctx))
    assert final["errorMessage"] == "ScriptedModel: no response queued"


def test_tool_call_and_callable_items() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("read", {"path": "a.txt"}, id="c1"))
    m.enqueue(lambda ctx, opts: m.text(f"{len(ctx.messages)} messages"))
    ctx = Context(None, [{"role": "user", "content": "x", "timestamp": 1}])
    first = asyncio.run(m.complete(ctx))
    assert first["stopReason"] == "toolUse"
    assert first["content"][0] == {
        "type": "toolCall",
        "id": "c1",
        "name": "read",
        "arguments": {"path": "a.txt"},
    }
    second = asyncio.run(m.complete(ctx))
    assert second["content"][0]["text"] == "1 messages"


def test_with_overrides_copies() -> None:
    m = ScriptedModel(context_window=1000)
    small = m.with_overrides(context_window=100)
    assert (m.context_window, small.context_window) == (1000, 100)
    assert small.describe()["contextWindow"] == 100
