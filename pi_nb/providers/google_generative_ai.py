"""``GoogleGenerativeAIModel``: Gemini (and Gemma) models over Google's Gemini API
(``google-generative-ai``), as pi-ai 0.85.0 runs them.

A port of pi-ai's ``google-generative-ai`` provider, called the way Pi's agent calls it
(``streamSimple``): ``POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse``, streamed as
server-sent events.

- Headers: the SDK's ``x-goog-api-client`` label and JSON content type, Pi's ``User-Agent``, the
  catalog entry's and the request's headers (a ``null`` value removes one), and the key as
  ``x-goog-api-key``.
- Body: the messages and tools of :mod:`pi_nb.providers.google_shared`, the system prompt as
  ``systemInstruction``, ``generationConfig`` with ``maxOutputTokens`` (the model's limit clamped
  to the context left), ``temperature`` when given and the thinking config: Gemini 3 Pro / Flash
  and Gemma 4 take a ``thinkingLevel`` (``LOW``/``HIGH`` for Pro, ``MINIMAL``/``HIGH`` for Gemma,
  each level for Flash), Gemini 2.5 a ``thinkingBudget`` (pi-ai's per-model budgets, ``-1`` for
  others); thinking off is ``thinkingBudget: 0`` on 2.5 and the lowest level on 3.x / Gemma 4.
- Stream: text and ``thought`` parts into text and thinking blocks (their thought signatures kept),
  ``functionCall`` parts into tool calls (a call without an id, or with a repeated one, gets
  ``{name}_{ms}_{n}``), usage (cached prompt tokens as cache reads, thoughts counted as output
  and as ``reasoning``), finish reasons (``STOP`` -> ``stop``, or ``toolUse`` after a call,
  ``MAX_TOKENS`` -> ``length``, safety/recitation/... -> ``Provider stopped with: <REASON>``).
- Errors: the SDK's texts (the error body as JSON; ``Incomplete JSON segment at the end`` for a
  stream cut inside an event; ``Google stream ended without a finish reason``). A failed request
  is retried by pi-ai's provider retry (``max_retries``; none unless asked).

Why plain ``httpx`` and not the ``google-genai`` SDK: the Python SDK appends its own label to the
``User-Agent`` header (pi-ai sends Pi's user agent alone) and serialises through its pydantic
models, so it cannot send the request pi-ai's JavaScript SDK sends; the SDK's converters that
shape the body are small and are reproduced in :func:`pi_nb.providers.google_shared.wire_body`.
``x-goog-api-client`` names the SDK release pi-ai ships and this Python
(``google-genai-sdk/1.52.0 gl-python/3.x``) where pi-ai names Node.

The key comes from ``$GEMINI_API_KEY`` (or ``api_key_env``); it is never stored (a server that
echoes it in an error has it redacted). ``pip install 'pi_nb[google-generative-ai]'``.
"""

from __future__ import annotations

import contextlib
import platform
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, cast

from pi_nb._js import js_stringify, js_truthy
from pi_nb.messages import ErrorEvent, ToolCall
from pi_nb.providers._pi_ai_util import (
    merge_headers,
    provider_attribution_headers,
    provider_headers_to_record,
    sanitize_surrogates,
)
from pi_nb.providers._stream_common import (
    JsError,
    apply_cost,
    block_delta_event,
    block_start_event,
    format_provider_error,
    js_string,
    normalize_provider_error,
    redact_key,
    require_httpx,
)
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    RemoteModel,
    StreamOptions,
    make_assistant_message,
    snapshot_message,
)
from pi_nb.providers.google_shared import (
    GOOGLE_GENAI_SDK_VERSION,
    GoogleApiError,
    GoogleStreamError,
    convert_messages,
    convert_tools,
    http_error,
    is_thinking_part,
    iter_gemini_sse,
    map_stop_reason,
    resolve_google_function_calling_mode,
    resolve_google_thinking_level,
    retain_thought_signature,
    supports_google_strict_tool_sampling,
    wire_body,
)
from pi_nb.providers.provider_retry import ProviderFailure, retry_provider_request
from pi_nb.providers.simple_options import (
    build_base_options,
    clamp_thinking_level,
    pi_user_agent,
    simple_stream_options,
)

__all__ = ["GoogleGenerativeAIModel", "google_budget", "google_thinking_level"]

# Typing: Gemini's wire JSON and pi-ai's model and options dicts are open JSON (``dict[str, Any]``).

_GEMMA_4 = re.compile(r"gemma-?4")
_GEMINI_3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI_3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")


