"""The scripted model both agents talk to in the CLI-partner recordings (test helper).

Shared by ``tests/golden/make_cli_partner.py`` (which serves it over loopback HTTP to the real
``pi`` CLI and to pi_nb) and ``tests/test_cli_partner.py`` (which serves it to pi_nb through an
in-process httpx transport). An answer is chosen per request:

* a summarisation request (its system message starts with ``You are a context summarization
  assistant``: compaction, the split-turn prefix, branch summaries) gets :data:`SUMMARY_TEXT`;
* any other request takes the next answer of the step's script (the last one repeats).

An answer spec is ``{"text": str, "prompt_tokens": int}`` (a streamed text answer; with
``"stall": seconds`` the stream pauses after the first word, for an abort mid-stream),
``{"tools": [{"id", "name", "arguments"}]}`` (streamed tool calls) or ``{"error": status,
"body": {...}}`` (a JSON error response, as OpenAI-compatible servers send them).

:func:`comparable` is how a captured request is compared, and :data:`NORMALISED` says exactly
what it changes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY_TEXT = "## Goal\nScripted summary.\n\n## Progress\n- done"
SUMMARY_MARK = "You are a context summarization assistant"

#: Headers dropped before comparing: the SDKs' runtime telemetry (``x-stainless-*``: language,
#: runtime version, retry count, timeout), the transport's own (host, connection, content-length,
#: accept-encoding) and the two Node's fetch (undici) adds to every request (accept-language: *,
#: sec-fetch-mode: cors). Everything else is compared byte for byte, except the kernel release
#: inside the user agent ``pi (linux <release>; x64)`` and the paths/date below.
DROP_HEADERS = frozenset(
    {"host", "connection", "content-length", "accept-encoding", "accept-language", "sec-fetch-mode"}
)

NORMALISED = (
    "headers: x-stainless-* and host/connection/content-length/accept-encoding/accept-language/"
    "sec-fetch-mode dropped; user-agent kernel release -> <release>; the base URL's port -> <port>; "
    "the id of the session the step ran in -> <session-id> (a first step's new session has a new id; "
    "any other id is compared); in bodies: the recording's cwd -> $CWD, agent dir -> $AGENT, 'Current date: YYYY-MM-DD' -> <date>, "
    "tools[].function.description -> <description> (pi_nb's tool descriptions are its own prose by design; "
    "the schemas, names and order are compared); in a summarisation request (compaction, split turn, "
    "branch summary) the system message -> <summarization system prompt> and the user text after its "
    "last </conversation> or </previous-summary> tag -> <summarization instructions> (pi_nb's "
    "summarisation prompts are its own prose by design; the serialised conversation is compared); "
    "a max_completion_tokens Pi clamped to the room left in the window counts as Pi's when pi_nb's "
    "differs by exactly the estimate difference of the two tool-description texts (test_cli_partner)"
)


def _chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, Any] | None = None
) -> str:
    c: dict[str, Any] = {
        "id": "chatcmpl-partner",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "scripted-1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if delta is not None else [],
    }
    if usage is not None:
        c["usage"] = usage
    return "data: " + json.dumps(c) + "\n\n"


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


#: Where a stalled answer pauses (the server sends what comes before it, waits, then the rest).
STALL = "\x00STALL\x00"


def answer_bytes(spec: dict[str, Any]) -> tuple[int, str, bytes]:
    """``(status, content type, body)`` of one answer spec (a stalled one holds :data:`STALL`)."""
    if "error" in spec:
        return int(spec["error"]), "application/json", json.dumps(spec["body"]).encode()
    prompt = int(spec.get("prompt_tokens", 100))
    if "tools" in spec:
        parts = [_chunk({"role": "assistant", "content": None})]
        for i, call in enumerate(spec["tools"]):
            args = json.dumps(call["arguments"])
            parts.append(
                _chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            parts.append(_chunk({"tool_calls": [{"index": i, "function": {"arguments": args}}]}))
        parts.append(_chunk({}, "tool_calls"))
        parts.append(_chunk(None, usage=_usage(prompt, 20)))
    elif "stall" in spec:  # the first word, a pause of ``stall`` seconds, then the rest
        first, _, rest = spec["text"].partition(" ")
        parts = [_chunk({"role": "assistant", "content": ""}), _chunk({"content": first + " "}), STALL]
        parts += [_chunk({"content": rest}), _chunk({}, "stop")]
    else:
        text = spec["text"]
        parts = [_chunk({"role": "assistant", "content": ""}), _chunk({"content": text}), _chunk({}, "stop")]
        parts.append(_chunk(None, usage=_usage(prompt, int(spec.get("completion_tokens", 10)))))
    parts.append("data: [DONE]\n\n")
    return 200, "text/event-stream", "".join(parts).encode()


def is_summary_request(body: Any) -> bool:
    """Whether a Chat Completions body is a summarisation call (compaction or branch summary)."""
    if not isinstance(body, dict):
        return False
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") not in ("system", "developer"):
        return False
    content = messages[0].get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    return text.lstrip('["{').startswith(SUMMARY_MARK) or SUMMARY_MARK in text[:200]


class Script:
    """The answers of one step: summary requests get the summary, others take the queue in order."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.taken = 0

    def answer(self, body: Any) -> tuple[int, str, bytes]:
        if is_summary_request(body):
            return answer_bytes({"text": SUMMARY_TEXT, "prompt_tokens": 500, "completion_tokens": 20})
        if not self.answers:
            return answer_bytes({"text": "(script exhausted)"})
        spec = self.answers[min(self.taken, len(self.answers) - 1)]
        self.taken += 1
        return answer_bytes(spec)


