"""Helpers the HTTP providers share: provider error texts, the usage-cost hook, tool-argument JSON.

Provider error texts are pi-ai's ``utils/error-body`` (:func:`normalize_provider_error`,
:func:`format_provider_error`), read from a JavaScript-SDK-shaped error (:class:`JsError`) that
:func:`js_shaped_error_from` builds out of a Python SDK exception exactly as the JavaScript
``openai`` / ``@anthropic-ai/sdk`` packages build theirs from the same HTTP response.

The older helpers below (:func:`body_message`, :func:`sdk_error_text`) are superseded by that
port and stay only until every API helper has switched. Their rules:

Error texts keep the provider's own words whatever shape the body has: ``{"error": {"message":
...}}`` (OpenAI, Anthropic), ``{"error": "..."}`` (LM Studio, also sent inside a stream), a JSON
array of error objects (Gemini), ``{"message": ...}`` (Bedrock-style relays), ``{"detail": ...}``
(FastAPI servers such as vLLM). Overflow detection reads these texts, so a body whose message is
lost is an overflow that never compacts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypedDict, cast

from pi_nb._js import UNDEFINED, Undefined, js_json_parse, js_stringify, js_trim, js_truthy, utf16_len
from pi_nb.messages import (
    AssistantMessage,
    ErrorReason,
    TextDeltaEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
    Usage,
    UsageCost,
)
from pi_nb.providers.base import SupportsAbort

__all__ = [
    "MAX_PROVIDER_ERROR_BODY_CHARS",
    "REDACTED_KEY",
    "CostFunction",
    "JsError",
    "NormalizedProviderError",
    "StreamProtocolError",
    "api_error_message",
    "apply_cost",
    "block_delta_event",
    "block_start_event",
    "body_message",
    "format_provider_error",
    "js_api_error_message",
    "js_sdk_status_error",
    "js_sdk_stream_error",
    "js_shaped_error_from",
    "normalize_provider_error",
    "open_json_stream",
    "openrouter_raw_metadata",
    "parse_streaming_json",
    "parse_tool_arguments",
    "repair_json",
    "safe_json_stringify",
    "sdk_error_text",
    "stream_failure",
    "truncate_error_text",
]

REDACTED_KEY = "[redacted API key]"

CostFunction = Callable[[Usage], Mapping[str, float]]
"""Given a finished usage dict, return its cost dict ``{input, output, cacheRead, cacheWrite, total}``."""

_MAX_BODY_CHARS = 4000


def body_message(body: Any, _depth: int = 0) -> str | None:
    """The provider's error message inside an SDK error body of any of the known shapes.

    Superseded by :func:`normalize_provider_error` (kept for its callers until they switch).
    """
    if _depth > 6 or body is None:
        return None
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        if not text:
            return None
        if text[:1] in "[{":
            try:
                return body_message(json.loads(text), _depth + 1) or text[:_MAX_BODY_CHARS]
            except ValueError:
                pass
        return text[:_MAX_BODY_CHARS]
    if isinstance(body, list):
        for item in body:
            found = body_message(item, _depth + 1)
            if found:
                return found
        return None
    if isinstance(body, Mapping):
        message: str | None = None
        for key in ("error", "message", "detail", "msg"):
            if key in body:
                message = body_message(body[key], _depth + 1)
                if message:
                    break
        metadata = body.get("metadata")
        raw = metadata.get("raw") if isinstance(metadata, Mapping) else None
        if isinstance(raw, str) and raw.strip() and raw not in (message or ""):
            # OpenRouter puts the upstream provider's own text in error.metadata.raw
            message = f"{message}\n{raw}" if message else raw
        return message
    return None


class StreamProtocolError(Exception):
    """A stream that broke its provider's event protocol, or an error reported inside it: its text
    is the ``errorMessage`` as is."""


def stream_failure(
    error: BaseException, signal: SupportsAbort | None, secret: str | None
) -> tuple[str, ErrorReason]:
    """``(errorMessage, stopReason)`` of a provider stream that raised: ``aborted`` when the call's
    signal fired, else the protocol error's own text or the SDK error's (the key redacted)."""
    if signal is not None and signal.aborted:
        return "Request was aborted", "aborted"
    if isinstance(error, StreamProtocolError):
        return str(error), "error"
    return sdk_error_text(error, secret), "error"


def sdk_error_text(error: BaseException, secret: str | None = None) -> str:
    """An exception from a provider SDK as an ``errorMessage``: ``"{status} {provider message}"``.

    Superseded by ``format_provider_error(normalize_provider_error(js_shaped_error_from(error)))``
    (kept for its callers until they switch).

    ``secret`` (the key the request used) is replaced by ``[redacted API key]`` wherever the text
    repeats it. Errors raised inside a stream carry no status: the text is the message alone.
    """
    status = getattr(error, "status_code", None)
    message = body_message(getattr(error, "body", None))
    text = message or str(error) or type(error).__name__
    if secret:
        text = text.replace(secret, REDACTED_KEY)
    # an error event inside a 200 stream carries the stream's status: not worth repeating
    return f"{status} {text}" if isinstance(status, int) and status >= 300 else text


def apply_cost(usage: Usage, cost_function: CostFunction | None) -> Usage:
    """Fill ``usage["cost"]`` from ``cost_function`` (the hook where a usage is finalised)."""
    if cost_function is not None:
        # the hook's mapping is copied as it is: calculate_cost gives the five UsageCost numbers
        usage["cost"] = cast(UsageCost, dict(cost_function(usage)))
    return usage


BlockStart: TypeAlias = Literal["text_start", "thinking_start", "toolcall_start"]


def block_start_event(
    kind: BlockStart, index: int, partial: AssistantMessage
) -> TextStartEvent | ThinkingStartEvent | ToolCallStartEvent:
    """``{type: kind, contentIndex: index, partial}``: the event that opens a content block."""
    if kind == "text_start":
        return {"type": "text_start", "contentIndex": index, "partial": partial}
    if kind == "thinking_start":
        return {"type": "thinking_start", "contentIndex": index, "partial": partial}
    return {"type": "toolcall_start", "contentIndex": index, "partial": partial}


BlockDelta: TypeAlias = Literal["text_delta", "thinking_delta", "toolcall_delta"]


def block_delta_event(
    kind: BlockDelta, index: int, delta: str, partial: AssistantMessage
) -> TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent:
    """``{type: kind, contentIndex: index, delta, partial}``: the event that streams into a block."""
    if kind == "text_delta":
        return {"type": "text_delta", "contentIndex": index, "delta": delta, "partial": partial}
    if kind == "thinking_delta":
        return {"type": "thinking_delta", "contentIndex": index, "delta": delta, "partial": partial}
    return {"type": "toolcall_delta", "contentIndex": index, "delta": delta, "partial": partial}


class _Partial(Exception):
    """The JSON text ends before the value does."""


class _Malformed(Exception):
    """The JSON text is not JSON."""


_js_json_parse = js_json_parse


_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX = frozenset("0123456789abcdefABCDEF")


def repair_json(text: str) -> str:
    """pi-ai's ``repairJson``: escape raw control characters inside strings, double a backslash
    before an invalid escape."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
            i += 1
            continue
        if ch == '"':
            out.append(ch)
            in_string = False
            i += 1
            continue
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < n else None
            if nxt is None:
                out.append("\\\\")
                i += 1
                continue
            if nxt == "u" and len(text[i + 2 : i + 6]) == 4 and all(c in _HEX for c in text[i + 2 : i + 6]):
                out.append("\\u" + text[i + 2 : i + 6])
                i += 6
                continue
            if nxt in _VALID_ESCAPES:
                out.append("\\" + nxt)
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        if ord(ch) <= 0x1F:
            out.append(
                {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\u{ord(ch):04x}")
            )
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _partial_parse(source: str) -> Any:
    """The ``partial-json`` package's ``parse(text, Allow.ALL)``: the value a truncated JSON text
    has so far (open strings, arrays and objects closed where the text stops)."""
    if not source.strip():
        raise _Malformed("empty")
    text = source.strip()
    n = len(text)
    pos = 0

    def skip_blank() -> None:
        nonlocal pos
        while pos < n and text[pos] in " \n\r\t":
            pos += 1

    def parse_any() -> Any:
        nonlocal pos
        skip_blank()
        if pos >= n:
            raise _Partial("Unexpected end of input")
        ch = text[pos]
        if ch == '"':
            return parse_str()
        if ch == "{":
            return parse_obj()
        if ch == "[":
            return parse_arr()
        rest = text[pos:]
        atoms: tuple[tuple[str, Any], ...] = (
            ("null", None),
            ("true", True),
            ("false", False),
            ("Infinity", float("inf")),
            ("NaN", float("nan")),
        )
        for word, value in atoms:
            if rest.startswith(word) or (len(rest) < len(word) and word.startswith(rest)):
                pos += len(word)
                return value
        if rest.startswith("-Infinity") or (1 < len(rest) < 9 and "-Infinity".startswith(rest)):
            pos += 9
            return float("-inf")
        return parse_num()

    def parse_str() -> Any:
        nonlocal pos
        start = pos
        escape = False
        pos += 1
        while pos < n and (text[pos] != '"' or (escape and text[pos - 1] == "\\")):
            escape = (not escape) if text[pos] == "\\" else False
            pos += 1
        if pos < n and text[pos] == '"':
            pos += 1
            try:
                return _js_json_parse(text[start : pos - int(escape)])
            except ValueError as error:
                raise _Malformed(str(error)) from error
        try:
            return _js_json_parse(text[start : pos - int(escape)] + '"')
        except ValueError:
            return _js_json_parse(text[start : text.rfind("\\")] + '"')

    def parse_obj() -> dict[str, Any]:
        nonlocal pos
        pos += 1
        skip_blank()
        obj: dict[str, Any] = {}
        try:
            while pos >= n or text[pos] != "}":
                skip_blank()
                if pos >= n:
                    return obj
                key = parse_str()
                skip_blank()
                pos += 1  # the colon
                try:
                    obj[key] = parse_any()
                except (_Partial, _Malformed, ValueError, IndexError):
                    return obj
                skip_blank()
                if pos < n and text[pos] == ",":
                    pos += 1
        except (_Partial, _Malformed, ValueError, IndexError, TypeError):
            return obj
        pos += 1
        return obj

    def parse_arr() -> list[Any]:
        nonlocal pos
        pos += 1
        arr: list[Any] = []
        try:
            while pos >= n or text[pos] != "]":
                if pos >= n:
                    raise _Partial("Expected ']'")
                arr.append(parse_any())
                skip_blank()
                if pos < n and text[pos] == ",":
                    pos += 1
        except (_Partial, _Malformed, ValueError, IndexError):
            return arr
        pos += 1
        return arr

    def parse_num() -> Any:
        nonlocal pos
        if pos == 0:
            if text == "-":
                raise _Malformed("Not sure what '-' is")
            try:
                return _js_json_parse(text)
            except ValueError as error:
                try:
                    return _js_json_parse(text[: text.rfind("e")])
                except ValueError:
                    raise _Malformed(str(error)) from error
        start = pos
        if text[pos] == "-":
            pos += 1
        while pos < n and text[pos] not in ",]}":
            pos += 1
        try:
            return _js_json_parse(text[start:pos])
        except ValueError as error:
            if text[start:pos] == "-":
                raise _Partial("Not sure what '-' is") from error
            try:
                return _js_json_parse(text[start : text.rfind("e")])
            except ValueError as inner:
                raise _Malformed(str(inner)) from inner

    return parse_any()


def parse_streaming_json(text: str | None) -> Any:
    """pi-ai's ``parseStreamingJson``: a possibly incomplete JSON text as the value it has so far
    (``{}`` when empty or hopeless). Tool-call arguments are shown with it while they stream."""
    if not text or not text.strip():
        return {}
    try:
        return _js_json_parse(text)
    except RecursionError:
        return {}
    except ValueError:
        repaired = repair_json(text)
        if repaired != text:
            try:
                return _js_json_parse(repaired)
            except (ValueError, RecursionError):
                pass
    for candidate in (text, repair_json(text)):
        try:
            result = _partial_parse(candidate)
        except (_Partial, _Malformed, ValueError, IndexError, TypeError, RecursionError):
            continue
        return {} if result is None else result
    return {}


def parse_tool_arguments(raw: str | None) -> dict[str, Any]:  # tool arguments: open JSON
    """Tool-call arguments from the streamed JSON text (:func:`parse_streaming_json`); anything that
    is not a JSON object counts as ``{}`` (a tool takes named arguments)."""
    value = parse_streaming_json(raw)
    return value if isinstance(value, dict) else {}


async def open_json_stream(openai: Any, client: Any, path: str, body: dict[str, Any]) -> Any:
    # ``body`` is the provider's wire request and each event the server's JSON: open JSON, not modelled
    """POST a streaming request through the ``openai`` SDK and get each SSE event as the JSON the
    server sent (a dict in the server's key order, unknown fields kept), not as typed models.

    The SDK still does everything else (auth, retries, HTTP errors, ``{"error": ...}`` events
    raised inside a stream). The key order matters: reasoning items and ``reasoning_details`` are
    kept as JSON text (a thinking signature) exactly as pi-ai keeps them.
    """
    return await client.post(
        path, cast_to=object, body=body, stream=True, stream_cls=openai.AsyncStream[object]
    )


# ---------------------------------------------------------------- pi-ai utils/error-body

MAX_PROVIDER_ERROR_BODY_CHARS = 4000
"""Longest provider body (UTF-16 code units) kept in an error text; the rest is counted."""


@dataclass
class JsError:
    """A thrown JavaScript ``Error`` with the fields pi-ai's error normaliser reads.

    ``UNDEFINED`` marks a field the JavaScript object does not have. ``status``/``error`` are the
    ``openai`` / ``@anthropic-ai/sdk`` ``APIError`` fields (HTTP status; the parsed body or, for
    ``openai``, its ``error`` member); ``status_code``/``body`` are Mistral's; ``metadata`` and
    ``response`` are AWS's ``$metadata`` / ``$response``.
    """

    message: str
    status: Any = UNDEFINED
    error: Any = UNDEFINED
    body: Any = UNDEFINED
    status_code: Any = UNDEFINED
    metadata: Any = UNDEFINED
    response: Any = UNDEFINED


class NormalizedProviderError(TypedDict, total=False):
    """pi-ai's ``NormalizedProviderError``; ``status``/``body`` are absent when not found."""

    status: int | float
    body: str
    message: str
    messageCarriesBody: bool


def _is_js_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _js_string(value: Any) -> str:
    """``String(value)`` for the values a JSON-ish object can hold."""
    if isinstance(value, Undefined):
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_js_number(value):
        from pi_nb._js import js_number_to_string

        return js_number_to_string(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join("" if x is None or isinstance(x, Undefined) else _js_string(x) for x in value)
    if isinstance(value, JsError):
        return f"Error: {value.message}" if value.message else "Error"
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return "[object Object]"


def safe_json_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` (compact, JavaScript key order and numbers, non-ASCII kept), or
    ``String(value)`` where it gives ``undefined`` or throws."""
    if isinstance(value, Undefined) or callable(value):
        return _js_string(value)
    try:
        return js_stringify(value)
    except (TypeError, ValueError, RecursionError):
        return _js_string(value)


def _utf16_slice(text: str, end: int) -> str:
    units = text.encode("utf-16-le", "surrogatepass")
    return units[: 2 * end].decode("utf-16-le", "surrogatepass")


def truncate_error_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` UTF-16 code units, with ``... [truncated N chars]`` after it."""
    length = utf16_len(text)
    if length <= max_chars:
        return text
    return f"{_utf16_slice(text, max_chars)}... [truncated {length - max_chars} chars]"


def _is_plain_non_empty_object(value: object) -> bool:
    return isinstance(value, dict) and len(value) > 0


def _extract_status(error: JsError) -> int | float | None:
    if _is_js_number(error.status_code):
        return error.status_code  # type: ignore[no-any-return]
    if _is_js_number(error.status):
        return error.status  # type: ignore[no-any-return]
    metadata = error.metadata
    if isinstance(metadata, Mapping) and _is_js_number(metadata.get("httpStatusCode")):
        return metadata["httpStatusCode"]  # type: ignore[no-any-return]
    response = error.response
    if isinstance(response, Mapping) and _is_js_number(response.get("statusCode")):
        return response["statusCode"]  # type: ignore[no-any-return]
    return None


def _pick_body_text(error: JsError) -> str | None:
    if isinstance(error.body, str):
        return error.body
    if _is_plain_non_empty_object(error.error):
        return safe_json_stringify(error.error)
    response = error.response
    response_body = response.get("body") if isinstance(response, Mapping) else None
    if isinstance(response_body, str):
        return response_body
    if _is_plain_non_empty_object(response_body):
        return safe_json_stringify(response_body)
    return None


def _extract_body(error: JsError) -> str | None:
    text = _pick_body_text(error)
    if text is None:
        return None
    trimmed = js_trim(text)
    if not trimmed:
        return None
    return truncate_error_text(trimmed, MAX_PROVIDER_ERROR_BODY_CHARS)


def normalize_provider_error(error: object) -> NormalizedProviderError:
    """pi-ai's ``normalizeProviderError``: status, body (trimmed, at most 4000 code units plus the
    truncation note) and message of a thrown error.

    A :class:`JsError` is read as pi-ai reads the JavaScript error; any other exception is first
    turned into one by :func:`js_shaped_error_from`; a value that is not an exception is a
    non-``Error`` throw: its message is its JSON text.
    """
    if isinstance(error, BaseException):
        error = js_shaped_error_from(error)
    if not isinstance(error, JsError):
        return {"message": safe_json_stringify(error), "messageCarriesBody": False}
    status = _extract_status(error)
    body = _extract_body(error)
    out: NormalizedProviderError = {}
    if status is not None:
        out["status"] = status
    if body is not None:
        out["body"] = body
    out["message"] = error.message
    out["messageCarriesBody"] = body is None or body in error.message
    return out


def format_provider_error(norm: NormalizedProviderError, prefix: str | None = None) -> str:
    """pi-ai's ``formatProviderError``: the message as is when it already carries the body (or no
    status/body was found; ``"<prefix> (<status>): <message>"`` with a prefix and a status), else
    ``"<status>: <body>"`` / ``"<prefix> (<status>): <body>"``."""
    status = norm.get("status")
    body = norm.get("body")
    message = norm["message"]
    if norm["messageCarriesBody"] or status is None or body is None:
        if prefix is not None and status is not None:
            return f"{prefix} ({_js_string(status)}): {message}"
        return message
    if prefix is not None:
        return f"{prefix} ({_js_string(status)}): {body}"
    return f"{_js_string(status)}: {body}"


def openrouter_raw_metadata(error: object) -> str | None:
    """``error.error.metadata.raw`` as ``String(...)`` when truthy: the upstream provider's own text
    OpenRouter adds to an error (pi-ai's openai-completions appends it to the errorMessage when the
    message does not already contain it)."""
    if isinstance(error, BaseException):
        error = js_shaped_error_from(error)
    if not isinstance(error, JsError) or not isinstance(error.error, Mapping):
        return None
    metadata = error.error.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, Mapping) else None
    return _js_string(raw) if js_truthy(raw) else None


def api_error_message(api: str, error: object) -> str:
    """The ``errorMessage`` pi-ai's stream function for ``api`` writes when its SDK call throws.

    ``openai-completions``: :func:`format_provider_error` of the normalised error, then OpenRouter's
    ``error.metadata.raw`` on a new line unless the text already holds it; ``openai-responses``:
    the same with the prefix ``OpenAI API error``; ``anthropic-messages`` (and any other api):
    the error's own message (``JSON.stringify`` of a non-``Error`` throw).
    """
    if isinstance(error, BaseException):
        error = js_shaped_error_from(error)
    if api == "openai-completions":
        text = format_provider_error(normalize_provider_error(error))
        raw = openrouter_raw_metadata(error)
        if raw and raw not in text:
            text += f"\n{raw}"
        return text
    if api == "openai-responses":
        return format_provider_error(normalize_provider_error(error), "OpenAI API error")
    if isinstance(error, JsError):
        return error.message
    return safe_json_stringify(error)


# ------------------------------------------- Python SDK exceptions as the JavaScript SDKs' errors


def js_api_error_message(status: int | None, error: Any, message: str | None) -> str:
    """``APIError.makeMessage`` of the JavaScript ``openai`` and ``@anthropic-ai/sdk`` (identical).

    ``msg`` is ``error.message`` (JSON text when not a string) if truthy, else the JSON text of a
    truthy ``error``, else ``message``. Then ``"<status> <msg>"``, ``"<status> status code (no
    body)"``, ``msg``, or ``"(no status code or body)"``.
    """
    inner = error.get("message") if isinstance(error, Mapping) else UNDEFINED
    msg: Any
    if js_truthy(inner):
        msg = inner if isinstance(inner, str) else safe_json_stringify(inner)
    elif js_truthy(error) and not isinstance(error, Undefined):
        msg = safe_json_stringify(error)
    else:
        msg = message
    if status and msg:
        return f"{status} {msg}"
    if status:
        return f"{status} status code (no body)"
    if msg:
        return str(msg)
    return "(no status code or body)"


def _js_safe_json(text: str) -> Any:
    """The SDKs' ``safeJSON``: ``JSON.parse(text)``, or ``UNDEFINED`` where it throws."""
    try:
        return js_json_parse(text)
    except (ValueError, RecursionError):
        return UNDEFINED


