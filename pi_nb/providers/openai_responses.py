"""``OpenAIResponsesProvider``: models on the Responses API (``openai-responses``), as pi-ai 0.85.0 runs them.

This is pi-ai's ``openai-responses`` provider (and the shared Responses code of
``openai-responses-shared``), as Pi's agent calls it through ``streamSimple``:

- the client: the ``openai`` SDK at the model's base URL (``POST {baseUrl}/responses``), Pi's
  ``User-Agent``, the catalog entry's headers, the session headers of the model's
  ``sessionAffinityFormat`` (``session_id`` + ``x-client-request-id`` for OpenAI, only
  ``x-client-request-id`` for ``openai-nosession``, ``x-session-id`` for OpenRouter), then the
  headers Pi's agent adds for the provider (attribution, OpenCode's session, Cloudflare's gateway
  key) last; the SDK does no retries of its own, the request is retried by
  :mod:`pi_nb.providers.provider_retry` (pi-ai's ``retryProviderRequest``; ``max_retries`` times,
  none by default, as in Pi);
- the body (``buildParams``): the history as Responses input items (``convertResponsesMessages``
  over pi-ai's ``transformMessages``), ``stream: true``, ``store: false``, the session id as
  ``prompt_cache_key`` (clamped), ``prompt_cache_retention: "24h"`` for long retention when the
  model takes it, ``max_output_tokens`` (the model's limit clamped to the context left, at least
  16), the tools (``strict`` when the model has strict mode), and ``reasoning``: the level through
  the model's ``thinkingLevelMap`` with ``summary: "auto"`` and the encrypted reasoning included,
  or with thinking off the map's ``off`` value (``"none"`` by default; nothing when the map says
  ``off: null``); xAI always gets the encrypted reasoning;
- the stream, read as the JavaScript SDK reads it (the Chat Completions provider's reader: a
  ``data:`` line that is not JSON fails with V8's ``JSON.parse`` text), then
  ``processResponsesStream``: reasoning items become thinking blocks whose
  ``thinkingSignature`` is the whole item as JSON (sent back verbatim next turn); text items keep
  their id and phase in ``textSignature``; tool calls are ``"{call_id}|{item_id}"``; the terminal
  response gives usage (cached and cache-write tokens taken out of ``input``), cost (times the
  service tier's multiplier) and the stop reason; an ``error`` event, ``response.failed``, a stream
  without a terminal event or an HTTP error end in an ``error`` message with pi-ai's text
  (``OpenAI API error (400): ...`` for HTTP errors).

The key comes from the provider's environment variable; it is never stored (a server that echoes
it in an error has it redacted).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, cast

from pi_nb._js import js_json_parse_v8, js_stringify, js_truthy
from pi_nb.messages import (
    AssistantContent,
    AssistantMessage,
    ErrorEvent,
    StopReason,
    ToolCall,
)
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
    split_deferred_tools,
)
from pi_nb.providers._stream_common import (
    api_error_message,
    apply_cost,
    block_delta_event,
    block_start_event,
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
    clamp_thinking_level,
    pi_user_agent,
    simple_stream_options,
)
from pi_nb.providers.transform_messages import transform_messages

__all__ = [
    "OPENAI_TOOL_CALL_PROVIDERS",
    "OpenAIResponsesProvider",
    "convert_responses_messages",
    "convert_responses_tools",
    "get_compat",
    "short_hash",
    "to_responses_input",
]

# Typing: the Responses API wire JSON (the request body, its input items, each streamed event) and
# the pi-ai model dict are ``dict[str, Any]``: open JSON, not modelled here. The session's messages
# are read as JSON too: they reach the provider unvalidated and are read field by field, with Pi's
# tolerance of missing or odd fields. What the stream produces is typed: the ``AssistantMessage``,
# its content blocks and the events.

OPENAI_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
_MIN_OUTPUT_TOKENS = 16  # the Responses API rejects max_output_tokens below 16
# providers whose key travels in a header of their own (pi-ai's cloudflare-auth: the AI Gateway)
_HEADER_AUTH_PROVIDERS = frozenset({"cloudflare-ai-gateway"})


def _require_openai() -> Any:
    return require_openai("OpenAI Responses")


# ---------------------------------------------------------------- compat


def get_compat(model: Mapping[str, Any]) -> dict[str, Any]:
    """pi-ai's ``getCompat``: the catalog entry's ``compat`` flags with their defaults."""
    compat: Mapping[str, Any] = model.get("compat") or {}

    def flag(name: str, default: Any) -> Any:
        value = compat.get(name)
        return default if value is None else value

    base_url = str(model.get("baseUrl") or "")
    affinity = (
        "openrouter" if model.get("provider") == "openrouter" or "openrouter.ai" in base_url else "openai"
    )
    return {
        "supportsDeveloperRole": flag("supportsDeveloperRole", True),
        "sessionAffinityFormat": flag("sessionAffinityFormat", affinity),
        "supportsLongCacheRetention": flag("supportsLongCacheRetention", True),
        "supportsStrictMode": flag("supportsStrictMode", False),
        "supportsOpenAIGrammarTools": flag("supportsOpenAIGrammarTools", False),
        "supportsAdditionalTools": flag("supportsAdditionalTools", False),
        "supportsToolSearch": flag("supportsToolSearch", False),
        "supportsExplicitPromptCacheMode": flag("supportsExplicitPromptCacheMode", False),
        "supportsMaxOutputTokens": flag("supportsMaxOutputTokens", True),
    }


# ---------------------------------------------------------------- text signatures


def _text_signature(item_id: str, phase: Any) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return js_stringify(payload)


def _parse_text_signature(signature: Any) -> tuple[str, str | None] | None:
    if not isinstance(signature, str) or not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


# ---------------------------------------------------------------- message conversion


def _normalize_id_part(part: str) -> str:
    sanitized = re.sub(r"[^a-zA-Z0-9_-]", "_", part)[:64]
    return re.sub(r"_+$", "", sanitized)


def _tool_result_output(model: Mapping[str, Any], content: Sequence[Mapping[str, Any]]) -> Any:
    text = "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    images = [b for b in content if b.get("type") == "image"]
    if not images or "image" not in (model.get("input") or []):
        return sanitize_surrogates(
            text if text else ("(see attached image)" if images else "(no tool output)")
        )
    out: list[dict[str, Any]] = []
    if text:
        out.append({"type": "input_text", "text": sanitize_surrogates(text)})
    out.extend(
        {
            "type": "input_image",
            "detail": "auto",
            "image_url": f"data:{b.get('mimeType')};base64,{b.get('data')}",
        }
        for b in images
    )
    return out


def convert_responses_messages(
    model: Mapping[str, Any],
    context: Context,
    allowed_tool_call_providers: frozenset[str] | set[str] = OPENAI_TOOL_CALL_PROVIDERS,
    *,
    include_system_prompt: bool = True,
    grammar_tool_input_properties: Mapping[str, str] | None = None,
    deferred_tools: Mapping[str, Mapping[str, Any]] | None = None,
    deferred_tools_mode: str | None = None,
    tool_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """pi-ai's ``convertResponsesMessages``: the context as Responses input items for ``model``
    (a pi-ai model dict).

    An assistant message of the same model sends its reasoning items back (the JSON kept in
    ``thinkingSignature``) and its text items under their own ids; tool-call ids are normalised
    for the providers in ``allowed_tool_call_providers`` (``fc_`` item ids, hashed when foreign).
    Calls of grammar tools (``grammar_tool_input_properties``: tool name -> the argument holding
    its raw input) go back as ``custom_tool_call`` items with their results.
    """
    grammar = grammar_tool_input_properties or {}
    items: list[dict[str, Any]] = []
    loaded_tool_names: set[str] = set()
    provider, api, model_id = model.get("provider"), model.get("api"), model.get("id")

    def normalize_tool_call_id(call_id: str, _target: Mapping[str, Any], source: Mapping[str, Any]) -> str:
        if provider not in allowed_tool_call_providers or "|" not in call_id:
            return _normalize_id_part(call_id)
        parts = call_id.split("|")
        call, item = parts[0], parts[1]
        foreign = source.get("provider") != provider or source.get("api") != api
        item_id = f"fc_{short_hash(item)}"[:64] if foreign else _normalize_id_part(item)
        if not item_id.startswith("fc_"):
            item_id = _normalize_id_part(f"fc_{item_id}")
        return f"{_normalize_id_part(call)}|{item_id}"

    # read as JSON: session messages arrive unvalidated and are read field by field
    transformed: list[Any] = transform_messages(list(context.messages), model, normalize_tool_call_id)

    if include_system_prompt and context.system_prompt:
        compat = model.get("compat") or {}
        system_role = (
            "developer"
            if model.get("reasoning") and compat.get("supportsDeveloperRole") is not False
            else "system"
        )
        items.append({"role": system_role, "content": sanitize_surrogates(context.system_prompt)})

    msg_index = 0
    for msg in transformed:
        role = msg.get("role")
        content = msg.get("content")
        if role == "user":
            if isinstance(content, str):
                items.append(
                    {
                        "role": "user",
                        "content": [{"type": "input_text", "text": sanitize_surrogates(content)}],
                    }
                )
            else:
                parts = [
                    {"type": "input_text", "text": sanitize_surrogates(str(b.get("text", "")))}
                    if b.get("type") == "text"
                    else {
                        "type": "input_image",
                        "detail": "auto",
                        "image_url": f"data:{b.get('mimeType')};base64,{b.get('data')}",
                    }
                    for b in content or []
                ]
                if not parts:
                    continue  # pi-ai skips the message without counting it
                items.append({"role": "user", "content": parts})
        elif role == "assistant":
            out: list[dict[str, Any]] = []
            same_provider_api = msg.get("provider") == provider and msg.get("api") == api
            same_model = same_provider_api and msg.get("model") == model_id
            different_model = same_provider_api and msg.get("model") != model_id
            text_index = 0
            for block in content or []:
                kind = block.get("type")
                if kind == "thinking":
                    if block.get("thinkingSignature"):
                        out.append(js_json_parse_v8(block["thinkingSignature"]))
                elif kind == "text":
                    parsed = _parse_text_signature(block.get("textSignature"))
                    fallback = (
                        f"msg_pi_{msg_index}" if text_index == 0 else f"msg_pi_{msg_index}_{text_index}"
                    )
                    text_index += 1
                    msg_id = parsed[0] if parsed else ""
                    if not msg_id:
                        msg_id = fallback
                    elif len(msg_id) > 64:
                        msg_id = f"msg_{short_hash(msg_id)}"
                    item: dict[str, Any] = {
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "output_text",
                                "text": sanitize_surrogates(str(block.get("text", ""))),
                                "annotations": [],
                            }
                        ],
                        "status": "completed",
                        "id": msg_id,
                    }
                    if parsed and parsed[1]:
                        item["phase"] = parsed[1]
                    out.append(item)
                elif kind == "toolCall":
                    id_parts = str(block.get("id", "")).split("|")
                    call_id = id_parts[0]
                    item_id: str | None = id_parts[1] if len(id_parts) > 1 else None
                    starts_fc = item_id is not None and item_id.startswith("fc_")
                    input_property = grammar.get(str(block.get("name")))
                    if (different_model and starts_fc) or (input_property is None and not starts_fc):
                        item_id = None
                    call: dict[str, Any] = {
                        "type": "function_call" if input_property is None else "custom_tool_call"
                    }
                    if item_id is not None:
                        call["id"] = item_id
                    call["call_id"] = call_id
                    call["name"] = block.get("name")
                    if input_property is None:
                        call["arguments"] = js_stringify(block.get("arguments"))
                    else:
                        call["input"] = sanitize_surrogates(
                            get_grammar_tool_input(
                                str(block.get("name")), block.get("arguments") or {}, input_property
                            )
                        )
                    can_replay_namespace = same_model or (
                        deferred_tools is not None and block.get("name") in deferred_tools
                    )
                    if can_replay_namespace and block.get("namespace") is not None:
                        call["namespace"] = block["namespace"]
                    out.append(call)
            if not out:
                continue  # pi-ai skips the message without counting it
            items.extend(out)
        elif role == "toolResult":
            call_id = str(msg.get("toolCallId", "")).split("|")[0]
            items.append(
                {
                    "type": "custom_tool_call_output"
                    if msg.get("toolName") in grammar
                    else "function_call_output",
                    "call_id": call_id,
                    "output": _tool_result_output(model, content or []),
                }
            )
            loaded: list[Mapping[str, Any]] = []
            for name in msg.get("addedToolNames") or []:
                tool = (deferred_tools or {}).get(name)
                if tool is None or name in loaded_tool_names:
                    continue
                loaded_tool_names.add(name)
                loaded.append(tool)
            if loaded and deferred_tools_mode == "additional-tools":
                items.append(
                    {
                        "type": "additional_tools",
                        "role": "developer",
                        "tools": convert_responses_tools(loaded, **dict(tool_options or {})),
                    }
                )
            elif loaded and deferred_tools_mode == "tool-search":
                names = [str(t.get("name")) for t in loaded]
                seed = f"{msg.get('toolCallId')}:{','.join(names)}"
                search_id = f"pi_tool_load_{short_hash(seed)}"
                items.append(
                    {
                        "type": "tool_search_call",
                        "call_id": search_id,
                        "execution": "client",
                        "status": "completed",
                        "arguments": {"query": " ".join(names), "limit": len(names)},
                    }
                )
                items.append(
                    {
                        "type": "tool_search_output",
                        "call_id": search_id,
                        "execution": "client",
                        "status": "completed",
                        "tools": convert_responses_tools(
                            loaded, **{**dict(tool_options or {}), "defer_loading": True}
                        ),
                    }
                )
        msg_index += 1
    return items


def convert_responses_tools(
    tools: Sequence[Mapping[str, Any]],
    *,
    strict: bool | None = None,
    supports_strict_mode: bool = True,
    supports_openai_grammar_tools: bool = False,
    defer_loading: bool = False,
    strict_null: bool = False,
) -> list[dict[str, Any]]:
    """pi-ai's ``convertResponsesTools``: ``{type: "function", name, description, parameters
    [, defer_loading][, strict]}`` (``strict`` only where the model takes it), or a ``custom`` tool
    with its grammar for a grammar tool on a model that takes them. ``strict_null``: pi-ai's
    ``strict: null`` option (Codex): a tool no schema rule constrains is sent with ``strict: null``."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        grammar = resolve_grammar_constrained_sampling(tool, supports_openai_grammar_tools)
        if grammar:
            custom: dict[str, Any] = {
                "type": "custom",
                "name": tool.get("name"),
                "description": tool.get("description"),
                "format": {
                    "type": "grammar",
                    "syntax": grammar["format"],
                    "definition": grammar["definition"],
                },
            }
            if defer_loading:
                custom["defer_loading"] = True
            out.append(custom)
            continue
        constrained = resolve_json_schema_strict_sampling(tool, supports_strict_mode)
        use_strict: bool | None = constrained if constrained is not None else bool(strict)
        if constrained is None and strict_null:
            use_strict = None
        entry: dict[str, Any] = {
            "type": "function",
            "name": tool.get("name"),
            "description": tool.get("description"),
            "parameters": get_json_schema_tool_parameters(tool, use_strict is True),
        }
        if defer_loading:
            entry["defer_loading"] = True
        if supports_strict_mode:
            entry["strict"] = use_strict
        out.append(entry)
    return out


