"""``AnthropicModel``: the ``anthropic-messages`` API (Anthropic and the services that speak it:
OpenRouter, Vercel's AI gateway, Fireworks, MiniMax, Kimi, OpenCode, Cloudflare's AI gateway),
streaming, as pi-ai 0.85.0's ``api/anthropic-messages`` sends and records it.

The request is pi-ai's ``streamSimple`` -> ``stream`` -> ``buildParams``, sent the way the
Anthropic JS SDK's beta client sends it:

* ``POST {baseUrl}/v1/messages?beta=true`` with ``x-api-key`` (an API key), or ``Authorization:
  Bearer`` for ``$ANTHROPIC_AUTH_TOKEN`` and for Claude subscription tokens (``sk-ant-oat``, from
  ``$ANTHROPIC_OAUTH_TOKEN`` or a sign-in in the agent dir's ``auth.json``, which also get Claude
  Code's identity: its system line, user agent and tool names); GitHub Copilot's token as
  ``Authorization: Bearer`` with Copilot's per-request headers; the headers
  ``anthropic-version``, ``anthropic-dangerous-direct-browser-access``, Pi's user agent, the
  catalog's ``headers``, ``x-session-affinity`` where the catalog says so, the attribution headers
  of Pi's agent, and ``anthropic-beta`` (fine-grained tool streaming, interleaved thinking,
  server-side fallback, mid-conversation effort) as pi-ai decides;
* prompt caching: ``cache_control`` on the system block, the last tool and the last user block
  (``ttl: "1h"`` for ``long`` retention where supported; ``$PI_CACHE_RETENTION=long``);
* thinking: ``disabled``, budget-based ``enabled`` (budget clamped so an answer still fits) with
  ``display: "summarized"``, or ``adaptive`` with ``output_config.effort`` for the catalog's
  adaptive-thinking models;
* messages through pi-ai's ``transformMessages`` (another model's thinking becomes text, tool-call
  ids are made Anthropic-safe, an unanswered tool call gets its "No result provided" result).

The answer is read with pi-ai's own SSE reader (a last event without its blank line still counts;
an ``error`` event fails with its JSON as the text; an event that is not JSON, even once repaired,
fails with pi-ai's ``Could not parse Anthropic SSE event`` and V8's ``JSON.parse`` text). Stop reasons: ``end_turn``/``pause_turn``/
``stop_sequence`` -> ``stop``, ``max_tokens`` -> ``length``, ``tool_use`` -> ``toolUse``, ``refusal``
and ``sensitive`` -> ``error``. An HTTP error's text is the JS SDK's: ``"{status} {body JSON}"``
(``413 {... request_too_large ...}``, ``400 {... prompt is too long ...}``), which is what overflow
detection reads. A failed request is retried by :mod:`pi_nb.providers.provider_retry`, pi-ai's
``retryProviderRequest`` (408, 409, 429, 5xx and lost connections, ``x-should-retry``, the server's
``retry-after``), ``max_retries`` times: 0 unless given, as in Pi. A connection lost mid-answer fails with ``terminated``.

The request goes out over plain ``httpx`` (the model's transport when it has one), not the
``anthropic`` Python SDK, which cannot send pi-ai's request (see :meth:`AnthropicModel._send`).

The key is read from the environment for each request; it is never stored (a server that echoes
it in an error has it redacted).
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from pi_nb.messages import AssistantContent, ErrorReason, StopReason
from pi_nb.providers._pi_ai_util import (
    calculate_cost,
    cloudflare_ai_gateway_auth,
    get_json_schema_tool_parameters,
    has_header,
    merge_headers,
    provider_attribution_headers,
    resolve_cache_retention,
    resolve_json_schema_strict_sampling,
    sanitize_surrogates,
    split_deferred_tools,
)
from pi_nb.providers._stream_common import (
    apply_cost,
    block_delta_event,
    block_start_event,
    js_sdk_status_error,
    parse_json_with_repair,
    parse_streaming_json,
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
from pi_nb.providers.github_copilot_headers import copilot_dynamic_headers
from pi_nb.providers.provider_retry import ProviderFailure, retry_provider_request
from pi_nb.providers.simple_options import (
    adjust_max_tokens_for_thinking,
    build_base_options,
    clamp_max_tokens_to_context,
    pi_user_agent,
)
from pi_nb.providers.transform_messages import transform_messages

__all__ = [
    "REDACTED_THINKING",
    "AnthropicModel",
    "AnthropicOptions",
    "anthropic_compat",
    "build_params",
    "to_anthropic_messages",
]

# Typing: the Messages API wire JSON (the request body, its messages and blocks, each streamed
# event) and pi-ai's model dict are ``dict[str, Any]``: open JSON, not modelled here. The
# session's messages are read as JSON too: they reach the provider unvalidated. What the stream
# produces is typed: the ``AssistantMessage``, its content blocks and the events.

# the text Pi shows for a redacted_thinking block (its opaque data is kept as the signature)
REDACTED_THINKING = "[Reasoning redacted]"

FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01"
MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"

ANTHROPIC_VERSION = "2023-06-01"

# Claude subscription (OAuth) tokens must look like Claude Code: its version, and its tool names
CLAUDE_CODE_VERSION = "2.1.251"
CLAUDE_CODE_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
)
_CC_TOOL_LOOKUP = {t.lower(): t for t in CLAUDE_CODE_TOOLS}
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."

_ANTHROPIC_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)

_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def to_claude_code_name(name: str) -> str:
    """A tool name in Claude Code's casing when it is one of Claude Code's tools."""
    return _CC_TOOL_LOOKUP.get(name.lower(), name)


def from_claude_code_name(name: str, tools: Sequence[Mapping[str, Any]] | None) -> str:
    """The context's own tool name for a name the model answered in Claude Code's casing."""
    if tools:
        lower = name.lower()
        for tool in tools:
            if str(tool.get("name", "")).lower() == lower:
                return str(tool["name"])
    return name


def _identity(name: str) -> str:
    return name


# --------------------------------------------------------------------------------------------
# the catalog's compat flags


def _compat_raw(model: Mapping[str, Any]) -> dict[str, Any]:
    compat = model.get("compat")
    return compat if isinstance(compat, dict) else {}


def _default_supports_tool_references(model: Mapping[str, Any]) -> bool:
    """First-party Anthropic models from Opus/Sonnet 4.5 on, Haiku excepted (pi-ai's default)."""
    mid = str(model.get("id", ""))
    if model.get("provider") != "anthropic" or "haiku" in mid:
        return False
    version = re.match(r"^claude-(?:opus|sonnet|fable)-(\d+)(?:-(\d+))?(?:-|$)", mid)
    if not version:
        return False
    major = int(version.group(1))
    minor_text = version.group(2)
    minor = int(minor_text) if minor_text and len(minor_text) < 8 else 0
    return major > 4 or (major == 4 and minor >= 5)


def anthropic_compat(model: Mapping[str, Any]) -> dict[str, bool]:
    """pi-ai's ``getAnthropicCompat``: the catalog's compat flags with their defaults."""
    c = _compat_raw(model)

    def flag(name: str, default: bool) -> bool:
        value = c.get(name)
        return default if value is None else bool(value)

    return {
        "supportsEagerToolInputStreaming": flag("supportsEagerToolInputStreaming", True),
        "supportsLongCacheRetention": flag("supportsLongCacheRetention", True),
        "sendSessionAffinityHeaders": flag("sendSessionAffinityHeaders", False),
        "supportsCacheControlOnTools": flag("supportsCacheControlOnTools", True),
        "supportsTemperature": flag("supportsTemperature", True),
        "allowEmptySignature": flag("allowEmptySignature", False),
        "supportsStrictTools": flag("supportsStrictTools", False),
        "supportsToolReferences": flag("supportsToolReferences", _default_supports_tool_references(model)),
    }


def _mid_convo_effort(model: Mapping[str, Any]) -> bool:
    return _compat_raw(model).get("supportsMidConvoEffort") is True


def _force_adaptive(model: Mapping[str, Any]) -> bool:
    return _compat_raw(model).get("forceAdaptiveThinking") is True


def _fallback_models(model: Mapping[str, Any]) -> list[dict[str, Any]]:
    fallbacks = _compat_raw(model).get("allowedFallbackModels")
    return [f for f in fallbacks if isinstance(f, dict)] if isinstance(fallbacks, list) else []


# --------------------------------------------------------------------------------------------
# prompt caching


def cache_control_for(model: Mapping[str, Any], retention: str | None) -> dict[str, Any] | None:
    """The ``cache_control`` pi-ai puts on cached blocks (``None`` for retention ``none``)."""
    resolved = resolve_cache_retention(retention)
    if resolved == "none":
        return None
    if resolved == "long" and anthropic_compat(model)["supportsLongCacheRetention"]:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


# --------------------------------------------------------------------------------------------
# messages


def normalize_tool_call_id(tool_call_id: str, *_: Any) -> str:
    """A tool-call id as Anthropic accepts it: ``[a-zA-Z0-9_-]``, at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", tool_call_id)[:64]


def _image_block(block: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")},
    }


def convert_content_blocks(content: Sequence[Mapping[str, Any]]) -> str | list[dict[str, Any]]:
    """A tool result's content: one string when it is all text, else text and image blocks (a
    placeholder text first when there are only images)."""
    if not any(c.get("type") == "image" for c in content):
        return sanitize_surrogates("\n".join(str(c.get("text", "")) for c in content))
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": sanitize_surrogates(str(b.get("text", "")))}
        if b.get("type") == "text"
        else _image_block(b)
        for b in content
    ]
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def _convert_tool_result(
    msg: Mapping[str, Any],
    is_oauth: bool,
    deferred_names: set[str],
    loaded_names: set[str],
    normalize_tool_name: Callable[[str], str],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    references: list[dict[str, Any]] = []
    for name in msg.get("addedToolNames") or []:
        normalized = normalize_tool_name(name)
        if normalized not in deferred_names or normalized in loaded_names:
            continue
        loaded_names.add(normalized)
        references.append(
            {"type": "tool_reference", "tool_name": to_claude_code_name(name) if is_oauth else name}
        )
    converted = convert_content_blocks(msg.get("content") or [])
    result = {
        "type": "tool_result",
        "tool_use_id": msg.get("toolCallId"),
        "content": references if references else converted,
        "is_error": msg.get("isError"),
    }
    if not references:
        siblings: list[dict[str, Any]] = []
    elif isinstance(converted, str):
        siblings = [{"type": "text", "text": converted}]
    else:
        siblings = converted
    return result, siblings


def _convert_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    is_oauth: bool = False,
    cache_control: dict[str, Any] | None = None,
    allow_empty_signature: bool = False,
    deferred_tool_names: set[str] | None = None,
    normalize_tool_name: Callable[[str], str] = _identity,
    managed_provider: str | None = None,
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """pi-ai's ``convertMessages``: transformed Pi messages -> Messages API ``messages``, and the
    effort each earlier assistant turn of a managed-effort provider ran at (by message index)."""
    params: list[dict[str, Any]] = []
    levels: dict[int, str] = {}
    loaded: set[str] = set()
    deferred = deferred_tool_names or set()
    i = 0
    while i < len(messages):
        msg = messages[i]
        role = msg.get("role")
        if role == "user":
            content = msg.get("content")
            if isinstance(content, str):
                if content.strip():
                    params.append({"role": "user", "content": sanitize_surrogates(content)})
            else:
                blocks = [
                    {"type": "text", "text": sanitize_surrogates(str(item.get("text", "")))}
                    if item.get("type") == "text"
                    else _image_block(item)
                    for item in content or []
                ]
                blocks = [b for b in blocks if b["type"] != "text" or b["text"].strip()]
                if blocks:
                    params.append({"role": "user", "content": blocks})
        elif role == "assistant":
            out: list[dict[str, Any]] = []
            for block in msg.get("content") or []:
                kind = block.get("type")
                if kind == "text":
                    text = str(block.get("text", ""))
                    if text.strip():
                        out.append({"type": "text", "text": sanitize_surrogates(text)})
                elif kind == "thinking":
                    if block.get("redacted"):
                        out.append({"type": "redacted_thinking", "data": block.get("thinkingSignature")})
                        continue
                    signature = block.get("thinkingSignature")
                    signed = bool(signature) and bool(str(signature).strip())
                    thinking = str(block.get("thinking", ""))
                    if not thinking.strip() and not signed:
                        continue
                    if not signed:
                        out.append(
                            {"type": "thinking", "thinking": sanitize_surrogates(thinking), "signature": ""}
                            if allow_empty_signature
                            else {"type": "text", "text": sanitize_surrogates(thinking)}
                        )
                    else:
                        out.append(
                            {
                                "type": "thinking",
                                "thinking": sanitize_surrogates(thinking),
                                "signature": signature,
                            }
                        )
                elif kind == "toolCall":
                    name = str(block.get("name", ""))
                    arguments = block.get("arguments")
                    out.append(
                        {
                            "type": "tool_use",
                            "id": block.get("id"),
                            "name": to_claude_code_name(name) if is_oauth else name,
                            "input": arguments if arguments is not None else {},
                        }
                    )
            if out:
                index = len(params)
                params.append({"role": "assistant", "content": out})
                level = msg.get("providerThinkingLevel")
                if (
                    managed_provider is not None
                    and msg.get("api") == "anthropic-messages"
                    and msg.get("provider") == managed_provider
                    and level in _EFFORTS
                ):
                    levels[index] = str(level)
        elif role == "toolResult":
            results: list[dict[str, Any]] = []
            siblings: list[dict[str, Any]] = []
            j = i
            while j < len(messages) and messages[j].get("role") == "toolResult":
                result, extra = _convert_tool_result(
                    messages[j], is_oauth, deferred, loaded, normalize_tool_name
                )
                results.append(result)
                siblings.extend(extra)
                j += 1
            i = j - 1
            params.append({"role": "user", "content": [*results, *siblings]})
        i += 1

    if cache_control and params:
        last = params[-1]
        if last["role"] == "user":
            content = last["content"]
            if isinstance(content, list):
                if content and content[-1].get("type") in ("text", "image", "tool_result"):
                    content[-1]["cache_control"] = cache_control
            elif isinstance(content, str):
                last["content"] = [{"type": "text", "text": content, "cache_control": cache_control}]
    return params, levels


def _insert_thinking_level_messages(
    messages: list[dict[str, Any]], levels: Mapping[int, str], active_effort: str
) -> list[dict[str, Any]]:
    """A managed-effort request's messages: a ``system`` marker with the effort before each earlier
    assistant turn that ran at a known effort, and one with the active effort at the end."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if index in levels:
            out.append({"role": "system", "content": [], "output_config": {"effort": levels[index]}})
        out.append(message)
    out.append({"role": "system", "content": [], "output_config": {"effort": active_effort}})
    return out


