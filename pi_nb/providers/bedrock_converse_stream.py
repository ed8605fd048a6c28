"""``BedrockConverseStreamModel``: Amazon Bedrock's models over the Converse API, streamed
(``bedrock-converse-stream``), as pi-ai 0.85.0 runs them.

A port of pi-ai's ``bedrock-converse-stream`` provider, called the way Pi's agent calls it
(``streamSimple``): ``POST {endpoint}/model/{modelId}/converse-stream`` with a JSON body, answered
in AWS's binary event stream.

- Body, in the key order the AWS SDK for JavaScript writes it (its members' schema order):
  ``messages``, ``system`` (the prompt, then a cache point for the Claude models that cache),
  ``inferenceConfig`` (``maxTokens``, ``temperature``), ``toolConfig`` (the tools' specs,
  ``strict`` where the model supports it), ``additionalModelRequestFields`` (Claude's
  ``thinking``: adaptive with an ``output_config.effort`` for Opus 4.6+ / Sonnet 4.6+ / the 5
  family, else a token budget and the interleaved-thinking beta).
- Messages: user text and images (bytes, base64 on the wire), assistant text, tool uses and
  reasoning (text with its signature for Claude, text alone for other models, a redacted payload
  replayed as ``redactedContent``; unsigned Claude thinking is sent as text), consecutive tool
  results in one user turn; blank text dropped or replaced by ``<empty>``; a cache point after the
  last user turn. Tool-call ids keep only ``[a-zA-Z0-9_-]`` (64 at most).
- Stream: text, reasoning (text, signature, redacted payloads joined into the signature as
  base64), tool uses (JSON deltas), stop reasons (``end_turn``/``stop_sequence`` stop,
  ``max_tokens``/``model_context_window_exceeded`` length, ``tool_use``, anything else an error),
  usage with cache reads and writes, its cost.
- Errors: the SDK's exception names turned into pi-ai's prefixes (``Throttling error: ...``,
  ``Validation error: ...``, ``Model stream error: ...``; others by name), the data-retention
  hint, and a ``bedrock_response_failure`` diagnostic (status, error code, request id).
  Throttling and 5xx answers are retried as the AWS SDK's standard strategy retries them
  (3 attempts).

Credentials and region are looked up where Pi, pi-ai and the AWS SDK look. Pi sends nothing
without one of: the model's key, ``$AWS_BEARER_TOKEN_BEDROCK``, ``$AWS_PROFILE``,
``$AWS_ACCESS_KEY_ID`` with ``$AWS_SECRET_ACCESS_KEY``, a container-credentials URI or a
web-identity token file (``Provider is not configured: amazon-bedrock``). A bearer token (the
key, else ``$AWS_BEARER_TOKEN_BEDROCK``) sends ``Authorization: Bearer``; otherwise the request
is signed with SigV4 (``botocore``'s signer, over the headers the JavaScript SDK signs) with
the access keys of the environment (``$AWS_SESSION_TOKEN`` too), or botocore's credential chain
for ``$AWS_PROFILE`` (shared files, SSO, container and instance roles, web identity).
``$AWS_BEDROCK_SKIP_AUTH=1`` signs with dummy keys (a proxy that needs none). Region and
endpoint: an inference-profile ARN's region, else ``$AWS_REGION`` / ``$AWS_DEFAULT_REGION``
(the region's standard endpoint), else, without ``$AWS_PROFILE``, the catalog's endpoint and its
region (``us-east-1`` for an endpoint that names none), else the profile's region.

Needs ``pip install 'pi_nb[bedrock-converse-stream]'`` (botocore); the request goes out over
``httpx``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import random
import re
import uuid
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, cast
from urllib.parse import quote, urlsplit

from pi_nb._js import JsSyntaxError, js_json_parse_v8, js_stringify, js_trim
from pi_nb.messages import ErrorEvent, StopReason, ToolCall
from pi_nb.providers._pi_ai_util import (
    get_json_schema_tool_parameters,
    get_provider_env_value,
    provider_attribution_headers,
    provider_headers_to_record,
    resolve_cache_retention,
    resolve_json_schema_strict_sampling,
    sanitize_surrogates,
)
from pi_nb.providers._stream_common import (
    MAX_PROVIDER_ERROR_BODY_CHARS,
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
    now_ms,
    snapshot_message,
)
from pi_nb.providers.simple_options import (
    adjust_max_tokens_for_thinking,
    build_base_options,
    clamp_max_tokens_to_context,
    clamp_reasoning,
    clamp_thinking_level,
    simple_stream_options,
)
from pi_nb.providers.transform_messages import transform_messages

__all__ = ["BedrockConverseStreamModel", "bedrock_request_body", "convert_messages"]

# Typing: the Converse body, its messages and each streamed event are ``dict[str, Any]``: open
# JSON (AWS's shapes), not modelled here; the pi-ai model dict likewise.

EMPTY_TEXT_PLACEHOLDER = "<empty>"
REDACTED_THINKING_PLACEHOLDER = "[Reasoning redacted]"
DATA_RETENTION_DOCS_URL = "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html"
ERROR_PREFIXES = {
    "InternalServerException": "Internal server error",
    "ModelStreamErrorException": "Model stream error",
    "ValidationException": "Validation error",
    "ThrottlingException": "Throttling error",
    "ServiceUnavailableException": "Service unavailable",
}
_RESERVED_HEADERS = frozenset({"authorization", "host"})
_MAX_DIAGNOSTIC_CHARS = 200
_MAX_ATTEMPTS = 3  # the AWS SDK's standard retry strategy
_THROTTLING_CODES = frozenset(
    {
        "BandwidthLimitExceeded",
        "EC2ThrottledException",
        "LimitExceededException",
        "PriorRequestNotComplete",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "SlowDown",
        "ThrottledException",
        "Throttling",
        "ThrottlingException",
        "TooManyRequestsException",
        "TransactionInProgressException",
    }
)
_TRANSIENT_CODES = frozenset({"TimeoutError", "RequestTimeout", "RequestTimeoutException"})
_TRANSIENT_STATUS = frozenset({500, 502, 503, 504})
# the exceptions ConverseStream's event stream models, and their members in the SDK's order
_STREAM_EXCEPTION_MEMBERS = {
    "internalServerException": ("message",),
    "modelStreamErrorException": ("message", "originalStatusCode", "originalMessage"),
    "validationException": ("message",),
    "throttlingException": ("message",),
    "serviceUnavailableException": ("message",),
}
# what the AWS SDK adds to an error met while it deserializes an answer
_DESERIALIZATION_NOTE = "\n  Deserialization error: to see the raw response, inspect the hidden field {error}.$response on this object."
_SDK_VERSION = "3.1048.0"  # the @aws-sdk/client-bedrock-runtime pi-ai 0.85.0 ships with
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_ENDPOINT_REGION = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_ATOB_SPACE = frozenset("\t\n\f\r ")
_ATOB_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _invocation_id() -> str:
    """The ``amz-sdk-invocation-id`` of one call (its attempts share it): a fresh UUID v4."""
    return str(uuid.uuid4())


async def _retry_sleep(seconds: float) -> None:
    """The pause between attempts (a module attribute so tests can skip it)."""
    await asyncio.sleep(seconds)


class _HttpAnswerError(Exception):
    """An error answer (not inside the stream): its HTTP status and request id."""

    status: int | None
    request_id: str | None


class BedrockServiceError(_HttpAnswerError):
    """An exception of the Bedrock service, as the AWS SDK raises it: ``name`` is its code
    (``ThrottlingException``...), with the HTTP status and request id when it came as an answer
    (not inside the stream)."""

    def __init__(
        self, name: str, message: str, status: int | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        self.status = status
        self.request_id = request_id


class _UnparsedAnswerError(_HttpAnswerError):
    """An error answer whose body is not JSON (a gateway's page): the SDK's parse failure."""

    def __init__(self, status: int, body: str, message: str, request_id: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.message = message
        self.request_id = request_id
        self.name = "SyntaxError"


class _StreamException(Exception):
    """A modeled exception inside the stream (``modelStreamErrorException``...): pi-ai throws the
    SDK's bare object of its members."""

    def __init__(self, members: dict[str, Any]) -> None:
        super().__init__(js_stringify(members))
        self.members = members


class _DeserializationError(_HttpAnswerError):
    """A failure while the SDK deserializes a 200 answer (its first event): the failure's text
    with the SDK's note, the answer's status and request id."""

    def __init__(self, cause: BaseException, status: int, request_id: str | None) -> None:
        text = str(cause.args[0]) if cause.args else ""
        super().__init__(text + _DESERIALIZATION_NOTE)
        self.message = text + _DESERIALIZATION_NOTE
        self.name = str(getattr(cause, "name", "Error"))
        self.status = status
        self.request_id = request_id


class _PayloadError(Exception):
    """An event whose payload is not JSON: ``JSON.parse``'s text (V8's), the payload kept."""

    def __init__(self, message: str, payload: str) -> None:
        super().__init__(message)
        self.message = message
        self.payload = payload


def _parse_payload(text: str) -> Any:
    if not text:
        return {}
    try:
        return js_json_parse_v8(text)
    except JsSyntaxError as error:
        raise _PayloadError(str(error), text) from None


def _checksum_error(data: bytes) -> _PlainError:
    """The AWS SDK's text for a message whose prelude or whole-message CRC32 is wrong
    (``data`` starts with that message)."""
    declared_prelude = int.from_bytes(data[8:12], "big")
    prelude = zlib.crc32(data[:8]) & 0xFFFFFFFF
    if prelude != declared_prelude:
        return _PlainError(
            f"The prelude checksum specified in the message ({declared_prelude}) does not match the"
            f" calculated CRC32 checksum ({prelude})"
        )
    total = int.from_bytes(data[:4], "big")
    declared = int.from_bytes(data[total - 4 : total], "big")
    calculated = zlib.crc32(data[: total - 4]) & 0xFFFFFFFF
    return _PlainError(f"The message checksum ({calculated}) did not match the expected value of {declared}")


def _js_string_or_undefined(value: Any) -> str:
    """JavaScript's ``String(value)`` of a JSON value (``undefined`` when absent)."""
    if value is None:
        return "undefined"
    return value if isinstance(value, str) else js_stringify(value)


class _PlainError(Exception):
    """A JavaScript ``Error`` thrown by pi-ai itself (its message is the text)."""


class _NamedError(Exception):
    """A JavaScript ``Error`` with a ``name`` (an unmodeled stream error, a transport failure)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.message = message


# ---------------------------------------------------------------------------- model matching


def _match_candidates(model: Mapping[str, Any]) -> list[str]:
    values = [str(model.get("id") or "")]
    if model.get("name"):
        values.append(str(model["name"]))
    out = []
    for value in values:
        lower = value.lower()
        out += [lower, re.sub(r"[\s_.:]+", "-", lower)]
    return out


def is_anthropic_claude_model(model: Mapping[str, Any]) -> bool:
    """pi-ai's ``isAnthropicClaudeModel``: the id or name names an Anthropic Claude model."""
    mid = str(model.get("id") or "").lower()
    name = str(model.get("name") or "").lower()
    return (
        "anthropic.claude" in mid
        or "anthropic/claude" in mid
        or "anthropic.claude" in name
        or "anthropic/claude" in name
        or "claude" in name
    )


def supports_adaptive_thinking(model: Mapping[str, Any]) -> bool:
    """Opus 4.6+, Sonnet 4.6 and the 5 family think adaptively (an effort, not a budget)."""
    keys = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "fable-5")
    return any(k in s for s in _match_candidates(model) for k in keys)


