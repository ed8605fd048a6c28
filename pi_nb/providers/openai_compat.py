"""``OpenAICompatModel``: pi-ai 0.85.0's ``openai-completions`` provider (Chat Completions).

OpenAI itself, OpenRouter, DeepSeek, Z.ai, Together, NVIDIA, Cloudflare, Hugging Face, Ollama,
vLLM, llama.cpp's server, LM Studio...: they all speak ``POST {base_url}/chat/completions`` with
``stream: true``, each with its own quirks. This module sends what pi-ai sends and records what it
records, as Pi's agent calls it (``streamSimple``):

* :func:`get_compat` resolves the quirks: detected from the provider name and the base URL, then
  overridden by the catalog's ``compat`` flags (developer role, ``store``, ``max_tokens`` or
  ``max_completion_tokens``, the thinking format, strict tools, session affinity headers...);
* :func:`build_params` writes the request body (max tokens from the model's limit clamped to the
  room the context leaves, the thinking level clamped to the model's levels and mapped through its
  ``thinkingLevelMap``, prompt cache key, Anthropic-style cache markers where routed to Claude);
* the message conversion (pi-ai's ``convertMessages``) turns Pi messages into Chat Completions
  messages (through the shared ``transform_messages``: foreign thinking as text, images dropped
  for text-only models, tool-call ids normalised, missing tool results filled), sending the
  model's own reasoning back in the field it came in or as ``reasoning_details``;
* the stream is read as the OpenAI JavaScript SDK reads it (an event counts only once its blank
  line arrives; ``[DONE]`` ends it; an ``error`` object inside it fails the turn), and the answer
  is assembled as pi-ai assembles it (usage with cache reads taken out of ``input``, finish
  reasons, reasoning fields, ``reasoning_details`` merged, tool-call deltas);
* failures become an ``error`` message whose text is pi-ai's (``400: {"message":...}``,
  ``400 status code (no body)``...), which :func:`pi_nb.is_context_overflow` reads.

The request goes through the ``openai`` SDK (auth, headers, HTTP errors; no SDK retries: a failed
request is retried by :mod:`pi_nb.providers.provider_retry`, pi-ai's policy, none by default as in
Pi). The SSE body is read from the raw response by the shared
:func:`~pi_nb.providers._stream_common.iter_openai_sse_json`, the JavaScript SDK's reading (the
Python SDK parses the end of a body, in-stream errors and a ``data:`` line that is not JSON
differently).

The API key is resolved per request (``RemoteModel.resolve_auth``: the agent dir's ``auth.json``,
then the variable named by ``api_key_env``; GitHub Copilot's token also brings its base URL); it is never
stored in a message, a session or an output (a server that echoes it in an error has it redacted).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, cast

from pi_nb._js import js_json_parse, js_stringify, js_truthy
from pi_nb.messages import AssistantContent, AssistantMessage, ErrorReason, ThinkingContent
from pi_nb.providers._pi_ai_util import (
    append_grammar_tool_input_json_delta,
    clamp_openai_prompt_cache_key,
    client_api_key,
    cloudflare_ai_gateway_auth,
    create_grammar_tool_input_properties,
    get_grammar_tool_input,
    get_json_schema_tool_parameters,
    provider_attribution_headers,
    resolve_cache_retention,
    resolve_grammar_constrained_sampling,
    resolve_json_schema_strict_sampling,
    sanitize_surrogates,
    short_hash,
)
from pi_nb.providers._stream_common import (
    CostFunction,
    JsApiError,
    api_error_message,
    apply_cost,
    iter_openai_sse_json,
    js_shaped_error_from,
    js_string,
    parse_streaming_json,
    redact_key,
    require_openai,
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
    build_base_options,
    clamp_thinking_budget_to_answer_room,
    clamp_thinking_level,
    pi_user_agent,
    thinking_budget_for_level,
)
from pi_nb.providers.transform_messages import transform_messages

__all__ = [
    "OpenAICompatModel",
    "build_params",
    "convert_tools",
    "get_compat",
    "supports_developer_role",
    "to_openai_messages",
]

# Typing: the Chat Completions wire JSON (the request body, its messages, each streamed chunk),
# the pi-ai model dict and its compat flags are open JSON (``dict[str, Any]``), read field by field
# with pi-ai's tolerance of missing or odd fields. What the stream produces is typed: the
# ``AssistantMessage``, its content blocks and the events.

JsonDict = dict[str, Any]


def _require_openai() -> Any:
    return require_openai("OpenAI-compatible")


# --- compat -------------------------------------------------------------------------------------


def detect_compat(model: Mapping[str, Any]) -> JsonDict:
    """pi-ai's ``detectCompat``: the quirks of a server known from its provider name or base URL."""
    provider = model.get("provider") or ""
    base_url = model.get("baseUrl") or ""
    mid = model.get("id") or ""
    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base_url or "open.bigmodel.cn" in base_url
    is_together = provider == "together" or "api.together.ai" in base_url or "api.together.xyz" in base_url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base_url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in base_url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base_url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base_url
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base_url
    is_ant_ling = provider == "ant-ling" or "api.ant-ling.com" in base_url
    is_deepseek = provider == "deepseek" or "deepseek.com" in base_url.lower()
    is_chutes = "chutes.ai" in base_url
    is_grok = provider == "xai" or "api.x.ai" in base_url
    non_standard = (
        is_nvidia
        or provider == "cerebras"
        or "cerebras.ai" in base_url
        or is_grok
        or is_together
        or is_chutes
        or is_deepseek
        or is_zai
        or is_moonshot
        or provider == "opencode"
        or "opencode.ai" in base_url
        or is_cf_workers
        or is_cf_gateway
        or is_ant_ling
    )
    use_max_tokens = (
        is_chutes
        or is_deepseek
        or is_moonshot
        or is_cf_gateway
        or is_together
        or is_nvidia
        or is_ant_ling
        or is_zai
    )
    developer_model = is_openrouter and (mid.startswith("anthropic/") or mid.startswith("openai/"))
    if is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif is_together:
        thinking_format = "together"
    elif is_ant_ling:
        thinking_format = "ant-ling"
    elif is_openrouter:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": developer_model or (not non_standard and not is_openrouter),
        "supportsReasoningEffort": not (
            is_grok or is_zai or is_moonshot or is_together or is_cf_gateway or is_nvidia or is_ant_ling
        ),
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking_format,
        "openRouterRouting": {},
        "vercelGatewayRouting": {},
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        "supportsThinkingTokenBudget": False,
        "thinkingTokenBudgetField": None,
        "supportsStrictMode": not (is_moonshot or is_together or is_cf_gateway or is_nvidia),
        "supportsOpenAIGrammarTools": False,
        "cacheControlFormat": "anthropic"
        if provider == "openrouter" and mid.startswith("anthropic/")
        else None,
        "sendSessionAffinityHeaders": False,
        "deferredToolsMode": None,
        "sessionAffinityFormat": "openrouter" if is_openrouter else "openai",
        "supportsLongCacheRetention": not (
            is_together or is_cf_workers or is_cf_gateway or is_nvidia or is_ant_ling
        ),
        "vllmPriority": None,
    }


