"""Small pi-ai helpers the API converters share, ported one to one.

- ``sanitize_surrogates`` (``utils/sanitize-unicode``): lone UTF-16 surrogates removed;
- ``clamp_openai_prompt_cache_key`` (``api/openai-prompt-cache``): at most 64 code points;
- the JSON-schema and grammar parts of ``api/constrained-sampling``;
- ``split_deferred_tools`` (``utils/deferred-tools``);
- ``get_provider_env_value`` (``utils/provider-env``);
- ``headers_to_record`` / ``provider_headers_to_record`` (``utils/headers``);
- ``provider_attribution_headers``: pi-coding-agent's ``mergeProviderAttributionHeaders`` with
  default settings (the headers Pi adds for OpenRouter, NVIDIA NIM, Cloudflare and opencode).

- ``short_hash`` (``utils/hash``) and ``calculate_cost`` (``models``) on a pi-ai model dict.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, cast
from urllib.parse import urlsplit

from pi_nb._js import UNDEFINED, Undefined, js_key_order, js_stringify
from pi_nb.messages import Usage, UsageCost

__all__ = [
    "OPENAI_PROMPT_CACHE_KEY_MAX_LENGTH",
    "UnsupportedStrictJsonSchemaError",
    "append_grammar_tool_input_json_delta",
    "calculate_cost",
    "clamp_openai_prompt_cache_key",
    "create_grammar_tool_input_properties",
    "get_grammar_tool_input",
    "get_json_schema_tool_parameters",
    "get_provider_env_value",
    "headers_to_record",
    "is_install_telemetry_enabled",
    "make_strict_json_schema",
    "provider_attribution_headers",
    "provider_headers_to_record",
    "resolve_grammar_constrained_sampling",
    "resolve_json_schema_strict_sampling",
    "sanitize_surrogates",
    "short_hash",
    "split_deferred_tools",
]

# ---------------------------------------------------------------- utils/sanitize-unicode

_LONE_SURROGATE: Final = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """``text`` without unpaired UTF-16 surrogates (a high+low pair, and astral characters, stay)."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("", text)


# ---------------------------------------------------------------- api/openai-prompt-cache

OPENAI_PROMPT_CACHE_KEY_MAX_LENGTH: Final = 64


def clamp_openai_prompt_cache_key(key: str | None) -> str | None:
    """The first 64 code points of ``key`` (``Array.from``: a surrogate pair is one, a lone
    surrogate is one); ``None`` stays ``None``."""
    if key is None:
        return None
    # join high+low pairs given as two code points, as JavaScript sees them as one character
    chars = key.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if len(chars) <= OPENAI_PROMPT_CACHE_KEY_MAX_LENGTH:
        return key
    return chars[:OPENAI_PROMPT_CACHE_KEY_MAX_LENGTH]


# ---------------------------------------------------------------- api/constrained-sampling


class UnsupportedStrictJsonSchemaError(Exception):
    """A tool schema outside the strict subset constrained sampling accepts."""


_UNSUPPORTED_STRICT_SCHEMA_KEYS: Final = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)


def _is_schema_object(value: object) -> bool:
    return isinstance(value, dict)


def _present(schema: Mapping[str, Any], key: str) -> bool:
    # `schema[key] !== undefined`: a JSON null is present
    return key in schema and not isinstance(schema[key], Undefined)


def _is_structured_schema(schema: object) -> bool:
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    types = [t] if isinstance(t, str) else t if isinstance(t, list) else []
    return (
        "object" in types or "array" in types or _present(schema, "properties") or _present(schema, "items")
    )