def _is_gemma_4(model_id: str) -> bool:
    return bool(_GEMMA_4.search(model_id.lower()))


def _is_gemini_3_pro(model_id: str) -> bool:
    return bool(_GEMINI_3_PRO.search(model_id.lower()))


def _is_gemini_3_flash(model_id: str) -> bool:
    lower = model_id.lower()
    return bool(_GEMINI_3_FLASH.search(lower)) or lower in ("gemini-flash-latest", "gemini-flash-lite-latest")


def google_thinking_level(effort: str, model_id: str, gemma: bool = True) -> str:
    """pi-ai's ``getThinkingLevel`` (``getGemini3ThinkingLevel`` for Vertex: ``gemma=False``)."""
    if _is_gemini_3_pro(model_id):
        return "LOW" if effort in ("minimal", "low") else "HIGH"
    if gemma and _is_gemma_4(model_id):
        return "MINIMAL" if effort in ("minimal", "low") else "HIGH"
    return effort.upper()


_BUDGETS = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)


def google_budget(
    model_id: str, level: str, custom: Mapping[str, int] | None = None, flash_lite: bool = True
) -> int:
    """pi-ai's ``getGoogleBudget`` (Vertex has no 2.5 Flash-Lite row: ``flash_lite=False``)."""
    if custom and custom.get(level) is not None:
        return int(custom[level])
    for marker, budgets in _BUDGETS:
        if marker == "2.5-flash-lite" and not flash_lite:
            continue
        if marker in model_id:
            return budgets[level]
    return -1


class _GoogleCounter:
    """pi-ai's module-level ``toolCallCounter`` (one per provider module)."""

    def __init__(self) -> None:
        self.value = 0

    def next(self) -> int:
        self.value += 1
        return self.value


def _now_ms() -> int:
    return int(time.time() * 1000)


