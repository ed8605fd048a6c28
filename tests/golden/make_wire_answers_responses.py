"""Golden file for the answers of the ``openai-responses`` and ``mistral-conversations`` APIs: what
pi-ai 0.85.0 records of each canned answer (HTTP errors with JSON, empty and HTML bodies, in-stream
``error`` / ``response.failed`` events, streams cut before their end, reasoning items with
encrypted content, cached-token usage, Mistral's typed thinking chunks and its error bodies...),
as Pi's agent calls it.

Run by hand when the cases change (needs ../shared/pi-oracle installed: Node and Pi 0.85.0 under
``~/.cache/pi-oracle``):

    PYTHONPATH=$PWD .venv/bin/python tests/golden/make_wire_answers_responses.py

Each case is one catalog model, one conversation of ``tests/wire_cases.py``, one level and the
answer the server gives (status, headers, body). ``_pi_wire.mjs`` runs pi-coding-agent's own
``ModelRuntime.streamSimple`` with a replaced ``fetch`` serving that answer. Real recorded bodies
from ``tests/fixtures/streams`` are used where they fit (see its ``SOURCES.md``); the others are
written here in the shapes those APIs send. ``tests/golden/wire_answers_responses.json`` records,
per case, the number of requests pi-ai made, its final message and its event sequence (run-length
encoded ``[type, contentIndex, count]``); ``tests/test_wire_answers_responses.py`` serves the same
answers to pi_nb's providers and compares.
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

GOLDEN = TESTS / "golden" / "wire_answers_responses.json"
FIXTURES = TESTS / "fixtures" / "streams"

SSE = {"content-type": "text/event-stream"}
JSON_H = {"content-type": "application/json"}


def _sse(events: list[dict[str, Any]], named: bool = True) -> str:
    if named:
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------ Responses answers

_CREATED = {"type": "response.created", "response": {"id": "resp_x1", "status": "in_progress", "output": []}}


def _msg_added(index: int = 0, item_id: str = "msg_x1", phase: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    if phase:
        item["phase"] = phase
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def _msg_done(text: str, index: int = 0, item_id: str = "msg_x1", phase: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    if phase:
        item["phase"] = phase
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def _text_delta(delta: str, index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "item_id": "msg_x1",
        "output_index": index,
        "content_index": 0,
        "delta": delta,
    }


def _completed(
    usage: dict[str, Any] | None = None, status: str = "completed", **extra: Any
) -> dict[str, Any]:
    response: dict[str, Any] = {"id": "resp_x1", "status": status}
    response.update(extra)
    if usage is not None:
        response["usage"] = usage
    kind = "response.incomplete" if status == "incomplete" else "response.completed"
    return {"type": kind, "response": response}


_USAGE = {
    "input_tokens": 200,
    "output_tokens": 30,
    "total_tokens": 230,
    "input_tokens_details": {"cached_tokens": 0},
}


def _text_stream(*tail: dict[str, Any]) -> list[dict[str, Any]]:
    return [_CREATED, _msg_added(), _text_delta("Hel"), _text_delta("lo"), _msg_done("Hello"), *tail]


def _reasoning_item(encrypted: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": "rs_x1",
        "summary": [{"type": "summary_text", "text": "**Plan**\n\nList the files."}],
    }
    if encrypted:
        item["encrypted_content"] = "gAAAAABpXr3enc0123"
    return item


def _tool_call_stream() -> list[dict[str, Any]]:
    call = {
        "type": "function_call",
        "id": "fc_x1",
        "call_id": "call_x1",
        "name": "bash",
        "arguments": "",
        "status": "in_progress",
    }
    done = {**call, "arguments": '{"command":"ls -la"}', "status": "completed"}
    return [
        _CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**_reasoning_item(False), "summary": []},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_x1",
            "output_index": 0,
            "summary_index": 0,
            "delta": "**Plan**",
        },
        {
            "type": "response.reasoning_summary_part.done",
            "item_id": "rs_x1",
            "output_index": 0,
            "summary_index": 0,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": _reasoning_item(True)},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_x1",
            "output_index": 1,
            "delta": '{"command":',
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_x1",
            "output_index": 1,
            "delta": '"ls',
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_x1",
            "output_index": 1,
            "arguments": '{"command":"ls -la"}',
        },
        {"type": "response.output_item.done", "output_index": 1, "item": done},
        _completed(
            {
                "input_tokens": 5000,
                "output_tokens": 120,
                "total_tokens": 5120,
                "input_tokens_details": {"cached_tokens": 4096},
                "output_tokens_details": {"reasoning_tokens": 64},
            }
        ),
    ]


def _azure_backfill_stream() -> list[dict[str, Any]]:
    """Azure leaves encrypted_content out of output_item.done and gives it in response.completed."""
    return [
        _CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**_reasoning_item(False), "summary": []},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": _reasoning_item(False)},
        _msg_added(1),
        _text_delta("Done.", 1),
        _msg_done("Done.", 1),
        _completed(_USAGE, output=[_reasoning_item(True), _msg_done("Done.", 1)["item"]]),
    ]


def _resp(status: int, body: str | None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"status": status, "headers": headers if headers is not None else JSON_H, "body": body}


_HTML_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    "</center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"
)

RESPONSES_ANSWERS: dict[str, dict[str, Any]] = {
    "http_400_invalid_request": _resp(
        400,
        json.dumps(
            {
                "error": {
                    "message": "Invalid 'input[2].id': 'msg_pi_1'. Expected an ID that begins with 'msg'.",
                    "type": "invalid_request_error",
                    "param": "input[2].id",
                    "code": "invalid_value",
                }
            }
        ),
    ),
    "http_400_context_length": _resp(
        400,
        json.dumps(
            {
                "error": {
                    "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": "context_length_exceeded",
                }
            }
        ),
    ),
    "http_401_invalid_key": _resp(
        401,
        json.dumps(
            {
                "error": {
                    "message": "Incorrect API key provided: test-key-****6789. You can find your API key at https://platform.openai.com/account/api-keys.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ),
    ),
    "http_429_rate_limit": _resp(
        429,
        json.dumps(
            {
                "error": {
                    "message": "Rate limit reached for gpt-5.5 in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 4000. Please try again in 6s.",
                    "type": "tokens",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            }
        ),
        {"content-type": "application/json", "retry-after": "6"},
    ),
    "http_500_empty": _resp(500, "", {}),
    "http_502_html": _resp(502, _HTML_502, {"content-type": "text/html"}),
    "http_503_text": _resp(
        503, "upstream connect error or disconnect/reset before headers", {"content-type": "text/plain"}
    ),
    "event_error_quota": _resp(200, _fixture("responses_error_event.sse"), SSE),
    "event_error_context_length": _resp(200, _fixture("responses_context_length_event.sse"), SSE),
    "event_error_plain": _resp(
        200,
        _sse(
            [
                _CREATED,
                {
                    "type": "error",
                    "code": "server_error",
                    "message": "The server had an error processing your request.",
                    "param": None,
                },
            ]
        ),
        SSE,
    ),
    "event_failed_error": _resp(
        200,
        _sse(
            [
                _CREATED,
                {
                    "type": "response.failed",
                    "response": {
                        "id": "resp_x1",
                        "status": "failed",
                        "error": {
                            "code": "server_error",
                            "message": "An error occurred while processing your request.",
                        },
                    },
                },
            ]
        ),
        SSE,
    ),
    "event_failed_no_details": _resp(
        200,
        _sse(
            [
                _CREATED,
                {"type": "response.failed", "response": {"id": "resp_x1", "status": "failed", "error": None}},
            ]
        ),
        SSE,
    ),
    "event_failed_incomplete": _resp(
        200,
        _sse(
            [
                _CREATED,
                {
                    "type": "response.failed",
                    "response": {
                        "id": "resp_x1",
                        "status": "failed",
                        "error": None,
                        "incomplete_details": {"reason": "content_filter"},
                    },
                },
            ]
        ),
        SSE,
    ),
    "ends_without_terminal": _resp(200, _sse(_text_stream()), SSE),
    "ends_after_created": _resp(200, _sse([_CREATED]), SSE),
    "empty_stream": _resp(200, "", SSE),
    "incomplete_max_output_tokens": _resp(
        200,
        _sse(
            _text_stream(
                _completed(_USAGE, status="incomplete", incomplete_details={"reason": "max_output_tokens"})
            )
        ),
        SSE,
    ),
    "incomplete_content_filter": _resp(
        200,
        _sse(
            _text_stream(
                _completed(_USAGE, status="incomplete", incomplete_details={"reason": "content_filter"})
            )
        ),
        SSE,
    ),
    "incomplete_no_reason": _resp(200, _sse(_text_stream(_completed(_USAGE, status="incomplete"))), SSE),
    "status_cancelled": _resp(200, _sse(_text_stream(_completed(_USAGE, status="cancelled"))), SSE),
    "status_unknown": _resp(200, _sse(_text_stream(_completed(_USAGE, status="paused"))), SSE),
    "completed_no_usage": _resp(200, _sse(_text_stream(_completed(None))), SSE),
    "usage_cached_tokens": _resp(
        200,
        _sse(
            _text_stream(
                _completed(
                    {
                        "input_tokens": 12000,
                        "output_tokens": 800,
                        "total_tokens": 12800,
                        "input_tokens_details": {"cached_tokens": 9000, "cache_write_tokens": 1000},
                        "output_tokens_details": {"reasoning_tokens": 512},
                    }
                )
            )
        ),
        SSE,
    ),
    "service_tier_priority": _resp(200, _sse(_text_stream(_completed(_USAGE, service_tier="priority"))), SSE),
    "service_tier_flex": _resp(200, _sse(_text_stream(_completed(_USAGE, service_tier="flex"))), SSE),
    "phase_final_answer": _resp(
        200,
        _sse(
            [
                _CREATED,
                _msg_added(phase="final_answer"),
                _text_delta("Hi"),
                _msg_done("Hi", phase="final_answer"),
                _completed(_USAGE),
            ]
        ),
        SSE,
    ),
    "refusal": _resp(
        200,
        _sse(
            [
                _CREATED,
                _msg_added(),
                {
                    "type": "response.refusal.delta",
                    "item_id": "msg_x1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": "I can't help.",
                },
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": {
                        "type": "message",
                        "id": "msg_x1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "refusal", "refusal": "I can't help."}],
                    },
                },
                _completed(_USAGE),
            ]
        ),
        SSE,
    ),
    "reasoning_tool_call": _resp(200, _sse(_tool_call_stream()), SSE),
    "reasoning_backfill_from_completed": _resp(200, _sse(_azure_backfill_stream()), SSE),
    "recorded_reasoning_encrypted_tool_call": _resp(
        200, _fixture("responses_reasoning_encrypted_tool_call.sse"), SSE
    ),
    "recorded_reasoning_summary": _resp(200, _fixture("responses_reasoning_summary.sse"), SSE),
    "data_error_object": _resp(
        200,
        _sse([_CREATED], named=True)
        + 'data: {"error": {"message": "Internal error", "type": "server_error", "code": null}}\n\n',
        SSE,
    ),
}

# ------------------------------------------------------------------ Mistral answers


def _chunk(
    delta: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    cid: str = "cmpl-m1",
) -> dict[str, Any]:
    c: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": 1769088912,
        "model": "magistral-medium-2507",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        c["usage"] = usage
    return c


_M_USAGE = {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}


def _mistral(chunks: list[dict[str, Any]], done: bool = True, sep: str = "\n\n") -> str:
    body = "".join(f"data: {json.dumps(c)}{sep}" for c in chunks)
    return body + (f"data: [DONE]{sep}" if done else "")


_M_TOOL = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk(
        {
            "tool_calls": [
                {"id": "AbC123xyZ", "index": 0, "function": {"name": "bash", "arguments": '{"command": '}}
            ]
        }
    ),
    _chunk(
        {
            "tool_calls": [
                {"id": "AbC123xyZ", "index": 0, "function": {"name": "bash", "arguments": '"ls -la"}'}}
            ]
        }
    ),
    _chunk({"content": ""}, "tool_calls", _M_USAGE),
]

MISTRAL_ANSWERS: dict[str, dict[str, Any]] = {
    "recorded_typed_thinking": _resp(200, _fixture("mistral_list_content.sse"), SSE),
    "thinking_then_text_strings": _resp(
        200,
        _mistral(
            [
                _chunk(
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "thinking", "thinking": [{"type": "text", "text": "Let me think."}]}
                        ],
                    }
                ),
                _chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": ""}]}]}),
                _chunk({"content": "The answer"}),
                _chunk({"content": " is 4."}),
                _chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Again."}]}]}),
                _chunk({"content": ""}, "stop", _M_USAGE),
            ]
        ),
        SSE,
    ),
    "tool_call": _resp(200, _mistral(_M_TOOL), SSE),
    "tool_call_null_id_object_args": _resp(
        200,
        _mistral(
            [
                _chunk({"role": "assistant", "content": "Reading."}),
                _chunk(
                    {
                        "tool_calls": [
                            {"id": "null", "function": {"name": "read", "arguments": {"path": "a.txt"}}}
                        ]
                    }
                ),
                _chunk(
                    {
                        "tool_calls": [
                            {
                                "id": "null",
                                "index": 1,
                                "function": {"name": "read", "arguments": {"path": "b.txt"}},
                            }
                        ]
                    }
                ),
                _chunk({}, "tool_calls", _M_USAGE),
            ]
        ),
        SSE,
    ),
    "usage_cached_tokens": _resp(
        200,
        _mistral(
            [
                _chunk({"role": "assistant", "content": "ok"}),
                _chunk(
                    {},
                    "stop",
                    {
                        "prompt_tokens": 1000,
                        "completion_tokens": 5,
                        "total_tokens": 1005,
                        "prompt_tokens_details": {"cached_tokens": 900},
                    },
                ),
            ]
        ),
        SSE,
    ),
    "usage_num_cached_tokens": _resp(
        200,
        _mistral(
            [
                _chunk({"role": "assistant", "content": "ok"}),
                _chunk(
                    {},
                    "stop",
                    {
                        "prompt_tokens": 1000,
                        "completion_tokens": 5,
                        "total_tokens": 0,
                        "num_cached_tokens": 2000,
                    },
                ),
            ]
        ),
        SSE,
    ),
    "finish_length": _resp(
        200, _mistral([_chunk({"role": "assistant", "content": "cut"}), _chunk({}, "length", _M_USAGE)]), SSE
    ),
    "finish_model_length": _resp(
        200,
        _mistral([_chunk({"role": "assistant", "content": "cut"}), _chunk({}, "model_length", _M_USAGE)]),
        SSE,
    ),
    "finish_error": _resp(
        200, _mistral([_chunk({"role": "assistant", "content": "x"}), _chunk({}, "error", _M_USAGE)]), SSE
    ),
    "finish_unknown": _resp(
        200, _mistral([_chunk({"role": "assistant", "content": "x"}), _chunk({}, "content_filter")]), SSE
    ),
    "ends_without_finish": _resp(
        200, _mistral([_chunk({"role": "assistant", "content": "partial"})], done=False), SSE
    ),
    "no_done_marker": _resp(
        200,
        _mistral([_chunk({"role": "assistant", "content": "ok"}), _chunk({}, "stop", _M_USAGE)], done=False),
        SSE,
    ),
    "crlf_framing": _resp(
        200,
        _mistral(
            [_chunk({"role": "assistant", "content": "ok"}), _chunk({}, "stop", _M_USAGE)], sep="\r\n\r\n"
        ),
        SSE,
    ),
    "empty_choices_then_text": _resp(
        200,
        _mistral(
            [
                {
                    "id": "cmpl-m1",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": "m",
                    "choices": [],
                },
                _chunk({"role": "assistant", "content": "ok"}),
                _chunk({}, "stop", _M_USAGE),
            ]
        ),
        SSE,
    ),
    "invalid_event": _resp(200, 'data: {"object": "error", "message": "upstream failed"}\n\n', SSE),
    "http_400_json": _resp(
        400,
        json.dumps(
            {
                "object": "error",
                "message": "Invalid model: magistral-medium-latest-x",
                "type": "invalid_model",
                "param": None,
                "code": "1500",
            }
        ),
    ),
    "http_400_context_length": _resp(
        400,
        json.dumps(
            {
                "object": "error",
                "message": "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
                "type": "invalid_request_message_error",
                "param": None,
                "code": "3051",
            }
        ),
    ),
    "http_422_validation": _resp(
        422,
        json.dumps(
            {
                "object": "error",
                "message": {
                    "detail": [
                        {
                            "type": "extra_forbidden",
                            "loc": ["body", "prompt_mode"],
                            "msg": "Extra inputs are not permitted",
                            "input": "reasoning",
                        }
                    ]
                },
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        ),
    ),
    "http_401_unauthorized": _resp(401, json.dumps({"message": "Unauthorized", "request_id": "a1b2c3"})),
    "http_429_rate_limit": _resp(
        429,
        json.dumps({"message": "Requests rate limit exceeded"}),
        {"content-type": "application/json", "retry-after": "1"},
    ),
    "http_500_empty": _resp(500, "", {}),
    "http_502_html": _resp(502, _HTML_502, {"content-type": "text/html"}),
    "http_500_long_body": _resp(500, "x" * 4100 + " end", {"content-type": "text/plain"}),
    "http_503_whitespace": _resp(503, "   \n  ", {"content-type": "text/plain"}),
}

RESPONSES_ANSWERS["usage_empty_object"] = _resp(200, _sse(_text_stream(_completed({}))), SSE)
RESPONSES_ANSWERS["event_failed_empty_error"] = _resp(
    200, _sse([_CREATED, {"type": "response.failed", "response": {"status": "failed", "error": {}}}]), SSE
)
RESPONSES_ANSWERS["created_without_id"] = _resp(
    200,
    _sse(
        [
            {"type": "response.created", "response": {"status": "in_progress"}},
            *_text_stream(_completed(_USAGE))[1:],
        ]
    ),
    SSE,
)
MISTRAL_ANSWERS["usage_empty_object_no_ids"] = _resp(
    200,
    _mistral(
        [
            {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}],
            },
            {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {},
            },
        ]
    ),
    SSE,
)

# ------------------------------------------------------------------ constrained-sampling tools

GRAMMAR_TOOL = {
    "name": "apply_patch",
    "description": "Apply a patch in the V4A format.",
    "parameters": {"type": "object", "required": ["patch"], "properties": {"patch": {"type": "string"}}},
    "constrainedSampling": {
        "type": "grammar",
        "variants": {"openai_lark": 'start: "*** Begin Patch" /(.|\\n)*/'},
    },
}
STRICT_TOOL = {
    "name": "set_mode",
    "description": "Switch the editor mode.",
    "parameters": {
        "type": "object",
        "required": ["mode"],
        "properties": {"mode": {"type": "string", "enum": ["insert", "normal"]}, "count": {"type": "number"}},
    },
    "constrainedSampling": {"type": "json_schema"},
}


def context_for(model: dict[str, Any], conversation: str) -> dict[str, Any]:
    """``tests/wire_cases.py``'s conversations, and ``constrained``: the coding tools plus a grammar
    tool and a strict JSON-schema tool, with an earlier answer of the same model calling both."""
    if conversation == "deferred":
        return _deferred_context(model)
    if conversation != "constrained":
        return wire_cases.context_for(model, conversation)
    ctx = wire_cases.context_for(model, "tools")
    ctx["tools"] = [*ctx["tools"], GRAMMAR_TOOL, STRICT_TOOL]
    api = model["api"]
    ids = ("call_g1|ctc_g1", "call_s1|fc_s1") if api == "openai-responses" else ("G1abcdefg", "S1abcdefg")
    ctx["messages"] = [
        *ctx["messages"],
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": ids[0],
                    "name": "apply_patch",
                    "arguments": {"patch": "*** Begin Patch\n*** End Patch"},
                },
                {"type": "toolCall", "id": ids[1], "name": "set_mode", "arguments": {"mode": "insert"}},
            ],
            "api": api,
            "provider": model["provider"],
            "model": model["id"],
            "usage": wire_cases._usage(),
            "stopReason": "toolUse",
            "timestamp": 1767225600000,
        },
        {
            "role": "toolResult",
            "toolCallId": ids[0],
            "toolName": "apply_patch",
            "content": [{"type": "text", "text": "Done!"}],
            "isError": False,
            "timestamp": 1767225630000,
        },
        {
            "role": "toolResult",
            "toolCallId": ids[1],
            "toolName": "set_mode",
            "content": [{"type": "text", "text": "mode: insert"}],
            "isError": False,
            "timestamp": 1767225630000,
        },
        {"role": "user", "content": "Now patch README.md.", "timestamp": 1767225700000},
    ]
    return ctx


WEB_FETCH_TOOL = {
    "name": "web_fetch",
    "description": "Fetch a URL and return its text.",
    "parameters": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
}


def _deferred_context(model: dict[str, Any]) -> dict[str, Any]:
    """``deferred``: a tool result adds ``web_fetch`` (``addedToolNames``) before any call of it, so
    a model that takes deferred tools gets it with that result, not in the request's tools."""
    ctx = wire_cases.context_for(model, "tools")
    ctx["tools"] = [*ctx["tools"], WEB_FETCH_TOOL]
    api = model["api"]
    call_id = "call_d1|fc_d1" if api == "openai-responses" else "D1abcdefg"
    ctx["messages"] = [
        *ctx["messages"],
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": call_id,
                    "name": "bash",
                    "arguments": {"command": "pi tools add web_fetch"},
                }
            ],
            "api": api,
            "provider": model["provider"],
            "model": model["id"],
            "usage": wire_cases._usage(),
            "stopReason": "toolUse",
            "timestamp": 1767225600000,
        },
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": "added web_fetch"}],
            "addedToolNames": ["web_fetch"],
            "isError": False,
            "timestamp": 1767225630000,
        },
        {"role": "user", "content": "Fetch https://example.com.", "timestamp": 1767225700000},
    ]
    return ctx


