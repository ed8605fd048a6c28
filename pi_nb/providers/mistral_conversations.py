"""``MistralConversationsModel``: Mistral's models over its own chat API (``mistral-conversations``),
as pi-ai 0.85.0 runs them.

A port of pi-ai's ``mistral-conversations`` provider, called the way Pi's agent calls it
(``streamSimple``): a plain HTTP ``POST {baseUrl}/v1/chat/completions`` (no SDK), streamed as
server-sent events.

- Headers: Pi's ``User-Agent``, ``accept: text/event-stream``, the bearer key, JSON content type,
  the catalog entry's headers and the request's (a ``null`` value removes one), and ``x-affinity``
  set to the session id (prompt caching) unless a header already names it.
- Body (in Mistral's snake_case): ``model``, ``stream``, the messages, the tools (``strict`` as
  the tool asks, else ``false``), ``max_tokens`` (the model's limit clamped to the context left),
  ``prompt_mode: "reasoning"`` for reasoning models with thinking on, or ``reasoning_effort`` for
  the models that take an effort, and the session id as ``prompt_cache_key``.
- Messages: the system prompt first; user text (images as ``image_url`` strings, a placeholder
  when the model takes text only); assistant turns as typed ``text``/``thinking`` chunks with
  ``prefix: false`` and their tool calls; tool results as ``role: "tool"`` with the tool's
  ``name`` and Mistral's own texts (``[tool error] ...``, ``(no tool output)``, ``(see attached
  image)``). Tool-call ids of other models become 9 letters and digits, as Mistral requires.
- Stream: text deltas (plain strings or typed chunks), ``thinking`` chunks into thinking blocks,
  tool calls by index, usage (cached prompt tokens as cache reads), finish reasons
  (``stop``/``length``/``model_length``/``tool_calls``, anything else an error).
- Errors: ``Mistral API error (<status>): <body>`` (the body cut at 4000 characters); an event
  that is not JSON fails with V8's ``JSON.parse`` text, as pi-ai's ``JSON.parse`` throws it.
  No retries (pi-ai retries none for this API).

The request goes out over plain ``httpx`` (``pip install 'pi_nb[mistral]'``). The key comes from
``$MISTRAL_API_KEY`` (or ``api_key_env``); it is never stored (a server that echoes it in an error
has it redacted).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

from pi_nb._js import js_json_parse_v8, js_stringify, js_trim, js_truthy
from pi_nb.messages import ErrorEvent, StopReason, ToolCall
from pi_nb.providers._pi_ai_util import (
    get_json_schema_tool_parameters,
    merge_headers,
    provider_attribution_headers,
    resolve_json_schema_strict_sampling,
    sanitize_surrogates,
)
from pi_nb.providers._stream_common import (
    apply_cost,
    block_delta_event,
    block_start_event,
    parse_streaming_json,
    redact_key,
    require_httpx,
    truncate_error_text,
)
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    RemoteModel,
    StreamOptions,
    make_assistant_message,
    snapshot_message,
)
from pi_nb.providers.openai_responses import short_hash
from pi_nb.providers.simple_options import (
    build_base_options,
    clamp_thinking_level,
    pi_user_agent,
    simple_stream_options,
)
from pi_nb.providers.transform_messages import transform_messages

__all__ = ["MistralConversationsModel", "derive_mistral_tool_call_id", "to_mistral_messages"]

# Typing: Mistral's wire JSON (the body, its messages, each streamed chunk) and the pi-ai model
# dict are ``dict[str, Any]``: open JSON, not modelled here.

_TOOL_CALL_ID_LENGTH = 9
_MAX_ERROR_BODY_CHARS = 4000
_EFFORT_MODELS = frozenset({"mistral-small-2603", "mistral-small-latest", "mistral-medium-3.5"})
_EVENT_BOUNDARY = re.compile(r"\r\n\r\n|\r\n\r|\r\n\n|\r\r\n|\n\r\n|\r\r|\n\r|\n\n")
_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_WIRE_KEYS = (
    ("topP", "top_p"),
    ("maxTokens", "max_tokens"),
    ("randomSeed", "random_seed"),
    ("responseFormat", "response_format"),
    ("toolChoice", "tool_choice"),
    ("presencePenalty", "presence_penalty"),
    ("frequencyPenalty", "frequency_penalty"),
    ("parallelToolCalls", "parallel_tool_calls"),
    ("reasoningEffort", "reasoning_effort"),
    ("promptMode", "prompt_mode"),
    ("promptCacheKey", "prompt_cache_key"),
    ("safePrompt", "safe_prompt"),
)
_CHUNK_KEYS = (
    ("imageUrl", "image_url"),
    ("documentUrl", "document_url"),
    ("documentName", "document_name"),
    ("fileId", "file_id"),
    ("referenceIds", "reference_ids"),
    ("inputAudio", "input_audio"),
)


class _MistralHttpError(Exception):
    def __init__(self, status: int, body: str, status_text: str) -> None:
        super().__init__(status_text or f"Request failed with status {status}")
        self.status = status
        self.body = body


class _StreamError(Exception):
    """A failure with pi-ai's own text."""


