"""Which credential a request uses, as pi-ai 0.85.0 resolves it (``auth/resolve.ts``).

1. a key passed explicitly;
2. the agent dir's ``auth.json`` entry of the provider, which then owns it: an ``api_key`` entry's
   key (its ``!command`` / ``$VAR`` resolved; an entry without a key falls through to the
   environment as pi-ai's ``envApiKeyAuth`` does), an ``oauth`` entry's token, refreshed first
   when it has less than five minutes left (under the file lock, re-checked there so two
   processes never both refresh, the rotated credential written back in Pi's format); an OAuth
   entry for a provider that has no sign-in, or whose refresh failed, resolves to nothing (no
   silent fall-back to the environment); an ``auth.json`` that cannot be read at all is passed
   over with a warning, as Pi's storage passes over it (its problem is the error when the
   environment has no key either);
3. the environment (the provider's key variables).

:func:`credential_source` says where that is, without resolving commands, refreshing or showing
a value.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pi_nb._catalog_data import bundled_catalog
from pi_nb.auth.storage import AuthEntryError, AuthFileError, AuthStorage, Credential

__all__ = [
    "DEFAULT_OAUTH_MINIMUM_VALIDITY_MS",
    "OAUTH_PROVIDERS",
    "AuthError",
    "ResolvedAuth",
    "available_model_ids",
    "credential_source",
    "oauth_flow",
    "resolve_provider_auth",
]

DEFAULT_OAUTH_MINIMUM_VALIDITY_MS = 5 * 60 * 1000

#: pi-ai 0.85.0's providers with an OAuth sign-in, and the sign-in's name
OAUTH_PROVIDERS: dict[str, str] = {
    "anthropic": "Anthropic (Claude Pro/Max)",
    "openai-codex": "OpenAI (ChatGPT Plus/Pro)",
    "github-copilot": "GitHub Copilot",
    "openrouter": "OpenRouter OAuth",
    "kimi-coding": "Kimi Code (subscription)",
    "xai": "xAI (Grok/X subscription)",
    "radius": "Radius",
}

_FLOW_MODULES = {
    "anthropic": "pi_nb.auth.oauth.anthropic",
    "openai-codex": "pi_nb.auth.oauth.openai_codex",
    "github-copilot": "pi_nb.auth.oauth.github_copilot",
    "xai": "pi_nb.auth.oauth.xai",
    "kimi-coding": "pi_nb.auth.oauth.kimi_coding",
    "openrouter": "pi_nb.auth.oauth.openrouter",
}


class AuthError(RuntimeError):
    """A credential could not be resolved (a refresh failed, ``auth.json`` is broken)."""


@dataclass(frozen=True)
class ResolvedAuth:
    """The auth one request uses (pi-ai's ``ModelAuth``) and where it came from. The key and the
    headers are left out of the ``repr``."""

    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: ``"explicit"``, ``"environment: NAME"``, ``"auth.json (api key)"``, ``"auth.json (OAuth)"``
    source: str = ""
    oauth: bool = False


def oauth_flow(provider: str) -> ModuleType | None:
    """The module with ``login``/``refresh``/``to_auth`` for ``provider``'s sign-in (``None`` for
    a provider pi_nb does not sign in to)."""
    name = _FLOW_MODULES.get(provider)
    if name is None:
        return None
    import importlib

    return importlib.import_module(name)


def _env(name: str, env: Mapping[str, str] | None = None) -> str | None:
    value = (env or {}).get(name) or os.environ.get(name)
    return value if value and value.strip() else None


def _from_env(env_vars: Sequence[str], env: Mapping[str, str] | None = None) -> ResolvedAuth | None:
    for name in env_vars:
        value = _env(name, env)
        if value:
            return ResolvedAuth(api_key=value, source=f"environment: {name}")
    return None


def _now_ms() -> float:
    return time.time() * 1000


def _oauth_auth(provider: str, credential: Credential) -> ResolvedAuth:
    flow = oauth_flow(provider)
    derived: dict[str, Any] = (
        flow.to_auth(credential) if flow is not None else {"apiKey": credential["access"]}
    )
    return ResolvedAuth(
        api_key=derived.get("apiKey"),
        base_url=derived.get("baseUrl"),
        headers=dict(derived.get("headers") or {}),
        source="auth.json (OAuth)",
        oauth=True,
    )


def _refresh_stored(
    storage: AuthStorage,
    provider: str,
    min_validity_ms: float,
    refresh: Callable[[Credential], Mapping[str, Any]] | None,
) -> Credential | None:
    """The double-checked refresh: under the lock, re-read; refresh only if still expiring."""

    def expiring(c: Credential) -> bool:
        return _now_ms() + min_validity_ms >= (c.expires or 0)

    def update(current: Credential | None) -> Mapping[str, Any] | None:
        if current is None or current.type != "oauth":
            return None
        if not expiring(current):
            return None
        if refresh is None:
            raise AuthError(
                f"OAuth refresh failed for {provider}: pi_nb does not refresh {provider}'s sign-in; "
                f"sign in again with Pi (/login)"
            )
        try:
            return refresh(current)
        except AuthError:
            raise
        except Exception as exc:
            raise AuthError(f"OAuth refresh failed for {provider}: {exc}") from None

    post = storage.modify(provider, update)
    if post is None or post.type != "oauth":
        return None
    return post


def resolve_provider_auth(
    provider: str,
    *,
    api_key: str | None = None,
    env_vars: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    storage: AuthStorage | None = None,
    ambient: bool = True,
    min_validity_ms: float | None = None,
) -> ResolvedAuth | None:
    """``provider``'s auth: ``api_key`` if given, else its ``auth.json`` entry (an OAuth token
    refreshed when it expires within five minutes, or ``min_validity_ms``), else the first set
    variable of ``env_vars`` (skipped when ``ambient`` is false). ``None``: not configured.
    Raises :class:`AuthError` when ``auth.json`` is unreadable or a refresh fails."""
    if api_key is not None:
        from pi_nb.redaction import register_secret

        register_secret(api_key, f"{provider} key")
        return ResolvedAuth(api_key=api_key, source="explicit")
    store = storage or AuthStorage()
    try:
        stored = store.read(provider)
    except AuthEntryError as exc:
        raise AuthError(f"Credential store read failed for {provider}: {exc}") from None
    except AuthFileError as exc:
        # Pi's storage keeps going without an unreadable file (the environment still counts):
        # so does pi_nb, with a warning, and the file's problem is the error when nothing else is set
        found = _from_env(env_vars, env) if ambient else None
        _warn_once(str(exc))
        if found is None and ambient:
            raise AuthError(f"No credential for {provider}: {exc}") from None
        return found
    if stored is not None:
        if stored.type == "oauth":
            if provider not in OAUTH_PROVIDERS:
                return None
            minimum = max(DEFAULT_OAUTH_MINIMUM_VALIDITY_MS, min_validity_ms or 0)
            credential: Credential | None = stored
            if _now_ms() + minimum >= (stored.expires or 0):
                flow = oauth_flow(provider)
                try:
                    credential = _refresh_stored(store, provider, minimum, flow.refresh if flow else None)
                except AuthFileError as exc:
                    raise AuthError(f"Credential store modify failed for {provider}: {exc}") from None
                if credential is None:
                    return None
                if min_validity_ms is not None and _now_ms() + minimum >= (credential.expires or 0):
                    raise AuthError(f"OAuth refresh returned a token that expires too soon for {provider}")
            assert credential is not None
            return _oauth_auth(provider, credential)
        key = stored.get("key")
        cred_env = stored.get("env") if isinstance(stored.get("env"), dict) else {}
        if key:
            return ResolvedAuth(api_key=key, env=dict(cred_env), source="auth.json (api key)")
        found = _from_env(env_vars, {**(env or {}), **cred_env}) if ambient else None
        return found
    return _from_env(env_vars, env) if ambient else None


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        import warnings

        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _expiry_text(ms: float) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))
    return f"expired {when}" if ms <= _now_ms() else f"expires {when}"


def credential_source(
    provider: str,
    env_vars: Sequence[str] | None = None,
    *,
    storage: AuthStorage | None = None,
) -> str | None:
    """Where ``provider``'s credential comes from, without its value: ``"auth.json (api key)"``,
    ``"auth.json (OAuth, expires 2026-12-04 05:00 UTC)"`` (or ``expired ...``: refreshed at the next
    request), ``"environment: NAME"``, an ambient credential (AWS's for Bedrock, Google's
    application-default credentials for Vertex: :func:`pi_nb.auth.ambient.ambient_credential`), or ``None``. A broken ``auth.json`` gives
    ``"auth.json: unreadable"``. ``env_vars`` default to the catalog's variables of the provider."""
    if env_vars is None:
        env_vars = tuple(bundled_catalog()["apiKeyEnv"].get(provider, ()))
    store = storage or AuthStorage()
    try:
        stored = store.read_raw(provider)
    except AuthFileError:
        return "auth.json: unreadable"
    if stored is not None:
        if stored.type == "oauth":
            return f"auth.json (OAuth, {_expiry_text(stored.expires or 0)})"
        if stored.get("key"):
            return "auth.json (api key)"
    for name in env_vars:
        if _env(name):
            return f"environment: {name}"
    from pi_nb.auth.ambient import ambient_credential

    return ambient_credential(provider)


def available_model_ids(provider: str, *, storage: AuthStorage | None = None) -> list[str] | None:
    """The model ids a provider's OAuth sign-in says the account may use (GitHub Copilot stores
    them as ``availableModelIds``), or ``None`` when the sign-in does not say: pi-ai then lists
    the provider's catalog models filtered to these (its ``filterModels``)."""
    try:
        stored = (storage or AuthStorage()).read_raw(provider)
    except AuthFileError:
        return None
    ids = stored.get("availableModelIds") if stored is not None and stored.type == "oauth" else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return None
    return list(ids)
