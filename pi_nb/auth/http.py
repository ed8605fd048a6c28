"""The HTTP requests of the sign-in flows (token endpoints, device codes, the Copilot token).

pi-ai sends them with ``fetch``; here they go through one synchronous ``httpx`` call,
:func:`request`, with the bodies encoded as pi-ai encodes them (:func:`form` is
``URLSearchParams``, :func:`json_body` is ``JSON.stringify``).

:func:`redirect_to` (a documented test aid) sends every such request to one local server instead
of the provider's host: ``https://github.com/login/device/code`` becomes
``http://127.0.0.1:PORT/github.com/login/device/code``. ``pi_nb.auth.testing`` holds such a server.
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HttpResponse", "form", "json_body", "redirect_to", "request", "rewrite_url"]

_lock = threading.Lock()
_redirect: list[str] = []


@dataclass(frozen=True)
class HttpResponse:
    """A finished response: status, reason, headers (lower-case names), body text (a token
    endpoint's body holds tokens: left out of the ``repr``)."""

    status: int
    reason: str
    text: str = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        return json.loads(self.text)


def form(fields: Mapping[str, str]) -> str:
    """``new URLSearchParams(fields).toString()``: spaces as ``+``, only ``*-._`` and
    alphanumerics left as they are."""
    return "&".join(f"{_form_escape(k)}={_form_escape(v)}" for k, v in fields.items())


def _form_escape(value: str) -> str:
    return urllib.parse.quote_plus(value, safe="*").replace("~", "%7E")


def json_body(value: Any) -> str:
    """``JSON.stringify(value)``."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@contextlib.contextmanager
def redirect_to(base_url: str) -> Iterator[None]:
    """Within the block, send every sign-in request to ``base_url`` + ``/<host><path>`` (a test aid:
    a local server standing in for GitHub, Anthropic, OpenAI...)."""
    with _lock:
        _redirect.append(base_url.rstrip("/"))
    try:
        yield
    finally:
        with _lock:
            _redirect.remove(base_url.rstrip("/"))


def rewrite_url(url: str) -> str:
    """``url`` as :func:`redirect_to` sends it (unchanged outside such a block)."""
    with _lock:
        base = _redirect[-1] if _redirect else None
    if base is None:
        return url
    parts = urllib.parse.urlsplit(url)
    if base.startswith(f"{parts.scheme}://{parts.netloc}"):
        return url
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"{base}/{parts.netloc}{rest}"


def request(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: str | None = None,
    timeout: float = 30.0,
) -> HttpResponse:
    """One request, its response read whole. Network failures raise ``httpx`` errors."""
    import httpx

    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        response = client.request(
            method,
            rewrite_url(url),
            headers=dict(headers or {}),
            content=body.encode("utf-8") if body is not None else None,
        )
        return HttpResponse(
            response.status_code,
            response.reason_phrase,
            response.text,
            {k.lower(): v for k, v in response.headers.items()},
        )
