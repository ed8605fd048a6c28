"""``AnthropicModel``: Claude through the ``anthropic`` SDK's Messages API, streaming.

Conversion and usage follow pi-ai's ``anthropic-messages`` provider: consecutive tool results
become one user message of ``tool_result`` blocks; thinking blocks keep their signatures;
``cache_read_input_tokens``/``cache_creation_input_tokens`` are cache reads/writes; stop reasons
``end_turn``/``pause_turn``/``stop_sequence`` -> ``stop``, ``max_tokens`` -> ``length``,
``tool_use`` -> ``toolUse``, ``refusal`` -> ``error``. HTTP errors become an ``error`` message with
the API's own text (``prompt is too long: ...`` is how overflow reaches :func:`is_context_overflow`).

The key comes from ``$ANTHROPIC_API_KEY`` (or ``api_key_env``) only; it is never stored.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from pi_nb.errors import MissingDependencyError
from pi_nb.messages import AssistantContent, DoneReason, ErrorEvent, ErrorReason
from pi_nb.providers._stream_common import (
    BlockStart,
    CostFunction,
    StreamProtocolError,
    apply_cost,
    block_start_event,
    parse_tool_arguments,
    stream_failure,
)
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    RemoteModel,
    StreamOptions,
    make_assistant_message,
    make_usage,
    snapshot_message,
)

__all__ = ["REDACTED_THINKING", "THINKING_BUDGETS", "AnthropicModel", "to_anthropic_messages"]

# the text Pi shows for a redacted_thinking block (its opaque data is kept as the signature)
REDACTED_THINKING = "[Reasoning redacted]"

# budget_tokens per thinking level (pi-ai's defaults for budget-based thinking)
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}

# Typing: the Messages API wire JSON (the request body, its messages and blocks, each streamed
# event) is ``dict[str, Any]``: open JSON, not modelled here. The session's messages are read as
# JSON too (``Mapping[str, Any]``): they reach the provider unvalidated and are read field by
# field, with Pi's tolerance of missing or odd fields. What the stream produces is typed: the
# ``AssistantMessage``, its content blocks and the events.

_STOP: dict[str, DoneReason] = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}


_StreamError = StreamProtocolError  # a stream that broke Anthropic's event protocol


def _num(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _as_dict(obj: Any) -> dict[str, Any]:
    """An SDK event as the JSON the server sent."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    out = to_dict(warnings=False) if callable(to_dict) else None
    return out if isinstance(out, dict) else {}


def _require_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as error:  # pragma: no cover
        raise MissingDependencyError(
            "The Anthropic provider needs the anthropic SDK: pip install 'pi_nb[anthropic]'"
        ) from error
    return anthropic


def _image(block: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]},
    }