def to_responses_input(
    context: Context,
    *,
    provider: str = "openai",
    api: str = "openai-responses",
    model_id: str = "",
    reasoning: bool = False,
    supports_images: bool = True,
    supports_developer_role: bool = True,
) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Responses API input items for a model given by its parts (a
    shorthand for :func:`convert_responses_messages` with OpenAI's tool-call id rules)."""
    model = {
        "id": model_id,
        "provider": provider,
        "api": api,
        "reasoning": reasoning,
        "input": ["text", "image"] if supports_images else ["text"],
        "compat": {"supportsDeveloperRole": supports_developer_role},
    }
    return convert_responses_messages(model, context, OPENAI_TOOL_CALL_PROVIDERS)


# ---------------------------------------------------------------- retries (utils/provider-retry)


def _provider_error(error: BaseException) -> ProviderFailure | None:
    """What the retry policy reads of a failed request: the SDK's HTTP and connection errors."""
    try:
        import openai
    except ImportError:  # pragma: no cover
        return None
    if isinstance(error, openai.APIStatusError):
        return ProviderFailure(error.status_code, error.response.headers, js_shaped_error_from(error).message)
    if isinstance(error, openai.APIConnectionError):
        return ProviderFailure(None, {}, js_shaped_error_from(error).message)
    return None


# ---------------------------------------------------------------- service tiers


def _service_tier_multiplier(model_id: str, tier: Any) -> float:
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model_id == "gpt-5.5" else 2
    return 1


def _join_text(value: Any) -> str:
    """A value as ``Array.prototype.join`` prints it (``null`` and ``undefined`` are empty)."""
    return "" if value is None else _js_text(value)


def _js_text(value: Any, missing: bool = False) -> str:
    """A value as a JavaScript template literal prints it (``undefined`` when ``missing``)."""
    return "undefined" if missing else js_string(value)


_NO_TIER_PRICING: Any = object()  # an API without service-tier pricing (Azure)


class _StreamError(Exception):
    """A failure reported inside the stream (its text is the message)."""


class OpenAIResponsesProvider(RemoteModel):
    """A model over the Responses API (what Pi uses for ``openai/...``, OpenCode's GPT models, xAI...).

    The request follows the model's pi-ai entry (:meth:`pi_ai_model`: ``compat``, ``headers``,
    ``thinkingLevelMap``, ``cost``). Optional, beyond the common constructor arguments:
    ``cost_function`` (the final usage to its cost, ``usage["cost"]``), and for a model built by
    hand ``thinking_level_map``, ``supports_developer_role`` and ``supports_strict_mode`` (they
    override the entry's ``thinkingLevelMap`` and ``compat`` flags).
    """

    #: what a turn imports, and the pi_nb extra that installs it (the provider table's row)
    sdk_module: ClassVar[str | None] = "openai"
    extra: ClassVar[str] = "openai"

    api = "openai-responses"
    default_provider = "openai"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = "OPENAI_BASE_URL"
    default_api_key_env = "OPENAI_API_KEY"

    def __init__(
        self,
        id: str,
        *,
        thinking_level_map: Mapping[str, str | None] | None = None,
        supports_developer_role: bool | None = None,
        supports_strict_mode: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(id, **kwargs)
        self.thinking_level_map: dict[str, str | None] | None = (
            dict(thinking_level_map) if thinking_level_map is not None else None
        )
        self.supports_developer_role = supports_developer_role
        self.supports_strict_mode = supports_strict_mode

    def pi_ai_model(self) -> dict[str, Any]:
        """The pi-ai model dict, with this object's explicit level map and compat flags applied."""
        model = super().pi_ai_model()
        model["api"] = self.api
        if self.thinking_level_map is not None:
            model["thinkingLevelMap"] = dict(self.thinking_level_map)
        compat = dict(model.get("compat") or {})
        if self.supports_developer_role is not None:
            compat["supportsDeveloperRole"] = self.supports_developer_role
        if self.supports_strict_mode is not None:
            compat["supportsStrictMode"] = self.supports_strict_mode
        if compat or "compat" in model:
            model["compat"] = compat
        return model

    # -- pi-ai's streamSimple -> stream options

    def _options(self, model: Mapping[str, Any], context: Context, opts: StreamOptions) -> dict[str, Any]:
        """pi-ai's ``streamSimple``: the base options (``maxTokens`` clamped to the context left) and
        the reasoning effort (the level clamped to the model's levels; none for ``off``)."""
        simple = simple_stream_options(opts)
        if opts.extra:
            simple["samplingParams"] = dict(opts.extra)
        base = build_base_options(model, cast(Mapping[str, Any], context.to_dict()), simple)
        if opts.reasoning:
            level = clamp_thinking_level(model, opts.reasoning)
            if level != "off":
                base["reasoningEffort"] = level
        service_tier = (opts.extra or {}).get("service_tier")
        if service_tier is not None:
            base["serviceTier"] = service_tier
        return base

    def build_request(self, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
        """The ``POST /responses`` body (pi-ai's ``buildParams`` after ``streamSimple``)."""
        model = self.pi_ai_model()
        return self._params(model, context, self._options(model, context, options or StreamOptions()))

    def _params(
        self, model: Mapping[str, Any], context: Context, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        compat = get_compat(model)
        mode = (
            "additional-tools"
            if compat["supportsAdditionalTools"]
            else "tool-search"
            if compat["supportsToolSearch"]
            else None
        )
        immediate, deferred = split_deferred_tools(
            cast(Mapping[str, Any], context.to_dict()), mode is not None
        )
        tool_options = {
            "supports_strict_mode": compat["supportsStrictMode"],
            "supports_openai_grammar_tools": compat["supportsOpenAIGrammarTools"],
        }
        messages = convert_responses_messages(
            model,
            context,
            OPENAI_TOOL_CALL_PROVIDERS,
            grammar_tool_input_properties=self._grammar_properties(model, context),
            deferred_tools=deferred,
            deferred_tools_mode=mode,
            tool_options=tool_options,
        )
        retention = resolve_cache_retention(options.get("cacheRetention"))
        params: dict[str, Any] = {"model": model.get("id"), "input": messages, "stream": True}
        if retention != "none":
            key = clamp_openai_prompt_cache_key(options.get("sessionId"))
            if key is not None:
                params["prompt_cache_key"] = key
        if retention == "long" and compat["supportsLongCacheRetention"]:
            params["prompt_cache_retention"] = "24h"
        if retention == "none" and compat["supportsExplicitPromptCacheMode"]:
            params["prompt_cache_options"] = {"mode": "explicit"}
        params["store"] = False
        max_tokens = options.get("maxTokens")
        if max_tokens and compat["supportsMaxOutputTokens"]:
            params["max_output_tokens"] = max(max_tokens, _MIN_OUTPUT_TOKENS)
        if options.get("temperature") is not None:
            params["temperature"] = options["temperature"]
        if options.get("serviceTier") is not None:
            params["service_tier"] = options["serviceTier"]
        if immediate:
            params["tools"] = convert_responses_tools(immediate, **tool_options)
        if options.get("toolChoice") is not None:
            params["tool_choice"] = options["toolChoice"]
        if model.get("reasoning"):
            level_map: Mapping[str, Any] | None = model.get("thinkingLevelMap")
            effort_level = options.get("reasoningEffort")
            if effort_level or options.get("reasoningSummary"):
                effort = "medium"
                if effort_level:
                    mapped = level_map.get(effort_level) if level_map else None
                    effort = mapped if mapped is not None else effort_level
                params["reasoning"] = {"effort": effort, "summary": options.get("reasoningSummary") or "auto"}
                params["include"] = ["reasoning.encrypted_content"]
            elif model.get("provider") != "github-copilot" and not (
                level_map is not None and "off" in level_map and level_map["off"] is None
            ):
                off = level_map.get("off") if level_map else None
                params["reasoning"] = {"effort": off if off is not None else "none"}
            if model.get("provider") == "xai":
                params["include"] = ["reasoning.encrypted_content"]
        sampling = options.get("samplingParams")
        if sampling:
            params.update(sampling)
        return params

    def _grammar_properties(self, model: Mapping[str, Any], context: Context) -> dict[str, str]:
        """Tool name -> the argument carrying a grammar tool's raw input (for models that take them)."""
        return create_grammar_tool_input_properties(
            cast(Sequence[Mapping[str, Any]], context.tools or []),
            get_compat(model)["supportsOpenAIGrammarTools"],
        )

    # -- createClient

    def _api_key(self, model: Mapping[str, Any], headers: Mapping[str, Any] | None) -> str:
        key = None if model.get("provider") in _HEADER_AUTH_PROVIDERS else self._env_key()
        chosen = client_api_key(key, headers)
        if chosen:
            return chosen
        if self.base_url and not self.pi_model_raw:
            return "not-needed"  # a self-hosted server (not a catalog model) without a key
        raise RuntimeError(f"No API key for provider: {model.get('provider')}")

    def _client(
        self,
        model: Mapping[str, Any],
        api_key: str,
        session_id: str | None,
        extra: Mapping[str, Any],
        options: Mapping[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """pi-ai's ``createClient``: the SDK client, and the headers each request removes
        (``options``: the request's stream options, for the APIs whose client reads them)."""
        openai = _require_openai()
        compat = get_compat(model)
        headers: dict[str, Any] = {"User-Agent": pi_user_agent(), **(model.get("headers") or {})}
        if session_id:
            if compat["sessionAffinityFormat"] == "openrouter":
                headers["x-session-id"] = session_id
            else:
                if compat["sessionAffinityFormat"] == "openai":
                    headers["session_id"] = session_id
                headers["x-client-request-id"] = session_id
        headers.update(extra)
        # a null header removes the SDK's own (the SDK takes removals per request only)
        omitted = {k: openai.Omit() for k, v in headers.items() if v is None}
        kwargs: dict[str, Any] = {
            "api_key": api_key,
            "base_url": model.get("baseUrl") or None,
            "default_headers": {k: v for k, v in headers.items() if v is not None},
            "timeout": self.timeout,
            "max_retries": 0,
        }
        http_client = self.http_client()
        if http_client is not None:
            kwargs["http_client"] = http_client
        return openai.AsyncOpenAI(**kwargs), omitted

    def _env_key(self) -> str | None:
        """The key, resolved now (``RemoteModel.resolve_api_key``: auth.json, then the variable)."""
        return self.resolve_api_key()

    def _request_headers(self, model: Mapping[str, Any], session_id: str | None) -> dict[str, Any]:
        """The headers Pi's agent passes with each request: OpenCode's session and the provider
        attribution, then the provider's own auth headers (Cloudflare's gateway key)."""
        auth = (
            cloudflare_ai_gateway_auth(self._env_key())
            if model.get("provider") in _HEADER_AUTH_PROVIDERS
            else None
        )
        credential = {**self.credential_headers(), **(auth or {})}
        return dict(provider_attribution_headers(model, session_id, credential or None) or {})

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``streamSimple`` for ``openai-responses`` (``processResponsesStream``)."""
        opts = options or StreamOptions()
        try:
            # the credential first: its base URL (GitHub Copilot's) is the request model's
            await asyncio.to_thread(self.resolve_auth)  # a refresh blocks: off the loop
            auth_error: Exception | None = None
        except Exception as error:
            auth_error = error
        model = self.pi_ai_model()
        # the message is grown field by field as the stream says (pi-ai's scratch fields included)
        output: Any = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        output["stopReason"] = "pending"
        blocks: list[Any] = output["content"]

        def fail(error: BaseException) -> ErrorEvent:
            for block in blocks:
                block.pop("partialJson", None)
            aborted = opts.signal is not None and opts.signal.aborted
            output["stopReason"] = "aborted" if aborted else "error"
            # pi_nb never repeats the key a request used (a server may echo it in its error)
            try:
                key = self._env_key()
            except Exception:
                key = None
            output["errorMessage"] = redact_key(self._error_text(error), key)
            return {"type": "error", "reason": "aborted" if aborted else "error", "error": output}

        if auth_error is not None:
            yield fail(auth_error)
            return
        try:
            extra_headers = self._request_headers(model, opts.session_id)
            if model.get("provider") == "github-copilot":
                # pi-ai's createClient: Copilot's per-request headers, under the caller's
                extra_headers = {**copilot_dynamic_headers(context.messages), **extra_headers}
            api_key = self._api_key(model, extra_headers)
            stream_options = self._options(model, context, opts)
            retention = resolve_cache_retention(stream_options.get("cacheRetention"))
            cache_session = None if retention == "none" else opts.session_id
            client, omitted = self._client(model, api_key, cache_session, extra_headers, stream_options)
            params = self._params(model, context, stream_options)
            openai = _require_openai()

            async def request() -> Any:
                if opts.signal is not None and opts.signal.aborted:
                    raise _StreamError("Request was aborted.")  # the SDK's text for an aborted request
                sdk_stream = await client.post(
                    "/responses",
                    cast_to=object,
                    body=params,
                    stream=True,
                    stream_cls=openai.AsyncStream[object],
                    options={"headers": omitted} if omitted else {},
                )
                return sdk_stream.response  # read as the JS SDK reads it (iter_openai_sse_json)

            response = await retry_provider_request(
                request,
                _provider_error,
                max_retries=self.max_retries,
                signal=opts.signal,
            )
        except Exception as error:
            yield fail(error)
            return
        yield {"type": "start", "partial": snapshot_message(output)}
        try:
            grammar = self._grammar_properties(model, context)
            async for event in self._process(response, output, model, stream_options, opts, grammar):
                yield event
            if opts.signal is not None and opts.signal.aborted:
                raise _StreamError("Request was aborted")
            if output["stopReason"] == "pending":
                raise _StreamError(self._no_stop_reason_text)
            if output["stopReason"] in ("aborted", "error"):
                raise _StreamError(output.get("errorMessage") or "An unknown error occurred")
        except Exception as error:
            yield fail(error)
            return
        finally:
            try:
                await response.aclose()
            except Exception:  # pragma: no cover - closing a finished stream
                pass
        yield {"type": "done", "reason": output["stopReason"], "message": output}

    # -- the hooks of the APIs built on this one (Azure OpenAI, Codex)

    #: the error text of a stream that ended with its stop reason still pending
    _no_stop_reason_text = "OpenAI Responses stream ended without a stop reason"

    def _error_text(self, error: BaseException) -> str:
        """The ``errorMessage`` of a failed request or stream (pi-ai's catch block)."""
        return api_error_message(self.api, error)

    def _events(self, response: Any, output: AssistantMessage, opts: StreamOptions) -> AsyncIterator[Any]:
        """The server's events of a streamed response (as the JavaScript SDK reads them)."""
        return iter_openai_sse_json(response)

    def _pricing_service_tier(self, response_tier: Any, request_tier: Any) -> Any:
        """The service tier whose price multiplier applies to the usage (the response's, else the
        request's); ``_NO_TIER_PRICING`` where the API prices no tier."""
        return request_tier if response_tier is None else response_tier

    async def _process(
        self,
        response: Any,
        output: AssistantMessage,
        model: Mapping[str, Any],
        stream_options: Mapping[str, Any],
        opts: StreamOptions,
        grammar: Mapping[str, str],
    ) -> AsyncIterator[AssistantMessageEvent]:
        """pi-ai's ``processResponsesStream``: each server event into the message and its events."""
        # a grammar tool's streamed input: content index -> (argument name, JSON delta buffer)
        custom: dict[int, tuple[str, dict[str, Any]]] = {}
        blocks: list[AssistantContent] = output["content"]
        slots: dict[Any, tuple[str, AssistantContent, int]] = {}  # output_index -> (kind, block, index)
        reasoning_by_id: dict[Any, AssistantContent] = {}
        terminal = False
        out: Any = output  # the message is grown field by field as the stream says

        def partial() -> AssistantMessage:
            return snapshot_message(output)

        def slot(output_index: Any, kind: str) -> tuple[str, AssistantContent, int] | None:
            found = slots.get(output_index)
            return found if found is not None and found[0] == kind else None

        def create(output_index: Any, item: Mapping[str, Any]) -> AssistantMessageEvent | None:
            kind = item.get("type")
            block: Any
            if kind == "reasoning":
                block = {"type": "thinking", "thinking": ""}
                blocks.append(block)
                slots[output_index] = ("thinking", block, len(blocks) - 1)
                return block_start_event("thinking_start", len(blocks) - 1, partial())
            if kind == "message":
                if item.get("phase") == "final_answer":
                    out["stopReason"] = "stop"
                block = {"type": "text", "text": ""}
                blocks.append(block)
                slots[output_index] = ("text", block, len(blocks) - 1)
                return block_start_event("text_start", len(blocks) - 1, partial())
            if kind == "function_call":
                block = {
                    "type": "toolCall",
                    "id": f"{_js_text(item.get('call_id'), 'call_id' not in item)}|{_js_text(item.get('id'), 'id' not in item)}",
                    "name": item.get("name"),
                    "arguments": {},
                }
                if "namespace" in item:
                    block["namespace"] = item["namespace"]
                block["partialJson"] = item.get("arguments") or ""
                blocks.append(block)
                slots[output_index] = ("toolCall", block, len(blocks) - 1)
                return block_start_event("toolcall_start", len(blocks) - 1, partial())
            if kind == "custom_tool_call":
                prop = grammar.get(str(item.get("name")))
                prop = "input" if prop is None else prop
                block = {
                    "type": "toolCall",
                    "id": f"{_js_text(item.get('call_id'), 'call_id' not in item)}|{_js_text(item.get('id'), 'id' not in item)}",
                    "name": item.get("name"),
                    "arguments": {prop: item.get("input") or ""},
                }
                if "namespace" in item:
                    block["namespace"] = item["namespace"]
                blocks.append(block)
                slots[output_index] = ("toolCall", block, len(blocks) - 1)
                custom[len(blocks) - 1] = (prop, {"input": "", "started": False, "closed": False})
                return block_start_event("toolcall_start", len(blocks) - 1, partial())
            return None

        def custom_input(index: int, block: Any) -> str:
            value = block["arguments"].get(custom[index][0])
            return value if isinstance(value, str) else ""

        def append_custom(index: int, block: Any, next_input: str, close: bool) -> str | None:
            prop, buffer = custom[index]
            delta = append_grammar_tool_input_json_delta(buffer, prop, next_input, close)
            block["arguments"] = {prop: next_input}
            return delta

        def finalize(resp: Mapping[str, Any]) -> None:
            nonlocal terminal
            terminal = True
            for item in resp.get("output") or []:
                if (
                    not isinstance(item, Mapping)
                    or item.get("type") != "reasoning"
                    or not item.get("encrypted_content")
                ):
                    continue
                block = reasoning_by_id.get(item.get("id"))
                if block is None or not block.get("thinkingSignature"):
                    continue
                stored = js_json_parse_v8(block["thinkingSignature"])  # type: ignore[typeddict-item]
                if stored.get("encrypted_content"):
                    continue
                block_any: Any = block
                block_any["thinkingSignature"] = js_stringify(
                    {**stored, "encrypted_content": item["encrypted_content"]}
                )
            if resp.get("id"):
                out["responseId"] = resp["id"]
            u: Any = resp.get("usage")
            if js_truthy(u):
                details = u.get("input_tokens_details") or {}
                cached = details.get("cached_tokens") or 0
                written = details.get("cache_write_tokens") or 0
                out["usage"] = {
                    "input": max(0, (u.get("input_tokens") or 0) - cached - written),
                    "output": u.get("output_tokens") or 0,
                    "cacheRead": cached,
                    "cacheWrite": written,
                    "reasoning": (u.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
                    "totalTokens": u.get("total_tokens") or 0,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                }
            apply_cost(output["usage"], self.cost_function)
            tier = self._pricing_service_tier(resp.get("service_tier"), stream_options.get("serviceTier"))
            multiplier = (
                1 if tier is _NO_TIER_PRICING else _service_tier_multiplier(str(model.get("id")), tier)
            )
            if multiplier != 1:
                cost: Any = output["usage"]["cost"]
                for name in ("input", "output", "cacheRead", "cacheWrite"):
                    cost[name] *= multiplier
                cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
            status = resp.get("status")
            details_any = resp.get("incomplete_details")
            reason = details_any.get("reason") if isinstance(details_any, Mapping) else None
            reason = reason if isinstance(reason, str) else None
            raw = f"{_js_text(status, 'status' not in resp)}.{reason}" if reason else status
            if raw is None:
                out.pop("rawStopReason", None)
            else:
                out["rawStopReason"] = raw
            stop, message = _map_stop_reason(status, reason)
            out["stopReason"] = stop
            if message is None:
                out.pop("errorMessage", None)
            else:
                out["errorMessage"] = message
            if stop == "stop" and any(b.get("type") == "toolCall" for b in blocks):
                out["stopReason"] = "toolUse"

        async for raw_event in self._events(response, output, opts):
            if opts.signal is not None and opts.signal.aborted:
                return  # the SDK ends an aborted stream quietly; the caller reports the abort
            event = _as_dict(raw_event)
            kind = event.get("type")
            at = event.get("output_index")
            if kind == "response.created":
                out["responseId"] = (event.get("response") or {}).get("id")
                if out["responseId"] is None:
                    out.pop("responseId")
            elif kind == "response.output_item.added":
                started = create(at, event.get("item") or {})
                if started is not None:
                    yield started
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                found = slot(at, "thinking")
                if found is None:
                    continue
                delta = event.get("delta")
                found[1]["thinking"] += _js_text(delta, "delta" not in event)  # type: ignore[typeddict-item]
                yield block_delta_event("thinking_delta", found[2], cast(str, delta), partial())
            elif kind == "response.reasoning_summary_part.done":
                found = slot(at, "thinking")
                if found is None:
                    continue
                found[1]["thinking"] += "\n\n"  # type: ignore[typeddict-item]
                yield block_delta_event("thinking_delta", found[2], "\n\n", partial())
            elif kind in ("response.output_text.delta", "response.refusal.delta"):
                found = slot(at, "text")
                if found is None:
                    continue
                delta = event.get("delta")
                found[1]["text"] += _js_text(delta, "delta" not in event)  # type: ignore[typeddict-item]
                yield block_delta_event("text_delta", found[2], cast(str, delta), partial())
            elif kind == "response.function_call_arguments.delta":
                found = slot(at, "toolCall")
                if found is None or "partialJson" not in found[1]:
                    continue
                block_any: Any = found[1]
                delta = event.get("delta")
                block_any["partialJson"] += _js_text(delta, "delta" not in event)
                block_any["arguments"] = parse_streaming_json(block_any["partialJson"])
                if delta is not None:
                    yield block_delta_event("toolcall_delta", found[2], delta, partial())
            elif kind == "response.function_call_arguments.done":
                found = slot(at, "toolCall")
                if found is None or "partialJson" not in found[1]:
                    continue
                block_any = found[1]
                previous = block_any["partialJson"]
                final_args = event.get("arguments")
                block_any["partialJson"] = final_args
                block_any["arguments"] = parse_streaming_json(final_args)
                if (
                    isinstance(final_args, str)
                    and final_args.startswith(previous)
                    and len(final_args) > len(previous)
                ):
                    yield block_delta_event(
                        "toolcall_delta", found[2], final_args[len(previous) :], partial()
                    )
            elif kind in ("response.custom_tool_call_input.delta", "response.custom_tool_call_input.done"):
                found = slot(at, "toolCall")
                if found is None or found[2] not in custom:
                    continue
                if kind.endswith(".delta"):
                    nxt = custom_input(found[2], found[1]) + _js_text(
                        event.get("delta"), "delta" not in event
                    )
                    piece = append_custom(found[2], found[1], nxt, False)
                else:
                    piece = append_custom(found[2], found[1], cast(str, event.get("input")), True)
                if piece is not None:
                    yield block_delta_event("toolcall_delta", found[2], piece, partial())
            elif kind == "response.output_item.done":
                item = event.get("item") or {}
                if item.get("type") == "message" and item.get("phase") == "final_answer":
                    out["stopReason"] = "stop"
                if at not in slots:
                    started = create(at, item)
                    if started is not None:
                        yield started
                current = slots.get(at)
                if current is None:
                    continue
                slot_kind, block_any, index = current
                item_type = item.get("type")
                if item_type == "reasoning" and slot_kind == "thinking":
                    summary = "\n\n".join(_join_text(s.get("text")) for s in item.get("summary") or [])
                    text = "\n\n".join(_join_text(c.get("text")) for c in item.get("content") or [])
                    block_any["thinking"] = summary or text or block_any["thinking"]
                    block_any["thinkingSignature"] = js_stringify(item)
                    reasoning_by_id[item.get("id")] = block_any
                    yield {
                        "type": "thinking_end",
                        "contentIndex": index,
                        "content": block_any["thinking"],
                        "partial": partial(),
                    }
                    del slots[at]
                elif item_type == "message" and slot_kind == "text":
                    block_any["text"] = "".join(
                        _join_text(c.get("text") if c.get("type") == "output_text" else c.get("refusal"))
                        for c in item.get("content") or []
                    )
                    phase = item.get("phase")
                    block_any["textSignature"] = _text_signature(
                        _js_text(item.get("id"), "id" not in item), phase
                    )
                    yield {
                        "type": "text_end",
                        "contentIndex": index,
                        "content": block_any["text"],
                        "partial": partial(),
                    }
                    del slots[at]
                elif item_type == "function_call" and slot_kind == "toolCall" and "partialJson" in block_any:
                    block_any["arguments"] = parse_streaming_json(
                        item.get("arguments") or block_any["partialJson"] or "{}"
                    )
                    if "namespace" in item:
                        block_any["namespace"] = item["namespace"]
                    del block_any["partialJson"]
                    yield {
                        "type": "toolcall_end",
                        "contentIndex": index,
                        "toolCall": cast(ToolCall, dict(block_any)),
                        "partial": partial(),
                    }
                    del slots[at]
                elif item_type == "custom_tool_call" and slot_kind == "toolCall" and index in custom:
                    given = item.get("input")
                    piece = append_custom(
                        index, block_any, given if given is not None else custom_input(index, block_any), True
                    )
                    if piece is not None:
                        yield block_delta_event("toolcall_delta", index, piece, partial())
                    if "namespace" in item:
                        block_any["namespace"] = item["namespace"]
                    del custom[index]
                    yield {
                        "type": "toolcall_end",
                        "contentIndex": index,
                        "toolCall": cast(ToolCall, dict(block_any)),
                        "partial": partial(),
                    }
                    del slots[at]
            elif kind in ("response.completed", "response.incomplete"):
                finalize(event.get("response") or {})
            elif kind == "error":
                raise _StreamError(
                    f"Error Code {_js_text(event.get('code'), 'code' not in event)}: "
                    f"{_js_text(event.get('message'), 'message' not in event)}"
                )
            elif kind == "response.failed":
                terminal = True
                failed = event.get("response") or {}
                if failed.get("status") is None:
                    out.pop("rawStopReason", None)
                else:
                    out["rawStopReason"] = failed["status"]
                error: Any = failed.get("error")
                details = failed.get("incomplete_details")
                if js_truthy(error):
                    message = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
                elif isinstance(details, Mapping) and details.get("reason"):
                    message = f"incomplete: {_js_text(details['reason'])}"
                else:
                    message = "Unknown error (no error details in response)"
                raise _StreamError(message)
        if not terminal:
            raise _StreamError("OpenAI Responses stream ended before a terminal response event")


def _map_stop_reason(status: Any, reason: str | None) -> tuple[StopReason, str | None]:
    if not status:
        return "stop", None
    if status == "completed":
        return "stop", None
    if status == "incomplete":
        if reason == "max_output_tokens":
            return "length", None
        return "error", (
            f"Response incomplete: {reason}" if reason else "Response incomplete without a provider reason"
        )
    if status in ("failed", "cancelled"):
        return "error", None
    if status in ("in_progress", "queued"):
        return "stop", None
    raise _StreamError(f"Unhandled stop reason: {_js_text(status)}")


def _as_dict(obj: Any) -> dict[str, Any]:
    """An SDK event as the JSON the server sent."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    out = to_dict(warnings=False) if callable(to_dict) else None
    return out if isinstance(out, dict) else {}
