"""Golden file for the answers of the ``google-generative-ai`` and ``google-vertex`` APIs: what
pi-ai 0.85.0 records of each answer (recorded Gemini streams with thought signatures, thought
summaries and function calls, cached-token usage, a blocked prompt; HTTP 400/401/403/429/500/503
bodies; in-stream errors; streams cut short; safety, recitation and malformed-call finish
reasons; provider retries), as Pi's agent calls it.

Run by hand when the cases change (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``):

    PYTHONPATH=$PWD .venv/bin/python tests/golden/make_wire_answers_google.py

Each case is one catalog model, one conversation of ``tests/wire_cases.py``, one level and the
answers the server gives (status, headers, body). ``_pi_wire.mjs`` runs pi-coding-agent's own
``ModelRuntime.streamSimple`` with a replaced ``fetch`` serving them. The recorded bodies are in
``tests/fixtures/streams`` (``gemini_*.sse``, ``error_gemini_*.json``; see its ``SOURCES.md``);
the others are written here in the shapes Gemini sends. ``tests/golden/wire_answers_google.json``
records, per case, the number of requests pi-ai made, its final message and its event sequence
(run-length encoded ``[type, contentIndex, count]``); ``tests/test_google_providers.py`` serves
the same answers to pi_nb's providers and compares. A tool call Gemini sends without an id gets
pi-ai's ``{name}_{Date.now()}_{counter}``: both sides' ids are compared by that shape.

Two more goldens come from the same run: ``wire_google_adc.json`` (Vertex without an API key:
application-default credentials from the committed fake gcloud login
``tests/fixtures/google/adc_authorized_user.json``, pi-ai's token request and Gemini call per
location and project variable, a refused token; ``_pi_wire.mjs`` gets ``windowFetch`` so that
google-auth-library's gaxios fetches through the replaced ``fetch``) and
``wire_google_models_json.json`` (Gemini and Vertex providers of an agent dir's ``models.json``),
and ``wire_google_levels.json`` (every Google catalog model at every thinking level, and with Pi's
custom ``thinkingBudgets``: the ``generationConfig`` pi-ai sends).
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

GOLDEN = TESTS / "golden" / "wire_answers_google.json"
FIXTURES = TESTS / "fixtures" / "streams"

SSE = {"content-type": "text/event-stream"}
JSON_H = {"content-type": "application/json; charset=UTF-8"}


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _resp(status: int, body: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"status": status, "headers": headers or SSE, "body": body}


def _sse(chunks: list[dict[str, Any]], sep: str = "\r\n\r\n") -> str:
    return "".join(f"data: {json.dumps(c)}{sep}" for c in chunks)


def _chunk(
    parts: list[dict[str, Any]] | None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    response_id: str | None = "resp-g1",
) -> dict[str, Any]:
    candidate: dict[str, Any] = {}
    if parts is not None:
        candidate["content"] = {"parts": parts, "role": "model"}
    if finish:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    out: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        out["usageMetadata"] = usage
    out["modelVersion"] = "gemini-2.5-flash"
    if response_id is not None:
        out["responseId"] = response_id
    return out


USAGE = {"promptTokenCount": 120, "candidatesTokenCount": 30, "totalTokenCount": 150}
USAGE_CACHED = {
    "promptTokenCount": 2048,
    "candidatesTokenCount": 64,
    "totalTokenCount": 2400,
    "cachedContentTokenCount": 1536,
    "thoughtsTokenCount": 288,
}
SIG = "CpwBAb4+9vuP0fDd5q2lX1mZ0nVtQ3bq7h6yHkqSx2l0wG1dZ0sx"  # base64, the shape Gemini sends


def _error(code: int, status: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message, "status": status}}, indent=2) + "\n"


ANSWERS: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- recorded streams
    "recorded_text": _resp(200, _fixture("gemini_gemini3_pro_text.sse")),
    "recorded_text_signature": _resp(200, _fixture("gemini_gemini3_pro_text_signature.sse")),
    "recorded_tool_call": _resp(200, _fixture("gemini_gemini3_pro_tool_call.sse")),
    "recorded_tool_call_signature": _resp(200, _fixture("gemini_gemini3_pro_tool_call_signature.sse")),
    "recorded_empty_text_signature": _resp(200, _fixture("gemini_gemini3_flash_empty_text_signature.sse")),
    "recorded_thought_calls_no_args": _resp(
        200, _fixture("gemini_vertex_gemini3_flash_thought_calls_no_args.sse")
    ),
    "recorded_tool_call_nested_args": _resp(200, _fixture("gemini_vertex_tool_call_nested_args.sse")),
    "recorded_usage_only": _resp(200, _fixture("gemini_usage_cached_tokens.sse")),
    "recorded_prompt_blocked": _resp(200, _fixture("gemini_prompt_blocked.sse")),
    "recorded_cut_before_finish": _resp(
        200, "".join(_fixture("gemini_gemini3_pro_text.sse").split("\r\n\r\n")[:-2]) + "\r\n\r\n"
    ),
    # ---------------------------------------------------------------- HTTP errors
    "http_400_penalty": _resp(400, _fixture("error_gemini_400_penalty.json"), JSON_H),
    "http_400_array": _resp(400, _fixture("error_gemini_array.json"), JSON_H),
    "http_429_quota": _resp(429, _fixture("error_gemini_429_quota.json"), JSON_H),
    "http_403_permission": _resp(
        403,
        _error(
            403,
            "PERMISSION_DENIED",
            "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        ),
        JSON_H,
    ),
    "http_401_empty": _resp(401, "", {"content-type": "text/plain"}),
    "http_500_internal": _resp(
        500,
        _error(
            500,
            "INTERNAL",
            "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
        ),
        JSON_H,
    ),
    "http_503_html": _resp(
        503, "<html><body><h1>503 Service Unavailable</h1></body></html>", {"content-type": "text/html"}
    ),
    "http_400_json_broken": _resp(400, '{"error": {"code": 400,', JSON_H),
    # ---------------------------------------------------------------- in-stream failures
    "stream_error_raw_chunk": _resp(
        200,
        json.dumps({"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}),
    ),
    "stream_error_data_event": _resp(
        200,
        _sse([_chunk([{"text": "Partial"}])])
        + "data: "
        + json.dumps({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}})
        + "\r\n\r\n",
    ),
    "stream_cut_mid_event": _resp(
        200, _sse([_chunk([{"text": "Hel"}])]) + 'data: {"candidates": [{"content": {"parts": [{"text": "lo'
    ),
    "stream_data_not_json": _resp(200, _sse([_chunk([{"text": "Hi"}])]) + "data: oops\r\n\r\n"),
    "stream_empty_body": _resp(200, ""),
    # ---------------------------------------------------------------- finish reasons
    "finish_max_tokens": _resp(
        200, _sse([_chunk([{"text": "A long"}]), _chunk([{"text": " answer"}], "MAX_TOKENS", USAGE)])
    ),
    "finish_safety": _resp(200, _sse([_chunk([{"text": "I can"}]), _chunk(None, "SAFETY", USAGE)])),
    "finish_recitation": _resp(200, _sse([_chunk([{"text": "Quote:"}], "RECITATION", USAGE)])),
    "finish_malformed_call": _resp(200, _sse([_chunk(None, "MALFORMED_FUNCTION_CALL", USAGE)])),
    "finish_unknown": _resp(200, _sse([_chunk([{"text": "x"}], "SOMETHING_NEW", USAGE)])),
    # ---------------------------------------------------------------- streams written here
    "thought_summary_then_text": _resp(
        200,
        _sse(
            [
                _chunk([{"text": "**Planning**\n\nI will list", "thought": True, "thoughtSignature": SIG}]),
                _chunk([{"text": " the files.", "thought": True}]),
                _chunk([{"text": "Here"}]),
                _chunk([{"text": " they are.", "thoughtSignature": SIG}], "STOP", USAGE_CACHED),
            ]
        ),
    ),
    "calls_with_ids_and_duplicates": _resp(
        200,
        _sse(
            [
                _chunk([{"text": "Running.", "thought": True}]),
                _chunk(
                    [
                        {
                            "functionCall": {"id": "call-1", "name": "bash", "args": {"command": "ls"}},
                            "thoughtSignature": SIG,
                        },
                        {"functionCall": {"id": "call-1", "name": "read", "args": {"path": "a.txt"}}},
                        {"functionCall": {"name": "write"}},
                    ]
                ),
                _chunk([{"text": ""}], "STOP", USAGE),
            ]
        ),
    ),
    "text_between_calls": _resp(
        200,
        _sse(
            [
                _chunk(
                    [
                        {"text": "First "},
                        {"functionCall": {"name": "bash", "args": {"command": "pwd"}}},
                        {"text": "then"},
                    ]
                ),
                _chunk([{"text": " done."}], "STOP", USAGE),
            ]
        ),
    ),
    "usage_cached_stop": _resp(200, _sse([_chunk([{"text": "ok"}], "STOP", USAGE_CACHED)])),
    "delimiters_lf_and_cr": _resp(
        200,
        _sse([_chunk([{"text": "one"}])], "\n\n")
        + _sse([_chunk([{"text": " two"}])], "\r\r")
        + _sse([_chunk(None, "STOP", USAGE)], "\n\n"),
    ),
    "bom_and_no_response_id": _resp(
        200,
        "\ufeff" + _sse([_chunk([{"text": "hi"}], None, None, None), _chunk(None, "STOP", USAGE, "late-id")]),
    ),
    "no_candidates_then_stop": _resp(200, _sse([{"usageMetadata": USAGE}, _chunk([{"text": "ok"}], "STOP")])),
    "null_text_part": _resp(200, _sse([_chunk([{"text": None}]), _chunk([{"text": "!"}], "STOP", USAGE)])),
}

# the API's first model runs every answer; the second (a Gemini 3 model, or Vertex) the errors
MODELS = {
    "google-generative-ai": [
        ("google", "gemini-2.5-flash", "tools", "off"),
        ("google", "gemini-3.1-pro-preview", "history", "high"),
    ],
    "google-vertex": [
        ("google-vertex", "gemini-2.5-pro", "tools", "medium"),
        ("google-vertex", "gemini-3-flash-preview", "history", "high"),
    ],
}

# (answer, api, model, max_retries, answers served in turn)
RETRY_CASES = [
    (
        "retry_429_then_ok",
        "google-generative-ai",
        ("google", "gemini-2.5-flash"),
        1,
        [ANSWERS["http_429_quota"], ANSWERS["usage_cached_stop"]],
    ),
    (
        "retry_500_twice",
        "google-generative-ai",
        ("google", "gemini-2.5-flash"),
        1,
        [ANSWERS["http_500_internal"], ANSWERS["http_500_internal"]],
    ),
    (
        "retry_400_not_retried",
        "google-vertex",
        ("google-vertex", "gemini-2.5-pro"),
        2,
        [ANSWERS["http_400_penalty"], ANSWERS["usage_cached_stop"]],
    ),
]


# conversations of make_wire_answers_responses.py: ``constrained`` (a grammar tool and a strict
# JSON-schema tool, called earlier) and ``deferred`` (a tool a result adds); their request is
# compared too
TOOL_CASES = [
    ("google", "gemini-2.5-flash", "constrained", "off"),
    ("google", "gemini-3.1-pro-preview", "constrained", "high"),
    ("google", "gemma-4-31b-it", "constrained", "medium"),
    ("google-vertex", "gemini-2.5-pro", "constrained", "off"),
    ("google-vertex", "gemini-3-flash-preview", "constrained", "medium"),
    ("google", "gemini-3-flash-preview", "deferred", "off"),
    ("google-vertex", "gemini-2.5-flash", "deferred", "high"),
]


def context_for(model: dict[str, Any], conversation: str) -> dict[str, Any]:
    """``tests/wire_cases.py``'s conversations, and ``constrained`` / ``deferred``."""
    import make_wire_answers_responses

    return make_wire_answers_responses.context_for(model, conversation)


