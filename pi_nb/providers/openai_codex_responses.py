"""``OpenAICodexResponsesProvider``: the ChatGPT models of a ChatGPT sign-in (``openai-codex/...``,
API ``openai-codex-responses``), as pi-ai 0.85.0 runs them.

pi-ai's ``openai-codex-responses`` provider, as Pi's agent calls it through ``streamSimple``, over
its SSE transport (Pi's ``transport: "sse"``; Pi tries a WebSocket first by default and falls back
to SSE, pi_nb speaks SSE only):

- the request: ``POST {baseUrl}/codex/responses`` (``https://chatgpt.com/backend-api`` by
  default; a base URL already ending in ``/codex`` or ``/codex/responses`` is kept), sent over
  ``httpx`` with the model's headers, the headers Pi's agent adds, then ``Authorization: Bearer
  <token>``, ``chatgpt-account-id`` (the ``chatgpt_account_id`` claim of the token, a JWT, under
  ``https://api.openai.com/auth``), ``originator: pi``, Pi's ``User-Agent``, ``OpenAI-Beta:
  responses=experimental``, ``accept: text/event-stream``, and with a session the ``session-id`` and
  ``x-client-request-id`` headers. The JSON body is sent as it is (pi-ai compresses it with zstd
  where its runtime can, and sends it as it is where it cannot);
- the body: the system prompt as ``instructions`` (``"You are a helpful assistant."`` without
  one), the history as Responses input items, ``text.verbosity`` ``"low"``, the encrypted
  reasoning always included, the session id as ``prompt_cache_key`` (none when cache retention is
  ``"none"``), ``tool_choice: "auto"``, ``parallel_tool_calls: true``, tools with ``strict: null``,
  and ``reasoning`` only with thinking on (the level through the model's ``thinkingLevelMap``,
  ``summary: "auto"``);
- retries: pi-ai's own loop (``max_retries`` times, none by default): 429/5xx and rate-limit texts
  are retried after ``retry-after-ms``/``retry-after`` or 1s, 2s, 4s...; a usage-limit 429 is not;
- errors: an HTTP error's JSON ``error.message``, or for a usage limit (``usage_limit_reached``,
  ``usage_not_included``, ``rate_limit_exceeded``, any 429) ``You have hit your ChatGPT usage limit
  (<plan> plan). Try again in ~N min.``; an in-stream ``error`` event is ``Codex error: ...``, a
  ``response.failed`` its error message (``Codex response failed``);
- the stream: ``data:`` frames split at blank lines (``Invalid Codex SSE JSON: ...`` for a bad
  one), the terminal ``response.done``/``response.completed``/``response.incomplete`` read as the
  completed response (``end_turn`` kept as ``endTurn``), then the Responses stream code; service
  tier pricing uses the requested tier when the response says ``default``.

The credential is the sign-in's access token: :meth:`RemoteModel.resolve_api_key` (by default the
``OPENAI_CODEX_ACCESS_TOKEN`` variable); it is never stored.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import codecs
import email.utils
import math
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, cast

from pi_nb._js import js_json_parse, js_json_parse_v8, js_stringify, js_truthy
from pi_nb.messages import AssistantMessage, ErrorEvent
from pi_nb.providers._pi_ai_util import (
    clamp_openai_prompt_cache_key,
    provider_attribution_headers,
    split_deferred_tools,
)
from pi_nb.providers._stream_common import (
    format_provider_error,
    js_shaped_error_from,
    js_string,
    normalize_provider_error,
    redact_key,
    require_httpx,
)
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    StreamOptions,
    make_assistant_message,
    snapshot_message,
)
from pi_nb.providers.openai_responses import (
    OpenAIResponsesProvider,
    convert_responses_messages,
    convert_responses_tools,
)
from pi_nb.providers.simple_options import pi_user_agent

__all__ = [
    "CODEX_TOOL_CALL_PROVIDERS",
    "DEFAULT_CODEX_BASE_URL",
    "OpenAICodexResponsesProvider",
    "extract_account_id",
    "parse_error_response",
    "resolve_codex_url",
]

DEFAULT_CODEX_BASE_URL = "https://chatgpt.com/backend-api"
JWT_CLAIM_PATH = "https://api.openai.com/auth"
BASE_DELAY_MS = 1000
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
CODEX_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
CODEX_RESPONSE_STATUSES = frozenset(
    {"completed", "incomplete", "failed", "cancelled", "queued", "in_progress"}
)

_TERMINAL_RATE_LIMIT = re.compile(
    r"GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance|insufficient_quota"
    r"|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)
_RETRYABLE_TEXT = re.compile(
    r"rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused", re.IGNORECASE
)
_USAGE_LIMIT_CODE = re.compile(r"usage_limit_reached|usage_not_included|rate_limit_exceeded", re.IGNORECASE)
_ATOB_ALPHABET = re.compile(r"[A-Za-z0-9+/]*={0,2}")


class CodexError(Exception):
    """A failure with pi-ai's text (its ``Error`` message)."""