def _strict_eq(a: object, b: object) -> bool:
    """``===`` for JSON values (``1 === true`` is false; ``1 === 1.0`` is true)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is b
    return a is b


def _includes(array: Sequence[Any], value: object) -> bool:
    # Array.prototype.includes (SameValueZero; objects by identity)
    return any(_strict_eq(x, value) for x in array)


def _schema_allows_null(schema: object) -> bool:
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and _includes(t, "null")):
        return True
    if ("const" in schema and schema["const"] is None) or (
        isinstance(schema.get("enum"), list) and _includes(schema["enum"], None)
    ):
        return True
    any_of = schema.get("anyOf")
    return isinstance(any_of, list) and any(_schema_allows_null(v) for v in any_of)


def _make_node_strict(schema: object) -> None:
    if not isinstance(schema, dict):
        raise UnsupportedStrictJsonSchemaError("boolean schemas are unsupported")
    for key in _UNSUPPORTED_STRICT_SCHEMA_KEYS:
        if _present(schema, key):
            raise UnsupportedStrictJsonSchemaError(f"{key} schemas are unsupported")
    if _present(schema, "anyOf"):
        any_of = schema["anyOf"]
        if not isinstance(any_of, list) or len(any_of) == 0:
            raise UnsupportedStrictJsonSchemaError("anyOf must contain at least one schema")
        for variant in any_of:
            if _is_structured_schema(variant):
                raise UnsupportedStrictJsonSchemaError("object and array unions are unsupported")
            _make_node_strict(variant)
    if _present(schema, "items"):
        if isinstance(schema["items"], list):
            raise UnsupportedStrictJsonSchemaError("tuple schemas are unsupported")
        _make_node_strict(schema["items"])
    is_object = schema.get("type") == "object" and isinstance(schema.get("type"), str)
    if _present(schema, "properties") and not is_object:
        raise UnsupportedStrictJsonSchemaError("properties require type object")
    if not is_object:
        return
    if _present(schema, "additionalProperties") and schema["additionalProperties"] is not False:
        raise UnsupportedStrictJsonSchemaError("schema-valued or true additionalProperties is unsupported")
    if _present(schema, "properties") and not _is_schema_object(schema["properties"]):
        raise UnsupportedStrictJsonSchemaError("object properties must be a schema map")
    if _present(schema, "required") and (
        not isinstance(schema["required"], list) or any(not isinstance(k, str) for k in schema["required"])
    ):
        raise UnsupportedStrictJsonSchemaError("object required must be a string array")
    properties = schema.get("properties")
    if properties is None:  # `schema.properties ?? {}` (a fresh object, not stored back)
        properties = {}
    names = [k for k, _ in js_key_order(properties)]
    required = list(dict.fromkeys(schema["required"])) if isinstance(schema.get("required"), list) else []
    if any(key not in names for key in required):
        raise UnsupportedStrictJsonSchemaError("required contains an unknown property")
    for key in names:
        prop = properties[key]
        _make_node_strict(prop)
        if key not in required and not _schema_allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = names
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any) -> dict[str, Any]:
    """A copy of a tool schema in the strict subset (every property required, optional ones made
    nullable, ``additionalProperties: false``); raises :class:`UnsupportedStrictJsonSchemaError`
    for what strict mode cannot express."""
    cloned = copy.deepcopy(schema)
    if not isinstance(cloned, dict):
        raise UnsupportedStrictJsonSchemaError("root schema must have type object")
    _make_node_strict(cloned)
    if cloned.get("type") != "object":
        raise UnsupportedStrictJsonSchemaError("root schema must have type object")
    return cloned


def get_json_schema_tool_parameters(tool: Mapping[str, Any], strict: bool | None) -> Any:
    """The tool's parameters, made strict when ``strict is True``."""
    return make_strict_json_schema(tool["parameters"]) if strict is True else tool["parameters"]


def resolve_json_schema_strict_sampling(tool: Mapping[str, Any], supports_strict_mode: bool) -> bool | None:
    """``True`` when the tool asks for JSON-schema constrained sampling and its schema can be made
    strict; ``None`` otherwise; raises when the tool requires it (``strict: "require"``) and it
    cannot be had."""
    config = tool.get("constrainedSampling")
    if not config or config.get("type") != "json_schema":
        return None
    if supports_strict_mode:
        try:
            make_strict_json_schema(tool["parameters"])
            return True
        except UnsupportedStrictJsonSchemaError as error:
            if config.get("strict") != "require":
                return None
            raise ValueError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but {error}.'
            ) from error
    if config.get("strict") == "require":
        raise ValueError(
            f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
        )
    return None


def get_grammar_tool_input(tool_name: str, arguments: Mapping[str, Any], input_property: str) -> str:
    """The grammar tool's raw input (its one string argument); raises when it is not a string."""
    value = arguments.get(input_property)
    if not isinstance(value, str):
        raise ValueError(
            f'Grammar tool call "{tool_name}" requires argument "{input_property}" to be a string.'
        )
    return value


