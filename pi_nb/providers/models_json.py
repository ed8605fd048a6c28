"""``{agent_dir}/models.json``: custom providers and models, and changes to built-in ones, read as
Pi 0.85.0 reads them (pi-coding-agent's ``core/model-config.ts`` and ``core/provider-composer.ts``).

* The file is optional (missing = no custom models). Line comments (``//``) and trailing commas are
  allowed, a byte-order mark is skipped. It must be ``{"providers": {id: provider, ...}}``; the whole
  file is checked against Pi's schema first, and a file that fails to read, parse or check is
  ignored as a whole: its error (Pi's text, naming the file) is :attr:`ModelsJson.error`.
* A provider that is not built in needs ``baseUrl`` and ``api`` (on the provider or on each model)
  and lists ``models``. A model's missing fields get Pi's defaults: ``name`` = its id,
  ``reasoning`` false, ``input`` ``["text"]``, zero ``cost``, ``contextWindow`` 128,000,
  ``maxTokens`` 16,384; its ``compat`` is the provider's ``compat`` with the model's merged over it
  (the nested ``openRouterRouting``, ``vercelGatewayRouting``, ``chatTemplateKwargs``,
  ``chatTemplateArgs`` objects key by key).
* A built-in provider's entry changes its catalog models: ``baseUrl`` and ``compat`` apply to all
  of them, ``models`` adds (or replaces, by id) models whose missing ``api``/``baseUrl`` come from a
  catalog model of the same id, else the same API, else the first Chat Completions one, else the
  first; ``modelOverrides`` (by id) change fields of any model last.
* ``headers`` (provider, model and override ones) and ``apiKey`` are not part of the model: they
  are sent with each request, their values resolved by :func:`resolve_config_value` (``!command``
  runs the command and takes its output; ``$VAR`` / ``${VAR}`` are environment variables; ``$$``
  is a ``$``; anything else is literal). ``authHeader: true`` adds ``Authorization: Bearer <key>``.
* A provider entry that cannot be composed (no ``api``, no ``baseUrl``, a window <= 0, an entry
  with nothing in it) is reported as ``Provider "<id>": <problem>`` and left out: the built-in
  provider stays as it was, a custom one does not exist.

:func:`load_models_json` reads the file once per change (by its size and modification time).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_nb._config_value import config_value_env_names, resolve_config_value
from pi_nb.config import get_agent_dir, node_join
from pi_nb.errors import ProviderError

__all__ = [
    "ModelsJson",
    "ModelsJsonError",
    "load_models_json",
    "models_json_path",
    "resolve_config_value",
    "resolve_request_headers",
]


class ModelsJsonError(ProviderError, ValueError):
    """models.json could not be used for the model asked for (the message is Pi's, with the file)."""


def models_json_path(agent_dir: str | None = None) -> str:
    """``{agent_dir}/models.json`` (the agent dir defaults to ``$PI_CODING_AGENT_DIR`` or
    ``~/.pi/agent``)."""
    return node_join(agent_dir or get_agent_dir(), "models.json")


# --------------------------------------------------------------------------------------------
# the schema (Pi's typebox schema of models.json) and its error messages


_STR = ("string", 0)
_STR1 = ("string", 1)
_NUM = ("number",)
_BOOL = ("boolean",)
_NULL = ("null",)
_UNKNOWN = ("unknown",)


def _obj(
    props: Mapping[str, Any], required: Sequence[str] = ()
) -> tuple[str, Mapping[str, Any], tuple[str, ...]]:
    return ("object", props, tuple(required))


def _lit(*values: str) -> Any:
    if len(values) == 1:
        return ("literal", values[0])
    return ("union", tuple(("literal", v) for v in values))


def _arr(item: Any) -> Any:
    return ("array", item)


def _rec(value: Any) -> Any:
    return ("record", value)


def _union(*schemas: Any) -> Any:
    return ("union", schemas)


_PERCENTILES = _obj({"p50": _NUM, "p75": _NUM, "p90": _NUM, "p99": _NUM})
_PRICE = _union(_NUM, _STR)
_OPENROUTER_ROUTING = _obj(
    {
        "allow_fallbacks": _BOOL,
        "require_parameters": _BOOL,
        "data_collection": _lit("deny", "allow"),
        "zdr": _BOOL,
        "enforce_distillable_text": _BOOL,
        "order": _arr(_STR),
        "only": _arr(_STR),
        "ignore": _arr(_STR),
        "quantizations": _arr(_STR),
        "sort": _union(_STR, _obj({"by": _STR, "partition": _union(_STR, _NULL)})),
        "max_price": _obj(
            {"prompt": _PRICE, "completion": _PRICE, "image": _PRICE, "audio": _PRICE, "request": _PRICE}
        ),
        "preferred_min_throughput": _union(_NUM, _PERCENTILES),
        "preferred_max_latency": _union(_NUM, _PERCENTILES),
    }
)
_VERCEL_ROUTING = _obj({"only": _arr(_STR), "order": _arr(_STR)})
_LEVEL_VALUE = _union(_STR, _NULL)
_LEVEL_MAP = _obj({k: _LEVEL_VALUE for k in ("off", "minimal", "low", "medium", "high", "xhigh", "max")})
_KWARG = _union(
    _union(_STR, _NUM, _BOOL, _NULL),
    _obj({"$var": _lit("thinking.enabled", "thinking.effort"), "omitWhenOff": _BOOL}, ["$var"]),
)
_AFFINITY = _lit("openai", "openai-nosession", "openrouter")
_COMPLETIONS_COMPAT = _obj(
    {
        "supportsStore": _BOOL,
        "supportsDeveloperRole": _BOOL,
        "supportsReasoningEffort": _BOOL,
        "supportsUsageInStreaming": _BOOL,
        "supportsFinishReason": _BOOL,
        "maxTokensField": _lit("max_completion_tokens", "max_tokens"),
        "requiresToolResultName": _BOOL,
        "requiresAssistantAfterToolResult": _BOOL,
        "requiresThinkingAsText": _BOOL,
        "requiresReasoningContentOnAssistantMessages": _BOOL,
        "thinkingFormat": _lit(
            "openai",
            "openrouter",
            "together",
            "baseten",
            "deepseek",
            "zai",
            "qwen",
            "chat-template",
            "qwen-chat-template",
            "string-thinking",
            "ant-ling",
        ),
        "chatTemplateKwargs": _rec(_KWARG),
        "chatTemplateArgs": _rec(_KWARG),
        "cacheControlFormat": _lit("anthropic"),
        "openRouterRouting": _OPENROUTER_ROUTING,
        "vercelGatewayRouting": _VERCEL_ROUTING,
        "supportsOpenAIGrammarTools": _BOOL,
        "supportsStrictMode": _BOOL,
        "sendSessionAffinityHeaders": _BOOL,
        "deferredToolsMode": _lit("kimi"),
        "sessionAffinityFormat": _AFFINITY,
        "supportsLongCacheRetention": _BOOL,
        "vllmPriority": _NUM,
    }
)
_RESPONSES_COMPAT = _obj(
    {
        "supportsDeveloperRole": _BOOL,
        "sessionAffinityFormat": _AFFINITY,
        "supportsLongCacheRetention": _BOOL,
        "supportsStrictMode": _BOOL,
        "supportsOpenAIGrammarTools": _BOOL,
        "supportsAdditionalTools": _BOOL,
        "supportsToolSearch": _BOOL,
        "supportsMaxOutputTokens": _BOOL,
    }
)
_ANTHROPIC_COMPAT = _obj(
    {
        k: _BOOL
        for k in (
            "supportsEagerToolInputStreaming",
            "supportsLongCacheRetention",
            "sendSessionAffinityHeaders",
            "supportsCacheControlOnTools",
            "supportsTemperature",
            "forceAdaptiveThinking",
            "allowEmptySignature",
            "supportsStrictTools",
            "supportsMidConvoEffort",
            "supportsToolReferences",
        )
    }
)
_COMPAT = _union(_COMPLETIONS_COMPAT, _RESPONSES_COMPAT, _ANTHROPIC_COMPAT)
_RATES = {"input": _NUM, "output": _NUM, "cacheRead": _NUM, "cacheWrite": _NUM}
_TIER = _obj({"inputTokensAbove": _NUM, **_RATES}, ["inputTokensAbove", *_RATES])
_COST = _obj({**_RATES, "tiers": _arr(_TIER)}, list(_RATES))
_INPUT = _arr(_lit("text", "image"))
_MODEL = _obj(
    {
        "id": _STR1,
        "name": _STR1,
        "api": _STR1,
        "baseUrl": _STR1,
        "reasoning": _BOOL,
        "thinkingLevelMap": _LEVEL_MAP,
        "input": _INPUT,
        "cost": _COST,
        "contextWindow": _NUM,
        "maxTokens": _NUM,
        "samplingParams": _rec(_UNKNOWN),
        "headers": _rec(_STR),
        "compat": _COMPAT,
    },
    ["id"],
)
_OVERRIDE = _obj(
    {
        "name": _STR1,
        "reasoning": _BOOL,
        "thinkingLevelMap": _LEVEL_MAP,
        "input": _INPUT,
        "cost": _obj({**_RATES, "tiers": _arr(_TIER)}),
        "contextWindow": _NUM,
        "maxTokens": _NUM,
        "samplingParams": _rec(_UNKNOWN),
        "headers": _rec(_STR),
        "compat": _COMPAT,
    }
)
_PROVIDER = _obj(
    {
        "name": _STR1,
        "baseUrl": _STR1,
        "apiKey": _STR1,
        "api": _STR1,
        "oauth": _lit("radius"),
        "headers": _rec(_STR),
        "compat": _COMPAT,
        "authHeader": _BOOL,
        "models": _arr(_MODEL),
        "modelOverrides": _rec(_OVERRIDE),
    }
)
_CONFIG = _obj({"providers": _rec(_PROVIDER)}, ["providers"])


def _pointer(path: str, key: str | int) -> str:
    # typebox does not escape the key: a "/" in it reads as a "." in Pi's message too
    return f"{path}/{key}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(schema: Any, value: Any, path: str, errors: list[tuple[str, str]]) -> None:
    """Typebox's checks of ``schema`` on ``value``, appending ``(instancePath, message)``."""
    kind = schema[0]
    if kind == "unknown":
        return
    if kind == "string":
        if not isinstance(value, str):
            errors.append((path, "must be string"))
        elif len(value.encode("utf-16-le")) // 2 < schema[1]:
            errors.append((path, f"must not have fewer than {schema[1]} characters"))
        return
    if kind == "number":
        if not _is_number(value):
            errors.append((path, "must be number"))
        return
    if kind == "boolean":
        if not isinstance(value, bool):
            errors.append((path, "must be boolean"))
        return
    if kind == "null":
        if value is not None:
            errors.append((path, "must be null"))
        return
    if kind == "literal":
        if value != schema[1] or not isinstance(value, str):
            errors.append((path, "must be equal to constant"))
        return
    if kind == "array":
        if not isinstance(value, list):
            errors.append((path, "must be array"))
            return
        for i, item in enumerate(value):
            _check(schema[1], item, _pointer(path, i), errors)
        return
    if kind == "record":
        if not isinstance(value, dict):
            errors.append((path, "must be object"))
            return
        for key, item in value.items():
            _check(schema[1], item, _pointer(path, key), errors)
        return
    if kind == "object":
        if not isinstance(value, dict):
            errors.append((path, "must be object"))
            return
        missing = [k for k in schema[2] if k not in value]
        if missing:
            errors.append((path, "must have required properties " + ", ".join(missing) + "\0" + missing[0]))
        for key, sub in schema[1].items():
            if key in value:
                _check(sub, value[key], _pointer(path, key), errors)
        return
    if kind == "union":
        branch_errors: list[tuple[str, str]] = []
        for sub in schema[1]:
            found: list[tuple[str, str]] = []
            _check(sub, value, path, found)
            if not found:
                return
            branch_errors += found
        errors.extend(branch_errors)
        errors.append((path, "must match a schema in anyOf"))
        return
    raise AssertionError(kind)


def _format_error(path: str, message: str) -> str:
    """Pi's ``formatValidationPath``: ``a.b.0.c`` (a missing property is named after its object)."""
    base = path.lstrip("/").replace("/", ".") if path.startswith("/") else path.replace("/", ".")
    if "\0" in message:
        message, first = message.split("\0", 1)
        return f"  - {base}.{first}: {message}" if base else f"  - {first}: {message}"
    return f"  - {base or 'root'}: {message}"


def _schema_errors(parsed: Any) -> list[str]:
    errors: list[tuple[str, str]] = []
    _check(_CONFIG, parsed, "", errors)
    return [_format_error(p, m) for p, m in errors]


# --------------------------------------------------------------------------------------------
# reading


_COMMENT_RE = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')
_TRAILING_COMMA_RE = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])')


