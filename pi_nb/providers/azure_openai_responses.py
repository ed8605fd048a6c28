"""``AzureOpenAIResponsesProvider``: models on Azure OpenAI's Responses API
(``azure-openai-responses``), as pi-ai 0.85.0 runs them.

pi-ai's ``azure-openai-responses`` provider, as Pi's agent calls it through ``streamSimple``; it
shares the Responses code of :mod:`pi_nb.providers.openai_responses` (the input items, the tools,
the stream reading) and differs in:

- the client: the ``openai`` SDK's Azure client (``AsyncAzureOpenAI``: the key in ``api-key``, the
  API version as ``?api-version=``) at ``POST {baseUrl}/responses``, with Pi's ``User-Agent``,
  the model's headers and the headers Pi's agent adds; no session headers;
- the endpoint: ``$AZURE_OPENAI_BASE_URL``, else ``https://$AZURE_OPENAI_RESOURCE_NAME.openai.azure.com/openai/v1``,
  else the model's base URL (models.json); an Azure host given without a path (or with ``/openai``,
  ``/openai/v1/responses``) is given ``/openai/v1``. The API version is
  ``$AZURE_OPENAI_API_VERSION`` (``v1`` by default);
- the deployment: the body's ``model`` is the model's deployment in
  ``$AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``"gpt-4.1=my-gpt41,gpt-5=prod-gpt5"``), else its id;
- the body: the session id is always the ``prompt_cache_key`` (no cache-retention choice), every
  tool is sent at once, tools carry ``strict`` unless the model's compat says it has no strict mode,
  no service tier;
- errors: ``Azure OpenAI API error (status): ...``; no service-tier pricing.

``StreamOptions.extra`` may carry pi-ai's per-request Azure options: ``azure_api_version``,
``azure_resource_name``, ``azure_base_url``, ``azure_deployment_name`` (they win over the
variables). The key comes from ``$AZURE_OPENAI_API_KEY``; it is never stored.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit, urlunsplit

from pi_nb.providers._pi_ai_util import (
    clamp_openai_prompt_cache_key,
    provider_attribution_headers,
)
from pi_nb.providers._stream_common import (
    format_provider_error,
    js_shaped_error_from,
    normalize_provider_error,
)
from pi_nb.providers.base import Context, StreamOptions
from pi_nb.providers.openai_responses import (
    _NO_TIER_PRICING,
    OpenAIResponsesProvider,
    _require_openai,
    convert_responses_messages,
    convert_responses_tools,
)
from pi_nb.providers.simple_options import pi_user_agent

__all__ = [
    "AZURE_TOOL_CALL_PROVIDERS",
    "AzureOpenAIResponsesProvider",
    "normalize_azure_base_url",
    "parse_deployment_name_map",
    "resolve_azure_config",
]

DEFAULT_AZURE_API_VERSION = "v1"
AZURE_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode", "azure-openai-responses"})
_MIN_OUTPUT_TOKENS = 16  # the Responses API rejects max_output_tokens below 16
_AZURE_OPTIONS = ("azure_api_version", "azure_resource_name", "azure_base_url", "azure_deployment_name")
_AZURE_HOST_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


def parse_deployment_name_map(value: str | None) -> dict[str, str]:
    """pi-ai's ``parseDeploymentNameMap``: ``"model=deployment,..."`` as a dict (entries without
    both sides are skipped)."""
    out: dict[str, str] = {}
    for entry in (value or "").split(","):
        trimmed = entry.strip()
        if not trimmed:
            continue
        parts = trimmed.split("=")[:2]  # JavaScript's split("=", 2)
        if len(parts) < 2 or not parts[0] or not parts[1]:
            continue
        out[parts[0].strip()] = parts[1].strip()
    return out


def normalize_azure_base_url(base_url: str) -> str:
    """pi-ai's ``normalizeAzureBaseUrl``: trailing slashes dropped, and an Azure host without a
    path (or with ``/openai`` or ``/openai/v1/responses``) given ``/openai/v1``."""
    trimmed = base_url.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"Invalid Azure OpenAI base URL: {base_url}")
    host = (parts.hostname or "").lower()
    netloc = parts.netloc.lower() if "@" not in parts.netloc else parts.netloc
    path, query = parts.path, parts.query
    normalized = path.rstrip("/")
    if host.endswith(_AZURE_HOST_SUFFIXES) and normalized in ("", "/", "/openai", "/openai/v1/responses"):
        path, query = "/openai/v1", ""
    elif not path:
        path = "/"  # the URL's own form (``new URL`` gives an empty path "/")
    return urlunsplit((parts.scheme.lower(), netloc, path, query, parts.fragment)).rstrip("/")


def _env(name: str) -> str | None:
    return os.environ.get(name) or None


def resolve_azure_config(model: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[str, str]:
    """pi-ai's ``resolveAzureConfig``: ``(base URL, API version)`` from the request options, the
    ``AZURE_OPENAI_*`` variables and the model's base URL, in that order."""
    api_version = (
        options.get("azure_api_version") or _env("AZURE_OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
    )
    given = str(options.get("azure_base_url") or "").strip() or (_env("AZURE_OPENAI_BASE_URL") or "").strip()
    resource = options.get("azure_resource_name") or _env("AZURE_OPENAI_RESOURCE_NAME")
    base = (
        given
        or (f"https://{resource}.openai.azure.com/openai/v1" if resource else "")
        or model.get("baseUrl")
    )
    if not base:
        raise ValueError(
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, "
            "or pass azureBaseUrl, azureResourceName, or model.baseUrl."
        )
    return normalize_azure_base_url(str(base)), str(api_version)


class AzureOpenAIResponsesProvider(OpenAIResponsesProvider):
    """A model of an Azure OpenAI deployment over the Responses API (``azure-openai-responses/...``)."""

    api = "azure-openai-responses"
    default_provider = "azure-openai-responses"
    base_url_env = ""
    default_api_key_env = "AZURE_OPENAI_API_KEY"
    sdk_module: ClassVar[str | None] = "openai"
    extra: ClassVar[str] = "azure-openai-responses"

    _no_stop_reason_text = "Azure OpenAI Responses stream ended without a stop reason"

    def _error_text(self, error: BaseException) -> str:
        """pi-ai's ``formatAzureOpenAIError``."""
        return format_provider_error(
            normalize_provider_error(js_shaped_error_from(error)), "Azure OpenAI API error"
        )

    def _pricing_service_tier(self, response_tier: Any, request_tier: Any) -> Any:
        return _NO_TIER_PRICING

    def _azure_options(self, opts: StreamOptions) -> dict[str, Any]:
        return {k: v for k, v in (opts.extra or {}).items() if k in _AZURE_OPTIONS}

    def _options(self, model: Mapping[str, Any], context: Context, opts: StreamOptions) -> dict[str, Any]:
        """pi-ai's ``streamSimple``: the base options and the clamped reasoning effort, with the
        Azure options kept out of the sampling parameters and read from ``azure``."""
        azure = self._azure_options(opts)
        rest = {k: v for k, v in (opts.extra or {}).items() if k not in _AZURE_OPTIONS}
        base = super()._options(model, context, dataclasses.replace(opts, extra=rest))
        base.pop("serviceTier", None)
        base["azure"] = azure
        return base

    def deployment_name(self, options: Mapping[str, Any] | None = None) -> str:
        """pi-ai's ``resolveDeploymentName``: the request's deployment, else the model's entry in
        ``$AZURE_OPENAI_DEPLOYMENT_NAME_MAP``, else the model id."""
        given = (options or {}).get("azure_deployment_name")
        if given:
            return str(given)
        return parse_deployment_name_map(_env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")).get(self.id) or self.id

    def _params(
        self, model: Mapping[str, Any], context: Context, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """pi-ai's ``buildParams`` of ``azure-openai-responses``."""
        compat: Mapping[str, Any] = model.get("compat") or {}
        grammar_tools = bool(compat.get("supportsOpenAIGrammarTools") or False)
        strict_mode = compat.get("supportsStrictMode")
        messages = convert_responses_messages(
            model,
            context,
            AZURE_TOOL_CALL_PROVIDERS,
            grammar_tool_input_properties=self._grammar_properties(model, context),
        )
        params: dict[str, Any] = {
            "model": self.deployment_name(options.get("azure") or {}),
            "input": messages,
            "stream": True,
        }
        key = clamp_openai_prompt_cache_key(options.get("sessionId"))
        if key is not None:
            params["prompt_cache_key"] = key
        params["store"] = False
        if options.get("maxTokens"):
            params["max_output_tokens"] = max(options["maxTokens"], _MIN_OUTPUT_TOKENS)
        if options.get("temperature") is not None:
            params["temperature"] = options["temperature"]
        if context.tools:
            params["tools"] = convert_responses_tools(
                cast(Sequence[Mapping[str, Any]], context.tools),
                supports_strict_mode=True if strict_mode is None else bool(strict_mode),
                supports_openai_grammar_tools=grammar_tools,
            )
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
            elif not (level_map is not None and "off" in level_map and level_map["off"] is None):
                off = level_map.get("off") if level_map else None
                params["reasoning"] = {"effort": off if off is not None else "none"}
        sampling = options.get("samplingParams")
        if sampling:
            params.update(sampling)
        return params

    def _api_key(self, model: Mapping[str, Any], headers: Mapping[str, Any] | None) -> str:
        key = self.resolve_api_key()
        if not key:
            raise RuntimeError(f"No API key for provider: {model.get('provider')}")
        return key

    def _env_key(self) -> str | None:
        return self.resolve_api_key()

    def _request_headers(self, model: Mapping[str, Any], session_id: str | None) -> dict[str, Any]:
        """The headers Pi's agent passes with each request (the provider attribution and the
        models.json credential headers)."""
        return dict(provider_attribution_headers(model, session_id, self.credential_headers() or None) or {})

    def _client(
        self,
        model: Mapping[str, Any],
        api_key: str,
        session_id: str | None,
        extra: Mapping[str, Any],
        options: Mapping[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """pi-ai's ``createClient``: the SDK's Azure client, and the headers each request removes."""
        openai = _require_openai()
        headers: dict[str, Any] = {"User-Agent": pi_user_agent(), **(model.get("headers") or {}), **extra}
        omitted = {k: openai.Omit() for k, v in headers.items() if v is None}
        base_url, api_version = resolve_azure_config(model, (options or {}).get("azure") or {})
        kwargs: dict[str, Any] = {
            "api_key": api_key,
            "api_version": api_version,
            "base_url": base_url,
            "default_headers": {k: v for k, v in headers.items() if v is not None},
            "timeout": self.timeout,
            "max_retries": 0,
        }
        http_client = self.http_client()
        if http_client is not None:
            kwargs["http_client"] = http_client
        return openai.AsyncAzureOpenAI(**kwargs), omitted
