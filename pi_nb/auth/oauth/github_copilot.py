"""GitHub Copilot's sign-in, as pi-ai 0.85.0 runs it (``auth/oauth/github-copilot.ts``).

Login: GitHub's device flow (``/login/device/code``, then ``/login/oauth/access_token`` polled)
gives a GitHub OAuth token; it is exchanged at ``api.<domain>/copilot_internal/v2/token`` for a
Copilot token (``tid=...;exp=...;proxy-ep=proxy.<host>;...``) whose ``proxy-ep`` names the API
host (``api.<host>``). The stored credential keeps the GitHub token as ``refresh``, the Copilot
token as ``access``, ``expires`` five minutes before the token's ``expires_at``, the enterprise
domain and the account's model ids (``/models``: picker-enabled ones; models whose policy is
unconfigured are enabled with ``POST /models/<id>/policy``). Refresh repeats the exchange.
"""

from __future__ import annotations

import base64
import email.utils
import re
import time
import urllib.parse
from typing import Any

from pi_nb._catalog_data import bundled_catalog
from pi_nb.auth.http import HttpResponse, form, json_body, request
from pi_nb.auth.oauth.common import Interaction, LoginError, poll_device_code

__all__ = [
    "COPILOT_HEADERS",
    "base_url_from_token",
    "copilot_base_url",
    "login",
    "normalize_domain",
    "refresh",
    "to_auth",
]

CLIENT_ID = base64.b64decode("SXYxLmI1MDdhMDhjODdlY2ZlOTg=").decode()
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
COPILOT_API_VERSION = "2026-06-01"
DEFAULT_BASE_URL = "https://api.individual.githubcopilot.com"

NAME = "GitHub Copilot"


def normalize_domain(value: str) -> str | None:
    """The host of a GitHub Enterprise URL or domain (``None`` for blank or unparsable input)."""
    trimmed = value.strip()
    if not trimmed:
        return None
    try:
        parts = urllib.parse.urlsplit(trimmed if "://" in trimmed else f"https://{trimmed}")
        host = parts.hostname
    except ValueError:
        return None
    return host or None


def _urls(domain: str) -> dict[str, str]:
    return {
        "device": f"https://{domain}/login/device/code",
        "access": f"https://{domain}/login/oauth/access_token",
        "copilot": f"https://api.{domain}/copilot_internal/v2/token",
    }


def base_url_from_token(token: str) -> str | None:
    """``https://api.<host>`` from the token's ``proxy-ep=proxy.<host>``, or ``None``."""
    m = re.search(r"proxy-ep=([^;]+)", token)
    if not m:
        return None
    return "https://" + re.sub(r"^proxy\.", "api.", m.group(1))


def copilot_base_url(token: str | None = None, enterprise_domain: str | None = None) -> str:
    """The API base URL for a Copilot token: from its ``proxy-ep``, else the enterprise's
    ``copilot-api.<domain>``, else ``https://api.individual.githubcopilot.com``."""
    if token:
        url = base_url_from_token(token)
        if url:
            return url
    if enterprise_domain:
        return f"https://copilot-api.{enterprise_domain}"
    return DEFAULT_BASE_URL


def _fail(r: HttpResponse) -> LoginError:
    return LoginError(f"{r.status} {r.reason}: {r.text}")


def _fetch_json(method: str, url: str, headers: dict[str, str], body: str | None = None) -> Any:
    r = request(method, url, headers=headers, body=body)
    if not r.ok:
        raise _fail(r)
    return r.json()


def _with_rate_limit_retry(
    method: str, url: str, headers: dict[str, str], body: str | None, max_retries: int, max_elapsed_ms: int
) -> HttpResponse:
    """``fetchWithRateLimitRetry``: a 429 is retried after its ``retry-after`` (or 0.5 s doubling)
    while the retry budget lasts."""
    budget = max_retries > 0 and max_elapsed_ms > 0
    deadline = time.time() * 1000 + max_elapsed_ms if budget else None
    retry = 0
    while True:
        r = request(method, url, headers=headers, body=body, timeout=5.0)
        if r.status != 429 or retry == max_retries:
            return r
        delay = 500 * 2**retry
        after = r.headers.get("retry-after")
        if after:
            try:
                delay = float(after) * 1000
            except ValueError:
                parsed = email.utils.parsedate_to_datetime(after) if after else None
                if parsed is None:
                    return r
                delay = parsed.timestamp() * 1000 - time.time() * 1000
        delay = max(0.0, delay)
        if deadline is not None and delay >= deadline - time.time() * 1000:
            return r
        time.sleep(delay / 1000)
        retry += 1