def _response_text(content: bytes) -> str:
    """``await response.text()``: UTF-8 with U+FFFD for bad bytes, a leading BOM dropped."""
    text = content.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def _sdk_family(exc: BaseException) -> str | None:
    for cls in type(exc).__mro__:
        root = cls.__module__.split(".", 1)[0]
        if root in ("openai", "anthropic"):
            return root
    return None


def js_sdk_status_error(family: Literal["openai", "anthropic"], status: int, content: bytes | str) -> JsError:
    """The ``APIError`` the JavaScript SDK (``family``) throws for an HTTP error response.

    As the SDKs' ``makeRequest`` does: ``errText = await response.text()`` (``content`` decoded
    as UTF-8 with U+FFFD, BOM dropped); ``errJSON = safeJSON(errText)``; ``errMessage = errJSON ?
    undefined : errText``; then ``APIError.generate(status, errJSON, errMessage)``, where
    ``error`` is ``errJSON?.error`` for ``openai`` and ``errJSON`` for ``@anthropic-ai/sdk``.
    For providers that send over plain httpx, with the response's status and raw body.
    """
    text = content if isinstance(content, str) else _response_text(content)
    parsed = _js_safe_json(text)
    message = None if js_truthy(parsed) and not isinstance(parsed, Undefined) else text
    if family == "openai":
        # openai: error = errorResponse?.["error"]
        error = parsed.get("error", UNDEFINED) if isinstance(parsed, dict) else UNDEFINED
    else:
        # anthropic: error = errorResponse (the whole parsed body)
        error = parsed
    return JsError(message=js_api_error_message(status, error, message), status=status, error=error)


