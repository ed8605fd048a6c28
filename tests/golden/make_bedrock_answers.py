"""Golden file for Bedrock's answers: recorded ConverseStream answers (and error answers) replayed
to pi-ai 0.85.0's ``bedrock-converse-stream`` as Pi's agent calls it, with the message and events
it makes of each (``tests/golden/bedrock_answers.json``, read by ``tests/test_bedrock_provider.py``).

Two steps, run by hand:

    .venv/bin/python tests/golden/make_bedrock_answers.py --extract /path/to/pydantic-ai --vercel /path/to/vercel-ai
        # the recordings -> tests/fixtures/bedrock/answers.json (git checkouts of pydantic-ai and
        # vercel/ai; the commits read are pinned below)
    .venv/bin/python tests/golden/make_bedrock_answers.py
        # each answer through pi-ai (tests/golden/_pi_wire.mjs: the AWS SDK's HTTP handler replaced
        # by one that records the request and answers with the fixture) -> the golden

Where each answer comes from is in ``tests/fixtures/bedrock/README.md``.
"""

from __future__ import annotations

import argparse
import base64
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

import aws_eventstream  # noqa: E402
import wire_cases  # noqa: E402
from make_wire import NODE, pi_env, run_node  # noqa: E402

FIXTURE = TESTS / "fixtures" / "bedrock" / "answers.json"
GOLDEN = TESTS / "golden" / "bedrock_answers.json"
PYDANTIC_AI = "https://github.com/pydantic/pydantic-ai"
# the commits of pydantic-ai whose cassettes are read
STREAM_COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
ERROR_COMMIT = "e9b037eb85b4bb596154fb6642003875bbe55ce5^"
CASSETTES = "tests/models/cassettes/test_bedrock"
STREAMS = {
    # name: (cassette, interaction, model of the catalog that answers like the recorded one, level)
    "nova_text": ("test_bedrock_model_stream", 0, "amazon.nova-micro-v1:0", "off"),
    "nova_tool_call": ("test_bedrock_model_iter_stream", 0, "amazon.nova-micro-v1:0", "off"),
    "nova_after_tool": ("test_bedrock_model_iter_stream", 1, "amazon.nova-micro-v1:0", "off"),
    "nova_server_tool": (
        "test_bedrock_model_code_execution_tool_stream",
        0,
        "amazon.nova-2-lite-v1:0",
        "off",
    ),
    "claude_thinking": (
        "test_bedrock_model_thinking_part_stream",
        0,
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "medium",
    ),
    "claude_redacted_thinking": (
        "test_bedrock_model_thinking_part_redacted_stream",
        0,
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "medium",
    ),
    "gpt_oss_empty_text_delta": (
        "test_bedrock_model_stream_empty_text_delta",
        0,
        "openai.gpt-oss-120b-1:0",
        "medium",
    ),
    "streaming_error_invalid_model": ("test_bedrock_streaming_error", 0, "amazon.nova-micro-v1:0", "off"),
}
ERRORS = {  # Converse (not streamed) error answers: the same HTTP error an answer of ConverseStream gets
    "throttling_rate_exceeded": ("test_bedrock_throttling_error", "amazon.nova-micro-v1:0"),
    "internal_server_error": ("test_bedrock_server_error", "amazon.nova-micro-v1:0"),
}
VERCEL_AI = "https://github.com/vercel/ai"
VERCEL_FIXTURES = "packages/amazon-bedrock/src/__fixtures__"
VERCEL = {
    # name: (commit, fixture, kind, catalog model, level); kind: "json" (a captured response with
    # bodyBase64), "base64" (an event stream in base64), "chunks" (the SDK's decoded events, one
    # per line, framed here again as an event stream)
    "vercel_live_sonnet_4_6": (
        "21efb5e41dcf35042ad53062708d1a64d7519f78",
        "issue-18994-live-converse-stream.json",
        "json",
        "eu.anthropic.claude-sonnet-4-6",
        "off",
    ),
    "vercel_model_stream_error": (
        "5f264fa2efefb27a58459413d943af08b21cf01a",
        "model-stream-error-exception.eventstream.base64.txt",
        "base64",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "off",
    ),
    "vercel_kimi_k2_tool_call": (
        "a0afe228186f74bebf7a278983cb7bc688807dfd",
        "issue-11409-kimi-k2-thinking-read-file.chunks.txt",
        "chunks",
        "moonshot.kimi-k2-thinking",
        "medium",
    ),
    "vercel_claude_reasoning": (
        "8018ae469423629c0981ff581a2f48e74163cfc3",
        "bedrock-reasoning.chunks.txt",
        "chunks",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "high",
    ),
    "vercel_redacted_then_tool": (
        "f69c879d50ad8bdc040894716f56d7a9f7ec2f22",
        "amazon-bedrock-redacted-content.chunks.txt",
        "chunks",
        "openai.gpt-5.4",
        "medium",
    ),
    "vercel_tool_no_args": (
        "HEAD",
        "amazon-bedrock-tool-no-args.chunks.txt",
        "chunks",
        "amazon.nova-pro-v1:0",
        "off",
    ),
    "vercel_request_metadata": (
        "17b0edb987f30a334a84686c11b1bd44bcd02b93",
        "issue-13927-request-metadata.chunks.txt",
        "chunks",
        "amazon.nova-micro-v1:0",
        "off",
    ),
}
_ERROR_TYPE = "{}:http://internal.amazon.com/coral/com.amazon.bedrock/"


