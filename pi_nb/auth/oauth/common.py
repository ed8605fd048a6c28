"""What pi-ai's sign-in flows share: the interaction (events shown to the user, prompts), the
device-code poll loop (``device-code.ts``), PKCE (``pkce.ts``), the pasted-code parser and the
local callback server the browser is redirected to."""

from __future__ import annotations

import base64
import hashlib
import html
import http.server
import math
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CallbackServer",
    "Interaction",
    "LoginCancelled",
    "LoginError",
    "now_ms",
    "parse_authorization_input",
    "pkce",
    "poll_device_code",
    "random_bytes",
]

CANCEL_MESSAGE = "Login cancelled"
TIMEOUT_MESSAGE = "Device flow timed out"
SLOW_DOWN_TIMEOUT_MESSAGE = (
    "Device flow timed out after one or more slow_down responses. This is often caused by clock drift "
    "in WSL or VM environments. Please sync or restart the VM clock and try again."
)
MINIMUM_INTERVAL_MS = 1000
DEFAULT_POLL_INTERVAL_SECONDS = 5
SLOW_DOWN_INTERVAL_INCREMENT_MS = 5000


class LoginError(RuntimeError):
    """A sign-in failed (the provider refused, a response was malformed, the device code expired)."""


class LoginCancelled(LoginError):
    """The sign-in was cancelled."""

    def __init__(self, message: str = CANCEL_MESSAGE) -> None:
        super().__init__(message)


def now_ms() -> int:
    """``Date.now()``."""
    return int(time.time() * 1000)


def random_bytes(n: int) -> bytes:
    """``n`` random bytes (PKCE verifiers, OAuth states); tests replace it to make flows repeatable."""
    return os.urandom(n)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def pkce() -> tuple[str, str]:
    """``generatePKCE()``: ``(verifier, challenge)``, the verifier 32 random bytes in base64url, the
    challenge its SHA-256 in base64url."""
    verifier = _b64url(random_bytes(32))
    return verifier, _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


Event = dict[str, Any]
Prompt = dict[str, Any]


@dataclass
class Interaction:
    """pi-ai's ``AuthInteraction``: ``notify(event)`` shows an event (``auth_url``, ``device_code``,
    ``progress``, ``info``), ``prompt(prompt)`` asks for text (``text``, ``secret``, ``select``,
    ``manual_code``; a ``manual_code`` prompt carries ``signal``, a :class:`threading.Event` set when
    the browser's redirect arrived first). ``cancel`` set aborts the flow. Without ``prompt``, a
    ``text`` prompt answers ``""``, a ``select`` its first option, and no code is pasted."""

    notify_fn: Callable[[Event], None] | None = None
    prompt_fn: Callable[[Prompt], str] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)

    def notify(self, event: Event) -> None:
        if self.notify_fn is not None:
            self.notify_fn(event)

    def prompt(self, prompt: Prompt) -> str:
        self.check()
        if self.prompt_fn is None:
            if prompt["type"] == "select":
                return str(prompt["options"][0]["id"])
            if prompt["type"] == "manual_code":
                raise LoginCancelled("no code pasted")
            return ""
        return self.prompt_fn(prompt)

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def check(self) -> None:
        if self.cancel.is_set():
            raise LoginCancelled()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or raise :class:`LoginCancelled` when cancelled meanwhile."""
        if self.cancel.wait(max(0.0, seconds)):
            raise LoginCancelled()


# --- device code (RFC 8628) -----------------------------------------------------------------

PollResult = tuple[
    str, Any
]  # ("pending", None) | ("slow_down", seconds|None) | ("failed", msg) | ("complete", value)


def poll_device_code(
    poll: Callable[[], PollResult],
    interaction: Interaction,
    *,
    interval_seconds: float | None = None,
    expires_in_seconds: float | None = None,
    wait_before_first_poll: bool = False,
) -> Any:
    """``pollOAuthDeviceCodeFlow``: poll every interval (5 s by default, at least 1 s) until
    ``complete`` (its value) or ``failed`` (raised), widening the interval on ``slow_down`` (to the
    server's value, else by 5 s), until the code expires."""
    deadline = now_ms() + expires_in_seconds * 1000 if expires_in_seconds is not None else math.inf
    base = DEFAULT_POLL_INTERVAL_SECONDS if interval_seconds is None else interval_seconds
    interval_ms = max(MINIMUM_INTERVAL_MS, math.floor(base * 1000))
    slow_downs = 0
    if wait_before_first_poll:
        remaining = deadline - now_ms()
        if remaining > 0:
            interaction.sleep(min(interval_ms, remaining) / 1000)
    while now_ms() < deadline:
        interaction.check()
        status, value = poll()
        if status == "complete":
            return value
        if status == "failed":
            raise LoginError(str(value))
        if status == "slow_down":
            slow_downs += 1
            if isinstance(value, int | float) and math.isfinite(value) and value > 0:
                interval_ms = max(MINIMUM_INTERVAL_MS, math.floor(value * 1000))
            else:
                interval_ms = max(MINIMUM_INTERVAL_MS, interval_ms + SLOW_DOWN_INTERVAL_INCREMENT_MS)
        remaining = deadline - now_ms()
        if remaining <= 0:
            break
        interaction.sleep(min(interval_ms, remaining) / 1000)
    raise LoginError(SLOW_DOWN_TIMEOUT_MESSAGE if slow_downs else TIMEOUT_MESSAGE)


# --- pasted codes -------------------------------------------------------------------------


def parse_authorization_input(value: str) -> tuple[str | None, str | None]:
    """pi-ai's ``parseAuthorizationInput``: ``(code, state)`` from a redirect URL, ``code#state``,
    a ``code=...&state=...`` query, or a bare code."""
    value = value.strip()
    if not value:
        return None, None
    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", value):
        # what `new URL(value)` accepts: any scheme (``localhost:1455/...`` too); the query's values
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(value).query, keep_blank_values=True)
        return (query.get("code", [None])[0], query.get("state", [None])[0])
    if "#" in value:
        code, _, state = value.partition("#")
        return code, state.split("#", 1)[0]
    if "code=" in value:
        query = urllib.parse.parse_qs(value, keep_blank_values=True)
        return (query.get("code", [None])[0], query.get("state", [None])[0])
    return value, None


