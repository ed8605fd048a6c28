"""An ``httpx`` transport that records each request and answers it with a canned response
(test helper for the wire tests: pi_nb's providers run their real SDK and HTTP code, and nothing
leaves the process)."""

from __future__ import annotations

from typing import Any

import httpx


class CaptureTransport(httpx.AsyncBaseTransport):
    """Records ``{url, method, headers, body}`` per request; answers with ``responses`` in order
    (the last one repeats)."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses = responses
        self.requests: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        self.requests.append(
            {
                "url": str(request.url),
                "method": request.method,
                "headers": {k.lower(): v for k, v in request.headers.items()},
                "body": body.decode("utf-8", "replace"),
            }
        )
        r = self.responses[min(len(self.requests) - 1, len(self.responses) - 1)]
        content = r["body"].encode("utf-8") if isinstance(r["body"], str) else (r["body"] or b"")
        return httpx.Response(r["status"], headers=r.get("headers") or {}, content=content, request=request)
