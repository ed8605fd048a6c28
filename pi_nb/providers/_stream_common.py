"""Helpers the HTTP providers share: provider error texts, the usage-cost hook, tool-argument JSON.

Error texts keep the provider's own words whatever shape the body has: ``{"error": {"message":
...}}`` (OpenAI, Anthropic), ``{"error": "..."}`` (LM Studio, also sent inside a stream), a JSON
array of error objects (Gemini), ``{"message": ...}`` (Bedrock-style relays), ``{"detail": ...}``
(FastAPI servers such as vLLM). Overflow detection reads these texts, so a body whose message is
lost is an overflow that never compacts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias, cast

from pi_nb._js import js_json_parse
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
    "REDACTED_KEY",
    "CostFunction",
    "StreamProtocolError",
    "apply_cost",
    "block_delta_event",
    "block_start_event",
    "body_message",
    "open_json_stream",
    "parse_streaming_json",
    "parse_tool_arguments",
    "repair_json",
    "sdk_error_text",
    "stream_failure",
]

REDACTED_KEY = "[redacted API key]"

CostFunction = Callable[[Usage], Mapping[str, float]]
"""Given a finished usage dict, return its cost dict ``{input, output, cacheRead, cacheWrite, total}``."""

_MAX_BODY_CHARS = 4000


def body_message(body: Any, _depth: int = 0) -> str | None:
    """The provider's error message inside an SDK error body of any of the known shapes."""
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