def strip_json_comments(text: str) -> str:
    """Pi's ``stripJsonComments``: ``//`` line comments and trailing commas go, strings stay."""
    text = _COMMENT_RE.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)
    return _TRAILING_COMMA_RE.sub(
        lambda m: m.group(1) if m.group(1) is not None else (m.group(0) if m.group(0)[0] == '"' else ""),
        text,
    )


def _read_models_file(path: str) -> str | None:
    """The file's text, ``None`` when it does not exist (all file reading of models.json is here)."""
    from pi_nb._fs import read_text_js

    try:
        return read_text_js(path)
    except FileNotFoundError:
        return None


@dataclass(frozen=True)
class ModelsJson:
    """One load of models.json: the checked provider entries, the models they make (pi-ai's model
    dicts, by provider) and Pi's error text (``None`` when all is well)."""

    path: str | None
    providers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    models: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    config_error: str | None = None
    provider_errors: Mapping[str, str] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """Pi's ``ModelRuntime.getError()`` for this file: the load error and each provider's."""
        errors = [self.config_error] if self.config_error else []
        errors += [f'Provider "{p}": {e}' for p, e in self.provider_errors.items()]
        return "\n\n".join(errors) if errors else None

    def provider_models(self, provider: str) -> list[dict[str, Any]] | None:
        """The provider's models as models.json makes them (copies), ``None`` when the file does
        not change that provider."""
        models = self.models.get(provider)
        return None if models is None else [copy.deepcopy(dict(m)) for m in models]

    def get_model(self, provider: str, model_id: str) -> dict[str, Any] | None:
        for model in self.models.get(provider, ()):
            if model["id"] == model_id:
                return copy.deepcopy(dict(model))
        return None

    def provider_error(self, provider: str) -> str | None:
        """The error that keeps ``provider``'s entry out, naming the file."""
        if provider in self.provider_errors:
            return f'Provider "{provider}": {self.provider_errors[provider]}\n\nFile: {self.path}'
        return None


