"""OpenRouter's sign-in, as pi-ai 0.85.0 runs it (``auth/oauth/openrouter.ts``): PKCE, the
browser sent to ``openrouter.ai/auth`` with a ``callback_url`` on a local server (a free port,
a random path); the code is exchanged (JSON) at ``openrouter.ai/api/v1/auth/keys`` for an API
key, stored as an OAuth credential that never expires and is never refreshed. A pasted redirect
URL or code works too."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
import uuid
from collections.abc import Mapping
from typing import Any

from pi_nb.auth.http import form, json_body, request
from pi_nb.auth.oauth.common import (
    CallbackServer,
    Interaction,
    LoginError,
    error_html,
    pkce,
    race_manual_code,
    success_html,
)

__all__ = ["login", "refresh", "to_auth"]

NAME = "OpenRouter OAuth"
AUTHORIZE_URL = "https://openrouter.ai/auth"
TOKEN_URL = "https://openrouter.ai/api/v1/auth/keys"
MAX_SAFE_INTEGER = 9007199254740991


def random_uuid() -> str:
    """``crypto.randomUUID()`` (the callback path); tests replace it."""
    return str(uuid.uuid4())


def _detail(body: Mapping[str, Any]) -> str | None:
    for name in ("error_description", "message", "error"):
        if isinstance(body.get(name), str):
            return str(body[name])
    err = body.get("error")
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return str(err["message"])
    return None


def _exchange(code: str, verifier: str) -> dict[str, Any]:
    r = request(
        "POST",
        TOKEN_URL,
        headers={"accept": "application/json", "content-type": "application/json"},
        body=json_body({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"}),
    )
    body: dict[str, Any] = {}
    try:
        parsed = json.loads(r.text)
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        if r.ok:
            raise LoginError("OpenRouter OAuth returned invalid JSON") from None
    if not r.ok:
        detail = _detail(body)
        raise LoginError(
            f"OpenRouter OAuth key exchange failed (HTTP {r.status}){': ' + detail if detail else ''}"
        )
    key = body.get("key")
    if not isinstance(key, str) or not key:
        raise LoginError('OpenRouter OAuth response carries no "key"')
    from pi_nb.redaction import register_secret

    register_secret(key, "OpenRouter key")
    return {"type": "oauth", "access": key, "refresh": "", "expires": MAX_SAFE_INTEGER}


def _parse_input(value: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", value):  # what `new URL(value)` accepts
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(value).query)).get("code")
    if "code=" in value:
        return dict(urllib.parse.parse_qsl(value)).get("code")
    return value


def login(interaction: Interaction) -> dict[str, Any]:
    """``loginOpenRouter``: the callback server, the authorize URL, the browser's callback (which
    exchanges the code itself) or a pasted code."""
    verifier, challenge = pkce()
    path = f"/oauth/callback/{random_uuid()}"
    host = os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
    outcome: dict[str, Any] = {}

    def check(q: Mapping[str, str]) -> tuple[int, str, Any]:
        if q.get("error"):
            description = q.get("error_description") or q["error"]
            outcome["error"] = LoginError(f"OpenRouter authorization failed: {description}")
            return 400, error_html("OpenRouter authorization was denied.", description), "error"
        code = q.get("code")
        if not code:
            return 400, error_html("OpenRouter returned no authorization code."), None
        try:
            outcome["credential"] = _exchange(code, verifier)
        except LoginError as exc:
            outcome["error"] = exc
            return 502, error_html("OpenRouter key exchange failed.", str(exc)), "error"
        return 200, success_html("Signed in to OpenRouter. You may now close this page."), "done"

    server = CallbackServer(host, 0, path, check)
    if not server.listening:
        raise LoginError("Could not determine the OpenRouter OAuth callback port")
    callback_url = f"http://{host}:{server.port}{path}"
    try:
        query = form(
            {"callback_url": callback_url, "code_challenge": challenge, "code_challenge_method": "S256"}
        )
        interaction.notify(
            {"type": "progress", "message": f"Listening for OpenRouter OAuth callback on {callback_url}"}
        )
        interaction.notify(
            {
                "type": "auth_url",
                "url": f"{AUTHORIZE_URL}?{query}",
                "instructions": "Complete sign-in in your browser. If the browser is on another machine, "
                "paste the final redirect URL here.",
            }
        )
        result, pasted = race_manual_code(
            interaction,
            server,
            "Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
            callback_url,
        )
        if result is not None:
            if "error" in outcome:
                raise outcome["error"]
            cred: dict[str, Any] = outcome["credential"]
            return cred
        code = _parse_input(pasted) if pasted else None
        if not code:
            raise LoginError("Missing authorization code")
        interaction.notify({"type": "progress", "message": "Exchanging authorization code for an API key..."})
        return _exchange(code, verifier)
    finally:
        server.close()


def refresh(credential: Any) -> dict[str, Any]:
    """Nothing to refresh: the key is kept as it is."""
    out: dict[str, Any] = credential.to_json() if hasattr(credential, "to_json") else dict(credential)
    return out


def to_auth(credential: Any) -> dict[str, Any]:
    return {"apiKey": credential["access"]}
