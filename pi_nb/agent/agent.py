"""``Agent``: pi-agent-core's stateful wrapper around the loop (state, queues, abort, listeners).

It owns the message list the model sees (``state.messages``), the system prompt, the tools, the
model and thinking level; ``prompt()`` runs one loop, ``continue_()`` resumes (retries), ``steer()``
and ``follow_up()`` queue messages the running loop picks up, ``abort()`` cancels the run. A failure
inside the run becomes an ``error``/``aborted`` assistant message (Pi's ``handleRunFailure``), so a
listener always sees a closed ``agent_end``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, cast

from pi_nb.agent.events import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentEvent,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from pi_nb.agent.loop import (
    AgentContext,
    AgentLoopConfig,
    NextTurnSnapshot,
    TurnSnapshot,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_nb.errors import AgentError
from pi_nb.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    Usage,
)
from pi_nb.providers.base import Model, SupportsAbort, empty_usage, now_ms, validate_thinking_level
from pi_nb.redaction import redact
from pi_nb.tools.base import AbortController, AbortSignal

__all__ = ["Agent", "AgentState", "PendingMessageQueue", "default_convert_to_llm"]

Listener = Callable[[AgentEvent, AbortSignal], Awaitable[None] | None]
QueueMode = Literal["one-at-a-time", "all"]
ConvertToLlm = Callable[[list[AgentMessage]], Sequence[Message] | Awaitable[Sequence[Message]]]
TransformContext = Callable[[list[AgentMessage], SupportsAbort | None], Awaitable[list[AgentMessage]]]


def _is_llm_message(message: AgentMessage) -> TypeGuard[Message]:
    return message.get("role") in ("user", "assistant", "toolResult")


def default_convert_to_llm(messages: Sequence[AgentMessage]) -> list[Message]:
    """Keep only the LLM roles (the coding agent passes :func:`pi_nb.messages.convert_to_llm` instead)."""
    return [m for m in messages if _is_llm_message(m)]


def _usage(usage: Mapping[str, Any]) -> Usage:
    """:func:`~pi_nb.providers.base.empty_usage`'s dict, which is Pi's ``Usage``."""
    return cast(Usage, usage)


class PendingMessageQueue:
    """Steering / follow-up queue: ``one-at-a-time`` drains one message, ``all`` drains everything."""

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self.mode: QueueMode = mode
        self.messages: list[AgentMessage] = []

    def enqueue(self, message: AgentMessage) -> None:
        self.messages.append(message)

    def has_items(self) -> bool:
        return bool(self.messages)

    def drain(self) -> list[AgentMessage]:
        if self.mode == "all":
            drained, self.messages = self.messages, []
            return drained
        if not self.messages:
            return []
        first, self.messages = self.messages[0], self.messages[1:]
        return [first]

    def clear(self) -> None:
        self.messages = []


@dataclass
class AgentState:
    """What the agent knows between runs."""

    model: Model
    system_prompt: str = ""
    thinking_level: str = "off"
    tools: list[Any] = field(default_factory=list)
    messages: list[AgentMessage] = field(default_factory=list)
    is_streaming: bool = False
    streaming_message: AgentMessage | None = None
    pending_tool_calls: set[str] = field(default_factory=set)
    error_message: str | None = None


class Agent:
    """A stateful agent over :func:`~pi_nb.agent.loop.run_agent_loop`."""

    def __init__(
        self,
        model: Model,
        *,
        system_prompt: str = "",
        tools: Sequence[Any] = (),
        messages: Sequence[AgentMessage] = (),
        thinking_level: str = "off",
        convert_to_llm: ConvertToLlm = default_convert_to_llm,
        transform_context: TransformContext | None = None,
        # the tool and its arguments before/after validation: tool arguments are open JSON
        validate_arguments: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None,
        tool_execution: Literal["parallel", "sequential"] = "parallel",
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
    ) -> None:
        self.state = AgentState(
            model=model,
            system_prompt=system_prompt,
            thinking_level=validate_thinking_level(thinking_level),
            tools=list(tools),
            messages=list(messages),
        )
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.validate_arguments = validate_arguments
        self.tool_execution: Literal["parallel", "sequential"] = tool_execution
        self.steering_queue = PendingMessageQueue(steering_mode)
        self.follow_up_queue = PendingMessageQueue(follow_up_mode)
        self.session_id = session_id
        #: redact known secret values in everything a run records or emits (see pi_nb.redaction)
        self.redact_secrets = True
        self.before_tool_call: (
            Callable[[BeforeToolCallContext, SupportsAbort | None], Awaitable[BeforeToolCallResult | None]]
            | None
        ) = None
        self.after_tool_call: (
            Callable[[AfterToolCallContext, SupportsAbort | None], Awaitable[AfterToolCallResult | None]]
            | None
        ) = None
        self.should_stop_after_turn: Callable[[TurnSnapshot], Awaitable[bool] | bool] | None = None
        self.prepare_next_turn: (
            Callable[[TurnSnapshot, AbortSignal | None], Awaitable[NextTurnSnapshot | None]] | None
        ) = None
        self._listeners: list[Listener] = []
        self._run: AbortController | None = None

    # -- subscriptions / queues ---------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def steer(self, message: AgentMessage) -> None:
        self.steering_queue.enqueue(message)

    def follow_up(self, message: AgentMessage) -> None:
        self.follow_up_queue.enqueue(message)

    def clear_all_queues(self) -> None:
        self.steering_queue.clear()
        self.follow_up_queue.clear()

    def has_queued_messages(self) -> bool:
        return self.steering_queue.has_items() or self.follow_up_queue.has_items()

    @property
    def signal(self) -> AbortSignal | None:
        return self._run.signal if self._run else None

    @property
    def is_running(self) -> bool:
        return self._run is not None

    def abort(self, reason: Any = None) -> None:
        if self._run is not None:
            self._run.abort(reason)

    def reset(self) -> None:
        if self._run is not None:
            raise AgentError("Agent is already processing. Wait for completion before resetting.")
        self.state.messages = []
        self.state.is_streaming = False
        self.state.streaming_message = None
        self.state.pending_tool_calls = set()
        self.state.error_message = None
        self.clear_all_queues()

    # -- runs ------------------------------------------------------------------------------------
    async def prompt(
        self, input: str | AgentMessage | Sequence[AgentMessage], images: Sequence[ImageContent] = ()
    ) -> None:
        if self._run is not None:
            raise AgentError(
                "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
            )
        if isinstance(input, str):
            content: list[TextContent | ImageContent] = [{"type": "text", "text": input}, *images]
            messages: list[AgentMessage] = [{"role": "user", "content": content, "timestamp": now_ms()}]
        elif isinstance(input, dict):
            messages = [input]
        else:
            messages = list(input)
        await self._run_prompt_messages(messages)

    async def continue_(self) -> None:
        """``agent.continue()``: resume from the current messages (after a retry or compaction)."""
        if self._run is not None:
            raise AgentError("Agent is already processing. Wait for completion before continuing.")
        if not self.state.messages:
            raise AgentError("No messages to continue from")
        if self.state.messages[-1].get("role") == "assistant":
            steering = self.steering_queue.drain()
            if steering:
                await self._run_prompt_messages(steering, skip_initial_steering_poll=True)
                return
            follow = self.follow_up_queue.drain()
            if follow:
                await self._run_prompt_messages(follow)
                return
            raise AgentError("Cannot continue from message role: assistant")
        await self._with_lifecycle(
            lambda signal: run_agent_loop_continue(self._snapshot(), self._config(), self._process, signal)
        )

    async def _run_prompt_messages(
        self, messages: list[AgentMessage], *, skip_initial_steering_poll: bool = False
    ) -> None:
        await self._with_lifecycle(
            lambda signal: run_agent_loop(
                messages, self._snapshot(), self._config(skip_initial_steering_poll), self._process, signal
            )
        )

    def _snapshot(self) -> AgentContext:
        return AgentContext(self.state.system_prompt, list(self.state.messages), list(self.state.tools))

    def _config(self, skip_initial_steering_poll: bool = False) -> AgentLoopConfig:
        skip = [skip_initial_steering_poll]

        async def steering() -> list[AgentMessage]:
            if skip[0]:
                skip[0] = False
                return []
            return self.steering_queue.drain()

        async def follow_ups() -> list[AgentMessage]:
            return self.follow_up_queue.drain()

        prepare = None
        if self.prepare_next_turn is not None:
            hook = self.prepare_next_turn

            async def prepare_hook(turn: TurnSnapshot) -> NextTurnSnapshot | None:
                return await hook(turn, self.signal)

            prepare = prepare_hook

        return AgentLoopConfig(
            model=self.state.model,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            get_steering_messages=steering,
            get_follow_up_messages=follow_ups,
            prepare_next_turn=prepare,
            should_stop_after_turn=self.should_stop_after_turn,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            validate_arguments=self.validate_arguments,
            tool_execution=self.tool_execution,
            reasoning=None if self.state.thinking_level == "off" else self.state.thinking_level,
            session_id=self.session_id,
            redact_secrets=self.redact_secrets,
        )

    async def _with_lifecycle(self, executor: Callable[[AbortSignal], Awaitable[Any]]) -> None:
        if self._run is not None:
            raise AgentError("Agent is already processing.")
        controller = AbortController()
        self._run = controller
        self.state.is_streaming = True
        self.state.streaming_message = None
        self.state.error_message = None
        try:
            await executor(controller.signal)
        except Exception as error:  # Pi's handleRunFailure: a failure is an assistant message
            await self._handle_failure(error, controller.signal.aborted)
        finally:
            self.state.is_streaming = False
            self.state.streaming_message = None
            self.state.pending_tool_calls = set()
            self._run = None

    async def _handle_failure(self, error: BaseException, aborted: bool) -> None:
        model = self.state.model
        failure: AssistantMessage = {
            "role": "assistant",
            "content": [{"type": "text", "text": ""}],
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": _usage(empty_usage()),
            "stopReason": "aborted" if aborted else "error",
            "errorMessage": redact(str(error) or type(error).__name__)
            if self.redact_secrets
            else (str(error) or type(error).__name__),
            "timestamp": now_ms(),
        }
        await self._process({"type": "message_start", "message": failure})
        await self._process({"type": "message_end", "message": failure})
        await self._process({"type": "turn_end", "message": failure, "toolResults": []})
        await self._process({"type": "agent_end", "messages": [failure]})

    async def _process(self, event: AgentEvent) -> None:
        # the tests are on event["type"] itself, so that mypy narrows the event union by its tag
        if event["type"] in ("message_start", "message_update"):
            self.state.streaming_message = event["message"]
        elif event["type"] == "message_end":
            self.state.streaming_message = None
            self.state.messages.append(event["message"])
        elif event["type"] == "tool_execution_start":
            self.state.pending_tool_calls = {*self.state.pending_tool_calls, event["toolCallId"]}
        elif event["type"] == "tool_execution_end":
            self.state.pending_tool_calls = self.state.pending_tool_calls - {event["toolCallId"]}
        elif event["type"] == "turn_end":
            msg = event["message"]
            if msg.get("role") == "assistant" and msg.get("errorMessage"):
                self.state.error_message = msg["errorMessage"]
        elif event["type"] == "agent_end":
            self.state.streaming_message = None
        signal = self.signal
        if signal is None:
            raise AgentError("Agent listener invoked outside active run")
        for listener in list(self._listeners):
            result = listener(event, signal)
            if inspect.isawaitable(result):
                await result