class _RetryDelayExceeded(CodexError):
    """The server asked for a longer wait than the retry settings allow."""


def _atob(data: str) -> bytes:
    """JavaScript's ``atob``: standard base64, ASCII whitespace ignored, padding optional; raises
    where ``atob`` throws (``-``/``_`` of base64url are not in its alphabet)."""
    text = re.sub(r"[\t\n\f\r ]", "", data)
    if len(text) % 4 == 0 and text.endswith("="):
        body = text
    else:
        body = text + "=" * (-len(text) % 4)
    if len(text) % 4 == 1 or not _ATOB_ALPHABET.fullmatch(body):
        raise ValueError("The string to be decoded is not correctly encoded.")
    return base64.b64decode(body, validate=True)


def extract_account_id(token: str) -> str:
    """pi-ai's ``extractAccountId``: the ChatGPT account id among the claims of the sign-in's
    access token (a JWT); ``Failed to extract accountId from token`` when it has none."""
    try:
        parts = token.split(".")
        if len(parts) != 3:
            raise ValueError("Invalid token")
        # atob gives one character per byte (Latin-1); JSON.parse reads those characters
        payload = js_json_parse_v8(_atob(parts[1]).decode("latin-1"))
        claims = payload.get(JWT_CLAIM_PATH) if isinstance(payload, dict) else None
        account = claims.get("chatgpt_account_id") if isinstance(claims, dict) else None
        if not js_truthy(account):
            raise ValueError("No account ID in token")
        return js_string(account)  # Headers.set gives the header String(value)
    except (ValueError, binascii.Error, AttributeError) as error:
        raise CodexError("Failed to extract accountId from token") from error


def resolve_codex_url(base_url: str | None) -> str:
    """pi-ai's ``resolveCodexUrl``: the SSE endpoint under ``base_url`` (``.../codex/responses``)."""
    raw = base_url if base_url and base_url.strip() else DEFAULT_CODEX_BASE_URL
    normalized = raw.rstrip("/")
    if normalized.endswith("/codex/responses"):
        return normalized
    if normalized.endswith("/codex"):
        return f"{normalized}/responses"
    return f"{normalized}/codex/responses"


def _is_retryable(status: int, text: str) -> bool:
    if status == 429 and _TERMINAL_RATE_LIMIT.search(text):
        return False
    if status in (429, 500, 502, 503, 504):
        return True
    return bool(_RETRYABLE_TEXT.search(text))


def _js_number(text: str) -> float:
    """JavaScript's ``Number(text)`` for a header value (NaN where it is not a number)."""
    stripped = text.strip()
    if not stripped:
        return 0.0
    try:
        if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?Infinity", stripped):
            return float(stripped.replace("Infinity", "inf"))
        if re.fullmatch(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+", stripped):
            return float(int(stripped, 0))
    except ValueError:
        pass
    return math.nan


def _retry_after_ms(headers: Mapping[str, str]) -> float | None:
    """pi-ai's ``getRetryAfterDelayMs``: ``retry-after-ms``, else ``retry-after`` in seconds or as
    an HTTP date."""
    given_ms = headers.get("retry-after-ms")
    if given_ms is not None:
        millis = _js_number(given_ms)
        if math.isfinite(millis):
            return max(0.0, millis)
    after = headers.get("retry-after")
    if not after:
        return None
    seconds = _js_number(after)
    if math.isfinite(seconds):
        return max(0.0, seconds * 1000)
    try:
        when = email.utils.parsedate_to_datetime(after)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() * 1000 - time.time() * 1000)


