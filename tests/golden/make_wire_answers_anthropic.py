"""Golden file for the answers of the ``anthropic-messages`` API: what pi-ai 0.85.0 records (the
final message, the events, whether Pi calls it a context overflow) of each canned answer, and the
requests it sent, as Pi's agent calls it.

Every error shape (HTTP 400/401/413/429/500/502/529 with JSON, empty and HTML bodies, bodies that
are JSON but not objects), an ``error`` event inside the stream, a last event without its closing
blank line, CRLF line ends, refusals, ``sensitive``, unknown and missing stop reasons, a stream cut
before ``message_stop``, redacted thinking and signature deltas (real recordings from
``tests/fixtures/streams``), tool-call JSON deltas, usage with cache reads and writes (1-hour
writes, thinking tokens), a proxy's usage without input tokens, the server-side model fallback
(priced at the fallback's rates), input transformations (a diagnostic), a block never stopped, and
pi-ai's own retries (Pi's ``retry.provider.maxRetries``: retried statuses, ``x-should-retry``,
a ``retry-after`` beyond the limit), the auth variants: ``$ANTHROPIC_AUTH_TOKEN`` (bearer), a Claude subscription token in
``$ANTHROPIC_OAUTH_TOKEN`` (Claude Code's identity and tool names), ``$PI_CACHE_RETENTION=long``.

Run by hand when the cases change (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``):

    .venv/bin/python tests/golden/make_wire_answers_anthropic.py

It drives ``_pi_wire.mjs`` (pi-coding-agent's ``ModelRuntime.streamSimple`` with a replaced
``fetch`` serving each case's ``responses``) once per environment group, then pi-ai's
``isContextOverflow`` on each final message. Output: ``wire_answers_anthropic.json.gz`` (each case's
inputs and pi-ai's results; ``tests/test_anthropic_answers.py`` reads only this file).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
for p in (str(ROOT), str(TESTS), str(TESTS / "golden")):
    if p not in sys.path:
        sys.path.insert(0, p)

import make_wire  # noqa: E402
import wire_cases  # noqa: E402

OUT = TESTS / "golden" / "wire_answers_anthropic.json.gz"
FIXTURES = TESTS / "fixtures" / "streams"
SSE = {"content-type": "text/event-stream"}
JSON_TYPE = {"content-type": "application/json"}
HTML_TYPE = {"content-type": "text/html"}

SONNET = ("anthropic", "claude-sonnet-4-5")
FABLE = ("anthropic", "claude-fable-5")  # adaptive thinking, server-side fallback to claude-opus-4-8


def event(kind: str, data: dict[str, Any] | str) -> str:
    return f"event: {kind}\ndata: {data if isinstance(data, str) else json.dumps(data)}\n\n"


def start(
    model: str = "claude-sonnet-4-5-20250929", usage: dict[str, Any] | None = None, **extra: Any
) -> str:
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "usage": usage if usage is not None else {"input_tokens": 25, "output_tokens": 1},
        **extra,
    }
    return event("message_start", {"type": "message_start", "message": message})


def text_block(index: int, *pieces: str, stop: bool = True) -> str:
    out = event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
    )
    for piece in pieces:
        out += event(
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
        )
    if stop:
        out += event("content_block_stop", {"type": "content_block_stop", "index": index})
    return out


def delta(stop_reason: str | None, usage: dict[str, Any] | None = None, **extra: Any) -> str:
    body: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": stop_reason, **extra}}
    body["usage"] = usage if usage is not None else {"output_tokens": 7}
    return event("message_delta", body)


STOP = event("message_stop", {"type": "message_stop"})


def ok(body: str, status: int = 200, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"status": status, "headers": headers or SSE, "body": body}


def error_json(kind: str, message: str) -> str:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011"})


def tool_stream() -> str:
    return (
        start()
        + text_block(0, "I will run it.")
        + event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}},
            },
        )
        + "".join(
            event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                },
            )
            for p in ('{"comm', 'and": "ls', ' -la"}')
        )
        + event("content_block_stop", {"type": "content_block_stop", "index": 1})
        + event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "read",
                    "input": {"path": "a"},
                },
            },
        )
        + event("content_block_stop", {"type": "content_block_stop", "index": 2})
        + delta("tool_use")
        + STOP
    )


def oauth_tool_stream() -> str:
    """A subscription-token answer calls Claude Code's ``Bash``: Pi maps it back to ``bash``."""
    return (
        start()
        + event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {}},
            },
        )
        + event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"command":"ls"}'},
            },
        )
        + event("content_block_stop", {"type": "content_block_stop", "index": 0})
        + delta("tool_use")
        + STOP
    )