def convert_tools(
    tools: Sequence[Mapping[str, Any]],
    *,
    is_oauth: bool,
    eager_input_streaming: bool,
    supports_strict_tools: bool,
    cache_control: dict[str, Any] | None = None,
    defer_loading: bool = False,
) -> list[dict[str, Any]]:
    """pi-ai's ``convertTools``: Pi tools -> Messages API tools (``cache_control`` on the last)."""
    out: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        strict = resolve_json_schema_strict_sampling(tool, supports_strict_tools)
        parameters = get_json_schema_tool_parameters(tool, strict)
        schema = parameters if isinstance(parameters, Mapping) else {}
        legacy: dict[str, Any] = {
            "type": "object",
            "properties": schema.get("properties") if schema.get("properties") is not None else {},
            "required": schema.get("required") if schema.get("required") is not None else [],
        }
        input_schema = {**schema, **legacy} if strict is True else legacy
        name = str(tool.get("name", ""))
        converted: dict[str, Any] = {
            "name": to_claude_code_name(name) if is_oauth else name,
            "description": tool.get("description"),
        }
        if eager_input_streaming:
            converted["eager_input_streaming"] = True
        if strict is True:
            converted["strict"] = True
        converted["input_schema"] = input_schema
        if defer_loading:
            converted["defer_loading"] = True
        if cache_control and index == len(tools) - 1:
            converted["cache_control"] = cache_control
        out.append(converted)
    return out