_CUSTOM_CALL = {
    "type": "custom_tool_call",
    "id": "ctc_x1",
    "call_id": "call_x2",
    "name": "apply_patch",
    "input": "",
}
RESPONSES_ANSWERS["grammar_tool_call"] = _resp(
    200,
    _sse(
        [
            _CREATED,
            {"type": "response.output_item.added", "output_index": 0, "item": _CUSTOM_CALL},
            {
                "type": "response.custom_tool_call_input.delta",
                "item_id": "ctc_x1",
                "output_index": 0,
                "delta": "*** Begin",
            },
            {
                "type": "response.custom_tool_call_input.delta",
                "item_id": "ctc_x1",
                "output_index": 0,
                "delta": ' Patch\n"quoted"',
            },
            {
                "type": "response.custom_tool_call_input.done",
                "item_id": "ctc_x1",
                "output_index": 0,
                "input": '*** Begin Patch\n"quoted"',
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**_CUSTOM_CALL, "input": '*** Begin Patch\n"quoted"'},
            },
            _completed(_USAGE),
        ]
    ),
    SSE,
)
RESPONSES_ANSWERS["grammar_tool_call_done_only"] = _resp(
    200,
    _sse(
        [
            _CREATED,
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**_CUSTOM_CALL, "input": "*** Begin Patch"},
            },
            _completed(_USAGE),
        ]
    ),
    SSE,
)