def _supports_native_xhigh(model: Mapping[str, Any]) -> bool:
    keys = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "fable-5")
    return any(k in s for s in _match_candidates(model) for k in keys)


def _effort(model: Mapping[str, Any], level: str | None) -> str:
    if level == "xhigh" and _supports_native_xhigh(model):
        return "xhigh"
    mapped = (model.get("thinkingLevelMap") or {}).get(level) if level else None
    if isinstance(mapped, str):
        return mapped
    if level in ("minimal", "low"):
        return "low"
    if level == "medium":
        return "medium"
    return "high"


def supports_prompt_caching(model: Mapping[str, Any]) -> bool:
    """Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5 take cache points; other models only with
    ``$AWS_BEDROCK_FORCE_CACHE=1`` (an application inference profile)."""
    candidates = _match_candidates(model)
    if not any("claude" in s for s in candidates):
        return get_provider_env_value("AWS_BEDROCK_FORCE_CACHE") == "1"
    if any(k in s for s in candidates for k in ("fable-5", "opus-5", "sonnet-5")):
        return True
    if any("-4-" in s for s in candidates):
        return True
    return any("claude-3-7-sonnet" in s or "claude-3-5-haiku" in s for s in candidates)


# ---------------------------------------------------------------------------- request body


def _node_atob(data: str) -> bytes:
    """Node's ``atob`` (forgiving base64, as Node 22 decodes it): ASCII whitespace skipped, at
    most two ``=`` and only at the end, completing a group of four; its ``InvalidCharacterError``
    texts otherwise."""
    text = "".join(ch for ch in data if ch not in _ATOB_SPACE)
    body = text.rstrip("=")
    padding = len(text) - len(body)
    if padding > 2 or any(ch not in _ATOB_ALPHABET for ch in body):
        raise _NamedError("InvalidCharacterError", "Invalid character")
    if len(body) % 4 == 1:
        raise _NamedError("InvalidCharacterError", "The string to be decoded is not correctly encoded.")
    if padding and (len(body) + padding) % 4:
        raise _NamedError("InvalidCharacterError", "Invalid character")
    return base64.b64decode(body + "=" * (-len(body) % 4))