def _start_device_flow(domain: str) -> dict[str, Any]:
    data = _fetch_json(
        "POST",
        _urls(domain)["device"],
        {
            "Accept": "application/json",
            "Content-Type": "application/x-www-form-urlencoded",
            "User-Agent": "GitHubCopilotChat/0.35.0",
        },
        form({"client_id": CLIENT_ID, "scope": "read:user"}),
    )
    if not isinstance(data, dict):
        raise LoginError("Invalid device code response")
    interval = data.get("interval")
    if (
        not isinstance(data.get("device_code"), str)
        or not isinstance(data.get("user_code"), str)
        or not isinstance(data.get("verification_uri"), str)
        or (interval is not None and not isinstance(interval, int | float))
        or not isinstance(data.get("expires_in"), int | float)
    ):
        raise LoginError("Invalid device code response fields")
    uri = urllib.parse.urlsplit(data["verification_uri"])
    if uri.scheme not in ("https", "http") or not uri.netloc:
        raise LoginError("Untrusted verification_uri in device code response")
    return {
        **data,
        "verification_uri": data["verification_uri"] if uri.path else data["verification_uri"] + "/",
    }


def _poll_access_token(domain: str, device: dict[str, Any], interaction: Interaction) -> str:
    def poll() -> tuple[str, Any]:
        raw = _fetch_json(
            "POST",
            _urls(domain)["access"],
            {
                "Accept": "application/json",
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": "GitHubCopilotChat/0.35.0",
            },
            form(
                {
                    "client_id": CLIENT_ID,
                    "device_code": device["device_code"],
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                }
            ),
        )
        if isinstance(raw, dict) and isinstance(raw.get("access_token"), str):
            return "complete", raw["access_token"]
        if isinstance(raw, dict) and isinstance(raw.get("error"), str):
            error = raw["error"]
            if error == "authorization_pending":
                return "pending", None
            if error == "slow_down":
                interval = raw.get("interval")
                return "slow_down", interval if isinstance(interval, int | float) else None
            description = raw.get("error_description")
            suffix = f": {description}" if description else ""
            return "failed", f"Device flow failed: {error}{suffix}"
        return "failed", "Invalid device token response"

    value: str = poll_device_code(
        poll,
        interaction,
        interval_seconds=device.get("interval"),
        expires_in_seconds=device["expires_in"],
        wait_before_first_poll=True,
    )
    return value


def _copilot_token(github_token: str, enterprise_domain: str | None) -> dict[str, Any]:
    """``refreshGitHubCopilotAccessToken``: the GitHub token exchanged for a Copilot token."""
    raw = _fetch_json(
        "GET",
        _urls(enterprise_domain or "github.com")["copilot"],
        {"Accept": "application/json", "Authorization": f"Bearer {github_token}", **COPILOT_HEADERS},
    )
    if not isinstance(raw, dict):
        raise LoginError("Invalid Copilot token response")
    token, expires_at = raw.get("token"), raw.get("expires_at")
    if not isinstance(token, str) or isinstance(expires_at, bool) or not isinstance(expires_at, int | float):
        raise LoginError("Invalid Copilot token response fields")
    from pi_nb.redaction import register_secret

    register_secret(token, "GitHub Copilot token")
    cred: dict[str, Any] = {
        "type": "oauth",
        "refresh": github_token,
        "access": token,
        "expires": expires_at * 1000 - 5 * 60 * 1000,
    }
    if enterprise_domain is not None:
        cred["enterpriseUrl"] = enterprise_domain
    return cred