def _js_string_literal(text: str) -> str:
    return js_stringify(text)


def append_grammar_tool_input_json_delta(
    buffer: dict[str, Any], input_property: str, next_input: str, close: bool
) -> str | None:
    """The next piece of ``{"<property>":"<input>"}`` JSON for a streamed grammar tool input.

    ``buffer`` is ``{input, started, closed}`` and is updated in place.
    """
    if buffer["closed"]:
        if close and next_input == buffer["input"]:
            return None
        raise ValueError(f'grammar tool input for property "{input_property}" changed after it was closed')
    if not next_input.startswith(buffer["input"]):
        raise ValueError(f'grammar tool input for property "{input_property}" changed non-monotonically')
    delta_input = next_input[len(buffer["input"]) :]
    if not close and len(delta_input) == 0:
        return None
    delta = ""
    if not buffer["started"]:
        delta += "{" + _js_string_literal(input_property) + ':"'
        buffer["started"] = True
    delta += _js_string_literal(delta_input)[1:-1]
    buffer["input"] = next_input
    if close:
        delta += '"}'
        buffer["closed"] = True
    return delta


def _infer_grammar_input_property(tool: Mapping[str, Any]) -> str:
    schema = tool["parameters"]
    if schema.get("type") != "object":
        raise ValueError("grammar constrained sampling requires an object parameter schema")
    required = schema.get("required")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(required[0], str):
        raise ValueError("grammar constrained sampling requires exactly one required string property")
    name = required[0]
    properties = schema.get("properties") or {}
    prop = properties.get(name)
    if not prop:
        raise ValueError(f"grammar constrained sampling requires a properties entry for {name}")
    if not isinstance(prop, Mapping) or prop.get("type") != "string":
        raise ValueError(f"grammar constrained sampling property {name} must have type string")
    return name


def resolve_grammar_constrained_sampling(
    tool: Mapping[str, Any], supports_openai_grammar_tools: bool
) -> dict[str, str] | None:
    """``{format, definition, inputProperty}`` for a grammar tool on an API that takes grammars
    (the Lark variant preferred over the regex one), else ``None``; raises for a broken config."""
    config = tool.get("constrainedSampling")
    if not config or config.get("type") != "grammar":
        return None
    if not supports_openai_grammar_tools:
        return None
    variants = config.get("variants") or {}
    lark = variants.get("openai_lark")
    regex = variants.get("openai_regex")
    has_lark = isinstance(lark, str) and len(lark.strip()) > 0
    has_regex = isinstance(regex, str) and len(regex.strip()) > 0
    if not has_lark and not has_regex:
        raise ValueError(
            f'Tool "{tool["name"]}" cannot use grammar constrained sampling: no supported grammar variant was provided.'
        )
    try:
        return {
            "format": "lark" if has_lark else "regex",
            "definition": lark if has_lark else regex,  # type: ignore[dict-item]
            "inputProperty": _infer_grammar_input_property(tool),
        }
    except ValueError as error:
        raise ValueError(
            f'Tool "{tool["name"]}" cannot use grammar constrained sampling: {error}.'
        ) from error


def create_grammar_tool_input_properties(
    tools: Sequence[Mapping[str, Any]] | None, supports_openai_grammar_tools: bool
) -> dict[str, str]:
    """Tool name -> the argument that carries a grammar tool's raw input."""
    out: dict[str, str] = {}
    for tool in tools or []:
        grammar = resolve_grammar_constrained_sampling(tool, supports_openai_grammar_tools)
        if grammar:
            out[tool["name"]] = grammar["inputProperty"]
    return out


# ---------------------------------------------------------------- utils/deferred-tools


def _identity(name: str) -> str:
    return name


