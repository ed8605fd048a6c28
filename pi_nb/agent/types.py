"""The agent's shapes and events (pi-agent-core's ``types.ts``, plus the coding agent's session
events): every one defined once, here.

The loop's inputs are dataclasses (:class:`AgentContext`, :class:`AgentLoopConfig`,
:class:`TurnSnapshot`, :class:`NextTurnSnapshot`); the events are TypedDicts tagged by ``type``.
:class:`ContextUsage` is Pi's ``{tokens, contextWindow, percent}``, and the compaction and
``session_tree`` events are Pi's shapes, all three defined once (in :mod:`pi_nb.budget` and
:mod:`pi_nb.compaction`, which the agent builds on) and importable from here too.

Pi 0.85.0's ``AgentEvent`` (pi-agent-core ``types.ts``) is the union :data:`AgentEvent`; the loop
emits it and the ``Agent`` passes it on to its listeners. An ``AgentSession`` listener gets
:data:`AgentSessionEvent`: the agent's events plus the session's own (``compaction_start`` /
``compaction_end``, ``turn_notice``, ``queue_update``, ``session_tree``, ``extension_error``).
Narrow an event by its tag: ``if event["type"] == "message_end": event["message"]``.

The hook events an :class:`~pi_nb.agent.session.SessionHooks` passes to its ``context``,
``before_agent_start`` and ``session_compact_failed`` handlers are here too (:data:`SimpleHookEvent`),
and the shapes the loop's tool hooks see and return (``before_tool_call`` / ``after_tool_call``).

Events are plain dicts with Pi's camelCase keys; the key order of each TypedDict is the order in
which the loop builds the event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_nb.budget import ContextUsage, ContextUsageDict
from pi_nb.compaction import CompactionEndEvent, CompactionStartEvent, SessionTreeEventDict
from pi_nb.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from pi_nb.providers.base import AssistantMessageEvent, Model, SupportsAbort

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentEndEvent",
    "AgentEvent",
    "AgentLoopConfig",
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
    "ContextUsage",
    "ContextUsageDict",
    "Emit",
    "ExtensionErrorEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "NextTurnSnapshot",
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
    "TurnSnapshot",
    "TurnStartEvent",
]

# ---------------------------------------------------------------------------------------------
# Tool results and the tool hooks (pi-agent-core types.ts)
# ---------------------------------------------------------------------------------------------


class ToolResult(TypedDict):
    """A tool's result as the loop carries it: ``{content, details, usage?, terminate?,
    addedToolNames?}`` (the ``result`` of ``tool_execution_end``, an ``after_tool_call``'s input).

    ``details`` is the tool's own data (open JSON, ``None`` when the tool gave none); ``content`` is
    ``None`` only when a tool's result object has none (its tool result message then has ``[]``).
    A tool that returns a mapping has it passed on as it is, as Pi does, so extra keys may be present.
    """

    content: list[TextContent | ImageContent] | None
    details: Any
    usage: NotRequired[Usage]
    terminate: NotRequired[bool]
    addedToolNames: NotRequired[list[str]]


class BeforeToolCallContext(TypedDict):
    """What ``before_tool_call`` gets: ``{assistantMessage, toolCall, args, context}``."""

    assistantMessage: AssistantMessage
    toolCall: ToolCall
    args: dict[str, Any]  # the validated tool arguments: open JSON
    context: AgentContext


class BeforeToolCallResult(TypedDict, total=False):
    """What ``before_tool_call`` may return: ``{block?, reason?, terminate?}`` (``None`` lets the call run)."""

    block: bool
    reason: str
    terminate: bool


class AfterToolCallContext(TypedDict):
    """What ``after_tool_call`` gets: ``{assistantMessage, toolCall, args, result, isError, context}``."""

    assistantMessage: AssistantMessage
    toolCall: ToolCall
    args: dict[str, Any]  # the validated tool arguments: open JSON
    result: ToolResult
    isError: bool
    context: AgentContext


class AfterToolCallResult(TypedDict, total=False):
    """What ``after_tool_call`` may return: fields that replace the result's (``None`` keeps it)."""

    content: list[TextContent | ImageContent]
    details: Any
    usage: Usage
    terminate: bool
    isError: bool


# ---------------------------------------------------------------------------------------------
# The loop's inputs (pi-agent-core AgentContext, AgentLoopConfig)
# ---------------------------------------------------------------------------------------------


@dataclass
class AgentContext:
    """``AgentContext {systemPrompt, messages, tools}``: ``messages`` are AgentMessages (custom roles allowed)."""

    system_prompt: str
    messages: list[AgentMessage]
    tools: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class TurnSnapshot:
    """What ``prepare_next_turn`` and ``should_stop_after_turn`` see of the turn that just ended."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


@dataclass(frozen=True)
class NextTurnSnapshot:
    """``prepare_next_turn``'s answer: a replacement context, model or thinking level (``"off"`` clears reasoning)."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: str | None = None


@dataclass
class AgentLoopConfig:
    """``AgentLoopConfig``: the model, the conversion hooks and the queues the loop polls."""

    model: Model
    convert_to_llm: Callable[[list[AgentMessage]], Sequence[Message] | Awaitable[Sequence[Message]]]
    transform_context: (
        Callable[[list[AgentMessage], SupportsAbort | None], Awaitable[list[AgentMessage]]] | None
    ) = None
    get_steering_messages: Callable[[], Awaitable[list[AgentMessage]]] | None = None
    get_follow_up_messages: Callable[[], Awaitable[list[AgentMessage]]] | None = None
    prepare_next_turn: Callable[[TurnSnapshot], Awaitable[NextTurnSnapshot | None]] | None = None
    should_stop_after_turn: Callable[[TurnSnapshot], Awaitable[bool] | bool] | None = None
    before_tool_call: (
        Callable[[BeforeToolCallContext, SupportsAbort | None], Awaitable[BeforeToolCallResult | None]] | None
    ) = None
    after_tool_call: (
        Callable[[AfterToolCallContext, SupportsAbort | None], Awaitable[AfterToolCallResult | None]] | None
    ) = None
    # the tool and its arguments before/after validation: tool arguments are open JSON
    validate_arguments: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    reasoning: str | None = None
    max_tokens: int | None = None
    session_id: str | None = None
    temperature: float | None = None
    redact_secrets: bool = True
    """Redact known secret values (see :mod:`pi_nb.redaction`) in everything the loop records or emits."""


# ---------------------------------------------------------------------------------------------
# The loop's events (pi-agent-core AgentEvent)
# ---------------------------------------------------------------------------------------------


class AgentStartEvent(TypedDict):
    """``{type: "agent_start"}``: a run began."""

    type: Literal["agent_start"]


class TurnStartEvent(TypedDict):
    """``{type: "turn_start"}``: a turn (one assistant response and its tool calls) began."""

    type: Literal["turn_start"]


class MessageStartEvent(TypedDict):
    """``{type: "message_start", message}``: a prompt, a queued message, the streamed assistant
    message (its first partial) or a tool result entered the context."""

    type: Literal["message_start"]
    message: AgentMessage


class MessageUpdateEvent(TypedDict):
    """``{type: "message_update", assistantMessageEvent, message}``: one streaming event of the
    assistant response and the partial message after it."""

    type: Literal["message_update"]
    assistantMessageEvent: AssistantMessageEvent
    message: AssistantMessage


class MessageEndEvent(TypedDict):
    """``{type: "message_end", message}``: the message is final (a session records it now)."""

    type: Literal["message_end"]
    message: AgentMessage


class ToolExecutionStartEvent(TypedDict):
    """``{type: "tool_execution_start", toolCallId, toolName, args}`` (``args`` as the model sent them)."""

    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]  # tool arguments: open JSON