def _parse_models(raw: Any, allow_policy_fallback: bool) -> tuple[list[str], list[str]]:
    data = raw.get("data") if isinstance(raw, dict) else None
    if not isinstance(data, list):
        raise LoginError("Invalid Copilot models response")
    models = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        caps: dict[str, Any] = item["capabilities"] if isinstance(item.get("capabilities"), dict) else {}
        supports: dict[str, Any] = caps["supports"] if isinstance(caps.get("supports"), dict) else {}
        if supports.get("tool_calls") is False:
            continue
        policy: dict[str, Any] = item["policy"] if isinstance(item.get("policy"), dict) else {}
        models.append((item["id"], item.get("model_picker_enabled") is True, policy.get("state")))
    picker = [m for m, enabled, state in models if enabled and state != "disabled"]
    use_fallback = allow_policy_fallback and not picker
    available = (
        picker
        if picker or not allow_policy_fallback
        else [m for m, _e, state in models if state == "enabled"]
    )
    # pi-ai checks its built-in GITHUB_COPILOT_MODELS, not the agent dir's models.json
    known = {m["id"] for m in bundled_catalog()["providers"].get("github-copilot", ())}
    policy_ids = [
        m
        for m, enabled, state in models
        if state == "unconfigured" and m in known and (enabled or use_fallback)
    ]
    return available, policy_ids


def _fetch_models(
    token: str, enterprise_domain: str | None, max_retries: int, max_elapsed_ms: int
) -> tuple[list[str], list[str]]:
    base = copilot_base_url(token, enterprise_domain)
    r = _with_rate_limit_retry(
        "GET",
        f"{base}/models",
        {
            "Accept": "application/json",
            "Authorization": f"Bearer {token}",
            **COPILOT_HEADERS,
            "X-GitHub-Api-Version": COPILOT_API_VERSION,
        },
        None,
        max_retries,
        max_elapsed_ms,
    )
    if not r.ok:
        raise _fail(r)
    return _parse_models(r.json(), base == DEFAULT_BASE_URL)


def _enable_models(token: str, model_ids: list[str], enterprise_domain: str | None) -> list[str]:
    enabled = []
    base = copilot_base_url(token, enterprise_domain)
    for model_id in model_ids:
        try:
            r = _with_rate_limit_retry(
                "POST",
                f"{base}/models/{model_id}/policy",
                {
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {token}",
                    **COPILOT_HEADERS,
                    "openai-intent": "chat-policy",
                    "x-interaction-type": "chat-policy",
                },
                json_body({"state": "enabled"}),
                2,
                5000,
            )
        except Exception:
            continue
        if r.status == 429:
            break
        if r.ok:
            enabled.append(model_id)
    return enabled


def login(interaction: Interaction) -> dict[str, Any]:
    """``loginGitHubCopilot``: asks for an enterprise domain (blank: github.com), shows the device
    code (``device_code`` event), polls, exchanges, lists and enables models."""
    value = interaction.prompt(
        {
            "type": "text",
            "message": "GitHub Enterprise URL/domain (blank for github.com)",
            "placeholder": "company.ghe.com",
        }
    )
    interaction.check()
    enterprise = normalize_domain(value)
    if value.strip() and not enterprise:
        raise LoginError("Invalid GitHub Enterprise URL/domain")
    domain = enterprise or "github.com"
    device = _start_device_flow(domain)
    event: dict[str, Any] = {
        "type": "device_code",
        "userCode": device["user_code"],
        "verificationUri": device["verification_uri"],
        "expiresInSeconds": device["expires_in"],
    }
    if device.get("interval") is not None:
        event["intervalSeconds"] = device["interval"]
    interaction.notify(event)
    github_token = _poll_access_token(domain, device, interaction)
    cred = _copilot_token(github_token, enterprise)
    available, policy_ids = _fetch_models(cred["access"], enterprise, 2, 5000)
    enabled: list[str] = []
    if policy_ids:
        interaction.notify({"type": "progress", "message": "Enabling models..."})
        enabled = _enable_models(cred["access"], policy_ids, enterprise)
    cred["availableModelIds"] = list(dict.fromkeys([*available, *enabled]))
    return cred


def _enterprise(credential: Any) -> str | None:
    url = credential.get("enterpriseUrl")
    if not isinstance(url, str) or not url:
        return None
    return normalize_domain(url)


def refresh(credential: Any) -> dict[str, Any]:
    """``refreshGitHubCopilotToken``: a new Copilot token for the stored GitHub token, with the
    account's model ids."""
    enterprise = _enterprise(credential)
    cred = _copilot_token(credential["refresh"], enterprise)
    available, _policy = _fetch_models(cred["access"], enterprise, 0, 0)
    cred["availableModelIds"] = available
    return cred


def to_auth(credential: Any) -> dict[str, Any]:
    """The request auth: the Copilot token as the key, the base URL from it."""
    return {
        "apiKey": credential["access"],
        "baseUrl": copilot_base_url(credential["access"], _enterprise(credential)),
    }