def _atob(data: str) -> bytes | None:
    """:func:`_node_atob`, ``None`` where it throws."""
    try:
        return _node_atob(data)
    except _NamedError:
        return None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _image_block(mime_type: str, data: str) -> dict[str, Any]:
    formats = {
        "image/jpeg": "jpeg",
        "image/jpg": "jpeg",
        "image/png": "png",
        "image/gif": "gif",
        "image/webp": "webp",
    }
    fmt = formats.get(mime_type)
    if fmt is None:
        raise _PlainError(f"Unknown image type: {mime_type}")
    return {"format": fmt, "source": {"bytes": _b64(_node_atob(data))}}


def _cache_point(retention: str) -> dict[str, Any]:
    point: dict[str, Any] = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def _non_blank_text(text: str) -> dict[str, Any] | None:
    sanitized = sanitize_surrogates(text)
    return None if not js_trim(sanitized) else {"text": sanitized}


def _required_text(text: str) -> dict[str, Any]:
    return _non_blank_text(text) or {"text": EMPTY_TEXT_PLACEHOLDER}


def _sanitize_document(value: Any) -> Any:
    if isinstance(value, list):
        return [_sanitize_document(v) for v in value]
    if isinstance(value, dict):
        return {k: _sanitize_document(v) for k, v in value.items() if len(k) > 0}
    return value


def normalize_tool_call_id(call_id: str, *_: Any) -> str:
    """Only ``[a-zA-Z0-9_-]`` (others become ``_``), 64 characters at most."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]


def _tool_result_content(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in content:
        if c.get("type") == "image":
            out.append({"image": _image_block(str(c.get("mimeType")), str(c.get("data") or ""))})
        else:
            block = _non_blank_text(str(c.get("text") or ""))
            if block:
                out.append(block)
    if not out:
        out.append({"text": EMPTY_TEXT_PLACEHOLDER})
    return out


def _tool_result(m: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "toolResult": {
            "toolUseId": m.get("toolCallId"),
            "content": _tool_result_content(m.get("content") or []),
            "status": "error" if m.get("isError") else "success",
        }
    }


def convert_messages(
    messages: Sequence[Mapping[str, Any]], model: Mapping[str, Any], cache_retention: str
) -> list[dict[str, Any]]:
    """pi-ai's ``convertMessages``: Pi messages -> Converse messages (transformed for ``model``)."""
    result: list[dict[str, Any]] = []
    transformed = cast(
        list[dict[str, Any]], transform_messages(cast(Any, list(messages)), model, normalize_tool_call_id)
    )
    signature_ok = is_anthropic_claude_model(model)
    i = 0
    while i < len(transformed):
        m = transformed[i]
        role = m.get("role")
        if role == "user":
            content: list[dict[str, Any]] = []
            if isinstance(m.get("content"), str):
                content.append(_required_text(m["content"]))
            else:
                for c in m.get("content") or []:
                    if c.get("type") == "text":
                        block = _non_blank_text(str(c.get("text") or ""))
                        if block:
                            content.append(block)
                    elif c.get("type") == "image":
                        content.append(
                            {"image": _image_block(str(c.get("mimeType")), str(c.get("data") or ""))}
                        )
                if not content:
                    content.append({"text": EMPTY_TEXT_PLACEHOLDER})
            result.append({"role": "user", "content": content})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            for c in cast(list[dict[str, Any]], m.get("content") or []):
                kind = c.get("type")
                if kind == "text":
                    block = _non_blank_text(str(c.get("text") or ""))
                    if block:
                        blocks.append(block)
                elif kind == "toolCall":
                    blocks.append(
                        {
                            "toolUse": {
                                "toolUseId": c.get("id"),
                                "name": c.get("name"),
                                "input": _sanitize_document(c.get("arguments")),
                            }
                        }
                    )
                elif kind == "thinking":
                    if c.get("redacted"):
                        raw = _atob(c["thinkingSignature"]) if c.get("thinkingSignature") else None
                        if raw:
                            blocks.append({"reasoningContent": {"redactedContent": _b64(raw)}})
                        continue
                    thinking = sanitize_surrogates(str(c.get("thinking") or ""))
                    if not js_trim(thinking):
                        continue
                    if signature_ok:
                        signature = c.get("thinkingSignature")
                        if not signature or not js_trim(str(signature)):
                            blocks.append({"text": thinking})
                        else:
                            blocks.append(
                                {
                                    "reasoningContent": {
                                        "reasoningText": {"text": thinking, "signature": signature}
                                    }
                                }
                            )
                    else:
                        blocks.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            if blocks:
                result.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            results = [_tool_result(m)]
            j = i + 1
            while j < len(transformed) and transformed[j].get("role") == "toolResult":
                results.append(_tool_result(transformed[j]))
                j += 1
            i = j - 1
            result.append({"role": "user", "content": results})
        i += 1
    if cache_retention != "none" and supports_prompt_caching(model) and result:
        last = result[-1]
        if last["role"] == "user" and last["content"]:
            last["content"].append(_cache_point(cache_retention))
    return result


