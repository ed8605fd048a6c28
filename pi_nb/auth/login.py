"""Signing in and out: :func:`login` runs a provider's OAuth flow and saves the credential to
``auth.json`` in Pi's format (what Pi's ``/login`` does), :func:`logout` removes it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pi_nb.auth.oauth.common import Interaction, LoginError
from pi_nb.auth.resolve import OAUTH_PROVIDERS, oauth_flow
from pi_nb.auth.storage import AuthStorage, Credential

__all__ = ["login", "login_providers", "logout"]


def login_providers() -> dict[str, str]:
    """The providers :func:`login` signs in to, with the sign-in's name."""
    return {p: name for p, name in OAUTH_PROVIDERS.items() if oauth_flow(p) is not None}


def login(
    provider: str,
    *,
    notify: Callable[[dict[str, Any]], None] | None = None,
    prompt: Callable[[dict[str, Any]], str] | None = None,
    cancel: threading.Event | None = None,
    method: str | None = None,
    enterprise_domain: str | None = None,
    storage: AuthStorage | None = None,
) -> Credential:
    """Sign in to ``provider`` as pi-ai does and save the credential to ``auth.json``.

    ``notify(event)`` receives the flow's events: ``{"type": "device_code", "userCode",
    "verificationUri", ...}`` (enter the code at the link), ``{"type": "auth_url", "url",
    "instructions"}`` (open the link; the browser comes back to a local server), ``progress`` and
    ``info``. ``prompt(prompt)`` answers the flow's questions (``select``, ``text``, and a
    ``manual_code`` paste of the redirect URL, raced against the local server); without it the
    defaults are taken. ``method`` answers a ``select`` (OpenAI Codex: ``"browser"`` or
    ``"device_code"``), ``enterprise_domain`` GitHub Copilot's enterprise question. ``cancel``
    set stops the flow (:class:`~pi_nb.auth.oauth.common.LoginCancelled`). Returns the saved
    credential (its ``repr`` shows no value)."""
    flow = oauth_flow(provider)
    if flow is None:
        known = ", ".join(login_providers())
        if provider in OAUTH_PROVIDERS:
            raise LoginError(
                f"pi_nb does not run {OAUTH_PROVIDERS[provider]}'s sign-in yet; sign in with Pi (/login). pi_nb signs in to: {known}"
            )
        raise LoginError(f"{provider} has no OAuth sign-in (pi_nb signs in to: {known}); use an API key")

    interaction = Interaction(notify_fn=notify, cancel=cancel or threading.Event())

    def answer(p: dict[str, Any]) -> str:
        if p["type"] == "select" and method is not None:
            return method
        if p["type"] == "text" and enterprise_domain is not None:
            return enterprise_domain
        if prompt is not None:
            return prompt(p)
        if p["type"] == "select":
            return str(p["options"][0]["id"])
        if p["type"] == "manual_code":
            # nobody to paste a code: wait for the browser's redirect (or a cancel)
            stop = p.get("signal")
            while not interaction.cancel.is_set() and not (stop is not None and stop.is_set()):
                interaction.cancel.wait(0.1)
            raise LoginError("no code pasted")
        return ""

    interaction.prompt_fn = answer
    credential = flow.login(interaction)
    store = storage or AuthStorage()
    return store.set(provider, credential)


def logout(provider: str, *, storage: AuthStorage | None = None) -> bool:
    """Remove ``provider``'s credential from ``auth.json`` (Pi's ``/logout``); whether there was one."""
    return (storage or AuthStorage()).delete(provider)