def to_anthropic_messages(
    context: Context, *, target: tuple[str, str, str] | None = None
) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Messages API ``messages`` (system prompt goes to ``system``).

    ``target`` is the ``(provider, api, model id)`` the request goes to. As in Pi, only an
    assistant message of that same model sends its signed and redacted thinking back; another
    model's thinking becomes plain text and its redacted thinking is left out. (Pi records the
    model id the API answered with, e.g. ``claude-sonnet-4-5-20250929``: a request made with an
    alias id therefore counts as another model.) Failed or aborted assistant turns are left out.
    """
    out: list[dict[str, Any]] = []
    messages: Sequence[Mapping[str, Any]] = context.messages  # read as JSON (see the top)
    for msg in messages:
        role = msg.get("role")
        content = msg.get("content")
        if role == "user":
            if isinstance(content, str):
                blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
            else:
                blocks = [
                    {"type": "text", "text": b.get("text", "")} if b.get("type") == "text" else _image(b)
                    for b in content or []
                    if b.get("type") in ("text", "image")
                ]
            blocks = [b for b in blocks if b.get("type") != "text" or b["text"]]
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif role == "assistant":
            if msg.get("stopReason") in ("error", "aborted"):
                continue
            same_model = target is None or (msg.get("provider"), msg.get("api"), msg.get("model")) == target
            blocks = []
            for b in content or []:
                kind = b.get("type")
                if kind == "thinking" and not same_model:
                    if b.get("redacted") or not (b.get("thinking") or "").strip():
                        continue
                    blocks.append({"type": "text", "text": b["thinking"]})
                elif kind == "text" and (b.get("text") or "").strip():
                    blocks.append({"type": "text", "text": b["text"]})
                elif kind == "thinking" and b.get("redacted"):
                    # the opaque payload goes back as it came
                    blocks.append({"type": "redacted_thinking", "data": b.get("thinkingSignature", "")})
                elif kind == "thinking" and (b.get("thinkingSignature") or "").strip():
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": b.get("thinking", ""),
                            "signature": b["thinkingSignature"],
                        }
                    )
                elif kind == "thinking" and (b.get("thinking") or "").strip():
                    blocks.append(
                        {"type": "text", "text": b["thinking"]}
                    )  # unsigned thinking cannot be replayed as thinking
                elif kind == "toolCall":
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": b.get("id"),
                            "name": b.get("name"),
                            "input": b.get("arguments") or {},
                        }
                    )
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            inner = [
                {"type": "text", "text": b.get("text", "")} if b.get("type") == "text" else _image(b)
                for b in content or []
                if b.get("type") in ("text", "image")
            ]
            block = {
                "type": "tool_result",
                "tool_use_id": msg.get("toolCallId"),
                "content": inner,
                "is_error": bool(msg.get("isError")),
            }
            if (
                out
                and out[-1]["role"] == "user"
                and all(c.get("type") == "tool_result" for c in out[-1]["content"])
            ):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out


class AnthropicModel(RemoteModel):
    """A Claude model over the Messages API."""

    api = "anthropic-messages"
    default_provider = "anthropic"
    default_context_window = 200_000
    default_max_tokens = 64_000
    default_reasoning = True
    base_url_env = "ANTHROPIC_BASE_URL"
    default_api_key_env = "ANTHROPIC_API_KEY"
    cost_function: CostFunction | None = None

    def __init__(self, id: str, *, cost_function: CostFunction | None = None, **kwargs: Any) -> None:
        """``cost_function`` (optional) turns the final usage into its cost (``usage["cost"]``)."""
        super().__init__(id, **kwargs)
        self.cost_function = cost_function

    def _client(self) -> Any:
        anthropic = _require_anthropic()
        return anthropic.AsyncAnthropic(
            api_key=os.environ.get(self.api_key_env),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    def build_request(self, context: Context, options: StreamOptions | None) -> dict[str, Any]:
        opts = options or StreamOptions()
        max_tokens = opts.max_tokens or self.max_tokens
        body: dict[str, Any] = {
            "model": self.id,
            "messages": to_anthropic_messages(context, target=(self.provider, self.api, self.id)),
            "max_tokens": max_tokens,
            "stream": True,
        }
        if context.system_prompt:
            body["system"] = context.system_prompt
        if context.tools:
            body["tools"] = [
                {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                for t in context.tools
            ]
        if opts.reasoning and self.reasoning:
            budget = THINKING_BUDGETS.get(opts.reasoning, 8192)
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = (
                max(max_tokens, budget + 1024)
                if self.max_tokens <= 0
                else min(max(max_tokens, budget + 1024), self.max_tokens)
            )
        elif opts.temperature is not None:
            body["temperature"] = opts.temperature
        return body

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """Pi's ``anthropic-messages`` stream: text, thinking with its signature (``signature_delta``),
        ``redacted_thinking`` as ``[Reasoning redacted]`` carrying the opaque data as its signature,
        tool calls; a stream cut before ``message_stop`` or without a stop reason is an error."""
        opts = options or StreamOptions()
        output = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        yield {"type": "start", "partial": snapshot_message(output)}
        blocks: list[AssistantContent] = output["content"]
        index_map: dict[int, int] = {}
        json_parts: dict[int, str] = {}
        stop_raw: str | None = None
        saw_start = saw_stop = False

        def fail(message: str, reason: ErrorReason = "error") -> ErrorEvent:
            for position, block in zip(index_map, index_map.values(), strict=True):
                opened = blocks[block]
                if opened["type"] == "toolCall":
                    opened["arguments"] = parse_tool_arguments(json_parts.get(position, ""))
            output["stopReason"] = reason
            output["errorMessage"] = message
            apply_cost(output["usage"], self.cost_function)  # tokens already used are still paid for
            return {"type": "error", "reason": reason, "error": output}

        try:
            client = self._client()
            response = await client.messages.create(**self.build_request(context, opts))
            async for raw_event in response:
                if opts.signal is not None and opts.signal.aborted:
                    await response.close()
                    yield fail("Request was aborted", "aborted")
                    return
                event = _as_dict(raw_event)
                kind = event.get("type")
                if kind == "message_start":
                    saw_start = True
                    message: Mapping[str, Any] = event.get("message") or {}
                    u = message.get("usage") or {}
                    response_id: Any = message.get("id")  # as the server sent it (wire JSON, not checked)
                    output["responseId"] = response_id
                    if message.get("model"):
                        output["model"] = message["model"]  # Pi records the model that answered
                    usage = make_usage(
                        _num(u.get("input_tokens")),
                        _num(u.get("output_tokens")),
                        _num(u.get("cache_read_input_tokens")),
                        _num(u.get("cache_creation_input_tokens")),
                    )
                    creation = u.get("cache_creation")
                    usage["cacheWrite1h"] = (
                        _num(creation.get("ephemeral_1h_input_tokens")) if isinstance(creation, dict) else 0
                    )
                    output["usage"] = usage
                elif kind == "message_stop":
                    saw_stop = True
                elif kind == "content_block_start":
                    cb: Mapping[str, Any] = event.get("content_block") or {}
                    cb_type = cb.get("type")
                    start: BlockStart
                    if cb_type == "text":
                        blocks.append({"type": "text", "text": cb.get("text") or ""})
                        start = "text_start"
                    elif cb_type == "thinking":
                        blocks.append(
                            {
                                "type": "thinking",
                                "thinking": cb.get("thinking") or "",
                                "thinkingSignature": cb.get("signature") or "",
                            }
                        )
                        start = "thinking_start"
                    elif cb_type == "redacted_thinking":
                        blocks.append(
                            {
                                "type": "thinking",
                                "thinking": REDACTED_THINKING,
                                "thinkingSignature": cb.get("data") or "",
                                "redacted": True,
                            }
                        )
                        start = "thinking_start"
                    elif cb_type == "tool_use":
                        # as the server sent them (wire JSON, not checked)
                        call_id: Any = cb.get("id")
                        call_name: Any = cb.get("name")
                        blocks.append(
                            {
                                "type": "toolCall",
                                "id": call_id,
                                "name": call_name,
                                "arguments": cb.get("input") or {},
                            }
                        )
                        json_parts[event["index"]] = ""
                        start = "toolcall_start"
                    else:
                        continue
                    index_map[event["index"]] = len(blocks) - 1
                    yield block_start_event(start, len(blocks) - 1, snapshot_message(output))
                elif kind == "content_block_delta":
                    if event.get("index") not in index_map:
                        continue
                    i = index_map[event["index"]]
                    block = blocks[i]
                    d = event.get("delta") or {}
                    d_type = d.get("type")
                    if d_type == "text_delta" and block["type"] == "text":
                        block["text"] += d.get("text", "")
                        yield {
                            "type": "text_delta",
                            "contentIndex": i,
                            "delta": d.get("text", ""),
                            "partial": snapshot_message(output),
                        }
                    elif d_type == "thinking_delta" and block["type"] == "thinking":
                        block["thinking"] += d.get("thinking", "")
                        yield {
                            "type": "thinking_delta",
                            "contentIndex": i,
                            "delta": d.get("thinking", ""),
                            "partial": snapshot_message(output),
                        }
                    elif d_type == "signature_delta" and block["type"] == "thinking":
                        block["thinkingSignature"] = (block.get("thinkingSignature") or "") + d.get(
                            "signature", ""
                        )
                    elif d_type == "input_json_delta" and block["type"] == "toolCall":
                        json_parts[event["index"]] += d.get("partial_json", "")
                        block["arguments"] = parse_tool_arguments(json_parts[event["index"]])
                        yield {
                            "type": "toolcall_delta",
                            "contentIndex": i,
                            "delta": d.get("partial_json", ""),
                            "partial": snapshot_message(output),
                        }
                elif kind == "content_block_stop":
                    if event.get("index") not in index_map:
                        continue
                    i = index_map[event["index"]]
                    block = blocks[i]
                    if block["type"] == "toolCall":
                        block["arguments"] = parse_tool_arguments(json_parts.get(event["index"], "")) or (
                            block.get("arguments") or {}
                        )
                        yield {
                            "type": "toolcall_end",
                            "contentIndex": i,
                            "toolCall": block.copy(),
                            "partial": snapshot_message(output),
                        }
                    elif block["type"] == "text":
                        yield {
                            "type": "text_end",
                            "contentIndex": i,
                            "content": block["text"],
                            "partial": snapshot_message(output),
                        }
                    else:
                        yield {
                            "type": "thinking_end",
                            "contentIndex": i,
                            "content": block["thinking"],
                            "partial": snapshot_message(output),
                        }
                elif kind == "message_delta":
                    delta = event.get("delta") or {}
                    if delta.get("stop_reason"):
                        stop_raw = delta["stop_reason"]
                        output["rawStopReason"] = stop_raw
                        details = delta.get("stop_details")
                        if stop_raw == "refusal":
                            explanation = details.get("explanation") if isinstance(details, dict) else None
                            output["errorMessage"] = (
                                explanation or "The model refused to complete the request"
                            )
                    u = event.get("usage") or {}
                    usage = output["usage"]
                    if u.get("input_tokens") is not None:
                        usage["input"] = u["input_tokens"]
                    if u.get("output_tokens") is not None:
                        usage["output"] = u["output_tokens"]
                    if u.get("cache_read_input_tokens") is not None:
                        usage["cacheRead"] = u["cache_read_input_tokens"]
                    if u.get("cache_creation_input_tokens") is not None:
                        usage["cacheWrite"] = u["cache_creation_input_tokens"]
                    thinking_tokens = (u.get("output_tokens_details") or {}).get("thinking_tokens")
                    if thinking_tokens is not None:
                        usage["reasoning"] = thinking_tokens
                    usage["totalTokens"] = (
                        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
                    )
            if saw_start and not saw_stop:
                raise _StreamError("Anthropic stream ended before message_stop")
        except Exception as error:  # provider failures are values (error messages), as in pi-ai
            yield fail(*stream_failure(error, opts.signal, os.environ.get(self.api_key_env)))
            return
        apply_cost(output["usage"], self.cost_function)
        if stop_raw is None:
            yield fail("Anthropic stream ended without a stop reason")
            return
        if stop_raw == "refusal":
            yield fail(output.get("errorMessage") or "The model refused to complete the request")
            return
        if stop_raw == "sensitive":
            yield fail("Provider stopped with: sensitive")
            return
        stop = _STOP.get(stop_raw)
        if stop is None:
            yield fail(f"Unhandled stop reason: {stop_raw}")
            return
        output["stopReason"] = stop
        yield {"type": "done", "reason": stop, "message": output}