class ToolExecutionUpdateEvent(TypedDict):
    """``{type: "tool_execution_update", toolCallId, toolName, args, partialResult}``: a running
    tool's partial result (whatever the tool passed to ``on_update``, e.g. an ``AgentToolResult``)."""

    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]  # tool arguments: open JSON
    partialResult: Any


class ToolExecutionEndEvent(TypedDict):
    """``{type: "tool_execution_end", toolCallId, toolName, result, isError}``."""

    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: ToolResult
    isError: bool


class TurnEndEvent(TypedDict):
    """``{type: "turn_end", message, toolResults}``: the turn's assistant message and its tool results."""

    type: Literal["turn_end"]
    message: AssistantMessage
    toolResults: list[ToolResultMessage]


class AgentEndEvent(TypedDict):
    """``{type: "agent_end", messages}``: the run ended; ``messages`` are the run's new messages."""

    type: Literal["agent_end"]
    messages: list[AgentMessage]


#: One event of the agent loop, tagged by ``type`` (Pi's ``AgentEvent``).
AgentEvent: TypeAlias = (
    AgentStartEvent
    | TurnStartEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | TurnEndEvent
    | AgentEndEvent
)

# ---------------------------------------------------------------------------------------------
# The AgentSession's own events (coding-agent AgentSessionEvent)
# ---------------------------------------------------------------------------------------------