def _git_show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def _response(interaction: dict[str, Any]) -> dict[str, Any]:
    r = interaction["response"]
    headers = {k: (v[0] if isinstance(v, list) else v) for k, v in (r.get("headers") or {}).items()}
    headers = {k: v for k, v in headers.items() if k.lower() not in ("connection", "transfer-encoding")}
    if "parsed_body" in r:
        body = json.dumps(r["parsed_body"], separators=(",", ":")).encode()
        headers.pop("content-length", None)
    else:
        raw = r["body"]["string"]
        body = raw if isinstance(raw, bytes) else raw.encode("utf-8")
    return {"status": r["status"]["code"], "headers": headers, "bodyB64": base64.b64encode(body).decode()}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _stream(events: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        "status": 200,
        "headers": {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-stream-1"},
        "bodyB64": _b64(aws_eventstream.stream(events)),
    }


def _http_error(status: int, code: str | None, message: str, request_id: str = "req-err-1") -> dict[str, Any]:
    headers = {"content-type": "application/json", "x-amzn-requestid": request_id}
    if code is not None:
        headers["x-amzn-errortype"] = _ERROR_TYPE.format(code)
    return {"status": status, "headers": headers, "bodyB64": _b64(json.dumps({"message": message}).encode())}


def constructed(recorded: dict[str, Any]) -> dict[str, Any]:
    """Answers built after AWS's documented shapes (ConverseStream API reference, the event-stream
    encoding), for what no public recording shows: modeled errors with their ``x-amzn-errortype``,
    exceptions inside the stream, a cut stream, cache usage, other stop reasons."""
    text = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Partial answer"}}),
    ]
    nova = base64.b64decode(recorded["nova_text"]["responses"][0]["bodyB64"])
    cut_at = len(nova) // 2
    out: dict[str, Any] = {
        "validation_input_too_long": (
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "off",
            [_http_error(400, "ValidationException", "Input is too long for requested model.")],
        ),
        "validation_data_retention": (
            "openai.gpt-oss-120b-1:0",
            "off",
            [
                _http_error(
                    400,
                    "ValidationException",
                    "The data retention mode 'default' is not available for this model.",
                )
            ],
        ),
        "access_denied": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _http_error(
                    403,
                    "AccessDeniedException",
                    "You don't have access to the model with the specified model ID.",
                )
            ],
        ),
        "throttling_exception_header": (
            "amazon.nova-micro-v1:0",
            "off",
            [_http_error(429, "ThrottlingException", "Too many requests, please wait before trying again.")]
            * 3,
        ),
        "throttled_then_answered": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _http_error(
                    429, "ThrottlingException", "Too many requests, please wait before trying again."
                ),
                recorded["nova_text"]["responses"][0],
            ],
        ),
        "service_unavailable": (
            "amazon.nova-micro-v1:0",
            "off",
            [_http_error(503, "ServiceUnavailableException", "Bedrock is unable to process your request.")]
            * 3,
        ),
        "resource_not_found": (
            "amazon.nova-micro-v1:0",
            "off",
            [_http_error(404, "ResourceNotFoundException", "Model not found.")],
        ),
        "gateway_403_html": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 403,
                    "headers": {"content-type": "text/html", "x-amzn-requestid": "req-gw"},
                    "bodyB64": _b64(b"<html><body><h1>403 Forbidden</h1></body></html>"),
                }
            ],
        ),
        "empty_500": (
            "amazon.nova-micro-v1:0",
            "off",
            [{"status": 500, "headers": {}, "bodyB64": ""}] * 3,
        ),
        "model_stream_error_midway": (
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "off",
            [
                _stream(
                    [
                        *text,
                        (
                            "modelStreamErrorException",
                            {"message": "The model produced an invalid sequence while streaming."},
                        ),
                    ]
                )
            ],
        ),
        "model_stream_error_all_members": (
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-m",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.stream(text)
                        + aws_eventstream.message(
                            {
                                ":exception-type": "modelStreamErrorException",
                                ":content-type": "application/json",
                                ":message-type": "exception",
                            },
                            json.dumps(
                                {
                                    "originalMessage": "upstream overloaded",
                                    "message": "Model stream error.",
                                    "extra": 1,
                                    "originalStatusCode": 529,
                                }
                            ).encode(),
                        )
                    ),
                }
            ],
        ),
        "unknown_exception_in_stream": (
            "amazon.nova-micro-v1:0",
            "off",
            [_stream([*text, ("modelTimeoutException", {"message": "Model timed out."})])],
        ),
        "gateway_502_html": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 502,
                    "headers": {"content-type": "text/html"},
                    "bodyB64": _b64(b"<html>502 Bad Gateway</html>"),
                }
            ]
            * 3,
        ),
        "short_text_body_400": (
            "amazon.nova-micro-v1:0",
            "off",
            [{"status": 400, "headers": {"content-type": "text/plain"}, "bodyB64": _b64(b"oops")}],
        ),
        "blank_body_400": (
            "amazon.nova-micro-v1:0",
            "off",
            [{"status": 400, "headers": {"content-type": "text/plain"}, "bodyB64": _b64(b"  \n")}],
        ),
        "json_403_capital_message": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 403,
                    "headers": {"content-type": "application/json"},
                    "bodyB64": _b64(
                        b'{"Message":"User: arn:aws:iam::123456789012:user/pi is not authorized to perform:'
                        b' bedrock:InvokeModelWithResponseStream"}'
                    ),
                }
            ],
        ),
        "error_type_empty_body": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 400,
                    "headers": {"x-amzn-errortype": _ERROR_TYPE.format("ValidationException")},
                    "bodyB64": "",
                }
            ],
        ),
        "namespaced_type_in_body": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 400,
                    "headers": {"content-type": "application/json"},
                    "bodyB64": _b64(
                        b'{"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation error"}'
                    ),
                }
            ],
        ),
        # the first message of the stream is read while the SDK deserializes the answer
        "first_throttling_exception": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _stream(
                    [
                        (
                            "throttlingException",
                            {"message": "Too many tokens, please wait before trying again."},
                        )
                    ]
                )
            ],
        ),
        "first_exception_without_message": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-f",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.message(
                            {
                                ":message-type": "exception",
                                ":exception-type": "validationException",
                                ":content-type": "application/json",
                            },
                            b"{}",
                        )
                    ),
                }
            ],
        ),
        "first_unknown_exception": (
            "amazon.nova-micro-v1:0",
            "off",
            [_stream([("modelTimeoutException", {"message": "Model timed out."})])],
        ),
        "first_unmodeled_error": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-e",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.message(
                            {
                                ":message-type": "error",
                                ":error-code": "InternalFailure",
                                ":error-message": "The request processing has failed.",
                            },
                            b"",
                        )
                    ),
                }
            ],
        ),
        "empty_stream": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {"content-type": "application/vnd.amazon.eventstream"},
                    "bodyB64": "",
                }
            ],
        ),
        "cut_first_message": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-c",
                    },
                    "bodyB64": _b64(nova[:20]),
                }
            ],
        ),
        "bad_json_event": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-j",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.stream(text)
                        + aws_eventstream.message(
                            {
                                ":event-type": "contentBlockDelta",
                                ":content-type": "application/json",
                                ":message-type": "event",
                            },
                            b'{"contentBlockIndex":0,"delta":{"text":"x"',
                        )
                    ),
                }
            ],
        ),
        "first_event_bad_json": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-fj",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.message(
                            {
                                ":event-type": "messageStart",
                                ":content-type": "application/json",
                                ":message-type": "event",
                            },
                            b'{"role":',
                        )
                    ),
                }
            ],
        ),
        "bad_message_crc": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-k",
                    },
                    "bodyB64": _b64(aws_eventstream.stream(text)[:-1] + b"\x00"),
                }
            ],
        ),
        "bad_prelude_crc": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-l",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.stream(text[:1])
                        + (lambda m: m[:8] + bytes([m[8] ^ 1]) + m[9:])(aws_eventstream.stream(text[1:]))
                    ),
                }
            ],
        ),
        "throttling_exception_in_stream": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _stream(
                    [
                        *text,
                        (
                            "throttlingException",
                            {"message": "Too many tokens, please wait before trying again."},
                        ),
                    ]
                )
            ],
        ),
        "internal_server_exception_in_stream": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _stream(
                    [*text, ("internalServerException", {"message": "An internal server error occurred."})]
                )
            ],
        ),
        "validation_exception_in_stream": (
            "amazon.nova-micro-v1:0",
            "off",
            [_stream([*text, ("validationException", {"message": "Malformed input request."})])],
        ),
        "service_unavailable_in_stream": (
            "amazon.nova-micro-v1:0",
            "off",
            [_stream([*text, ("serviceUnavailableException", {"message": "Service is unavailable."})])],
        ),
        "unmodeled_error_message": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-u",
                    },
                    "bodyB64": _b64(
                        aws_eventstream.stream(text)
                        + aws_eventstream.message(
                            {
                                ":message-type": "error",
                                ":error-code": "InternalFailure",
                                ":error-message": "The request processing has failed.",
                            },
                            b"",
                        )
                    ),
                }
            ],
        ),
        "cut_mid_message": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                {
                    "status": 200,
                    "headers": {
                        "content-type": "application/vnd.amazon.eventstream",
                        "x-amzn-requestid": "req-cut",
                    },
                    "bodyB64": _b64(nova[:cut_at]),
                }
            ],
        ),
        "cut_between_messages": (
            "amazon.nova-micro-v1:0",
            "off",
            [_stream(text)],
        ),
        "user_message_start": (
            "amazon.nova-micro-v1:0",
            "off",
            [_stream([("messageStart", {"role": "user"}), *text[1:]])],
        ),
        "guardrail_intervened": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _stream(
                    [
                        *text,
                        ("contentBlockStop", {"contentBlockIndex": 0}),
                        ("messageStop", {"stopReason": "guardrail_intervened"}),
                        ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}}),
                    ]
                )
            ],
        ),
        "max_tokens_with_cache_usage": (
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "high",
            [
                _stream(
                    [
                        ("messageStart", {"role": "assistant"}),
                        (
                            "contentBlockDelta",
                            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Plan."}}},
                        ),
                        (
                            "contentBlockDelta",
                            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBsig"}}},
                        ),
                        ("contentBlockStop", {"contentBlockIndex": 0}),
                        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Long answer"}}),
                        ("contentBlockStop", {"contentBlockIndex": 1}),
                        ("messageStop", {"stopReason": "max_tokens"}),
                        (
                            "metadata",
                            {
                                "usage": {
                                    "inputTokens": 12,
                                    "outputTokens": 300,
                                    "totalTokens": 3512,
                                    "cacheReadInputTokens": 1200,
                                    "cacheWriteInputTokens": 2000,
                                },
                                "metrics": {"latencyMs": 900},
                            },
                        ),
                    ]
                )
            ],
        ),
        "context_window_exceeded_unclosed_tool": (
            "amazon.nova-micro-v1:0",
            "off",
            [
                _stream(
                    [
                        ("messageStart", {"role": "assistant"}),
                        (
                            "contentBlockStart",
                            {
                                "contentBlockIndex": 0,
                                "start": {"toolUse": {"toolUseId": "tooluse_x1", "name": "bash"}},
                            },
                        ),
                        (
                            "contentBlockDelta",
                            {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"command": "ls'}}},
                        ),
                        ("messageStop", {"stopReason": "model_context_window_exceeded"}),
                        ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 2}}),
                    ]
                )
            ],
        ),
        "redacted_gpt_reasoning": (
            "openai.gpt-5.4",
            "medium",
            [
                _stream(
                    [
                        ("messageStart", {"role": "assistant"}),
                        (
                            "contentBlockDelta",
                            {
                                "contentBlockIndex": 0,
                                "delta": {"reasoningContent": {"redactedContent": _b64(b"\x01\x02")}},
                            },
                        ),
                        (
                            "contentBlockDelta",
                            {
                                "contentBlockIndex": 0,
                                "delta": {"reasoningContent": {"redactedContent": _b64(b"\x03")}},
                            },
                        ),
                        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Done."}}),
                        ("contentBlockStop", {"contentBlockIndex": 1}),
                        ("messageStop", {"stopReason": "end_turn"}),
                        ("metadata", {"usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}}),
                    ]
                )
            ],
        ),
    }
    return {
        name: {"source": "constructed", "model": model, "level": level, "responses": responses}
        for name, (model, level, responses) in out.items()
    }


def extract(repo: Path, vercel: Path | None) -> None:
    import yaml

    answers: dict[str, Any] = {}
    for name, (cassette, index, model, level) in STREAMS.items():
        path = f"{CASSETTES}/{cassette}.yaml"
        data = yaml.safe_load(_git_show(repo, STREAM_COMMIT, path))
        answers[name] = {
            "source": f"{PYDANTIC_AI}/blob/{STREAM_COMMIT}/{path} (interaction {index})",
            "model": model,
            "level": level,
            "responses": [_response(data["interactions"][index])],
        }
    for name, (cassette, model) in ERRORS.items():
        path = f"{CASSETTES}/{cassette}.yaml"
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", ERROR_COMMIT], capture_output=True, text=True, check=True
        ).stdout.strip()
        data = yaml.safe_load(_git_show(repo, commit, path))
        answers[name] = {
            "source": f"{PYDANTIC_AI}/blob/{commit}/{path} (all interactions: the SDK's retries)",
            "model": model,
            "level": "off",
            "responses": [_response(i) for i in data["interactions"]],
        }
    if vercel is not None:
        for name, (commit, fixture, kind, model, level) in VERCEL.items():
            sha = subprocess.run(
                ["git", "-C", str(vercel), "rev-parse", commit], capture_output=True, text=True, check=True
            ).stdout.strip()
            text = _git_show(vercel, sha, f"{VERCEL_FIXTURES}/{fixture}")
            if kind == "json":
                body = base64.b64decode(json.loads(text)["response"]["bodyBase64"])
            elif kind == "base64":
                body = base64.b64decode(text.strip())
            else:
                events = [next(iter(json.loads(line).items())) for line in text.splitlines() if line.strip()]
                body = aws_eventstream.stream(events)
            answers[name] = {
                "source": f"{VERCEL_AI}/blob/{sha}/{VERCEL_FIXTURES}/{fixture}"
                + (" (the decoded events, framed again)" if kind == "chunks" else ""),
                "model": model,
                "level": level,
                "responses": [
                    {
                        "status": 200,
                        "headers": {"content-type": "application/vnd.amazon.eventstream"},
                        "bodyB64": _b64(body),
                    }
                ],
            }
    answers.update(constructed(answers))
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(answers, indent=1) + "\n")
    print(f"wrote {len(answers)} answers to {FIXTURE}")