def split_deferred_tools(
    context: Mapping[str, Any], enabled: bool, normalize_name: Callable[[str], str] = _identity
) -> tuple[list[Any], dict[str, Any]]:
    """``(immediate, deferred)``: the context's tools (the last of each normalised name), with the
    tools a tool result added (``addedToolNames``) before any call of them moved to ``deferred``."""
    unique: dict[str, Any] = {}
    for tool in context.get("tools") or []:
        unique[normalize_name(tool["name"])] = tool
    if not enabled:
        return list(unique.values()), {}
    deferred_names: set[str] = set()
    used: set[str] = set()
    for message in context["messages"]:
        role = message.get("role")
        if role == "assistant":
            for block in message["content"]:
                if block.get("type") == "toolCall":
                    used.add(normalize_name(block["name"]))
        elif role == "toolResult":
            for name in message.get("addedToolNames") or []:
                normalized = normalize_name(name)
                if normalized not in used:
                    deferred_names.add(normalized)
    immediate: list[Any] = []
    deferred: dict[str, Any] = {}
    for name, tool in unique.items():
        if name in deferred_names:
            deferred[name] = tool
        else:
            immediate.append(tool)
    return immediate, deferred


# ---------------------------------------------------------------- utils/provider-env


def get_provider_env_value(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """``env[name]`` if non-empty, else the process environment's if non-empty, else ``None``."""
    if env is not None and env.get(name):
        return env[name]
    return os.environ.get(name) or None


# ---------------------------------------------------------------- utils/headers


def headers_to_record(headers: Any) -> dict[str, str]:
    """A fetch ``Headers`` as a record: lower-case names in sorted order, repeated headers joined
    with ``", "`` (``set-cookie``: one entry each, so the last one stays).

    ``headers`` is an ``httpx.Headers`` (its raw list is read), a mapping or ``(name, value)`` pairs.
    """
    raw = getattr(headers, "raw", None)
    pairs: Iterable[tuple[Any, Any]]
    if raw is not None:
        pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]
    elif isinstance(headers, Mapping):
        pairs = headers.items()
    else:
        pairs = headers
    joined: dict[str, str] = {}
    for name, value in pairs:
        key = str(name).lower()
        text = str(value).strip(" \t\r\n")
        if key in joined and key != "set-cookie":
            joined[key] = f"{joined[key]}, {text}"
        else:
            joined[key] = text
    return {k: joined[k] for k in sorted(joined, key=lambda s: s.encode("utf-16-be"))}


def provider_headers_to_record(headers: Mapping[str, str | None] | None) -> dict[str, str] | None:
    """Provider headers without the ``null`` ones (which mean "remove"); ``None`` when empty."""
    if not headers:
        return None
    out = {k: v for k, v in headers.items() if v is not None}
    return out or None


# ---------------------------------------------------------------- pi-coding-agent provider-attribution

_OPENROUTER_HOST: Final = "openrouter.ai"
_NVIDIA_NIM_HOST: Final = "integrate.api.nvidia.com"
_CLOUDFLARE_API_HOST: Final = "api.cloudflare.com"
_CLOUDFLARE_AI_GATEWAY_HOST: Final = "gateway.ai.cloudflare.com"
_OPENCODE_HOST: Final = "opencode.ai"


def _matches_host(base_url: str, host: str) -> bool:
    try:
        parts = urlsplit(base_url)
        return bool(parts.scheme) and parts.hostname == host
    except ValueError:
        return False


def is_install_telemetry_enabled(
    setting: bool | None = None, telemetry_env: str | Undefined | None = UNDEFINED
) -> bool:
    """``PI_TELEMETRY`` decides when set (``1``/``true``/``yes``, any case, mean on); else the
    ``enableInstallTelemetry`` setting (default on)."""
    value = os.environ.get("PI_TELEMETRY") if isinstance(telemetry_env, Undefined) else telemetry_env
    if value is not None:
        return value == "1" or value.lower() in ("true", "yes")
    return True if setting is None else setting


def _default_attribution_headers(model: Mapping[str, Any], telemetry: bool) -> dict[str, str] | None:
    if not telemetry:
        return None
    provider = model.get("provider")
    base_url = model.get("baseUrl") or ""
    if provider == "openrouter" or _OPENROUTER_HOST in base_url:
        return {
            "HTTP-Referer": "https://pi.dev",
            "X-OpenRouter-Title": "pi",
            "X-OpenRouter-Categories": "cli-agent",
        }
    if provider == "nvidia" or _matches_host(base_url, _NVIDIA_NIM_HOST):
        return {"X-BILLING-INVOKE-ORIGIN": "Pi"}
    if (
        provider in ("cloudflare-workers-ai", "cloudflare-ai-gateway")
        or _matches_host(base_url, _CLOUDFLARE_API_HOST)
        or _matches_host(base_url, _CLOUDFLARE_AI_GATEWAY_HOST)
    ):
        return {"User-Agent": "pi-coding-agent"}
    return None


