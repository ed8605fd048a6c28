"""OpenAI Codex's sign-in (ChatGPT Plus/Pro), as pi-ai 0.85.0 runs it (``auth/oauth/openai-codex.ts``).

Two methods (a ``select`` prompt): ``browser`` (PKCE, the browser redirected to the local
server on ``localhost:1455/auth/callback``, or a pasted redirect URL / code) and ``device_code``
(``/api/accounts/deviceauth/usercode``, polled at ``/api/accounts/deviceauth/token``, the user
entering the code at ``auth.openai.com/codex/device``). Either code is exchanged (form) at
``auth.openai.com/oauth/token``; the credential keeps the ChatGPT account id from the access
token's JWT claims. Refresh posts the refresh token to the same endpoint.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from pi_nb.auth.http import HttpResponse, form, json_body, request
from pi_nb.auth.oauth.common import (
    CallbackServer,
    Interaction,
    LoginError,
    error_html,
    now_ms,
    parse_authorization_input,
    pkce,
    poll_device_code,
    race_manual_code,
    random_bytes,
    success_html,
)

__all__ = ["account_id", "login", "refresh", "to_auth"]

NAME = "OpenAI (ChatGPT Plus/Pro)"
CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE_URL = "https://auth.openai.com"
AUTHORIZE_URL = f"{AUTH_BASE_URL}/oauth/authorize"
TOKEN_URL = f"{AUTH_BASE_URL}/oauth/token"
REDIRECT_URI = "http://localhost:1455/auth/callback"
DEVICE_USER_CODE_URL = f"{AUTH_BASE_URL}/api/accounts/deviceauth/usercode"
DEVICE_TOKEN_URL = f"{AUTH_BASE_URL}/api/accounts/deviceauth/token"
DEVICE_VERIFICATION_URI = f"{AUTH_BASE_URL}/codex/device"
DEVICE_REDIRECT_URI = f"{AUTH_BASE_URL}/deviceauth/callback"
DEVICE_CODE_TIMEOUT_SECONDS = 15 * 60
SCOPE = "openid profile email offline_access"
JWT_CLAIM_PATH = "https://api.openai.com/auth"


def _decode_jwt(token: str) -> Any:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = parts[1]
        return json.loads(base64.b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, TypeError):
        return None


def account_id(access_token: str) -> str | None:
    """The ChatGPT account id in the access token's ``https://api.openai.com/auth`` claim."""
    payload = _decode_jwt(access_token)
    claim = payload.get(JWT_CLAIM_PATH) if isinstance(payload, dict) else None
    value = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return value if isinstance(value, str) and value else None


def _read_token(r: HttpResponse, operation: str) -> dict[str, Any]:
    if not r.ok:
        raise LoginError(f"OpenAI Codex token {operation} failed ({r.status}): {r.text or r.reason}")
    data = r.json()
    if (
        not isinstance(data, dict)
        or not data.get("access_token")
        or not data.get("refresh_token")
        or isinstance(data.get("expires_in"), bool)
        or not isinstance(data.get("expires_in"), int | float)
    ):
        raise LoginError(f"OpenAI Codex token {operation} response missing fields")
    from pi_nb.redaction import register_secret

    register_secret(data["access_token"], "OpenAI Codex token")
    register_secret(data["refresh_token"], "OpenAI Codex refresh token")
    return {
        "access": data["access_token"],
        "refresh": data["refresh_token"],
        "expires": now_ms() + data["expires_in"] * 1000,
    }


def _credential(token: Mapping[str, Any]) -> dict[str, Any]:
    acct = account_id(token["access"])
    if not acct:
        raise LoginError("Failed to extract accountId from token")
    return {
        "type": "oauth",
        "access": token["access"],
        "refresh": token["refresh"],
        "expires": token["expires"],
        "accountId": acct,
    }


def _exchange(code: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
    r = request(
        "POST",
        TOKEN_URL,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        body=form(
            {
                "grant_type": "authorization_code",
                "client_id": CLIENT_ID,
                "code": code,
                "code_verifier": verifier,
                "redirect_uri": redirect_uri,
            }
        ),
    )
    return _credential(_read_token(r, "exchange"))


def _login_browser(interaction: Interaction) -> dict[str, Any]:
    verifier, challenge = pkce()
    state = random_bytes(16).hex()
    params = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "scope": SCOPE,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        "id_token_add_organizations": "true",
        "codex_cli_simplified_flow": "true",
        "originator": "pi",
    }

    def check(q: Mapping[str, str]) -> tuple[int, str, Any]:
        if q.get("state") != state:
            return 400, error_html("State mismatch."), None
        if not q.get("code"):
            return 400, error_html("Missing authorization code."), None
        return 200, success_html("OpenAI authentication completed. You can close this window."), q["code"]

    host = os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
    server = CallbackServer(host, 1455, "/auth/callback", check)
    try:
        interaction.notify(
            {
                "type": "auth_url",
                "url": f"{AUTHORIZE_URL}?{form(params)}",
                "instructions": "A browser window should open. Complete login to finish.",
            }
        )
        result, pasted = race_manual_code(
            interaction,
            server,
            "Complete login in your browser, or paste the authorization code / redirect URL here:",
            REDIRECT_URI,
        )
        code = result
        if not code and pasted:
            code, parsed_state = parse_authorization_input(pasted)
            if parsed_state and parsed_state != state:
                raise LoginError("State mismatch")
        if not code:
            raise LoginError("Missing authorization code")
        return _exchange(code, verifier, REDIRECT_URI)
    finally:
        server.close()