def get_compat(model: Mapping[str, Any]) -> JsonDict:
    """pi-ai's ``getCompat``: the detected quirks, each overridden by the model's ``compat`` flag
    when it sets one (``openRouterRouting`` and ``vllmPriority`` come from ``compat`` only)."""
    detected = detect_compat(model)
    compat = model.get("compat")
    if not compat:
        return detected
    out = {key: compat[key] if compat.get(key) is not None else value for key, value in detected.items()}
    out["openRouterRouting"] = (
        compat.get("openRouterRouting") if compat.get("openRouterRouting") is not None else {}
    )
    out["vllmPriority"] = compat.get("vllmPriority")
    return out


def supports_developer_role(provider: str, base_url: str | None, model_id: str) -> bool:
    """Whether a server takes the ``developer`` system role (sent for reasoning models), as pi-ai
    detects it from the provider name and the base URL."""
    return bool(
        detect_compat({"provider": provider, "baseUrl": base_url or "", "id": model_id})[
            "supportsDeveloperRole"
        ]
    )


# --- reasoning details --------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_reasoning_detail(detail: Any) -> bool:
    """pi-ai's ``isOpenAIReasoningDetail``: one ``reasoning_details`` entry (OpenRouter's shape)."""
    if not isinstance(detail, dict):
        return False
    if not (detail.get("id") is None or isinstance(detail["id"], str)):
        return False
    if "format" in detail and not isinstance(detail["format"], str):
        return False
    if "index" in detail and not _is_number(detail["index"]):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        return isinstance(detail.get("text"), str) and (
            detail.get("signature") is None or isinstance(detail["signature"], str)
        )
    return False


def _parse_reasoning_details(signature: Any) -> list[Any] | None:
    if not isinstance(signature, str) or not signature:
        return None
    try:
        parsed = js_json_parse(signature)
    except (ValueError, RecursionError):
        return None
    if isinstance(parsed, list) and parsed and all(is_reasoning_detail(d) for d in parsed):
        return parsed
    return None


def _parse_legacy_encrypted_detail(signature: Any) -> JsonDict | None:
    if not isinstance(signature, str) or not signature:
        return None
    try:
        parsed = js_json_parse(signature)
    except (ValueError, RecursionError):
        return None
    if (
        is_reasoning_detail(parsed)
        and parsed.get("type") == "reasoning.encrypted"
        and isinstance(parsed.get("id"), str)
        and parsed["id"]
        and parsed["data"]
    ):
        return dict(parsed)
    return None


def _assign(target: JsonDict, key: str, source: Mapping[str, Any]) -> None:
    """``target[key] = source[key]`` with JavaScript's ``undefined``: a key the source lacks is
    removed from the target (``JSON.stringify`` leaves it out)."""
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _fill_common_fields(target: JsonDict, source: Mapping[str, Any]) -> None:
    if target.get("id") is None:  # target.id ??= source.id
        _assign(target, "id", source)
    if not js_truthy(target.get("format")):  # target.format ||= source.format
        _assign(target, "format", source)
    if target.get("index") is None:  # target.index ??= source.index
        _assign(target, "index", source)


def append_reasoning_detail(details: list[JsonDict], detail: Mapping[str, Any]) -> None:
    """pi-ai's ``appendOpenAIReasoningDetail``: consecutive text (or summary) deltas merge into one
    entry, the first signature kept; encrypted entries stay separate."""
    last = details[-1] if details else None
    kind = detail.get("type")
    if last is not None and kind == "reasoning.text" and last.get("type") == "reasoning.text":
        last["text"] += detail["text"]
        if not js_truthy(last.get("signature")):  # lastDetail.signature ||= detail.signature
            _assign(last, "signature", detail)
        _fill_common_fields(last, detail)
        return
    if last is not None and kind == "reasoning.summary" and last.get("type") == "reasoning.summary":
        last["summary"] += detail["summary"]
        _fill_common_fields(last, detail)
        return
    details.append(dict(detail))


# --- messages and tools -------------------------------------------------------------------------

_REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_text")


def _has_tool_history(messages: Sequence[Mapping[str, Any]]) -> bool:
    for msg in messages:
        if msg.get("role") == "toolResult":
            return True
        if msg.get("role") == "assistant" and any(
            isinstance(b, Mapping) and b.get("type") == "toolCall" for b in msg.get("content") or []
        ):
            return True
    return False


def _deferred_tool_names(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for msg in messages:
        if msg.get("role") == "toolResult":
            for name in msg.get("addedToolNames") or []:
                if name not in names:
                    names.append(name)
    return names


def _normalize_id_chars(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", text)


def _js_len(text: str) -> int:
    """``text.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _js_slice(text: str, end: int) -> str:
    """``text.slice(0, end)`` in UTF-16 code units."""
    units = text.encode("utf-16-le", "surrogatepass")[: 2 * max(0, end)]
    return units.decode("utf-16-le", "surrogatepass")


def normalize_tool_call_id(call_id: str, model: Mapping[str, Any]) -> str:
    """Chat Completions' tool-call ids for a call made by another model: a Responses-style
    ``{call_id}|{item_id}`` pair becomes ``{call_id}_{item_id}`` in the allowed characters (at most
    40, else shortened with a hash); OpenAI's own ids are cut to 40."""
    if "|" in call_id:
        head, _, tail = call_id.partition("|")
        head, tail = _normalize_id_chars(head), _normalize_id_chars(tail)
        combined = f"{head}_{tail}" if tail else head
        if _js_len(combined) <= 40:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{_js_slice(head, max(1, 40 - len(digest) - 1))}_{digest}"
    if model.get("provider") == "openai":
        return _js_slice(call_id, 40) if _js_len(call_id) > 40 else call_id
    return call_id


def _image_part(block: Mapping[str, Any]) -> JsonDict:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block.get('mimeType')};base64,{block.get('data')}"},
    }


def _text_of(block: Mapping[str, Any]) -> str:
    text = block.get("text")
    return text if isinstance(text, str) else ""