# --- the local callback server ------------------------------------------------------------


def _page(title: str, heading: str, message: str, details: str | None = None) -> str:
    extra = f"<p><code>{html.escape(details)}</code></p>" if details else ""
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8" /><title>{html.escape(title)}</title>'
        f"</head><body><h1>{html.escape(heading)}</h1><p>{html.escape(message)}</p>{extra}</body></html>"
    )


def success_html(message: str) -> str:
    """``oauthSuccessHtml``'s page (its words; a plain layout)."""
    return _page("Authentication successful", "Authentication successful", message)


def error_html(message: str, details: str | None = None) -> str:
    """``oauthErrorHtml``'s page (its words; a plain layout)."""
    return _page("Authentication failed", "Authentication failed", message, details)


class CallbackServer:
    """The local server the provider redirects the browser to (``http://localhost:PORT/PATH``):
    ``check(query)`` returns ``(status, page, result)``; the first result wins :meth:`wait`.
    A port already taken leaves the server off (:attr:`listening` false) and only a pasted code
    can finish, as in pi-ai's OpenAI flow."""

    def __init__(
        self,
        host: str,
        port: int,
        path: str,
        check: Callable[[Mapping[str, str]], tuple[int, str, Any]],
    ) -> None:
        self._result: Any = None
        self._done = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                if url.path != path:
                    status, page, result = 404, error_html("Callback route not found."), None
                else:
                    q = {k: v[0] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
                    try:
                        status, page, result = check(q)
                    except Exception:
                        status, page, result = 500, "Internal error", None
                body = page.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                if result is not None:
                    outer.settle(result)

            def log_message(self, format: str, *args: Any) -> None:
                return

        try:
            self._server: http.server.ThreadingHTTPServer | None = http.server.ThreadingHTTPServer(
                (host, port), Handler
            )
        except OSError:
            self._server = None
        if self._server is not None:
            threading.Thread(
                target=self._server.serve_forever, name="pi_nb oauth callback", daemon=True
            ).start()

    @property
    def listening(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        """The port listened on (the one asked for, or the free one picked for port 0)."""
        return int(self._server.server_address[1]) if self._server is not None else 0

    def settle(self, result: Any) -> None:
        if not self._done.is_set():
            self._result = result
            self._done.set()

    def cancel_wait(self) -> None:
        self.settle(None)

    def wait(self, cancel: threading.Event, timeout: float | None = None) -> Any:
        """The first result (``None`` when cancelled, or :meth:`cancel_wait`)."""
        start = time.monotonic()
        while not self._done.wait(0.05):
            if cancel.is_set():
                self.settle(None)
            if timeout is not None and time.monotonic() - start > timeout:
                self.settle(None)
        return self._result

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def race_manual_code(
    interaction: Interaction, server: CallbackServer, message: str, placeholder: str
) -> tuple[Any, str | None]:
    """pi-ai's race of the browser redirect against a pasted code: ``(callback result, pasted)``,
    one of them set. The ``manual_code`` prompt runs beside the wait; a redirect cancels it."""
    pasted: list[str] = []
    failed: list[BaseException] = []
    stop = threading.Event()

    def ask() -> None:
        try:
            value = interaction.prompt(
                {"type": "manual_code", "message": message, "placeholder": placeholder, "signal": stop}
            )
            pasted.append(value)
        except BaseException as exc:
            failed.append(exc)
        finally:
            server.cancel_wait()

    if interaction.prompt_fn is not None:
        threading.Thread(target=ask, name="pi_nb oauth manual code", daemon=True).start()
    elif not server.listening:
        raise LoginError(
            "the local callback server could not start and no prompt was given for a pasted code"
        )
    try:
        result = server.wait(interaction.cancel)
    finally:
        stop.set()
    interaction.check()
    if result is None and failed and not isinstance(failed[0], LoginCancelled):
        raise failed[0]
    return result, (pasted[0] if pasted else None)
