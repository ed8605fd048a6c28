"""``get_model(spec)``: a model object for ``"offline"``, ``"scripted"`` or any ``"provider/model-id"``
of pi-ai 0.85.0's catalog.

* ``"offline"`` (the default) and ``"scripted"`` are pi_nb's own models.
* ``"provider/model-id"`` of the catalog (``list_models()``; ``"anthropic/claude-sonnet-4-5"``,
  ``"groq/openai/gpt-oss-120b"``, ``"openrouter/anthropic/claude-opus-4.5"``...) gets the catalog's
  numbers: context window, output limit, reasoning flag, input kinds, API, base URL, prices, and
  reads its key from the variable pi-ai uses for that provider (``GROQ_API_KEY``,
  ``OPENROUTER_API_KEY``...). A base URL with ``{PLACEHOLDERS}`` (Cloudflare's account and gateway)
  takes them from the environment variables of the same name.
* The agent dir's ``models.json`` (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``) applies as Pi
  applies it (:mod:`pi_nb.providers.models_json`): its custom providers' models (Ollama, vLLM,
  LM Studio, a proxy...) are ``"provider/model-id"`` specs like catalog ones, and its changes to a
  built-in provider (``baseUrl``, ``compat``, added models, ``modelOverrides``) change that
  provider's models. The model object carries pi-ai's model dict (``pi_ai_model()``); its key is
  the ``apiKey`` models.json gives (``"$VAR"`` names the variable; a literal or ``"!command"`` is
  resolved as Pi resolves it), and ``model.request_headers()`` gives the headers models.json adds
  to each request. A models.json Pi would reject raises
  :class:`~pi_nb.providers.models_json.ModelsJsonError` with Pi's message and the file's path for
  the providers it concerns (a broken file only warns when a catalog model is asked for).
* An id the catalog does not have, for a provider it has, needs ``context_window=`` (the window
  is not guessed); without it the error lists the provider's close ids.
* ``"ollama/<model>"`` is an OpenAI-compatible server at ``$OLLAMA_BASE_URL`` (default
  ``http://127.0.0.1:11434/v1``); with ``$OPENAI_BASE_URL`` set, ``"openai/<model>"`` is any
  OpenAI-compatible server there (vLLM, llama.cpp, LM Studio) spoken to over Chat Completions;
  ``$ANTHROPIC_BASE_URL`` replaces Anthropic's URL the same way.
  Any other provider name is an error, unless ``base_url=`` and ``context_window=`` say where and
  how big (a self-hosted OpenAI-compatible server).
* pi_nb speaks the APIs of its provider table (:func:`provider_table`, ``SPOKEN_APIS``):
  ``anthropic-messages``, ``openai-completions``, ``openai-responses``, ``mistral-conversations``
  (Mistral's own chat API), ``azure-openai-responses`` (Azure OpenAI) and
  ``openai-codex-responses`` (ChatGPT's Codex backend, with a ChatGPT sign-in token),
  ``google-generative-ai`` (Gemini's API), ``google-vertex`` (Vertex AI) and
  ``bedrock-converse-stream`` (Amazon Bedrock's Converse API, with AWS credentials). A catalog
  model on another API is still known to :func:`find_model`, budgets
  and cost analysis; asking to run it raises :class:`UnsupportedApiError`, which names the APIs
  pi_nb speaks.

Keyword overrides win over the catalog: ``context_window=``, ``max_tokens=``, ``reasoning=``,
``base_url=``, ``api_key_env=``, ``timeout=``, ``max_retries=``, and ``api=`` to choose the wire
protocol (``api="openai-completions"`` for an OpenAI model over Chat Completions).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pi_nb.errors import ProviderError
from pi_nb.providers.base import Model, RemoteModel
from pi_nb.providers.catalog import (
    ModelSpec,
    UnknownModelError,
    calculate_cost,
    close_model_ids,
    find_model,
    list_models,
    list_providers,
    provider_api_key_env,
    unknown_provider_text,
)

__all__ = [
    "SPOKEN_APIS",
    "MissingProviderSettingError",
    "ProviderEntry",
    "UnsupportedApiError",
    "get_model",
    "model_spec",
    "provider_class",
    "provider_entry",
    "provider_table",
]


@dataclass(frozen=True)
class ProviderEntry:
    """One API pi_nb speaks: where its provider class lives (imported only when a model of that API
    is made), the pi_nb extra that installs what a turn needs, and the module a turn imports (the
    SDK, or ``httpx`` for the providers that send over it directly; ``None`` for nothing beyond
    pi_nb's own dependencies)."""

    api: str  # pi-ai's API id (a catalog model's "api")
    module: str  # the provider's module
    class_name: str  # the provider class in that module
    extra: str  # pip install 'pi_nb[<extra>]'
    sdk_module: str | None  # what a turn imports (checked before the first turn)


# The one table of the APIs pi_nb speaks, in the order its messages list them. Adding a provider is
# one module (its class declares the same ``extra`` and ``sdk_module``), one line here, its tests.
# fmt: off
_PROVIDERS: tuple[ProviderEntry, ...] = (
    #             pi-ai API id               module                                         class                             extra                     SDK a turn imports
    ProviderEntry("anthropic-messages",      "pi_nb.providers.anthropic_provider",          "AnthropicModel",                 "anthropic",              "httpx"),
    ProviderEntry("openai-completions",      "pi_nb.providers.openai_compat",               "OpenAICompatModel",              "openai",                 "openai"),
    ProviderEntry("openai-responses",        "pi_nb.providers.openai_responses",            "OpenAIResponsesProvider",        "openai",                 "openai"),
    ProviderEntry("mistral-conversations",   "pi_nb.providers.mistral_conversations",       "MistralConversationsModel",      "mistral",                "httpx"),
    ProviderEntry("azure-openai-responses",  "pi_nb.providers.azure_openai_responses",      "AzureOpenAIResponsesProvider",   "azure-openai-responses", "openai"),
    ProviderEntry("openai-codex-responses",  "pi_nb.providers.openai_codex_responses",      "OpenAICodexResponsesProvider",   "openai-codex-responses", "httpx"),
    ProviderEntry("google-generative-ai",    "pi_nb.providers.google_generative_ai",        "GoogleGenerativeAIModel",        "google-generative-ai",   "httpx"),
    ProviderEntry("google-vertex",           "pi_nb.providers.google_vertex",               "GoogleVertexModel",              "google-vertex",          "google.auth"),
    ProviderEntry("bedrock-converse-stream", "pi_nb.providers.bedrock_converse_stream",     "BedrockConverseStreamModel",     "bedrock-converse-stream", "botocore"),
)
# fmt: on
_BY_API: dict[str, ProviderEntry] = {entry.api: entry for entry in _PROVIDERS}

#: The wire protocols pi_nb can run a turn over (the APIs of the provider table).
SPOKEN_APIS: tuple[str, ...] = tuple(entry.api for entry in _PROVIDERS)


def provider_table() -> tuple[ProviderEntry, ...]:
    """Every API pi_nb speaks, as :class:`ProviderEntry` rows (module, class, extra, SDK module)."""
    return _PROVIDERS


def provider_entry(api: str) -> ProviderEntry | None:
    """The table row of ``api`` (a pi-ai API id), or ``None`` when pi_nb does not speak it."""
    return _BY_API.get(api)


def provider_class(api: str) -> type[RemoteModel]:
    """The provider class of ``api``, imported now; :class:`UnsupportedApiError` when pi_nb does not
    speak the API or this installation lacks its module."""
    entry = _BY_API.get(api)
    if entry is None:
        raise UnsupportedApiError(f"pi_nb does not speak the {api} API: it speaks {', '.join(SPOKEN_APIS)}")
    try:
        module = importlib.import_module(entry.module)
    except ModuleNotFoundError as error:
        if error.name != entry.module:
            raise
        hint = (
            "; pass api='openai-completions' to use Chat Completions instead"
            if api == "openai-responses"
            else ""
        )
        label = "Responses" if api == "openai-responses" else api
        raise UnsupportedApiError(
            f"the {api} API needs pi_nb's {label} provider ({entry.module}), which this pi_nb does not have{hint}"
        ) from error
    cls: type[RemoteModel] = getattr(module, entry.class_name)
    return cls


# Providers whose key is a sign-in token pi-ai exchanges (OAuth), which pi_nb does not do: none
# now (GitHub Copilot's token exchange and the ChatGPT sign-in run through pi_nb.auth,
# RemoteModel.resolve_auth).
_SIGN_IN: dict[str, str] = {}

_LOCAL_DEFAULTS = {"ollama": (32_768, 8_192)}

# A base URL in these variables replaces the catalog's (a proxy, or for openai/<model> any
# OpenAI-compatible server, spoken to over Chat Completions as before the catalog existed).
_BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


class UnsupportedApiError(ProviderError, ValueError):
    """A known model whose API pi_nb cannot run a turn over (it still serves budgets and costs)."""


class MissingProviderSettingError(ProviderError, ValueError):
    """A catalog model whose base URL needs a value from the environment that is not set
    (Cloudflare's ``CLOUDFLARE_ACCOUNT_ID``, ``CLOUDFLARE_GATEWAY_ID``)."""


def model_spec(model: Model) -> ModelSpec | None:
    """The catalog entry of a model object (by its ``provider`` and ``id``), ``None`` if unknown."""
    return find_model(model.provider, model.id)


def _fill_placeholders(url: str, spec_name: str) -> str:
    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        value = os.environ.get(name)
        if not value:
            raise MissingProviderSettingError(
                f"{spec_name}: the base URL {url} needs ${name}; set it, or pass base_url="
            )
        return value

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", sub, url)


def _provider_default(provider: str, api: str | None) -> ModelSpec:
    """The provider's most common API (and its base URL) among its catalog models."""
    models = list_models(provider)
    if api is not None:
        same = [m for m in models if m.api == api]
        models = same or models
    counts: dict[str, int] = {}
    for m in models:
        counts[m.api] = counts.get(m.api, 0) + 1
    best = max(counts, key=lambda a: counts[a])
    return next(m for m in models if m.api == best)


def get_model(spec: str = "offline", **overrides: Any) -> Model:
    """A model object for ``spec`` (see the module docstring); keyword overrides win."""
    if spec in ("offline", "pi_nb/offline"):
        from pi_nb.providers.offline import OfflineModel

        return OfflineModel(**overrides)
    if spec == "scripted":
        from pi_nb.providers.scripted import ScriptedModel

        return ScriptedModel(**overrides)
    if "/" not in spec:
        raise UnknownModelError(
            f"Unknown model {spec!r}: use 'offline' or 'provider/model-id' (e.g. 'anthropic/claude-sonnet-4-5');"
            " pi_nb.list_models() lists the catalog"
        )
    provider, model_id = spec.split("/", 1)
    if not provider or not model_id:
        raise UnknownModelError(f"Unknown model {spec!r}: use 'provider/model-id'")
    api_override: str | None = overrides.pop("api", None)
    kwargs: dict[str, Any] = {}  # keyword arguments of the model class chosen below
    custom = _models_json_entry(spec, provider, model_id)
    known = find_model(provider, model_id)
    env_base = os.environ.get(_BASE_URL_ENV[provider]) if provider in _BASE_URL_ENV else None
    compat_server = bool(env_base) and provider == "openai"

    if custom is not None and known is None and provider not in list_models_json_catalog_providers():
        raise UnknownModelError(
            f"Unknown model {spec!r}: {provider} (from {custom[0].path}) has no model {model_id!r};"
            f" its models: {', '.join(m['id'] for m in custom[0].models.get(provider, ())) or 'none'}"
        )
    if provider in _LOCAL_DEFAULTS and known is None:
        window, max_tokens = _LOCAL_DEFAULTS[provider]
        api = api_override or "openai-completions"
        kwargs.update(context_window=window, max_tokens=max_tokens, reasoning=False)
        kwargs["base_url"] = os.environ.get("OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1")
    elif known is not None:
        api = api_override or ("openai-completions" if compat_server else known.api)
        kwargs.update(
            context_window=known.context_window,
            max_tokens=known.max_tokens,
            reasoning=known.reasoning,
            input=known.input,
            name=known.name,
        )
        if not env_base:
            kwargs["base_url"] = known.base_url
        # usage.cost of every answer, as pi-ai's providers compute it (the catalog's prices)
        kwargs["cost_function"] = functools.partial(calculate_cost, known)
        kwargs["pi_model"] = known.raw
        if api == "openai-responses":
            level_map = known.raw.get("thinkingLevelMap")
            if isinstance(level_map, dict):
                kwargs["thinking_level_map"] = level_map
            compat = known.raw.get("compat") or {}
            if "supportsStrictMode" in compat:  # absent stays absent: pi-ai's model has no such key
                kwargs["supports_strict_mode"] = bool(compat["supportsStrictMode"])
    elif provider in list_providers():
        if "context_window" not in overrides:
            close = close_model_ids(provider, model_id)
            hint = f" Close ids: {', '.join(close)}." if close else ""
            raise UnknownModelError(
                f"Unknown model {spec!r}: {provider} has no model {model_id!r} in the catalog (pi-ai 0.85.0)."
                f"{hint} For another model pass context_window= (and max_tokens=) so budgets are right;"
                f" pi_nb.list_models({provider!r}) lists its models"
            )
        default = _provider_default(provider, api_override)
        api = api_override or ("openai-completions" if compat_server else default.api)
        kwargs["max_tokens"] = min(16_384, int(overrides["context_window"]))
        if not env_base:
            kwargs["base_url"] = default.base_url
    else:
        if "base_url" not in overrides or "context_window" not in overrides:
            raise UnknownModelError(
                f"{spec}: {unknown_provider_text(provider)}; 'ollama/<model>' is a local Ollama. For "
                "another OpenAI-compatible server pass base_url= and context_window= (and api_key_env=)"
            )
        api = api_override or "openai-completions"
        kwargs["max_tokens"] = min(16_384, int(overrides["context_window"]))

    if api not in SPOKEN_APIS:
        raise UnsupportedApiError(
            f"{spec} uses the {api} API, which pi_nb does not speak: it speaks {', '.join(SPOKEN_APIS)}. "
            "The model is still known for budgets and costs (pi_nb.find_model, pi_nb.calculate_cost)"
        )
    if provider in _SIGN_IN and api_override is None and "base_url" not in overrides:
        raise UnsupportedApiError(
            f"{spec}: {provider} signs in through {_SIGN_IN[provider]}, which pi_nb does not do; "
            "the model is known for budgets and costs (pi_nb.find_model). Use the model through "
            "its own provider (e.g. openai/... or anthropic/...)"
        )
    if kwargs.get("base_url") and "base_url" not in overrides and api != "google-vertex":
        # (Vertex's catalog URL keeps its {location}: pi-ai builds the host from the location)
        kwargs["base_url"] = _fill_placeholders(kwargs["base_url"].rstrip("/"), spec)
    key_env = provider_api_key_env(provider)
    configured_key = _models_json_key_env(custom, provider) if custom is not None else None
    if configured_key is not None and "api_key_env" not in overrides:
        kwargs["api_key_env"] = configured_key
    elif key_env and "api_key_env" not in overrides:
        # anthropic: the provider reads pi-ai's chain from here (ANTHROPIC_AUTH_TOKEN as a bearer
        # token, then ANTHROPIC_OAUTH_TOKEN, then this key; anthropic_provider.resolve_auth)
        kwargs["api_key_env"] = "ANTHROPIC_API_KEY" if provider == "anthropic" else key_env[0]
    kwargs.update(overrides)
    model = _construct(api, provider, model_id, kwargs)
    if custom is not None:
        from pi_nb.providers.models_json import resolve_request_headers

        loaded = custom[0]
        key_name = getattr(model, "api_key_env", "") or ""

        def request_headers() -> dict[str, str]:
            """The headers models.json adds to a request of this model, resolved now as Pi resolves
            them for each request (``!command`` run, ``$VAR`` read); Pi's error when one cannot be."""
            return resolve_request_headers(loaded, provider, model_id, os.environ.get(key_name) or None) or {}

        model.request_headers = request_headers  # type: ignore[attr-defined]
    return model


def default_model_spec_from_settings(settings: Any) -> str | None:
    """``"defaultProvider/defaultModel"`` of Pi's settings (a
    :class:`~pi_nb.resources.settings.SettingsManager`) when that model exists and its key is set
    (Pi starts a new session on it only when the provider's auth is configured), else ``None``."""
    spec: str | None = settings.get_default_model_spec()
    if spec is None:
        return None
    try:
        model = get_model(spec)
    except (ProviderError, ValueError):
        return None
    key_env = getattr(model, "api_key_env", "")
    if key_env and not os.environ.get(key_env):
        return None
    return spec


def list_models_json_catalog_providers() -> list[str]:
    """Providers of pi-ai's own catalog (without the agent dir's models.json ones)."""
    from pi_nb.providers.catalog import _catalog

    return list(_catalog().providers)


def _models_json_entry(spec: str, provider: str, model_id: str) -> tuple[Any, Mapping[str, Any]] | None:
    """The agent dir's models.json and its entry for ``provider`` (``None`` when it has none);
    raises :class:`~pi_nb.providers.models_json.ModelsJsonError` when the file, that entry or that
    model cannot be used, and warns when a broken file leaves a catalog provider as it is."""
    from pi_nb.providers.models_json import ModelsJsonError, load_models_json, refused_model

    loaded = load_models_json()
    if loaded.config_error is not None:
        if provider not in list_models_json_catalog_providers():
            raise ModelsJsonError(
                f"{spec}: models.json is not usable, so {provider!r} is unknown.\n{loaded.config_error}"
            )
        warnings.warn(f"models.json is ignored: {loaded.config_error}", stacklevel=3)
        return None
    problem = loaded.provider_error(provider)
    if problem is not None:
        raise ModelsJsonError(f"{spec}: {problem}")
    config = loaded.providers.get(provider)
    if config is None:
        return None
    refused = refused_model(loaded, provider, model_id)
    if refused is not None:
        raise ModelsJsonError(f"{spec}: {refused} (from {loaded.path})")
    return loaded, config


def _models_json_key_env(custom: tuple[Any, Mapping[str, Any]], provider: str) -> str | None:
    """The environment variable holding the provider's key as models.json's ``apiKey`` gives it:
    ``"$NAME"``/``"${NAME}"`` is that variable; a literal, a ``!command`` or a template is resolved
    now (as Pi resolves it) into ``PI_NB_MODELS_JSON_KEY_<PROVIDER>``, a variable of this process
    only, registered as a secret. ``None`` when models.json gives no key."""
    from pi_nb.providers.models_json import resolve_config_value_or_raise

    raw = custom[1].get("apiKey")
    if not isinstance(raw, str):
        return None
    whole = re.fullmatch(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", raw)
    if whole:
        return whole.group(1) or whole.group(2)
    value = resolve_config_value_or_raise(raw, f'API key for provider "{provider}"')
    name = "PI_NB_MODELS_JSON_KEY_" + re.sub(r"[^A-Za-z0-9]", "_", provider).upper()
    os.environ[name] = value
    return name


def _construct(api: str, provider: str, model_id: str, kwargs: dict[str, Any]) -> Model:
    """The model object of ``api``'s provider class (the table's row, imported now)."""
    try:
        cls = provider_class(api)
    except UnsupportedApiError as error:
        raise UnsupportedApiError(f"{provider}/{model_id}: {error}") from error.__cause__
    return cls(model_id, provider=provider, **kwargs)