def to_anthropic_messages(context: Context, model: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The ``messages`` pi-ai sends ``model`` (a pi-ai model dict) for ``context``, without prompt
    caching. Without ``model``, the model of the context's last assistant message (so its signed
    and redacted thinking goes back as it came)."""
    if model is None:
        last = next((m for m in reversed(context.messages) if m.get("role") == "assistant"), None)
        model = {
            "provider": (last or {}).get("provider", "anthropic"),
            "api": "anthropic-messages",
            "id": (last or {}).get("model", ""),
            "input": ["text", "image"],
        }
    transformed = transform_messages(list(context.messages), dict(model), normalize_tool_call_id)
    return _convert_messages(
        transformed, allow_empty_signature=anthropic_compat(model)["allowEmptySignature"]
    )[0]


# --------------------------------------------------------------------------------------------
# the request


@dataclass
class AnthropicOptions:
    """pi-ai's ``AnthropicOptions`` as ``streamSimple`` fills them for ``stream``."""

    max_tokens: int | None = None
    thinking_enabled: bool | None = None
    thinking_budget_tokens: int | None = None
    effort: str | None = None
    thinking_display: str | None = None
    interleaved_thinking: bool | None = None
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = None
    cache_retention: str | None = None
    session_id: str | None = None
    headers: dict[str, str | None] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None


def _header_value(headers: Mapping[str, str | None], name: str) -> tuple[bool, str | None]:
    """``(present, value)`` of the last header named ``name`` (any case)."""
    found: tuple[bool, str | None] = (False, None)
    for key, value in headers.items():
        if key.lower() == name:
            found = (True, value)
    return found


def beta_features(
    model: Mapping[str, Any], context: Context, is_oauth: bool, options: AnthropicOptions
) -> list[str]:
    """pi-ai's ``getBetaFeatures``: the ``anthropic-beta`` list (a configured header wins)."""
    configured: tuple[bool, str | None] = (False, None)
    for headers in (model.get("headers") or {}, options.headers):
        present, value = _header_value(headers, "anthropic-beta")
        if present:
            configured = (True, value)
    if configured[0]:
        if configured[1] is None:
            return []
        return list(dict.fromkeys(f.strip() for f in configured[1].split(",") if f.strip()))
    features: list[str] = []
    if is_oauth:
        features += ["claude-code-20250219", "oauth-2025-04-20"]
    if context.tools and not anthropic_compat(model)["supportsEagerToolInputStreaming"]:
        features.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if (
        model.get("reasoning")
        and options.thinking_enabled is True
        and (options.interleaved_thinking if options.interleaved_thinking is not None else True)
        and not _force_adaptive(model)
    ):
        features.append(INTERLEAVED_THINKING_BETA)
    if _fallback_models(model):
        features.append(SERVER_SIDE_FALLBACK_BETA)
    if _mid_convo_effort(model):
        features += [MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA]
    return list(dict.fromkeys(features))