def derive_mistral_tool_call_id(call_id: str, attempt: int = 0) -> str:
    """pi-ai's ``deriveMistralToolCallId``: the id's letters and digits when they are 9, else 9
    characters of its hash (``attempt`` > 0 re-hashes after a collision)."""
    normalized = re.sub(r"[^a-zA-Z0-9]", "", call_id)
    if attempt == 0 and len(normalized) == _TOOL_CALL_ID_LENGTH:
        return normalized
    seed_base = normalized or call_id
    seed = seed_base if attempt == 0 else f"{seed_base}:{attempt}"
    return re.sub(r"[^a-zA-Z0-9]", "", short_hash(seed))[:_TOOL_CALL_ID_LENGTH]


def _id_normalizer() -> Any:
    id_map: dict[str, str] = {}
    reverse: dict[str, str] = {}

    def normalize(
        call_id: str, _model: Mapping[str, Any] | None = None, _source: Mapping[str, Any] | None = None
    ) -> str:
        existing = id_map.get(call_id)
        if existing:
            return existing
        attempt = 0
        while True:
            candidate = derive_mistral_tool_call_id(call_id, attempt)
            owner = reverse.get(candidate)
            if not owner or owner == call_id:
                id_map[call_id] = candidate
                reverse[candidate] = call_id
                return candidate
            attempt += 1

    return normalize


def _tool_result_text(text: str, has_images: bool, supports_images: bool, is_error: bool) -> str:
    trimmed = js_trim(text)
    prefix = "[tool error] " if is_error else ""
    if trimmed:
        suffix = (
            "\n[tool image omitted: model does not support images]"
            if has_images and not supports_images
            else ""
        )
        return f"{prefix}{trimmed}{suffix}"
    if has_images:
        if supports_images:
            return "[tool error] (see attached image)" if is_error else "(see attached image)"
        return (
            "[tool error] (image omitted: model does not support images)"
            if is_error
            else "(image omitted: model does not support images)"
        )
    return "[tool error] (no tool output)" if is_error else "(no tool output)"