def js_sdk_stream_error(error: Any) -> JsError:
    """``new APIError(undefined, error, undefined)``: an error event inside a stream, as the
    JavaScript SDKs throw it (``openai``: the event's ``data.error``; ``@anthropic-ai/sdk``: the
    event's parsed data, or its text when not JSON). No status; the message is ``error.message``
    or the JSON text of ``error``."""
    return JsError(message=js_api_error_message(None, error, None), error=error)


def js_shaped_error_from(exc: BaseException) -> JsError:
    """The error the JavaScript SDK would have thrown where a Python SDK raised ``exc``.

    - ``APIStatusError`` (an HTTP status >= 400): rebuilt from the raw response bytes as the JS
      client does: ``status``; ``error`` is the parsed body (``@anthropic-ai/sdk``) or its
      ``error`` member (``openai``); ``message`` is ``makeMessage(status, error, text if the body
      is not truthy JSON)``, e.g. ``400 Invalid model``, ``400 {"detail":"x"}``,
      ``502 <html>...``, ``500 status code (no body)``.
    - An error raised inside a stream (``openai.APIError`` with the event's ``error`` object;
      ``anthropic`` raises an ``APIStatusError`` with the 200 stream response, whose ``body`` is
      the event's parsed data, or its text when not JSON): no status; ``error`` is that object and
      ``message`` its ``makeMessage`` (``error.message``, else the object's JSON text).
    - ``APITimeoutError``: ``Request timed out.``; ``APIConnectionError``: ``Connection error.``
      (or the SDK's own message); user abort: ``Request was aborted.``.
    - ``httpx`` errors (providers that send over plain httpx): ``HTTPStatusError`` is read like an
      ``openai`` status error; a timeout is ``Request timed out.``; a failed connection
      (``ConnectError``, ``ProxyError``...) is ``Connection error.``; other transport errors keep
      their text.
    - Anything else: an ``Error`` whose message is ``str(exc)`` (the class name when empty).
    """
    if isinstance(exc, JsError):  # pragma: no cover - a JsError is not an exception
        return exc
    family = _sdk_family(exc)
    if family is not None:
        name = type(exc).__name__
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int) and status >= 300:
            content = _response_content(response)
            return js_sdk_status_error(family, status, content)  # type: ignore[arg-type]
        if isinstance(status, int):
            # anthropic: an `error` event inside a 200 stream (body: the event data)
            return js_sdk_stream_error(getattr(exc, "body", None))
        if "Timeout" in name:
            return JsError(message="Request timed out.")
        if "UserAbort" in name:
            return JsError(message="Request was aborted.")
        if "Connection" in name:
            return JsError(message="Connection error.")
        if hasattr(exc, "body"):
            return js_sdk_stream_error(getattr(exc, "body", None))
    if _is_httpx_error(exc):
        # a provider that sends over plain httpx stands where the JS SDK's fetch is: the SDK turns
        # a failed request into APIConnectionTimeoutError / APIConnectionError
        name = type(exc).__name__
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        if name == "HTTPStatusError" and isinstance(status, int):
            return js_sdk_status_error("openai", status, _response_content(response))
        if "Timeout" in name:
            return JsError(message="Request timed out.")
        if name in ("ConnectError", "NetworkError", "ProxyError", "UnsupportedProtocol"):
            return JsError(message="Connection error.")
    return JsError(message=str(exc) or type(exc).__name__)


def _is_httpx_error(exc: BaseException) -> bool:
    return any(cls.__module__.split(".", 1)[0] in ("httpx", "httpx2") for cls in type(exc).__mro__[:-2])


def _response_content(response: Any) -> bytes:
    try:
        content = response.content
    except Exception:  # a response closed before it was read: no body
        return b""
    return content if isinstance(content, bytes) else b""
