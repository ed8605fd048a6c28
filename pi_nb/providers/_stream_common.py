"""Helpers the HTTP providers share: provider error texts, the usage-cost hook, tool-argument JSON,
the OpenAI JavaScript SDK's SSE stream.

Provider error texts are pi-ai's ``utils/error-body`` (:func:`normalize_provider_error`,
:func:`format_provider_error`), read from a JavaScript-SDK-shaped error (:class:`JsError`) that
:func:`js_shaped_error_from` builds out of a Python SDK exception exactly as the JavaScript
``openai`` / ``@anthropic-ai/sdk`` packages build theirs from the same HTTP response. A stream
read as the JavaScript SDK reads it (:func:`iter_openai_sse_json`) fails where it would, with the
same texts (V8's ``JSON.parse`` messages for a ``data:`` line that is not JSON).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypedDict, cast

from pi_nb._js import (
    UNDEFINED,
    Undefined,
    js_json_parse,
    js_json_parse_v8,
    js_stringify,
    js_trim,
    js_truthy,
    utf16_len,
)
from pi_nb.messages import (
    AssistantMessage,
    TextDeltaEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
    Usage,
    UsageCost,
)
from pi_nb.providers.base import REDACTED_KEY, CostFunction

__all__ = [
    "MAX_PROVIDER_ERROR_BODY_CHARS",
    "REDACTED_KEY",
    "CostFunction",
    "JsApiError",
    "JsError",
    "NormalizedProviderError",
    "api_error_message",
    "apply_cost",
    "block_delta_event",
    "block_start_event",
    "format_provider_error",
    "iter_openai_sse_json",
    "js_api_error_message",
    "js_sdk_sse_error",
    "js_sdk_status_error",
    "js_sdk_stream_error",
    "js_shaped_error_from",
    "js_string",
    "normalize_provider_error",
    "openrouter_raw_metadata",
    "parse_json_with_repair",
    "parse_streaming_json",
    "parse_tool_arguments",
    "redact_key",
    "repair_json",
    "require_httpx",
    "require_openai",
    "safe_json_stringify",
    "truncate_error_text",
]


def require_openai(provider: str) -> Any:
    """The ``openai`` SDK module; a :class:`~pi_nb.errors.MissingDependencyError` naming the extra
    that installs it otherwise."""
    try:
        import openai
    except ImportError as error:
        from pi_nb.errors import MissingDependencyError

        raise MissingDependencyError(
            f"The {provider} provider needs the openai SDK: pip install 'pi_nb[openai]'"
        ) from error
    return openai


def require_httpx(provider: str, extra: str) -> Any:
    """The ``httpx`` module, for a provider that sends its requests over plain httpx; a
    :class:`~pi_nb.errors.MissingDependencyError` naming the extra that installs it otherwise."""
    try:
        import httpx
    except ImportError as error:
        from pi_nb.errors import MissingDependencyError

        raise MissingDependencyError(
            f"The {provider} provider sends its requests with httpx: pip install 'pi_nb[{extra}]'"
        ) from error
    return httpx


def redact_key(text: str, secret: str | None) -> str:
    """``text`` with the API key the request used replaced by ``[redacted API key]`` (a server or
    proxy may echo it in its error; the text is stored in the session and shown)."""
    return text.replace(secret, REDACTED_KEY) if secret else text


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


def parse_json_with_repair(text: str) -> Any:
    """pi-ai's ``parseJsonWithRepair``: ``JSON.parse``, else ``JSON.parse`` of the text with its
    string literals repaired; what fails raises :class:`~pi_nb._js.JsSyntaxError` with V8's text."""
    try:
        return js_json_parse_v8(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired != text:
            return js_json_parse_v8(repaired)
        raise


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


def js_string(value: Any) -> str:
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
        return ",".join("" if x is None or isinstance(x, Undefined) else js_string(x) for x in value)
    if isinstance(value, JsError):
        return f"Error: {value.message}" if value.message else "Error"
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return "[object Object]"


def safe_json_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` (compact, JavaScript key order and numbers, non-ASCII kept), or
    ``String(value)`` where it gives ``undefined`` or throws."""
    if isinstance(value, Undefined) or callable(value):
        return js_string(value)
    try:
        return js_stringify(value)
    except (TypeError, ValueError, RecursionError):
        return js_string(value)


def _utf16_slice(text: str, end: int) -> str:
    units = text.encode("utf-16-le", "surrogatepass")
    return units[: 2 * end].decode("utf-16-le", "surrogatepass")


def truncate_error_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` UTF-16 code units, with ``... [truncated N chars]`` after it.

    A text that must be cut is redacted first (pi_nb's secrets, :mod:`pi_nb.redaction`), so the cut
    never keeps the start of a key; a text short enough is returned as is (the provider then
    redacts the request's own key, and the agent every other secret)."""
    length = utf16_len(text)
    if length <= max_chars:
        return text
    from pi_nb.redaction import redact, redact_cut_tail

    text = redact(text)
    length = utf16_len(text)
    if length <= max_chars:
        return text
    return f"{redact_cut_tail(_utf16_slice(text, max_chars))}... [truncated {length - max_chars} chars]"


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
            return f"{prefix} ({js_string(status)}): {message}"
        return message
    if prefix is not None:
        return f"{prefix} ({js_string(status)}): {body}"
    return f"{js_string(status)}: {body}"


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
    return js_string(raw) if js_truthy(raw) else None


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
    if isinstance(exc, JsApiError):
        return exc.js
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


class JsApiError(Exception):
    """An error as the OpenAI JavaScript SDK throws it (``APIError``): :attr:`js` holds the fields
    pi-ai's error text is made from, :attr:`headers` the response headers (read by the retry policy)."""

    def __init__(self, js: JsError, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(js.message)
        self.js = js
        self.status: Any = js.status if isinstance(js.status, int) else None
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.message = js.message


def js_sdk_sse_error(error: Any, message: str | None, headers: Mapping[str, str] | None) -> JsApiError:
    """``new APIError(undefined, error, message, headers)``: an error reported inside the stream."""
    if message is None:
        return JsApiError(js_sdk_stream_error(error), headers)
    return JsApiError(JsError(message=js_api_error_message(None, error, message), error=error), headers)


# --- the OpenAI JS SDK's SSE stream ----------------------------------------------------------------------------------------


class OpenAISseReader:
    """The OpenAI JavaScript SDK's SSE reading: lines end at ``\\n``, ``\\r\\n`` or ``\\r``; an event
    is dispatched at its blank line only (an event the body ends without one is dropped)."""

    def __init__(self) -> None:
        self.buffer = b""
        self.event: str | None = None
        self.data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        self.buffer += chunk
        events: list[tuple[str | None, str]] = []
        while True:
            match = re.search(rb"\r\n|\r|\n", self.buffer)
            if match is None:
                break
            if match.group() == b"\r" and match.end() == len(self.buffer):
                break  # a \r at the end may be the first half of \r\n
            line = self.buffer[: match.start()].decode("utf-8", "replace")
            self.buffer = self.buffer[match.end() :]
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def flush(self) -> list[tuple[str | None, str]]:
        if not self.buffer:
            return []
        # the rest holds no line end but perhaps a last \r: it is one last line (the JS decoder
        # adds a \n), never a blank line that would dispatch an event
        rest, self.buffer = self.buffer, b""
        if rest.endswith(b"\r"):
            rest = rest[:-1]
        event = self._line(rest.decode("utf-8", "replace"))
        return [event] if event is not None else []

    def _line(self, line: str) -> tuple[str | None, str] | None:
        if not line:
            if self.event is None and not self.data:
                return None
            out = (self.event, "\n".join(self.data))
            self.event, self.data = None, []
            return out
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
        return None


async def iter_openai_sse_json(response: Any) -> AsyncIterator[Any]:
    """The JSON events of an OpenAI stream (the JS SDK's ``Stream.fromSSEResponse``, for Chat
    Completions and Responses): ``[DONE]`` ends it, a ``data:`` line that is not JSON fails with
    V8's ``JSON.parse`` text, an ``error`` member (or a ``thread.*`` ``error`` event) with the
    SDK's ``APIError``."""
    reader = OpenAISseReader()
    done = False

    def handle(event: str | None, data: str) -> tuple[bool, Any]:
        if data.startswith("[DONE]"):
            return True, None
        parsed = js_json_parse_v8(data)  # the SDK's JSON.parse: V8's SyntaxError text
        if event is None or not event.startswith("thread."):
            if isinstance(parsed, dict) and js_truthy(parsed.get("error")):
                raise js_sdk_sse_error(parsed["error"], None, dict(response.headers))
        elif event == "error":
            inner = parsed.get("error") if isinstance(parsed, dict) else None
            message = parsed.get("message") if isinstance(parsed, dict) else None
            raise js_sdk_sse_error(inner, message, None)
        return False, parsed

    async for chunk in response.aiter_bytes():
        for event, data in reader.feed(chunk):
            if done:
                continue
            done, parsed = handle(event, data)
            if not done:
                yield parsed
    for event, data in reader.flush():
        if done:
            continue
        done, parsed = handle(event, data)
        if not done:
            yield parsed


def _is_httpx_error(exc: BaseException) -> bool:
    return any(cls.__module__.split(".", 1)[0] in ("httpx", "httpx2") for cls in type(exc).__mro__[:-2])


def _response_content(response: Any) -> bytes:
    try:
        content = response.content
    except Exception:  # a response closed before it was read: no body
        return b""
    return content if isinstance(content, bytes) else b""
