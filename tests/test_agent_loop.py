"""The agent loop, ported from pi-agent-core's agent-loop.test.ts (spec §11.8) on the ScriptedModel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_nb.agent.loop import (
    AgentContext,
    AgentLoopConfig,
    NextTurnSnapshot,
    TurnSnapshot,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_nb.errors import AgentError
from pi_nb.providers import ScriptedModel


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def identity_convert(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] in ("user", "assistant", "toolResult")]


class EchoTool:
    description = "echo"
    parameters: dict[str, Any] = {"type": "object", "properties": {"value": {"type": "string"}}}
    execution_mode: str | None = None

    def __init__(self, name: str = "echo", delay: float = 0.0, log: list[str] | None = None) -> None:
        self.name = name
        self.delay = delay
        self.log = log if log is not None else []

    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any
    ) -> dict[str, Any]:
        self.log.append(f"start:{tool_call_id}")
        if on_update:
            on_update({"content": [{"type": "text", "text": "partial"}], "details": None})
        await asyncio.sleep(self.delay)
        self.log.append(f"end:{tool_call_id}")
        return {
            "content": [{"type": "text", "text": f"echoed: {params.get('value')}"}],
            "details": {"value": params.get("value")},
        }


def run(prompts, context, config, signal=None):  # type: ignore[no-untyped-def]
    events: list[dict[str, Any]] = []
    result = asyncio.run(run_agent_loop(prompts, context, config, events.append, signal))
    return result, events


def test_events_and_result_for_a_plain_answer() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("Hi there"))
    ctx = AgentContext("You are helpful.", [], [])
    result, events = run([user("Hello")], ctx, AgentLoopConfig(model=m, convert_to_llm=identity_convert))
    types = [e["type"] for e in events]
    for t in ("agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end"):
        assert t in types
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert [r["role"] for r in result] == ["user", "assistant"]
    assert m.requests[0].context.system_prompt == "You are helpful."


def test_custom_roles_are_filtered_by_convert_to_llm() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("ok"))
    notification = {"role": "notification", "text": "ignore me", "timestamp": 1}
    ctx = AgentContext("", [notification], [])
    run([user("Hello")], ctx, AgentLoopConfig(model=m, convert_to_llm=identity_convert))
    assert [msg["role"] for msg in m.requests[0].context.messages] == ["user"]


def test_transform_context_runs_before_convert_to_llm() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("ok"))
    seen: list[int] = []

    async def transform(messages: list[dict[str, Any]], signal: Any) -> list[dict[str, Any]]:
        return messages[-2:]

    def convert(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append(len(messages))
        return identity_convert(messages)

    history = [user("a"), user("b"), user("c")]
    run(
        [user("d")],
        AgentContext("", history, []),
        AgentLoopConfig(model=m, convert_to_llm=convert, transform_context=transform),
    )
    assert seen == [2]
    assert [msg["content"][0]["text"] for msg in m.requests[0].context.messages] == ["c", "d"]


def test_tool_call_and_result_round_trip() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("echo", {"value": "hello"}, id="tool-1"), m.text("done"))
    tool = EchoTool()
    result, events = run(
        [user("go")], AgentContext("", [], [tool]), AgentLoopConfig(model=m, convert_to_llm=identity_convert)
    )
    assert [r["role"] for r in result] == ["user", "assistant", "toolResult", "assistant"]
    tr = result[2]
    assert tr["toolCallId"] == "tool-1" and tr["toolName"] == "echo" and tr["isError"] is False
    assert tr["content"] == [{"type": "text", "text": "echoed: hello"}]
    assert tr["details"] == {"value": "hello"}
    kinds = [e["type"] for e in events]
    assert (
        kinds.index("tool_execution_start")
        < kinds.index("tool_execution_update")
        < kinds.index("tool_execution_end")
    )
    # the second request carries the tool result
    assert m.requests[1].context.messages[-1]["role"] == "toolResult"


def test_length_stop_tool_calls_are_not_executed() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("echo", {"value": "cut"}, id="t1", stop_reason="length"), m.text("retry"))
    tool = EchoTool()
    result, events = run(
        [user("go")], AgentContext("", [], [tool]), AgentLoopConfig(model=m, convert_to_llm=identity_convert)
    )
    assert tool.log == []
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    text = end["result"]["content"][0]["text"]
    assert text == (
        'Tool call "echo" was not executed: the response hit the output token limit, so its arguments may be '
        "truncated. Re-issue the tool call with complete arguments."
    )
    assert len(m.requests) == 2  # the loop makes a second call


def test_unknown_tool_and_thrown_errors_become_error_results() -> None:
    class Boom(EchoTool):
        async def execute(self, *args: Any) -> dict[str, Any]:
            raise RuntimeError("kaput")

    m = ScriptedModel()
    msg = m.message(
        [
            {"type": "toolCall", "id": "a", "name": "missing", "arguments": {}},
            {"type": "toolCall", "id": "b", "name": "boom", "arguments": {}},
        ],
        stop_reason="toolUse",
    )
    m.enqueue(msg, m.text("ok"))
    result, _ = run(
        [user("x")],
        AgentContext("", [], [Boom("boom")]),
        AgentLoopConfig(model=m, convert_to_llm=identity_convert),
    )
    assert result[2]["content"][0]["text"] == "Tool missing not found" and result[2]["isError"]
    assert result[3]["content"][0]["text"] == "kaput" and result[3]["details"] == {}


def test_before_tool_call_can_block_and_mutate_args() -> None:
    m = ScriptedModel()
    m.enqueue(
        m.tool_call("echo", {"value": "x"}, id="a"), m.tool_call("echo", {"value": "y"}, id="b"), m.text("ok")
    )
    tool = EchoTool()

    async def before(ctx: dict[str, Any], signal: Any) -> dict[str, Any] | None:
        if ctx["args"]["value"] == "y":
            return {"block": True, "reason": "no y"}
        ctx["args"]["value"] = "mutated"
        return None

    result, _ = run(
        [user("x")],
        AgentContext("", [], [tool]),
        AgentLoopConfig(model=m, convert_to_llm=identity_convert, before_tool_call=before),
    )
    assert result[2]["content"][0]["text"] == "echoed: mutated"
    assert result[4]["content"][0]["text"] == "no y" and result[4]["isError"]


def test_parallel_end_events_in_completion_order_results_in_source_order() -> None:
    m = ScriptedModel()
    msg = m.message(
        [
            {"type": "toolCall", "id": "tool-1", "name": "slow", "arguments": {"value": "1"}},
            {"type": "toolCall", "id": "tool-2", "name": "fast", "arguments": {"value": "2"}},
        ],
        stop_reason="toolUse",
    )
    m.enqueue(msg, m.text("ok"))
    log: list[str] = []
    tools = [EchoTool("slow", 0.05, log), EchoTool("fast", 0.0, log)]
    result, events = run(
        [user("x")], AgentContext("", [], tools), AgentLoopConfig(model=m, convert_to_llm=identity_convert)
    )
    ends = [e["toolCallId"] for e in events if e["type"] == "tool_execution_end"]
    assert ends == ["tool-2", "tool-1"]
    assert [r["toolCallId"] for r in result if r["role"] == "toolResult"] == ["tool-1", "tool-2"]
    assert log.index("start:tool-2") < log.index("end:tool-1")  # overlap


def test_sequential_execution_mode_forces_sequential() -> None:
    m = ScriptedModel()
    msg = m.message(
        [
            {"type": "toolCall", "id": "tool-1", "name": "slow", "arguments": {}},
            {"type": "toolCall", "id": "tool-2", "name": "fast", "arguments": {}},
        ],
        stop_reason="toolUse",
    )
    m.enqueue(msg, m.text("ok"))
    log: list[str] = []
    slow = EchoTool("slow", 0.02, log)
    slow.execution_mode = "sequential"
    run(
        [user("x")],
        AgentContext("", [], [slow, EchoTool("fast", 0.0, log)]),
        AgentLoopConfig(model=m, convert_to_llm=identity_convert),
    )
    assert log == ["start:tool-1", "end:tool-1", "start:tool-2", "end:tool-2"]


def test_steering_is_injected_after_the_tool_batch_and_follow_up_restarts() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("echo", {"value": "v"}, id="a"), m.text("after steer"), m.text("after follow-up"))
    steering = [[], [user("steer!")]]
    follow = [[user("follow!")]]

    async def get_steering() -> list[dict[str, Any]]:
        return steering.pop(0) if steering else []

    async def get_follow() -> list[dict[str, Any]]:
        return follow.pop(0) if follow else []

    cfg = AgentLoopConfig(
        model=m,
        convert_to_llm=identity_convert,
        get_steering_messages=get_steering,
        get_follow_up_messages=get_follow,
    )
    result, _ = run([user("x")], AgentContext("", [], [EchoTool()]), cfg)
    texts = [r["content"][0].get("text") for r in result]
    assert [r["role"] for r in result] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert texts[3] == "steer!" and texts[5] == "follow!"


def test_prepare_next_turn_snapshot_is_used() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("echo", {"value": "v"}, id="a"))
    other = ScriptedModel(id="other")
    other.enqueue(other.text("from other"))

    async def prepare(turn: TurnSnapshot) -> NextTurnSnapshot:
        ctx = AgentContext("replaced", [user("only this")], turn.context.tools)
        return NextTurnSnapshot(context=ctx, model=other, thinking_level="off")

    cfg = AgentLoopConfig(
        model=m, convert_to_llm=identity_convert, prepare_next_turn=prepare, reasoning="high"
    )
    result, _ = run([user("x")], AgentContext("", [], [EchoTool()]), cfg)
    assert other.requests[0].context.system_prompt == "replaced"
    assert [msg["content"][0]["text"] for msg in other.requests[0].context.messages] == ["only this"]
    assert other.requests[0].options.reasoning is None
    assert m.requests[0].options.reasoning == "high"
    assert result[-1]["content"][0]["text"] == "from other"


def test_should_stop_after_turn_and_terminate() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("echo", {"value": "v"}, id="a"), m.text("never"))
    result, _ = run(
        [user("x")],
        AgentContext("", [], [EchoTool()]),
        AgentLoopConfig(model=m, convert_to_llm=identity_convert, should_stop_after_turn=lambda t: True),
    )
    assert [r["role"] for r in result] == ["user", "assistant", "toolResult"]

    class Terminating(EchoTool):
        async def execute(self, *args: Any) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "bye"}], "details": None, "terminate": True}

    m2 = ScriptedModel()
    m2.enqueue(m2.tool_call("term", {}, id="a"), m2.text("never"))
    result2, _ = run(
        [user("x")],
        AgentContext("", [], [Terminating("term")]),
        AgentLoopConfig(model=m2, convert_to_llm=identity_convert),
    )
    assert [r["role"] for r in result2] == ["user", "assistant", "toolResult"]

    # a mixed batch (one terminating, one not) continues
    m3 = ScriptedModel()
    m3.enqueue(
        m3.message(
            [
                {"type": "toolCall", "id": "a", "name": "term", "arguments": {}},
                {"type": "toolCall", "id": "b", "name": "echo", "arguments": {}},
            ],
            stop_reason="toolUse",
        ),
        m3.text("continued"),
    )
    result3, _ = run(
        [user("x")],
        AgentContext("", [], [Terminating("term"), EchoTool()]),
        AgentLoopConfig(model=m3, convert_to_llm=identity_convert),
    )
    assert result3[-1]["content"][0]["text"] == "continued"


def test_after_tool_call_can_replace_and_terminate() -> None:
    m = ScriptedModel()
    m.enqueue(m.tool_call("echo", {"value": "v"}, id="a"), m.text("never"))

    async def after(ctx: dict[str, Any], signal: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "replaced"}], "terminate": True, "isError": True}

    result, _ = run(
        [user("x")],
        AgentContext("", [], [EchoTool()]),
        AgentLoopConfig(model=m, convert_to_llm=identity_convert, after_tool_call=after),
    )
    assert result[-1]["content"][0]["text"] == "replaced" and result[-1]["isError"] is True


def test_error_stop_ends_the_run() -> None:
    m = ScriptedModel([RuntimeError("boom")])
    result, events = run(
        [user("x")], AgentContext("", [], []), AgentLoopConfig(model=m, convert_to_llm=identity_convert)
    )
    assert result[-1]["stopReason"] == "error" and result[-1]["errorMessage"] == "boom"
    assert [e["type"] for e in events][-2:] == ["turn_end", "agent_end"]


def test_continue_rules() -> None:
    m = ScriptedModel()
    cfg = AgentLoopConfig(model=m, convert_to_llm=identity_convert)
    with pytest.raises(AgentError, match="Cannot continue: no messages in context"):
        asyncio.run(run_agent_loop_continue(AgentContext("", [], []), cfg, lambda e: None))
    with pytest.raises(AgentError, match="Cannot continue from message role: assistant"):
        asyncio.run(run_agent_loop_continue(AgentContext("", [m.text("x")], []), cfg, lambda e: None))
    m.enqueue(m.text("resumed"))
    events: list[dict[str, Any]] = []
    custom_last = {"role": "custom", "customType": "x", "content": "c", "display": True, "timestamp": 1}
    result = asyncio.run(
        run_agent_loop_continue(AgentContext("", [user("q"), custom_last], []), cfg, events.append)
    )
    assert [r["role"] for r in result] == ["assistant"]
    assert not any(e["type"] == "message_start" and e["message"]["role"] == "user" for e in events)