def _system_prompt(
    prompt: str | None, model: Mapping[str, Any], cache_retention: str
) -> list[dict[str, Any]] | None:
    if not prompt:
        return None
    blocks: list[dict[str, Any]] = [{"text": sanitize_surrogates(prompt)}]
    if cache_retention != "none" and supports_prompt_caching(model):
        blocks.append(_cache_point(cache_retention))
    return blocks


def _tool_config(
    tools: Sequence[Mapping[str, Any]] | None, tool_choice: Any, supports_strict_mode: bool
) -> dict[str, Any] | None:
    if not tools or tool_choice == "none":
        return None
    specs = []
    for tool in tools:
        strict = resolve_json_schema_strict_sampling(tool, supports_strict_mode)
        spec: dict[str, Any] = {
            "name": tool.get("name"),
            "inputSchema": {"json": get_json_schema_tool_parameters(tool, strict)},
            "description": tool.get("description"),
        }
        if strict is True:
            spec["strict"] = True
        specs.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": specs}
    if tool_choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif tool_choice == "any":
        config["toolChoice"] = {"any": {}}
    elif isinstance(tool_choice, Mapping) and tool_choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": tool_choice.get("name")}}
    return config


def _is_gov_cloud(model: Mapping[str, Any], region: str | None) -> bool:
    if region and region.lower().startswith("us-gov-"):
        return True
    mid = str(model.get("id") or "").lower()
    return mid.startswith(("us-gov.", "arn:aws-us-gov:"))


def _additional_fields(model: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any] | None:
    level = options.get("reasoning")
    if not level or not model.get("reasoning") or not is_anthropic_claude_model(model):
        return None
    display = (
        None
        if _is_gov_cloud(model, _configured_region(options))
        else (options.get("thinkingDisplay") or "summarized")
    )
    result: dict[str, Any]
    if supports_adaptive_thinking(model):
        thinking: dict[str, Any] = {"type": "adaptive"}
        if display is not None:
            thinking["display"] = display
        result = {"thinking": thinking, "output_config": {"effort": _effort(model, level)}}
    else:
        defaults = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384, "max": 16384}
        budget_level = "high" if level in ("xhigh", "max") else level
        budgets = options.get("thinkingBudgets") or {}
        budget = budgets.get(budget_level)
        thinking = {"type": "enabled", "budget_tokens": budget if budget is not None else defaults[level]}
        if display is not None:
            thinking["display"] = display
        result = {"thinking": thinking}
        if options.get("interleavedThinking", True):
            result["anthropic_beta"] = ["interleaved-thinking-2025-05-14"]
    return result


def bedrock_request_body(
    model: Mapping[str, Any], context: Context, options: Mapping[str, Any]
) -> dict[str, Any]:
    """The ConverseStream body pi-ai's ``stream`` builds for ``options`` (its ``BedrockOptions``),
    keys in the AWS SDK's order (``modelId`` goes in the URL)."""
    retention = resolve_cache_retention(options.get("cacheRetention"))
    max_tokens = options.get("maxTokens")
    if max_tokens is None and is_anthropic_claude_model(model):
        max_tokens = model.get("maxTokens")
    inference: dict[str, Any] = {}
    if max_tokens is not None:
        inference["maxTokens"] = max_tokens
    if options.get("temperature") is not None:
        inference["temperature"] = options["temperature"]
    body: dict[str, Any] = {"messages": convert_messages(list(context.messages), model, retention)}
    system = _system_prompt(context.system_prompt, model, retention)
    if system is not None:
        body["system"] = system
    body["inferenceConfig"] = inference
    strict_mode = bool((model.get("compat") or {}).get("supportsStrictMode", False))
    tool_config = _tool_config(context.tools, options.get("toolChoice"), strict_mode)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    fields = _additional_fields(model, options)
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    if options.get("requestMetadata") is not None:
        body["requestMetadata"] = options["requestMetadata"]
    return body


def _map_stop_reason(reason: str | None) -> tuple[StopReason, str | None]:
    if reason in ("end_turn", "stop_sequence"):
        return "stop", None
    if reason in ("max_tokens", "model_context_window_exceeded"):
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    return "error", (f"Provider stopped with: {reason}" if reason else None)


# ---------------------------------------------------------------------------- region, endpoint, auth


def _configured_region(options: Mapping[str, Any]) -> str | None:
    return (
        options.get("region")
        or get_provider_env_value("AWS_REGION")
        or get_provider_env_value("AWS_DEFAULT_REGION")
    )


