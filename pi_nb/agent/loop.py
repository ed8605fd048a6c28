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
* an ``error``/``aborted`` response ends the run after ``turn_end``.

Tool failures are values (error tool results), never exceptions out of the loop.

pi_nb adds one thing Pi does not do: with ``redact_secrets`` (the default) every message the
loop records or emits (the prompts, each assistant message and its streamed partials, each tool
result, streamed tool update and error text) goes through :func:`pi_nb.redaction.redact_message`
*before* it enters the context, so what the model is sent next, what the agent keeps, what a
session stores and what a listener shows are the same redacted objects.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pi_nb.errors import AgentError, PiNbError
from pi_nb.providers.base import Context, Model, StreamOptions, SupportsAbort, ToolSchema, now_ms
from pi_nb.redaction import redact_message, redact_partial_result

__all__ = [
    "TRUNCATED_TOOL_CALL_TEXT",
    "AgentContext",
    "AgentLoopConfig",
    "NextTurnSnapshot",
    "TurnSnapshot",
    "run_agent_loop",
    "run_agent_loop_continue",
]

AgentEvent = dict[str, Any]
Emit = Callable[[AgentEvent], Awaitable[None] | None]

TRUNCATED_TOOL_CALL_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
    "may be truncated. Re-issue the tool call with complete arguments."
)


@dataclass
class AgentContext:
    """``AgentContext {systemPrompt, messages, tools}``: ``messages`` are AgentMessages (custom roles allowed)."""

    system_prompt: str
    messages: list[dict[str, Any]]
    tools: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class TurnSnapshot:
    """What ``prepare_next_turn`` and ``should_stop_after_turn`` see of the turn that just ended."""

    message: dict[str, Any]
    tool_results: list[dict[str, Any]]
    context: AgentContext
    new_messages: list[dict[str, Any]]


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
    convert_to_llm: Callable[
        [list[dict[str, Any]]], Sequence[dict[str, Any]] | Awaitable[Sequence[dict[str, Any]]]
    ]
    transform_context: (
        Callable[[list[dict[str, Any]], SupportsAbort | None], Awaitable[list[dict[str, Any]]]] | None
    ) = None
    get_steering_messages: Callable[[], Awaitable[list[dict[str, Any]]]] | None = None
    get_follow_up_messages: Callable[[], Awaitable[list[dict[str, Any]]]] | None = None
    prepare_next_turn: Callable[[TurnSnapshot], Awaitable[NextTurnSnapshot | None]] | None = None
    should_stop_after_turn: Callable[[TurnSnapshot], Awaitable[bool] | bool] | None = None
    before_tool_call: (
        Callable[[dict[str, Any], SupportsAbort | None], Awaitable[Mapping[str, Any] | None]] | None
    ) = None
    after_tool_call: (
        Callable[[dict[str, Any], SupportsAbort | None], Awaitable[Mapping[str, Any] | None]] | None
    ) = None
    validate_arguments: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    reasoning: str | None = None
    max_tokens: int | None = None
    session_id: str | None = None
    temperature: float | None = None
    redact_secrets: bool = True
    """Redact known secret values (see :mod:`pi_nb.redaction`) in everything the loop records or emits."""


def _clean(config: AgentLoopConfig, value: Any) -> Any:
    return redact_message(value) if config.redact_secrets else value


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def _emit(emit: Emit, event: AgentEvent) -> None:
    await _maybe_await(emit(event))


async def run_agent_loop(
    prompts: Sequence[dict[str, Any]],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: SupportsAbort | None = None,
) -> list[dict[str, Any]]:
    """``runAgentLoop``: start a run with new prompt messages; returns the run's new messages."""
    prompts = [_clean(config, p) for p in prompts]
    new_messages: list[dict[str, Any]] = list(prompts)
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
) -> list[dict[str, Any]]:
    """``runAgentLoopContinue``: resume from the context (retries); the last message must not be an assistant's."""
    if not context.messages:
        raise AgentError("Cannot continue: no messages in context")
    if context.messages[-1].get("role") == "assistant":
        raise AgentError("Cannot continue from message role: assistant")
    new_messages: list[dict[str, Any]] = []
    current = replace(context)
    await _emit(emit, {"type": "agent_start"})
    await _emit(emit, {"type": "turn_start"})
    await _run_loop(current, new_messages, config, signal, emit)
    return new_messages