def _convert_messages(
    model: Mapping[str, Any],
    context: Context,
    compat: Mapping[str, Any],
    grammar_inputs: Mapping[str, str] | None = None,
) -> list[JsonDict]:
    """pi-ai's ``convertMessages``: the Chat Completions ``messages`` for one model."""
    params: list[JsonDict] = []
    transformed = transform_messages(
        context.messages, model, lambda call_id, target, _msg: normalize_tool_call_id(call_id, target)
    )
    if context.system_prompt:
        system_role = (
            "developer" if model.get("reasoning") and compat.get("supportsDeveloperRole") else "system"
        )
        params.append({"role": system_role, "content": sanitize_surrogates(context.system_prompt)})

    last_role: str | None = None
    i = 0
    while i < len(transformed):
        msg = transformed[i]
        role = msg.get("role")
        if compat.get("requiresAssistantAfterToolResult") and last_role == "toolResult" and role == "user":
            params.append({"role": "assistant", "content": "I have processed the tool results."})
        if role == "user":
            content = msg.get("content")
            if isinstance(content, str):
                params.append({"role": "user", "content": sanitize_surrogates(content)})
            else:
                parts: list[JsonDict] = []
                for block in content or []:
                    if block.get("type") == "text":
                        parts.append({"type": "text", "text": sanitize_surrogates(_text_of(block))})
                    else:
                        parts.append(_image_part(block))
                if not parts:
                    i += 1
                    continue
                params.append({"role": "user", "content": parts})
        elif role == "assistant":
            wire = _assistant_message(model, msg, compat, grammar_inputs or {})
            if wire is None:
                i += 1
                continue
            params.append(wire)
        elif role == "toolResult":
            i, last_role = _tool_results(model, context, compat, transformed, i, params)
            continue
        last_role = role
        i += 1
    return params


def to_openai_messages(
    context: Context,
    *,
    supports_images: bool = True,
    target: tuple[str, str, str] | None = None,
    system_role: str = "system",
) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Chat Completions messages with the standard quirks (no catalog model
    at hand): ``target`` is the ``(provider, api, model id)`` the request goes to (its own turns send
    their reasoning back; another model's thinking becomes text); ``system_role`` ``"developer"``
    for a reasoning model whose server takes that role. A request converts its history with the
    catalog model's own compat instead."""
    provider, api, model_id = target if target is not None else ("", "openai-completions", "")
    model: JsonDict = {
        "provider": provider,
        "api": api,
        "id": model_id,
        "input": ["text", "image"] if supports_images else ["text"],
        "reasoning": system_role == "developer",
        "baseUrl": "",
    }
    compat = {**detect_compat(model), "supportsDeveloperRole": system_role == "developer"}
    return _convert_messages(model, context, compat)


def _assistant_message(
    model: Mapping[str, Any],
    msg: Mapping[str, Any],
    compat: Mapping[str, Any],
    grammar_inputs: Mapping[str, str],
) -> JsonDict | None:
    out: JsonDict = {
        "role": "assistant",
        "content": "" if compat.get("requiresAssistantAfterToolResult") else None,
    }
    blocks = [b for b in msg.get("content") or [] if isinstance(b, Mapping)]
    text_parts = [
        {"type": "text", "text": sanitize_surrogates(_text_of(b))}
        for b in blocks
        if b.get("type") == "text" and _text_of(b).strip()
    ]
    text = "".join(p["text"] for p in text_parts)
    thinking = [b for b in blocks if b.get("type") == "thinking"]
    calls = [b for b in blocks if b.get("type") == "toolCall"]
    signed = next(
        (
            d
            for d in (_parse_reasoning_details(b.get("thinkingSignature")) for b in thinking)
            if d is not None
        ),
        None,
    )
    legacy = [
        d for d in (_parse_legacy_encrypted_detail(c.get("thoughtSignature")) for c in calls) if d is not None
    ]
    preserved: list[Any] | None = signed if signed is not None else (legacy or None)
    non_empty = [b for b in thinking if isinstance(b.get("thinking"), str) and b["thinking"].strip()]
    if non_empty:
        if compat.get("requiresThinkingAsText"):
            joined = "\n\n".join(sanitize_surrogates(b["thinking"]) for b in non_empty)
            out["content"] = [{"type": "text", "text": joined}, *text_parts]
        else:
            if text:
                out["content"] = text
            if preserved is None:
                signature = non_empty[0].get("thinkingSignature")
                if model.get("provider") == "opencode-go" and signature == "reasoning":
                    signature = "reasoning_content"
                if isinstance(signature, str) and signature in _REASONING_FIELDS:
                    out[signature] = "\n".join(b["thinking"] for b in non_empty)
    elif text:
        out["content"] = text
    if calls:
        out["tool_calls"] = [_wire_tool_call(c, grammar_inputs) for c in calls]
    if preserved is not None:
        out["reasoning_details"] = preserved
    if (
        compat.get("requiresReasoningContentOnAssistantMessages")
        and model.get("reasoning")
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    content = out["content"]
    if not content and not out.get("tool_calls"):
        return None
    return out


def _tool_results(
    model: Mapping[str, Any],
    context: Context,
    compat: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]],
    start: int,
    params: list[JsonDict],
) -> tuple[int, str]:
    """A run of consecutive tool results: one ``tool`` message each, then their images as one user
    message (models that take images), then Kimi's deferred tools. Returns the next index and the
    role the run counts as (``user`` when the images followed)."""
    images: list[JsonDict] = []
    deferred: list[str] = []
    j = start
    while j < len(messages) and messages[j].get("role") == "toolResult":
        tool_msg = messages[j]
        content = [b for b in tool_msg.get("content") or [] if isinstance(b, Mapping)]
        text = "\n".join(_text_of(b) for b in content if b.get("type") == "text")
        has_images = any(b.get("type") == "image" for b in content)
        result_text = text if text else ("(see attached image)" if has_images else "(no tool output)")
        item: JsonDict = {
            "role": "tool",
            "content": sanitize_surrogates(result_text),
            "tool_call_id": tool_msg.get("toolCallId"),
        }
        if compat.get("requiresToolResultName") and tool_msg.get("toolName"):
            item["name"] = tool_msg["toolName"]
        params.append(item)
        if compat.get("deferredToolsMode") == "kimi":
            for name in tool_msg.get("addedToolNames") or []:
                if name not in deferred:
                    deferred.append(name)
        if has_images and "image" in (model.get("input") or []):
            images.extend(_image_part(b) for b in content if b.get("type") == "image")
        j += 1
    if images:
        if compat.get("requiresAssistantAfterToolResult"):
            params.append({"role": "assistant", "content": "I have processed the tool results."})
        params.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
            }
        )
    if deferred:
        by_name = {t["name"]: t for t in context.tools or []}
        tools = [by_name[n] for n in deferred if n in by_name]
        if tools:
            params.append({"role": "system", "tools": convert_tools(tools, compat)})
    return j, "user" if images else "toolResult"


