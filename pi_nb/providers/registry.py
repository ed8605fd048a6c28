"""Well-known models with their real context windows and output limits, and ``get_model(spec)``.

``spec`` is ``"offline"`` (the default), ``"scripted"``, or ``"provider/model-id"`` such as
``"openai/gpt-4o"``, ``"anthropic/claude-sonnet-4-5"``, ``"ollama/llama3.1"`` (an OpenAI-compatible
server at ``$OLLAMA_BASE_URL`` or ``http://127.0.0.1:11434/v1``). Unknown ids of a known provider
get that provider's defaults; pass ``context_window=``/``max_tokens=`` to be exact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pi_nb.providers.base import Model

__all__ = ["KNOWN_MODELS", "ModelSpec", "get_model"]


@dataclass(frozen=True)
class ModelSpec:
    """What pi_nb knows of a model: limits and capabilities (from the providers' model pages)."""

    provider: str
    id: str
    context_window: int
    max_tokens: int
    reasoning: bool
    input: tuple[str, ...] = ("text", "image")


KNOWN_MODELS: dict[str, ModelSpec] = {
    f"{m.provider}/{m.id}": m
    for m in (
        ModelSpec("openai", "gpt-4o", 128_000, 16_384, False),
        ModelSpec("openai", "gpt-4o-mini", 128_000, 16_384, False),
        ModelSpec("openai", "gpt-4.1", 1_047_576, 32_768, False),
        ModelSpec("openai", "gpt-4.1-mini", 1_047_576, 32_768, False),
        ModelSpec("openai", "o3", 200_000, 100_000, True),
        ModelSpec("openai", "o4-mini", 200_000, 100_000, True),
        ModelSpec("openai", "gpt-5", 400_000, 128_000, True),
        ModelSpec("openai", "gpt-5-mini", 400_000, 128_000, True),
        ModelSpec("anthropic", "claude-opus-4-1", 200_000, 32_000, True),
        ModelSpec("anthropic", "claude-sonnet-4-5", 200_000, 64_000, True),
        ModelSpec("anthropic", "claude-haiku-4-5", 200_000, 64_000, True),
        ModelSpec("anthropic", "claude-3-5-haiku-latest", 200_000, 8_192, False),
    )
}

_DEFAULTS = {"openai": (128_000, 16_384), "anthropic": (200_000, 64_000), "ollama": (32_768, 8_192)}


def get_model(spec: str = "offline", **overrides: Any) -> Model:
    """A model object for ``spec`` (see the module docstring); keyword overrides win."""
    if spec in ("offline", "pi_nb/offline"):
        from pi_nb.providers.offline import OfflineModel

        return OfflineModel(**overrides)
    if spec == "scripted":
        from pi_nb.providers.scripted import ScriptedModel

        return ScriptedModel(**overrides)
    if "/" not in spec:
        raise ValueError(
            f"Unknown model {spec!r}: use 'offline' or 'provider/model-id' (e.g. 'openai/gpt-4o')"
        )
    provider, model_id = spec.split("/", 1)
    known = KNOWN_MODELS.get(spec)
    window, max_tokens = (
        (known.context_window, known.max_tokens) if known else _DEFAULTS.get(provider, (128_000, 16_384))
    )
    kwargs: dict[str, Any] = {
        "context_window": window,
        "max_tokens": max_tokens,
        "reasoning": known.reasoning if known else False,
    }
    kwargs.update(overrides)
    if provider == "anthropic":
        from pi_nb.providers.anthropic_provider import AnthropicModel

        return AnthropicModel(model_id, **kwargs)
    from pi_nb.providers.openai_compat import OpenAICompatModel

    if provider == "ollama":
        kwargs.setdefault("base_url", os.environ.get("OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1"))
    return OpenAICompatModel(model_id, provider=provider, **kwargs)
