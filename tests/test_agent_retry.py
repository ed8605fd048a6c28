"""The session's agent-level auto-retry (Pi's ``AgentSession._prepareRetry``) and the request an
aborted run does not send (Pi's model runtime setup error). The same behaviour is compared with
the real Pi CLI in ``tests/test_cli_partner.py``; these pin the edges the recordings do not reach."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_nb.agent.loop import ABORTED_BEFORE_REQUEST
from pi_nb.agent.session import AgentSession
from pi_nb.providers.scripted import ScriptedModel
from pi_nb.session.manager import SessionManager

OVERLOADED = '503: {"message":"The server is overloaded. Please try again later."}'


def _session(tmp_path: Path, model: ScriptedModel, retry: dict[str, Any]) -> tuple[AgentSession, list[Any]]:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"retry": retry}))
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    manager = SessionManager.in_memory(str(cwd))
    session = AgentSession(manager, model, agent_dir=str(agent), project_trusted=True)
    events: list[Any] = []
    session.subscribe(lambda e: events.append(e) if str(e.get("type", "")).startswith("auto_retry") else None)
    return session, events


def test_a_transient_error_is_retried_and_kept_in_the_session(tmp_path: Path) -> None:
    m = ScriptedModel()
    m.enqueue(m.error(OVERLOADED), m.error(OVERLOADED), m.text("fine"))
    session, events = _session(tmp_path, m, {"maxRetries": 3, "baseDelayMs": 1})
    result = asyncio.run(session.prompt("hi"))
    assert result.text == "fine"
    stops = [
        e["message"].get("stopReason") for e in session.session_manager.get_branch() if e["type"] == "message"
    ]
    assert stops == [None, "error", "error", "stop"]  # every attempt is in the session
    assert [m_.get("stopReason") for m_ in session.messages if m_.get("role") == "assistant"] == ["stop"]
    assert len(m.requests) == 3
    assert [e["type"] for e in events] == ["auto_retry_start", "auto_retry_start", "auto_retry_end"]
    assert [e.get("delayMs") for e in events[:2]] == [1, 2]
    assert events[-1] == {"type": "auto_retry_end", "success": True, "attempt": 2}


def test_retries_stop_at_max_retries_with_the_final_error(tmp_path: Path) -> None:
    m = ScriptedModel()
    m.enqueue(*[m.error(OVERLOADED) for _ in range(4)])
    session, events = _session(tmp_path, m, {"maxRetries": 2, "baseDelayMs": 1})
    result = asyncio.run(session.prompt("hi"))
    assert result.status == "error"
    assert len(m.requests) == 3
    assert events[-1] == {"type": "auto_retry_end", "success": False, "attempt": 2, "finalError": OVERLOADED}


@pytest.mark.parametrize(
    ("retry", "message"),
    [
        ({"enabled": False}, OVERLOADED),
        ({"baseDelayMs": 1}, "400: invalid temperature"),  # not transient
    ],
)
def test_no_retry_when_disabled_or_not_transient(tmp_path: Path, retry: dict[str, Any], message: str) -> None:
    m = ScriptedModel()
    m.enqueue(m.error(message), m.text("never"))
    session, events = _session(tmp_path, m, retry)
    asyncio.run(session.prompt("hi"))
    assert len(m.requests) == 1 and events == []


def test_abort_cancels_the_retry_wait(tmp_path: Path) -> None:
    m = ScriptedModel()
    m.enqueue(m.error(OVERLOADED), m.text("never"))
    session, events = _session(tmp_path, m, {"baseDelayMs": 60_000})

    async def run() -> None:
        task = asyncio.create_task(session.prompt("hi"))
        while not events:
            await asyncio.sleep(0.005)
        session.abort()
        await asyncio.wait_for(task, 5)

    asyncio.run(run())
    assert len(m.requests) == 1
    assert events[-1] == {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 1,
        "finalError": "Retry cancelled",
    }
    assert session.retry_attempt == 0


def test_an_aborted_run_sends_no_further_provider_request() -> None:
    """After a tool batch was aborted the next request is not sent: Pi's setup-error message."""
    from pi_nb.agent.loop import AgentContext, AgentLoopConfig, run_agent_loop
    from pi_nb.providers.openai_compat import OpenAICompatModel
    from pi_nb.tools.base import AbortSignal

    model = OpenAICompatModel("m", provider="p", base_url="http://127.0.0.1:9/v1", context_window=1000)
    signal = AbortSignal()
    signal.abort()
    events: list[Any] = []
    messages = asyncio.run(
        run_agent_loop(
            [{"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}],
            AgentContext("", [], []),
            AgentLoopConfig(model=model, convert_to_llm=lambda ms: ms),
            events.append,
            signal,
        )
    )
    final = messages[-1]
    assert final["role"] == "assistant"
    assert (final["content"], final["stopReason"], final.get("errorMessage")) == (
        [],
        "error",
        ABORTED_BEFORE_REQUEST,
    )
    assert final["usage"]["totalTokens"] == 0 and "reasoning" not in final["usage"]
    assert [e["type"] for e in events][-2:] == ["turn_end", "agent_end"]