def to_mistral_messages(messages: Sequence[Mapping[str, Any]], supports_images: bool) -> list[dict[str, Any]]:
    """pi-ai's ``toChatMessages`` (already transformed Pi messages -> Mistral chat messages, in
    pi-ai's camelCase before the wire rename)."""
    result: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role")
        content = msg.get("content")
        if role == "user":
            if isinstance(content, str):
                result.append({"role": "user", "content": sanitize_surrogates(content)})
                continue
            items = list(content or [])
            had_images = any(b.get("type") == "image" for b in items)
            chunks: list[dict[str, Any]] = []
            for b in items:
                if b.get("type") == "text":
                    chunks.append({"type": "text", "text": sanitize_surrogates(str(b.get("text", "")))})
                elif supports_images:
                    chunks.append(
                        {"type": "image_url", "imageUrl": f"data:{b.get('mimeType')};base64,{b.get('data')}"}
                    )
            if chunks:
                result.append({"role": "user", "content": chunks})
            elif had_images and not supports_images:
                result.append({"role": "user", "content": "(image omitted: model does not support images)"})
            continue
        if role == "assistant":
            parts: list[dict[str, Any]] = []
            calls: list[dict[str, Any]] = []
            for block in content or []:
                kind = block.get("type")
                if kind == "text":
                    if js_trim(str(block.get("text", ""))):
                        parts.append(
                            {"type": "text", "text": sanitize_surrogates(str(block.get("text", "")))}
                        )
                    continue
                if kind == "thinking":
                    if js_trim(str(block.get("thinking", ""))):
                        parts.append(
                            {
                                "type": "thinking",
                                "thinking": [
                                    {
                                        "type": "text",
                                        "text": sanitize_surrogates(str(block.get("thinking", ""))),
                                    }
                                ],
                            }
                        )
                    continue
                calls.append(
                    {
                        "id": block.get("id"),
                        "type": "function",
                        "function": {
                            "name": block.get("name"),
                            "arguments": js_stringify(block.get("arguments") or {}),
                        },
                        "index": 0,
                    }
                )
            message: dict[str, Any] = {"role": "assistant", "prefix": False}
            if parts:
                message["content"] = parts
            if calls:
                message["toolCalls"] = calls
            if parts or calls:
                result.append(message)
            continue
        # a tool result
        blocks = list(content or [])
        text = "\n".join(
            sanitize_surrogates(str(b.get("text", ""))) for b in blocks if b.get("type") == "text"
        )
        has_images = any(b.get("type") == "image" for b in blocks)
        tool_content: list[dict[str, Any]] = [
            {
                "type": "text",
                "text": _tool_result_text(text, has_images, supports_images, bool(msg.get("isError"))),
            }
        ]
        if supports_images:
            tool_content.extend(
                {"type": "image_url", "imageUrl": f"data:{b.get('mimeType')};base64,{b.get('data')}"}
                for b in blocks
                if b.get("type") == "image"
            )
        result.append(
            {
                "role": "tool",
                "toolCallId": msg.get("toolCallId"),
                "name": msg.get("toolName"),
                "content": tool_content,
            }
        )
    return result


def _to_function_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        strict = resolve_json_schema_strict_sampling(tool, True)
        out.append(
            {
                "type": "function",
                "function": {
                    "name": tool.get("name"),
                    "description": tool.get("description"),
                    "parameters": get_json_schema_tool_parameters(tool, strict),
                    "strict": strict if strict is not None else False,
                },
            }
        )
    return out


def _remap(record: dict[str, Any], source: str, target: str) -> None:
    if source in record:
        record[target] = record.pop(source)


def _to_wire(payload: Mapping[str, Any]) -> dict[str, Any]:
    """pi-ai's ``toMistralWirePayload``: the camelCase payload in the API's snake_case."""
    wire = dict(payload)
    for source, target in _WIRE_KEYS:
        _remap(wire, source, target)
    messages = []
    for message in payload["messages"]:
        m = dict(message)
        _remap(m, "toolCalls", "tool_calls")
        _remap(m, "toolCallId", "tool_call_id")
        if isinstance(message.get("content"), list):
            chunks = []
            for chunk in message["content"]:
                c = dict(chunk)
                for source, target in _CHUNK_KEYS:
                    _remap(c, source, target)
                chunks.append(c)
            m["content"] = chunks
        messages.append(m)
    wire["messages"] = messages
    fmt = wire.get("response_format")
    if isinstance(fmt, dict):
        fmt = dict(fmt)
        _remap(fmt, "jsonSchema", "json_schema")
        schema = fmt.get("json_schema")
        if isinstance(schema, dict):
            schema = dict(schema)
            _remap(schema, "schemaDefinition", "schema")
            fmt["json_schema"] = schema
        wire["response_format"] = fmt
    return wire