def build_params(
    model: Mapping[str, Any], context: Context, is_oauth: bool, options: AnthropicOptions
) -> dict[str, Any]:
    """pi-ai's ``buildParams``: the request body (with ``betas``, which go to the header)."""
    cache_control = cache_control_for(model, options.cache_retention)
    compat = anthropic_compat(model)
    transformed = transform_messages(list(context.messages), dict(model), normalize_tool_call_id)
    normalize_tool_name = to_claude_code_name if is_oauth else _identity
    immediate, deferred_map = split_deferred_tools(
        {**context.to_dict(), "messages": transformed}, compat["supportsToolReferences"], normalize_tool_name
    )
    immediate_tools = list(immediate)
    deferred_tools = list(deferred_map.values())
    if not immediate_tools and deferred_tools:
        immediate_tools, deferred_tools = deferred_tools, []
    deferred_names = {normalize_tool_name(str(t.get("name", ""))) for t in deferred_tools}
    managed = _mid_convo_effort(model)
    converted, levels = _convert_messages(
        transformed,
        is_oauth=is_oauth,
        cache_control=cache_control,
        allow_empty_signature=compat["allowEmptySignature"],
        deferred_tool_names=deferred_names,
        normalize_tool_name=normalize_tool_name,
        managed_provider=str(model.get("provider")) if managed else None,
    )
    active_effort = options.effort or "high"
    betas = beta_features(model, context, is_oauth, options)
    params: dict[str, Any] = {
        "model": model.get("id"),
        "messages": _insert_thinking_level_messages(converted, levels, active_effort)
        if managed
        else converted,
        "max_tokens": options.max_tokens if options.max_tokens is not None else model.get("maxTokens"),
        "stream": True,
    }
    if betas:
        params["betas"] = betas

    def system_block(text: str) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "text", "text": text}
        if cache_control:
            block["cache_control"] = cache_control
        return block

    if is_oauth:
        params["system"] = [system_block(CLAUDE_CODE_IDENTITY)]
        if context.system_prompt:
            params["system"].append(system_block(sanitize_surrogates(context.system_prompt)))
    elif context.system_prompt:
        params["system"] = [system_block(sanitize_surrogates(context.system_prompt))]

    if (
        options.temperature is not None
        and not options.thinking_enabled
        and not managed
        and compat["supportsTemperature"]
    ):
        params["temperature"] = options.temperature

    if immediate_tools or deferred_tools:
        eager, strict_tools = compat["supportsEagerToolInputStreaming"], compat["supportsStrictTools"]
        params["tools"] = [
            *convert_tools(
                immediate_tools,
                is_oauth=is_oauth,
                eager_input_streaming=eager,
                supports_strict_tools=strict_tools,
                cache_control=cache_control if compat["supportsCacheControlOnTools"] else None,
            ),
            *convert_tools(
                deferred_tools,
                is_oauth=is_oauth,
                eager_input_streaming=eager,
                supports_strict_tools=strict_tools,
                defer_loading=True,
            ),
        ]

    level_map = model.get("thinkingLevelMap")
    if managed:
        params["thinking"] = {
            "type": "adaptive",
            "display": options.thinking_display or "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        }
        params["output_config"] = {"effort": "high"}
    elif model.get("reasoning"):
        if options.thinking_enabled:
            display = options.thinking_display or "summarized"
            if _force_adaptive(model):
                params["thinking"] = {"type": "adaptive", "display": display}
                if options.effort:
                    params["output_config"] = {"effort": options.effort}
            else:
                params["thinking"] = {
                    "type": "enabled",
                    "budget_tokens": options.thinking_budget_tokens or 1024,
                    "display": display,
                }
        elif options.thinking_enabled is False and not (
            isinstance(level_map, dict) and "off" in level_map and level_map["off"] is None
        ):
            params["thinking"] = {"type": "disabled"}

    if options.metadata and isinstance(options.metadata.get("user_id"), str):
        params["metadata"] = {"user_id": options.metadata["user_id"]}

    if options.tool_choice:
        params["tool_choice"] = (
            {"type": options.tool_choice} if isinstance(options.tool_choice, str) else options.tool_choice
        )

    fallbacks = _fallback_models(model)
    if fallbacks:
        params["fallbacks"] = [{"model": f.get("model")} for f in fallbacks]
    return params


def map_thinking_level_to_effort(model: Mapping[str, Any], level: str | None) -> str:
    """pi-ai's ``mapThinkingLevelToEffort``: the catalog's level map, else low/medium/high."""
    level_map = model.get("thinkingLevelMap")
    mapped = level_map.get(level) if isinstance(level_map, dict) and level else None
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level or "", "high")


def simple_options(
    model: Mapping[str, Any],
    context: Context,
    options: StreamOptions,
    headers: dict[str, str | None],
) -> AnthropicOptions:
    """pi-ai's ``streamSimple``: a reasoning level (or none) -> the thinking options of ``stream``."""
    ctx = context.to_dict()
    base = build_base_options(model, ctx, {"maxTokens": options.max_tokens})
    base_max = base["maxTokens"]
    out = AnthropicOptions(
        max_tokens=base_max,
        temperature=options.temperature,
        cache_retention=options.cache_retention,
        session_id=options.session_id,
        headers=headers,
        tool_choice=options.extra.get("tool_choice"),
        metadata=options.extra.get("metadata"),
        thinking_display=options.extra.get("thinking_display"),
        interleaved_thinking=options.extra.get("interleaved_thinking"),
    )
    if not options.reasoning:
        out.thinking_enabled = False
        return out
    if _force_adaptive(model):
        out.thinking_enabled = True
        out.effort = map_thinking_level_to_effort(model, options.reasoning)
        return out
    adjusted = adjust_max_tokens_for_thinking(
        base_max, int(model.get("maxTokens") or 0), options.reasoning, options.extra.get("thinking_budgets")
    )
    adjusted_max, budget = adjusted
    max_tokens = clamp_max_tokens_to_context(model, ctx, adjusted_max)
    out.max_tokens = max_tokens
    out.thinking_enabled = True
    out.thinking_budget_tokens = min(budget, max(0, max_tokens - 1024))
    return out


# --------------------------------------------------------------------------------------------
# auth and headers


def resolve_auth(model: Mapping[str, Any], api_key_env: str) -> tuple[str | None, dict[str, str | None]]:
    """``(apiKey, headers)`` as pi-ai's provider auth resolves them from the environment.

    Anthropic: ``$ANTHROPIC_AUTH_TOKEN`` is sent as ``Authorization: Bearer``; else
    ``$ANTHROPIC_OAUTH_TOKEN`` or ``$ANTHROPIC_API_KEY`` is the key. Cloudflare's AI gateway: the
    key goes in ``cf-aig-authorization`` and no ``x-api-key``/``Authorization`` is sent. Others:
    the provider's key variable.
    """
    provider = model.get("provider")
    if provider == "anthropic" and api_key_env == "ANTHROPIC_API_KEY":
        token = os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if token:
            return None, {"Authorization": f"Bearer {token}"}
        for name in ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"):
            value = os.environ.get(name)
            if value:
                return value, {}
        return None, {}
    if provider == "cloudflare-ai-gateway" and api_key_env == "CLOUDFLARE_API_KEY":
        return None, cloudflare_ai_gateway_auth(os.environ.get("CLOUDFLARE_API_KEY")) or {}
    return (os.environ.get(api_key_env) or None) if api_key_env else None, {}


