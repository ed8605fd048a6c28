"""Anthropic's sign-in (Claude Pro/Max), as pi-ai 0.85.0 runs it (``auth/oauth/anthropic.ts``).

PKCE with a local callback server on ``localhost:53692/callback`` (bound to
``$PI_OAUTH_CALLBACK_HOST`` or 127.0.0.1), the PKCE verifier doubling as the OAuth state; a pasted
redirect URL or ``code#state`` works too. The code is exchanged (JSON) at
``platform.claude.com/v1/oauth/token``; ``expires`` is five minutes before the token's end.
Refresh posts the refresh token to the same endpoint.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from pi_nb.auth.http import form, json_body, request
from pi_nb.auth.oauth.common import (
    CallbackServer,
    Interaction,
    LoginError,
    error_html,
    now_ms,
    parse_authorization_input,
    pkce,
    race_manual_code,
    success_html,
)

__all__ = ["login", "refresh", "to_auth"]

NAME = "Anthropic (Claude Pro/Max)"
CLIENT_ID = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
CALLBACK_PORT = 53692
CALLBACK_PATH = "/callback"
REDIRECT_URI = f"http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"
SCOPES = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"


def _post_json(url: str, body: Mapping[str, Any]) -> str:
    r = request(
        "POST",
        url,
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        body=json_body(dict(body)),
    )
    if not r.ok:
        raise LoginError(f"HTTP request failed. status={r.status}; url={url}; body={r.text}")
    return r.text


def _credential(text: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
        access, refresh_token, expires_in = data["access_token"], data["refresh_token"], data["expires_in"]
    except (ValueError, KeyError, TypeError):
        raise LoginError(f"{what} returned invalid JSON. url={TOKEN_URL}") from None
    from pi_nb.redaction import register_secret

    register_secret(access, "Anthropic OAuth token")
    register_secret(refresh_token, "Anthropic refresh token")
    return {
        "type": "oauth",
        "refresh": refresh_token,
        "access": access,
        "expires": now_ms() + expires_in * 1000 - 5 * 60 * 1000,
    }


def _exchange(code: str, state: str, verifier: str) -> dict[str, Any]:
    try:
        text = _post_json(
            TOKEN_URL,
            {
                "grant_type": "authorization_code",
                "client_id": CLIENT_ID,
                "code": code,
                "state": state,
                "redirect_uri": REDIRECT_URI,
                "code_verifier": verifier,
            },
        )
    except LoginError as exc:
        raise LoginError(
            f"Token exchange request failed. url={TOKEN_URL}; redirect_uri={REDIRECT_URI}; "
            f"response_type=authorization_code; details={exc}"
        ) from None
    return _credential(text, "Token exchange")


def login(interaction: Interaction) -> dict[str, Any]:
    """``loginAnthropic``: the authorize URL (``auth_url`` event), the browser's redirect or a
    pasted code, the exchange."""
    verifier, challenge = pkce()

    def check(q: Mapping[str, str]) -> tuple[int, str, Any]:
        if q.get("error"):
            return 400, error_html("Anthropic authentication did not complete.", f"Error: {q['error']}"), None
        code, state = q.get("code"), q.get("state")
        if not code or not state:
            return 400, error_html("Missing code or state parameter."), None
        if state != verifier:
            return 400, error_html("State mismatch."), None
        return (
            200,
            success_html("Anthropic authentication completed. You can close this window."),
            (code, state),
        )

    host = os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
    server = CallbackServer(host, CALLBACK_PORT, CALLBACK_PATH, check)
    if not server.listening:
        raise LoginError(f"cannot listen on {host}:{CALLBACK_PORT} for Anthropic's redirect")
    try:
        params = {
            "code": "true",
            "client_id": CLIENT_ID,
            "response_type": "code",
            "redirect_uri": REDIRECT_URI,
            "scope": SCOPES,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": verifier,
        }
        interaction.notify(
            {
                "type": "auth_url",
                "url": f"{AUTHORIZE_URL}?{form(params)}",
                "instructions": "Complete login in your browser. If the browser is on another machine, "
                "paste the final redirect URL here.",
            }
        )
        result, pasted = race_manual_code(
            interaction,
            server,
            "Complete login in your browser, or paste the authorization code / redirect URL here:",
            REDIRECT_URI,
        )
        code: str | None = None
        state: str | None = None
        if result:
            code, state = result
        elif pasted:
            code, parsed_state = parse_authorization_input(pasted)
            if parsed_state and parsed_state != verifier:
                raise LoginError("OAuth state mismatch")
            state = parsed_state or verifier
        if not code:
            raise LoginError("Missing authorization code")
        if not state:
            raise LoginError("Missing OAuth state")
        interaction.notify({"type": "progress", "message": "Exchanging authorization code for tokens..."})
        return _exchange(code, state, verifier)
    finally:
        server.close()


def refresh(credential: Any) -> dict[str, Any]:
    """``refreshAnthropicToken``."""
    try:
        text = _post_json(
            TOKEN_URL,
            {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": credential["refresh"]},
        )
    except LoginError as exc:
        raise LoginError(f"Anthropic token refresh request failed. url={TOKEN_URL}; details={exc}") from None
    return _credential(text, "Anthropic token refresh")


def to_auth(credential: Any) -> dict[str, Any]:
    return {"apiKey": credential["access"]}