async def _poll(getter: Callable[[], Awaitable[list[dict[str, Any]]]] | None) -> list[dict[str, Any]]:
    if getter is None:
        return []
    return list(await getter() or [])


async def _run_loop(
    current: AgentContext,
    new_messages: list[dict[str, Any]],
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

            message = await _stream_assistant_response(current, config, signal, emit)
            new_messages.append(message)
            if message.get("stopReason") in ("error", "aborted"):
                await _emit(emit, {"type": "turn_end", "message": message, "toolResults": []})
                await _emit(emit, {"type": "agent_end", "messages": new_messages})
                return

            tool_calls = [c for c in message.get("content") or [] if c.get("type") == "toolCall"]
            tool_results: list[dict[str, Any]] = []
            has_more_tool_calls = False
            if tool_calls:
                if message.get("stopReason") == "length":
                    results, terminate = await _fail_truncated_tool_calls(tool_calls, emit)
                else:
                    results, terminate = await _execute_tool_calls(current, message, config, signal, emit)
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


_UPDATE_EVENTS = {
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


async def _stream_assistant_response(
    context: AgentContext, config: AgentLoopConfig, signal: SupportsAbort | None, emit: Emit
) -> dict[str, Any]:
    messages = context.messages
    if config.transform_context is not None:
        messages = await config.transform_context(messages, signal)
    llm_messages = list(await _maybe_await(config.convert_to_llm(messages)))
    tools: list[ToolSchema] = [
        {"name": t.name, "description": t.description, "parameters": t.parameters} for t in context.tools
    ]
    llm_context = Context(context.system_prompt, llm_messages, tools)
    options = StreamOptions(
        max_tokens=config.max_tokens,
        reasoning=config.reasoning,
        signal=signal,
        session_id=config.session_id,
        temperature=config.temperature,
    )
    partial: dict[str, Any] | None = None
    added_partial = False
    final: dict[str, Any] | None = None
    async for event in config.model.stream(llm_context, options):
        kind = event["type"]
        if kind == "start":
            partial = event["partial"]
            context.messages.append(partial)
            added_partial = True
            await _emit(emit, {"type": "message_start", "message": _clean(config, dict(partial))})
        elif kind in _UPDATE_EVENTS:
            if partial is not None:
                partial = event["partial"]
                context.messages[-1] = partial
                shown = _clean(config, dict(partial))
                if shown is not partial and config.redact_secrets:
                    event = _clean(config, dict(event))
                await _emit(
                    emit, {"type": "message_update", "assistantMessageEvent": event, "message": shown}
                )
        elif kind in ("done", "error"):
            final = _clean(config, event["message"] if kind == "done" else event["error"])
            break
    if final is None:
        raise PiNbError(f"{config.model!r} ended its stream without a done or error event")
    if added_partial:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await _emit(emit, {"type": "message_start", "message": dict(final)})
    await _emit(emit, {"type": "message_end", "message": final})
    return final


# --- tools ------------------------------------------------------------------------------------


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "details": {}}


def _result_dict(result: Any) -> dict[str, Any]:
    """Tools may return a mapping or an object with ``content``/``details`` (``AgentToolResult``)."""
    if isinstance(result, Mapping):
        return dict(result)
    out: dict[str, Any] = {
        "content": getattr(result, "content", None),
        "details": getattr(result, "details", None),
    }
    for attr, key in (("usage", "usage"), ("terminate", "terminate"), ("added_tool_names", "addedToolNames")):
        value = getattr(result, attr, None)
        if value is not None:
            out[key] = value
    return out


@dataclass
class _Finalized:
    tool_call: dict[str, Any]
    result: dict[str, Any]
    is_error: bool


@dataclass
class _Prepared:
    tool_call: dict[str, Any]
    tool: Any
    args: dict[str, Any]


def _tool_result_message(f: _Finalized) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": f.tool_call.get("id"),
        "toolName": f.tool_call.get("name"),
        "content": f.result.get("content") if f.result.get("content") is not None else [],
    }
    if f.result.get("details") is not None:
        msg["details"] = f.result["details"]
    if f.result.get("usage") is not None:
        msg["usage"] = f.result["usage"]
    if f.result.get("addedToolNames"):
        msg["addedToolNames"] = f.result["addedToolNames"]
    msg["isError"] = f.is_error
    msg["timestamp"] = now_ms()
    return msg


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