def _session_headers(model: Mapping[str, Any], session_id: str | None) -> dict[str, str] | None:
    if not session_id:
        return None
    if model.get("provider") not in ("opencode", "opencode-go") and not _matches_host(
        model.get("baseUrl") or "", _OPENCODE_HOST
    ):
        return None
    return {"x-opencode-session": session_id, "x-opencode-client": "pi"}


def provider_attribution_headers(
    model: Mapping[str, Any],
    session_id: str | None,
    *header_sources: Mapping[str, str | None] | None,
    telemetry: bool | None = None,
) -> dict[str, str | None] | None:
    """pi-coding-agent's ``mergeProviderAttributionHeaders``: opencode session headers, then the
    install-attribution headers (when install telemetry is on: ``PI_TELEMETRY`` when set, else the
    ``telemetry`` setting, default on), then each of ``header_sources`` over them; ``None`` when
    nothing is left."""
    enabled = is_install_telemetry_enabled(telemetry)
    merged: dict[str, str | None] = {
        **(_session_headers(model, session_id) or {}),
        **(_default_attribution_headers(model, enabled) or {}),
    }
    for headers in header_sources:
        if headers:
            merged.update(headers)
    return merged or None


# ---------------------------------------------------------------- utils/hash


def _imul(a: int, b: int) -> int:
    """JavaScript ``Math.imul``: 32-bit signed multiplication."""
    result = ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) & 0xFFFFFFFF
    return result - 0x100000000 if result & 0x80000000 else result


def _to_base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash``: two 32-bit multiplicative hashes over the UTF-16 code units, in base 36.

    Deterministic; used to shorten long or foreign tool-call and item ids.
    """
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        ch = units[i] | (units[i + 1] << 8)
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ ((h1 & 0xFFFFFFFF) >> 16), 2246822507) ^ _imul(h2 ^ ((h2 & 0xFFFFFFFF) >> 13), 3266489909)
    h2 = _imul(h2 ^ ((h2 & 0xFFFFFFFF) >> 16), 2246822507) ^ _imul(h1 ^ ((h1 & 0xFFFFFFFF) >> 13), 3266489909)
    return _to_base36(h2 & 0xFFFFFFFF) + _to_base36(h1 & 0xFFFFFFFF)


# ---------------------------------------------------------------- models calculateCost


def calculate_cost(model: Mapping[str, Any], usage: Usage) -> UsageCost:
    """pi-ai's ``calculateCost``: fills ``usage["cost"]`` from the model's per-million rates (the
    highest ``cost.tiers`` entry whose ``inputTokensAbove`` the prompt exceeds replaces them; 1h
    cache writes, ``cacheWrite1h``, cost twice the base input rate) and returns it."""
    raw: dict[str, Any] = cast("dict[str, Any]", usage)
    input_tokens = raw["input"] + raw["cacheRead"] + raw["cacheWrite"]
    cost = model["cost"]
    rates: Mapping[str, Any] = cost
    matched = -1
    for tier in cost.get("tiers") or []:
        if input_tokens > tier["inputTokensAbove"] and tier["inputTokensAbove"] > matched:
            rates = tier
            matched = tier["inputTokensAbove"]
    long_write = raw.get("cacheWrite1h")
    if long_write is None:
        long_write = 0
    short_write = raw["cacheWrite"] - long_write
    out = raw["cost"]
    out["input"] = (rates["input"] / 1000000) * raw["input"]
    out["output"] = (rates["output"] / 1000000) * raw["output"]
    out["cacheRead"] = (rates["cacheRead"] / 1000000) * raw["cacheRead"]
    out["cacheWrite"] = (rates["cacheWrite"] * short_write + rates["input"] * 2 * long_write) / 1000000
    out["total"] = out["input"] + out["output"] + out["cacheRead"] + out["cacheWrite"]
    return cast("UsageCost", out)
