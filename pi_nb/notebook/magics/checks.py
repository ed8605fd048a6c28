"""What the magics check before anything changes: a model's readiness (its SDK, its key), the room
a context window leaves above the compaction reserve, and the catalog a spec is checked against.

The decisions are the engine's (:func:`pi_nb.providers.readiness.model_readiness`); this module
words them for a notebook (what to type to fix it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from IPython.core.error import UsageError

from pi_nb.providers.readiness import model_readiness

_BUILTIN_PROVIDERS = ("openai", "anthropic", "ollama")

_FIX_SESSION = "e.g. %pi settings reserveTokens={reserve} keepRecentTokens={keep}"
_FIX_CELL = "e.g. --reserve {reserve} --keep-recent {keep} on the same line"
_FIX_CONFIG = (
    "e.g. %config PiMagics.reserve_tokens = {reserve} and %config PiMagics.keep_recent_tokens = {keep}"
)


def _field(spec: Any, name: str, default: Any = None) -> Any:
    if isinstance(spec, dict):
        return spec.get(name, default)
    return getattr(spec, name, default)


def _model_specs() -> tuple[list[Any], str]:
    """(specs, where they come from): pi-ai 0.85.0's catalog, shipped with pi_nb."""
    from pi_nb.providers.catalog import list_models

    return list(list_models()), "catalog"


def _known_providers() -> list[str]:
    specs, _ = _model_specs()
    names = {str(_field(s, "provider")) for s in specs} | set(_BUILTIN_PROVIDERS)
    return sorted(names)


def _check_model(model: Any, spec: str, where: str) -> None:
    """Refuse, at once, a model whose SDK is missing or whose key is not set (the first turn would fail)."""
    readiness = model_readiness(model, spec)
    if readiness.ok:
        return
    if readiness.package is not None:
        raise UsageError(f"{where}: {readiness.message}, then restart the kernel")
    env = readiness.key_env
    if env is None:  # a sign-in or ambient credentials: the message says what to do
        raise UsageError(f"{where}: {readiness.message}, then choose the model again")
    raise UsageError(
        f"{where}: {readiness.message} — "
        f"set it (%env {env}=... or os.environ['{env}'] = ...), then choose the model again"
    )


def _check_room(window: int, reserve: int, where: str, fix: str) -> None:
    """Refuse a context window that is not above the compaction reserve (the threshold would be
    zero or negative: compaction never runs and every turn overflows)."""
    if reserve >= window:
        r, k = max(1, window // 4), max(1, window // 4)
        raise UsageError(
            f"{where}: a context window of {window:,} tokens is not above the compaction reserve "
            f"({reserve:,} tokens), so compaction could never make room — lower the reserve with it, "
            + fix.format(reserve=r, keep=k)
        )


def _provider_key_envs(specs: Iterable[Any]) -> dict[str, str | None]:
    """The environment variable that holds each provider's key (``None``: no key, or not a model pi_nb runs)."""
    from pi_nb.providers import get_model

    out: dict[str, str | None] = {}
    for s in specs:
        provider = str(_field(s, "provider"))
        if provider in out:
            continue
        env = _field(s, "api_key_env")
        if env is None:
            try:
                env = getattr(get_model(f"{provider}/{_field(s, 'id')}"), "api_key_env", None)
            except Exception:
                env = None
        out[provider] = env or None
    return out