def cases() -> list[dict[str, Any]]:
    """Every case: ``{name, api, provider, model, conversation, level, responses, max_retries}``."""
    from pi_nb.providers.catalog import find_model

    out = []
    for api, targets_all in MODELS.items():
        for i, (answer, response) in enumerate(ANSWERS.items()):
            targets = (
                targets_all
                if (answer.startswith("http_") or answer.startswith("recorded_") or i % 3 == 0)
                else targets_all[:1]
            )
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
    for provider, model_id, conversation, level in TOOL_CASES:
        spec = find_model(provider, model_id)
        assert spec is not None
        out.append(
            {
                "name": f"{spec.api}|usage_cached_stop|{provider}/{model_id}|{conversation}|{level}",
                "api": spec.api,
                "provider": provider,
                "model": model_id,
                "conversation": conversation,
                "level": level,
                "responses": [ANSWERS["usage_cached_stop"]],
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


ADC_GOLDEN = TESTS / "golden" / "wire_google_adc.json"
#: the committed fake gcloud login (``authorized_user``) the ADC cases use, relative to the root
ADC_FILE = "tests/fixtures/google/adc_authorized_user.json"
_TOKEN = {
    "status": 200,
    "headers": {"content-type": "application/json; charset=utf-8"},
    "body": json.dumps(
        {
            "access_token": "ya29.fake-access-token",
            "expires_in": 3599,
            "scope": "https://www.googleapis.com/auth/cloud-platform",
            "token_type": "Bearer",
        }
    ),
}


def adc_cases() -> list[dict[str, Any]]:
    """Vertex without an API key: application-default credentials (the fake login), the project
    and location from the environment. ``env`` is set for the run; ``responses`` answer the token
    request, then the Gemini call."""
    base = {"GOOGLE_APPLICATION_CREDENTIALS": ADC_FILE, "GOOGLE_CLOUD_PROJECT": "pi-nb-proj"}
    ok = wire_cases.canned_response("google-vertex")
    rows = [
        (
            "us_central1",
            {**base, "GOOGLE_CLOUD_LOCATION": "us-central1"},
            "gemini-2.5-flash",
            "tools",
            "off",
            [_TOKEN, ok],
        ),
        (
            "us_central1",
            {**base, "GOOGLE_CLOUD_LOCATION": "us-central1"},
            "gemini-3.1-pro-preview",
            "history",
            "high",
            [_TOKEN, ok],
        ),
        (
            "global",
            {**base, "GOOGLE_CLOUD_LOCATION": "global"},
            "gemini-3-flash-preview",
            "replay",
            "medium",
            [_TOKEN, ok],
        ),
        (
            "multi_region_eu",
            {**base, "GOOGLE_CLOUD_LOCATION": "eu"},
            "gemini-2.5-pro",
            "broken",
            "high",
            [_TOKEN, ok],
        ),
        (
            "gcloud_project",
            {
                "GOOGLE_APPLICATION_CREDENTIALS": ADC_FILE,
                "GCLOUD_PROJECT": "pi-nb-gcloud",
                "GOOGLE_CLOUD_LOCATION": "asia-northeast1",
            },
            "gemini-2.5-flash-lite",
            "foreign",
            "medium",
            [_TOKEN, ok],
        ),
        (
            "env_base_url",
            {
                **base,
                "GOOGLE_CLOUD_LOCATION": "us-east5",
                "GOOGLE_VERTEX_BASE_URL": "https://vertex-env.example.test/",
            },
            "gemini-2.5-flash",
            "tools",
            "medium",
            [_TOKEN, ok],
        ),
        (
            "api_key_env_base_url",
            {
                "GOOGLE_CLOUD_API_KEY": "vertex-key-0123456789",
                "GOOGLE_CLOUD_PROJECT": "ignored-proj",
                "GOOGLE_CLOUD_LOCATION": "us-east5",
                "GOOGLE_VERTEX_BASE_URL": "https://vertex-env.example.test",
            },
            "gemini-3-flash-preview",
            "tools",
            "high",
            [ok],
        ),
        (
            "token_invalid_grant",
            {**base, "GOOGLE_CLOUD_LOCATION": "us-central1"},
            "gemini-2.5-flash",
            "tools",
            "off",
            [_resp(400, json.dumps({"error": "invalid_grant", "error_description": "Bad Request"}), JSON_H)],
        ),
        (
            "then_http_403",
            {**base, "GOOGLE_CLOUD_LOCATION": "us-central1"},
            "gemini-2.5-flash",
            "tools",
            "off",
            [_TOKEN, ANSWERS["http_403_permission"]],
        ),
    ]
    return [
        {
            "name": f"google-vertex|adc_{label}|google-vertex/{model}|{conversation}|{level}",
            "env": env,
            "provider": "google-vertex",
            "model": model,
            "conversation": conversation,
            "level": level,
            "responses": responses,
        }
        for label, env, model, conversation, level, responses in rows
    ]


def _adc_main() -> None:
    import subprocess

    from make_wire import NODE, pi_env

    from pi_nb.providers.catalog import find_model

    golden = {}
    for case in adc_cases():
        spec = find_model(case["provider"], case["model"])
        assert spec is not None
        env = pi_env()
        env.pop("GOOGLE_CLOUD_API_KEY", None)
        env.update(case["env"])
        job = {
            "name": case["name"],
            "provider": case["provider"],
            "model": case["model"],
            "context": wire_cases.context_for(dict(spec.raw), case["conversation"]),
            "level": case["level"],
            "sessionId": wire_cases.SESSION_ID,
            "responses": case["responses"],
        }
        with tempfile.TemporaryDirectory() as agent_dir:
            run = subprocess.run(
                [str(NODE), str(TESTS / "golden" / "_pi_wire.mjs")],
                input=json.dumps({"agentDir": agent_dir, "jobs": [job], "windowFetch": True}),
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                check=True,
            )
        # @google/genai's console.debug (project/location over an API key in the environment)
        # shares stdout: the result is the last line
        got = json.loads(run.stdout.strip().splitlines()[-1])["cases"][case["name"]]
        ua = next(
            (
                q["headers"]["user-agent"]
                for q in got["requests"]
                if q["headers"].get("user-agent", "").startswith("pi (")
            ),
            None,
        )
        golden[case["name"]] = {
            "requests": [wire_cases.comparable(q, ua) for q in got["requests"]],
            "message": got["message"],
            "events": got["events"],
        }
    ADC_GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases to {ADC_GOLDEN}")


MODELS_JSON_GOLDEN = TESTS / "golden" / "wire_google_models_json.json"
MODELS_JSON_ENV = {"GEMINI_PROXY_KEY": "proxy-key-0123456789", "VERTEX_PROXY_KEY": "vx-key-0123456789"}
MODELS_JSON = {
    "providers": {
        "gemini-proxy": {
            "baseUrl": "https://llm-gw.example.test/gemini/v1beta/",
            "api": "google-generative-ai",
            "apiKey": "$GEMINI_PROXY_KEY",
            "headers": {"X-Team": "nlp"},
            "models": [
                {"id": "gemini-2.5-flash", "reasoning": True, "contextWindow": 1048576, "maxTokens": 65536},
                {
                    "id": "gemini-3-flash-preview",
                    "reasoning": True,
                    "input": ["text", "image"],
                    "contextWindow": 1048576,
                    "maxTokens": 65536,
                    "headers": {"X-Route": "g3"},
                },
            ],
        },
        "vertex-proxy": {
            "baseUrl": "https://vertex-gw.example.test/v1",
            "api": "google-vertex",
            "apiKey": "$VERTEX_PROXY_KEY",
            "models": [
                {"id": "gemini-2.5-pro", "reasoning": True, "contextWindow": 1048576, "maxTokens": 65536}
            ],
        },
        "vertex-root": {
            "baseUrl": "https://vertex-root.example.test/api",
            "api": "google-vertex",
            "apiKey": "literal-vertex-key",
            "models": [
                {
                    "id": "gemini-3.1-pro-preview",
                    "reasoning": True,
                    "contextWindow": 1048576,
                    "maxTokens": 65536,
                }
            ],
        },
        "google": {"baseUrl": "https://gemini-override.example.test/v1beta", "headers": {"X-Override": "1"}},
    }
}
MODELS_JSON_CASES = [
    ("gemini-proxy/gemini-2.5-flash", "google-generative-ai", "tools", "off"),
    ("gemini-proxy/gemini-2.5-flash", "google-generative-ai", "history", "medium"),
    ("gemini-proxy/gemini-3-flash-preview", "google-generative-ai", "replay", "high"),
    ("vertex-proxy/gemini-2.5-pro", "google-vertex", "tools", "medium"),
    ("vertex-root/gemini-3.1-pro-preview", "google-vertex", "history", "high"),
    ("google/gemini-2.5-pro", "google-generative-ai", "foreign", "off"),
]


def _models_json_main() -> None:
    from make_wire import pi_env, run_node

    jobs = []
    for spec, api, conversation, level in MODELS_JSON_CASES:
        provider, mid = spec.split("/", 1)
        jobs.append(
            {
                "name": f"{spec}|{conversation}|{level}",
                "provider": provider,
                "model": mid,
                "context": wire_cases.context_for(
                    {"provider": provider, "api": api, "id": mid}, conversation
                ),
                "level": level,
                "sessionId": wire_cases.SESSION_ID,
                "responses": [wire_cases.canned_response(api)],
            }
        )
    env = {**pi_env(), **MODELS_JSON_ENV}
    with tempfile.TemporaryDirectory() as agent_dir:
        (Path(agent_dir) / "models.json").write_text(json.dumps(MODELS_JSON))
        result = run_node(jobs, agent_dir, env)
    golden = {}
    for job in jobs:
        got = result["cases"][job["name"]]
        ua = next(
            (
                q["headers"]["user-agent"]
                for q in got["requests"]
                if q["headers"].get("user-agent", "").startswith("pi (")
            ),
            None,
        )
        golden[job["name"]] = {
            "requests": [wire_cases.comparable(q, ua) for q in got["requests"]],
            "message": got["message"],
        }
    MODELS_JSON_GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases to {MODELS_JSON_GOLDEN}")


LEVELS_GOLDEN = TESTS / "golden" / "wire_google_levels.json"
#: every thinking level Pi offers; pi-ai clamps each to what the model supports
ALL_LEVELS = ("minimal", "low", "medium", "high", "xhigh")
#: Pi's ``thinkingBudgets`` setting (a custom budget per level) for the budget-based models
CUSTOM_BUDGETS = {"minimal": 256, "low": 1024, "medium": 4096, "high": 16384}


def level_cases() -> list[dict[str, Any]]:
    """Every Google catalog model x every level (and, for a few, Pi's custom thinking budgets):
    the ``generationConfig`` pi-ai sends."""
    from pi_nb.providers.catalog import list_models

    out = []
    for m in list_models():
        if m.api not in ("google-generative-ai", "google-vertex"):
            continue
        for level in ALL_LEVELS:
            out.append(
                {
                    "name": f"{m.provider}/{m.id}|{level}",
                    "provider": m.provider,
                    "model": m.id,
                    "api": m.api,
                    "level": level,
                    "budgets": None,
                }
            )
        if "2.5" in m.id or m.id.startswith("deep-research"):
            for level in ("minimal", "high"):
                out.append(
                    {
                        "name": f"{m.provider}/{m.id}|{level}|budgets",
                        "provider": m.provider,
                        "model": m.id,
                        "api": m.api,
                        "level": level,
                        "budgets": CUSTOM_BUDGETS,
                    }
                )
    return out


def _levels_main() -> None:
    from make_wire import pi_env, run_node

    jobs = []
    for case in level_cases():
        job = {
            "name": case["name"],
            "provider": case["provider"],
            "model": case["model"],
            "context": wire_cases.context_for(
                {"provider": case["provider"], "api": case["api"], "id": case["model"]}, "tools"
            ),
            "level": case["level"],
            "sessionId": wire_cases.SESSION_ID,
            "responses": [wire_cases.canned_response(case["api"])],
        }
        if case["budgets"]:
            job["settings"] = {"thinkingBudgets": case["budgets"]}
        jobs.append(job)
    with tempfile.TemporaryDirectory() as agent_dir:
        result = run_node(jobs, agent_dir, pi_env())
    golden = {}
    for job in jobs:
        got = result["cases"][job["name"]]
        body = json.loads(got["requests"][0]["body"]) if got["requests"] else None
        golden[job["name"]] = {
            "generationConfig": body and body.get("generationConfig"),
            "message": got["message"],
        }
    LEVELS_GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases to {LEVELS_GOLDEN}")


def main() -> None:
    from make_wire import pi_env, run_node

    _levels_main()
    _models_json_main()
    _adc_main()

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
            ua = next(
                (
                    q["headers"]["user-agent"]
                    for q in got["requests"]
                    if q["headers"].get("user-agent", "").startswith("pi (")
                ),
                None,
            )
            golden[case["name"]]["request"] = wire_cases.comparable(got["requests"][0], ua)
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases to {GOLDEN}")


if __name__ == "__main__":
    main()