def _wire_tool_call(call: Mapping[str, Any], grammar_inputs: Mapping[str, str]) -> JsonDict:
    """A tool call as sent back: a grammar tool's as a ``custom`` call with its raw input."""
    name = call.get("name")
    prop = grammar_inputs.get(name) if isinstance(name, str) else None
    if isinstance(name, str) and prop is not None:
        raw = get_grammar_tool_input(name, call.get("arguments") or {}, prop)
        return {
            "id": call.get("id"),
            "type": "custom",
            "custom": {"name": name, "input": sanitize_surrogates(raw)},
        }
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": name, "arguments": js_stringify(call.get("arguments"))},
    }


def convert_tools(tools: Sequence[Mapping[str, Any]], compat: Mapping[str, Any]) -> list[JsonDict]:
    """pi-ai's ``convertTools``: function tools, ``strict`` where the server takes the field, and
    grammar tools as ``custom`` tools where the server takes them (``supportsOpenAIGrammarTools``)."""
    strict_ok = compat.get("supportsStrictMode") is not False
    grammar_ok = bool(compat.get("supportsOpenAIGrammarTools"))
    out: list[JsonDict] = []
    for tool in tools:
        grammar = resolve_grammar_constrained_sampling(tool, grammar_ok)
        if grammar:
            out.append(
                {
                    "type": "custom",
                    "custom": {
                        "name": tool.get("name"),
                        "description": tool.get("description"),
                        "format": {
                            "type": "grammar",
                            "grammar": {"syntax": grammar["format"], "definition": grammar["definition"]},
                        },
                    },
                }
            )
            continue
        strict = resolve_json_schema_strict_sampling(tool, strict_ok)
        function: JsonDict = {
            "name": tool.get("name"),
            "description": tool.get("description"),
            "parameters": get_json_schema_tool_parameters(tool, strict),
        }
        if strict_ok:
            function["strict"] = strict if strict is not None else False
        out.append({"type": "function", "function": function})
    return out


# --- cache control ------------------------------------------------------------------------------


def _cache_control(compat: Mapping[str, Any], retention: str) -> JsonDict | None:
    if compat.get("cacheControlFormat") != "anthropic" or retention == "none":
        return None
    if retention == "long" and compat.get("supportsLongCacheRetention"):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _mark_text_content(message: JsonDict, cache_control: JsonDict) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": cache_control}]
        return True
    if not isinstance(content, list):
        return False
    for part in reversed(content):
        if isinstance(part, dict) and part.get("type") == "text":
            part["cache_control"] = cache_control
            return True
    return False


def _apply_cache_control(
    messages: list[JsonDict], tools: list[JsonDict] | None, cache_control: JsonDict
) -> None:
    for message in messages:
        if message.get("role") in ("system", "developer"):
            _mark_text_content(message, cache_control)
            break
    if tools:
        tools[-1]["cache_control"] = cache_control
    for message in reversed(messages):
        if message.get("role") in ("user", "assistant", "tool") and _mark_text_content(
            message, cache_control
        ):
            return


# --- request ------------------------------------------------------------------------------------


def _resolve_template_value(
    model: Mapping[str, Any], effort: str | None, value: Any, budget: int | None
) -> tuple[bool, Any]:
    """``(present, value)`` of one ``chatTemplateArgs`` / ``chatTemplateKwargs`` entry."""
    if not isinstance(value, dict):
        return True, value
    if not effort and value.get("omitWhenOff"):
        return False, None
    if value.get("$var") == "thinking.enabled":
        return True, bool(effort)
    if value.get("$var") == "thinking.budget":
        return budget is not None, budget
    level_map = model.get("thinkingLevelMap") or {}
    key = effort if effort else "off"
    if key not in level_map:
        return effort is not None, effort
    mapped = level_map[key]
    return isinstance(mapped, str), mapped if isinstance(mapped, str) else None


def _template_values(
    model: Mapping[str, Any], effort: str | None, values: Mapping[str, Any], budget: int | None
) -> JsonDict | None:
    out: JsonDict = {}
    for key, value in values.items():
        present, resolved = _resolve_template_value(model, effort, value, budget)
        if present:
            out[key] = resolved
    return out or None


def _mapped(model: Mapping[str, Any], level: str) -> Any:
    """``model.thinkingLevelMap?.[level]`` with ``undefined`` as a missing key (``_MISSING``)."""
    level_map = model.get("thinkingLevelMap") or {}
    return level_map[level] if level in level_map else _MISSING


_MISSING: Any = object()


def _or_default(value: Any, default: Any) -> Any:
    """``value ?? default``."""
    return default if value is _MISSING or value is None else value


def build_params(
    model: Mapping[str, Any],
    context: Context,
    *,
    max_tokens: int | None,
    reasoning_effort: str | None,
    session_id: str | None,
    compat: Mapping[str, Any],
    cache_retention: str,
    temperature: float | None = None,
    tool_choice: Any = None,
    thinking_budgets: Mapping[str, int] | None = None,
    sampling_params: Mapping[str, Any] | None = None,
    grammar_inputs: Mapping[str, str] | None = None,
) -> JsonDict:
    """pi-ai's ``buildParams``: the Chat Completions request body. ``grammar_inputs`` maps each
    grammar tool to the argument holding its raw input (computed from the tools when omitted)."""
    if grammar_inputs is None:
        grammar_inputs = create_grammar_tool_input_properties(
            context.tools, bool(compat.get("supportsOpenAIGrammarTools"))
        )
    messages = _convert_messages(model, context, compat, grammar_inputs)
    cache_control = _cache_control(compat, cache_retention)
    base_url = model.get("baseUrl") or ""
    long_cache = cache_retention == "long" and bool(compat.get("supportsLongCacheRetention"))
    params: JsonDict = {"model": model.get("id"), "messages": messages, "stream": True}
    if ("api.openai.com" in base_url and cache_retention != "none") or long_cache:
        key = clamp_openai_prompt_cache_key(session_id)
        if key is not None:
            params["prompt_cache_key"] = key
    if long_cache:
        params["prompt_cache_retention"] = "24h"
    if compat.get("supportsUsageInStreaming") is not False:
        params["stream_options"] = {"include_usage": True}
    if compat.get("supportsStore"):
        params["store"] = False
    if max_tokens:
        field = "max_tokens" if compat.get("maxTokensField") == "max_tokens" else "max_completion_tokens"
        params[field] = max_tokens
    if temperature is not None:
        params["temperature"] = temperature

    deferred = (
        set(_deferred_tool_names(context.messages)) if compat.get("deferredToolsMode") == "kimi" else set()
    )
    active = (
        [t for t in context.tools or [] if t.get("name") not in deferred]
        if context.tools is not None
        else None
    )
    if active:
        params["tools"] = convert_tools(active, compat)
        if compat.get("zaiToolStream"):
            params["tool_stream"] = True
    elif _has_tool_history(context.messages):
        params["tools"] = []  # Anthropic behind a proxy wants tools when the history has tool calls
    if cache_control is not None:
        _apply_cache_control(messages, params.get("tools"), cache_control)
    if tool_choice:
        params["tool_choice"] = tool_choice
    if compat.get("vllmPriority") is not None:
        params["priority"] = compat["vllmPriority"]

    budget_field = compat.get("thinkingTokenBudgetField") or (
        "thinking_token_budget" if compat.get("supportsThinkingTokenBudget") else None
    )
    budget: int | None = None
    if reasoning_effort and model.get("reasoning"):
        ceiling = (
            params.get("max_tokens") or params.get("max_completion_tokens") or model.get("maxTokens") or 0
        )
        room = clamp_thinking_budget_to_answer_room(
            thinking_budget_for_level(reasoning_effort, thinking_budgets), ceiling
        )
        budget = room if room > 0 else None
    _apply_thinking(params, model, compat, reasoning_effort, budget)
    if budget_field and budget is not None:
        params[budget_field] = budget

    raw_compat = model.get("compat") or {}
    if raw_compat.get("openRouterRouting"):
        params["provider"] = raw_compat["openRouterRouting"]
    routing = raw_compat.get("vercelGatewayRouting")
    if routing and (routing.get("only") or routing.get("order")):
        gateway: JsonDict = {}
        if routing.get("only"):
            gateway["only"] = routing["only"]
        if routing.get("order"):
            gateway["order"] = routing["order"]
        params["providerOptions"] = {"gateway": gateway}
    if sampling_params:
        params.update(sampling_params)
    return params


