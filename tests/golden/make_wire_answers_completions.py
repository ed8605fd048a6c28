"""Golden file for Chat Completions answers: what pi-ai 0.85.0 records (final message and event
sequence) of canned server answers of every shape, as Pi's agent calls it.

The answers (``ANSWERS``): HTTP errors (400/401/413/429/500 with JSON, string, array, ``null``,
empty and HTML bodies, OpenRouter's ``metadata.raw``), an error object inside the stream, a body
whose last event has no blank line after it, CRLF line endings and comments, ``reasoning_details``
with and without signatures (text and summary deltas merged, encrypted entries kept apart),
reasoning fields, tool-call deltas by index and by id, usage with cache reads / writes / reasoning
tokens in each provider's place, finish reasons (``length``, ``content_filter``, unknown, none), a
``content`` array, an empty body.

Run by hand (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``)::

    .venv/bin/python tests/golden/make_wire_answers_completions.py

It writes ``tests/golden/wire_answers_completions.json``: ``{name: {model, context, level,
responses, requests, message, events}}`` (``requests``: how many requests pi-ai made); the grammar
cases (``GRAMMAR_ANSWERS``: a grammar tool streamed as a ``custom`` call, and replayed) run on a
model whose compat takes grammar tools (``models.json``'s ``modelOverrides``; ``compat`` in the
entry) and keep the requests pi-ai sent (``sent``); the retry cases (``RETRY_ANSWERS``) set Pi's
``retry.provider.maxRetries`` (``max_retries`` in the entry). The test
(``tests/test_wire_answers_completions.py``) serves the same responses to pi_nb.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
for p in (str(ROOT), str(TESTS), str(TESTS / "golden")):
    if p not in sys.path:
        sys.path.insert(0, p)

import wire_cases  # noqa: E402
from make_wire import pi_env, run_node  # noqa: E402

OUT = TESTS / "golden" / "wire_answers_completions.json"

OPENROUTER = "openrouter/aion-labs/aion-2.0"
DEEPSEEK = "deepseek/deepseek-v4-flash"
MOONSHOT = "moonshotai/kimi-k2-0711-preview"
OPENCODE_GO = "opencode-go/deepseek-v4-flash"
GROQ = "groq/llama-3.1-8b-instant"


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "served-model",
        "choices": [{"index": 0, "delta": delta if delta is not None else {}, "finish_reason": finish}],
    }
    out.update(extra)
    return out


USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def sse(*events: Any, done: bool = True, tail: str = "\n\n", sep: str = "\n\n") -> str:
    """``data:`` events (dicts as JSON, strings as they are), ``[DONE]``, ``tail`` after the last."""
    parts = [f"data: {e if isinstance(e, str) else json.dumps(e)}" for e in events]
    if done:
        parts.append("data: [DONE]")
    return sep.join(parts) + tail


def ok(body: str) -> dict[str, Any]:
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "body": body}


def http(status: int, body: Any, content_type: str = "application/json", **headers: str) -> dict[str, Any]:
    text = body if isinstance(body, str) else json.dumps(body)
    return {"status": status, "headers": {"content-type": content_type, **headers}, "body": text}


TEXT_STOP = [
    chunk({"role": "assistant", "content": "Hello"}),
    chunk({"content": " there"}),
    chunk({}, "stop", usage=USAGE),
]

ANSWERS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    # --- HTTP errors ---
    "http_400_json_error_object": (
        GROQ,
        [
            http(
                400,
                {"error": {"message": "Invalid 'messages'", "type": "invalid_request_error", "code": None}},
            )
        ],
    ),
    "http_400_context_length": (
        GROQ,
        [
            http(
                400,
                {
                    "error": {
                        "message": "This model's maximum context length is 8192 tokens. However, your messages "
                        "resulted in 9000 tokens.",
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                },
            )
        ],
    ),
    "http_400_empty_body": (GROQ, [http(400, "")]),
    "http_400_detail_body": (GROQ, [http(400, {"detail": "Input is too long for requested model."})]),
    "http_400_json_null": (GROQ, [http(400, "null")]),
    "http_400_json_string": (GROQ, [http(400, '"bad request"')]),
    "http_400_json_array": (GROQ, [http(400, [{"error": {"code": 400, "message": "array body"}}])]),
    "http_401_error_string": (GROQ, [http(401, {"error": "Invalid API key"})]),
    "http_401_message_not_string": (GROQ, [http(401, {"error": {"message": {"text": "nested"}, "code": 1}})]),
    "http_413_html": (
        GROQ,
        [http(413, "<html><body><h1>413 Request Entity Too Large</h1></body></html>\n", "text/html")],
    ),
    "http_429_rate_limit": (
        GROQ,
        [
            http(
                429,
                {
                    "error": {
                        "message": "Rate limit reached for model",
                        "type": "tokens",
                        "code": "rate_limit_exceeded",
                    }
                },
                **{"retry-after": "7"},
            )
        ],
    ),
    "http_500_text": (
        GROQ,
        [http(500, "upstream connect error or disconnect/reset before headers", "text/plain")],
    ),
    "http_500_empty_object": (GROQ, [http(500, {})]),
    "http_502_whitespace": (GROQ, [http(502, "   \n", "text/plain")]),
    "http_400_openrouter_metadata_raw": (
        OPENROUTER,
        [
            http(
                400,
                {
                    "error": {
                        "message": "Provider returned error",
                        "code": 400,
                        "metadata": {
                            "raw": "prompt is too long: 210000 tokens > 200000 maximum",
                            "provider_name": "X",
                        },
                    }
                },
            )
        ],
    ),
    "http_400_error_with_body_text_in_message": (
        GROQ,
        [http(400, {"error": {"message": "x", "type": "t"}, "extra": "y"})],
    ),
    # --- errors inside the stream ---
    "stream_error_object": (
        GROQ,
        [
            ok(
                sse(
                    chunk({"role": "assistant", "content": "Part"}),
                    {"error": {"message": "Overloaded", "code": 529}},
                )
            )
        ],
    ),
    "stream_error_string": (
        GROQ,
        [ok(sse({"error": "The number of tokens to keep is greater than the context"}))],
    ),
    "stream_error_metadata_raw": (
        OPENROUTER,
        [
            ok(
                sse(
                    {
                        "error": {
                            "message": "Provider returned error",
                            "code": 502,
                            "metadata": {"raw": "upstream timed out", "provider_name": "Y"},
                        }
                    }
                )
            )
        ],
    ),
    "stream_error_after_tool_call": (
        GROQ,
        [
            ok(
                sse(
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {"name": "read", "arguments": '{"pa'},
                                }
                            ]
                        }
                    ),
                    {"error": {"message": "boom"}},
                )
            )
        ],
    ),
    # --- the end of the body ---
    "last_event_without_blank_line": (GROQ, [ok(sse(*TEXT_STOP, done=False, tail="\n"))]),
    "last_event_without_newline": (GROQ, [ok(sse(*TEXT_STOP, done=False, tail=""))]),
    "done_without_newline": (GROQ, [ok(sse(*TEXT_STOP, tail=""))]),
    "crlf_lines_and_comments": (
        GROQ,
        [ok(": keep-alive\r\n\r\n" + sse(*TEXT_STOP, sep="\r\n\r\n", tail="\r\n\r\n"))],
    ),
    "cr_line_endings": (GROQ, [ok(sse(*TEXT_STOP, sep="\r\r", tail="\r\r"))]),
    "last_event_ends_with_one_cr": (GROQ, [ok(sse(*TEXT_STOP, done=False, tail="\r"))]),
    "last_event_ends_with_two_cr": (GROQ, [ok(sse(*TEXT_STOP, done=False, tail="\r\r"))]),
    "last_event_ends_with_crlf": (GROQ, [ok(sse(*TEXT_STOP, done=False, tail="\r\n"))]),
    "events_after_done_ignored": (
        GROQ,
        [ok(sse(*TEXT_STOP) + sse(chunk({"content": " late"}), done=False))],
    ),
    "empty_body": (GROQ, [ok("")]),
    "multiline_data_event": (
        GROQ,
        [
            ok(
                'data: {"id":"c","choices":[{"index":0,\ndata: "delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
            )
        ],
    ),
    # --- reasoning ---
    "reasoning_details_text_merged_signature_last": (
        OPENROUTER,
        [
            ok(
                sse(
                    chunk(
                        {
                            "role": "assistant",
                            "reasoning": "Think",
                            "reasoning_details": [
                                {
                                    "type": "reasoning.text",
                                    "text": "Think",
                                    "format": "anthropic-claude-v1",
                                    "index": 0,
                                }
                            ],
                        }
                    ),
                    chunk(
                        {
                            "reasoning": "ing.",
                            "reasoning_details": [{"type": "reasoning.text", "text": "ing.", "index": 0}],
                        }
                    ),
                    chunk(
                        {
                            "reasoning_details": [
                                {"type": "reasoning.text", "text": "", "signature": "sig-abc", "index": 0}
                            ]
                        }
                    ),
                    chunk({"content": "Answer"}),
                    chunk({}, "stop", usage=USAGE),
                )
            )
        ],
    ),
    "reasoning_details_without_signature": (
        OPENROUTER,
        [
            ok(
                sse(
                    chunk({"reasoning_details": [{"type": "reasoning.text", "text": "a", "id": None}]}),
                    chunk(
                        {"reasoning_details": [{"type": "reasoning.text", "text": "b", "signature": None}]}
                    ),
                    chunk(
                        {
                            "reasoning_details": [
                                {"type": "reasoning.text", "text": "c", "id": "r1", "format": ""}
                            ]
                        }
                    ),
                    chunk({"content": "ok"}, "stop"),
                )
            )
        ],
    ),
    "reasoning_details_summary_and_encrypted": (
        OPENROUTER,
        [
            ok(
                sse(
                    chunk(
                        {
                            "reasoning_details": [
                                {
                                    "type": "reasoning.summary",
                                    "summary": "Plan: ",
                                    "format": "openai-responses-v1",
                                }
                            ]
                        }
                    ),
                    chunk(
                        {
                            "reasoning_details": [
                                {"type": "reasoning.summary", "summary": "run ls", "id": "rs_1"}
                            ]
                        }
                    ),
                    chunk(
                        {
                            "reasoning_details": [
                                {
                                    "type": "reasoning.encrypted",
                                    "data": "gAAAAenc1",
                                    "id": "rs_1",
                                    "index": 1,
                                },
                                {"type": "reasoning.encrypted", "data": "gAAAAenc2", "id": "rs_2"},
                                {"type": "reasoning.unknown", "data": "skipped"},
                                {"type": "reasoning.text", "text": 5},
                            ]
                        }
                    ),
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_9",
                                    "type": "function",
                                    "function": {"name": "bash", "arguments": '{"command":"ls"}'},
                                }
                            ]
                        }
                    ),
                    chunk({}, "tool_calls", usage=USAGE),
                )
            )
        ],
    ),
    "reasoning_content_field": (
        DEEPSEEK,
        [
            ok(
                sse(
                    chunk({"role": "assistant", "reasoning_content": "Let me think", "content": None}),
                    chunk({"reasoning_content": " more.", "reasoning": " ignored"}),
                    chunk({"content": "Done."}),
                    chunk(
                        {},
                        "stop",
                        usage={
                            "prompt_tokens": 500,
                            "completion_tokens": 60,
                            "total_tokens": 560,
                            "prompt_cache_hit_tokens": 300,
                            "prompt_cache_miss_tokens": 200,
                            "completion_tokens_details": {"reasoning_tokens": 40},
                        },
                    ),
                )
            )
        ],
    ),
    "reasoning_field_opencode_go": (
        OPENCODE_GO,
        [ok(sse(chunk({"reasoning": "hmm"}), chunk({"content": "ok"}), chunk({}, "stop")))],
    ),
    # --- tool calls ---
    "tool_calls_by_index_and_id": (
        GROQ,
        [
            ok(
                sse(
                    chunk({"role": "assistant", "content": "Running."}),
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_a",
                                    "type": "function",
                                    "function": {"name": "bash", "arguments": ""},
                                }
                            ]
                        }
                    ),
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"comm'}}]}),
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'and":"ls"}'}}]}),
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 1,
                                    "id": "call_b",
                                    "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                                }
                            ]
                        }
                    ),
                    chunk(
                        {
                            "tool_calls": [
                                {"id": "call_c", "function": {"name": "write", "arguments": '{"path":"b"'}}
                            ]
                        }
                    ),
                    chunk({"tool_calls": [{"id": "call_c", "function": {"arguments": ',"content":"x"}'}}]}),
                    chunk({}, "tool_calls"),
                    chunk(None, None, choices=[], usage=USAGE),
                )
            )
        ],
    ),
    "tool_call_invalid_arguments": (
        GROQ,
        [
            ok(
                sse(
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_x",
                                    "function": {"name": "bash", "arguments": '{"command": "ls", '},
                                }
                            ]
                        }
                    ),
                    chunk({}, "tool_calls"),
                )
            )
        ],
    ),
    # --- usage ---
    "usage_cached_and_cache_write": (
        OPENROUTER,
        [
            ok(
                sse(
                    chunk({"content": "ok"}),
                    chunk(
                        {},
                        "stop",
                        usage={
                            "prompt_tokens": 1000,
                            "completion_tokens": 50,
                            "total_tokens": 1050,
                            "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 100},
                            "completion_tokens_details": {"reasoning_tokens": 10},
                        },
                    ),
                )
            )
        ],
    ),
    "usage_kimi_top_level_cached_in_choice": (
        MOONSHOT,
        [
            ok(
                sse(
                    chunk({"content": "ok"}),
                    {
                        "id": "c",
                        "model": "kimi-k2-0711-preview",
                        "choices": [
                            {
                                "index": 0,
                                "delta": {},
                                "finish_reason": "stop",
                                "usage": {"prompt_tokens": 80, "completion_tokens": 5, "cached_tokens": 30},
                            }
                        ],
                    },
                )
            )
        ],
    ),
    "usage_zero_cached_detail_wins": (
        DEEPSEEK,
        [
            ok(
                sse(
                    chunk({"content": "ok"}),
                    chunk(
                        {},
                        "stop",
                        usage={
                            "prompt_tokens": 90,
                            "completion_tokens": 3,
                            "prompt_tokens_details": {"cached_tokens": 0},
                            "prompt_cache_hit_tokens": 50,
                        },
                    ),
                )
            )
        ],
    ),
    # --- finish reasons ---
    "no_finish_reason": (GROQ, [ok(sse(chunk({"content": "cut"}), chunk({"content": " off"})))]),
    "finish_length": (GROQ, [ok(sse(chunk({"content": "long"}), chunk({}, "length", usage=USAGE)))]),
    "finish_content_filter": (GROQ, [ok(sse(chunk({"content": "bad"}), chunk({}, "content_filter")))]),
    "finish_unknown": (GROQ, [ok(sse(chunk({"content": "?"}), chunk({}, "weird_reason")))]),
    "finish_content_filter_then_stop": (
        GROQ,
        [ok(sse(chunk({"content": "x"}, "content_filter"), chunk({}, "stop")))],
    ),
    "finish_function_call_end": (GROQ, [ok(sse(chunk({"content": "x"}, "end")))]),
    # --- odd chunks ---
    "content_array": (
        GROQ,
        [
            ok(
                sse(
                    chunk({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
                    chunk({}, "stop"),
                )
            )
        ],
    ),
    "chunks_with_odd_ids_and_models": (
        GROQ,
        [
            ok(
                sse(
                    {"choices": [{"index": 0, "delta": {"content": "a"}}], "model": ""},
                    {
                        "id": "",
                        "choices": [{"index": 0, "delta": {"content": "b"}}],
                        "model": "llama-3.1-8b-instant",
                    },
                    {
                        "id": "later",
                        "model": "other",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    },
                    [1, 2],
                    "42",
                )
            )
        ],
    ),
}


# --- grammar (custom) tools, on a model whose compat takes them (a models.json override in Pi) ---
GRAMMAR_COMPAT = {"supportsOpenAIGrammarTools": True}
GRAMMAR_TOOL = {
    "name": "apply_patch",
    "description": "Apply a patch in the patch grammar.",
    "parameters": {
        "type": "object",
        "properties": {"patch": {"type": "string", "description": "The patch"}},
        "required": ["patch"],
    },
    "constrainedSampling": {
        "type": "grammar",
        "variants": {"openai_lark": 'start: "*** Begin Patch" /(.|\\n)*/'},
    },
}
CUSTOM_CALL_STREAM = sse(
    chunk({"role": "assistant", "content": "Patching."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_g1",
                    "type": "custom",
                    "custom": {"name": "apply_patch", "input": "*** Begin"},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "custom": {"input": ' Patch\n"quoted" \\ tab\t'}}]}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_u",
                    "type": "custom",
                    "custom": {"name": "unknown_tool", "input": "x"},
                }
            ]
        }
    ),
    chunk({}, "tool_calls", usage=USAGE),
)


def grammar_context(history: bool) -> dict[str, Any]:
    ctx = wire_cases.context_for(
        {"provider": "groq", "api": "openai-completions", "id": "llama-3.1-8b-instant"}, "tools"
    )
    ctx["tools"] = [*ctx["tools"], GRAMMAR_TOOL]
    if history:
        ctx["messages"] = [
            *ctx["messages"],
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Patching."},
                    {
                        "type": "toolCall",
                        "id": "call_g0",
                        "name": "apply_patch",
                        "arguments": {"patch": "*** Begin Patch\nX"},
                    },
                    {"type": "toolCall", "id": "call_b0", "name": "bash", "arguments": {"command": "ls"}},
                ],
                "api": "openai-completions",
                "provider": "groq",
                "model": "llama-3.1-8b-instant",
                "usage": wire_cases._usage(),
                "stopReason": "toolUse",
                "timestamp": 1767225600000,
            },
            *(
                {
                    "role": "toolResult",
                    "toolCallId": cid,
                    "toolName": tool,
                    "content": [{"type": "text", "text": "done"}],
                    "isError": False,
                    "timestamp": 1767225600001,
                }
                for cid, tool in (("call_g0", "apply_patch"), ("call_b0", "bash"))
            ),
            {"role": "user", "content": "Again.", "timestamp": 1767225600002},
        ]
    return ctx


GRAMMAR_ANSWERS: dict[str, tuple[str, list[dict[str, Any]], dict[str, Any]]] = {
    "grammar_custom_tool_call_streamed": (GROQ, [ok(CUSTOM_CALL_STREAM)], grammar_context(False)),
    "grammar_custom_tool_call_replayed": (GROQ, [ok(sse(*TEXT_STOP))], grammar_context(True)),
}


# --- pi-ai's provider retries (Pi's retry.provider.maxRetries setting; pi_nb: StreamOptions.extra) ---
FAST = {"retry-after-ms": "1"}
RETRY_ANSWERS: dict[str, tuple[str, list[dict[str, Any]], int]] = {
    "retry_429_then_ok": (
        GROQ,
        [http(429, {"error": {"message": "slow down"}}, **FAST), ok(sse(*TEXT_STOP))],
        1,
    ),
    "retry_400_is_not_retried": (
        GROQ,
        [http(400, {"error": {"message": "bad"}}, **FAST), ok(sse(*TEXT_STOP))],
        2,
    ),
    "retry_500_exhausted": (GROQ, [http(500, "down", "text/plain", **FAST)], 2),
    "retry_should_retry_false": (
        GROQ,
        [http(503, "busy", "text/plain", **{"x-should-retry": "false"}), ok(sse(*TEXT_STOP))],
        2,
    ),
    "retry_should_retry_true_on_400": (
        GROQ,
        [http(400, "again", "text/plain", **{"x-should-retry": "true", **FAST}), ok(sse(*TEXT_STOP))],
        1,
    ),
    "retry_after_too_long": (
        GROQ,
        [http(429, {"error": {"message": "quota"}}, **{"retry-after": "120"}), ok(sse(*TEXT_STOP))],
        1,
    ),
}


def main() -> None:
    from pi_nb.providers.catalog import find_model

    env = pi_env()
    jobs = []
    for name, (spec, responses) in ANSWERS.items():
        provider, model_id = spec.split("/", 1)
        model = find_model(provider, model_id)
        assert model is not None, spec
        jobs.append(
            {
                "name": name,
                "provider": provider,
                "model": model_id,
                "context": wire_cases.context_for(model.raw, "tools"),
                "level": "off",
                "sessionId": wire_cases.SESSION_ID,
                "responses": responses,
            }
        )
    grammar_jobs = []
    for name, (spec, responses, context) in GRAMMAR_ANSWERS.items():
        provider, model_id = spec.split("/", 1)
        grammar_jobs.append(
            {
                "name": name,
                "provider": provider,
                "model": model_id,
                "context": context,
                "level": "off",
                "sessionId": wire_cases.SESSION_ID,
                "responses": responses,
            }
        )
    retry_jobs = []
    for name, (spec, responses, retries) in RETRY_ANSWERS.items():
        provider, model_id = spec.split("/", 1)
        model = find_model(provider, model_id)
        assert model is not None, spec
        retry_jobs.append(
            {
                "name": name,
                "provider": provider,
                "model": model_id,
                "context": wire_cases.context_for(model.raw, "tools"),
                "level": "off",
                "sessionId": wire_cases.SESSION_ID,
                "responses": responses,
                "settings": {"retry": {"provider": {"maxRetries": retries}}},
            }
        )
    jobs.extend(retry_jobs)
    with tempfile.TemporaryDirectory() as agent_dir:
        result = run_node(jobs, agent_dir, env)
    with tempfile.TemporaryDirectory() as agent_dir:
        override = {
            "providers": {"groq": {"modelOverrides": {"llama-3.1-8b-instant": {"compat": GRAMMAR_COMPAT}}}}
        }
        (Path(agent_dir) / "models.json").write_text(json.dumps(override), encoding="utf-8")
        result["cases"].update(run_node(grammar_jobs, agent_dir, env)["cases"])
    out: dict[str, Any] = {}
    for job in [*jobs, *grammar_jobs]:
        case = result["cases"][job["name"]]
        if case.get("missing"):
            raise SystemExit(f"pi-ai has no model for {job['name']}")
        entry: dict[str, Any] = {
            "model": f"{job['provider']}/{job['model']}",
            "context": job["context"],
            "level": "off",
            "responses": job["responses"],
            "requests": len(case["requests"]),
            "message": case["message"],
            "events": case["events"],
        }
        if "settings" in job:
            entry["max_retries"] = job["settings"]["retry"]["provider"]["maxRetries"]
        if job in grammar_jobs:
            ua = next(
                (q["headers"]["user-agent"] for q in case["requests"] if "user-agent" in q["headers"]), None
            )
            entry["compat"] = GRAMMAR_COMPAT
            entry["sent"] = [wire_cases.comparable(q, ua) for q in case["requests"]]
        out[job["name"]] = entry
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(out)} answers to {OUT}")


if __name__ == "__main__":
    main()
