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

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from pi_nb.errors import MissingDependencyError
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    RemoteModel,
    StreamOptions,
    make_assistant_message,
    make_usage,
    provider_error_text,
    snapshot_message,
)

__all__ = ["THINKING_BUDGETS", "AnthropicModel", "to_anthropic_messages"]

# budget_tokens per thinking level (pi-ai's defaults for budget-based thinking)
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}

_STOP = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}


def _require_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as error:  # pragma: no cover
        raise MissingDependencyError(
            "The Anthropic provider needs the anthropic SDK: pip install 'pi_nb[anthropic]'"
        ) from error
    return anthropic


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]},
    }


def to_anthropic_messages(context: Context) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Messages API ``messages`` (system prompt goes to ``system``)."""
    out: list[dict[str, Any]] = []
    for msg in context.messages:
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
            blocks = []
            for b in content or []:
                kind = b.get("type")
                if kind == "text" and b.get("text"):
                    blocks.append({"type": "text", "text": b["text"]})
                elif kind == "thinking" and b.get("thinkingSignature"):
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": b.get("thinking", ""),
                            "signature": b["thinkingSignature"],
                        }
                    )
                elif kind == "thinking" and b.get("thinking"):
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
            "messages": to_anthropic_messages(context),
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
        opts = options or StreamOptions()
        output = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        yield {"type": "start", "partial": snapshot_message(output)}
        index_map: dict[int, int] = {}
        json_parts: dict[int, str] = {}
        stop_raw: str | None = None
        try:
            client = self._client()
            response = await client.messages.create(**self.build_request(context, opts))
            async for event in response:
                if opts.signal is not None and opts.signal.aborted:
                    await response.close()
                    output.update(stopReason="aborted", errorMessage="Request was aborted")
                    yield {"type": "error", "reason": "aborted", "error": output}
                    return
                kind = event.type
                if kind == "message_start":
                    u = event.message.usage
                    output["usage"] = make_usage(
                        u.input_tokens or 0,
                        u.output_tokens or 0,
                        getattr(u, "cache_read_input_tokens", 0) or 0,
                        getattr(u, "cache_creation_input_tokens", 0) or 0,
                    )
                    output["responseId"] = event.message.id
                elif kind == "content_block_start":
                    cb = event.content_block
                    if cb.type == "text":
                        output["content"].append({"type": "text", "text": ""})
                        start = "text_start"
                    elif cb.type == "thinking":
                        output["content"].append(
                            {"type": "thinking", "thinking": "", "thinkingSignature": ""}
                        )
                        start = "thinking_start"
                    elif cb.type == "redacted_thinking":
                        output["content"].append(
                            {
                                "type": "thinking",
                                "thinking": "",
                                "thinkingSignature": cb.data,
                                "redacted": True,
                            }
                        )
                        start = "thinking_start"
                    elif cb.type == "tool_use":
                        output["content"].append(
                            {"type": "toolCall", "id": cb.id, "name": cb.name, "arguments": {}}
                        )
                        json_parts[event.index] = ""
                        start = "toolcall_start"
                    else:
                        continue
                    index_map[event.index] = len(output["content"]) - 1
                    yield {
                        "type": start,
                        "contentIndex": index_map[event.index],
                        "partial": snapshot_message(output),
                    }
                elif kind == "content_block_delta":
                    if event.index not in index_map:
                        continue
                    i = index_map[event.index]
                    d = event.delta
                    if d.type == "text_delta":
                        output["content"][i]["text"] += d.text
                        yield {
                            "type": "text_delta",
                            "contentIndex": i,
                            "delta": d.text,
                            "partial": snapshot_message(output),
                        }
                    elif d.type == "thinking_delta":
                        output["content"][i]["thinking"] += d.thinking
                        yield {
                            "type": "thinking_delta",
                            "contentIndex": i,
                            "delta": d.thinking,
                            "partial": snapshot_message(output),
                        }
                    elif d.type == "signature_delta":
                        output["content"][i]["thinkingSignature"] += d.signature
                    elif d.type == "input_json_delta":
                        json_parts[event.index] += d.partial_json
                        yield {
                            "type": "toolcall_delta",
                            "contentIndex": i,
                            "delta": d.partial_json,
                            "partial": snapshot_message(output),
                        }
                elif kind == "content_block_stop":
                    if event.index not in index_map:
                        continue
                    i = index_map[event.index]
                    block = output["content"][i]
                    if block["type"] == "toolCall":
                        raw = json_parts.get(event.index, "")
                        try:
                            block["arguments"] = json.loads(raw) if raw.strip() else {}
                        except json.JSONDecodeError:
                            block["arguments"] = {}
                        yield {
                            "type": "toolcall_end",
                            "contentIndex": i,
                            "toolCall": dict(block),
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
                    stop_raw = event.delta.stop_reason or stop_raw
                    u = event.usage
                    usage = output["usage"]
                    if getattr(u, "input_tokens", None) is not None:
                        usage["input"] = u.input_tokens
                    if getattr(u, "cache_read_input_tokens", None) is not None:
                        usage["cacheRead"] = u.cache_read_input_tokens
                    if getattr(u, "cache_creation_input_tokens", None) is not None:
                        usage["cacheWrite"] = u.cache_creation_input_tokens
                    if getattr(u, "output_tokens", None) is not None:
                        usage["output"] = u.output_tokens
                    usage["totalTokens"] = (
                        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
                    )
        except Exception as error:
            output["stopReason"] = "error"
            output["errorMessage"] = provider_error_text(error, os.environ.get(self.api_key_env))
            yield {"type": "error", "reason": "error", "error": output}
            return
        if stop_raw == "refusal":
            output.update(stopReason="error", errorMessage="The model refused to complete the request")
            yield {"type": "error", "reason": "error", "error": output}
            return
        stop = _STOP.get(stop_raw or "end_turn")
        if stop is None:
            output.update(stopReason="error", errorMessage=f"Provider stopped with: {stop_raw}")
            yield {"type": "error", "reason": "error", "error": output}
            return
        output["stopReason"] = stop
        yield {"type": "done", "reason": stop, "message": output}