def _apply_thinking(
    params: JsonDict,
    model: Mapping[str, Any],
    compat: Mapping[str, Any],
    effort: str | None,
    budget: int | None,
) -> None:
    """The thinking fields of ``compat.thinkingFormat`` (pi-ai's branches, in its order)."""
    fmt = compat.get("thinkingFormat")
    reasoning = bool(model.get("reasoning"))
    effort_ok = bool(compat.get("supportsReasoningEffort"))
    off = _mapped(model, "off")
    if fmt == "zai" and reasoning:
        params["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and effort_ok:
            mapped = _mapped(model, effort)
            value = effort if mapped is _MISSING else mapped
            if isinstance(value, str):
                params["reasoning_effort"] = value
    elif fmt == "qwen" and reasoning:
        params["enable_thinking"] = bool(effort)
        if effort and effort_ok:
            value = _or_default(_mapped(model, effort), effort)
            if isinstance(value, str):
                params["reasoning_effort"] = value
    elif fmt == "qwen-chat-template" and reasoning:
        params["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "chat-template" and reasoning:
        values = _template_values(model, effort, compat.get("chatTemplateKwargs") or {}, budget)
        if values:
            params["chat_template_kwargs"] = values
    elif fmt == "baseten" and reasoning:
        values = _template_values(model, effort, compat.get("chatTemplateArgs") or {}, budget)
        if values:
            params["chat_template_args"] = values
        if effort_ok:
            mapped = _mapped(model, effort) if effort else off
            value = effort if mapped is _MISSING else mapped
            if isinstance(value, str):
                params["reasoning_effort"] = value
    elif fmt == "deepseek" and reasoning:
        if effort:
            params["thinking"] = {"type": "enabled"}
        elif off is _MISSING or off is not None:
            params["thinking"] = {"type": "disabled"}
        if effort and effort_ok:
            params["reasoning_effort"] = _or_default(_mapped(model, effort), effort)
    elif fmt == "openrouter" and reasoning:
        if effort:
            params["reasoning"] = {"effort": _or_default(_mapped(model, effort), effort)}
        elif off is _MISSING or off is not None:
            params["reasoning"] = {"effort": _or_default(off, "none")}
    elif fmt == "ant-ling" and reasoning and effort:
        value = _mapped(model, effort)
        if isinstance(value, str):
            params["reasoning"] = {"effort": value}
    elif fmt == "together" and reasoning:
        params["reasoning"] = {"enabled": bool(effort)}
        if effort and effort_ok:
            params["reasoning_effort"] = _or_default(_mapped(model, effort), effort)
    elif fmt == "string-thinking" and reasoning:
        if effort:
            params["thinking"] = _or_default(_mapped(model, effort), effort)
        elif off is _MISSING or off is not None:
            params["thinking"] = _or_default(off, "none")
    elif effort and reasoning and effort_ok:
        params["reasoning_effort"] = _or_default(_mapped(model, effort), effort)
    elif not effort and reasoning and effort_ok and isinstance(off, str):
        params["reasoning_effort"] = off


def _set_header(headers: dict[str, str | None], name: str, value: str | None) -> None:
    """``headers[name] = value`` where names are case-insensitive (as in a ``Headers`` object);
    ``None`` removes the header from the request (the SDK's own one too)."""
    for key in [k for k in headers if k.lower() == name.lower()]:
        del headers[key]
    headers[name] = value


def request_headers(
    model: Mapping[str, Any],
    compat: Mapping[str, Any],
    session_id: str | None,
    extra: Mapping[str, str | None] | None,
    messages: Sequence[Mapping[str, Any]] = (),
) -> dict[str, str | None]:
    """pi-ai's ``createClient`` headers: Pi's User-Agent, the catalog's headers, GitHub Copilot's
    per-request headers (``messages``: the turn's), session affinity (when the server asks for
    it), then the caller's headers (Pi's attribution headers) last."""
    headers: dict[str, str | None] = {}
    for name, value in {"User-Agent": pi_user_agent(), **(model.get("headers") or {})}.items():
        _set_header(headers, name, value)
    if model.get("provider") == "github-copilot":
        for name, value in copilot_dynamic_headers(messages).items():
            _set_header(headers, name, value)
    if session_id and compat.get("sendSessionAffinityHeaders"):
        if compat.get("sessionAffinityFormat") == "openrouter":
            _set_header(headers, "x-session-id", session_id)
        else:
            if compat.get("sessionAffinityFormat") == "openai":
                _set_header(headers, "session_id", session_id)
            _set_header(headers, "x-client-request-id", session_id)
            _set_header(headers, "x-session-affinity", session_id)
    for name, value in (extra or {}).items():
        _set_header(headers, name, value)
    return headers


def provider_auth(provider: str, key: str | None) -> tuple[str | None, dict[str, str | None]]:
    """``(apiKey, headers)`` of a provider's credential as Pi resolves it: the key itself, except
    for Cloudflare's AI Gateway, whose key goes in ``cf-aig-authorization`` (no ``Authorization``)."""
    if provider == "cloudflare-ai-gateway":
        return None, cloudflare_ai_gateway_auth(key) or {}
    return key, {}


# --- errors -------------------------------------------------------------------------------------


def _from_python_sdk(error: BaseException) -> BaseException:
    """A Python SDK (or httpx) error as the JavaScript SDK's, same fields and words."""
    if isinstance(error, (JsApiError, _StreamError)):
        return error
    js = js_shaped_error_from(error)
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return JsApiError(js, dict(headers) if headers is not None else None)


def error_text(error: BaseException) -> str:
    """pi-ai's ``formatProviderError(normalizeProviderError(error))``, plus OpenRouter's
    ``error.metadata.raw`` when the text does not already hold it."""
    return api_error_message("openai-completions", error.js if isinstance(error, JsApiError) else error)


# --- retries ------------------------------------------------------------------------------------


def _provider_error(error: BaseException) -> ProviderFailure | None:
    """What the retry policy reads of a failed request: the JS SDK's ``APIError`` fields."""
    if not isinstance(error, JsApiError):
        return None
    return ProviderFailure(error.status, error.headers, error.message)


# --- usage and stop reasons ---------------------------------------------------------------------


def parse_chunk_usage(raw: Any, cost_function: CostFunction | None) -> Any:
    """pi-ai's ``parseChunkUsage``: cache reads (``prompt_tokens_details.cached_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens``, Kimi's top-level ``cached_tokens``) and cache writes are taken out
    of ``input``; the cost from the model's prices."""
    raw = raw if isinstance(raw, Mapping) else {}

    def num(value: Any) -> Any:  # `value || 0`
        return value if js_truthy(value) else 0

    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    prompt = num(raw.get("prompt_tokens"))
    cache_read: Any = 0
    for value in (details.get("cached_tokens"), raw.get("prompt_cache_hit_tokens"), raw.get("cached_tokens")):
        if value is not None:
            cache_read = value
            break
    cache_write = num(details.get("cache_write_tokens"))
    inp = max(0, prompt - cache_read - cache_write)
    output = num(raw.get("completion_tokens"))
    completion_details = raw.get("completion_tokens_details")
    reasoning = (
        num(completion_details.get("reasoning_tokens")) if isinstance(completion_details, Mapping) else 0
    )
    usage = {
        "input": inp,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "reasoning": reasoning,
        "totalTokens": inp + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    return apply_cost(usage, cost_function)  # type: ignore[arg-type]


def map_stop_reason(reason: Any) -> tuple[str, str | None]:
    """pi-ai's ``mapStopReason``: ``(stopReason, errorMessage)``."""
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {js_string(reason)}"


# --- the model ----------------------------------------------------------------------------------


class _StreamError(Exception):
    """A turn that ended in error after the stream was read (its text is the message)."""


class OpenAICompatModel(RemoteModel):
    """A Chat Completions model. ``base_url`` defaults to ``$OPENAI_BASE_URL`` or OpenAI's.

    ``cost_function`` (optional) turns each usage into its cost (``usage["cost"]``); without it
    costs stay zero. ``requires_finish_reason=False`` accepts a stream that ends without a
    ``finish_reason`` as a normal stop (pi-ai's ``compat.supportsFinishReason: false``, for servers
    known to omit it); by default such a stream is an error, because it is what a connection cut
    mid-answer looks like.

    Retries: none by default, as Pi (its provider retry setting is unset); ``max_retries=`` or
    ``StreamOptions.extra`` ``{"max_retries": n, "max_retry_delay_ms": ms}`` asks for pi-ai's
    retry policy (408, 409, 429, 5xx and failed connections, ``retry-after`` up to 60 s).
    """

    #: what a turn imports, and the pi_nb extra that installs it (the provider table's row)
    sdk_module: ClassVar[str | None] = "openai"
    extra: ClassVar[str] = "openai"

    api = "openai-completions"
    default_provider = "openai"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = "OPENAI_BASE_URL"
    default_api_key_env = "OPENAI_API_KEY"
    requires_finish_reason: bool = True

    def __init__(
        self,
        id: str,
        *,
        requires_finish_reason: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(id, **kwargs)
        self.requires_finish_reason = requires_finish_reason

    def pi_model(self) -> JsonDict:
        """This model as pi-ai's ``Model`` (api ``openai-completions``; OpenAI's URL by default)."""
        model = self.pi_ai_model()
        model["api"] = self.api
        if not model.get("baseUrl"):
            model["baseUrl"] = "https://api.openai.com/v1"
        if not self.requires_finish_reason:
            model["compat"] = {**(model.get("compat") or {}), "supportsFinishReason": False}
        return model

    def _api_key(self, key: str | None, headers: Mapping[str, str | None]) -> str:
        chosen = client_api_key(key, headers)
        if chosen:
            return chosen
        if self.base_url and not self.pi_model_raw:
            return "not-needed"  # a local server (Ollama, llama.cpp) takes any key; the SDK insists on one
        raise RuntimeError(f"No API key for provider: {self.provider}")

    def _client(self, model: Mapping[str, Any], api_key: str, headers: Mapping[str, str | None]) -> Any:
        openai = _require_openai()
        kwargs: JsonDict = {
            "api_key": api_key,
            "base_url": model.get("baseUrl"),
            "timeout": self.timeout,
            "max_retries": 0,  # pi-ai retries itself (retry_provider_request)
            "default_headers": {k: openai.Omit() if v is None else v for k, v in headers.items()},
        }
        client = self.http_client()
        if client is not None:
            kwargs["http_client"] = client
        return openai.AsyncOpenAI(**kwargs)

    def _prepare(
        self, context: Context, opts: StreamOptions
    ) -> tuple[JsonDict, JsonDict, JsonDict, dict[str, str]]:
        """``(pi-ai model, compat, request body, grammar tool inputs)`` for one turn, as
        ``streamSimple`` prepares it."""
        model = self.pi_model()
        compat = get_compat(model)
        grammar_inputs = create_grammar_tool_input_properties(
            context.tools, bool(compat.get("supportsOpenAIGrammarTools"))
        )
        simple: JsonDict = {"maxTokens": opts.max_tokens, "temperature": opts.temperature}
        base = build_base_options(model, dict(context.to_dict()), simple)
        clamped = clamp_thinking_level(model, opts.reasoning) if opts.reasoning else None
        effort = None if clamped == "off" else clamped
        retention = resolve_cache_retention(opts.cache_retention)
        params = build_params(
            model,
            context,
            max_tokens=base["maxTokens"],
            reasoning_effort=effort,
            session_id=opts.session_id,
            compat=compat,
            cache_retention=retention,
            temperature=opts.temperature,
            tool_choice=opts.extra.get("tool_choice"),
            thinking_budgets=opts.extra.get("thinking_budgets"),
            sampling_params=base.get("samplingParams"),
            grammar_inputs=grammar_inputs,
        )
        return model, compat, params, grammar_inputs

    def build_request(self, context: Context, options: StreamOptions | None) -> JsonDict:
        """The request body pi-ai would send for this turn."""
        return self._prepare(context, options or StreamOptions())[2]

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``openai-completions`` ``streamSimple``: text, thinking (from ``reasoning_content``
        / ``reasoning`` / ``reasoning_text``, or ``reasoning_details`` kept as the signature so the
        reasoning can be sent back), tool calls; failures as an ``error`` event."""
        opts = options or StreamOptions()
        output = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        output["stopReason"] = "pending"
        blocks: list[AssistantContent] = output["content"]
        details: list[JsonDict] | None = None
        signal = opts.signal

        def aborted() -> bool:
            return signal is not None and bool(signal.aborted)

        def apply_details(block: ThinkingContent) -> None:
            if details is not None:
                block["thinkingSignature"] = js_stringify(details)

        state = _Turn(output, blocks)
        env_key: str | None = None
        try:
            # the credential first: its base URL (GitHub Copilot's) is the request model's
            auth = await asyncio.to_thread(self.resolve_auth)  # a refresh blocks: off the loop
            env_key = auth.api_key if auth is not None else None
            model, compat, params, grammar_inputs = self._prepare(context, opts)
            state.grammar_inputs = grammar_inputs
            api_key, auth_headers = provider_auth(self.provider, env_key)
            auth_headers = {
                **self.credential_headers(),
                **(auth.headers if auth is not None else {}),
                **auth_headers,
            }
            # Pi's agent: the credential's headers under its attribution headers (transformHeaders)
            extra = provider_attribution_headers(model, opts.session_id, auth_headers) or {}
            retention = resolve_cache_retention(opts.cache_retention)
            affinity_session = None if retention == "none" else opts.session_id
            headers = request_headers(model, compat, affinity_session, extra, context.messages)
            openai = _require_openai()
            client = self._client(model, self._api_key(api_key, extra), headers)

            async def request() -> Any:
                if aborted():
                    # the JS SDK refuses an aborted signal; pi-ai's retry wrapper rethrows it so
                    raise _StreamError("Request aborted")
                try:
                    sdk_stream = await client.post(
                        "/chat/completions",
                        cast_to=object,
                        body=params,
                        stream=True,
                        stream_cls=openai.AsyncStream[object],
                        # headers Pi removes (null) are omitted per request: the SDK checks there
                        options={"headers": {k: openai.Omit() for k, v in headers.items() if v is None}},
                    )
                except Exception as error:
                    raise _from_python_sdk(error) from error
                return sdk_stream.response

            response = await retry_provider_request(
                request,
                _provider_error,
                max_retries=int(opts.extra.get("max_retries", self.max_retries) or 0),
                max_retry_delay_ms=opts.extra.get("max_retry_delay_ms"),
                signal=signal,
            )
            yield {"type": "start", "partial": snapshot_message(output)}
            try:
                async for chunk in iter_openai_sse_json(response):
                    if aborted():
                        break
                    for event in state.chunk(chunk, self, model):
                        yield event
                    if state.new_details:
                        for detail in state.new_details:
                            details = details if details is not None else []
                            append_reasoning_detail(details, detail)
                        state.new_details = []
            except Exception as error:
                raise _from_python_sdk(error) from error
            finally:
                await response.aclose()
            for block in list(blocks):
                if block["type"] == "thinking":
                    apply_details(block)
                for event in state.finish_block(block):
                    yield event
            if aborted():
                raise _StreamError("Request was aborted")
            if output["stopReason"] == "aborted":
                raise _StreamError("Request was aborted")
            if not state.has_finish_reason and not compat.get("supportsFinishReason"):
                output["stopReason"] = "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop"
            if output["stopReason"] == "error":
                raise _StreamError(output.get("errorMessage") or "Provider returned an error stop reason")
            if (compat.get("supportsFinishReason") and not state.has_finish_reason) or output[
                "stopReason"
            ] == "pending":
                raise _StreamError("Stream ended without finish_reason")
            yield {"type": "done", "reason": output["stopReason"], "message": output}
        except Exception as error:
            for block in blocks:
                if block["type"] == "thinking":
                    apply_details(block)
            state.strip_scratch()
            reason: ErrorReason = "aborted" if aborted() else "error"
            output["stopReason"] = reason
            text = error_text(_from_python_sdk(error))
            # pi_nb never repeats the key a request used (a server may echo it in its error)
            output["errorMessage"] = redact_key(text, env_key)
            yield {"type": "error", "reason": reason, "error": output}


class _Turn:
    """The blocks of one streamed answer as pi-ai builds them (text, thinking, tool calls by
    stream index or id), with the tool calls' raw argument text beside them."""

    def __init__(self, output: AssistantMessage, blocks: list[AssistantContent]) -> None:
        self.output = output
        self.blocks = blocks
        self.text: Any = None
        self.thinking: Any = None
        self.has_finish_reason = False
        self.by_index: dict[Any, Any] = {}
        self.by_id: dict[Any, Any] = {}
        self.partial_args: dict[int, str] = {}  # id(block) -> streamed argument text
        self.stream_index: dict[int, Any] = {}  # id(block) -> stream index
        self.new_details: list[JsonDict] = []
        self.grammar_inputs: Mapping[str, str] = {}
        self.custom: dict[int, tuple[str, dict[str, Any]]] = {}  # id(block) -> (argument, JSON buffer)

    def _index(self, block: Any) -> int:
        return next(i for i, b in enumerate(self.blocks) if b is block)

    def _event(self, kind: str, block: Any, **fields: Any) -> AssistantMessageEvent:
        return {
            "type": kind,
            "contentIndex": self._index(block),
            **fields,
            "partial": snapshot_message(self.output),
        }  # type: ignore[return-value]

    def chunk(
        self, chunk: Any, model: OpenAICompatModel, pi_model: Mapping[str, Any]
    ) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        if not isinstance(chunk, dict):
            return events
        output: Any = self.output
        if not js_truthy(output.get("responseId")):
            if "id" in chunk:
                output["responseId"] = chunk["id"]
            else:
                output.pop("responseId", None)
        name = chunk.get("model")
        if isinstance(name, str) and name and name != model.id and not js_truthy(output.get("responseModel")):
            output["responseModel"] = name
        if js_truthy(chunk.get("usage")):
            output["usage"] = parse_chunk_usage(chunk["usage"], model.cost_function)
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not js_truthy(choice):
            return events
        if not isinstance(choice, dict):
            return events
        if not js_truthy(chunk.get("usage")) and js_truthy(choice.get("usage")):
            output["usage"] = parse_chunk_usage(choice["usage"], model.cost_function)
        finish = choice.get("finish_reason")
        if js_truthy(finish):
            output["rawStopReason"] = finish
            stop, message = map_stop_reason(finish)
            output["stopReason"] = stop
            if message:
                output["errorMessage"] = message
            self.has_finish_reason = True
        delta = choice.get("delta")
        if not js_truthy(delta) or not isinstance(delta, dict):
            return events
        content = delta.get("content")
        if content is not None and _has_length(content):
            events.extend(self._text(js_string(content)))
        field = next(
            (f for f in ("reasoning_content", "reasoning", "reasoning_text") if _non_empty_str(delta.get(f))),
            None,
        )
        if field is not None:
            signature = (
                "reasoning_content"
                if pi_model.get("provider") == "opencode-go" and field == "reasoning"
                else field
            )
            block = self._ensure_thinking(signature, events)
            block["thinking"] += delta[field]
            events.append(self._event("thinking_delta", block, delta=delta[field]))
        calls = delta.get("tool_calls")
        if js_truthy(calls):
            for call in calls if isinstance(calls, list) else []:
                if call is None:
                    raise TypeError("Cannot read properties of null (reading 'index')")
                events.extend(self._tool_call(call if isinstance(call, dict) else {}))
        reasoning_details = delta.get("reasoning_details")
        if isinstance(reasoning_details, list):
            for detail in reasoning_details:
                if not is_reasoning_detail(detail):
                    continue
                self._ensure_thinking("", events)
                self.new_details.append(detail)
        return events

    def _text(self, piece: str) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        if self.text is None:
            self.text = {"type": "text", "text": ""}
            self.blocks.append(self.text)
            events.append(self._event("text_start", self.text))
        self.text["text"] += piece
        events.append(self._event("text_delta", self.text, delta=piece))
        return events

    def _ensure_thinking(self, signature: str, events: list[AssistantMessageEvent]) -> Any:
        if self.thinking is None:
            self.thinking = {"type": "thinking", "thinking": "", "thinkingSignature": signature}
            self.blocks.append(self.thinking)
            events.append(self._event("thinking_start", self.thinking))
        return self.thinking

    def _tool_call(self, call: Mapping[str, Any]) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        index = call.get("index") if _is_number(call.get("index")) else None
        function = call.get("function") if isinstance(call.get("function"), dict) else None
        custom = call.get("custom") if isinstance(call.get("custom"), dict) else None
        name = _or_default(function.get("name") if function else None, None)
        if name is None:
            name = _or_default(custom.get("name") if custom else None, "")
        call_id = call.get("id")
        block = self.by_index.get(index) if index is not None else None
        if block is None and js_truthy(call_id):
            block = self.by_id.get(call_id)
        if block is None:
            # a custom (grammar) call keeps its raw input under the tool's input argument
            prop = (
                (self.grammar_inputs.get(name) or "input")
                if custom is not None and function is None
                else None
            )
            block = {
                "type": "toolCall",
                "id": call_id if js_truthy(call_id) else "",
                "name": name,
                "arguments": {prop: ""} if prop is not None else {},
            }
            if prop is not None:
                self.custom[id(block)] = (prop, {"input": "", "started": False, "closed": False})
            else:
                self.partial_args[id(block)] = ""
            if index is not None:
                self.by_index[index] = block
                self.stream_index[id(block)] = index
            if js_truthy(call_id):
                self.by_id[call_id] = block
            self.blocks.append(cast(AssistantContent, block))
            events.append(self._event("toolcall_start", block))
        if index is not None and self.stream_index.get(id(block)) is None:
            self.stream_index[id(block)] = index
            self.by_index[index] = block
        if js_truthy(call_id):
            self.by_id[call_id] = block
        if not block["name"] and name:
            block["name"] = name
        if custom is not None and function is None and id(block) not in self.custom:
            prop = self.grammar_inputs.get(block["name"]) or "input"
            block["arguments"] = {prop: ""}
            self.custom[id(block)] = (prop, {"input": "", "started": False, "closed": False})
            self.partial_args.pop(id(block), None)
        if not block["id"] and js_truthy(call_id):
            block["id"] = call_id
        piece = ""
        arguments = function.get("arguments") if function else None
        custom_input = custom.get("input") if custom else None
        if js_truthy(arguments):
            piece = arguments if isinstance(arguments, str) else js_string(arguments)
            self.partial_args[id(block)] = self.partial_args.get(id(block), "") + piece
            block["arguments"] = parse_streaming_json(self.partial_args[id(block)])
        elif js_truthy(custom_input):
            text = custom_input if isinstance(custom_input, str) else js_string(custom_input)
            piece = self._append_custom(block, self._custom_input(block) + text, False) or ""
        events.append(self._event("toolcall_delta", block, delta=piece))
        return events

    def _custom_input(self, block: Any) -> str:
        state = self.custom.get(id(block))
        if state is None:
            return ""
        value = block["arguments"].get(state[0])
        return value if isinstance(value, str) else ""

    def _append_custom(self, block: Any, next_input: str, close: bool) -> str | None:
        state = self.custom.get(id(block))
        if state is None:
            return None
        prop, buffer = state
        delta = append_grammar_tool_input_json_delta(buffer, prop, next_input, close)
        block["arguments"] = {prop: next_input}
        return delta

    def finish_block(self, block: Any) -> list[AssistantMessageEvent]:
        if block["type"] == "text":
            return [self._event("text_end", block, content=block["text"])]
        if block["type"] == "thinking":
            return [self._event("thinking_end", block, content=block["thinking"])]
        events: list[AssistantMessageEvent] = []
        if id(block) in self.custom:
            delta = self._append_custom(block, self._custom_input(block), True)
            if delta is not None:
                events.append(self._event("toolcall_delta", block, delta=delta))
            del self.custom[id(block)]
        else:
            block["arguments"] = parse_streaming_json(self.partial_args.pop(id(block), None))
        events.append(self._event("toolcall_end", block, toolCall=dict(block)))
        return events

    def strip_scratch(self) -> None:
        self.partial_args.clear()
        self.stream_index.clear()
        self.custom.clear()


def _has_length(value: Any) -> bool:
    """``value.length > 0`` (strings and arrays; anything else has no length)."""
    if isinstance(value, str):
        return _js_len(value) > 0
    if isinstance(value, list):
        return len(value) > 0
    return False


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and len(value) > 0