def _cached_prompt_tokens(usage: Mapping[str, Any], prompt_tokens: int) -> int:
    def get(container: Any, key: str) -> Any:
        return container.get(key) if isinstance(container, Mapping) else None

    raw: Any = None
    for value in (
        get(usage.get("promptTokensDetails"), "cachedTokens"),
        get(usage.get("prompt_tokens_details"), "cached_tokens"),
        get(usage.get("promptTokenDetails"), "cachedTokens"),
        get(usage.get("prompt_token_details"), "cached_tokens"),
        usage.get("numCachedTokens"),
        usage.get("num_cached_tokens"),
    ):
        if value is not None:
            raw = value
            break
    cached = (
        raw
        if isinstance(raw, (int, float))
        and not isinstance(raw, bool)
        and raw == raw
        and abs(raw) != float("inf")
        else 0
    )
    return cast(int, min(prompt_tokens, max(0, cached)))


def _map_finish_reason(reason: str) -> tuple[StopReason, str | None]:
    if reason == "stop":
        return "stop", None
    if reason in ("length", "model_length"):
        return "length", None
    if reason == "tool_calls":
        return "toolUse", None
    return "error", f"Provider stopped with: {reason}"


def _parse_event(raw: str) -> Any:
    """One SSE event: its ``data:`` lines joined; ``None`` for none, ``"[DONE]"`` at the end."""
    data = "\n".join(line[5:].lstrip() for line in _LINE_SPLIT.split(raw) if line.startswith("data:")).strip()
    if not data:
        return None
    if data == "[DONE]":
        return "[DONE]"
    parsed = js_json_parse_v8(data)  # pi-ai's JSON.parse: V8's SyntaxError text
    if not isinstance(parsed, dict) or not isinstance(parsed.get("choices"), list):
        raise _StreamError("Invalid Mistral streaming event")
    return parsed


