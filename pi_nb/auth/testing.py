"""A test aid: a local HTTP server that answers the sign-in endpoints of GitHub (device code,
access token, ``copilot_internal`` token, Copilot's model list and policies), Anthropic and
OpenAI (token exchange and refresh, Codex's device codes), xAI, Kimi Code and OpenRouter, as their documentation
describes them, approving every device code after ``pending_polls`` polls. It records each
request (method, original URL, headers, body).

Use it with :func:`pi_nb.auth.http.redirect_to`, which sends the flows' requests to it::

    from pi_nb.auth.testing import FakeOAuthServer
    from pi_nb.auth.http import redirect_to

    with FakeOAuthServer() as server, redirect_to(server.url):
        pi_nb.auth.login("github-copilot", notify=print)

The PKCE flows (Anthropic, OpenAI's browser login) wait for the browser's redirect: call
:func:`act_as_browser` with the ``auth_url`` event. Nothing here talks to the internet.
"""

from __future__ import annotations

import base64
import http.server
import json
import threading
import time
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["FakeOAuthServer", "act_as_browser", "fake_jwt"]

USER_CODE = "ABCD-1234"


def fake_jwt(account_id: str = "acct-fake-0001", exp: int = 4102444800) -> str:
    """An unsigned JWT with OpenAI's ChatGPT account claim (what Codex's token carries)."""

    def part(obj: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")

    claims = {"exp": exp, "https://api.openai.com/auth": {"chatgpt_account_id": account_id}}
    # base64 (not base64url) padding-free payload: what pi-ai's atob reads
    payload = base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode().rstrip("=")
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{payload}.sig"


def act_as_browser(auth_url: str, code: str = "fake-auth-code") -> int:
    """Do what the browser does after the user approves: follow the authorize URL's
    ``redirect_uri`` (OpenRouter: ``callback_url``) with ``code`` and its ``state``; the
    callback's HTTP status."""
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(auth_url).query))
    back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
    target = f"{query.get('redirect_uri') or query['callback_url']}?{urllib.parse.urlencode(back)}"
    target = target.replace("//localhost:", "//127.0.0.1:")
    try:
        with urllib.request.urlopen(target, timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


class FakeOAuthServer:
    """The server (``url``: ``http://127.0.0.1:PORT``); ``requests`` lists what it received."""

    def __init__(self, *, pending_polls: int = 1, copilot_token_lifetime: int = 1800) -> None:
        self.pending_polls = pending_polls
        self.copilot_token_lifetime = copilot_token_lifetime
        self.requests: list[dict[str, Any]] = []
        self._polls: dict[str, int] = {}
        self._lock = threading.Lock()
        self._counter = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode("utf-8") if length else ""
                host, _, rest = self.path.lstrip("/").partition("/")
                parts = urllib.parse.urlsplit("/" + rest)
                url = f"https://{host}{parts.path}" + (f"?{parts.query}" if parts.query else "")
                entry = {
                    "method": self.command,
                    "url": url,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                }
                with outer._lock:
                    outer.requests.append(entry)
                status, payload = outer.answer(self.command, host, parts.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake oauth", daemon=True)
        self._thread.start()

    def __enter__(self) -> FakeOAuthServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _pending(self, key: str) -> bool:
        with self._lock:
            n = self._polls.get(key, 0)
            self._polls[key] = n + 1
        return n < self.pending_polls

    def _next(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    # the endpoints

    def answer(self, method: str, host: str, path: str, body: str) -> tuple[int, Any]:
        form = dict(urllib.parse.parse_qsl(body)) if body and not body.startswith("{") else {}
        data = json.loads(body) if body.startswith("{") else {}
        n = self._next
        if host == "github.com" or host.endswith(".ghe.com"):
            if path == "/login/device/code":
                return 200, {
                    "device_code": "dc-fake-0001",
                    "user_code": USER_CODE,
                    "verification_uri": f"https://{host}/login/device",
                    "interval": 1,
                    "expires_in": 900,
                }
            if path == "/login/oauth/access_token":
                if self._pending("github:" + form.get("device_code", "")):
                    return 200, {"error": "authorization_pending", "error_description": "pending"}
                return 200, {
                    "access_token": "gho_fakeGitHubToken0001",
                    "token_type": "bearer",
                    "scope": "read:user",
                }
        if host.startswith("api.") and path == "/copilot_internal/v2/token":
            exp = int(time.time()) + self.copilot_token_lifetime
            return 200, {
                "token": f"tid=fake{n()};exp=4102444800;sku=copilot_individual;proxy-ep=proxy.individual.githubcopilot.com;8kp=1",
                "expires_at": exp,
                "refresh_in": 1500,
            }
        if host.endswith("githubcopilot.com"):
            if path == "/models":
                return 200, {
                    "data": [
                        {"id": "gpt-5.4", "model_picker_enabled": True, "policy": {"state": "enabled"}},
                        {
                            "id": "claude-opus-4.8",
                            "model_picker_enabled": True,
                            "policy": {"state": "unconfigured"},
                        },
                        {"id": "text-embedding-3", "capabilities": {"supports": {"tool_calls": False}}},
                        {"id": "grok-4.6", "model_picker_enabled": False, "policy": {"state": "enabled"}},
                    ]
                }
            if path.startswith("/models/") and path.endswith("/policy"):
                return 200, {"state": "enabled"}
        if host == "platform.claude.com" and path == "/v1/oauth/token":
            k = n()
            return 200, {
                "access_token": f"sk-ant-oat01-fakeAccess{k:04d}",
                "refresh_token": f"sk-ant-ort01-fakeRefresh{k:04d}",
                "expires_in": 28800,
                "token_type": "Bearer",
            }
        if host == "auth.openai.com":
            if path == "/oauth/token":
                k = n()
                return 200, {
                    "access_token": fake_jwt(),
                    "refresh_token": f"rt-fake-{k:04d}",
                    "id_token": fake_jwt(),
                    "expires_in": 864000,
                }
            if path == "/api/accounts/deviceauth/usercode":
                return 200, {"device_auth_id": "da-fake-0001", "user_code": USER_CODE, "interval": "1"}
            if path == "/api/accounts/deviceauth/token":
                if self._pending("codex:" + str(data.get("device_auth_id"))):
                    return 403, {"error": {"code": "deviceauth_authorization_pending"}}
                return 200, {"authorization_code": "ac-fake-0001", "code_verifier": "cv-fake-0001"}
        if host == "auth.x.ai":
            if path == "/oauth2/device/code":
                return 200, {
                    "device_code": "xdc-fake-0001",
                    "user_code": USER_CODE,
                    "verification_uri": "https://accounts.x.ai/device",
                    "verification_uri_complete": f"https://accounts.x.ai/device?user_code={USER_CODE}",
                    "interval": 1,
                    "expires_in": 600,
                }
            if path == "/oauth2/token":
                k = n()
                if form.get("grant_type") == "refresh_token":
                    return 200, {"access_token": f"xai-fake-access-{k:04d}", "expires_in": 3600}
                if self._pending("xai:" + form.get("device_code", "")):
                    return 400, {"error": "authorization_pending"}
                return 200, {
                    "access_token": f"xai-fake-access-{k:04d}",
                    "refresh_token": f"xai-fake-refresh-{k:04d}",
                    "expires_in": 3600,
                }
        if host == "auth.kimi.com":
            if path == "/api/oauth/device_authorization":
                return 200, {
                    "device_code": "kdc-fake-0001",
                    "user_code": USER_CODE,
                    "verification_uri": "https://www.kimi.com/code/authorize_device",
                    "verification_uri_complete": f"https://www.kimi.com/code/authorize_device?user_code={USER_CODE}",
                    "interval": 1,
                    "expires_in": 900,
                }
            if path == "/api/oauth/token":
                if form.get("grant_type") != "refresh_token" and self._pending(
                    "kimi:" + form.get("device_code", "")
                ):
                    return 400, {"error": "authorization_pending", "error_description": "waiting"}
                k = n()
                return 200, {
                    "access_token": f"kimi-fake-access-{k:04d}",
                    "refresh_token": f"kimi-fake-refresh-{k:04d}",
                    "expires_in": 3600,
                    "token_type": "Bearer",
                }
        if host == "openrouter.ai" and path == "/api/v1/auth/keys":
            return 200, {"key": f"sk-or-v1-fakeKey{n():04d}", "user_id": "user-fake"}
        return 404, {"error": "not_found", "path": f"{host}{path}", "method": method}
