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
from typing import Any

__all__ = [
    "REDACTED_KEY",
    "CostFunction",
    "apply_cost",
    "body_message",
    "open_json_stream",
    "parse_tool_arguments",
    "sdk_error_text",
]

REDACTED_KEY = "[redacted API key]"

CostFunction = Callable[[Mapping[str, Any]], Mapping[str, Any]]
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


def apply_cost(usage: dict[str, Any], cost_function: CostFunction | None) -> dict[str, Any]:
    """Fill ``usage["cost"]`` from ``cost_function`` (the hook where a usage is finalised)."""
    if cost_function is not None:
        usage["cost"] = dict(cost_function(usage))
    return usage


def parse_tool_arguments(raw: str | None) -> dict[str, Any]:
    """Tool-call arguments from the streamed JSON text; ``{}`` when empty, invalid or not an object."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


async def open_json_stream(openai: Any, client: Any, path: str, body: dict[str, Any]) -> Any:
    """POST a streaming request through the ``openai`` SDK and get each SSE event as the JSON the
    server sent (a dict in the server's key order, unknown fields kept), not as typed models.

    The SDK still does everything else (auth, retries, HTTP errors, ``{"error": ...}`` events
    raised inside a stream). The key order matters: reasoning items and ``reasoning_details`` are
    kept as JSON text (a thinking signature) exactly as pi-ai keeps them.
    """
    return await client.post(
        path, cast_to=object, body=body, stream=True, stream_cls=openai.AsyncStream[object]
    )
