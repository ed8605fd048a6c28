"""Golden file for the answers of the ``azure-openai-responses`` and ``openai-codex-responses`` APIs:
what pi-ai 0.85.0 records of each canned answer, as Pi's agent calls it.

Run by hand when the cases change (needs ../shared/pi-oracle installed: Node and Pi 0.85.0 under
``~/.cache/pi-oracle``):

    PYTHONPATH=$PWD .venv/bin/python tests/golden/make_wire_answers_azure_codex.py

Both APIs read the Responses API's events, so every answer of
``make_wire_answers_responses.RESPONSES_ANSWERS`` is served to both (the recorded Responses streams
of ``tests/fixtures/streams``, see its ``SOURCES.md``, included), and the streams recorded from
Azure OpenAI in ``tests/fixtures/streams_azure`` (its ``SOURCES.md``): Azure reads them with the SDK
and pi-ai's shared Responses code, Codex with its own SSE reader and event mapping (its errors
read differently). ``CODEX_ANSWERS`` adds what only the Codex backend sends: ChatGPT usage-limit
errors (``usage_limit_reached`` with the plan and reset time, ``usage_not_included``), the
``response.done`` terminal event with ``end_turn``, statuses pi-ai does not know, nested ``error``
events, ``[DONE]``, CRLF framing. No recorded Codex stream was found in a public test suite: those
bodies are written in the shapes pi-ai's ``parseErrorResponse`` and ``mapCodexEvents`` read. The
retry cases run pi-ai's own Codex retry loop and Azure's ``retryProviderRequest``.

``tests/golden/wire_answers_azure_codex.json`` records, per case, the number of requests, the
final message and the event sequence (and the request of the grammar / deferred-tool
conversations); ``tests/test_wire_answers_azure_codex.py`` serves the same answers to pi_nb.
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

import make_wire_answers_responses as responses  # noqa: E402
import wire_cases  # noqa: E402

GOLDEN = TESTS / "golden" / "wire_answers_azure_codex.json"
SSE = responses.SSE
_resp = responses._resp
_sse = responses._sse

_CREATED = responses._CREATED
_USAGE = responses._USAGE


def _done_event(kind: str, status: Any, end_turn: Any = None) -> dict[str, Any]:
    response: dict[str, Any] = {"id": "resp_c1", "usage": _USAGE}
    if status is not None:
        response["status"] = status
    if end_turn is not None:
        response["end_turn"] = end_turn
    return {"type": kind, "response": response}


def _text(*tail: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _CREATED,
        responses._msg_added(),
        responses._text_delta("Hello"),
        responses._msg_done("Hello"),
        *tail,
    ]


# answers only the Codex backend gives (ChatGPT sign-in limits, its terminal events)
CODEX_ANSWERS: dict[str, dict[str, Any]] = {
    "codex_usage_limit_plan": _resp(
        429,
        json.dumps(
            {
                "error": {
                    "type": "usage_limit_reached",
                    "message": "The usage limit has been reached",
                    "plan_type": "Plus",
                    "resets_at": 1_700_000_000,  # in the past: "~0 min"
                }
            }
        ),
    ),
    "codex_usage_limit_no_message": _resp(
        429, json.dumps({"error": {"type": "usage_limit_reached", "plan_type": "pro"}})
    ),
    "codex_usage_not_included": _resp(
        403,
        json.dumps(
            {"error": {"code": "usage_not_included", "message": "Your plan does not include Codex access."}}
        ),
    ),
    "codex_429_error_string": _resp(429, json.dumps({"error": "rate limited"})),
    "codex_429_plan_not_string": _resp(429, json.dumps({"error": {"plan_type": 7, "message": "limit"}})),
    "codex_usage_limit_resets_text": _resp(
        400, json.dumps({"error": {"code": "usage_limit_reached", "resets_at": "soon"}})
    ),
    "codex_usage_limit_message_object": _resp(
        403, json.dumps({"error": {"type": "rate_limit_exceeded", "message": {"text": "no"}}})
    ),
    "codex_error_null_body": _resp(500, "null"),
    "codex_429_plain": _resp(429, "Too many requests, slow down", {"content-type": "text/plain"}),
    "codex_401_json": _resp(
        401,
        json.dumps(
            {
                "error": {
                    "message": "Provided authentication token is expired. Please try signing in again.",
                    "type": None,
                    "code": "token_expired",
                }
            }
        ),
    ),
    "codex_400_detail": _resp(400, json.dumps({"detail": "Unsupported model"})),
    "codex_done_end_turn": _resp(200, _sse(_text(_done_event("response.done", "completed", True))), SSE),
    "codex_done_end_turn_false": _resp(
        200, _sse(_text(_done_event("response.completed", "completed", False))), SSE
    ),
    "codex_status_unknown": _resp(200, _sse(_text(_done_event("response.done", "finished"))), SSE),
    "codex_status_missing": _resp(200, _sse(_text(_done_event("response.done", None))), SSE),
    "codex_incomplete_max_tokens": _resp(
        200,
        _sse(
            _text(
                {
                    "type": "response.incomplete",
                    "response": {
                        "id": "resp_c1",
                        "status": "incomplete",
                        "incomplete_details": {"reason": "max_output_tokens"},
                        "usage": _USAGE,
                    },
                }
            )
        ),
        SSE,
    ),
    "codex_event_error_nested": _resp(
        200,
        _sse(
            [
                _CREATED,
                {"type": "error", "error": {"code": "context_length_exceeded", "message": "Too long."}},
            ]
        ),
        SSE,
    ),
    "codex_event_error_code_only": _resp(
        200, _sse([_CREATED, {"type": "error", "code": "server_error"}]), SSE
    ),
    "codex_event_error_bare": _resp(200, _sse([_CREATED, {"type": "error", "sequence_number": 3}]), SSE),
    "codex_failed_no_message": _resp(
        200, _sse([_CREATED, {"type": "response.failed", "response": {"id": "r", "status": "failed"}}]), SSE
    ),
    "codex_data_only_done_marker": _resp(
        200,
        _sse(_text(_done_event("response.completed", "completed")), named=False) + "data: [DONE]\n\n",
        SSE,
    ),
    "codex_crlf_framing": _resp(
        200,
        "".join(
            f"data: {json.dumps(e)}\r\n\r\n" for e in _text(_done_event("response.completed", "completed"))
        ),
        SSE,
    ),
    "codex_no_trailing_blank_line": _resp(
        200, _sse(_text(_done_event("response.completed", "completed"))).rstrip("\n"), SSE
    ),
    "codex_events_after_terminal": _resp(
        200,
        _sse(
            [
                *_text(_done_event("response.completed", "completed")),
                {"type": "error", "message": "after the end"},
            ]
        ),
        SSE,
    ),
    "codex_bad_json": _resp(200, _sse([_CREATED]) + "data: {not json}\n\n", SSE),
    "codex_no_terminal": _resp(200, _sse(_text()), SSE),
}

# streams recorded from Azure OpenAI's Responses API (tests/fixtures/streams_azure/SOURCES.md),
# served to both APIs (the Codex backend speaks the same events)
AZURE_FIXTURES = TESTS / "fixtures" / "streams_azure"


def _azure_fixture(name: str) -> str:
    return (AZURE_FIXTURES / name).read_text(encoding="utf-8")


RECORDED_AZURE: dict[str, dict[str, Any]] = {
    "recorded_azure_text": _resp(200, _azure_fixture("azure_text.sse"), SSE),
    "recorded_azure_tool_call": _resp(200, _azure_fixture("azure_tool_call.sse"), SSE),
    "recorded_azure_reasoning_encrypted": _resp(200, _azure_fixture("azure_reasoning_encrypted.sse"), SSE),
}

_OK = _resp(200, _sse(_text(_done_event("response.completed", "completed"))), SSE)
_RATE_MS = _resp(
    429,
    json.dumps({"error": {"message": "Slow down", "type": "rate_limit", "code": None}}),
    {"content-type": "application/json", "retry-after-ms": "5"},
)

# (answer name, api, model, max retries, answers served in turn)
RETRY_CASES: list[tuple[str, str, tuple[str, str], int, list[dict[str, Any]]]] = [
    *(
        (name, "azure-openai-responses", ("azure-openai-responses", "gpt-5.5"), retries, served)
        for name, _api, _model, retries, served in responses.RETRY_CASES
        if _api == "openai-responses"
    ),
    ("codex_retry_429_then_ok", "openai-codex-responses", ("openai-codex", "gpt-5.5"), 2, [_RATE_MS, _OK]),
    (
        "codex_retry_500_then_ok",
        "openai-codex-responses",
        ("openai-codex", "gpt-5.5"),
        2,
        [_resp(500, "", {"retry-after-ms": "1"}), _resp(503, "overloaded", {"retry-after": "0"}), _OK],
    ),
    ("codex_retry_exhausted", "openai-codex-responses", ("openai-codex", "gpt-5.5"), 1, [_RATE_MS]),
    (
        "codex_retry_usage_limit_is_retried",  # a usage limit is no terminal quota text: retried
        "openai-codex-responses",
        ("openai-codex", "gpt-5.5"),
        2,
        [CODEX_ANSWERS["codex_usage_limit_plan"], _OK],
    ),
    (
        "codex_retry_terminal_quota",
        "openai-codex-responses",
        ("openai-codex", "gpt-5.5"),
        1,
        [_resp(429, json.dumps({"error": {"code": "insufficient_quota", "message": "quota exceeded"}})), _OK],
    ),
    (
        "codex_retry_delay_too_long",
        "openai-codex-responses",
        ("openai-codex", "gpt-5.5"),
        2,
        [_resp(429, "", {"retry-after": "120"}), _OK],
    ),
    (
        "codex_retry_400_is_retried_after_a_second",
        "openai-codex-responses",
        ("openai-codex", "gpt-5.5"),
        1,
        [_resp(400, json.dumps({"error": {"message": "bad input"}})), _OK],
    ),
]

# (provider, model, conversation, level) per API: the first runs every answer
MODELS = {
    "azure-openai-responses": [
        ("azure-openai-responses", "gpt-5.5", "tools", "medium"),
        ("azure-openai-responses", "gpt-4.1", "history", "off"),
    ],
    "openai-codex-responses": [
        ("openai-codex", "gpt-5.5", "tools", "medium"),
        ("openai-codex", "gpt-5.3-codex-spark", "history", "off"),
    ],
}
CONSTRAINED = {
    "azure-openai-responses": [("azure-openai-responses", "gpt-5.5", "constrained", "high")],
    "openai-codex-responses": [("openai-codex", "gpt-5.5", "constrained", "high")],
}
DEFERRED = {
    "openai-codex-responses": [
        ("openai-codex", "gpt-5.6-luna", "deferred", "medium"),
        ("openai-codex", "gpt-5.4", "deferred", "off"),
    ],
}


def cases() -> list[dict[str, Any]]:
    """Every case: ``{name, api, provider, model, conversation, level, responses, max_retries}``."""
    from pi_nb.providers.catalog import find_model

    out = []
    for api in ("azure-openai-responses", "openai-codex-responses"):
        table = {**responses.RESPONSES_ANSWERS, **RECORDED_AZURE}
        if api == "openai-codex-responses":
            table.update(CODEX_ANSWERS)
        for i, (answer, response) in enumerate(table.items()):
            wide = answer.startswith(("http_", "codex_", "recorded_azure")) or i % 3 == 0
            targets = list(MODELS[api] if wide else MODELS[api][:1])
            if answer in responses.CONSTRAINED_ANSWERS:
                targets += CONSTRAINED[api]
            if answer in responses.DEFERRED_ANSWERS:
                targets += DEFERRED.get(api, [])
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
                "context": responses.context_for(dict(spec.raw), case["conversation"]),
                "level": case["level"],
                "sessionId": wire_cases.SESSION_ID,
                "responses": case["responses"],
                "settings": {
                    **wire_cases.pi_settings(case["api"]),
                    "retry": {"provider": {"maxRetries": case["max_retries"]}},
                },
            }
        )
    with tempfile.TemporaryDirectory() as agent_dir:
        Path(agent_dir, "auth.json").write_text(json.dumps(wire_cases.pi_auth_json()))
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
            golden[case["name"]]["request"] = wire_cases.comparable(
                got["requests"][0], responses._pi_user_agent(got)
            )
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases to {GOLDEN}")


if __name__ == "__main__":
    main()
