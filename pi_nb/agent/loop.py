"""The agent loop of pi-agent-core 0.85.0 (``agent-loop.ts``), event for event.

``run_agent_loop(prompts, context, config, emit, signal)`` appends the prompts, then alternates
assistant responses and tool batches until the model stops calling tools and no steering or
follow-up message is queued. Everything observable matches Pi:

* events ``agent_start``, ``turn_start``, ``message_start``/``message_update``/``message_end``,
  ``tool_execution_start``/``_update``/``_end``, ``turn_end``, ``agent_end`` with Pi's fields;
* before every request: ``transform_context`` (may prune or rewrite), then ``convert_to_llm``;
* the streamed partial assistant message sits in the context from ``start`` and is replaced by
  the final message on ``done``/``error``;
* tools run in parallel by default (prepared in order, executed concurrently, ``tool_execution_end``
  in completion order, result messages in the assistant's source order), sequentially when
  configured or when a called tool declares ``execution_mode == "sequential"``;
* a ``length``-stopped response's tool calls are failed, never executed (their arguments may be
  cut off);
* an ``error``/``aborted`` response ends the run after ``turn_end``;
* a provider request (a :class:`~pi_nb.providers.base.RemoteModel`) whose abort signal has
  already fired -- the turn after an aborted tool batch -- is not sent: the response is the
  message Pi's model runtime makes when the request's setup (auth resolution, given the signal)
  fails (no content, zero usage, ``stopReason`` ``"error"``, ``errorMessage``
  :data:`ABORTED_BEFORE_REQUEST`). pi_nb's in-process models (offline, scripted) stream as
  before, as pi-ai's faux provider does.

Tool failures are values (error tool results), never exceptions out of the loop.

pi_nb adds one thing Pi does not do: with ``redact_secrets`` (the default) every message the
loop records or emits (the prompts, each assistant message and its streamed partials, each tool
result, streamed tool update and error text) goes through :func:`pi_nb.redaction.redact_message`
*before* it enters the context, so what the model is sent next, what the agent keeps, what a
session stores and what a listener shows are the same redacted objects. Two rules keep that from
corrupting anything: a tool runs with the arguments *as the model wrote them* (only the stored
assistant message and the ``args`` of the tool events are redacted), and a streamed partial holds
back a trailing possible start of a key until the next delta decides it
(:func:`pi_nb.redaction.redact_stream_text`), so no ``message_update`` shows a growing key prefix.

A tool's updates (``on_update``) are emitted as they come, in order, by one pump task per call (a
queue, not coroutines kept until the call ends): a long command streams live and memory stays flat.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypedDict, TypeGuard, TypeVar, cast

from pi_nb.agent.types import (
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    Emit,
    NextTurnSnapshot,
    ToolExecutionUpdateEvent,
    ToolResult,
    TurnSnapshot,
)
from pi_nb.errors import AgentError, PiNbError
from pi_nb.messages import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    Model,
    RemoteModel,
    StreamOptions,
    SupportsAbort,
    ToolSchema,
    make_assistant_message,
    now_ms,
)
from pi_nb.redaction import (
    known_secrets,
    redact,
    redact_cut_tail,
    redact_message,
    redact_partial_result,
    redact_stream_text,
    register_model_secrets,
)
from pi_nb.tools.base import tool_schema

__all__ = [
    "ABORTED_BEFORE_REQUEST",
    "TRUNCATED_TOOL_CALL_TEXT",
    "AgentContext",
    "AgentEvent",
    "AgentLoopConfig",
    "Emit",
    "NextTurnSnapshot",
    "TurnSnapshot",
    "run_agent_loop",
    "run_agent_loop_continue",
]


_T = TypeVar("_T")
_M = TypeVar("_M", bound=Mapping[str, Any])

TRUNCATED_TOOL_CALL_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
    "may be truncated. Re-issue the tool call with complete arguments."
)


def _clean(config: AgentLoopConfig, value: _T) -> _T:
    """``value`` with known secrets redacted (copy-on-write, so the same shape and type)."""
    if not config.redact_secrets:
        return value
    redacted: _T = redact_message(value)
    return redacted


def _copy(value: _M) -> _M:
    """``dict(value)``: a new top-level dict with the same keys (a TypedDict keeps its type)."""
    return cast(_M, dict(value))


def _assistant(value: Mapping[str, Any]) -> AssistantMessage:
    """A provider's streamed or final message, taken as Pi's ``AssistantMessage`` (the model
    builds it; the loop does not validate it, as Pi does not)."""
    return cast(AssistantMessage, value)


def _is_tool_call(block: TextContent | ThinkingContent | ToolCall) -> TypeGuard[ToolCall]:
    return block.get("type") == "toolCall"


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def _emit(emit: Emit, event: AgentEvent) -> None:
    await _maybe_await(emit(event))


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: SupportsAbort | None = None,
) -> list[AgentMessage]:
    """``runAgentLoop``: start a run with new prompt messages; returns the run's new messages."""
    prompts = [_clean(config, p) for p in prompts]
    new_messages: list[AgentMessage] = list(prompts)
    current = replace(context, messages=[*context.messages, *prompts])
    await _emit(emit, {"type": "agent_start"})
    await _emit(emit, {"type": "turn_start"})
    for prompt in prompts:
        await _emit(emit, {"type": "message_start", "message": prompt})
        await _emit(emit, {"type": "message_end", "message": prompt})
    await _run_loop(current, new_messages, config, signal, emit)
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: SupportsAbort | None = None,
) -> list[AgentMessage]:
    """``runAgentLoopContinue``: resume from the context (retries); the last message must not be an assistant's."""
    if not context.messages:
        raise AgentError("Cannot continue: no messages in context")
    if context.messages[-1].get("role") == "assistant":
        raise AgentError("Cannot continue from message role: assistant")
    new_messages: list[AgentMessage] = []
    current = replace(context)
    await _emit(emit, {"type": "agent_start"})
    await _emit(emit, {"type": "turn_start"})
    await _run_loop(current, new_messages, config, signal, emit)
    return new_messages