FIXED_NOW = 1767225600000  # 2026-01-01T00:00:00Z: the SigV4 date of the signed cases
FIXED_UUID = "3f2b8c1e-9d4a-4e6b-8f1c-2a7d5e9b0c34"
CONFIG_FILES = {  # the AWS config and credentials files of the profile cases
    "config": "[profile pi]\nregion = ap-southeast-2\n\n[profile bare]\n",
    "credentials": "[pi]\naws_access_key_id = AKIDPROFILE0000000001\naws_secret_access_key = profileSecretKey0000000000000000000000\n"
    "\n[bare]\naws_access_key_id = AKIDBARE000000000001\naws_secret_access_key = bareSecret\n",
}
KEYS = {
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE000000001",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}
#: signed requests (no bearer token): name -> (model, environment)
SIGNED: dict[str, tuple[str, dict[str, str]]] = {
    "static_keys": ("amazon.nova-micro-v1:0", KEYS),
    "session_token": (
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        {**KEYS, "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjEXAMPLETOKEN//////////wEaCXVzLWVhc3QtMSJHMEUCIQ=="},
    ),
    "aws_region": ("amazon.nova-micro-v1:0", {**KEYS, "AWS_REGION": "eu-west-1"}),
    "aws_default_region": ("openai.gpt-oss-120b-1:0", {**KEYS, "AWS_DEFAULT_REGION": "us-west-2"}),
    "eu_catalog_endpoint": ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", KEYS),
    "skip_auth": (
        "amazon.nova-micro-v1:0",
        {"AWS_BEDROCK_SKIP_AUTH": "1", "AWS_BEARER_TOKEN_BEDROCK": "ignored-token"},
    ),
    "skip_auth_unsigned_proxy": ("amazon.nova-micro-v1:0", {"AWS_BEDROCK_SKIP_AUTH": "1"}),
    "missing_profile": ("amazon.nova-micro-v1:0", {"AWS_PROFILE": "missing", "AWS_REGION": "us-east-1"}),
    "profile": ("amazon.nova-micro-v1:0", {"AWS_PROFILE": "pi"}),
    "profile_and_region": ("amazon.nova-micro-v1:0", {"AWS_PROFILE": "pi", "AWS_REGION": "ca-central-1"}),
    "profile_with_env_keys": ("amazon.nova-micro-v1:0", {"AWS_PROFILE": "pi", **KEYS}),
    "bare_profile_default_region": ("amazon.nova-micro-v1:0", {"AWS_PROFILE": "bare"}),
    # request variants pi-ai takes from the environment (a bearer token: the body is what differs)
    "cache_retention_long": (
        "global.anthropic.claude-opus-4-5-20251101-v1:0",
        {"AWS_BEARER_TOKEN_BEDROCK": "tok", "PI_CACHE_RETENTION": "long"},
    ),
    "force_cache_points": (
        "qwen.qwen3-32b-v1:0",
        {"AWS_BEARER_TOKEN_BEDROCK": "tok", "AWS_BEDROCK_FORCE_CACHE": "1"},
    ),
    "gov_cloud_thinking": (
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        {"AWS_BEARER_TOKEN_BEDROCK": "tok", "AWS_REGION": "us-gov-west-1"},
    ),
    "gov_cloud_adaptive": (
        "us.anthropic.claude-opus-4-7",
        {"AWS_BEARER_TOKEN_BEDROCK": "tok", "AWS_REGION": "us-gov-east-1"},
    ),
    "china_region": ("amazon.nova-micro-v1:0", {**KEYS, "AWS_REGION": "cn-north-1"}),
}
#: the thinking level of the signed cases that are not "off"
SIGNED_LEVELS = {
    "gov_cloud_thinking": "high",
    "gov_cloud_adaptive": "xhigh",
    "cache_retention_long": "medium",
}


def signed_env(base: dict[str, str], extra: dict[str, str], files: Path) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith("AWS_")}
    env["AWS_CONFIG_FILE"] = str(files / "config")
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(files / "credentials")
    env.update(extra)
    return env