class MistralConversationsModel(RemoteModel):
    """A Mistral model over Mistral's chat API, the way pi-ai's ``mistral-conversations`` runs it."""

    api = "mistral-conversations"
    default_provider = "mistral"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = "MISTRAL_BASE_URL"
    default_api_key_env = "MISTRAL_API_KEY"

    def __init__(self, id: str, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", "https://api.mistral.ai")
        super().__init__(id, **kwargs)

    def pi_ai_model(self) -> dict[str, Any]:
        model = super().pi_ai_model()
        model["api"] = self.api
        return model

    def _options(
        self, model: Mapping[str, Any], context: Context, opts: StreamOptions, api_key: str
    ) -> dict[str, Any]:
        """pi-ai's ``streamSimple``: base options plus ``promptMode`` / ``reasoningEffort``."""
        simple = simple_stream_options(opts)
        base = build_base_options(model, cast(Mapping[str, Any], context.to_dict()), simple, api_key)
        level = clamp_thinking_level(model, opts.reasoning) if opts.reasoning else None
        reasoning = None if level == "off" else level
        if model.get("reasoning") and reasoning is not None:
            if model.get("id") in _EFFORT_MODELS:
                level_map = model.get("thinkingLevelMap") or {}
                mapped = level_map.get(reasoning)
                base["reasoningEffort"] = mapped if mapped is not None else "high"
            else:
                base["promptMode"] = "reasoning"
        return base

    def build_request(self, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
        """The JSON body sent to ``/v1/chat/completions`` (pi-ai's ``buildChatPayload``, on the wire)."""
        model = self.pi_ai_model()
        opts = options or StreamOptions()
        key = os.environ.get(self.api_key_env) or ""
        return _to_wire(self._payload(model, context, self._options(model, context, opts, key)))

    def _payload(
        self, model: Mapping[str, Any], context: Context, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        normalize = _id_normalizer()
        messages = transform_messages(list(context.messages), model, normalize)
        payload: dict[str, Any] = {
            "model": model.get("id"),
            "stream": True,
            "messages": to_mistral_messages(messages, "image" in (model.get("input") or [])),
        }
        if context.tools:
            payload["tools"] = _to_function_tools(context.tools)
        if options.get("temperature") is not None:
            payload["temperature"] = options["temperature"]
        if options.get("maxTokens") is not None:
            payload["maxTokens"] = options["maxTokens"]
        if options.get("promptMode"):
            payload["promptMode"] = options["promptMode"]
        if options.get("reasoningEffort"):
            payload["reasoningEffort"] = options["reasoningEffort"]
        if options.get("cacheRetention") != "none" and options.get("sessionId"):
            payload["promptCacheKey"] = options["sessionId"]
        if context.system_prompt:
            payload["messages"].insert(
                0, {"role": "system", "content": sanitize_surrogates(context.system_prompt)}
            )
        return payload

    def _url(self, model: Mapping[str, Any]) -> str:
        httpx = require_httpx("mistral-conversations", "mistral")

        base = httpx.URL(str(model.get("baseUrl") or "https://api.mistral.ai"))
        path = base.path.rstrip("/") + "/"
        return str(base.copy_with(path=path).join("v1/chat/completions"))

    def _headers(self, model: Mapping[str, Any], api_key: str, options: Mapping[str, Any]) -> dict[str, str]:
        base = {
            "user-agent": pi_user_agent(),
            "accept": "text/event-stream",
            "authorization": f"Bearer {api_key}",
            "content-type": "application/json",
        }
        overrides = (model.get("headers"), options.get("headers"))
        headers = merge_headers(base, *overrides)
        explicit_affinity = any(
            name.lower() == "x-affinity" for source in overrides for name in (source or {})
        )
        if options.get("cacheRetention") != "none" and options.get("sessionId") and not explicit_affinity:
            headers["x-affinity"] = options["sessionId"]
        return headers

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``streamSimple`` for ``mistral-conversations``."""
        httpx = require_httpx("mistral-conversations", "mistral")

        opts = options or StreamOptions()
        model = self.pi_ai_model()
        # the message is grown field by field as the stream says ("pending" until a finish reason)
        output: Any = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        out = output
        out["stopReason"] = "pending"
        blocks: list[Any] = output["content"]

        def fail(error: BaseException) -> ErrorEvent:
            for block in blocks:
                block.pop("partialArgs", None)
            aborted = opts.signal is not None and opts.signal.aborted
            out["stopReason"] = "aborted" if aborted else "error"
            # pi_nb never repeats the key a request used (a server may echo it in its error)
            out["errorMessage"] = redact_key(_format_error(error), api_key)
            return {"type": "error", "reason": "aborted" if aborted else "error", "error": output}

        api_key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if not api_key:
            yield fail(_StreamError(f"No API key for provider: {self.provider}"))
            return
        shared = self.http_client()  # over the model's transport: not closed here
        client = shared if shared is not None else httpx.AsyncClient(timeout=self.timeout)
        try:
            async with contextlib.AsyncExitStack() as stack:
                if shared is None:
                    await stack.enter_async_context(client)
                if opts.signal is not None and opts.signal.aborted:
                    raise _StreamError("This operation was aborted")  # fetch's text for an aborted signal
                stream_options = self._options(model, context, opts, api_key)
                extra = provider_attribution_headers(model, opts.session_id, self.credential_headers() or None)
                if extra:
                    stream_options["headers"] = dict(extra)
                payload = self._payload(model, context, stream_options)
                request = client.build_request(
                    "POST",
                    self._url(model),
                    headers=self._headers(model, api_key, stream_options),
                    content=js_stringify(_to_wire(payload)).encode("utf-8"),
                )
                response = await client.send(request, stream=True)
                try:
                    if response.status_code < 200 or response.status_code >= 300:
                        body = (await response.aread()).decode("utf-8", "replace")
                        phrase = response.extensions.get("reason_phrase", b"")
                        status_text = phrase.decode("ascii", "replace") if isinstance(phrase, bytes) else ""
                        raise _MistralHttpError(response.status_code, body, status_text)
                    yield {"type": "start", "partial": snapshot_message(output)}
                    async for event in self._consume(response, output, opts):
                        yield event
                finally:
                    await response.aclose()
            if opts.signal is not None and opts.signal.aborted:
                raise _StreamError("Request was aborted")
            if out["stopReason"] == "pending":
                raise _StreamError("Mistral stream ended without a finish reason")
            if out["stopReason"] in ("aborted", "error"):
                raise _StreamError(out.get("errorMessage") or "An unknown error occurred")
        except Exception as error:
            yield fail(error)
            return
        yield {"type": "done", "reason": out["stopReason"], "message": output}

    async def _events(self, response: Any, opts: StreamOptions) -> AsyncIterator[dict[str, Any]]:
        buffer = ""
        # TextDecoder: UTF-8 whatever the headers say, a leading BOM dropped
        decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
        async for raw in response.aiter_bytes():
            text = decoder.decode(raw)
            if opts.signal is not None and opts.signal.aborted:
                raise _StreamError("This operation was aborted")
            buffer += text
            match = _EVENT_BOUNDARY.search(buffer)
            while match:
                event = _parse_event(buffer[: match.start()])
                buffer = buffer[match.end() :]
                if event == "[DONE]":
                    return
                if event is not None:
                    yield event
                match = _EVENT_BOUNDARY.search(buffer)
        buffer += decoder.decode(b"", final=True)
        match = _EVENT_BOUNDARY.search(buffer)
        while match:
            event = _parse_event(buffer[: match.start()])
            buffer = buffer[match.end() :]
            if event == "[DONE]":
                return
            if event is not None:
                yield event
            match = _EVENT_BOUNDARY.search(buffer)
        if buffer.strip():
            event = _parse_event(buffer)
            if event is not None and event != "[DONE]":
                yield event

    async def _consume(
        self, response: Any, output: Any, opts: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``consumeChatStream``."""
        blocks: list[Any] = output["content"]
        current: dict[str, Any] | None = None
        tool_blocks: dict[Any, int] = {}

        def partial() -> Any:
            return snapshot_message(output)

        def finish(block: dict[str, Any] | None) -> AssistantMessageEvent | None:
            if block is None:
                return None
            if block["type"] == "text":
                return {
                    "type": "text_end",
                    "contentIndex": len(blocks) - 1,
                    "content": block["text"],
                    "partial": partial(),
                }
            return {
                "type": "thinking_end",
                "contentIndex": len(blocks) - 1,
                "content": block["thinking"],
                "partial": partial(),
            }

        async for chunk in self._events(response, opts):
            if not js_truthy(output.get("responseId")):  # responseId ||= chunk.id
                if chunk.get("id") is None:
                    output.pop("responseId", None)
                else:
                    output["responseId"] = chunk["id"]
            usage: Any = chunk.get("usage")
            if js_truthy(usage):
                prompt = usage.get("prompt_tokens") or 0
                cached = _cached_prompt_tokens(usage, prompt)
                u = output["usage"]
                u["input"] = max(0, prompt - cached)
                u["output"] = usage.get("completion_tokens") or 0
                u["cacheRead"] = cached
                u["cacheWrite"] = 0
                u["totalTokens"] = usage.get("total_tokens") or (
                    u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"]
                )
                apply_cost(u, self.cost_function)
            choices = chunk["choices"]
            if not choices:
                continue
            choice = choices[0]
            if not isinstance(choice, Mapping):
                continue
            reason = choice.get("finish_reason")
            if reason:
                output["rawStopReason"] = reason
                stop, message = _map_finish_reason(str(reason))
                output["stopReason"] = stop
                if message:
                    output["errorMessage"] = message
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content is not None:
                for item in [content] if isinstance(content, str) else content:
                    if isinstance(item, str) or (isinstance(item, Mapping) and item.get("type") == "text"):
                        text = sanitize_surrogates(
                            item if isinstance(item, str) else str(item.get("text") or "")
                        )
                        if current is None or current["type"] != "text":
                            ended = finish(current)
                            if ended is not None:
                                yield ended
                            current = {"type": "text", "text": ""}
                            blocks.append(current)
                            yield block_start_event("text_start", len(blocks) - 1, partial())
                        current["text"] += text
                        yield block_delta_event("text_delta", len(blocks) - 1, text, partial())
                    elif isinstance(item, Mapping) and item.get("type") == "thinking":
                        pieces = [
                            str(p.get("text") or "")
                            for p in item.get("thinking") or []
                            if isinstance(p, Mapping)
                        ]
                        thinking = sanitize_surrogates("".join(p for p in pieces if p))
                        if not thinking:
                            continue
                        if current is None or current["type"] != "thinking":
                            ended = finish(current)
                            if ended is not None:
                                yield ended
                            current = {"type": "thinking", "thinking": ""}
                            blocks.append(current)
                            yield block_start_event("thinking_start", len(blocks) - 1, partial())
                        current["thinking"] += thinking
                        yield block_delta_event("thinking_delta", len(blocks) - 1, thinking, partial())
            for call in delta.get("tool_calls") or []:
                if current is not None:
                    ended = finish(current)
                    if ended is not None:
                        yield ended
                    current = None
                raw_id = call.get("id")
                call_id = (
                    raw_id
                    if raw_id and raw_id != "null"
                    else derive_mistral_tool_call_id(f"toolcall:{call.get('index') or 0}", 0)
                )
                key = call.get("index") if call.get("index") is not None else call_id
                existing = tool_blocks.get(key)
                block = (
                    blocks[existing]
                    if existing is not None and blocks[existing].get("type") == "toolCall"
                    else None
                )
                function = call.get("function") or {}
                if block is None:
                    block = {
                        "type": "toolCall",
                        "id": call_id,
                        "name": function.get("name"),
                        "arguments": {},
                        "partialArgs": "",
                    }
                    blocks.append(block)
                    tool_blocks[key] = len(blocks) - 1
                    yield block_start_event("toolcall_start", len(blocks) - 1, partial())
                args = function.get("arguments")
                args_delta = args if isinstance(args, str) else js_stringify(args or {})
                block["partialArgs"] = (block.get("partialArgs") or "") + args_delta
                block["arguments"] = parse_streaming_json(block["partialArgs"])
                yield block_delta_event("toolcall_delta", tool_blocks[key], args_delta, partial())
        ended = finish(current)
        if ended is not None:
            yield ended
        for index in tool_blocks.values():
            block = blocks[index]
            if block.get("type") != "toolCall":
                continue
            block["arguments"] = parse_streaming_json(block.get("partialArgs"))
            block.pop("partialArgs", None)
            yield {
                "type": "toolcall_end",
                "contentIndex": index,
                "toolCall": cast(ToolCall, dict(block)),
                "partial": partial(),
            }


def _format_error(error: BaseException) -> str:
    """pi-ai's ``formatMistralError``."""
    if isinstance(error, _MistralHttpError):
        body = js_trim(error.body)
        if body:
            body = truncate_error_text(body, _MAX_ERROR_BODY_CHARS)  # JavaScript lengths: UTF-16 units
            return f"Mistral API error ({error.status}): {body}"
        return f"Mistral API error ({error.status}): {error}"
    return str(error) or type(error).__name__