# answers run on the constrained-tools conversation too (their requests are recorded in full)
CONSTRAINED = {
    "openai-responses": [
        ("openai", "gpt-5.5", "constrained", "high"),
        ("openai", "gpt-4.1", "constrained", "off"),
    ],
    "mistral-conversations": [("mistral", "magistral-medium-latest", "constrained", "off")],
}
DEFERRED = {
    "openai-responses": [
        ("openai", "gpt-5.5", "deferred", "medium"),
        ("openai", "gpt-4.1", "deferred", "off"),
    ],
    "mistral-conversations": [("mistral", "devstral-medium-latest", "deferred", "off")],
}
DEFERRED_ANSWERS = {"phase_final_answer", "thinking_then_text_strings"}
CONSTRAINED_ANSWERS = {"grammar_tool_call", "grammar_tool_call_done_only", "reasoning_tool_call", "tool_call"}

# answers served in turn with Pi's provider retries on (settings retry.provider.maxRetries;
# pi_nb's max_retries): (name, api, model, max retries, answers)
_OK_TEXT = _resp(200, _sse(_text_stream(_completed(_USAGE))), SSE)
_RATE = _resp(
    429,
    json.dumps({"error": {"message": "Slow down", "type": "rate_limit", "code": None}}),
    {"content-type": "application/json", "retry-after-ms": "5"},
)
RETRY_CASES: list[tuple[str, str, tuple[str, str], int, list[dict[str, Any]]]] = [
    ("retry_429_then_ok", "openai-responses", ("openai", "gpt-5.5"), 2, [_RATE, _OK_TEXT]),
    (
        "retry_500_twice_then_ok",
        "openai-responses",
        ("openai", "gpt-5.5"),
        2,
        [
            _resp(500, "", {"retry-after-ms": "1"}),
            _resp(503, "busy", {"content-type": "text/plain", "retry-after-ms": "1"}),
            _OK_TEXT,
        ],
    ),
    ("retry_exhausted", "openai-responses", ("openai", "gpt-5.5"), 1, [_RATE]),
    (
        "retry_not_for_400",
        "openai-responses",
        ("openai", "gpt-5.5"),
        2,
        [RESPONSES_ANSWERS["http_400_invalid_request"], _OK_TEXT],
    ),
    (
        "retry_should_retry_false",
        "openai-responses",
        ("openai", "gpt-5.5"),
        2,
        [_resp(503, "no", {"content-type": "text/plain", "x-should-retry": "false"}), _OK_TEXT],
    ),
    (
        "retry_should_retry_true_on_400",
        "openai-responses",
        ("openai", "gpt-5.5"),
        1,
        [
            _resp(
                400, "again", {"content-type": "text/plain", "x-should-retry": "true", "retry-after-ms": "1"}
            ),
            _OK_TEXT,
        ],
    ),
    (
        "retry_delay_too_long",
        "openai-responses",
        ("openai", "gpt-5.5"),
        2,
        [
            _resp(
                429,
                json.dumps({"error": {"message": "Try again in 2 minutes"}}),
                {"content-type": "application/json", "retry-after": "120"},
            ),
            _OK_TEXT,
        ],
    ),
    (
        "retry_delay_too_long_ms",
        "openai-responses",
        ("openai", "gpt-5.5"),
        2,
        [_resp(429, "", {"retry-after-ms": "61000"}), _OK_TEXT],
    ),
    (
        "mistral_no_provider_retry",
        "mistral-conversations",
        ("mistral", "devstral-medium-latest"),
        2,
        [MISTRAL_ANSWERS["http_429_rate_limit"], MISTRAL_ANSWERS["tool_call"]],
    ),
]