# base64 texts for Node's atob (images and redacted reasoning are decoded with it): padding,
# whitespace, stray characters, short groups
ATOB_CASES = [
    *("AQID", "AQI", "AQ", "AQ==", "AQ=", "AQI=", "AQI==", "A", "A=", "A==", "A===", "=", "==", "AQ===", ""),
    *(
        " ",
        "AQ= =",
        "AQ=A",
        "AQ==A",
        "ABCDE",
        "ABCDE=",
        "ABCDEF=",
        "AB\n=\n=",
        "A@",
        "@A=",
        "EmwKAhgBEgy-redacted",
    ),
    *("\tQ\t =\n", " +==\n", "iVBORw0KGgo=", "iVBORw0KGgo", "a-b_c", "AAAA\fAAAA", "AAAA\vAAAA"),
]


def node_atob(cases: list[str]) -> list[dict[str, str]]:
    script = (
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(cases.map((c) => { try { return { ok: Buffer.from(atob(c), 'latin1')"
        ".toString('hex') }; } catch (e) { return { err: e.message }; } })));"
    )
    r = subprocess.run(
        [str(NODE), "-e", script], input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    return [{"input": c, **res} for c, res in zip(cases, json.loads(r.stdout), strict=True)]


def stable(message: Any) -> Any:
    """The message with its diagnostics' clock readings zeroed (the golden does not churn)."""
    if isinstance(message, dict):
        for diagnostic in message.get("diagnostics") or []:
            diagnostic["timestamp"] = 0
    return message


def context_for(model: dict[str, Any]) -> dict[str, Any]:
    """The conversation each answer replies to: Pi's system prompt, a prompt and Pi's tools."""
    return wire_cases.context_for(model, "tools")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extract", type=Path, default=None, help="a git checkout of pydantic-ai")
    ap.add_argument("--vercel", type=Path, default=None, help="a git checkout of vercel/ai (with --extract)")
    args = ap.parse_args()
    if args.extract is not None:
        extract(args.extract, args.vercel)
        return
    from pi_nb.providers.catalog import find_model

    answers = json.loads(FIXTURE.read_text())
    jobs = []
    for name, answer in answers.items():
        spec = find_model("amazon-bedrock", answer["model"])
        assert spec is not None, answer["model"]
        jobs.append(
            {
                "name": name,
                "provider": "amazon-bedrock",
                "model": answer["model"],
                "context": context_for(dict(spec.raw)),
                "level": answer["level"],
                "sessionId": wire_cases.SESSION_ID,
                "responses": answer["responses"],
            }
        )
    out: dict[str, Any] = {"answers": {}, "signed": {}}
    with tempfile.TemporaryDirectory() as agent_dir:
        result = run_node(jobs, agent_dir, pi_env())
        for job in jobs:
            case = result["cases"][job["name"]]
            out["answers"][job["name"]] = {
                "requests": [wire_cases.comparable(q) for q in case["requests"]],
                "message": stable(case["message"]),
                "events": case["events"],
            }
        files = Path(agent_dir) / "aws"
        files.mkdir()
        for name, text in CONFIG_FILES.items():
            (files / name).write_text(text)
        nova = answers["nova_text"]["responses"]
        for name, (model_id, extra) in SIGNED.items():
            spec = find_model("amazon-bedrock", model_id)
            assert spec is not None
            job = {
                "name": name,
                "provider": "amazon-bedrock",
                "model": model_id,
                "context": context_for(dict(spec.raw)),
                "level": SIGNED_LEVELS.get(name, "off"),
                "sessionId": wire_cases.SESSION_ID,
                "responses": nova,
                "fixedNow": FIXED_NOW,
                "fixedUuid": FIXED_UUID,
            }
            case = run_node([job], agent_dir, signed_env(pi_env(), extra, files))["cases"][name]
            out["signed"][name] = {
                "model": model_id,
                "env": extra,
                "level": job["level"],
                "requests": [{**q, "body": json.loads(q["body"])} for q in case["requests"]],
                "message": stable(case["message"]),
            }
    out["atob"] = node_atob(ATOB_CASES)
    GOLDEN.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(out['answers'])} answers and {len(out['signed'])} signed requests to {GOLDEN}")


if __name__ == "__main__":
    main()