_CACHE: dict[str, tuple[tuple[int, int] | None, ModelsJson]] = {}


def load_models_json(path: str | None = None) -> ModelsJson:
    """models.json at ``path`` (default: the agent dir's), composed over the built-in catalog."""
    from pi_nb.config import normalize_path

    path = normalize_path(path or models_json_path())
    try:
        st = os.stat(path)
        stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == stamp and stamp is not None:
        return cached[1]
    loaded = _load(path)
    _CACHE[path] = (stamp, loaded)
    return loaded


def _load(path: str) -> ModelsJson:
    from pi_nb._fs import strip_bom
    from pi_nb._js import js_json_parse_v8

    try:
        content = _read_models_file(path)
    except (OSError, UnicodeDecodeError) as error:
        return ModelsJson(path, config_error=f"Failed to load models.json: {error}\n\nFile: {path}")
    if content is None:
        return ModelsJson(path)
    try:
        parsed = js_json_parse_v8(strip_json_comments(strip_bom(content)))
    except ValueError as error:  # V8's words: "Expected ',' or '}' after property value in JSON at ..."
        return ModelsJson(path, config_error=f"Failed to parse models.json: {error}\n\nFile: {path}")
    problems = _schema_errors(parsed)
    if problems:
        listed = "\n".join(problems)
        return ModelsJson(path, config_error=f"Invalid models.json schema:\n{listed}\n\nFile: {path}")
    providers: dict[str, Mapping[str, Any]] = dict(parsed["providers"])
    models: dict[str, tuple[Mapping[str, Any], ...]] = {}
    provider_errors: dict[str, str] = {}
    for provider_id, config in providers.items():
        try:
            models[provider_id] = tuple(_compose(provider_id, config))
        except _ComposeError as error:
            provider_errors[provider_id] = str(error)
    return ModelsJson(path, providers, models, None, provider_errors)