# (answer name, model, conversation, level) per API
MODELS = {
    "openai-responses": [("openai", "gpt-5.5", "tools", "medium"), ("xai", "grok-4.3", "history", "off")],
    "mistral-conversations": [
        ("mistral", "magistral-medium-latest", "history", "high"),
        ("mistral", "devstral-medium-latest", "broken", "off"),
    ],
}


def cases() -> list[dict[str, Any]]:
    """Every case: ``{name, api, provider, model, conversation, level, responses, max_retries}``.

    Each answer runs on the API's first model; the error answers and a few others also on its
    second (another provider or conversation).
    """
    from pi_nb.providers.catalog import find_model

    out = []
    for api, answers in (("openai-responses", RESPONSES_ANSWERS), ("mistral-conversations", MISTRAL_ANSWERS)):
        for i, (answer, response) in enumerate(answers.items()):
            targets = MODELS[api] if (answer.startswith("http_") or i % 3 == 0) else MODELS[api][:1]
            if answer in CONSTRAINED_ANSWERS:
                targets = [*targets, *CONSTRAINED[api]]
            if answer in DEFERRED_ANSWERS:
                targets = [*targets, *DEFERRED[api]]
            for provider, model_id, conversation, level in targets:
                spec = find_model(provider, model_id)
                assert spec is not None and spec.api == api, (provider, model_id)
                out.append(
                    {
                        "name": f"{api}|{answer}|{provider}/{model_id}|{conversation}|{level}",
                        "api": api,
                        "provider": provider,
                        "model": model_id,
                        "conversation": conversation,
                        "level": level,
                        "responses": [response],
                        "max_retries": 0,
                    }
                )
    for answer, api, (provider, model_id), retries, served in RETRY_CASES:
        out.append(
            {
                "name": f"{api}|{answer}|{provider}/{model_id}|tools|off",
                "api": api,
                "provider": provider,
                "model": model_id,
                "conversation": "tools",
                "level": "off",
                "responses": served,
                "max_retries": retries,
            }
        )
    return out