async def _emit_result_message(msg: dict[str, Any], emit: Emit) -> None:
    await _emit(emit, {"type": "message_start", "message": msg})
    await _emit(emit, {"type": "message_end", "message": msg})


async def _emit_execution_start(tool_call: dict[str, Any], emit: Emit) -> None:
    await _emit(
        emit,
        {
            "type": "tool_execution_start",
            "toolCallId": tool_call.get("id"),
            "toolName": tool_call.get("name"),
            "args": tool_call.get("arguments"),
        },
    )


async def _fail_truncated_tool_calls(
    tool_calls: list[dict[str, Any]], emit: Emit
) -> tuple[list[dict[str, Any]], bool]:
    messages = []
    for call in tool_calls:
        await _emit_execution_start(call, emit)
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
    assistant: dict[str, Any],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> tuple[list[dict[str, Any]], bool]:
    calls = [c for c in assistant.get("content") or [] if c.get("type") == "toolCall"]
    by_name = {t.name: t for t in context.tools}
    sequential = config.tool_execution == "sequential" or any(
        getattr(by_name.get(c.get("name")), "execution_mode", None) == "sequential" for c in calls
    )
    if sequential:
        return await _execute_sequential(context, assistant, calls, config, signal, emit)
    return await _execute_parallel(context, assistant, calls, config, signal, emit)


async def _execute_sequential(
    context: AgentContext,
    assistant: dict[str, Any],
    calls: list[dict[str, Any]],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> tuple[list[dict[str, Any]], bool]:
    finalized_calls: list[_Finalized] = []
    messages = []
    for call in calls:
        await _emit_execution_start(call, emit)
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
    assistant: dict[str, Any],
    calls: list[dict[str, Any]],
    config: AgentLoopConfig,
    signal: SupportsAbort | None,
    emit: Emit,
) -> tuple[list[dict[str, Any]], bool]:
    entries: list[_Finalized | Callable[[], Awaitable[_Finalized]]] = []
    for call in calls:
        await _emit_execution_start(call, emit)
        prep = await _prepare_tool_call(context, assistant, call, config, signal)
        if isinstance(prep, _Finalized):
            await _emit_execution_end(prep, emit)
            entries.append(prep)
            if signal is not None and signal.aborted:
                break
            continue

        def make_runner(p: _Prepared, c: dict[str, Any]) -> Callable[[], Awaitable[_Finalized]]:
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
    assistant: dict[str, Any],
    call: dict[str, Any],
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
            args = prepare(call.get("arguments"))
            if args is not call.get("arguments"):
                prepared_call = {**call, "arguments": args}
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
) -> tuple[dict[str, Any], bool]:
    pending_updates: list[Awaitable[None]] = []
    accepting = True

    def on_update(partial: Any) -> None:
        if not accepting:
            return
        event = {
            "type": "tool_execution_update",
            "toolCallId": p.tool_call.get("id"),
            "toolName": p.tool_call.get("name"),
            "args": p.tool_call.get("arguments"),
            "partialResult": redact_partial_result(partial) if config.redact_secrets else partial,
        }
        pending_updates.append(_emit(emit, event))

    try:
        result = await p.tool.execute(p.tool_call.get("id"), p.args, signal, on_update)
        accepting = False
        await asyncio.gather(*pending_updates)
        return _result_dict(result), False
    except Exception as error:
        accepting = False
        await asyncio.gather(*pending_updates)
        return _error_result(_message_of(error)), True


async def _finalize_executed(
    context: AgentContext,
    assistant: dict[str, Any],
    p: _Prepared,
    executed: tuple[dict[str, Any], bool],
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
                for key in ("content", "details", "usage", "terminate"):
                    if after.get(key) is not None:
                        result[key] = after[key]
                if after.get("isError") is not None:
                    is_error = bool(after["isError"])
        except Exception as error:
            result, is_error = _error_result(_message_of(error)), True
    return _Finalized(p.tool_call, _clean(config, copy.copy(result)), is_error)
