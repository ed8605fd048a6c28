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
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from pi_nb.errors import MissingDependencyError
from pi_nb.messages import (
    AssistantContent,
    DoneReason,
    ErrorEvent,
    ErrorReason,
    TextContent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallEndEvent,
    Usage,
)
from pi_nb.providers._stream_common import (
    CostFunction,
    apply_cost,
    open_json_stream,
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

__all__ = ["OpenAICompatModel", "supports_developer_role", "to_openai_messages"]

# Typing: the Chat Completions wire JSON (the request body, its messages, each streamed chunk) is
# ``dict[str, Any]``: open JSON, not modelled here. The session's messages are read as JSON too
# (``Mapping[str, Any]``): they reach the provider unvalidated and are read field by field, with
# Pi's tolerance of missing or odd fields. What the stream produces is typed: the
# ``AssistantMessage``, its content blocks and the events.


def _require_openai() -> Any:
    try:
        import openai
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError(
            "The OpenAI-compatible provider needs the openai SDK: pip install 'pi_nb[openai]'"
        ) from error
    return openai


def _image_url(block: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"}}


def to_openai_messages(
    context: Context,
    *,
    supports_images: bool = True,
    target: tuple[str, str, str] | None = None,
    system_role: str = "system",
) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Chat Completions messages (images of tool results follow as a user message).

    ``target`` is the ``(provider, api, model id)`` the request goes to: an assistant message from
    that same model sends its reasoning back (``reasoning_details``, or the ``reasoning_content`` /
    ``reasoning`` field it came in); from another model its thinking becomes plain text, as in Pi.
    Failed or aborted assistant turns are left out. ``system_role`` is ``"developer"`` for the
    reasoning models of servers that take it (see :func:`supports_developer_role`).
    """
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        out.append({"role": system_role, "content": context.system_prompt})
    messages: Sequence[Mapping[str, Any]] = context.messages  # read as JSON (see the top)
    for msg in messages:
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
            if msg.get("stopReason") in ("error", "aborted"):
                continue  # an incomplete turn is not replayed (Pi's transformMessages)
            item = _assistant_message(msg, target)
            if item is not None:
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


_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")

# providers whose Chat Completions servers reject the "developer" role (pi-ai's isNonStandard)
_NON_STANDARD_PROVIDERS = frozenset(
    {
        "nvidia",
        "cerebras",
        "xai",
        "together",
        "deepseek",
        "zai",
        "zai-coding-cn",
        "moonshotai",
        "moonshotai-cn",
    }
    | {"opencode", "cloudflare-workers-ai", "cloudflare-ai-gateway", "ant-ling"}
)
_NON_STANDARD_HOSTS = (
    "integrate.api.nvidia.com",
    "cerebras.ai",
    "api.x.ai",
    "api.together.ai",
    "api.together.xyz",
    "chutes.ai",
    "deepseek.com",
    "api.z.ai",
    "open.bigmodel.cn",
    "api.moonshot.",
    "opencode.ai",
    "api.cloudflare.com",
    "gateway.ai.cloudflare.com",
    "api.ant-ling.com",
)


def supports_developer_role(provider: str, base_url: str | None, model_id: str) -> bool:
    """pi-ai's detection of servers that accept the ``developer`` system role (sent for reasoning
    models): not the non-standard ones (DeepSeek, xAI, Together, ...); on OpenRouter only for
    ``anthropic/`` and ``openai/`` models."""
    url = (base_url or "").lower()
    if provider == "openrouter" or "openrouter.ai" in url:
        return model_id.startswith(("anthropic/", "openai/"))
    return provider not in _NON_STANDARD_PROVIDERS and not any(h in url for h in _NON_STANDARD_HOSTS)


def _is_reasoning_detail(detail: Any) -> bool:
    """pi-ai's ``isOpenAIReasoningDetail``: one OpenRouter ``reasoning_details`` entry."""
    if not isinstance(detail, dict):
        return False
    if not (detail.get("id") is None or isinstance(detail.get("id"), str)):
        return False
    if "format" in detail and not isinstance(detail["format"], str):
        return False  # Pi accepts a missing or string format (a null one is not a replayable detail)
    if "index" in detail and not isinstance(detail["index"], int):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        return isinstance(detail.get("text"), str) and (
            detail.get("signature") is None or isinstance(detail.get("signature"), str)
        )
    return False


def _parse_reasoning_details(signature: Any) -> list[dict[str, Any]] | None:
    if not isinstance(signature, str) or not signature:
        return None
    try:
        parsed = json.loads(signature)
    except ValueError:
        return None
    if isinstance(parsed, list) and parsed and all(_is_reasoning_detail(d) for d in parsed):
        return parsed
    return None


def _append_reasoning_detail(details: list[dict[str, Any]], detail: dict[str, Any]) -> None:
    """Streamed text/summary deltas merge into one logical entry; encrypted entries stay discrete."""
    last = details[-1] if details else None
    kind = detail.get("type")
    if last is not None and kind == last.get("type") and kind in ("reasoning.text", "reasoning.summary"):
        field = "text" if kind == "reasoning.text" else "summary"
        last[field] = last.get(field, "") + detail[field]
        if kind == "reasoning.text" and not last.get("signature"):
            last["signature"] = detail.get("signature")
        if last.get("id") is None and "id" in detail:
            last["id"] = detail["id"]
        if not last.get("format") and "format" in detail:
            last["format"] = detail["format"]
        if last.get("index") is None and "index" in detail:
            last["index"] = detail["index"]
        return
    details.append(dict(detail))


def _assistant_message(msg: Mapping[str, Any], target: tuple[str, str, str] | None) -> dict[str, Any] | None:
    content = msg.get("content") or []
    same_model = target is None or (msg.get("provider"), msg.get("api"), msg.get("model")) == target
    texts: list[str] = []
    thinking: list[dict[str, Any]] = []
    for b in content:
        if b.get("type") == "text" and b.get("text", "").strip():
            texts.append(b["text"])
        elif b.get("type") == "thinking":
            if same_model:
                thinking.append(b)
            elif b.get("thinking", "").strip() and not b.get("redacted"):
                texts.append(b["thinking"])  # another model's reasoning is shown to this one as text
    calls = [
        {
            "id": b.get("id"),
            "type": "function",
            "function": {
                "name": b.get("name"),
                "arguments": json.dumps(b.get("arguments") or {}, ensure_ascii=False, separators=(",", ":")),
            },
        }
        for b in content
        if b.get("type") == "toolCall"
    ]
    text = "".join(texts)
    item: dict[str, Any] = {"role": "assistant", "content": text or None}
    details = next(
        (d for d in (_parse_reasoning_details(b.get("thinkingSignature")) for b in thinking) if d), None
    )
    non_empty = [b for b in thinking if b.get("thinking", "").strip()]
    if non_empty and details is None:
        field = non_empty[0].get("thinkingSignature")
        if field in _REASONING_FIELDS:
            item[field] = "\n".join(b["thinking"] for b in non_empty)
    if calls:
        item["tool_calls"] = calls
    if details is not None:
        item["reasoning_details"] = details
    if not text and not calls:
        return None
    return item


def _usage(raw: Mapping[str, Any]) -> Usage:
    """pi-ai's ``parseChunkUsage``: cache reads (``cached_tokens``, DeepSeek's ``prompt_cache_hit_tokens``,
    Kimi's top-level ``cached_tokens``) and cache writes are taken out of ``input``."""

    def num(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    cache_read = details.get("cached_tokens")
    if cache_read is None:
        cache_read = raw.get("prompt_cache_hit_tokens")
    if cache_read is None:
        cache_read = raw.get("cached_tokens")
    cache_read = num(cache_read)
    cache_write = num(details.get("cache_write_tokens"))
    output = num(raw.get("completion_tokens"))
    inp = max(0, num(raw.get("prompt_tokens")) - cache_read - cache_write)
    completion_details = raw.get("completion_tokens_details")
    reasoning = (
        num(completion_details.get("reasoning_tokens")) if isinstance(completion_details, Mapping) else 0
    )
    usage = make_usage(inp, output, cache_read, cache_write)
    usage["reasoning"] = reasoning
    return usage


_STOP: dict[str, DoneReason] = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def _content_parts(content: Any) -> list[tuple[str, str]]:
    """``delta.content`` as ``(kind, text)`` pairs: a string is text; Mistral sends a list of typed
    parts (``{"type": "text", "text"}``, ``{"type": "thinking", "thinking": [{"type": "text", ...}]}``)."""
    if isinstance(content, str):
        return [("text", content)] if content else []
    parts: list[tuple[str, str]] = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                parts.append(("text", part["text"]))
            elif kind == "thinking":
                inner = part.get("thinking")
                if isinstance(inner, str):
                    pieces = [inner]
                elif isinstance(inner, list):
                    pieces = [p.get("text", "") for p in inner if isinstance(p, Mapping)]
                else:
                    pieces = []
                text = "".join(p for p in pieces if isinstance(p, str))
                if text:
                    parts.append(("thinking", text))
    return parts


def _as_dict(obj: Any) -> dict[str, Any]:
    """An SDK object as the JSON the server sent (extra fields such as ``reasoning_content`` kept)."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        out = to_dict(warnings=False)
        if isinstance(out, dict):
            return out
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        out = dump()
        if isinstance(out, dict):
            return out
    return {}


class OpenAICompatModel(RemoteModel):
    """A Chat Completions model. ``base_url`` defaults to ``$OPENAI_BASE_URL`` or OpenAI's.

    ``cost_function`` (optional) turns the final usage into its cost (``usage["cost"]``); without
    it costs stay zero. ``requires_finish_reason=False`` accepts a stream that ends without a
    ``finish_reason`` as a normal stop (servers known to omit it); by default such a stream is an
    error, as in Pi, because it is what a connection cut mid-answer looks like.
    """

    api = "openai-completions"
    default_provider = "openai"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = "OPENAI_BASE_URL"
    default_api_key_env = "OPENAI_API_KEY"
    cost_function: CostFunction | None = None
    requires_finish_reason: bool = True

    def __init__(
        self,
        id: str,
        *,
        cost_function: CostFunction | None = None,
        requires_finish_reason: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(id, **kwargs)
        self.cost_function = cost_function
        self.requires_finish_reason = requires_finish_reason

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
            "messages": to_openai_messages(
                context,
                supports_images="image" in self.input,
                target=(self.provider, self.api, self.id),
                system_role="developer"
                if self.reasoning and supports_developer_role(self.provider, self.base_url, self.id)
                else "system",
            ),
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
        """Pi's ``openai-completions`` stream: text, thinking (from ``reasoning_content`` /
        ``reasoning`` / ``reasoning_text``, Mistral's typed content parts, OpenRouter's
        ``reasoning_details`` kept as the signature so the reasoning can be sent back), tool calls."""
        opts = options or StreamOptions()
        output = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        yield {"type": "start", "partial": snapshot_message(output)}
        blocks: list[AssistantContent] = output["content"]
        tool_args: dict[int, str] = {}  # id(block) -> streamed argument text
        tools_by_index: dict[int, ToolCall] = {}
        tools_by_id: dict[str, ToolCall] = {}
        text_block: TextContent | None = None
        thinking_block: ThinkingContent | None = None
        details: list[dict[str, Any]] | None = None  # OpenRouter's reasoning_details: wire JSON
        finish: str | None = None

        def ensure_text() -> tuple[TextContent, TextStartEvent | None]:
            nonlocal text_block
            if text_block is not None:
                return text_block, None
            text_block = {"type": "text", "text": ""}
            blocks.append(text_block)
            return text_block, {
                "type": "text_start",
                "contentIndex": len(blocks) - 1,
                "partial": snapshot_message(output),
            }

        def ensure_thinking(signature: str | None) -> tuple[ThinkingContent, ThinkingStartEvent | None]:
            nonlocal thinking_block
            if thinking_block is not None:
                return thinking_block, None
            thinking_block = {"type": "thinking", "thinking": ""}
            if signature is not None:
                thinking_block["thinkingSignature"] = signature
            blocks.append(thinking_block)
            return thinking_block, {
                "type": "thinking_start",
                "contentIndex": len(blocks) - 1,
                "partial": snapshot_message(output),
            }

        def index_of(block: AssistantContent) -> int:
            return next(i for i, b in enumerate(blocks) if b is block)

        def close_block(block: AssistantContent) -> TextEndEvent | ThinkingEndEvent | ToolCallEndEvent:
            i = index_of(block)
            if block["type"] == "text":
                return {
                    "type": "text_end",
                    "contentIndex": i,
                    "content": block["text"],
                    "partial": snapshot_message(output),
                }
            if block["type"] == "thinking":
                if details is not None:
                    block["thinkingSignature"] = json.dumps(
                        details, ensure_ascii=False, separators=(",", ":")
                    )
                return {
                    "type": "thinking_end",
                    "contentIndex": i,
                    "content": block["thinking"],
                    "partial": snapshot_message(output),
                }
            block["arguments"] = parse_tool_arguments(tool_args.get(id(block), ""))
            return {
                "type": "toolcall_end",
                "contentIndex": i,
                "toolCall": block.copy(),
                "partial": snapshot_message(output),
            }

        def fail(message: str, reason: ErrorReason = "error") -> ErrorEvent:
            for block in blocks:
                if block["type"] == "thinking" and details is not None:
                    block["thinkingSignature"] = json.dumps(
                        details, ensure_ascii=False, separators=(",", ":")
                    )
                if block["type"] == "toolCall":
                    block["arguments"] = parse_tool_arguments(tool_args.get(id(block), ""))
            output["stopReason"] = reason
            output["errorMessage"] = message
            apply_cost(output["usage"], self.cost_function)  # tokens already used are still paid for
            return {"type": "error", "reason": reason, "error": output}

        try:
            client = self._client()
            response = await open_json_stream(
                _require_openai(), client, "/chat/completions", self.build_request(context, opts)
            )
            async for raw_chunk in response:
                if opts.signal is not None and opts.signal.aborted:
                    await response.close()
                    yield fail("Request was aborted", "aborted")
                    return
                chunk = _as_dict(raw_chunk)
                if chunk.get("id") and "responseId" not in output:
                    output["responseId"] = chunk["id"]
                model_name = chunk.get("model")
                if isinstance(model_name, str) and model_name and model_name != self.id:
                    output.setdefault("responseModel", model_name)
                if isinstance(chunk.get("usage"), Mapping):
                    output["usage"] = _usage(chunk["usage"])
                choices = chunk.get("choices")
                choice = choices[0] if isinstance(choices, list) and choices else None
                if not isinstance(choice, Mapping):
                    continue
                if not chunk.get("usage") and isinstance(choice.get("usage"), Mapping):
                    output["usage"] = _usage(choice["usage"])  # Moonshot puts usage on the choice
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
                    output["rawStopReason"] = finish
                delta = choice.get("delta")
                if not isinstance(delta, Mapping):
                    continue
                for kind, piece in _content_parts(delta.get("content")):
                    if kind == "text":
                        block, started = ensure_text()
                        if started:
                            yield started
                        block["text"] += piece
                        yield {
                            "type": "text_delta",
                            "contentIndex": index_of(block),
                            "delta": piece,
                            "partial": snapshot_message(output),
                        }
                    else:
                        thinking, thinking_started = ensure_thinking(None)
                        if thinking_started:
                            yield thinking_started
                        thinking["thinking"] += piece
                        yield {
                            "type": "thinking_delta",
                            "contentIndex": index_of(thinking),
                            "delta": piece,
                            "partial": snapshot_message(output),
                        }
                field = next(
                    (f for f in _REASONING_FIELDS if isinstance(delta.get(f), str) and delta[f]), None
                )
                if field is not None:
                    # Pi keeps the field's name as the signature: the reasoning goes back in that field
                    thinking, thinking_started = ensure_thinking(field)
                    if thinking_started:
                        yield thinking_started
                    thinking["thinking"] += delta[field]
                    yield {
                        "type": "thinking_delta",
                        "contentIndex": index_of(thinking),
                        "delta": delta[field],
                        "partial": snapshot_message(output),
                    }
                for tc in delta.get("tool_calls") or []:
                    if not isinstance(tc, Mapping):
                        continue
                    index = tc.get("index") if isinstance(tc.get("index"), int) else None
                    raw_function = tc.get("function")
                    function: Mapping[str, Any] = raw_function if isinstance(raw_function, Mapping) else {}
                    name = function.get("name") or ""
                    call_id = tc.get("id") or ""
                    tool = tools_by_index.get(index) if index is not None else None
                    if tool is None and call_id:
                        tool = tools_by_id.get(call_id)
                    if tool is None:
                        tool = {"type": "toolCall", "id": call_id, "name": name, "arguments": {}}
                        blocks.append(tool)
                        tool_args[id(tool)] = ""
                        yield {
                            "type": "toolcall_start",
                            "contentIndex": len(blocks) - 1,
                            "partial": snapshot_message(output),
                        }
                    if index is not None:
                        tools_by_index.setdefault(index, tool)
                    if call_id:
                        tools_by_id[call_id] = tool
                        if not tool["id"]:
                            tool["id"] = call_id
                    if not tool["name"] and name:
                        tool["name"] = name
                    piece = function.get("arguments") or ""
                    if piece:
                        tool_args[id(tool)] += piece
                        tool["arguments"] = parse_tool_arguments(tool_args[id(tool)])
                    yield {
                        "type": "toolcall_delta",
                        "contentIndex": index_of(tool),
                        "delta": piece,
                        "partial": snapshot_message(output),
                    }
                reasoning_details = delta.get("reasoning_details")
                if isinstance(reasoning_details, list):
                    for detail in reasoning_details:
                        if not _is_reasoning_detail(detail):
                            continue
                        _, thinking_started = ensure_thinking("")
                        if thinking_started:
                            yield thinking_started
                        details = details if details is not None else []
                        _append_reasoning_detail(details, detail)
        except Exception as error:  # provider failures are values (error messages), as in pi-ai
            yield fail(*stream_failure(error, opts.signal, os.environ.get(self.api_key_env)))
            return
        for open_block in list(blocks):
            yield close_block(open_block)
        apply_cost(output["usage"], self.cost_function)
        if finish is None:
            if self.requires_finish_reason:
                yield fail("Stream ended without finish_reason")
                return
            finish = "tool_calls" if any(b["type"] == "toolCall" for b in blocks) else "stop"
        stop = _STOP.get(finish)
        if stop is None:
            yield fail(f"Provider finish_reason: {finish}")
            return
        output["stopReason"] = stop
        yield {"type": "done", "reason": stop, "message": output}