def is_oauth_token(api_key: str) -> bool:
    """A Claude subscription token (sent as a bearer token, with Claude Code's identity)."""
    return "sk-ant-oat" in api_key


def request_headers(
    model: Mapping[str, Any],
    api_key: str | None,
    options: AnthropicOptions,
    betas: Sequence[str],
    session_id: str | None,
    messages: Sequence[Mapping[str, Any]] = (),
) -> dict[str, str]:
    """pi-ai's ``createClient`` default headers over the JS SDK's own, as sent (lower-cased).
    GitHub Copilot: the key as a bearer token, its per-request headers (from ``messages``, the
    turn's) after the catalog's, no session affinity."""
    oauth = bool(api_key) and is_oauth_token(api_key or "")
    sdk: dict[str, str | None] = {
        "Accept": "application/json",
        "anthropic-dangerous-direct-browser-access": "true",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if model.get("provider") == "github-copilot":
        auth_token: dict[str, str | None] = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        copilot: list[Mapping[str, str | None] | None] = [
            {"User-Agent": pi_user_agent()},
            {"accept": "application/json", "anthropic-dangerous-direct-browser-access": "true"},
            model.get("headers"),
            dict(copilot_dynamic_headers(messages)),
            options.headers,
        ]
        body_headers_copilot = {"content-type": "application/json"}
        beta_copilot: dict[str, str | None] = {"anthropic-beta": ",".join(betas)} if betas else {}
        return merge_headers(sdk, auth_token, *copilot, body_headers_copilot, beta_copilot)
    if oauth:
        auth: dict[str, str | None] = {"Authorization": f"Bearer {api_key}"}
        defaults: list[Mapping[str, str | None] | None] = [
            {"User-Agent": pi_user_agent()},
            {
                "accept": "application/json",
                "anthropic-dangerous-direct-browser-access": "true",
                "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}",
                "x-app": "cli",
            },
            model.get("headers"),
            options.headers,
        ]
    else:
        auth = {"X-Api-Key": api_key} if api_key else {}
        affinity: dict[str, str | None] = (
            {"x-session-affinity": session_id}
            if session_id and anthropic_compat(model)["sendSessionAffinityHeaders"]
            else {}
        )
        defaults = [
            {"User-Agent": pi_user_agent()},
            {"accept": "application/json", "anthropic-dangerous-direct-browser-access": "true"},
            affinity,
            model.get("headers"),
            options.headers,
        ]
    body_headers = {"content-type": "application/json"}
    beta_header: dict[str, str | None] = {"anthropic-beta": ",".join(betas)} if betas else {}
    return merge_headers(sdk, auth, *defaults, body_headers, beta_header)


def _messages_url(base_url: str) -> str:
    """``{baseUrl}/v1/messages?beta=true`` (the JS SDK's beta client; one slash between them)."""
    base = base_url or "https://api.anthropic.com"
    path = "/v1/messages?beta=true"
    return base + (path[1:] if base.endswith("/") else path)


# --------------------------------------------------------------------------------------------
# errors


class _ProviderHTTPError(Exception):
    """An HTTP error answer (the JS SDK's ``APIError``): its status, headers and message."""

    def __init__(self, status: int, headers: Mapping[str, str], message: str) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class _StreamFailure(Exception):
    """A failure whose text is the ``errorMessage`` as is."""


class _ConnectionFailure(Exception):
    """No HTTP answer (the JS SDK's ``APIConnectionError``)."""


def _provider_error(error: BaseException) -> ProviderFailure | None:
    """What the retry policy reads of a failed request: an HTTP error answer or a lost connection."""
    if isinstance(error, _ProviderHTTPError):
        return ProviderFailure(error.status, error.headers, str(error))
    if isinstance(error, _ConnectionFailure):
        return ProviderFailure(None, {}, str(error))
    return None


# --------------------------------------------------------------------------------------------
# the answer: pi-ai's SSE reader


@dataclass
class _SseState:
    event: str | None = None
    data: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)


def _flush_sse(state: _SseState) -> tuple[str | None, str, list[str]] | None:
    if not state.event and not state.data:
        return None
    out = (state.event, "\n".join(state.data), list(state.raw))
    state.event, state.data, state.raw = None, [], []
    return out


def _decode_sse_line(line: str, state: _SseState) -> tuple[str | None, str, list[str]] | None:
    if line == "":
        return _flush_sse(state)
    state.raw.append(line)
    if line.startswith(":"):
        return None
    colon = line.find(":")
    name = line if colon == -1 else line[:colon]
    value = "" if colon == -1 else line[colon + 1 :]
    if value.startswith(" "):
        value = value[1:]
    if name == "event":
        state.event = value
    elif name == "data":
        state.data.append(value)
    return None


def _consume_line(text: str) -> tuple[str, str] | None:
    cr, lf = text.find("\r"), text.find("\n")
    at = lf if cr == -1 else cr if lf == -1 else min(cr, lf)
    if at == -1:
        return None
    nxt = at + 1
    if text[at] == "\r" and text[nxt : nxt + 1] == "\n":
        nxt += 1
    return text[:at], text[nxt:]


