"""The sign-in scenarios both sides run against pi_nb.auth.testing.FakeOAuthServer: Pi 0.85.0's own
code (``tests/golden/_pi_auth.mjs``, recorded by ``tests/golden/make_auth.py`` into
``tests/golden/auth_flows.json``) and pi_nb's (``tests/test_auth_flows.py``), and how a recorded
request is compared (:func:`comparable`: the runtimes' own transport headers dropped)."""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from pi_nb.auth.testing import fake_jwt

#: headers the HTTP client adds by itself (Node's fetch / httpx), not the flow
RUNTIME_HEADERS = frozenset(
    {"host", "connection", "content-length", "accept-encoding", "accept-language", "sec-fetch-mode"}
)

EXPIRED = 1000  # 1970: every refresh scenario's stored token has expired

SCENARIOS: list[dict[str, Any]] = [
    {"name": "github-copilot login", "kind": "login", "provider": "github-copilot", "answers": [""]},
    {
        "name": "github-copilot enterprise login",
        "kind": "login",
        "provider": "github-copilot",
        "answers": ["https://company.ghe.com/"],
    },
    {"name": "anthropic login (browser)", "kind": "login", "provider": "anthropic"},
    {
        "name": "anthropic login (pasted code)",
        "kind": "login",
        "provider": "anthropic",
        "paste": "pasted-code#<state>",
    },
    {
        "name": "openai-codex login (browser)",
        "kind": "login",
        "provider": "openai-codex",
        "answers": ["browser"],
    },
    {
        "name": "openai-codex login (pasted redirect URL)",
        "kind": "login",
        "provider": "openai-codex",
        "answers": ["browser"],
        "paste": "http://localhost:1455/auth/callback?code=pasted-code&state=<state>",
    },
    {
        "name": "openai-codex login (device code)",
        "kind": "login",
        "provider": "openai-codex",
        "answers": ["device_code"],
    },
    {"name": "xai login", "kind": "login", "provider": "xai"},
    {"name": "kimi-coding login", "kind": "login", "provider": "kimi-coding"},
    {"name": "openrouter login (browser)", "kind": "login", "provider": "openrouter"},
    {
        "name": "openrouter login (pasted redirect URL)",
        "kind": "login",
        "provider": "openrouter",
        "paste": "http://127.0.0.1:1/oauth/callback/x?code=pasted-code",
    },
]

_KEEP = {"openai": {"type": "api_key", "key": "sk-keep-this-0123456789"}}
for _provider, _cred in (
    (
        "anthropic",
        {"type": "oauth", "refresh": "sk-ant-ort01-old", "access": "sk-ant-oat01-old", "expires": EXPIRED},
    ),
    (
        "openai-codex",
        {
            "type": "oauth",
            "refresh": "rt-old",
            "access": fake_jwt(),
            "expires": EXPIRED,
            "accountId": "acct-fake-0001",
        },
    ),
    (
        "github-copilot",
        {
            "type": "oauth",
            "refresh": "gho_fakeGitHubToken0001",
            "access": "tid=old;exp=1;proxy-ep=proxy.individual.githubcopilot.com",
            "expires": EXPIRED,
        },
    ),
    ("xai", {"type": "oauth", "refresh": "xai-old-refresh", "access": "xai-old-access", "expires": EXPIRED}),
    (
        "kimi-coding",
        {"type": "oauth", "refresh": "kimi-old-refresh", "access": "kimi-old", "expires": EXPIRED},
    ),
):
    SCENARIOS.append(
        {
            "name": f"{_provider} refresh",
            "kind": "refresh",
            "provider": _provider,
            "credentials": {**_KEEP, _provider: _cred, "zz-other": {"type": "api_key", "key": "$OTHER_KEY"}},
        }
    )

SCENARIOS.append(
    {
        "name": "write",
        "kind": "write",
        "ops": [
            [
                "set",
                "anthropic",
                {"type": "oauth", "refresh": "r-1", "access": "a-1", "expires": 1767225600000},
            ],
            ["set", "openai", {"type": "api_key", "key": "sk-ünï-0123456789"}],
            [
                "set",
                "cloudflare-ai-gateway",
                {"type": "api_key", "key": "$CF", "env": {"CLOUDFLARE_ACCOUNT_ID": "acct"}},
            ],
            [
                "set",
                "anthropic",
                {
                    "type": "oauth",
                    "refresh": "r-2",
                    "access": "a-2",
                    "expires": 1767229200000,
                    "extra": [1, 2.5, None],
                },
            ],
            ["delete", "openai"],
        ],
    }
)