def _pi_user_agent(case: dict[str, Any]) -> str | None:
    got = case["requests"][0]["headers"].get("user-agent", "")
    return got if got.startswith("pi (") else None


def main() -> None:
    from make_wire import pi_env, run_node

    from pi_nb.providers.catalog import find_model

    jobs = []
    table = cases()
    for case in table:
        spec = find_model(case["provider"], case["model"])
        assert spec is not None
        jobs.append(
            {
                "name": case["name"],
                "provider": case["provider"],
                "model": case["model"],
                "context": context_for(dict(spec.raw), case["conversation"]),
                "level": case["level"],
                "sessionId": wire_cases.SESSION_ID,
                "responses": case["responses"],
                "settings": {"retry": {"provider": {"maxRetries": case["max_retries"]}}},
            }
        )
    with tempfile.TemporaryDirectory() as agent_dir:
        result = run_node(jobs, agent_dir, pi_env())
    golden = {}
    for case in table:
        got = result["cases"][case["name"]]
        golden[case["name"]] = {
            "requests": len(got["requests"]),
            "message": got["message"],
            "events": got["events"],
        }
        if case["conversation"] in ("constrained", "deferred"):
            golden[case["name"]]["request"] = wire_cases.comparable(got["requests"][0], _pi_user_agent(got))
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases to {GOLDEN}")


if __name__ == "__main__":
    main()