async def iterate_sse_messages(
    chunks: AsyncIterator[bytes], aborted: Callable[[], bool]
) -> AsyncIterator[tuple[str | None, str, list[str]]]:
    """pi-ai's ``iterateSseMessages``: ``(event, data, raw lines)`` per event; the last event is
    delivered even without its closing blank line."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")  # TextDecoder drops a leading BOM
    state = _SseState()
    buffer = ""
    async for chunk in chunks:
        if aborted():
            raise _StreamFailure("Request was aborted")
        buffer += decoder.decode(chunk)
        consumed = _consume_line(buffer)
        while consumed:
            line, buffer = consumed
            event = _decode_sse_line(line, state)
            if event:
                yield event
            consumed = _consume_line(buffer)
    if aborted():
        raise _StreamFailure("Request was aborted")
    buffer += decoder.decode(b"", final=True)
    consumed = _consume_line(buffer)
    while consumed:
        line, buffer = consumed
        event = _decode_sse_line(line, state)
        if event:
            yield event
        consumed = _consume_line(buffer)
    if buffer:
        event = _decode_sse_line(buffer, state)
        if event:
            yield event
    trailing = _flush_sse(state)
    if trailing:
        yield trailing


async def iterate_anthropic_events(
    chunks: AsyncIterator[bytes], aborted: Callable[[], bool]
) -> AsyncIterator[dict[str, Any]]:
    """pi-ai's ``iterateAnthropicEvents``: the Messages events of an SSE body; an ``error`` event
    fails with its data as the text; a stream that started but never stopped fails."""
    saw_start = saw_end = False
    async for event_name, data, raw in iterate_sse_messages(chunks, aborted):
        if event_name == "error":
            raise _StreamFailure(data)
        if (event_name or "") not in _ANTHROPIC_MESSAGE_EVENTS:
            continue
        problem: str | None = None
        try:
            event = parse_json_with_repair(data)  # V8's SyntaxError text when it is not JSON
        except ValueError as error:
            problem = str(error)
        else:
            if event is None:  # ``event.type`` of null throws inside pi-ai's try
                problem = "Cannot read properties of null (reading 'type')"
        if problem is not None:
            joined = "\\n".join(raw)  # pi-ai joins the raw lines with a backslash and an n
            raise _StreamFailure(
                f"Could not parse Anthropic SSE event {event_name}: {problem}; data={data}; raw={joined}"
            )
        if isinstance(event, dict):
            if event.get("type") == "message_start":
                saw_start = True
            elif event.get("type") == "message_stop":
                saw_end = True
        yield event if isinstance(event, dict) else {}
    if saw_start and not saw_end:
        raise _StreamFailure("Anthropic stream ended before message_stop")


def map_stop_reason(reason: str, details: Any) -> tuple[StopReason, str | None]:
    """pi-ai's ``mapStopReason``: ``(stopReason, errorMessage)``; an unknown reason fails."""
    if reason == "end_turn" or reason == "pause_turn" or reason == "stop_sequence":
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stopped with: sensitive"
    raise _StreamFailure(f"Unhandled stop reason: {reason}")


def _or0(value: Any) -> Any:
    """JavaScript's ``value || 0``."""
    return value if value else 0


# --------------------------------------------------------------------------------------------


