"""Credentials as Pi 0.85.0 keeps them: the agent dir's ``auth.json`` (API keys and OAuth
sign-ins per provider), shared with Pi; pi-ai's resolution order (explicit key, ``auth.json``,
environment); OAuth tokens refreshed as pi-ai refreshes them and written back; the sign-in flows
(:func:`login`, :func:`logout`).

* :class:`AuthStorage` reads and writes ``auth.json`` (Pi's lock, ``0600``, its JSON layout);
* :func:`resolve_provider_auth` gives a provider's auth for one request;
* :func:`credential_source` says where it comes from, without the value;
* :func:`login` / :func:`logout` sign in and out (GitHub Copilot, OpenAI Codex, Anthropic, xAI).

Every secret read from ``auth.json`` or returned by a sign-in is registered with
:mod:`pi_nb.redaction`; no object here shows a value in its ``repr``.
"""

from __future__ import annotations

from pi_nb.auth.login import login, login_providers, logout
from pi_nb.auth.oauth.common import LoginCancelled, LoginError
from pi_nb.auth.resolve import (
    OAUTH_PROVIDERS,
    AuthError,
    ResolvedAuth,
    available_model_ids,
    credential_source,
    resolve_provider_auth,
)
from pi_nb.auth.storage import AuthEntryError, AuthFileError, AuthStorage, Credential, auth_path

__all__ = [
    "OAUTH_PROVIDERS",
    "AuthEntryError",
    "AuthError",
    "AuthFileError",
    "AuthStorage",
    "Credential",
    "LoginCancelled",
    "LoginError",
    "ResolvedAuth",
    "auth_path",
    "available_model_ids",
    "credential_source",
    "login",
    "login_providers",
    "logout",
    "resolve_provider_auth",
]