def parse_error_response(status: int, status_text: str, raw: str) -> tuple[str, str | None]:
    """pi-ai's ``parseErrorResponse``: ``(message, friendly message)`` of an HTTP error body; a
    usage limit becomes ``You have hit your ChatGPT usage limit (<plan> plan). Try again in ~N min.``"""
    message: Any = raw or status_text or "Request failed"
    try:
        parsed = js_json_parse(raw)
    except (ValueError, RecursionError):
        return message, None
    err = parsed.get("error") if isinstance(parsed, dict) else None
    if not js_truthy(err):
        return message, None

    def get(key: str) -> Any:
        return err.get(key) if isinstance(err, dict) else None

    friendly: str | None = None
    code = get("code") or get("type") or ""
    if _USAGE_LIMIT_CODE.search(js_string(code)) or status == 429:
        plan_type = get("plan_type")
        if js_truthy(plan_type) and not isinstance(plan_type, str):
            return message, None  # plan_type.toLowerCase() throws: pi-ai's catch keeps the raw message
        plan = f" ({plan_type.lower()} plan)" if plan_type else ""
        resets = get("resets_at")
        when = ""
        if js_truthy(resets):
            seconds = (
                float(resets)
                if isinstance(resets, (int, float))
                else _js_number(resets)
                if isinstance(resets, str)
                else math.nan
            )
            left = (seconds * 1000 - time.time() * 1000) / 60000
            when = f" Try again in ~{'NaN' if math.isnan(left) else max(0, _js_round(left))} min."
        friendly = f"You have hit your ChatGPT usage limit{plan}.{when}".strip()
    given = get("message")
    message = given if js_truthy(given) else friendly or message
    return js_string(message), friendly


def _js_round(x: float) -> int:
    """``Math.round``: halves go up."""
    return math.floor(x + 0.5)