class AnthropicModel(RemoteModel):
    """A model on the ``anthropic-messages`` API (Anthropic's or a compatible service)."""

    #: what a turn imports, and the pi_nb extra that installs it (the provider table's row)
    sdk_module: ClassVar[str | None] = "httpx"
    extra: ClassVar[str] = "anthropic"

    api = "anthropic-messages"
    default_provider = "anthropic"
    default_context_window = 200_000
    default_max_tokens = 64_000
    default_reasoning = True
    base_url_env = "ANTHROPIC_BASE_URL"
    default_api_key_env = "ANTHROPIC_API_KEY"

    def __init__(self, id: str, **kwargs: Any) -> None:
        super().__init__(id, **kwargs)
        if self.provider == "anthropic":
            # the sign-in variables pi-ai reads before the key: their values are secrets too
            from pi_nb.redaction import register_secret_env

            for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN"):
                register_secret_env(name)

    def _auth(self) -> tuple[str | None, dict[str, str | None]]:
        """``(apiKey, headers)`` of this request: the provider's ``auth.json`` credential when it has
        one (an OAuth token, refreshed when due, is a key like ``$ANTHROPIC_OAUTH_TOKEN``: a
        ``sk-ant-oat`` token takes the subscription path), else the environment (:func:`resolve_auth`)."""
        stored = self.resolve_auth(ambient=False)
        if stored is not None:
            api_key: str | None = stored.api_key
            headers: dict[str, str | None] = dict(stored.headers)
            if self.provider == "cloudflare-ai-gateway":
                api_key, headers = None, cloudflare_ai_gateway_auth(stored.api_key) or {}
        else:
            api_key, headers = resolve_auth(self.pi_ai_model(), self.api_key_env)
        return api_key, {**self.credential_headers(), **headers}

    def build_request(self, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
        """``{url, headers, body}`` of the request :meth:`stream` sends (the key included)."""
        opts = options or StreamOptions()
        api_key, auth_headers = self._auth()
        model = self.pi_ai_model()
        return self._request(model, context, opts, api_key, auth_headers)[0]

    def _request(
        self,
        model: dict[str, Any],
        context: Context,
        opts: StreamOptions,
        api_key: str | None,
        auth_headers: dict[str, str | None],
    ) -> tuple[dict[str, Any], AnthropicOptions, bool]:
        # Pi's agent adds its attribution headers under the auth's (core/provider-attribution.js)
        headers = provider_attribution_headers(model, opts.session_id, auth_headers) or {}
        anthropic_options = simple_options(model, context, opts, headers)
        oauth = bool(api_key) and is_oauth_token(api_key or "") and model.get("provider") != "github-copilot"
        params = build_params(model, context, oauth, anthropic_options)
        betas = params.pop("betas", [])
        retention = resolve_cache_retention(anthropic_options.cache_retention)
        session_id = None if retention == "none" else anthropic_options.session_id
        request = {
            "url": _messages_url(str(model.get("baseUrl") or "")),
            "headers": request_headers(
                model, api_key, anthropic_options, betas, session_id, context.messages
            ),
            "body": params,
        }
        return request, anthropic_options, oauth

    async def _send(self, request: dict[str, Any]) -> tuple[Any, Any]:
        """One POST: ``(client to close or None, streaming response)``; a status outside 2xx raises
        with the JS SDK's message.

        Sent with plain ``httpx``, not the ``anthropic`` SDK: the Python SDK (2.x) sends an API key
        as ``Authorization: Bearer`` (pi-ai's JS SDK sends ``x-api-key``), picks up credentials and
        headers of its own from the environment and profile files, and runs on ``httpx2``, so it
        cannot send pi-ai's request over this model's transport.
        """
        httpx = _require_httpx()
        own = self.transport is None
        client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=True) if own else self.http_client()
        body = json.dumps(request["body"], ensure_ascii=False, separators=(",", ":"))
        try:
            content = body.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: JSON.stringify writes it as an escape
            content = json.dumps(request["body"], separators=(",", ":")).encode("ascii")
        try:
            http_request = client.build_request(
                "POST", request["url"], headers=request["headers"], content=content
            )
            response = await client.send(http_request, stream=True)
        except httpx.TimeoutException as error:
            await _close(client if own else None)
            raise _ConnectionFailure("Request timed out.") from error
        except httpx.HTTPError as error:
            await _close(client if own else None)
            raise _ConnectionFailure("Connection error.") from error
        if not 200 <= response.status_code < 300:  # fetch's response.ok
            content_read: bytes | str
            try:
                content_read = await response.aread()
            except httpx.HTTPError as error:  # the JS SDK: the text of the error reading the body
                content_read = str(error)
            finally:
                await response.aclose()
                await _close(client if own else None)
            js_error = js_sdk_status_error("anthropic", response.status_code, content_read)
            raise _ProviderHTTPError(response.status_code, response.headers, js_error.message)
        return (client if own else None), response

    async def _send_with_retries(self, request: dict[str, Any], signal: Any) -> Any:
        """pi-ai's ``retryProviderRequest`` around one SDK request (``max_retries`` retries)."""

        async def attempt() -> Any:
            if signal is not None and signal.aborted:  # the SDK refuses an aborted signal
                raise _StreamFailure("Request aborted")
            return await self._send(request)

        return await retry_provider_request(
            attempt, _provider_error, max_retries=self.max_retries, signal=signal, fail=_StreamFailure
        )

    def _cost(self, model: dict[str, Any], usage: Any, usage_cost: dict[str, Any] | None) -> None:
        """pi-ai's ``calculateCost(usageModel, usage)``: a server-side fallback model's rates when
        one answered, else this model's (:attr:`cost_function`)."""
        if usage_cost is not None:
            usage["cost"] = calculate_cost({**model, "cost": usage_cost}, usage)
        else:
            apply_cost(usage, self.cost_function)

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``streamSimple``: one turn as events (``start``, block events, ``done`` or ``error``)."""
        opts = options or StreamOptions()
        try:
            # the credential first: its base URL (GitHub Copilot's) is the request model's
            # a refresh is a blocking request: off the event loop
            api_key, auth_headers = await asyncio.to_thread(self._auth)
            auth_error: str | None = None
        except Exception as error:
            api_key, auth_headers, auth_error = None, {}, str(error)
        model = self.pi_ai_model()
        provider = str(model.get("provider"))
        output = make_assistant_message(
            [], api=str(model.get("api")), provider=provider, model=self.id, stop_reason="pending"
        )
        if auth_error is not None:
            output["stopReason"] = "error"
            output["errorMessage"] = auth_error
            yield {"type": "error", "reason": "error", "error": output}
            return
        if not api_key and not any(
            has_header(auth_headers, h) for h in ("authorization", "x-api-key", "cf-aig-authorization")
        ):
            output["stopReason"] = "error"
            output["errorMessage"] = f"No API key for provider: {provider}"
            yield {"type": "error", "reason": "error", "error": output}
            return
        request, anthropic_options, oauth = self._request(model, context, opts, api_key, auth_headers)
        if _mid_convo_effort(model):
            # pi-ai's key order: providerThinkingLevel right after model
            output = {
                "role": "assistant",
                "content": [],
                "api": output["api"],
                "provider": output["provider"],
                "model": output["model"],
                "providerThinkingLevel": anthropic_options.effort or "high",
                "usage": output["usage"],
                "stopReason": "pending",
                "timestamp": output["timestamp"],
            }
        blocks: list[AssistantContent] = output["content"]
        open_blocks: list[tuple[Any, int]] = []  # (event index, position) of blocks not yet stopped
        partial_json: dict[int, str] = {}  # position -> a tool call's JSON so far
        transformations: list[Any] | None = None
        usage_cost: dict[str, Any] | None = None
        signal = opts.signal

        def aborted() -> bool:
            return signal is not None and bool(signal.aborted)

        def find(event_index: Any) -> int:
            for idx, pos in open_blocks:
                if idx == event_index:
                    return pos
            return -1

        client: Any = None
        response: Any = None
        try:
            client, response = await self._send_with_retries(request, signal)
            yield {"type": "start", "partial": snapshot_message(output)}
            async for event in iterate_anthropic_events(_body_chunks(response), aborted):
                kind = event.get("type")
                if kind == "message_start":
                    message: Any = event.get("message")  # wire JSON, as the server sent it
                    if not isinstance(message, dict):
                        raise _StreamFailure("Cannot read properties of undefined (reading 'id')")
                    response_id: Any = message.get("id")
                    output["responseId"] = response_id
                    if response_id is None:  # undefined in pi-ai: absent from the JSON
                        del output["responseId"]
                    if isinstance(message.get("input_transformations"), list):
                        transformations = message["input_transformations"]
                    answered_by: Any = message.get("model")  # pi-ai records the model that answered
                    if answered_by is not None:
                        output["model"] = answered_by
                    # (a message_start without a model: pi-ai's message loses its model key; pi_nb
                    # keeps the id it asked for, which the session and the agent read)
                    usage_cost = None
                    if answered_by != model.get("id"):
                        for fallback in _fallback_models(model):
                            if fallback.get("provider") == provider and fallback.get("model") == answered_by:
                                usage_cost = fallback.get("cost") or None
                                break
                    u = message.get("usage")
                    if not isinstance(u, dict):
                        raise _StreamFailure("Cannot read properties of undefined (reading 'input_tokens')")
                    usage = output["usage"]
                    usage["input"] = _or0(u.get("input_tokens"))
                    usage["output"] = _or0(u.get("output_tokens"))
                    usage["cacheRead"] = _or0(u.get("cache_read_input_tokens"))
                    usage["cacheWrite"] = _or0(u.get("cache_creation_input_tokens"))
                    creation = u.get("cache_creation")
                    usage["cacheWrite1h"] = _or0(
                        creation.get("ephemeral_1h_input_tokens") if isinstance(creation, dict) else None
                    )
                    usage["totalTokens"] = (
                        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
                    )
                    self._cost(model, usage, usage_cost)
                elif kind == "content_block_start":
                    cb: Any = event.get("content_block") or {}
                    cb_type = cb.get("type")
                    if cb_type == "fallback":
                        if blocks:
                            raise _StreamFailure(
                                "Anthropic performed an unsupported mid-output model fallback"
                            )
                        continue
                    new: AssistantContent
                    if cb_type == "text":
                        text = cb.get("text")
                        new = {"type": "text", "text": "" if text is None else text}
                        start = "text_start"
                    elif cb_type == "thinking":
                        thinking, signature = cb.get("thinking"), cb.get("signature")
                        new = {
                            "type": "thinking",
                            "thinking": "" if thinking is None else thinking,
                            "thinkingSignature": "" if signature is None else signature,
                        }
                        start = "thinking_start"
                    elif cb_type == "redacted_thinking":
                        new = {
                            "type": "thinking",
                            "thinking": REDACTED_THINKING,
                            "thinkingSignature": cb.get("data"),
                            "redacted": True,
                        }
                        start = "thinking_start"
                    elif cb_type == "tool_use":
                        name = cb.get("name")
                        arguments = cb.get("input")
                        new = {
                            "type": "toolCall",
                            "id": cb.get("id"),
                            "name": from_claude_code_name(name, context.tools) if oauth else name,
                            "arguments": {} if arguments is None else arguments,
                        }
                        start = "toolcall_start"
                        partial_json[len(blocks)] = ""
                    else:
                        continue
                    blocks.append(new)
                    open_blocks.append((event.get("index"), len(blocks) - 1))
                    yield block_start_event(start, len(blocks) - 1, snapshot_message(output))  # type: ignore[arg-type]
                elif kind == "content_block_delta":
                    delta: Any = event.get("delta") or {}
                    d_type = delta.get("type")
                    pos = find(event.get("index"))
                    block = blocks[pos] if pos >= 0 else None
                    if block is None:
                        continue
                    if d_type == "text_delta" and block["type"] == "text":
                        piece = delta.get("text")
                        block["text"] += piece
                        yield block_delta_event("text_delta", pos, piece, snapshot_message(output))
                    elif d_type == "thinking_delta" and block["type"] == "thinking":
                        piece = delta.get("thinking")
                        block["thinking"] += piece
                        yield block_delta_event("thinking_delta", pos, piece, snapshot_message(output))
                    elif d_type == "input_json_delta" and block["type"] == "toolCall":
                        piece = delta.get("partial_json")
                        partial_json[pos] = partial_json.get(pos, "") + piece
                        block["arguments"] = parse_streaming_json(partial_json[pos])
                        yield block_delta_event("toolcall_delta", pos, piece, snapshot_message(output))
                    elif d_type == "signature_delta" and block["type"] == "thinking":
                        block["thinkingSignature"] = (block.get("thinkingSignature") or "") + delta.get(
                            "signature"
                        )
                elif kind == "content_block_stop":
                    pos = find(event.get("index"))
                    if pos < 0:
                        continue
                    open_blocks.remove(next(p for p in open_blocks if p[1] == pos))
                    block = blocks[pos]
                    if block["type"] == "text":
                        yield {
                            "type": "text_end",
                            "contentIndex": pos,
                            "content": block["text"],
                            "partial": snapshot_message(output),
                        }
                    elif block["type"] == "thinking":
                        yield {
                            "type": "thinking_end",
                            "contentIndex": pos,
                            "content": block["thinking"],
                            "partial": snapshot_message(output),
                        }
                    elif block["type"] == "toolCall":
                        block["arguments"] = parse_streaming_json(partial_json.pop(pos, ""))
                        yield {
                            "type": "toolcall_end",
                            "contentIndex": pos,
                            "toolCall": block.copy(),
                            "partial": snapshot_message(output),
                        }
                elif kind == "message_delta":
                    if isinstance(event.get("input_transformations"), list):
                        transformations = event["input_transformations"]
                    stop_delta: dict[str, Any] = event.get("delta") or {}
                    if stop_delta.get("stop_reason"):
                        output["rawStopReason"] = stop_delta["stop_reason"]
                        stop, error_message = map_stop_reason(
                            stop_delta["stop_reason"], stop_delta.get("stop_details")
                        )
                        output["stopReason"] = stop
                        if error_message:
                            output["errorMessage"] = error_message
                    u = event.get("usage")
                    usage = output["usage"]
                    if isinstance(u, dict):
                        if u.get("input_tokens") is not None:
                            usage["input"] = u["input_tokens"]
                        if u.get("output_tokens") is not None:
                            usage["output"] = u["output_tokens"]
                        if u.get("cache_read_input_tokens") is not None:
                            usage["cacheRead"] = u["cache_read_input_tokens"]
                        if u.get("cache_creation_input_tokens") is not None:
                            usage["cacheWrite"] = u["cache_creation_input_tokens"]
                        details = u.get("output_tokens_details")
                        thinking_tokens = (
                            details.get("thinking_tokens") if isinstance(details, dict) else None
                        )
                        if thinking_tokens is not None:
                            usage["reasoning"] = thinking_tokens
                    usage["totalTokens"] = (
                        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
                    )
                    self._cost(model, usage, usage_cost)
            if aborted():
                raise _StreamFailure("Request was aborted")
            if output["stopReason"] == "pending":
                raise _StreamFailure("Anthropic stream ended without a stop reason")
            if output["stopReason"] in ("aborted", "error"):
                raise _StreamFailure(output.get("errorMessage") or "An unknown error occurred")
            if transformations:
                diagnostics = output.setdefault("diagnostics", [])
                diagnostics.append(
                    {
                        "type": "anthropic_input_transformations",
                        "timestamp": int(time.time() * 1000),
                        "details": {
                            "transformations": [
                                {
                                    k: v
                                    for k, v in (
                                        ("type", t.get("type")),
                                        ("path", t.get("path")),
                                        ("reason", t.get("reason")),
                                    )
                                    if v is not None
                                }
                                for t in transformations
                                if isinstance(t, dict)
                            ]
                        },
                    }
                )
            # blocks the stream never stopped keep pi-ai's scratch fields
            for idx, pos in open_blocks:
                unstopped = cast(dict[str, Any], blocks[pos])
                unstopped["index"] = idx
                if pos in partial_json:
                    unstopped["partialJson"] = partial_json[pos]
        except Exception as error:  # provider failures are values (error messages), as in pi-ai
            reason: ErrorReason = "aborted" if aborted() else "error"
            output["stopReason"] = reason
            output["errorMessage"] = _error_text(error, api_key or _bearer_secret(auth_headers))
            yield {"type": "error", "reason": reason, "error": output}
            return
        finally:
            if response is not None:
                await response.aclose()
            await _close(client)
        yield {"type": "done", "reason": output["stopReason"], "message": output}


def _bearer_secret(headers: Mapping[str, str | None]) -> str | None:
    """The token of an ``Authorization``/``cf-aig-authorization`` bearer header, if any."""
    for key, value in headers.items():
        if key.lower() in ("authorization", "cf-aig-authorization") and value and value.startswith("Bearer "):
            return value[len("Bearer ") :]
    return None


def _require_httpx() -> Any:
    return require_httpx("anthropic-messages", "anthropic")


async def _body_chunks(response: Any) -> AsyncIterator[bytes]:
    """The answer's bytes; a connection lost while reading fails as Node's fetch does
    (``terminated``)."""
    httpx = _require_httpx()
    try:
        async for chunk in response.aiter_bytes():
            yield chunk
    except httpx.TransportError as error:
        raise _StreamFailure("terminated") from error


async def _close(client: Any) -> None:
    if client is not None:
        await client.aclose()


def _error_text(error: BaseException, secret: str | None) -> str:
    """A failure's ``errorMessage``: its own text (pi-ai's ``error.message``), the key redacted."""
    return redact_key(str(error) or type(error).__name__, secret)
