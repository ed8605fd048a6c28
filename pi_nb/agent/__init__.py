"""The agent runtime: the loop (pi-agent-core), the stateful Agent, and the coding-agent AgentSession."""

from __future__ import annotations

from pi_nb.agent.agent import Agent, AgentState, PendingMessageQueue, default_convert_to_llm
from pi_nb.agent.events import AgentEvent, AgentSessionEvent, ToolResult
from pi_nb.agent.loop import (
    TRUNCATED_TOOL_CALL_TEXT,
    AgentContext,
    AgentLoopConfig,
    NextTurnSnapshot,
    TurnSnapshot,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_nb.agent.session import (
    OVERFLOW_RECOVERY_FAILED,
    TRUNCATED_RECOVERY_FAILED,
    AgentSession,
    PromptResult,
    PromptUsage,
    SessionContextUsage,
    SessionHooks,
)
from pi_nb.agent.types import ContextUsage

__all__ = [
    "OVERFLOW_RECOVERY_FAILED",
    "TRUNCATED_RECOVERY_FAILED",
    "TRUNCATED_TOOL_CALL_TEXT",
    "Agent",
    "AgentContext",
    "AgentEvent",
    "AgentLoopConfig",
    "AgentSession",
    "AgentSessionEvent",
    "AgentState",
    "ContextUsage",
    "NextTurnSnapshot",
    "PendingMessageQueue",
    "PromptResult",
    "PromptUsage",
    "SessionContextUsage",
    "SessionHooks",
    "ToolResult",
    "TurnSnapshot",
    "default_convert_to_llm",
    "run_agent_loop",
    "run_agent_loop_continue",
]
