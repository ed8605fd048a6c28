"""Kimi Code's sign-in (subscription), as pi-ai 0.85.0 runs it (``auth/oauth/kimi-coding.ts``):
RFC 8628's device flow at ``auth.kimi.com`` (``$KIMI_CODE_OAUTH_HOST`` / ``$KIMI_OAUTH_HOST``
override it) with form posts and JSON answers; the access token goes out as
``Authorization: Bearer`` (a header, not a key). Refresh retries a 429 or 5xx three times
(1 s, 2 s, 4 s) and fails at once on 401/403/``invalid_grant``."""

from __future__ import annotations

import json
import math
import os
import time
import urllib.parse
from typing import Any

from pi_nb.auth.http import HttpResponse, form, request
from pi_nb.auth.oauth.common import Interaction, LoginError, now_ms, poll_device_code

__all__ = ["login", "refresh", "to_auth"]

NAME = "Kimi Code (subscription)"
CLIENT_ID = "17e5f671-d194-4dfb-9706-5516cb48c098"
DEFAULT_OAUTH_HOST = "https://auth.kimi.com"
DEVICE_CODE_TIMEOUT_SECONDS = 15 * 60
DEFAULT_POLL_INTERVAL_SECONDS = 5
REFRESH_MAX_RETRIES = 3
_HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}


def _host() -> str:
    override = os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get("KIMI_OAUTH_HOST")
    return (override or DEFAULT_OAUTH_HOST).rstrip("/")


def _json(r: HttpResponse) -> dict[str, Any] | None:
    try:
        data = r.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _trusted(value: Any) -> bool:
    if not isinstance(value, str) or not value:
        return False
    parts = urllib.parse.urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _positive(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    )


def _token(data: dict[str, Any] | None, operation: str) -> dict[str, Any]:
    d = data or {}
    access, refresh_token, expires_in = d.get("access_token"), d.get("refresh_token"), d.get("expires_in")
    if not (
        isinstance(access, str)
        and access
        and isinstance(refresh_token, str)
        and refresh_token
        and isinstance(expires_in, int | float)
        and _positive(expires_in)
    ):
        raise LoginError(f"Kimi Code token {operation} response missing fields")
    from pi_nb.redaction import register_secret

    register_secret(access, "Kimi Code token")
    register_secret(refresh_token, "Kimi Code refresh token")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh_token,
        "expires": now_ms() + expires_in * 1000,
    }


def login(interaction: Interaction) -> dict[str, Any]:
    """``loginKimiCoding``: the device code (``device_code`` event, the complete verification
    URI), polled until approved."""
    host = _host()
    r = request(
        "POST",
        f"{host}/api/oauth/device_authorization",
        headers=_HEADERS,
        body=form({"client_id": CLIENT_ID}),
    )
    if not r.ok:
        raise LoginError(
            f"Kimi Code device authorization failed with status {r.status}{': ' + r.text if r.text else ''}"
        )
    d = _json(r) or {}
    if not (
        isinstance(d.get("device_code"), str)
        and isinstance(d.get("user_code"), str)
        and _trusted(d.get("verification_uri"))
        and _trusted(d.get("verification_uri_complete"))
    ):
        raise LoginError("Invalid Kimi Code device authorization response")
    interval = d["interval"] if _positive(d.get("interval")) else DEFAULT_POLL_INTERVAL_SECONDS
    expires_in = d["expires_in"] if _positive(d.get("expires_in")) else DEVICE_CODE_TIMEOUT_SECONDS
    interaction.notify(
        {
            "type": "device_code",
            "userCode": d["user_code"],
            "verificationUri": d["verification_uri_complete"],
            "intervalSeconds": interval,
            "expiresInSeconds": expires_in,
        }
    )

    def poll() -> tuple[str, Any]:
        t = request(
            "POST",
            f"{host}/api/oauth/token",
            headers=_HEADERS,
            body=form(
                {
                    "client_id": CLIENT_ID,
                    "device_code": d["device_code"],
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                }
            ),
        )
        if t.status >= 500:
            return (
                "failed",
                f"Kimi Code device token request failed with status {t.status}{': ' + t.text if t.text else ''}",
            )
        got = _json(t)
        if t.ok and got is not None and isinstance(got.get("access_token"), str):
            try:
                return "complete", _token(got, "poll")
            except LoginError as exc:
                return "failed", str(exc)
        error = (got or {}).get("error")
        description = (
            f": {got['error_description']}" if got and isinstance(got.get("error_description"), str) else ""
        )
        if error == "authorization_pending":
            return "pending", None
        if error == "slow_down":
            iv = (got or {}).get("interval")
            return "slow_down", iv if _positive(iv) else None
        if error == "expired_token":
            return "failed", "Kimi Code device authorization expired. Please restart login."
        if error == "access_denied":
            return "failed", "Kimi Code login was denied."
        suffix = f": {error}{description}" if isinstance(error, str) else ""
        return "failed", f"Kimi Code device token request failed (status {t.status}){suffix}"

    cred: dict[str, Any] = poll_device_code(
        poll,
        interaction,
        interval_seconds=interval,
        expires_in_seconds=expires_in,
        wait_before_first_poll=True,
    )
    return cred


def refresh(credential: Any) -> dict[str, Any]:
    """``refreshToken`` with pi-ai's retries."""
    host = _host()
    last: Exception | None = None
    for attempt in range(REFRESH_MAX_RETRIES + 1):
        if attempt:
            time.sleep(2 ** (attempt - 1))
        try:
            r = request(
                "POST",
                f"{host}/api/oauth/token",
                headers=_HEADERS,
                body=form(
                    {
                        "client_id": CLIENT_ID,
                        "grant_type": "refresh_token",
                        "refresh_token": credential["refresh"],
                    }
                ),
            )
        except Exception as exc:
            last = exc
            continue
        got = _json(r)
        if r.ok:
            return _token(got, "refresh")
        if r.status in (401, 403) or (got or {}).get("error") == "invalid_grant":
            description = (
                f": {got['error_description']}"
                if got and isinstance(got.get("error_description"), str)
                else ""
            )
            raise LoginError(f"Kimi Code token refresh unauthorized (status {r.status}){description}")
        if (r.status == 429 or r.status >= 500) and attempt < REFRESH_MAX_RETRIES:
            last = LoginError(f"Kimi Code token refresh failed with status {r.status}")
            continue
        raise LoginError(f"Kimi Code token refresh failed with status {r.status}: {json.dumps(got)}")
    raise LoginError(str(last) if last else "Kimi Code token refresh failed")


def to_auth(credential: Any) -> dict[str, Any]:
    """A bearer header, not a key."""
    return {"headers": {"Authorization": f"Bearer {credential['access']}"}}
