"""``OpenAICompatModel``: any OpenAI-compatible Chat Completions endpoint, through the ``openai`` SDK.

OpenAI itself, Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter: they all speak
``POST {base_url}/chat/completions`` with ``stream: true``. Conversion and usage follow pi-ai's
``openai-completions`` provider: ``cached_tokens`` are cache reads and are taken out of ``input``;
``finish_reason`` maps to Pi's stop reasons (``tool_calls`` -> ``toolUse``, ``length`` -> ``length``,
anything unknown -> an ``error`` with ``Provider finish_reason: {reason}``); HTTP errors become an
``error`` message carrying the provider's own text, so :func:`is_context_overflow` can read it.

The API key comes from the environment only (``OPENAI_API_KEY`` or the variable named by
``api_key_env``); it is never stored in a message, a session or an output.
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

__all__ = ["OpenAICompatModel", "to_openai_messages"]


def _require_openai() -> Any:
    try:
        import openai
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError(
            "The OpenAI-compatible provider needs the openai SDK: pip install 'pi_nb[openai]'"
        ) from error
    return openai


def _image_url(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"}}


def to_openai_messages(context: Context, *, supports_images: bool = True) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Chat Completions messages (images of tool results follow as a user message)."""
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        out.append({"role": "system", "content": context.system_prompt})
    for msg in context.messages:
        role = msg.get("role")
        content = msg.get("content")
        if role == "user":
            if isinstance(content, str):
                out.append({"role": "user", "content": content})
                continue
            parts: list[dict[str, Any]] = []
            for block in content or []:
                if block.get("type") == "text":
                    parts.append({"type": "text", "text": block.get("text", "")})
                elif block.get("type") == "image" and supports_images:
                    parts.append(_image_url(block))
            if parts:
                out.append({"role": "user", "content": parts})
        elif role == "assistant":
            text = "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {
                        "name": b.get("name"),
                        "arguments": json.dumps(b.get("arguments") or {}, ensure_ascii=False),
                    },
                }
                for b in content or []
                if b.get("type") == "toolCall"
            ]
            if not text and not calls:
                continue
            item: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                item["tool_calls"] = calls
            out.append(item)
        elif role == "toolResult":
            blocks = content or []
            text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            images = [b for b in blocks if b.get("type") == "image"]
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": msg.get("toolCallId"),
                    "content": text or ("(see attached image)" if images else ""),
                }
            )
            if images and supports_images:
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Attached image(s) from tool result:"},
                            *(_image_url(b) for b in images),
                        ],
                    }
                )
    return out


def _usage(raw: Any) -> dict[str, Any]:
    def get(obj: Any, key: str) -> Any:
        return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)

    prompt = get(raw, "prompt_tokens") or 0
    details = get(raw, "prompt_tokens_details")
    cache_read = (
        (get(details, "cached_tokens") if details is not None else None)
        or get(raw, "prompt_cache_hit_tokens")
        or 0
    )
    cache_write = (get(details, "cache_write_tokens") if details is not None else None) or 0
    output = get(raw, "completion_tokens") or 0
    usage = make_usage(max(0, prompt - cache_read - cache_write), output, cache_read, cache_write)
    return usage


_STOP = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