def simple(stop_reason: str | None, **extra: Any) -> str:
    return start() + text_block(0, "Hello", " there") + delta(stop_reason, **extra) + STOP


def cases() -> list[dict[str, Any]]:
    """``{name, provider, model, conversation, level, env, responses}`` per case."""
    canned = wire_cases.canned_response("anthropic-messages")["body"]
    out: list[dict[str, Any]] = []

    def add(
        name: str,
        responses: list[dict[str, Any]],
        model: tuple[str, str] = SONNET,
        conversation: str = "tools",
        level: str = "off",
        env: dict[str, str] | None = None,
        max_retries: int | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        out.append(
            {
                "name": name,
                "provider": model[0],
                "model": model[1],
                "conversation": conversation,
                "level": level,
                "env": env or {},
                "responses": responses,
                "maxRetries": max_retries,
                **({"context": context} if context is not None else {}),
            }
        )

    fixture = (FIXTURES / "error_anthropic_prompt_too_long.json").read_text("utf-8")
    rate_limit = (FIXTURES / "error_anthropic_rate_limit.json").read_text("utf-8")
    html = "<html>\r\n<head><title>{0}</title></head>\r\n<body>\r\n<center><h1>{0}</h1></center>\r\n</body>\r\n</html>\r\n"
    add("ok_canned", [ok(canned)])
    add("http_400_prompt_too_long", [ok(fixture, 400, JSON_TYPE)])
    add("http_401_json", [ok(error_json("authentication_error", "invalid x-api-key"), 401, JSON_TYPE)])
    add(
        "http_403_json",
        [ok(error_json("permission_error", "Your API key does not have permission"), 403, JSON_TYPE)],
    )
    add("http_404_json", [ok(error_json("not_found_error", "model: claude-nope"), 404, JSON_TYPE)])
    add(
        "http_413_json",
        [
            ok(
                error_json("request_too_large", "Request exceeds the maximum allowed number of bytes."),
                413,
                JSON_TYPE,
            )
        ],
    )
    add("http_413_html", [ok(html.format("413 Request Entity Too Large"), 413, HTML_TYPE)])
    add("http_429_json", [ok(rate_limit, 429, {**JSON_TYPE, "retry-after": "30"})])
    add("http_500_json", [ok(error_json("api_error", "Internal server error"), 500, JSON_TYPE)])
    add("http_500_empty", [ok("", 500, JSON_TYPE)])
    add("http_502_html", [ok(html.format("502 Bad Gateway"), 502, HTML_TYPE)])
    add("http_529_overloaded", [ok(error_json("overloaded_error", "Overloaded"), 529, JSON_TYPE)])
    add("http_400_json_string", [ok('"just a string"', 400, JSON_TYPE)])
    add("http_400_json_null", [ok("null", 400, JSON_TYPE)])
    add("http_400_json_array", [ok('[{"error":{"message":"in an array"}}]', 400, JSON_TYPE)])
    add("http_400_top_level_message", [ok('{"message":"top-level text","code":7}', 400, JSON_TYPE)])
    add("http_400_message_object", [ok('{"message":{"detail":"nested"}}', 400, JSON_TYPE)])
    add("http_400_plain_text", [ok("Bad request: prompt is too long", 400, {"content-type": "text/plain"})])
    overloaded = error_json("overloaded_error", "Overloaded")
    add("stream_error_event", [ok(start() + text_block(0, "Partial") + event("error", overloaded))])
    add("stream_error_event_first", [ok(event("error", overloaded))])
    add("stream_error_event_not_json", [ok(start() + "event: error\ndata: upstream went away\n\n")])
    add("no_trailing_blank_line", [ok(canned.rstrip("\n") + "\n")])
    add("no_trailing_newline", [ok(canned.rstrip("\n"))])
    add("crlf_line_ends", [ok(canned.replace("\n", "\r\n"))])
    add("bom_first", [ok("\ufeff" + canned)])
    no_id = start().replace('"id": "msg_01", ', "")
    add("message_start_without_id", [ok(no_id + text_block(0, "x") + delta("end_turn") + STOP)])
    add("cr_line_ends", [ok(canned.replace("\n", "\r"))])
    add(
        "comments_and_pings",
        [ok(": keep-alive\n\n" + canned.replace(STOP, event("ping", {"type": "ping"}) + ": hi\n\n" + STOP))],
    )
    add(
        "multi_line_data",
        [
            ok(
                start()
                + 'event: content_block_start\ndata: {"type":"content_block_start",\ndata: "index":0,"content_block":{"type":"text","text":"A"}}\n\n'
                + event("content_block_stop", {"type": "content_block_stop", "index": 0})
                + delta("end_turn")
                + STOP
            )
        ],
    )
    block_open = event(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    block_close = event("content_block_stop", {"type": "content_block_stop", "index": 0})
    raw_tab = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tab\there \\q"}}\n\n'
    add("repairable_json", [ok(start() + block_open + raw_tab + block_close + delta("end_turn") + STOP)])
    add(
        "refusal_explained",
        [
            ok(
                simple(
                    "refusal",
                    stop_details={"type": "refusal", "explanation": "This violates the usage policy."},
                )
            )
        ],
    )
    add("refusal_plain", [ok(simple("refusal"))])
    add("sensitive", [ok(simple("sensitive"))])
    add("unknown_stop_reason", [ok(simple("model_context_window_exceeded_soon"))])
    add("pause_turn", [ok(simple("pause_turn"))])
    add("stop_sequence", [ok(simple("stop_sequence"))])
    add("max_tokens", [ok(simple("max_tokens"))])
    add("cut_before_message_stop", [ok(start() + text_block(0, "Hello") + delta("end_turn"))])
    add("cut_mid_block", [ok(start() + text_block(0, "Hel", stop=False))])
    add("no_stop_reason", [ok(start() + text_block(0, "Hello") + delta(None) + STOP)])
    add("no_message_start", [ok(text_block(0, "Hello") + delta("end_turn") + STOP)])
    add("empty_body", [ok("")])
    add("block_never_stopped", [ok(start() + text_block(0, "Open", stop=False) + delta("end_turn") + STOP)])
    add("tool_calls", [ok(tool_stream())])
    add(
        "usage_cache_reads_and_writes",
        [
            ok(
                start(
                    usage={
                        "input_tokens": 12,
                        "output_tokens": 1,
                        "cache_read_input_tokens": 5000,
                        "cache_creation_input_tokens": 1200,
                        "cache_creation": {
                            "ephemeral_5m_input_tokens": 200,
                            "ephemeral_1h_input_tokens": 1000,
                        },
                    }
                )
                + text_block(0, "cached")
                + delta(
                    "end_turn",
                    usage={
                        "output_tokens": 321,
                        "cache_read_input_tokens": None,
                        "output_tokens_details": {"thinking_tokens": 120},
                    },
                )
                + STOP
            )
        ],
        level="medium",
    )
    add(
        "usage_proxy_without_input",
        [
            ok(
                start(usage={"input_tokens": 40, "output_tokens": 0})
                + text_block(0, "x")
                + delta("end_turn", usage={"output_tokens": 9, "input_tokens": None})
                + STOP
            )
        ],
    )
    add(
        "usage_missing_in_delta",
        [
            ok(
                start()
                + text_block(0, "x")
                + event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
                + STOP
            )
        ],
    )
    add(
        "server_side_fallback",
        [
            ok(
                start(model="claude-opus-4-8", usage={"input_tokens": 1000, "output_tokens": 1})
                + text_block(0, "from the fallback")
                + delta("end_turn", usage={"output_tokens": 500})
                + STOP
            )
        ],
        model=FABLE,
        level="high",
    )
    add(
        "fallback_block_first",
        [
            ok(
                start(model="claude-opus-4-8")
                + event(
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": {"type": "fallback"}},
                )
                + text_block(1, "after")
                + delta("end_turn")
                + STOP
            )
        ],
        model=FABLE,
    )
    add(
        "fallback_mid_output",
        [
            ok(
                start()
                + text_block(0, "before")
                + event(
                    "content_block_start",
                    {"type": "content_block_start", "index": 1, "content_block": {"type": "fallback"}},
                )
                + delta("end_turn")
                + STOP
            )
        ],
        model=FABLE,
    )
    add(
        "input_transformations",
        [
            ok(
                start(
                    input_transformations=[
                        {
                            "type": "thinking_dropped",
                            "path": "messages.1.content.0",
                            "reason": "prefix_mismatch",
                        }
                    ]
                )
                + text_block(0, "ok")
                + delta("end_turn")
                + STOP
            )
        ],
        conversation="history",
        level="medium",
    )
    add(
        "redacted_thinking",
        [ok((FIXTURES / "anthropic_redacted_thinking.sse").read_text("utf-8"))],
        level="medium",
    )
    add(
        "thinking_signature",
        [ok((FIXTURES / "anthropic_thinking_signature.sse").read_text("utf-8"))],
        level="high",
    )
    add("auth_token_bearer", [ok(canned)], env={"ANTHROPIC_AUTH_TOKEN": "auth-token-0123"})
    add(
        "oauth_subscription_token",
        [ok(oauth_tool_stream())],
        conversation="history",
        level="medium",
        env={"ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-test-0123"},
    )
    quick = {**JSON_TYPE, "retry-after-ms": "5"}
    add("retry_529_then_ok", [ok(overloaded, 529, quick), ok(canned)], max_retries=1)
    add("retry_exhausted", [ok(overloaded, 500, quick), ok(overloaded, 500, quick)], max_retries=1)
    add("retry_400_not_retried", [ok(fixture, 400, quick), ok(canned)], max_retries=2)
    add(
        "retry_should_retry_false",
        [ok(overloaded, 500, {**quick, "x-should-retry": "false"}), ok(canned)],
        max_retries=1,
    )
    add(
        "retry_should_retry_true",
        [ok(fixture, 400, {**quick, "x-should-retry": "true"}), ok(canned)],
        max_retries=1,
    )
    add(
        "retry_after_too_long",
        [ok(rate_limit, 429, {**JSON_TYPE, "retry-after": "120"}), ok(canned)],
        max_retries=1,
    )
    for name, model, level, ctx in special_contexts():
        add(name, [ok(canned)], model=model, level=level, context=ctx)
    add(
        "retry_after_ms_number_prefix",
        [ok(overloaded, 529, {**JSON_TYPE, "retry-after-ms": "5ms"}), ok(canned)],
        max_retries=1,
    )
    past = {**JSON_TYPE, "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}
    add("retry_after_http_date", [ok(overloaded, 503, past), ok(canned)], max_retries=1)
    add("cache_retention_long", [ok(canned)], conversation="broken", env={"PI_CACHE_RETENTION": "long"})
    return out


def _assistant(provider: str, model: str, content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse",
        "timestamp": 1767225610000,
        **extra,
    }


def special_contexts() -> list[tuple[str, tuple[str, str], str, dict[str, Any]]]:
    """Histories the wire cases do not have: tools a result loads later (tool references, deferred
    tools), managed effort per earlier turn, unsigned thinking, blank user content."""
    tools = [
        *wire_cases.tool_schemas()[:2],
        {
            "name": "search_docs",
            "description": "Search the docs.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        },
    ]
    user = {"role": "user", "content": "Find the docs.", "timestamp": 1767225600000}
    later = {"role": "user", "content": "Go on.", "timestamp": 1767225700000}
    call = {"type": "toolCall", "id": "toolu_01abc", "name": "bash", "arguments": {"command": "ls"}}
    loaded = {
        "role": "toolResult",
        "toolCallId": "toolu_01abc",
        "toolName": "bash",
        "content": [{"type": "text", "text": "docs loaded"}],
        "addedToolNames": ["search_docs"],
        "isError": False,
        "timestamp": 1767225620000,
    }
    unsigned = {"type": "thinking", "thinking": "Unsigned reasoning."}
    out = []
    deferred = {
        "systemPrompt": wire_cases.SYSTEM,
        "messages": [user, _assistant(*SONNET, [call]), loaded, later],
        "tools": tools,
    }
    out.append(("tool_references_and_deferred_tools", SONNET, "off", deferred))
    vercel = ("vercel-ai-gateway", "anthropic/claude-sonnet-4.5")
    out.append(("deferred_tools_without_tool_references", vercel, "off", deferred))
    opus5 = ("anthropic", "claude-opus-5")
    managed = {
        "systemPrompt": wire_cases.SYSTEM,
        "messages": [
            user,
            _assistant(*opus5, [{"type": "text", "text": "Working."}, call], providerThinkingLevel="low"),
            {**loaded, "addedToolNames": []},
            later,
        ],
        "tools": tools[:2],
    }
    out.append(("managed_effort_history", opus5, "medium", managed))
    for name, model in (
        ("unsigned_thinking_kept_empty", ("kimi-coding", "k3")),
        ("unsigned_thinking_as_text", SONNET),
    ):
        ctx = {
            "systemPrompt": wire_cases.SYSTEM,
            "messages": [
                user,
                _assistant(*model, [unsigned, {"type": "text", "text": "Done."}], stopReason="stop"),
                {"role": "user", "content": [{"type": "text", "text": "   "}], "timestamp": 1767225650000},
                {"role": "user", "content": "  ", "timestamp": 1767225660000},
                later,
            ],
        }
        out.append((name, model, "high", ctx))
    return out


OVERFLOW_JS = """
import { readFileSync } from "node:fs";
const home = process.env.PI_ORACLE_HOME || `${process.env.HOME}/.cache/pi-oracle`;
const { isContextOverflow } = await import(`${home}/node_modules/@earendil-works/pi-ai/dist/utils/overflow.js`);
const items = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(items.map(([m, w]) => isContextOverflow(m, w))));
"""


def main() -> None:
    from pi_nb.providers.catalog import find_model

    all_cases = cases()
    results: dict[str, Any] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in all_cases:
        groups.setdefault(json.dumps(case["env"], sort_keys=True), []).append(case)
    for env_key, group in groups.items():
        env = make_wire.pi_env()
        env.update(json.loads(env_key))
        jobs = []
        for case in group:
            spec = find_model(case["provider"], case["model"])
            assert spec is not None, case["model"]
            jobs.append(
                {
                    "name": case["name"],
                    "provider": case["provider"],
                    "model": case["model"],
                    "context": case.get("context") or wire_cases.context_for(spec.raw, case["conversation"]),
                    "level": case["level"],
                    "sessionId": wire_cases.SESSION_ID,
                    "responses": case["responses"],
                    **(
                        {"settings": {"retry": {"provider": {"maxRetries": case["maxRetries"]}}}}
                        if case["maxRetries"] is not None
                        else {}
                    ),
                }
            )
        with tempfile.TemporaryDirectory() as agent_dir:
            got = make_wire.run_node(jobs, agent_dir, env)["cases"]
        for case in group:
            results[case["name"]] = got[case["name"]]
    items = []
    for case in all_cases:
        spec = find_model(case["provider"], case["model"])
        assert spec is not None
        items.append([results[case["name"]]["message"], spec.context_window])
    r = subprocess.run(
        [str(make_wire.NODE), "--input-type=module", "-e", OVERFLOW_JS],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        check=True,
    )
    overflow = json.loads(r.stdout)
    ua = json.loads((TESTS / "golden" / "wire_user_agent.json").read_text("utf-8"))["userAgent"]
    golden = []
    for case, is_overflow in zip(all_cases, overflow, strict=True):
        res = results[case["name"]]
        for diagnostic in (res["message"] or {}).get("diagnostics") or []:
            diagnostic["timestamp"] = 0  # wall-clock time (the test zeroes pi_nb's too)
        golden.append(
            {
                **case,
                "requests": [wire_cases.comparable(q, ua) for q in res["requests"]],
                "message": res["message"],
                "events": res["events"],
                "overflow": is_overflow,
            }
        )
    text = json.dumps({"cases": golden}, indent=1, ensure_ascii=False) + "\n"
    with open(OUT, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
        f.write(text.encode("utf-8"))  # mtime 0: the same cases give the same bytes
    print(f"wrote {len(golden)} cases to {OUT}")


if __name__ == "__main__":
    main()