class OpenAICodexResponsesProvider(OpenAIResponsesProvider):
    """A ChatGPT model of a ChatGPT (Plus/Pro) sign-in, over ChatGPT's Codex backend."""

    api = "openai-codex-responses"
    default_provider = "openai-codex"
    base_url_env = ""
    default_api_key_env = "OPENAI_CODEX_ACCESS_TOKEN"
    sdk_module: ClassVar[str | None] = "httpx"
    extra: ClassVar[str] = "openai-codex-responses"

    _no_stop_reason_text = "Codex stream ended without a stop reason"

    def _error_text(self, error: BaseException) -> str:
        """``formatProviderError(normalizeProviderError(error))`` (no prefix)."""
        if isinstance(error, CodexError):
            return str(error)
        return format_provider_error(normalize_provider_error(js_shaped_error_from(error)))

    def _pricing_service_tier(self, response_tier: Any, request_tier: Any) -> Any:
        """pi-ai's ``resolveCodexServiceTier``: the requested flex/priority tier when the response
        says ``default``, else the response's tier, else the requested one."""
        if response_tier == "default" and request_tier in ("flex", "priority"):
            return request_tier
        return request_tier if response_tier is None else response_tier

    def _options(self, model: Mapping[str, Any], context: Context, opts: StreamOptions) -> dict[str, Any]:
        """pi-ai's ``streamSimple``: the base options and the clamped reasoning effort; the
        per-request Codex options from ``StreamOptions.extra`` (``service_tier``,
        ``text_verbosity``, ``reasoning_summary``, ``tool_choice``)."""
        base = super()._options(model, context, opts)
        base.pop("samplingParams", None)  # Codex's body takes no sampling parameters
        extra = opts.extra or {}
        for key, name in (
            ("text_verbosity", "textVerbosity"),
            ("reasoning_summary", "reasoningSummary"),
            ("tool_choice", "toolChoice"),
        ):
            if extra.get(key) is not None:
                base[name] = extra[key]
        return base

    def _params(
        self, model: Mapping[str, Any], context: Context, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """pi-ai's ``buildRequestBody`` (``prompt_cache_key`` from ``options["codexSessionId"]``)."""
        compat: Mapping[str, Any] = model.get("compat") or {}
        strict_mode = compat.get("supportsStrictMode")
        supports_strict = True if strict_mode is None else bool(strict_mode)
        grammar_tools = bool(compat.get("supportsOpenAIGrammarTools") or False)
        mode = (
            "additional-tools"
            if compat.get("supportsAdditionalTools")
            else "tool-search"
            if compat.get("supportsToolSearch")
            else None
        )
        immediate, deferred = split_deferred_tools(
            cast(Mapping[str, Any], context.to_dict()), mode is not None
        )
        tool_options = {
            "supports_strict_mode": supports_strict,
            "supports_openai_grammar_tools": grammar_tools,
            "strict_null": True,
        }
        messages = convert_responses_messages(
            model,
            context,
            CODEX_TOOL_CALL_PROVIDERS,
            include_system_prompt=False,
            grammar_tool_input_properties=self._grammar_properties(model, context),
            deferred_tools=deferred,
            deferred_tools_mode=mode,
            tool_options=tool_options,
        )
        body: dict[str, Any] = {
            "model": model.get("id"),
            "store": False,
            "stream": True,
            "instructions": context.system_prompt or "You are a helpful assistant.",
            "input": messages,
            "text": {"verbosity": options.get("textVerbosity") or "low"},
            "include": ["reasoning.encrypted_content"],
        }
        if options.get("codexSessionId") is not None:
            body["prompt_cache_key"] = options["codexSessionId"]
        body["tool_choice"] = options.get("toolChoice") if options.get("toolChoice") is not None else "auto"
        body["parallel_tool_calls"] = True
        if options.get("temperature") is not None:
            body["temperature"] = options["temperature"]
        if options.get("serviceTier") is not None:
            body["service_tier"] = options["serviceTier"]
        if immediate:
            body["tools"] = convert_responses_tools(
                cast(Sequence[Mapping[str, Any]], immediate), **tool_options
            )
        effort_level = options.get("reasoningEffort")
        if effort_level is not None:
            level_map: Mapping[str, Any] = model.get("thinkingLevelMap") or {}
            if effort_level == "none":
                effort = level_map.get("off")
                effort = "none" if effort is None else effort
            else:
                mapped = level_map.get(effort_level)
                effort = effort_level if mapped is None else mapped
            summary = options.get("reasoningSummary")
            body["reasoning"] = {"effort": effort, "summary": "auto" if summary is None else summary}
        return body

    def build_request(self, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
        """The ``POST /codex/responses`` body (pi-ai's ``buildRequestBody`` after ``streamSimple``)."""
        opts = options or StreamOptions()
        model = self.pi_ai_model()
        stream_options = self._options(model, context, opts)
        stream_options["codexSessionId"] = self._codex_session_id(stream_options)
        return self._params(model, context, stream_options)

    @staticmethod
    def _codex_session_id(stream_options: Mapping[str, Any]) -> str | None:
        cache_session = (
            None if stream_options.get("cacheRetention") == "none" else stream_options.get("sessionId")
        )
        return clamp_openai_prompt_cache_key(cache_session)

    def _sse_headers(
        self, model: Mapping[str, Any], account_id: str, token: str, session_id: str | None
    ) -> dict[str, str]:
        """pi-ai's ``buildSSEHeaders``: the model's headers, the agent's (a null one removes), then
        the sign-in, originator, user agent and SSE headers (names case-insensitive, as ``Headers``)."""
        headers: dict[str, tuple[str, str]] = {}  # lower-case name -> (name, value)

        def put(name: str, value: str | None) -> None:
            if value is None:
                headers.pop(name.lower(), None)
            else:
                headers[name.lower()] = (name.lower(), str(value))

        for name, value in (model.get("headers") or {}).items():
            put(name, value)
        agent = provider_attribution_headers(model, None, self.credential_headers() or None) or {}
        for name, value in agent.items():
            put(name, value)
        put("Authorization", f"Bearer {token}")
        put("chatgpt-account-id", account_id)
        put("originator", "pi")
        put("User-Agent", pi_user_agent())
        put("OpenAI-Beta", "responses=experimental")
        put("accept", "text/event-stream")
        put("content-type", "application/json")
        if session_id:
            put("session-id", session_id)
            put("x-client-request-id", session_id)
        return dict(headers.values())

    def _events(self, response: Any, output: AssistantMessage, opts: StreamOptions) -> AsyncIterator[Any]:
        return self._codex_events(response, output, opts)

    async def _codex_events(
        self, response: Any, output: AssistantMessage, opts: StreamOptions
    ) -> AsyncIterator[Any]:
        """pi-ai's ``mapCodexEvents`` over ``parseSSE``: Codex's errors raised with pi-ai's text, the
        terminal event handed on as ``response.completed`` (and the stream ended there)."""
        out: Any = output
        async for event in _parse_sse(response, opts.signal):
            kind = event.get("type") if isinstance(event.get("type"), str) else None
            if not kind:
                continue
            if kind == "error":
                nested: dict[str, Any] = event["error"] if isinstance(event.get("error"), dict) else {}
                code = event.get("code") if isinstance(event.get("code"), str) else nested.get("code")
                code = code if isinstance(code, str) else None
                message = (
                    event.get("message") if isinstance(event.get("message"), str) else nested.get("message")
                )
                message = message if isinstance(message, str) else None
                raise CodexError(f"Codex error: {message or code or js_stringify(event)}")
            if kind == "response.failed":
                failed = event.get("response")
                error = failed.get("error") if isinstance(failed, dict) else None
                message = error.get("message") if isinstance(error, dict) else None
                raise CodexError(str(message) if message else "Codex response failed")
            if kind in ("response.done", "response.completed", "response.incomplete"):
                resp = event.get("response")
                if isinstance(resp, dict) and isinstance(resp.get("end_turn"), bool):
                    out["endTurn"] = resp["end_turn"]
                if isinstance(resp, dict):
                    status = resp.get("status")
                    resp = dict(resp)
                    if isinstance(status, str) and status in CODEX_RESPONSE_STATUSES:
                        resp["status"] = status
                    else:
                        resp.pop("status", None)  # normalizeCodexStatus: undefined
                yield {**event, "type": "response.completed", "response": resp}
                return
            yield event

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``streamSimple`` for ``openai-codex-responses`` over SSE."""
        opts = options or StreamOptions()
        model = self.pi_ai_model()
        output: Any = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        output["stopReason"] = "pending"
        blocks: list[Any] = output["content"]
        token = self.resolve_api_key()

        def aborted() -> bool:
            return opts.signal is not None and opts.signal.aborted

        def fail(error: BaseException) -> ErrorEvent:
            for block in blocks:
                block.pop("partialJson", None)
            output["stopReason"] = "aborted" if aborted() else "error"
            output["errorMessage"] = redact_key(self._error_text(error), token)
            return {"type": "error", "reason": output["stopReason"], "error": output}

        httpx = require_httpx("OpenAI Codex", self.extra)
        client: Any = None
        response: Any = None
        try:
            if not token:
                raise CodexError(f"No API key for provider: {self.provider}")
            account_id = extract_account_id(token)
            stream_options = self._options(model, context, opts)
            session = self._codex_session_id(stream_options)
            stream_options["codexSessionId"] = session
            body = self._params(model, context, stream_options)
            headers = self._sse_headers(model, account_id, token, session)
            payload = js_stringify(body).encode("utf-8")
            client = self.http_client() or httpx.AsyncClient(timeout=self.timeout)
            response = await self._send(
                client, httpx, resolve_codex_url(model.get("baseUrl")), headers, payload, opts
            )
        except Exception as error:
            if client is not None:
                await client.aclose()
            yield fail(error)
            return
        yield {"type": "start", "partial": snapshot_message(output)}
        try:
            grammar = self._grammar_properties(model, context)
            async for event in self._process(response, output, model, stream_options, opts, grammar):
                yield event
            if aborted():
                raise CodexError("Request was aborted")
            if output["stopReason"] == "pending":
                raise CodexError(self._no_stop_reason_text)
            if output["stopReason"] in ("aborted", "error"):
                raise CodexError(output.get("errorMessage") or "An unknown error occurred")
        except Exception as error:
            yield fail(error)
            return
        finally:
            try:
                await response.aclose()
                await client.aclose()
            except Exception:  # pragma: no cover - closing a finished stream
                pass
        yield {"type": "done", "reason": output["stopReason"], "message": output}

    async def _send(
        self,
        client: Any,
        httpx: Any,
        url: str,
        headers: Mapping[str, str],
        payload: bytes,
        opts: StreamOptions,
    ) -> Any:
        """pi-ai's fetch-with-retry loop: the accepted response (its body not read yet), or the
        error text of the last failure."""
        max_retries = self.max_retries
        max_delay = (opts.extra or {}).get("max_retry_delay_ms", DEFAULT_MAX_RETRY_DELAY_MS)
        aborted_text = "Request was aborted"
        for attempt in range(max_retries + 1):
            if opts.signal is not None and opts.signal.aborted:
                raise CodexError(aborted_text)
            try:
                try:
                    request = client.build_request("POST", url, headers=dict(headers), content=payload)
                    response = await client.send(request, stream=True)
                except httpx.TimeoutException as error:
                    raise CodexError(
                        f"Codex SSE response headers timed out after {math.floor(self.timeout * 1000)}ms"
                    ) from error
                if response.is_success:
                    return response
                raw = (await response.aread()).decode("utf-8", "replace")
                await response.aclose()
                if attempt < max_retries and _is_retryable(response.status_code, raw):
                    after = _retry_after_ms(response.headers)
                    if after is None:
                        delay = BASE_DELAY_MS * 2**attempt
                    else:
                        if max_delay > 0 and after > max_delay:
                            raise _RetryDelayExceeded(
                                f"Server requested {math.ceil(after / 1000)}s retry delay "
                                f"(max: {math.ceil(max_delay / 1000)}s)"
                            )
                        delay = after
                    await _sleep(delay, opts)
                    continue
                # statusText: the reason phrase the server sent ("" over HTTP/2 or without one)
                reason = response.extensions.get("reason_phrase", b"")
                status_text = reason.decode("latin-1") if isinstance(reason, bytes) else str(reason or "")
                message, friendly = parse_error_response(response.status_code, status_text, raw)
                raise CodexError(friendly or message)
            except Exception as error:
                if opts.signal is not None and opts.signal.aborted:
                    raise CodexError(aborted_text) from error
                text = self._error_text(error)
                if text == aborted_text:
                    raise CodexError(aborted_text) from error
                if (
                    attempt < max_retries
                    and not isinstance(error, _RetryDelayExceeded)
                    and "usage limit" not in text
                ):
                    await _sleep(BASE_DELAY_MS * 2**attempt, opts)
                    continue
                raise
        raise CodexError("Failed after retries")  # pragma: no cover - the loop returns or raises


async def _sleep(ms: float, opts: StreamOptions) -> None:
    """pi-ai's ``sleep``: wait, ``Request was aborted`` when the signal fires."""
    end = time.monotonic() + ms / 1000
    while True:
        if opts.signal is not None and opts.signal.aborted:
            raise CodexError("Request was aborted")
        left = end - time.monotonic()
        if left <= 0:
            return
        await asyncio.sleep(min(left, 0.05))


async def _parse_sse(response: Any, signal: Any) -> AsyncIterator[dict[str, Any]]:
    """pi-ai's ``parseSSE``: frames split at ``\\n\\n``, the ``data:`` lines of a frame joined,
    ``[DONE]`` skipped, each frame's JSON parsed (``Invalid Codex SSE JSON: <V8's text>``)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    buffer = ""
    first = True
    chunks = response.aiter_bytes().__aiter__()
    while True:
        if signal is not None and signal.aborted:
            raise CodexError("Request was aborted")
        try:
            chunk = await chunks.__anext__()
            done = False
        except StopAsyncIteration:
            chunk, done = b"", True
        if signal is not None and signal.aborted:
            raise CodexError("Request was aborted")
        text = decoder.decode(chunk, final=done)
        if first and text:
            if text.startswith("\ufeff"):
                text = text[1:]  # TextDecoder drops a leading byte order mark
            first = False
        buffer += text
        if done and buffer.strip():
            buffer += "\n\n"
        idx = buffer.find("\n\n")
        while idx != -1:
            frame, buffer = buffer[:idx], buffer[idx + 2 :]
            data_lines = [line[5:].strip() for line in frame.split("\n") if line.startswith("data:")]
            if data_lines:
                data = "\n".join(data_lines).strip()
                if data and data != "[DONE]":
                    try:
                        event = js_json_parse_v8(data)
                    except ValueError as error:
                        raise CodexError(f"Invalid Codex SSE JSON: {error}") from error
                    if isinstance(event, dict):
                        yield event
            idx = buffer.find("\n\n")
        if done:
            return