class OpenAICompatModel(RemoteModel):
    """A Chat Completions model. ``base_url`` defaults to ``$OPENAI_BASE_URL`` or OpenAI's."""

    api = "openai-completions"
    default_provider = "openai"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = "OPENAI_BASE_URL"
    default_api_key_env = "OPENAI_API_KEY"

    def _client(self) -> Any:
        openai = _require_openai()
        # local servers (Ollama, llama.cpp) accept any key; the SDK insists on one being set
        key = os.environ.get(self.api_key_env) or ("not-needed" if self.base_url else None)
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries
        )

    def build_request(self, context: Context, options: StreamOptions | None) -> dict[str, Any]:
        opts = options or StreamOptions()
        body: dict[str, Any] = {
            "model": self.id,
            "messages": to_openai_messages(context, supports_images="image" in self.input),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if context.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t["description"],
                        "parameters": t["parameters"],
                    },
                }
                for t in context.tools
            ]
        if opts.max_tokens:
            body["max_completion_tokens"] = opts.max_tokens
        if opts.temperature is not None:
            body["temperature"] = opts.temperature
        if opts.reasoning and self.reasoning:
            body["reasoning_effort"] = {"minimal": "minimal", "low": "low", "medium": "medium"}.get(
                opts.reasoning, "high"
            )
        return body

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        opts = options or StreamOptions()
        output = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        yield {"type": "start", "partial": snapshot_message(output)}
        tool_args: dict[int, str] = {}
        tool_index: dict[int, int] = {}
        text_index: int | None = None
        thinking_index: int | None = None
        finish: str | None = None
        try:
            client = self._client()
            response = await client.chat.completions.create(**self.build_request(context, opts))
            async for chunk in response:
                if opts.signal is not None and opts.signal.aborted:
                    await response.close()
                    output.update(stopReason="aborted", errorMessage="Request was aborted")
                    yield {"type": "error", "reason": "aborted", "error": output}
                    return
                if getattr(chunk, "usage", None):
                    output["usage"] = _usage(chunk.usage)
                if getattr(chunk, "model", None) and chunk.model != self.id:
                    output["responseModel"] = chunk.model
                if getattr(chunk, "id", None):
                    output["responseId"] = chunk.id
                for choice in chunk.choices or []:
                    delta = choice.delta
                    reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                    if reasoning:
                        if thinking_index is None:
                            output["content"].append({"type": "thinking", "thinking": ""})
                            thinking_index = len(output["content"]) - 1
                            yield {
                                "type": "thinking_start",
                                "contentIndex": thinking_index,
                                "partial": snapshot_message(output),
                            }
                        output["content"][thinking_index]["thinking"] += reasoning
                        yield {
                            "type": "thinking_delta",
                            "contentIndex": thinking_index,
                            "delta": reasoning,
                            "partial": snapshot_message(output),
                        }
                    if delta.content:
                        if text_index is None:
                            output["content"].append({"type": "text", "text": ""})
                            text_index = len(output["content"]) - 1
                            yield {
                                "type": "text_start",
                                "contentIndex": text_index,
                                "partial": snapshot_message(output),
                            }
                        output["content"][text_index]["text"] += delta.content
                        yield {
                            "type": "text_delta",
                            "contentIndex": text_index,
                            "delta": delta.content,
                            "partial": snapshot_message(output),
                        }
                    for tc in delta.tool_calls or []:
                        i = tc.index
                        if i not in tool_index:
                            output["content"].append(
                                {"type": "toolCall", "id": tc.id or f"call_{i}", "name": "", "arguments": {}}
                            )
                            tool_index[i] = len(output["content"]) - 1
                            tool_args[i] = ""
                            yield {
                                "type": "toolcall_start",
                                "contentIndex": tool_index[i],
                                "partial": snapshot_message(output),
                            }
                        block = output["content"][tool_index[i]]
                        if tc.id:
                            block["id"] = tc.id
                        if tc.function is not None:
                            if tc.function.name:
                                block["name"] += tc.function.name
                            if tc.function.arguments:
                                tool_args[i] += tc.function.arguments
                                yield {
                                    "type": "toolcall_delta",
                                    "contentIndex": tool_index[i],
                                    "delta": tc.function.arguments,
                                    "partial": snapshot_message(output),
                                }
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except Exception as error:  # provider failures are values (error messages), as in pi-ai
            output["stopReason"] = "error"
            output["errorMessage"] = provider_error_text(error, os.environ.get(self.api_key_env))
            yield {"type": "error", "reason": "error", "error": output}
            return
        for index in sorted(tool_index):
            block = output["content"][tool_index[index]]
            try:
                block["arguments"] = json.loads(tool_args[index]) if tool_args[index].strip() else {}
            except json.JSONDecodeError:
                block["arguments"] = {}
            yield {
                "type": "toolcall_end",
                "contentIndex": tool_index[index],
                "toolCall": dict(block),
                "partial": snapshot_message(output),
            }
        if text_index is not None:
            yield {
                "type": "text_end",
                "contentIndex": text_index,
                "content": output["content"][text_index]["text"],
                "partial": snapshot_message(output),
            }
        stop = _STOP.get(finish or "stop")
        if stop is None:
            output["stopReason"] = "error"
            output["errorMessage"] = f"Provider finish_reason: {finish}"
            yield {"type": "error", "reason": "error", "error": output}
            return
        output["stopReason"] = stop
        yield {"type": "done", "reason": stop, "message": output}