class GoogleGenerativeAIModel(RemoteModel):
    """A Gemini model over Google's Gemini API, the way pi-ai's ``google-generative-ai`` runs it."""

    api = "google-generative-ai"
    default_provider = "google"
    default_context_window = 1_048_576
    default_max_tokens = 65_536
    default_reasoning = True
    base_url_env = ""
    default_api_key_env = "GEMINI_API_KEY"
    #: the module a turn imports (pi_nb sends over httpx)
    sdk_module: ClassVar[str | None] = "httpx"
    #: the pi_nb extra that installs what a turn needs
    extra: ClassVar[str] = "google-generative-ai"
    #: the name in pi-ai's "... stream ended without a finish reason"
    _stream_name: ClassVar[str] = "Google"
    #: Gemma 4 thinking levels and a Gemini 2.5 Flash-Lite budget row (pi-ai's Vertex module has neither)
    _gemma_levels: ClassVar[bool] = True
    _flash_lite_budgets: ClassVar[bool] = True
    #: the body follows the SDK's Vertex converters (else its Gemini API ones)
    _vertex: ClassVar[bool] = False
    tool_call_counter: ClassVar[_GoogleCounter] = _GoogleCounter()
    #: milliseconds for generated tool-call ids (pi-ai's ``Date.now()``); tests replace it
    clock: ClassVar[Any] = staticmethod(_now_ms)

    def __init__(self, id: str, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", "https://generativelanguage.googleapis.com/v1beta")
        super().__init__(id, **kwargs)

    def pi_ai_model(self) -> dict[str, Any]:
        model = super().pi_ai_model()
        model["api"] = self.api
        return model

    # ------------------------------------------------------------------ options and body

    def _disabled_thinking(self, model_id: str) -> dict[str, Any]:
        if _is_gemini_3_pro(model_id):
            return {"thinkingLevel": "LOW"}
        if _is_gemini_3_flash(model_id):
            return {"thinkingLevel": "MINIMAL"}
        if self._gemma_levels and _is_gemma_4(model_id):
            return {"thinkingLevel": "MINIMAL"}
        return {"thinkingBudget": 0}

    def _options(
        self, model: Mapping[str, Any], context: Context, opts: StreamOptions, api_key: str | None
    ) -> dict[str, Any]:
        """pi-ai's ``streamSimple``: the base options plus ``thinking``."""
        simple = simple_stream_options(opts)
        base = build_base_options(model, cast(Mapping[str, Any], context.to_dict()), simple, api_key)
        tool_choice = opts.extra.get("toolChoice") if opts.extra else None
        if tool_choice is not None:
            base["toolChoice"] = tool_choice
        if not opts.reasoning:
            base["thinking"] = {"enabled": False}
            return base
        clamped = clamp_thinking_level(model, opts.reasoning)
        resolved = resolve_google_thinking_level(model, clamped)
        model_id = str(model.get("id"))
        if (
            _is_gemini_3_pro(model_id)
            or _is_gemini_3_flash(model_id)
            or (self._gemma_levels and _is_gemma_4(model_id))
        ):
            base["thinking"] = {
                "enabled": True,
                "level": google_thinking_level(resolved, model_id, self._gemma_levels),
            }
        else:
            # Pi's thinkingBudgets setting, as the other providers take it
            budgets = opts.extra.get("thinking_budgets") if opts.extra else None
            base["thinking"] = {
                "enabled": True,
                "budgetTokens": google_budget(model_id, resolved, budgets, self._flash_lite_budgets),
            }
        return base

    def _params(
        self, model: Mapping[str, Any], context: Context, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """pi-ai's ``buildParams``: ``{model, contents, config}``."""
        contents = convert_messages(model, cast(Mapping[str, Any], context.to_dict()))
        generation: dict[str, Any] = {}
        if options.get("temperature") is not None:
            generation["temperature"] = options["temperature"]
        if options.get("maxTokens") is not None:
            generation["maxOutputTokens"] = options["maxTokens"]
        model_id = str(model.get("id"))
        strict = supports_google_strict_tool_sampling(model_id)
        tools = list(context.tools or [])
        mode = (
            resolve_google_function_calling_mode(tools, options.get("toolChoice"), strict) if tools else None
        )
        config: dict[str, Any] = dict(generation)
        if context.system_prompt:
            config["systemInstruction"] = sanitize_surrogates(context.system_prompt)
        if tools:
            config["tools"] = convert_tools(tools, strict)
        if mode is not None:
            config["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
        thinking = options.get("thinking")
        if thinking and thinking.get("enabled") and model.get("reasoning"):
            thinking_config: dict[str, Any] = {"includeThoughts": True}
            if thinking.get("level") is not None:
                thinking_config["thinkingLevel"] = thinking["level"]
            elif thinking.get("budgetTokens") is not None:
                thinking_config["thinkingBudget"] = thinking["budgetTokens"]
            config["thinkingConfig"] = thinking_config
        elif model.get("reasoning") and thinking and not thinking.get("enabled"):
            config["thinkingConfig"] = self._disabled_thinking(model_id)
        return {"model": model.get("id"), "contents": contents, "config": config}

    def build_request(self, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
        """The JSON body sent to ``:streamGenerateContent`` (pi-ai's ``buildParams``, on the wire)."""
        model = self.pi_ai_model()
        opts = options or StreamOptions()
        params = self._params(model, context, self._options(model, context, opts, self.resolve_api_key()))
        return wire_body(params, self._vertex)

    # ------------------------------------------------------------------ URL, headers, key

    def _api_key(self, options: Mapping[str, Any]) -> str | None:
        return cast("str | None", options.get("apiKey"))

    async def _url_and_auth(
        self, model: Mapping[str, Any], api_key: str | None, options: Mapping[str, Any], signal: Any = None
    ) -> tuple[str, dict[str, str]]:
        """The request URL and the auth headers (the key). ``signal``: a turn aborted before its
        request sends nothing (pi-ai's ``Request aborted``)."""
        if not api_key:
            raise GoogleStreamError(f"No API key for provider: {model.get('provider')}")
        base = str(model.get("baseUrl") or "https://generativelanguage.googleapis.com/v1beta")
        base = base[:-1] if base.endswith("/") else base
        return f"{base}/models/{model.get('id')}:streamGenerateContent?alt=sse", {"x-goog-api-key": api_key}

    def _headers(
        self, model: Mapping[str, Any], options: Mapping[str, Any], auth: Mapping[str, str]
    ) -> dict[str, str]:
        label = f"google-genai-sdk/{GOOGLE_GENAI_SDK_VERSION} gl-python/{platform.python_version()}"
        sdk = {"user-agent": label, "x-goog-api-client": label, "content-type": "application/json"}
        # pi-ai's providerHeadersToRecord({"User-Agent": ..., ...model.headers, ...options.headers}):
        # a null drops the header from pi-ai's record, so the SDK's own value stays
        record = provider_headers_to_record(
            {"User-Agent": pi_user_agent(), **(model.get("headers") or {}), **(options.get("headers") or {})}
        )
        headers = merge_headers(sdk, record)
        for name, value in auth.items():
            headers.setdefault(name, value)
        return headers

    # ------------------------------------------------------------------ the turn

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``streamSimple`` for this API."""
        httpx = require_httpx(self.api, self.extra)

        opts = options or StreamOptions()
        model = self.pi_ai_model()
        output: Any = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        output["stopReason"] = "pending"
        secret: str | None = None

        def fail(error: BaseException) -> ErrorEvent:
            aborted = opts.signal is not None and opts.signal.aborted
            output["stopReason"] = "aborted" if aborted else "error"
            output["errorMessage"] = redact_key(_format_error(error), secret)
            return {"type": "error", "reason": output["stopReason"], "error": output}

        shared = self.http_client()
        client = shared if shared is not None else httpx.AsyncClient(timeout=self.timeout)
        try:
            async with contextlib.AsyncExitStack() as stack:
                if shared is None:
                    await stack.enter_async_context(client)
                stream_options = self._options(model, context, opts, self.resolve_api_key())
                secret = self._api_key(stream_options)
                extra = provider_attribution_headers(
                    model, opts.session_id, self.credential_headers() or None
                )
                if extra:
                    stream_options["headers"] = dict(extra)
                url, auth = await self._url_and_auth(model, secret, stream_options, opts.signal)
                params = self._params(model, context, stream_options)
                if opts.signal is not None and opts.signal.aborted:
                    raise GoogleStreamError("Request aborted")
                body = js_stringify(wire_body(params, self._vertex)).encode("utf-8")
                headers = self._headers(model, stream_options, auth)

                async def send() -> Any:
                    request = client.build_request("POST", url, headers=headers, content=body)
                    response = await client.send(request, stream=True)
                    if response.status_code < 200 or response.status_code >= 300:
                        try:
                            content = await response.aread()
                        finally:
                            await response.aclose()
                        phrase = response.extensions.get("reason_phrase", b"")
                        status_text = phrase.decode("ascii", "replace") if isinstance(phrase, bytes) else ""
                        raise http_error(
                            response.status_code,
                            response.headers.get("content-type", ""),
                            content,
                            status_text,
                        )
                    return response

                response = await retry_provider_request(
                    send,
                    _provider_failure,
                    max_retries=self.max_retries,
                    signal=opts.signal,
                    fail=GoogleStreamError,
                )
                try:
                    yield {"type": "start", "partial": snapshot_message(output)}
                    async for event in self._consume(response, output, opts):
                        yield event
                finally:
                    await response.aclose()
            if opts.signal is not None and opts.signal.aborted:
                raise GoogleStreamError("Request was aborted")
            if output["stopReason"] == "pending":
                raise GoogleStreamError(f"{self._stream_name} stream ended without a finish reason")
            if output["stopReason"] in ("aborted", "error"):
                raw = output.get("rawStopReason")
                raise GoogleStreamError(
                    f"Provider stopped with: {raw}" if raw else "An unknown error occurred"
                )
        except Exception as error:
            yield fail(error)
            return
        yield {"type": "done", "reason": output["stopReason"], "message": output}

    async def _consume(
        self, response: Any, output: Any, opts: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        blocks: list[Any] = output["content"]
        current: dict[str, Any] | None = None

        def partial() -> Any:
            return snapshot_message(output)

        def end(block: dict[str, Any]) -> AssistantMessageEvent:
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

        async for chunk in iter_gemini_sse(response):
            if opts.signal is not None and opts.signal.aborted:
                # the SDK's fetch ends with the abort: undici's AbortError
                raise GoogleStreamError("This operation was aborted")
            if not isinstance(chunk, dict):
                chunk = {}
            if not js_truthy(output.get("responseId")):  # responseId ||= chunk.responseId
                response_id = chunk.get("responseId")
                if response_id is None:
                    output.pop("responseId", None)
                else:
                    output["responseId"] = response_id
            candidates = chunk.get("candidates")
            candidate = candidates[0] if isinstance(candidates, list) and candidates else None
            if not isinstance(candidate, dict):
                candidate = None
            content = candidate.get("content") if candidate else None
            parts: Any = content.get("parts") if isinstance(content, dict) else None
            if js_truthy(parts):
                for part in parts:
                    text = part.get("text")
                    if "text" in part:  # part.text !== undefined (a null is added as "null")
                        text = text if isinstance(text, str) else js_string(text)
                        thinking = is_thinking_part(part)
                        if (
                            current is None
                            or (thinking and current["type"] != "thinking")
                            or (not thinking and current["type"] != "text")
                        ):
                            if current is not None:
                                yield end(current)
                            if thinking:
                                current = {"type": "thinking", "thinking": ""}
                                blocks.append(current)
                                yield block_start_event("thinking_start", len(blocks) - 1, partial())
                            else:
                                current = {"type": "text", "text": ""}
                                blocks.append(current)
                                yield block_start_event("text_start", len(blocks) - 1, partial())
                        if current["type"] == "thinking":
                            current["thinking"] += text
                            sig = retain_thought_signature(
                                current.get("thinkingSignature"), part.get("thoughtSignature")
                            )
                            if sig is None:
                                current.pop("thinkingSignature", None)
                            else:
                                current["thinkingSignature"] = sig
                            yield block_delta_event("thinking_delta", len(blocks) - 1, text, partial())
                        else:
                            current["text"] += text
                            sig = retain_thought_signature(
                                current.get("textSignature"), part.get("thoughtSignature")
                            )
                            if sig is None:
                                current.pop("textSignature", None)
                            else:
                                current["textSignature"] = sig
                            yield block_delta_event("text_delta", len(blocks) - 1, text, partial())
                    call = part.get("functionCall")
                    if js_truthy(call):  # {} is a call too
                        if current is not None:
                            yield end(current)
                            current = None
                        provided = call.get("id")
                        needs_new = not provided or any(
                            b.get("type") == "toolCall" and b.get("id") == provided for b in blocks
                        )
                        call_id = (
                            f"{js_string(call['name']) if 'name' in call else 'undefined'}"
                            f"_{type(self).clock()}_{self.tool_call_counter.next()}"
                            if needs_new
                            else provided
                        )
                        args = call.get("args")
                        tool_call: dict[str, Any] = {
                            "type": "toolCall",
                            "id": call_id,
                            "name": call.get("name") or "",
                            "arguments": {} if args is None else args,
                        }
                        if js_truthy(part.get("thoughtSignature")):
                            tool_call["thoughtSignature"] = part["thoughtSignature"]
                        blocks.append(tool_call)
                        index = len(blocks) - 1
                        yield block_start_event("toolcall_start", index, partial())
                        yield block_delta_event(
                            "toolcall_delta", index, js_stringify(tool_call["arguments"]), partial()
                        )
                        yield {
                            "type": "toolcall_end",
                            "contentIndex": index,
                            "toolCall": cast(ToolCall, tool_call),
                            "partial": partial(),
                        }
            if candidate and js_truthy(candidate.get("finishReason")):
                reason = candidate["finishReason"]
                output["rawStopReason"] = reason
                output["stopReason"] = map_stop_reason(str(reason))
                if output["stopReason"] == "stop" and any(b.get("type") == "toolCall" for b in blocks):
                    output["stopReason"] = "toolUse"
            raw_usage: Any = chunk.get("usageMetadata")
            if js_truthy(raw_usage):
                usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
                prompt = usage.get("promptTokenCount") or 0
                cached = usage.get("cachedContentTokenCount") or 0
                thoughts = usage.get("thoughtsTokenCount") or 0
                output["usage"] = {
                    "input": prompt - cached,
                    "output": (usage.get("candidatesTokenCount") or 0) + thoughts,
                    "cacheRead": cached,
                    "cacheWrite": 0,
                    "reasoning": thoughts,
                    "totalTokens": usage.get("totalTokenCount") or 0,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                }
                apply_cost(output["usage"], self.cost_function)
        if current is not None:
            yield end(current)


def _provider_failure(error: BaseException) -> ProviderFailure | None:
    """pi-ai retries the SDK's ``ApiError`` (it has a status; its headers are unknown)."""
    if isinstance(error, GoogleApiError):
        return ProviderFailure(error.status, {}, str(error))
    return None


def _format_error(error: BaseException) -> str:
    """pi-ai's ``formatProviderError(normalizeProviderError(error))`` of what the SDK threw."""
    if isinstance(error, GoogleApiError):
        return format_provider_error(
            normalize_provider_error(JsError(message=str(error), status=error.status))
        )
    if isinstance(error, GoogleStreamError):
        return str(error)
    name = type(error).__name__
    if name in (
        "ConnectError",
        "NetworkError",
        "ProxyError",
        "UnsupportedProtocol",
        "ReadError",
        "RemoteProtocolError",
    ):
        return "fetch failed"  # undici's TypeError: @google/genai does not wrap it
    if "Timeout" in name:
        return "fetch failed"
    return format_provider_error(normalize_provider_error(error))