def _endpoint_region(base_url: str | None) -> str | None:
    if not base_url:
        return None
    try:
        host = (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return None
    match = _ENDPOINT_REGION.match(host)
    return match.group(1) if match else None


def _profile_region(profile: str | None) -> str | None:
    """The region of the AWS config profile (the SDK's default region chain, after the environment)."""
    import botocore.session

    session = botocore.session.Session(profile=profile) if profile else botocore.session.Session()
    try:
        region = session.get_config_variable("region")
    except Exception:  # a profile that is not in the files: the SDK finds no region either
        return None
    return str(region) if region else None


def _regional_endpoint(region: str) -> str:
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://bedrock-runtime.{region}.{suffix}"


def _user_agent() -> tuple[str, str]:
    """This client as the AWS SDKs name themselves (``user-agent`` and ``x-amz-user-agent``)."""
    import platform

    import botocore

    version = botocore.__version__
    ua = (
        f"Botocore/{version} ua/2.1 os/{platform.system().lower()}#{platform.release()} "
        f"lang/python#{platform.python_version()} md/pi_nb api/bedrock-runtime#{_SDK_VERSION}"
    )
    return ua, f"Botocore/{version}"


def _sdk_credentials(profile: str | None) -> Any:
    """botocore's credential chain (the AWS SDK's default chain), for the profile if one is named."""
    import botocore.exceptions
    import botocore.session

    session = botocore.session.Session(profile=profile) if profile else botocore.session.Session()
    try:
        credentials = session.get_credentials()
    except botocore.exceptions.ProfileNotFound:
        credentials = None
    if credentials is None:
        raise _NamedError("CredentialsProviderError", "Could not load credentials from any providers")
    return credentials.get_frozen_credentials()


_CONFIGURED_BY = (
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_PROFILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


def _auth_configured(api_key: str | None) -> bool:
    """Pi's check before a Bedrock request: a stored key, or one of the AWS settings it looks for
    (without one Pi does not send; the instance role alone does not count)."""
    if api_key or any(get_provider_env_value(name) for name in _CONFIGURED_BY):
        return True
    return bool(
        get_provider_env_value("AWS_ACCESS_KEY_ID") and get_provider_env_value("AWS_SECRET_ACCESS_KEY")
    )


# ---------------------------------------------------------------------------- errors


def _diagnostic_value(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    trimmed = value.strip()
    return trimmed if 0 < len(trimmed) <= _MAX_DIAGNOSTIC_CHARS else None


def format_bedrock_error(error: BaseException) -> str:
    """pi-ai's ``formatBedrockError``: the SDK's message (an answer's body with its status when
    the message does not carry it), prefixed for Bedrock's own exceptions, with the
    data-retention hint when the text is about it."""
    if isinstance(error, _StreamException):
        core = js_stringify(error.members)  # a bare object: its JSON
    elif isinstance(error, _UnparsedAnswerError):
        body = js_trim(error.body)
        body = truncate_error_text(body, MAX_PROVIDER_ERROR_BODY_CHARS) if body else ""
        core = f"{error.status}: {body}" if body and body not in error.message else error.message
    elif isinstance(error, BedrockServiceError | _NamedError | _PlainError | _DeserializationError):
        core = str(error.args[0]) if error.args else ""
    else:
        core = str(error) or type(error).__name__
    hint = (
        f" See {DATA_RETENTION_DOCS_URL} for supported data retention modes."
        if re.search(r"data retention mode", core, re.IGNORECASE)
        else ""
    )
    if isinstance(error, BedrockServiceError):
        return f"{ERROR_PREFIXES.get(error.name, error.name)}: {core}{hint}"
    return f"{core}{hint}"


def _failure_diagnostic(error: BaseException, fallback_request_id: str | None) -> dict[str, Any] | None:
    details: dict[str, Any] = {}
    status = getattr(error, "status", None) if isinstance(error, _HttpAnswerError) else None
    if isinstance(status, int):
        details["status"] = status
    name = getattr(error, "name", None)
    if (
        isinstance(error, BedrockServiceError | _NamedError | _DeserializationError)
        and isinstance(name, str)
        and name.endswith("Exception")
    ):
        code = _diagnostic_value(name)
        if code is not None:
            details["errorCode"] = code
    own = getattr(error, "request_id", None) if isinstance(error, _HttpAnswerError) else None
    request_id = _diagnostic_value(own) or fallback_request_id
    if request_id is not None:
        details["requestId"] = request_id
    if not details:
        return None
    return {"type": "bedrock_response_failure", "timestamp": now_ms(), "details": details}


def _http_error(
    status: int, headers: Mapping[str, str], body: bytes
) -> BedrockServiceError | _UnparsedAnswerError:
    """The exception the AWS SDK (restJson1) makes of an error answer: a service exception named by
    ``x-amzn-errortype`` (or the body's ``code`` / ``__type``; ``Unknown`` without one), its
    message the body's ``message`` (``UnknownError`` without one); a body that is not JSON fails
    with ``JSON.parse``'s text."""
    request_id = _diagnostic_value(headers.get("x-amzn-requestid") or headers.get("x-amz-request-id"))
    text = body.decode("utf-8", "replace")
    data: Any = {}
    if text:
        try:
            data = js_json_parse_v8(text)
        except JsSyntaxError as error:
            return _UnparsedAnswerError(status, text, str(error) + _DESERIALIZATION_NOTE, request_id)
    if not isinstance(data, dict):
        data = {}
    code = headers.get("x-amzn-errortype") or data.get("code") or data.get("__type") or ""
    code = str(code).split(":")[0].split("#")[-1]
    message = data.get("message") if data.get("message") is not None else data.get("Message")
    return BedrockServiceError(
        code or "Unknown", str(message) if message is not None else "UnknownError", status, request_id
    )


def _retry_delay_base(error: BaseException) -> float | None:
    """The AWS SDK's standard strategy: throttling (429 or a throttling code) waits from 0.5 s,
    a transient failure (500/502/503/504, a timeout, a dropped connection) from 0.1 s; others
    are not retried (``None``)."""
    status = getattr(error, "status", None) if isinstance(error, _HttpAnswerError) else None
    name = getattr(error, "name", "")
    if status == 429 or name in _THROTTLING_CODES:
        return 0.5
    if name in _TRANSIENT_CODES or status in _TRANSIENT_STATUS or _is_connection_error(error):
        return 0.1
    return None


def _is_connection_error(error: BaseException) -> bool:
    try:
        import httpx
    except ModuleNotFoundError:  # pragma: no cover - the provider needs httpx
        return False
    return isinstance(error, httpx.TransportError)


# ---------------------------------------------------------------------------- the model


class BedrockConverseStreamModel(RemoteModel):
    """An Amazon Bedrock model over ConverseStream, the way pi-ai's ``bedrock-converse-stream`` runs it."""

    api = "bedrock-converse-stream"
    sdk_module: ClassVar[str | None] = "botocore"
    extra: ClassVar[str] = "bedrock-converse-stream"
    default_provider = "amazon-bedrock"
    default_context_window = 200_000
    default_max_tokens = 8_192
    default_reasoning = False

    def __init__(self, id: str, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", "https://bedrock-runtime.us-east-1.amazonaws.com")
        super().__init__(id, **kwargs)

    def pi_ai_model(self) -> dict[str, Any]:
        model = super().pi_ai_model()
        model["api"] = self.api
        return model

    def stream_options(self, context: Context, opts: StreamOptions) -> dict[str, Any]:
        """pi-ai's ``streamSimple``: the ``BedrockOptions`` its ``stream`` receives (without headers)."""
        model = self.pi_ai_model()
        simple = simple_stream_options(opts)
        base = build_base_options(model, cast(Mapping[str, Any], context.to_dict()), simple, None)
        for key in (
            "region",
            "profile",
            "thinkingDisplay",
            "requestMetadata",
            "interleavedThinking",
            "toolChoice",
        ):
            if opts.extra.get(key) is not None:
                base[key] = opts.extra[key]
        budgets = opts.extra.get("thinkingBudgets")
        level = clamp_thinking_level(model, opts.reasoning) if opts.reasoning else None
        reasoning = None if level == "off" else level
        if not reasoning:
            return base
        if is_anthropic_claude_model(model) and not supports_adaptive_thinking(model):
            max_tokens, budget = adjust_max_tokens_for_thinking(
                base.get("maxTokens"), int(model["maxTokens"]), reasoning, budgets
            )
            max_tokens = clamp_max_tokens_to_context(
                model, cast(Mapping[str, Any], context.to_dict()), max_tokens
            )
            key = str(clamp_reasoning(reasoning))
            return {
                **base,
                "maxTokens": max_tokens,
                "reasoning": reasoning,
                "thinkingBudgets": {**(budgets or {}), key: min(budget, max(0, max_tokens - 1024))},
            }
        out = {**base, "reasoning": reasoning}
        if budgets is not None:
            out["thinkingBudgets"] = budgets
        return out

    def build_request(self, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
        """The JSON body sent to ``converse-stream``."""
        opts = options or StreamOptions()
        return bedrock_request_body(self.pi_ai_model(), context, self.stream_options(context, opts))

    def _target(self, model: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[str, str]:
        """``(endpoint, region)`` as pi-ai configures the SDK client."""
        base_url = str(model.get("baseUrl") or "")
        configured = _configured_region(options)
        ambient_profile = bool(get_provider_env_value("AWS_PROFILE"))
        endpoint_region = _endpoint_region(base_url)
        explicit = not endpoint_region or (not configured and not ambient_profile)
        arn = _ARN_REGION.match(str(model.get("id") or ""))
        region: str | None
        if arn:
            region = arn.group(1)
        elif configured:
            region = configured
        elif endpoint_region and explicit:
            region = endpoint_region
        elif not ambient_profile:
            region = "us-east-1"
        else:
            region = _profile_region(options.get("profile") or get_provider_env_value("AWS_PROFILE"))
            if not region:
                raise _PlainError("Region is missing")
        endpoint = base_url.rstrip("/") if explicit else _regional_endpoint(region)
        return endpoint, region

    def _sign(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        region: str,
        options: Mapping[str, Any],
        bearer: str | None,
    ) -> dict[str, str]:
        """The headers with the credential: ``Authorization: Bearer`` for a token, else SigV4."""
        if bearer is None and get_provider_env_value("AWS_BEARER_TOKEN_BEDROCK"):
            # the AWS SDK itself prefers this variable's token to signing (pi-ai's skip-auth case)
            bearer = get_provider_env_value("AWS_BEARER_TOKEN_BEDROCK")
        if bearer is not None:
            return {**headers, "authorization": f"Bearer {bearer}"}
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        profile = options.get("profile")
        if get_provider_env_value("AWS_BEDROCK_SKIP_AUTH") == "1":
            credentials: Any = Credentials("dummy-access-key", "dummy-secret-key")
        else:
            key_id = get_provider_env_value("AWS_ACCESS_KEY_ID")
            secret = get_provider_env_value("AWS_SECRET_ACCESS_KEY")
            if key_id and secret and not profile:
                credentials = Credentials(key_id, secret, get_provider_env_value("AWS_SESSION_TOKEN"))
            else:
                credentials = _sdk_credentials(profile or get_provider_env_value("AWS_PROFILE"))
        # signed as the AWS SDK for JavaScript signs: the body's length and SHA-256 among the
        # headers (it signs HTTP/2's :authority where HTTP/1.1 has host)
        signed = {
            "host": urlsplit(url).netloc,
            **headers,
            "content-length": str(len(body)),
            "x-amz-content-sha256": hashlib.sha256(body).hexdigest(),
        }
        request = AWSRequest(method="POST", url=url, data=body, headers=signed)
        SigV4Auth(credentials, "bedrock", region).add_auth(request)
        return {k.lower(): str(v) for k, v in request.headers.items() if k.lower() != "host"}

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``streamSimple`` for ``bedrock-converse-stream``."""
        httpx = require_httpx("bedrock-converse-stream", "bedrock-converse-stream")

        opts = options or StreamOptions()
        model = self.pi_ai_model()
        output: Any = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        output["stopReason"] = "pending"
        blocks: list[Any] = output["content"]
        request_id: str | None = None
        bearer: str | None = None

        def finalize(block: dict[str, Any]) -> None:
            block.pop("index", None)
            block.pop("partialJson", None)
            chunks = block.pop("redactedChunks", None)
            if block.get("type") == "thinking" and chunks is not None:
                block["thinkingSignature"] = _b64(b"".join(chunks))

        def fail(error: BaseException) -> ErrorEvent:
            for block in blocks:
                finalize(block)
            aborted = opts.signal is not None and opts.signal.aborted
            output["stopReason"] = "aborted" if aborted else "error"
            output["errorMessage"] = redact_key(format_bedrock_error(error), bearer)
            if not aborted:
                diagnostic = _failure_diagnostic(error, request_id)
                if diagnostic is not None:
                    output["diagnostics"] = [*(output.get("diagnostics") or []), diagnostic]
            return {"type": "error", "reason": output["stopReason"], "error": output}

        try:
            import botocore.eventstream  # noqa: F401 - the parser used below; fail early when absent
        except ModuleNotFoundError as error:
            yield fail(
                _PlainError(
                    "bedrock-converse-stream needs botocore: pip install 'pi_nb[bedrock-converse-stream]'"
                    f" ({error})"
                )
            )
            return

        shared = self.http_client()
        client = shared if shared is not None else httpx.AsyncClient(timeout=self.timeout)
        try:
            async with contextlib.AsyncExitStack() as stack:
                if shared is None:
                    await stack.enter_async_context(client)
                api_key = self.resolve_api_key()
                if not _auth_configured(opts.extra.get("bearerToken") or api_key):
                    raise _PlainError(f"Provider is not configured: {self.provider}")
                stream_options = self.stream_options(context, opts)
                endpoint, region = self._target(model, stream_options)
                skip_auth = get_provider_env_value("AWS_BEDROCK_SKIP_AUTH") == "1"
                token = (
                    opts.extra.get("bearerToken")
                    or api_key
                    or get_provider_env_value("AWS_BEARER_TOKEN_BEDROCK")
                )
                bearer = token if token and not skip_auth else None
                payload = bedrock_request_body(model, context, stream_options)
                body = js_stringify(payload).encode("utf-8")
                url = f"{endpoint}/model/{quote(str(model.get('id')), safe='')}/converse-stream"
                extra = provider_attribution_headers(
                    model, opts.session_id, self.credential_headers() or None
                )
                custom = provider_headers_to_record(extra) or {}
                ua, amz_ua = _user_agent()
                invocation = _invocation_id()
                response = None
                for attempt in range(1, _MAX_ATTEMPTS + 1):
                    headers = {
                        "content-type": "application/json",
                        "user-agent": ua,
                        "x-amz-user-agent": amz_ua,
                        "amz-sdk-invocation-id": invocation,
                        "amz-sdk-request": f"attempt={attempt}; max={_MAX_ATTEMPTS}",
                    }
                    for key, value in custom.items():
                        if not key.lower().startswith("x-amz-") and key.lower() not in _RESERVED_HEADERS:
                            headers[key.lower()] = value
                    signed = self._sign(url, body, headers, region, stream_options, bearer)
                    if opts.signal is not None and opts.signal.aborted:
                        raise _NamedError("AbortError", "Request aborted")
                    request = client.build_request("POST", url, headers=signed, content=body)
                    request.headers.pop("accept", None)  # httpx's default; the AWS SDK sends none
                    failure: BaseException
                    try:
                        response = await client.send(request, stream=True)
                    except httpx.TransportError as error:  # a connection that failed or dropped
                        failure = error
                    else:
                        if 200 <= response.status_code < 300:
                            break
                        content = await response.aread()
                        await response.aclose()
                        failure = _http_error(response.status_code, response.headers, content)
                    base_delay = _retry_delay_base(failure)
                    if base_delay is None or attempt == _MAX_ATTEMPTS:
                        raise failure
                    await _retry_sleep(random.random() * min(base_delay * 2 ** (attempt - 1), 20.0))
                assert response is not None
                stack.push_async_callback(response.aclose)
                answer_id = _diagnostic_value(response.headers.get("x-amzn-requestid"))
                events = await self._first_event_read(response, answer_id)
                request_id = answer_id
                async for event in self._consume(events, output, opts):
                    yield event
            if opts.signal is not None and opts.signal.aborted:
                raise _PlainError("Request was aborted")
            if output["stopReason"] == "pending":
                raise _PlainError("Bedrock stream ended without a stop reason")
            if output["stopReason"] in ("error", "aborted"):
                raise _PlainError(output.get("errorMessage") or "An unknown error occurred")
        except Exception as error:
            yield fail(error)
            return
        for block in blocks:
            finalize(block)
        yield {"type": "done", "reason": output["stopReason"], "message": output}

    async def _events(self, response: Any) -> AsyncIterator[tuple[str, Any]]:
        """The stream's events as ``(type, payload)`` (a modeled exception among them, its members
        in the SDK's order); an unmodeled exception or error is raised, as is a cut message."""
        from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

        buffer = EventStreamBuffer()
        async for chunk in response.aiter_bytes():
            buffer.add_data(chunk)
            messages = iter(buffer)
            while True:
                try:
                    message = next(messages)
                except StopIteration:
                    break
                except ChecksumMismatch:
                    raise _checksum_error(getattr(buffer, "_data", b"")) from None
                headers = message.headers
                kind = headers.get(":message-type")
                text = message.payload.decode("utf-8", "replace")
                if kind == "event":
                    yield str(headers.get(":event-type")), _parse_payload(text)
                elif kind == "exception":
                    name = str(headers.get(":exception-type"))
                    members = _STREAM_EXCEPTION_MEMBERS.get(name)
                    if members is None:
                        raise _NamedError(name, text)  # the SDK's Error for an exception it does not model
                    data = _parse_payload(text)
                    yield name, {k: data[k] for k in members if isinstance(data, dict) and k in data}
                elif kind == "error":
                    raise _NamedError(str(headers.get(":error-code")), str(headers.get(":error-message")))
        if getattr(buffer, "_data", b""):
            raise _PlainError("Truncated event message received.")

    async def _first_event_read(
        self, response: Any, request_id: str | None
    ) -> AsyncIterator[tuple[str, Any]]:
        """The stream's events, its first one read already: the AWS SDK reads it while it
        deserializes the answer, so a failure there (an exception, an error, a cut message) is
        a deserialization error of a 200 answer, not an item of the stream."""
        events = self._events(response)
        try:
            first = await anext(events)
        except StopAsyncIteration:
            first = None
        except _PayloadError as error:  # the SDK keeps the payload as the answer's body
            raise _UnparsedAnswerError(
                response.status_code, error.payload, error.message + _DESERIALIZATION_NOTE, request_id
            ) from error
        except (_NamedError, _PlainError) as error:
            raise _DeserializationError(error, response.status_code, request_id) from error
        if first is not None and first[0] in _STREAM_EXCEPTION_MEMBERS:
            raise _DeserializationError(
                _PlainError(_js_string_or_undefined(first[1].get("message"))),
                response.status_code,
                request_id,
            )

        async def chained() -> AsyncIterator[tuple[str, Any]]:
            if first is not None:
                yield first
            async for item in events:
                yield item

        return chained()

    async def _consume(
        self, events: AsyncIterator[tuple[str, Any]], output: Any, opts: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        blocks: list[Any] = output["content"]

        def partial() -> Any:
            return snapshot_message(output)

        def find(index: Any) -> int:
            return next((i for i, b in enumerate(blocks) if "index" in b and b["index"] == index), -1)

        async for kind, event in events:
            if opts.signal is not None and opts.signal.aborted:
                raise _NamedError("AbortError", "Request aborted")
            if kind == "messageStart":
                if event.get("role") != "assistant":
                    raise _PlainError("Unexpected assistant message start but got user message start instead")
                yield {"type": "start", "partial": partial()}
            elif kind == "contentBlockStart":
                start = event.get("start") or {}
                tool = start.get("toolUse")
                if tool:
                    blocks.append(
                        {
                            "type": "toolCall",
                            "id": tool.get("toolUseId") or "",
                            "name": tool.get("name") or "",
                            "arguments": {},
                            "partialJson": "",
                            "index": event.get("contentBlockIndex"),
                        }
                    )
                    yield block_start_event("toolcall_start", len(blocks) - 1, partial())
            elif kind == "contentBlockDelta":
                async for ev in self._delta(event, blocks, find, partial):
                    yield ev
            elif kind == "contentBlockStop":
                index = find(event.get("contentBlockIndex"))
                if index < 0:
                    continue
                block = blocks[index]
                block.pop("index", None)
                if block["type"] == "text":
                    yield {
                        "type": "text_end",
                        "contentIndex": index,
                        "content": block["text"],
                        "partial": partial(),
                    }
                elif block["type"] == "thinking":
                    chunks = block.pop("redactedChunks", None)
                    if chunks is not None:
                        block["thinkingSignature"] = _b64(b"".join(chunks))
                    yield {
                        "type": "thinking_end",
                        "contentIndex": index,
                        "content": block["thinking"],
                        "partial": partial(),
                    }
                elif block["type"] == "toolCall":
                    block["arguments"] = parse_streaming_json(block.get("partialJson"))
                    block.pop("partialJson", None)
                    yield {
                        "type": "toolcall_end",
                        "contentIndex": index,
                        "toolCall": cast(ToolCall, dict(block)),
                        "partial": partial(),
                    }
            elif kind == "messageStop":
                reason = event.get("stopReason")
                if reason is None:
                    output.pop("rawStopReason", None)
                else:
                    output["rawStopReason"] = reason
                stop, message = _map_stop_reason(reason)
                output["stopReason"] = stop
                if message:
                    output["errorMessage"] = message
            elif kind == "metadata":
                usage = event.get("usage")
                if usage:
                    u = output["usage"]
                    u["input"] = usage.get("inputTokens") or 0
                    u["output"] = usage.get("outputTokens") or 0
                    u["cacheRead"] = usage.get("cacheReadInputTokens") or 0
                    u["cacheWrite"] = usage.get("cacheWriteInputTokens") or 0
                    u["totalTokens"] = usage.get("totalTokens") or (u["input"] + u["output"])
                    apply_cost(u, self.cost_function)
            elif kind in _STREAM_EXCEPTION_MEMBERS:
                raise _StreamException(event)

    async def _delta(
        self, event: Mapping[str, Any], blocks: list[Any], find: Any, partial: Any
    ) -> AsyncIterator[AssistantMessageEvent]:
        cbi = event.get("contentBlockIndex")
        delta = event.get("delta") or {}
        index = find(cbi)
        block = blocks[index] if index >= 0 else None
        if "text" in delta:
            if block is None:
                block = {"type": "text", "text": "", "index": cbi}
                blocks.append(block)
                index = len(blocks) - 1
                yield block_start_event("text_start", index, partial())
            if block["type"] == "text":
                block["text"] += delta["text"]
                yield block_delta_event("text_delta", index, delta["text"], partial())
        elif delta.get("toolUse") and block is not None and block["type"] == "toolCall":
            piece = delta["toolUse"].get("input") or ""
            block["partialJson"] = (block.get("partialJson") or "") + piece
            block["arguments"] = parse_streaming_json(block["partialJson"])
            yield block_delta_event("toolcall_delta", index, piece, partial())
        elif delta.get("reasoningContent"):
            reasoning = delta["reasoningContent"]
            if block is None:
                block = {"type": "thinking", "thinking": "", "thinkingSignature": "", "index": cbi}
                blocks.append(block)
                index = len(blocks) - 1
                yield block_start_event("thinking_start", index, partial())
            if block["type"] == "thinking":
                if reasoning.get("text"):
                    block["thinking"] += reasoning["text"]
                    yield block_delta_event("thinking_delta", index, reasoning["text"], partial())
                if reasoning.get("signature") and not block.get("redacted"):
                    block["thinkingSignature"] = (block.get("thinkingSignature") or "") + reasoning[
                        "signature"
                    ]
                redacted = reasoning.get("redactedContent")
                raw = base64.b64decode(redacted) if isinstance(redacted, str) and redacted else b""
                if raw:
                    if not block.get("redacted"):
                        block["redacted"] = True
                        block["thinkingSignature"] = ""
                        block["thinking"] += REDACTED_THINKING_PLACEHOLDER
                        yield block_delta_event(
                            "thinking_delta", index, REDACTED_THINKING_PLACEHOLDER, partial()
                        )
                    block.setdefault("redactedChunks", []).append(raw)