class Server:
    """The scripted server: ``self.script`` answers, ``self.log`` collects the requests."""

    def __init__(self) -> None:
        self.script = Script([])
        self.log: list[dict[str, Any]] = []
        self.stall = 6.0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw) if raw else None
                outer.log.append(
                    {
                        "url": f"http://127.0.0.1:{outer.port}{self.path}",
                        "method": "POST",
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                status, ctype, content = outer.script.answer(body)
                self.send_response(status)
                self.send_header("content-type", ctype)
                marker = STALL.encode()
                if marker not in content:
                    self.send_header("content-length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                    self.wfile.flush()
                    return
                head, _, tail = content.partition(marker)
                self.send_header("connection", "close")
                self.close_connection = True
                self.end_headers()
                try:
                    self.wfile.write(head)
                    self.wfile.flush()
                    stall = float(outer.stall)
                    deadline = time.monotonic() + stall
                    while time.monotonic() < deadline:
                        time.sleep(0.05)
                    self.wfile.write(tail)
                    self.wfile.flush()
                except OSError:  # the client went away (aborted)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def begin(self, answers: list[dict[str, Any]]) -> None:
        self.script = Script(answers)
        self.log = []

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


_UA = re.compile(r"^pi \(linux [^;]+; ")
_DATE = re.compile(r"Current date: \d{4}-\d{2}-\d{2}")
_PORT = re.compile(r"^(http://127\.0\.0\.1):\d+")


def replace_strings(value: Any, mapping: dict[str, str]) -> Any:
    """``value`` with every string's occurrences of the mapping's keys replaced (longest first)."""
    if isinstance(value, str):
        for k in sorted(mapping, key=len, reverse=True):
            value = value.replace(k, mapping[k])
        return value
    if isinstance(value, list):
        return [replace_strings(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: replace_strings(v, mapping) for k, v in value.items()}
    return value


def _dates(value: Any) -> Any:
    if isinstance(value, str):
        return _DATE.sub("Current date: <date>", value)
    if isinstance(value, list):
        return [_dates(v) for v in value]
    if isinstance(value, dict):
        return {k: _dates(v) for k, v in value.items()}
    return value


def _instructions(text: str) -> str:
    cut = max(
        (text.rfind(tag) + len(tag) for tag in ("</conversation>", "</previous-summary>") if tag in text),
        default=-1,
    )
    return text if cut < 0 else text[:cut] + "\n\n<summarization instructions>"


def _summary_prose(body: dict[str, Any]) -> dict[str, Any]:
    messages = [dict(m) for m in body["messages"]]
    messages[0]["content"] = "<summarization system prompt>"
    for m in messages[1:]:
        if m.get("role") != "user":
            continue
        if isinstance(m.get("content"), str):
            m["content"] = _instructions(m["content"])
        elif isinstance(m.get("content"), list):
            m["content"] = [
                {**b, "text": _instructions(b["text"])}
                if isinstance(b, dict) and isinstance(b.get("text"), str)
                else b
                for b in m["content"]
            ]
    return {**body, "messages": messages}


def comparable(request: dict[str, Any], paths: dict[str, str]) -> dict[str, Any]:
    """A captured request as compared (see :data:`NORMALISED`); ``paths`` maps real strings to
    their placeholders in headers and body (``{cwd: "$CWD", agent_dir: "$AGENT", session id:
    "<session-id>"}``)."""
    headers = {
        k.lower(): v
        for k, v in request["headers"].items()
        if not k.lower().startswith("x-stainless-") and k.lower() not in DROP_HEADERS
    }
    headers = {k: replace_strings(v, paths) for k, v in headers.items()}
    if "user-agent" in headers:
        headers["user-agent"] = _UA.sub("pi (linux <release>; ", headers["user-agent"])
    body = request["body"]
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            pass
    if isinstance(body, dict) and isinstance(body.get("tools"), list):
        body = {
            **body,
            "tools": [
                {**tool, "function": {**tool["function"], "description": "<description>"}}
                if isinstance(tool, dict)
                and isinstance(tool.get("function"), dict)
                and "description" in tool["function"]
                else tool
                for tool in body["tools"]
            ],
        }
    if is_summary_request(body):
        body = _summary_prose(body)
    return {
        "url": _PORT.sub(r"\1:<port>", request["url"]),
        "method": request.get("method", "POST"),
        "headers": dict(sorted(headers.items())),
        "body": _dates(replace_strings(body, paths)),
    }


def entry_shape(entry: dict[str, Any], index: dict[str, int]) -> Any:
    """A session entry with ids and timestamps replaced: ``id`` -> its position in the file,
    ``parentId``/``firstKeptEntryId``/``fromId``/``targetId`` -> the position they point at, every
    ``timestamp`` -> ``"<ts>"``; the session header's ``id`` -> ``"<session>"``."""

    def ts(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<ts>" if k == "timestamp" else ts(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [ts(v) for v in value]
        return value

    out: dict[str, Any] = ts(entry)
    if entry.get("type") == "session":
        out["id"] = "<session>"
        return out
    for key in ("id", "parentId", "firstKeptEntryId", "fromId", "targetId"):
        if key in out and out[key] is not None:
            out[key] = f"#{index[out[key]]}" if out[key] in index else f"?{out[key]}"
    return out


def session_id_of(text: str) -> str:
    """The id in a session file's header line."""
    return str(json.loads(text.splitlines()[0])["id"])


def file_shapes(text: str) -> list[Any]:
    """Every line of a session file through :func:`entry_shape`."""
    entries = [json.loads(line) for line in text.splitlines() if line.strip()]
    index = {e["id"]: i for i, e in enumerate(entries) if e.get("type") != "session" and "id" in e}
    return [entry_shape(e, index) for e in entries]


_ID_FIELD = re.compile(r'"(id|parentId|firstKeptEntryId|fromId|targetId)":"[^"]*"')
_TS_FIELD = re.compile(r'"timestamp":("[^"]*"|\d+)')


def line_bytes(line: str) -> str:
    """A session file line as written, with only the values of id fields and timestamps replaced
    (key order, spacing and escaping are kept: what byte parity compares)."""
    return _TS_FIELD.sub('"timestamp":<ts>', _ID_FIELD.sub(r'"\1":<id>', line))


# -- pi_nb's side of a step (the same code records and replays) ------------------------------------

MODEL_ID = "scripted-1"
PROVIDER = "partner"
CONTEXT_WINDOW = 8000
MAX_TOKENS = 2000
API_KEY = "sk-partner-test"
API_KEY_ENV = "PI_NB_PARTNER_API_KEY"
#: The agent dir's SYSTEM.md: both agents then build the system prompt from the same custom text
#: (their default prompts are each project's own prose, so they are not compared).
SYSTEM_MD = "You are a scripted test partner. Answer briefly.\n"
SETTINGS = {
    "compaction": {"enabled": True, "reserveTokens": 2000, "keepRecentTokens": 1000},
    "retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 50},
}


def models_json(base_url: str) -> dict[str, Any]:
    """The agent dir's models.json: one custom OpenAI-compatible provider with one small model."""
    return {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": API_KEY,
                # session-affinity headers carry the session id on every request (what the agent
                # passes to the provider is then on the wire)
                "compat": {"sendSessionAffinityHeaders": True, "sessionAffinityFormat": "openai"},
                "models": [{"id": MODEL_ID, "contextWindow": CONTEXT_WINDOW, "maxTokens": MAX_TOKENS}],
            }
        }
    }


def pi_nb_model(base_url: str, transport: Any = None) -> Any:
    """pi_nb's model for the same provider entry: the agent dir's models.json read by pi_nb where
    it can (``get_model("partner/scripted-1")``), else ``get_model`` with the models.json numbers."""
    import importlib.util

    from pi_nb.providers.registry import get_model

    if importlib.util.find_spec("pi_nb.providers.models_json") is not None:
        return get_model(f"{PROVIDER}/{MODEL_ID}", transport=transport)
    return get_model(
        f"{PROVIDER}/{MODEL_ID}",
        base_url=base_url,
        context_window=CONTEXT_WINDOW,
        max_tokens=MAX_TOKENS,
        api="openai-completions",
        api_key_env=API_KEY_ENV,
        transport=transport,
    )


def find_target(text: str, target: dict[str, Any]) -> str:
    """The id of the last message entry whose role and first text block match ``target``."""
    found = None
    for line in text.splitlines():
        if not line.strip():
            continue
        e = json.loads(line)
        m = e.get("message") if e.get("type") == "message" else None
        if not m or m.get("role") != target["role"]:
            continue
        content = m.get("content")
        first = (
            content
            if isinstance(content, str)
            else next((b.get("text") for b in content or [] if b.get("type") == "text"), None)
        )
        if first == target["text"]:
            found = e["id"]
    if found is None:
        raise LookupError(f"no entry {target} in the session file")
    return found


async def run_pi_nb_step(
    session_file: str, agent_dir: str, step: dict[str, Any], model: Any
) -> dict[str, Any]:
    """One step by pi_nb on ``session_file`` (prompt, or navigate with a summary); a missing file
    is a new session in its directory (``outcome["file"]`` is where it was written). An
    ``interrupt`` step is aborted half a second after its ``abort_on`` event (default: its tool
    starting; ``message_update``: mid-stream)."""
    import asyncio
    import os

    from pi_nb.agent.session import AgentSession
    from pi_nb.session.manager import SessionManager

    if os.path.exists(session_file):
        manager = SessionManager.open(session_file)
    else:  # the first step: a new session in the file's directory (as ``pi --session-dir``)
        manager = SessionManager.create(os.getcwd(), os.path.dirname(session_file))
    session = AgentSession(manager, model, agent_dir=agent_dir)
    outcome: dict[str, Any] = {}
    if step.get("kind") == "navigate":
        with open(session_file, encoding="utf-8") as f:
            target = find_target(f.read(), step["target"])
        result = await session.navigate_tree(target, summarize=True)
        outcome["cancelled"] = bool(result.cancelled)
        return outcome
    loop = asyncio.get_running_loop()
    if step.get("interrupt"):
        trigger = step.get("abort_on", "tool_execution_start")
        scheduled: list[Any] = []

        def on_event(event: Any) -> None:
            if event.get("type") == trigger and not scheduled:
                scheduled.append(loop.call_later(0.5, session.abort))

        session.subscribe(on_event)
    res = await session.prompt(step["prompt"])
    outcome["status"] = res.status
    outcome["file"] = manager.get_session_file()
    return outcome
