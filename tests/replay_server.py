"""A local HTTP server on 127.0.0.1 that replays recorded provider responses (test helper).

Used by the provider tests and the API-key security tests: the real ``openai`` / ``anthropic``
SDKs talk to it, so the providers' production paths run with no network. Answers come from
``queues[path]`` (consumed in order), then ``routes[path]`` (the same answer every time), then
``fallback(key)`` (given the key the request carried), else a 404. A path with a query string
(the Anthropic SDK's ``?beta=true``) falls back to the route of the bare path.

The recorded provider bodies of ``tests/fixtures/streams/`` (see its ``SOURCES.md``) are served
byte for byte: :func:`load_fixture` reads one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Answer = tuple[int, str, bytes]

FIXTURES = Path(__file__).parent / "fixtures" / "streams"


def load_fixture(name: str) -> bytes:
    """A recorded body of ``tests/fixtures/streams`` as bytes (exactly as committed)."""
    return (FIXTURES / name).read_bytes()


def sse(events: list[Any], *, named: bool = False) -> bytes:
    """Server-sent events: ``data:`` lines (OpenAI) or ``event:`` + ``data:`` (Anthropic, ``named``)."""
    out = []
    for e in events:
        if e == "[DONE]":
            out.append("data: [DONE]\n\n")
        elif named:
            out.append(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n")
        else:
            out.append(f"data: {json.dumps(e)}\n\n")
    return "".join(out).encode()


def oa_chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One Chat Completions stream chunk (``delta=None``: the usage-only chunk with no choices)."""
    chunk: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if delta is not None else [],
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


class ReplayServer:
    """See the module docstring. ``requests`` records path, JSON body and lower-cased headers."""

    def __init__(self, fallback: Callable[[str], Answer] | None = None) -> None:
        self.routes: dict[str, Answer] = {}
        self.queues: dict[str, list[Answer]] = {}
        self.requests: list[dict[str, Any]] = []
        self.seen_keys: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append(
                    {"path": self.path, "body": json.loads(raw or b"{}"), "headers": headers}
                )
                key = headers.get("authorization") or headers.get("x-api-key") or ""
                outer.seen_keys.append(key)
                path = (
                    self.path
                    if self.path in outer.routes or self.path in outer.queues
                    else self.path.split("?")[0]
                )
                queue = outer.queues.get(path) or []
                if queue:
                    status, ctype, payload = queue.pop(0)
                elif path in outer.routes:
                    status, ctype, payload = outer.routes[path]
                elif fallback is not None:
                    status, ctype, payload = fallback(key)
                else:
                    status, ctype, payload = 404, "application/json", b'{"error": {"message": "no route"}}'
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