# ``compaction_start`` / ``compaction_end`` are emitted by :func:`pi_nb.compaction.run_compaction`
# and defined there once (Pi's shape: ``result`` is the ``CompactionResult`` or ``None``);
# :class:`CompactionStartEvent` and :class:`CompactionEndEvent` are importable from here too.

#: The events :func:`pi_nb.compaction.run_compaction` hands to the session's ``emit``.
CompactionEvent: TypeAlias = CompactionStartEvent | CompactionEndEvent


class TurnNoticeEvent(TypedDict):
    """``{type: "turn_notice", level, code, message}`` (pi_nb's own; codes in ``TURN_NOTICE_CODES``)."""

    type: Literal["turn_notice"]
    level: Literal["error", "warning"]
    code: str
    message: str


class QueueUpdateEvent(TypedDict):
    """``{type: "queue_update"}``: a prompt was queued (steer or follow-up) while the agent runs."""

    type: Literal["queue_update"]


#: ``{type: "session_tree", newLeafId, oldLeafId, summaryEntry?, fromExtension?}`` after
#: ``navigate_tree`` (Pi's ``SessionTreeEvent``; defined once in :mod:`pi_nb.compaction`).
SessionTreeEvent: TypeAlias = SessionTreeEventDict


class ExtensionErrorEvent(TypedDict):
    """``{type: "extension_error", event, extensionPath, error}``: here a skill that failed to expand."""

    type: Literal["extension_error"]
    event: str
    extensionPath: str
    error: str


class AutoRetryStartEvent(TypedDict):
    """``{type: "auto_retry_start", attempt, maxAttempts, delayMs, errorMessage}``: a transient
    error (overloaded, rate limit, server error...) will be retried after ``delayMs``."""

    type: Literal["auto_retry_start"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class AutoRetryEndEvent(TypedDict):
    """``{type: "auto_retry_end", success, attempt, finalError?}``: the retries ended (a response
    that is not an error, the last attempt failing, or the wait being aborted)."""

    type: Literal["auto_retry_end"]
    success: bool
    attempt: int
    finalError: NotRequired[str | None]


#: What an :class:`~pi_nb.agent.session.AgentSession` listener gets, tagged by ``type``.
AgentSessionEvent: TypeAlias = (
    AgentEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | TurnNoticeEvent
    | QueueUpdateEvent
    | SessionTreeEvent
    | ExtensionErrorEvent
)

# ---------------------------------------------------------------------------------------------
# The session's simple hook events (SessionHooks.emit_simple)
# ---------------------------------------------------------------------------------------------


class ContextHookEvent(TypedDict):
    """``{type: "context", messages}``: a deep copy of the messages of one request."""

    type: Literal["context"]
    messages: list[AgentMessage]


class BeforeAgentStartHookEvent(TypedDict):
    """``{type: "before_agent_start", prompt, images, systemPrompt}``."""

    type: Literal["before_agent_start"]
    prompt: str
    images: list[ImageContent]
    systemPrompt: str


class SessionCompactFailedHookEvent(TypedDict):
    """``{type: "session_compact_failed", reason, errorMessage, aborted, willRetry, fromExtension}``
    (the session's own, when an overflow recovery already ran once)."""

    type: Literal["session_compact_failed"]
    reason: Literal["manual", "threshold", "overflow"]
    errorMessage: str
    aborted: bool
    willRetry: bool
    fromExtension: bool


#: The events :meth:`~pi_nb.agent.session.SessionHooks.emit_simple` passes to handlers.
SimpleHookEvent: TypeAlias = ContextHookEvent | BeforeAgentStartHookEvent | SessionCompactFailedHookEvent


#: What the loop calls with each :data:`~pi_nb.agent.events.AgentEvent` (may be async).
Emit = Callable[[AgentEvent], Awaitable[None] | None]
