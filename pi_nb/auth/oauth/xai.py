"""xAI's sign-in (SuperGrok / X Premium), as pi-ai 0.85.0 runs it (``auth/oauth/xai.ts``): the
device flow at ``auth.x.ai/oauth2/device/code`` polled at ``auth.x.ai/oauth2/token`` (form posts);
``expires`` five minutes before the token's end (an hour when the server gives none); refresh
keeps the old refresh token when the server does not rotate it."""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Mapping
from typing import Any

from pi_nb.auth.http import form, request
from pi_nb.auth.oauth.common import Interaction, LoginError, now_ms, poll_device_code

__all__ = ["login", "refresh", "to_auth"]

NAME = "xAI (Grok/X subscription)"
CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828"
SCOPE = "openid profile email offline_access grok-cli:access api:access"
DEVICE_CODE_URL = "https://auth.x.ai/oauth2/device/code"
TOKEN_URL = "https://auth.x.ai/oauth2/token"
REFRESH_SKEW_MS = 5 * 60 * 1000
DEFAULT_TOKEN_LIFETIME_SECONDS = 3600


def _post(url: str, fields: Mapping[str, str]) -> tuple[bool, int, dict[str, Any]]:
    r = request(
        "POST",
        url,
        headers={"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"},
        body=form(fields),
    )
    try:
        parsed = r.json()
    except ValueError:
        raise LoginError(f"xAI OAuth returned invalid JSON (HTTP {r.status})") from None
    return r.ok, r.status, parsed if isinstance(parsed, dict) else {}


def _failure(action: str, status: int, body: Mapping[str, Any]) -> LoginError:
    parts = [v for v in (body.get("error"), body.get("error_description")) if isinstance(v, str) and v]
    detail = ": ".join(parts)
    return LoginError(f"xAI OAuth {action} failed (HTTP {status}){': ' + detail if detail else ''}")


def _string(body: Mapping[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise LoginError(f"Invalid xAI OAuth response field: {name}")
    return value


def _positive(body: Mapping[str, Any], name: str) -> float:
    value = body.get(name)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise LoginError(f"Invalid xAI OAuth response field: {name}")
    return value


def _https(raw: str) -> str:
    parts = urllib.parse.urlsplit(raw)
    if parts.scheme != "https" or not parts.netloc:
        raise LoginError("Untrusted verification URI in xAI OAuth response")
    return raw


def _credential(body: Mapping[str, Any], previous_refresh: str | None = None) -> dict[str, Any]:
    access = _string(body, "access_token")
    refresh_token = (
        previous_refresh
        if body.get("refresh_token") is None and previous_refresh
        else _string(body, "refresh_token")
    )
    lifetime = (
        DEFAULT_TOKEN_LIFETIME_SECONDS if body.get("expires_in") is None else _positive(body, "expires_in")
    )
    from pi_nb.redaction import register_secret

    register_secret(access, "xAI OAuth token")
    register_secret(refresh_token, "xAI refresh token")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh_token,
        "expires": now_ms() + lifetime * 1000 - REFRESH_SKEW_MS,
    }


def login(interaction: Interaction) -> dict[str, Any]:
    """``loginXai``: the device code (``device_code`` event), polled until approved."""
    ok, status, body = _post(DEVICE_CODE_URL, {"client_id": CLIENT_ID, "scope": SCOPE, "referrer": "pi"})
    if not ok:
        raise _failure("device authorization", status, body)
    interval = body.get("interval")
    interval = (
        interval
        if isinstance(interval, int | float) and not isinstance(interval, bool) and interval > 0
        else None
    )
    complete = body.get("verification_uri_complete")
    complete = _https(complete) if isinstance(complete, str) and complete else None
    device_code, user_code = _string(body, "device_code"), _string(body, "user_code")
    uri = _https(_string(body, "verification_uri"))
    expires_in = _positive(body, "expires_in")
    event: dict[str, Any] = {"type": "device_code", "userCode": user_code, "verificationUri": complete or uri}
    if interval is not None:
        event["intervalSeconds"] = interval
    event["expiresInSeconds"] = expires_in
    interaction.notify(event)

    def poll() -> tuple[str, Any]:
        ok, status, got = _post(
            TOKEN_URL,
            {
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                "client_id": CLIENT_ID,
                "device_code": device_code,
            },
        )
        if ok:
            return "complete", _credential(got)
        error = got.get("error")
        if error == "authorization_pending":
            return "pending", None
        if error == "slow_down":
            iv = got.get("interval")
            return "slow_down", iv if isinstance(iv, int | float) else None
        if error in ("access_denied", "authorization_denied"):
            return "failed", "xAI device authorization was denied"
        if error == "expired_token":
            return "failed", "xAI device code expired"
        return "failed", str(_failure("device token polling", status, got))

    cred: dict[str, Any] = poll_device_code(
        poll,
        interaction,
        interval_seconds=interval,
        expires_in_seconds=expires_in,
        wait_before_first_poll=True,
    )
    return cred


def refresh(credential: Any) -> dict[str, Any]:
    """``refreshXaiToken``."""
    ok, status, body = _post(
        TOKEN_URL,
        {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": credential["refresh"]},
    )
    if not ok:
        raise _failure("token refresh", status, body)
    return _credential(body, credential["refresh"])


def to_auth(credential: Any) -> dict[str, Any]:
    return {"apiKey": credential["access"]}