def _login_device_code(interaction: Interaction) -> dict[str, Any]:
    r = request(
        "POST",
        DEVICE_USER_CODE_URL,
        headers={"Content-Type": "application/json"},
        body=json_body({"client_id": CLIENT_ID}),
    )
    if not r.ok:
        if r.status == 404:
            raise LoginError(
                "OpenAI Codex device code login is not enabled for this server. Use browser login or verify the server URL."
            )
        raise LoginError(
            f"OpenAI Codex device code request failed with status {r.status}{': ' + r.text if r.text else ''}"
        )
    data = r.json()
    interval = data.get("interval") if isinstance(data, dict) else None
    if isinstance(interval, str):
        try:
            interval = float(interval.strip())
        except ValueError:
            interval = None
    if (
        not isinstance(data, dict)
        or not data.get("device_auth_id")
        or not data.get("user_code")
        or isinstance(interval, bool)
        or not isinstance(interval, int | float)
        or interval < 0
    ):
        raise LoginError("Invalid OpenAI Codex device code response")
    device_id, user_code = data["device_auth_id"], data["user_code"]
    interaction.notify(
        {
            "type": "device_code",
            "userCode": user_code,
            "verificationUri": DEVICE_VERIFICATION_URI,
            "intervalSeconds": interval,
            "expiresInSeconds": DEVICE_CODE_TIMEOUT_SECONDS,
        }
    )

    def poll() -> tuple[str, Any]:
        t = request(
            "POST",
            DEVICE_TOKEN_URL,
            headers={"Content-Type": "application/json"},
            body=json_body({"device_auth_id": device_id, "user_code": user_code}),
        )
        if t.ok:
            got = t.json()
            if not isinstance(got, dict) or not got.get("authorization_code") or not got.get("code_verifier"):
                return "failed", "Invalid OpenAI Codex device auth token response"
            return "complete", (got["authorization_code"], got["code_verifier"])
        if t.status in (403, 404):
            return "pending", None
        code: Any = None
        try:
            err = json.loads(t.text).get("error")
            code = err.get("code") if isinstance(err, dict) else err
        except (ValueError, AttributeError):
            pass
        if code == "deviceauth_authorization_pending":
            return "pending", None
        if code == "slow_down":
            return "slow_down", None
        return (
            "failed",
            f"OpenAI Codex device auth failed with status {t.status}{': ' + t.text if t.text else ''}",
        )

    authorization_code, code_verifier = poll_device_code(
        poll, interaction, interval_seconds=interval, expires_in_seconds=DEVICE_CODE_TIMEOUT_SECONDS
    )
    return _exchange(authorization_code, code_verifier, DEVICE_REDIRECT_URI)


def login(interaction: Interaction) -> dict[str, Any]:
    """``openaiCodexOAuth.login``: asks for the method, then runs it."""
    method = interaction.prompt(
        {
            "type": "select",
            "message": "Select OpenAI Codex login method:",
            "options": [
                {"id": "browser", "label": "Browser login (default)"},
                {"id": "device_code", "label": "Device code login (headless)"},
            ],
        }
    )
    if method == "device_code":
        return _login_device_code(interaction)
    if method != "browser":
        raise LoginError(f"Unknown OpenAI Codex login method: {method}")
    return _login_browser(interaction)


def refresh(credential: Any) -> dict[str, Any]:
    """``refreshOpenAICodexToken``."""
    try:
        r = request(
            "POST",
            TOKEN_URL,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            body=form(
                {
                    "grant_type": "refresh_token",
                    "refresh_token": credential["refresh"],
                    "client_id": CLIENT_ID,
                }
            ),
        )
    except Exception as exc:
        raise LoginError(f"OpenAI Codex token refresh error: {exc}") from None
    return _credential(_read_token(r, "refresh"))


def to_auth(credential: Any) -> dict[str, Any]:
    return {"apiKey": credential["access"]}
