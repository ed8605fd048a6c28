"""Whether a model can run now: its provider's SDK package is installed and its key is set.

:func:`model_readiness` answers before the first request does, so a caller can refuse a model at
once with a message that says what to install or which variable to set, instead of letting the
first turn fail. Two lookups decide it, each in one function: :func:`_sdk_requirement` (the
package an API's provider imports, and the pi_nb extra that installs it) and
:func:`_has_credential` (whether the model's key can be found: explicit, Pi's ``auth.json``, the
environment). Bedrock and Vertex also count their ambient credentials
(:mod:`pi_nb.auth.ambient`); GitHub Copilot and OpenAI Codex name the sign-in that gives one.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

__all__ = ["Readiness", "model_readiness", "spec_readiness"]

_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
# providers whose credential is a sign-in (OAuth): pi-ai has no API key for them
_SIGN_IN_ONLY = ("github-copilot", "openai-codex")


@dataclass(frozen=True)
class Readiness:
    """A model's readiness: ``ok``, or what is missing and a message that says so.

    ``package`` and ``extra``: the SDK package that is not installed and the pi_nb extra that
    installs it (``pip install 'pi_nb[extra]'``). ``key_env``: the environment variable whose key
    is not set. ``message`` names the model and what is missing (empty when ``ok``).
    """

    ok: bool
    package: str | None = None
    extra: str | None = None
    key_env: str | None = None
    message: str = ""

    def __bool__(self) -> bool:
        return self.ok


def _sdk_requirement(api: str) -> tuple[str, str] | None:
    """(package, extra) the provider of ``api`` needs, from the provider table
    (:func:`pi_nb.providers.registry.provider_entry`), or ``None`` when it needs nothing extra."""
    from pi_nb.providers.registry import provider_entry

    entry = provider_entry(api)
    if entry is None or not entry.sdk_module or not entry.extra:
        return None
    return entry.sdk_module, entry.extra


def _needs_key(model: Any) -> bool:
    """Whether ``model`` sends a key at all: not for Ollama, nor for a server of the user's own
    choosing (its base URL from the environment) or on this machine."""
    env = getattr(model, "api_key_env", "")
    if not env or getattr(model, "provider", "") == "ollama":
        return False
    base_env = getattr(model, "base_url_env", "")
    if base_env and os.environ.get(base_env):
        return False
    base = getattr(model, "base_url", None)
    return not (base and urlparse(str(base)).hostname in _LOCAL_HOSTS)


def _has_credential(model: Any) -> bool:
    """Whether the key ``model`` sends can be found now (the model's own lookup where it has one,
    else its key variable in the environment)."""
    resolve = getattr(model, "resolve_api_key", None)
    if callable(resolve):
        return bool(resolve())
    env = getattr(model, "api_key_env", "")
    return bool(env and os.environ.get(env, "").strip())


def _importable(package: str) -> bool:
    try:
        importlib.import_module(package)
    except ImportError:
        return False
    return True


def model_readiness(model: Any, spec: str | None = None) -> Readiness:
    """Whether ``model`` can run now. ``spec`` names it in the message (default ``provider/id``).

    The SDK is checked first (without it no request can be built), then the key.
    """
    name = spec or f"{getattr(model, 'provider', '?')}/{getattr(model, 'id', '?')}"
    sdk = _sdk_requirement(str(getattr(model, "api", "")))
    if sdk is not None and not _importable(sdk[0]):
        package, extra = sdk
        return Readiness(
            False,
            package=package,
            extra=extra,
            message=f"{name} needs the {package} package, which is not installed — "
            f"pip install 'pi_nb[{extra}]'",
        )
    provider = str(getattr(model, "provider", ""))
    from pi_nb.auth.ambient import ambient_credential, ambient_credential_hint

    hint = ambient_credential_hint(provider)
    if hint is not None:  # a key, or AWS's / Google's own credentials (pi-ai's "<authenticated>")
        if _has_credential(model) or ambient_credential(provider) is not None:
            return Readiness(True)
        return Readiness(False, message=f"{name} needs {hint}; none is set")
    if _needs_key(model) and not _has_credential(model):
        env = str(model.api_key_env)
        if provider in _SIGN_IN_ONLY:
            return Readiness(
                False,
                message=f"{name} needs a sign-in: %pi login {provider} (or pi_nb.login({provider!r}))"
                f" — or a token in ${env}",
            )
        return Readiness(False, key_env=env, message=f"{name} needs an API key in ${env}, which is not set")
    return Readiness(True)


def spec_readiness(spec: Any) -> Readiness:
    """Whether the catalog model ``spec`` (a ``"provider/id"`` or a :class:`ModelSpec`) can run now:
    :func:`model_readiness` of its model, or not ready with the registry's own reason when no model
    can be made (a base URL that needs a variable, as Cloudflare's account id)."""
    from pi_nb.providers.registry import MissingProviderSettingError, UnsupportedApiError, get_model

    key = spec if isinstance(spec, str) else f"{spec.provider}/{spec.id}"
    try:
        model = get_model(key)
    except (UnsupportedApiError, MissingProviderSettingError) as error:
        return Readiness(False, message=str(error))
    return model_readiness(model, key)
