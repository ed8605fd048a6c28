"""Agent: state, queues, continue rules, failures as messages, abort."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_nb.agent.agent import Agent, PendingMessageQueue
from pi_nb.errors import AgentError
from pi_nb.providers import ScriptedModel


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_prompt_appends_messages_and_notifies_listeners() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("hi"))
    agent = Agent(m, system_prompt="sys")
    seen: list[str] = []
    agent.subscribe(lambda e, s: seen.append(e["type"]))
    asyncio.run(agent.prompt("hello"))
    assert [x["role"] for x in agent.state.messages] == ["user", "assistant"]
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    assert not agent.state.is_streaming and agent.signal is None


def test_queue_modes() -> None:
    q = PendingMessageQueue()
    q.enqueue(user("a"))
    q.enqueue(user("b"))
    assert [m["content"][0]["text"] for m in q.drain()] == ["a"]
    q.mode = "all"
    q.enqueue(user("c"))
    assert [m["content"][0]["text"] for m in q.drain()] == ["b", "c"]
    assert q.drain() == []


def test_continue_rules_and_queued_follow_up() -> None:
    m = ScriptedModel()
    agent = Agent(m)
    with pytest.raises(AgentError, match="No messages to continue from"):
        asyncio.run(agent.continue_())
    m.enqueue(m.text("first"), m.text("second"))
    asyncio.run(agent.prompt("q"))
    with pytest.raises(AgentError, match="Cannot continue from message role: assistant"):
        asyncio.run(agent.continue_())
    agent.follow_up(user("more"))
    assert agent.has_queued_messages()
    asyncio.run(agent.continue_())
    assert [x["role"] for x in agent.state.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.state.messages[-1]["content"][0]["text"] == "second"


def test_a_failure_inside_the_run_becomes_an_error_message() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("x"))

    def broken(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise RuntimeError("convert exploded")

    agent = Agent(m, convert_to_llm=broken)
    asyncio.run(agent.prompt("q"))
    last = agent.state.messages[-1]
    assert last["stopReason"] == "error" and last["errorMessage"] == "convert exploded"
    assert agent.state.error_message == "convert exploded"


def test_abort_during_a_slow_tool_ends_the_run() -> None:
    class Slow:
        name = "slow"
        description = "slow"
        parameters: dict[str, Any] = {"type": "object"}
        execution_mode = None
        started = False

        async def execute(
            self, call_id: str, params: dict[str, Any], signal: Any, on_update: Any
        ) -> dict[str, Any]:
            Slow.started = True
            await signal.wait()
            raise RuntimeError("Command aborted")

    m = ScriptedModel()
    m.enqueue(m.tool_call("slow", {}, id="a"), m.text("never reached"))
    agent = Agent(m, tools=[Slow()])

    async def run() -> None:
        task = asyncio.create_task(agent.prompt("go"))
        while not Slow.started:
            await asyncio.sleep(0.005)
        agent.abort()
        await task

    asyncio.run(run())
    roles = [(x["role"], x.get("stopReason")) for x in agent.state.messages]
    assert roles[2][0] == "toolResult" and agent.state.messages[2]["content"][0]["text"] == "Command aborted"
    assert roles[-1] == ("assistant", "aborted")
    assert not agent.is_running