async def _poll(getter: Callable[[], Awaitable[list[AgentMessage]]] | None) -> list[AgentMessage]:
    if getter is None:
        return []
    return list(await getter() or [])


async def _run_loop(
    current: AgentContext,
    new_messages: list[AgentMessage],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> None:
    last_turn: TurnSnapshot | None = None
    pending = await _poll(config.get_steering_messages)
    while True:
        has_more_tool_calls = True
        while has_more_tool_calls or pending:
            if last_turn is not None:
                if config.prepare_next_turn is not None:
                    snap = await config.prepare_next_turn(last_turn)
                    if snap is not None:
                        current = snap.context or current
                        reasoning = config.reasoning
                        if snap.thinking_level is not None:
                            reasoning = None if snap.thinking_level == "off" else snap.thinking_level
                        config = replace(config, model=snap.model or config.model, reasoning=reasoning)
                # preparation may be long (compaction): pick up steering queued meanwhile, but only if
                # the earlier poll found nothing (one-at-a-time must not deliver two messages here)
                if not pending:
                    pending = await _poll(config.get_steering_messages)
                await _emit(emit, {"type": "turn_start"})

            if pending:
                pending = [_clean(config, m) for m in pending]
                for message in pending:
                    await _emit(emit, {"type": "message_start", "message": message})
                    await _emit(emit, {"type": "message_end", "message": message})
                    current.messages.append(message)
                    new_messages.append(message)
                pending = []

            message, asked = await _stream_assistant_response(current, config, signal, emit)
            new_messages.append(message)
            if message.get("stopReason") in ("error", "aborted"):
                await _emit(emit, {"type": "turn_end", "message": message, "toolResults": []})
                await _emit(emit, {"type": "agent_end", "messages": new_messages})
                return

            tool_calls = [c for c in message.get("content") or [] if _is_tool_call(c)]
            tool_results: list[ToolResultMessage] = []
            has_more_tool_calls = False
            if tool_calls:
                if message.get("stopReason") == "length":
                    results, terminate = await _fail_truncated_tool_calls(tool_calls, emit, config)
                else:
                    # the tools run what the model asked (``asked``); the context keeps ``message``
                    results, terminate = await _execute_tool_calls(current, asked, config, signal, emit)
                tool_results.extend(results)
                has_more_tool_calls = not terminate
                for result in tool_results:
                    current.messages.append(result)
                    new_messages.append(result)

            await _emit(emit, {"type": "turn_end", "message": message, "toolResults": tool_results})
            last_turn = TurnSnapshot(message, tool_results, current, new_messages)
            if config.should_stop_after_turn is not None and await _maybe_await(
                config.should_stop_after_turn(last_turn)
            ):
                await _emit(emit, {"type": "agent_end", "messages": new_messages})
                return
            pending = await _poll(config.get_steering_messages)

        follow_ups = await _poll(config.get_follow_up_messages)
        if follow_ups:
            pending = follow_ups
            continue
        break
    await _emit(emit, {"type": "agent_end", "messages": new_messages})


_UPDATE_EVENTS = {  # the streaming events that carry a new partial message
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
}


#: The error text of a response whose request was never sent because the run was already aborted
#: (the message of the ``AbortError`` Node raises when a request's setup sees an aborted signal).
ABORTED_BEFORE_REQUEST = "This operation was aborted"


def _aborted_before_request(model: Model) -> AssistantMessage:
    """Pi's setup-error message (pi-ai ``lazyStream``): what an aborted run records instead of a request."""
    return make_assistant_message(
        [],
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="error",
        error_message=ABORTED_BEFORE_REQUEST,
    )


class _StreamShower:
    """What listeners are shown of a streamed response: each partial redacted, with a trailing
    possible start of a secret held back in its last block, and each delta the difference between
    two such shown texts (so the deltas add up to the shown text, never to a key's prefix)."""

    def __init__(self) -> None:
        self.secrets = known_secrets()
        self.raw: dict[int, str] = {}
        self.shown: dict[int, str] = {}
        self.delta_types: dict[int, str] = {}

    def message(self, partial: AssistantMessage, ended: bool = False) -> AssistantMessage:
        """``partial`` redacted; unless its last block has ``ended``, that block without a trailing
        possible start of a secret."""
        shown = cast(AssistantMessage, redact_message(_copy(partial), self.secrets))
        content = shown.get("content")
        if isinstance(content, list) and content and not ended:
            # only the block still streaming can end in the start of a key
            raw_last = (partial.get("content") or [])[-1]
            content = list(content)
            content[-1] = _hold_back(raw_last, self.secrets)
            shown["content"] = content
        return shown

    def event(self, event: AssistantMessageEvent, shown_partial: AssistantMessage) -> AssistantMessageEvent:
        out = cast(dict[str, Any], redact_message(_copy(event), self.secrets))
        out["partial"] = shown_partial
        index = event.get("contentIndex")
        delta = event.get("delta")
        if event["type"].endswith("_delta") and isinstance(index, int) and isinstance(delta, str):
            self.delta_types[index] = event["type"]
            raw = self.raw.get(index, "") + delta
            self.raw[index] = raw
            before = self.shown.get(index, "")
            now = redact_stream_text(raw, self.secrets)
            if now.startswith(before):
                out["delta"] = now[len(before) :]
                self.shown[index] = now
            else:  # cannot happen for a growing text; stay safe
                out["delta"] = redact_message(delta, self.secrets)
        return cast(AssistantMessageEvent, out)

    def release(self, event: AssistantMessageEvent, shown_partial: AssistantMessage) -> list[AssistantMessageEvent]:
        """Before a block's ``*_end`` event (or ``done``: every block): the held-back tail of each
        ended block as one more delta, so the deltas add up to the whole redacted text once it is
        decided (a text that merely ends like the start of a key is shown whole at its end)."""
        kind = event["type"]
        if kind == "done":
            indices = sorted(self.raw)
        elif kind.endswith("_end") and isinstance(event.get("contentIndex"), int):
            indices = [cast(int, event.get("contentIndex"))]
        else:
            return []
        out: list[AssistantMessageEvent] = []
        for index in indices:
            before = self.shown.get(index, "")
            full = redact(self.raw.get(index, ""), self.secrets)
            if full == before or not full.startswith(before):
                continue
            self.shown[index] = full
            out.append(
                cast(
                    AssistantMessageEvent,
                    {
                        "type": self.delta_types[index],  # a held-back tail came in a delta
                        "contentIndex": index,
                        "delta": full[len(before) :],
                        "partial": shown_partial,
                    },
                )
            )
        return out


_GROWING_FIELDS = ("text", "thinking", "arguments", "partialJson")


def _hold_back(block: Any, secrets: Mapping[str, str]) -> Any:
    """A streaming content block (raw) shown redacted, its growing fields (text, thinking, tool
    arguments) without a trailing possible start of a secret; its other fields fully redacted."""
    if not isinstance(block, dict):
        return redact_message(block, secrets)
    return {
        k: _growing(v, secrets) if k in _GROWING_FIELDS else redact_message(v, secrets)
        for k, v in block.items()
    }


def _growing(value: Any, secrets: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return redact_stream_text(value, secrets)
    if isinstance(value, dict):
        return {k: _growing(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_growing(v, secrets) for v in value]
    return value


async def _stream_assistant_response(
    context: AgentContext, config: AgentLoopConfig, signal: SupportsAbort | None, emit: Emit
) -> tuple[AssistantMessage, AssistantMessage]:
    """Stream one response; returns (the message as recorded, redacted; the message as the model
    sent it, whose tool calls are run)."""
    if config.redact_secrets:
        # whatever made the model: its key variable, a key passed in code, a base URL's password
        register_model_secrets(config.model)
    messages = context.messages
    if config.transform_context is not None:
        messages = await config.transform_context(messages, signal)
    llm_messages = list(await _maybe_await(config.convert_to_llm(messages)))
    tools: list[ToolSchema] = [tool_schema(t) for t in context.tools]
    llm_context = Context(context.system_prompt, llm_messages, tools)
    options = StreamOptions(
        max_tokens=config.max_tokens,
        reasoning=config.reasoning,
        signal=signal,
        session_id=config.session_id,
        temperature=config.temperature,
    )
    partial: AssistantMessage | None = None
    added_partial = False
    final: AssistantMessage | None = None
    raw_final: AssistantMessage | None = None
    shower = _StreamShower() if config.redact_secrets else None
    if signal is not None and signal.aborted and isinstance(config.model, RemoteModel):
        # Pi's model runtime resolves the request's auth with the run's signal first, and an
        # aborted signal fails that setup: no request, a setup-error message
        raw_final = _aborted_before_request(config.model)
        final = _clean(config, raw_final)
    events = config.model.stream(llm_context, options) if final is None else _no_events()
    async for event in events:
        # the tests are on event["type"] itself, so that mypy narrows the event union by its tag
        if event["type"] == "done":
            raw_final = _assistant(event["message"])
            final = _clean(config, raw_final)
            if shower is not None and shower.secrets and partial is not None:
                for extra in shower.release(event, final):
                    await _emit(emit, {"type": "message_update", "assistantMessageEvent": extra, "message": final})
            break
        if event["type"] == "error":
            raw_final = _assistant(event["error"])
            final = _clean(config, raw_final)
            error_text = final.get("errorMessage")
            if config.redact_secrets and isinstance(error_text, str):
                # a provider may have cut the error body inside a key: its start is redacted too
                shown_error = redact_cut_tail(error_text)
                if shown_error != error_text:
                    final = {**final, "errorMessage": shown_error}
            break
        if event["type"] == "start":
            partial = _assistant(event["partial"])
            context.messages.append(partial)
            added_partial = True
            await _emit(emit, {"type": "message_start", "message": _clean(config, _copy(partial))})
        elif event["type"] in _UPDATE_EVENTS:
            if partial is not None:
                partial = _assistant(event["partial"])
                context.messages[-1] = partial
                shown: AssistantMessage = partial
                shown_event: AssistantMessageEvent = event
                if shower is not None and shower.secrets:
                    shown = shower.message(partial, ended=event["type"].endswith("_end"))
                    for extra in shower.release(event, shown):
                        await _emit(
                            emit, {"type": "message_update", "assistantMessageEvent": extra, "message": shown}
                        )
                    shown_event = shower.event(event, shown)
                await _emit(
                    emit, {"type": "message_update", "assistantMessageEvent": shown_event, "message": shown}
                )
    if final is None or raw_final is None:
        raise PiNbError(f"{config.model!r} ended its stream without a done or error event")
    if added_partial:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await _emit(emit, {"type": "message_start", "message": _copy(final)})
    await _emit(emit, {"type": "message_end", "message": final})
    return final, raw_final


async def _no_events() -> AsyncIterator[AssistantMessageEvent]:
    return
    yield


# --- tools ------------------------------------------------------------------------------------


def _error_result(message: str) -> ToolResult:
    return {"content": [{"type": "text", "text": message}], "details": {}}


def _result_dict(result: Any) -> ToolResult:
    """Tools may return a mapping or an object with ``content``/``details`` (``AgentToolResult``)."""
    if isinstance(result, Mapping):
        # the tool's own mapping, passed on as it is (Pi does not validate a tool's result either)
        return cast(ToolResult, dict(result))
    out: ToolResult = {
        "content": getattr(result, "content", None),
        "details": getattr(result, "details", None),
    }
    usage = getattr(result, "usage", None)
    if usage is not None:
        out["usage"] = usage
    terminate = getattr(result, "terminate", None)
    if terminate is not None:
        out["terminate"] = terminate
    added_tool_names = getattr(result, "added_tool_names", None)
    if added_tool_names is not None:
        out["addedToolNames"] = added_tool_names
    return out


@dataclass
class _Finalized:
    tool_call: ToolCall
    result: ToolResult
    is_error: bool


@dataclass
class _Prepared:
    tool_call: ToolCall
    tool: Any
    args: dict[str, Any]  # validated tool arguments: open JSON


class _ResultExtras(TypedDict, total=False):
    """The optional keys of a tool result message, in Pi's order (between ``content`` and ``isError``)."""

    details: Any
    usage: Usage
    addedToolNames: list[str]


def _tool_result_message(f: _Finalized) -> ToolResultMessage:
    extras: _ResultExtras = {}
    if f.result.get("details") is not None:
        extras["details"] = f.result["details"]
    if f.result.get("usage") is not None:
        extras["usage"] = f.result["usage"]
    if f.result.get("addedToolNames"):
        extras["addedToolNames"] = f.result["addedToolNames"]
    content = f.result.get("content")
    return {
        "role": "toolResult",
        "toolCallId": f.tool_call.get("id"),
        "toolName": f.tool_call.get("name"),
        "content": content if content is not None else [],
        **extras,
        "isError": f.is_error,
        "timestamp": now_ms(),
    }


async def _emit_execution_end(f: _Finalized, emit: Emit) -> None:
    await _emit(
        emit,
        {
            "type": "tool_execution_end",
            "toolCallId": f.tool_call.get("id"),
            "toolName": f.tool_call.get("name"),
            "result": f.result,
            "isError": f.is_error,
        },
    )


async def _emit_result_message(msg: ToolResultMessage, emit: Emit) -> None:
    await _emit(emit, {"type": "message_start", "message": msg})
    await _emit(emit, {"type": "message_end", "message": msg})


async def _emit_execution_start(tool_call: ToolCall, emit: Emit, config: AgentLoopConfig) -> None:
    await _emit(
        emit,
        {
            "type": "tool_execution_start",
            "toolCallId": tool_call.get("id"),
            "toolName": tool_call.get("name"),
            "args": _clean(config, tool_call.get("arguments")),
        },
    )


async def _fail_truncated_tool_calls(
    tool_calls: list[ToolCall], emit: Emit, config: AgentLoopConfig
) -> tuple[list[ToolResultMessage], bool]:
    messages = []
    for call in tool_calls:
        await _emit_execution_start(call, emit, config)
        f = _Finalized(call, _error_result(TRUNCATED_TOOL_CALL_TEXT.format(name=call.get("name"))), True)
        await _emit_execution_end(f, emit)
        msg = _tool_result_message(f)
        await _emit_result_message(msg, emit)
        messages.append(msg)
    return messages, False


def _terminates(finalized: Sequence[_Finalized]) -> bool:
    return bool(finalized) and all(f.result.get("terminate") is True for f in finalized)


async def _execute_tool_calls(
    context: AgentContext,
    assistant: AssistantMessage,
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> tuple[list[ToolResultMessage], bool]:
    calls = [c for c in assistant.get("content") or [] if _is_tool_call(c)]
    by_name = {t.name: t for t in context.tools}
    sequential = config.tool_execution == "sequential" or any(
        getattr(by_name.get(c.get("name")), "execution_mode", None) == "sequential" for c in calls
    )
    if sequential:
        return await _execute_sequential(context, assistant, calls, config, signal, emit)
    return await _execute_parallel(context, assistant, calls, config, signal, emit)


async def _execute_sequential(
    context: AgentContext,
    assistant: AssistantMessage,
    calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> tuple[list[ToolResultMessage], bool]:
    finalized_calls: list[_Finalized] = []
    messages = []
    for call in calls:
        await _emit_execution_start(call, emit, config)
        prep = await _prepare_tool_call(context, assistant, call, config, signal)
        if isinstance(prep, _Finalized):
            f = prep
        else:
            executed = await _execute_prepared(prep, signal, emit, config)
            f = await _finalize_executed(context, assistant, prep, executed, config, signal)
        await _emit_execution_end(f, emit)
        msg = _tool_result_message(f)
        await _emit_result_message(msg, emit)
        finalized_calls.append(f)
        messages.append(msg)
        if signal is not None and signal.aborted:
            break
    return messages, _terminates(finalized_calls)


async def _execute_parallel(
    context: AgentContext,
    assistant: AssistantMessage,
    calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> tuple[list[ToolResultMessage], bool]:
    entries: list[_Finalized | Callable[[], Awaitable[_Finalized]]] = []
    for call in calls:
        await _emit_execution_start(call, emit, config)
        prep = await _prepare_tool_call(context, assistant, call, config, signal)
        if isinstance(prep, _Finalized):
            await _emit_execution_end(prep, emit)
            entries.append(prep)
            if signal is not None and signal.aborted:
                break
            continue

        def make_runner(p: _Prepared, c: ToolCall) -> Callable[[], Awaitable[_Finalized]]:
            async def run() -> _Finalized:
                if signal is not None and signal.aborted:
                    f = _Finalized(c, _error_result("Operation aborted"), True)
                    await _emit_execution_end(f, emit)
                    return f
                executed = await _execute_prepared(p, signal, emit, config)
                f = await _finalize_executed(context, assistant, p, executed, config, signal)
                await _emit_execution_end(f, emit)
                return f

            return run

        entries.append(make_runner(prep, call))
        if signal is not None and signal.aborted:
            break

    async def resolve(entry: _Finalized | Callable[[], Awaitable[_Finalized]]) -> _Finalized:
        return entry if isinstance(entry, _Finalized) else await entry()

    if len(entries) == 1:  # nothing to run alongside: no task for it
        ordered = [await resolve(entries[0])]
    else:
        ordered = list(await asyncio.gather(*(resolve(e) for e in entries)))
    messages = []
    for f in ordered:
        msg = _tool_result_message(f)
        await _emit_result_message(msg, emit)
        messages.append(msg)
    return messages, _terminates(ordered)


def _message_of(error: BaseException) -> str:
    return str(error) if str(error) else type(error).__name__


async def _prepare_tool_call(
    context: AgentContext,
    assistant: AssistantMessage,
    call: ToolCall,
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
) -> _Finalized | _Prepared:
    tool = next((t for t in context.tools if t.name == call.get("name")), None)
    if tool is None:
        return _Finalized(call, _error_result(f"Tool {call.get('name')} not found"), True)
    try:
        prepared_call = call
        prepare = getattr(tool, "prepare_arguments", None)
        if prepare is not None:
            shimmed = prepare(call.get("arguments"))
            if shimmed is not call.get("arguments"):
                prepared_call = {**call, "arguments": shimmed}
        raw_args = prepared_call.get("arguments") or {}
        args = config.validate_arguments(tool, raw_args) if config.validate_arguments else dict(raw_args)
        if config.before_tool_call is not None:
            before = await config.before_tool_call(
                {"assistantMessage": assistant, "toolCall": call, "args": args, "context": context}, signal
            )
            if signal is not None and signal.aborted:
                return _Finalized(call, _error_result("Operation aborted"), True)
            if before and before.get("block"):
                result = _error_result(before.get("reason") or "Tool execution was blocked")
                if before.get("terminate") is True:
                    result["terminate"] = True
                return _Finalized(call, _clean(config, result), True)
        if signal is not None and signal.aborted:
            return _Finalized(call, _error_result("Operation aborted"), True)
        return _Prepared(call, tool, args)
    except Exception as error:  # a failed preparation is an error result, as in Pi
        return _Finalized(call, _clean(config, _error_result(_message_of(error))), True)


async def _execute_prepared(
    p: _Prepared, signal: SupportsAbort | None, emit: Emit, config: AgentLoopConfig
) -> tuple[ToolResult, bool]:
    # one pump per call emits the updates in order while the tool runs (Pi awaits each update's
    # listeners before the call's end; emitting at once keeps that order and streams live)
    # (the pump starts with the first update: most calls send none)
    queue: asyncio.Queue[ToolExecutionUpdateEvent | None] = asyncio.Queue()
    accepting = True
    shown_args = _clean(config, p.tool_call.get("arguments"))
    loop = asyncio.get_running_loop()
    pump_task: asyncio.Task[None] | None = None

    async def pump() -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            await _emit(emit, item)

    def on_update(partial: Any) -> None:
        nonlocal pump_task
        if not accepting:
            return
        event: ToolExecutionUpdateEvent = {
            "type": "tool_execution_update",
            "toolCallId": p.tool_call.get("id"),
            "toolName": p.tool_call.get("name"),
            "args": shown_args,
            "partialResult": redact_partial_result(partial) if config.redact_secrets else partial,
        }
        queue.put_nowait(event)
        if pump_task is None:
            pump_task = loop.create_task(pump())

    async def drain() -> None:
        nonlocal accepting
        accepting = False
        if pump_task is not None:
            queue.put_nowait(None)
            await pump_task

    try:
        result = await p.tool.execute(p.tool_call.get("id"), p.args, signal, on_update)
    except Exception as error:
        await drain()
        return _error_result(_message_of(error)), True
    except BaseException:
        if pump_task is not None:
            pump_task.cancel()
        raise
    await drain()
    return _result_dict(result), False


async def _finalize_executed(
    context: AgentContext,
    assistant: AssistantMessage,
    p: _Prepared,
    executed: tuple[ToolResult, bool],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
) -> _Finalized:
    result, is_error = executed
    if config.after_tool_call is not None:
        try:
            after = await config.after_tool_call(
                {
                    "assistantMessage": assistant,
                    "toolCall": p.tool_call,
                    "args": p.args,
                    "result": result,
                    "isError": is_error,
                    "context": context,
                },
                signal,
            )
            if after:
                result = {**result}
                if after.get("content") is not None:
                    result["content"] = after["content"]
                if after.get("details") is not None:
                    result["details"] = after["details"]
                if after.get("usage") is not None:
                    result["usage"] = after["usage"]
                if after.get("terminate") is not None:
                    result["terminate"] = after["terminate"]
                if after.get("isError") is not None:
                    is_error = bool(after["isError"])
        except Exception as error:
            result, is_error = _error_result(_message_of(error)), True
    return _Finalized(p.tool_call, _clean(config, copy.copy(result)), is_error)