READ_FILES = [
    '{"anthropic": {"type": "api_key", "key": "sk-ant-api-0123456789"}}',
    '\ufeff{"anthropic": {"type": "oauth", "access": "a-0123456789", "refresh": "r-0123456789", "expires": 5}}',
    '{"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": "soon"}}',
    '{"anthropic": {"type": "oauth", "access": "a", "expires": 5}}',
    '{"anthropic": []}',
    "[]",
    "not json",
    '{"anthropic": {"type": "api_key", "key": 5}}',
    '{"anthropic": {"type": "api_key", "env": {"X": 1}}}',
    '{"anthropic": {"type": "magic"}}',
    '{"anthropic": {"type": "api_key", "env": {"X": "y"}}}',
    '{"openai": {"type": "api_key"}}',
]
SCENARIOS.append({"name": "read", "kind": "read", "provider": "anthropic", "files": READ_FILES})
#: every printable ASCII character, controls, non-ASCII and astral text, through both encodings
FORM_VALUES = [
    "".join(chr(c) for c in range(32, 127)),
    "tab\tnew\nline\r\x00\x1f\x7f",
    "é ü ß 中文 😀 \u2028 \ufeff",
    "urn:ietf:params:oauth:grant-type:device_code",
    "org:create_api_key user:profile",
]
SCENARIOS.append({"name": "form", "kind": "form", "values": FORM_VALUES})
SCENARIOS.append({"name": "lock", "kind": "lock"})


def comparable(request: dict[str, Any]) -> dict[str, Any]:
    """A request the fake server received, as compared: method, URL, the flow's own headers, the
    body (JSON parsed; a form kept as its text, whose order is part of the request)."""
    headers = {k: v for k, v in request["headers"].items() if k not in RUNTIME_HEADERS}
    if headers.get("user-agent") == "node" or headers.get("user-agent", "").startswith("python-httpx/"):
        del headers["user-agent"]
    if headers.get("accept") == "*/*":
        del headers["accept"]
    body: Any = request["body"]
    if body.startswith("{"):
        body = json.loads(body)
    return {
        "method": request["method"],
        "url": request["url"],
        "headers": dict(sorted(headers.items())),
        "body": body,
    }


def normalize_auth_json(text: str | None) -> str | None:
    """auth.json with every ``expires`` number replaced (they depend on the clock)."""
    if text is None:
        return None
    # integers only: a float where Pi writes an integer stays visible
    return re.sub(r'"expires": \d+(?![\d.])', '"expires": "<n>"', text)


def lifetime(expires_ms: float, now_ms: float) -> int | str:
    """A credential's ``expires`` as whole minutes from ``now_ms`` (the golden's precision for a
    clock-dependent value); OpenRouter's never-expiring ``Number.MAX_SAFE_INTEGER`` as itself."""
    if expires_ms == 9007199254740991:
        return "MAX_SAFE_INTEGER"
    return round((expires_ms - now_ms) / 60000)


UUID = "00000000-1111-4222-8333-444444444444"  # crypto.randomUUID() on both sides


def free_port(value: Any) -> Any:
    """``value`` with a free local port (OpenRouter's callback) replaced by ``<port>``."""
    if isinstance(value, str):
        return re.sub(r"127\.0\.0\.1(:|%3A)\d+", r"127.0.0.1\1<port>", value)
    if isinstance(value, dict):
        return {k: free_port(v) for k, v in value.items()}
    if isinstance(value, list):
        return [free_port(v) for v in value]
    return value


def event_comparable(event: dict[str, Any]) -> dict[str, Any]:
    """An event as compared: an ``auth_url``'s query split off (its order kept), a free port
    replaced."""
    if event.get("type") == "auth_url":
        parts = urllib.parse.urlsplit(event["url"])
        event = {**event, "url": f"{parts.scheme}://{parts.netloc}{parts.path}", "query": parts.query}
    out: dict[str, Any] = free_port(event)
    return out
