"""The events of the agent loop, the :class:`~pi_nb.agent.agent.Agent` and the
:class:`~pi_nb.agent.session.AgentSession`, as TypedDicts tagged by ``type``.

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

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_nb.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from pi_nb.providers.base import AssistantMessageEvent
from pi_nb.session.types import BranchSummaryEntry

if TYPE_CHECKING:
    from pi_nb.agent.loop import AgentContext

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


class CompactionStartEvent(TypedDict):
    """``{type: "compaction_start", reason}`` (emitted by :func:`pi_nb.compaction.run_compaction`)."""

    type: Literal["compaction_start"]
    reason: Literal["manual", "threshold", "overflow"]


class CompactionEndEvent(TypedDict):
    """``{type: "compaction_end", reason, result, aborted, willRetry, errorMessage?}``.

    ``result`` is the compaction result's ``to_dict()`` (its shape belongs to
    :mod:`pi_nb.compaction`), ``None`` when the compaction failed or was aborted.
    """

    type: Literal["compaction_end"]
    reason: Literal["manual", "threshold", "overflow"]
    result: dict[str, Any] | None
    aborted: bool
    willRetry: bool
    errorMessage: NotRequired[str]


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


class SessionTreeEvent(TypedDict):
    """``{type: "session_tree", newLeafId, oldLeafId, summaryEntry, fromExtension}`` after ``navigate_tree``."""

    type: Literal["session_tree"]
    newLeafId: str | None
    oldLeafId: str | None
    summaryEntry: BranchSummaryEntry | None
    fromExtension: bool | None


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