# --------------------------------------------------------------------------------------------
# composing (provider-composer.ts)


class _ComposeError(Exception):
    pass


_NESTED_COMPAT = ("openRouterRouting", "vercelGatewayRouting", "chatTemplateKwargs", "chatTemplateArgs")


def _merge_compat(
    base: Mapping[str, Any] | None, override: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    if not override:
        return dict(base) if base is not None else None
    merged = {**(base or {}), **override}
    for key in _NESTED_COMPAT:
        base_value = (base or {}).get(key)
        over_value = override.get(key)
        if isinstance(base_value, dict) or isinstance(over_value, dict):
            merged[key] = {
                **(base_value if isinstance(base_value, dict) else {}),
                **(over_value if isinstance(over_value, dict) else {}),
            }
    return merged


def _set(model: dict[str, Any], key: str, value: Any) -> None:
    """``model[key] = value``, ``undefined`` (``None`` here) leaving the key out as JSON does."""
    if value is None:
        model.pop(key, None)
    else:
        model[key] = value


def _model_from_json(
    provider_id: str,
    definition: Mapping[str, Any],
    config: Mapping[str, Any],
    defaults: Mapping[str, Any] | None,
) -> dict[str, Any]:
    model_id = definition["id"]
    api = definition.get("api") or config.get("api") or (defaults or {}).get("api")
    if not api:
        raise _ComposeError(
            f'Provider {provider_id}, model {model_id}: no "api" specified. Set at provider or model level.'
        )
    base_url = definition.get("baseUrl") or config.get("baseUrl") or (defaults or {}).get("baseUrl")
    if not base_url:
        raise _ComposeError(f'Provider {provider_id}: "baseUrl" is required when defining custom models.')
    window = definition.get("contextWindow")
    if window is not None and window <= 0:
        raise _ComposeError(f"Provider {provider_id}, model {model_id}: invalid contextWindow")
    limit = definition.get("maxTokens")
    if limit is not None and limit <= 0:
        raise _ComposeError(f"Provider {provider_id}, model {model_id}: invalid maxTokens")
    model: dict[str, Any] = {
        "id": model_id,
        "name": definition.get("name", model_id),
        "api": api,
        "provider": provider_id,
        "baseUrl": base_url,
        "reasoning": definition.get("reasoning", False),
        "input": list(definition.get("input", ["text"])),
        "cost": copy.deepcopy(
            definition.get("cost", {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})
        ),
        "contextWindow": window if window is not None else 128000,
        "maxTokens": limit if limit is not None else 16384,
    }
    _set(model, "thinkingLevelMap", copy.deepcopy(definition.get("thinkingLevelMap")))
    _set(model, "samplingParams", copy.deepcopy(definition.get("samplingParams")))
    _set(model, "compat", _merge_compat(config.get("compat"), definition.get("compat")))
    return model


def _find_defaults(
    models: Sequence[Mapping[str, Any]], model_id: str, api: str | None
) -> Mapping[str, Any] | None:
    for pick in (
        lambda m: m["id"] == model_id,
        (lambda m: m["api"] == api) if api else None,
        lambda m: m["api"] == "openai-completions",
    ):
        if pick is None:
            continue
        found = next((m for m in models if pick(m)), None)
        if found is not None:
            return found
    return models[0] if models else None


def _base_models(provider_id: str) -> list[dict[str, Any]]:
    from pi_nb.providers.catalog import builtin_models

    return [copy.deepcopy(dict(spec.raw)) for spec in builtin_models(provider_id)]


def _apply_override(model: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(model)
    for key in ("name", "reasoning", "contextWindow", "maxTokens"):
        if override.get(key) is not None:
            out[key] = override[key]
    if override.get("input") is not None:
        out["input"] = list(override["input"])
    if override.get("thinkingLevelMap"):
        out["thinkingLevelMap"] = {**(model.get("thinkingLevelMap") or {}), **override["thinkingLevelMap"]}
    if override.get("cost"):
        cost_over = override["cost"]
        base_cost = model.get("cost") or {}
        cost = {k: cost_over.get(k, base_cost.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite")}
        tiers = cost_over.get("tiers", base_cost.get("tiers"))
        if tiers is not None:
            cost["tiers"] = copy.deepcopy(tiers)
        out["cost"] = {k: v for k, v in cost.items() if v is not None}
    if override.get("samplingParams"):
        out["samplingParams"] = {**(model.get("samplingParams") or {}), **override["samplingParams"]}
    _set(out, "compat", _merge_compat(model.get("compat"), override.get("compat")))
    return out


def _compose(provider_id: str, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pi's ``applyModelsJson`` then the ``modelOverrides``: the provider's models."""
    if config.get("oauth") and not config.get("baseUrl"):
        raise _ComposeError(f'Provider {provider_id}: "baseUrl" is required when "oauth" is set.')
    has_overrides = bool(config.get("modelOverrides"))
    if (
        not config.get("models")
        and not config.get("baseUrl")
        and not config.get("headers")
        and not config.get("compat")
        and not has_overrides
        and not config.get("apiKey")
        and not config.get("oauth")
        and config.get("authHeader") is None
    ):
        raise _ComposeError(
            f'Provider {provider_id}: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".'
        )
    models: list[dict[str, Any]] = []
    for base in _base_models(provider_id):
        model = dict(base)
        if config.get("oauth") != "radius" and config.get("baseUrl"):
            model["baseUrl"] = config["baseUrl"]
        _set(model, "compat", _merge_compat(base.get("compat"), config.get("compat")))
        models.append(model)
    for definition in config.get("models") or []:
        index = next((i for i, m in enumerate(models) if m["id"] == definition["id"]), -1)
        defaults = _find_defaults(models, definition["id"], definition.get("api") or config.get("api"))
        model = _model_from_json(provider_id, definition, config, defaults)
        if index >= 0:
            models[index] = model
        else:
            models.append(model)
    overrides = config.get("modelOverrides") or {}
    return [_apply_override(m, overrides[m["id"]]) if m["id"] in overrides else m for m in models]


# --------------------------------------------------------------------------------------------
# request-time values: the API key and headers


def resolve_config_value_or_raise(config: str, description: str, env: Mapping[str, str] | None = None) -> str:
    """:func:`resolve_config_value`, raising Pi's ``Failed to resolve ...`` error when it is ``None``."""
    value = resolve_config_value(config, env)
    if value is not None:
        return value
    if config.startswith("!"):
        raise ModelsJsonError(f"Failed to resolve {description} from shell command: {config[1:]}")
    missing = [n for n in config_value_env_names(config) if not ((env or {}).get(n) or os.environ.get(n))]
    if len(missing) == 1:
        raise ModelsJsonError(f"Failed to resolve {description} from environment variable: {missing[0]}")
    if missing:
        raise ModelsJsonError(
            f"Failed to resolve {description} from environment variables: {', '.join(missing)}"
        )
    raise ModelsJsonError(f"Failed to resolve {description}")


def resolve_request_headers(
    loaded: ModelsJson, provider: str, model_id: str, api_key: str | None = None
) -> dict[str, str] | None:
    """The headers models.json adds to a request of ``provider/model_id``: the provider's, then the
    override's and the model definition's (later names win, case-insensitively over the provider's),
    and ``Authorization: Bearer <api_key>`` with ``authHeader``; values resolved (``!cmd``, ``$VAR``)."""
    config = loaded.providers.get(provider)
    if config is None:
        return None
    headers: dict[str, str] = {}
    provider_headers = config.get("headers")
    if provider_headers:
        for name, value in provider_headers.items():
            headers[name] = resolve_config_value_or_raise(value, f'provider "{provider}" header "{name}"')
    if config.get("authHeader"):
        if not api_key:
            raise ModelsJsonError("authHeader requires a resolved API key")
        headers["Authorization"] = f"Bearer {api_key}"
    definition = next((m for m in config.get("models") or [] if m.get("id") == model_id), None)
    raw = {
        **((config.get("modelOverrides") or {}).get(model_id, {}).get("headers") or {}),
        **((definition or {}).get("headers") or {}),
    }
    for name, value in raw.items():
        resolved = resolve_config_value_or_raise(value, f'model "{provider}/{model_id}" header "{name}"')
        for existing in [k for k in headers if k.lower() == name.lower()]:
            del headers[existing]
        headers[name] = resolved
    return headers or None


# --------------------------------------------------------------------------------------------
# the catalog's view: ModelSpecs of the agent dir's models.json


_SPECS: dict[int, tuple[ModelsJson, dict[str, tuple[Any, ...]], dict[str, str]]] = {}


def _specs(loaded: ModelsJson) -> tuple[dict[str, tuple[Any, ...]], dict[str, str]]:
    """``provider -> ModelSpecs`` of a load, and the ``"provider/id"`` of models whose limits a
    ModelSpec refuses (a window or output limit an override set to 0 or less), with the reason."""
    hit = _SPECS.get(id(loaded))
    if hit is not None and hit[0] is loaded:
        return hit[1], hit[2]
    from pi_nb.providers.catalog import ModelSpec

    specs: dict[str, tuple[Any, ...]] = {}
    refused: dict[str, str] = {}
    for provider, models in loaded.models.items():
        kept = []
        for model in models:
            try:
                kept.append(ModelSpec.from_dict(model))
            except (ValueError, TypeError) as error:
                refused[f"{provider}/{model['id']}"] = str(error)
        specs[provider] = tuple(kept)
    if len(_SPECS) > 8:
        _SPECS.clear()
    _SPECS[id(loaded)] = (loaded, specs, refused)
    return specs, refused


def agent_models() -> tuple[ModelsJson, dict[str, tuple[Any, ...]]]:
    """The agent dir's models.json and its models as ModelSpecs by provider (the providers it
    changes or adds; a provider it leaves alone is not listed)."""
    loaded = load_models_json()
    return loaded, _specs(loaded)[0]


def refused_model(loaded: ModelsJson, provider: str, model_id: str) -> str | None:
    """Why ``provider/model_id`` of ``loaded`` is not usable as a model (``None``: it is, or it does
    not exist)."""
    return _specs(loaded)[1].get(f"{provider}/{model_id}")
