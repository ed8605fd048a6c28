"""The agent's events, as TypedDicts tagged by ``type``: defined in :mod:`pi_nb.agent.types`
(pi-agent-core's ``types.ts``) and importable from here too.

Pi 0.85.0's ``AgentEvent`` is the union :data:`AgentEvent`; the loop emits it and the ``Agent``
passes it on to its listeners. An ``AgentSession`` listener gets :data:`AgentSessionEvent`: the
agent's events plus the session's own (``compaction_start`` / ``compaction_end``, ``turn_notice``,
``queue_update``, ``session_tree``, ``extension_error``).
"""

from __future__ import annotations

from pi_nb.agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentEndEvent,
    AgentEvent,
    AgentSessionEvent,
    AgentStartEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    BeforeAgentStartHookEvent,
    BeforeToolCallContext,
    BeforeToolCallResult,
    CompactionEndEvent,
    CompactionEvent,
    CompactionStartEvent,
    ContextHookEvent,
    ExtensionErrorEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    QueueUpdateEvent,
    SessionCompactFailedHookEvent,
    SessionTreeEvent,
    SimpleHookEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolResult,
    TurnEndEvent,
    TurnNoticeEvent,
    TurnStartEvent,
)

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentEndEvent",
    "AgentEvent",
    "AgentSessionEvent",
    "AgentStartEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "BeforeAgentStartHookEvent",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "CompactionEndEvent",
    "CompactionEvent",
    "CompactionStartEvent",
    "ContextHookEvent",
    "ExtensionErrorEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "QueueUpdateEvent",
    "SessionCompactFailedHookEvent",
    "SessionTreeEvent",
    "SimpleHookEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResult",
    "TurnEndEvent",
    "TurnNoticeEvent",
    "TurnStartEvent",
]
