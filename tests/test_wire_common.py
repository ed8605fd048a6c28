"""pi-ai's provider-independent helpers, case for case against pi-ai 0.85.0's own modules.

``tests/golden/wire_common.json.gz`` (made by ``tests/golden/make_wire_common.py``) holds
generated inputs and what pi-ai returned for them: ``transformMessages`` over random histories x
vision / text-only models x tool-call-id normalisers, the simple-options maths and context
estimate, thinking-level clamping, the error-body normaliser, the errors the JavaScript ``openai``
and ``@anthropic-ai/sdk`` clients throw for error responses of every shape (and the errorMessage
each pi-ai API writes from them), and the small converter helpers. Each test runs the Python port
on the same inputs; error responses go through the Python SDKs over ``CaptureTransport``.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import platform
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_capture import CaptureTransport

from pi_nb._js import js_stringify
from pi_nb.providers import _pi_ai_util as util
from pi_nb.providers import _stream_common as sc
from pi_nb.providers import simple_options as so
from pi_nb.providers import transform_messages as tm

GOLDEN = Path(__file__).parent / "golden" / "wire_common.json.gz"
UA_GOLDEN = Path(__file__).parent / "golden" / "wire_user_agent.json"
FIXED_NOW = 1700000000000


def _load() -> dict[str, list[dict[str, Any]]]:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    by_fn: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in data["cases"]:
        by_fn[case["fn"]].append(case)
    return by_fn


CASES = _load()


def _outcome(fn: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"ok": fn()}
    except (ValueError, util.UnsupportedStrictJsonSchemaError) as exc:
        return {"throws": str(exc)}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, key order included (JSON.stringify of both)."""
    return js_stringify(a) == js_stringify(b)


def _check(fn_name: str, run: Callable[..., Any], *, min_cases: int = 1) -> None:
    cases = CASES[fn_name]
    assert len(cases) >= min_cases, f"golden has {len(cases)} {fn_name} cases"
    bad = []
    for case in cases:
        got = _outcome(lambda args=case["args"]: run(*args))
        if not _same(got, case["result"]):
            bad.append((case["id"], got, case["result"]))
    assert not bad, f"{len(bad)}/{len(cases)} {fn_name} cases differ; first: {bad[0]}"


# ---------------------------------------------------------------- transform-messages

NORMALIZERS: dict[str, Any] = {
    "none": None,
    "identity": lambda i, m, s: i,
    "sanitize64": lambda i, m, s: re.sub(r"[^a-zA-Z0-9_-]", "_", i)[:64],
    "prefix": lambda i, m, s: f"{m['id']}:{s['provider']}/{s['model']}:{i[:12]}",
}


def test_transform_messages_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tm, "_now_ms", lambda: FIXED_NOW)
    _check(
        "transformMessages",
        lambda msgs, model, norm: tm.transform_messages(msgs, model, NORMALIZERS[norm]),
        min_cases=900,
    )


def test_transform_messages_golden_reaches_every_rule() -> None:
    """The generated histories exercise each rule (so a broken rule cannot pass unnoticed)."""
    seen: set[str] = set()
    for case in CASES["transformMessages"]:
        msgs, model, _norm = case["args"]
        out = case["result"]["ok"]
        text = json.dumps(out)
        if '"No result provided"' in text:
            seen.add("synthetic result")
        if tm.NON_VISION_USER_IMAGE_PLACEHOLDER in text and "image" not in model["input"]:
            seen.add("user image placeholder")
        if tm.NON_VISION_TOOL_IMAGE_PLACEHOLDER in text:
            seen.add("tool image placeholder")
        if any(m.get("stopReason") in ("error", "aborted") for m in msgs):
            seen.add("skipped error turn")
        if any(m.get("role") == "assistant" and m.get("content") is None for m in msgs):
            seen.add("null content")
        for m in out:
            if m.get("role") == "assistant":
                same = (m["provider"], m["api"], m["model"]) == (model["provider"], model["api"], model["id"])
                for b in m["content"]:
                    if b.get("type") == "thinking" and b.get("redacted"):
                        seen.add("redacted kept")
                    if b.get("type") == "thinking" and same and b.get("thinkingSignature"):
                        seen.add("signed thinking kept")
                    if not same and b.get("type") == "toolCall" and ":" in b["id"]:
                        seen.add("id normalised")
    assert seen >= {
        "synthetic result",
        "user image placeholder",
        "tool image placeholder",
        "skipped error turn",
        "null content",
        "redacted kept",
        "signed thinking kept",
        "id normalised",
    }, seen


def test_transform_messages_does_not_modify_input() -> None:
    case = max(CASES["transformMessages"], key=lambda c: len(json.dumps(c["args"][0])))
    msgs, model, _ = case["args"]
    before = json.dumps(msgs)
    tm.transform_messages(msgs, model, NORMALIZERS["sanitize64"])
    assert json.dumps(msgs) == before


# ---------------------------------------------------------------- simple-options, estimate, levels


def test_constants() -> None:
    for case in CASES["constants"]:
        ok = case["result"]["ok"]
        assert ok["MIN_ANSWER_TOKENS"] == so.MIN_ANSWER_TOKENS
        assert ok["DEFAULT_THINKING_BUDGETS"] == dict(so.DEFAULT_THINKING_BUDGETS)
        assert ok["MAX_PROVIDER_ERROR_BODY_CHARS"] == sc.MAX_PROVIDER_ERROR_BODY_CHARS
    assert so.CONTEXT_SAFETY_TOKENS == 4096


def test_estimate_context_tokens_golden() -> None:
    _check("estimateContextTokens", so.estimate_context_tokens, min_cases=250)


def test_build_base_options_golden() -> None:
    _check("buildBaseOptions", so.build_base_options, min_cases=200)


def test_clamp_max_tokens_to_context_golden() -> None:
    _check("clampMaxTokensToContext", so.clamp_max_tokens_to_context, min_cases=200)


def test_thinking_budget_maths_golden() -> None:
    def adjust(base: Any, model_max: int, level: str, budgets: Any) -> Any:
        max_tokens, budget = so.adjust_max_tokens_for_thinking(base, model_max, level, budgets)
        return {"maxTokens": max_tokens, "thinkingBudget": budget}

    _check("adjustMaxTokensForThinking", adjust, min_cases=200)
    _check("thinkingBudgetForLevel", so.thinking_budget_for_level, min_cases=200)
    _check("clampThinkingBudgetToAnswerRoom", so.clamp_thinking_budget_to_answer_room, min_cases=200)
    _check("clampReasoning", so.clamp_reasoning, min_cases=8)


def test_thinking_levels_golden() -> None:
    _check("getSupportedThinkingLevels", so.get_supported_thinking_levels, min_cases=150)
    _check("clampThinkingLevel", so.clamp_thinking_level, min_cases=400)


def test_user_agent() -> None:
    """Recorded on this machine: equal here; elsewhere the same structure from this machine's facts."""
    recorded = json.loads(UA_GOLDEN.read_text())
    ua = so.pi_user_agent()
    if (recorded["platform"], recorded["release"], recorded["machine"]) == (
        platform.system().lower(),
        platform.release(),
        platform.machine(),
    ):
        assert ua == recorded["userAgent"]
        assert CASES["userAgent"][0]["result"]["ok"] in (ua, recorded["userAgent"])
    node_platform = {"linux": "linux", "darwin": "darwin", "windows": "win32"}.get(
        platform.system().lower(), platform.system().lower()
    )
    assert re.fullmatch(rf"pi \({re.escape(node_platform)} \S.*; [a-z0-9]+\)", ua), ua
    assert os.uname().release in ua if hasattr(os, "uname") else True


# ---------------------------------------------------------------- error-body


def _js_error(spec: dict[str, Any]) -> Any:
    if "throwValue" in spec:
        return spec["throwValue"]
    f = spec.get("fields", {})
    return sc.JsError(
        message=spec["message"],
        status=f.get("status", sc.UNDEFINED) if "status" in f else sc.UNDEFINED,
        error=f["error"] if "error" in f else sc.UNDEFINED,
        body=f["body"] if "body" in f else sc.UNDEFINED,
        status_code=f["statusCode"] if "statusCode" in f else sc.UNDEFINED,
        metadata=f["$metadata"] if "$metadata" in f else sc.UNDEFINED,
        response=f["$response"] if "$response" in f else sc.UNDEFINED,
    )


def test_normalize_and_format_provider_error_golden() -> None:
    _check("normalizeError", lambda spec: sc.normalize_provider_error(_js_error(spec)), min_cases=20)
    _check(
        "formatError",
        lambda spec, prefix: sc.format_provider_error(sc.normalize_provider_error(_js_error(spec)), prefix),
        min_cases=60,
    )
    _check("truncateErrorText", sc.truncate_error_text)
    _check("safeJsonStringify", sc.safe_json_stringify)


def _response(spec: dict[str, Any]) -> dict[str, Any]:
    body = spec["body"]
    content: Any = base64.b64decode(body["b64"]) if "b64" in body else body["text"]
    return {"status": spec["status"], "headers": spec["headers"], "body": content}


async def _python_sdk_error(family: str, response: dict[str, Any]) -> BaseException | None:
    import anthropic
    import httpx
    import openai

    http: Any
    if "reject" in response:
        # the request fails before an answer: no connection, or no answer within the timeout
        import httpx2

        mod: Any = httpx2 if family == "anthropic" else httpx
        kind = mod.ConnectError if response["reject"] == "connect" else mod.ConnectTimeout

        def fail(q: Any) -> Any:
            raise kind("simulated", request=q)

        http = mod.AsyncClient(transport=mod.MockTransport(fail))
    elif family == "anthropic":
        # the anthropic SDK takes only its own httpx2 clients: the same canned answer through one
        import httpx2

        r = _response(response)
        content = r["body"].encode("utf-8") if isinstance(r["body"], str) else r["body"]
        http = httpx2.AsyncClient(
            transport=httpx2.MockTransport(
                lambda q: httpx2.Response(r["status"], headers=r["headers"], content=content)
            )
        )
    else:
        http = httpx.AsyncClient(transport=CaptureTransport([_response(response)]))
    try:
        if family in ("openai", "openai-responses"):
            client = openai.AsyncOpenAI(
                api_key="sk-test", base_url="https://api.example.test/v1", http_client=http, max_retries=0
            )
            if family == "openai":
                s: Any = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            else:
                s = await client.responses.create(model="m", input="hi", stream=True)
        else:
            aclient = anthropic.AsyncAnthropic(
                api_key="sk-test", base_url="https://api.example.test", http_client=http, max_retries=0
            )
            s = await aclient.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=True
            )
        async for _ in s:
            pass
    except Exception as exc:
        return exc
    finally:
        await http.aclose()
    return None


def _describe(js: sc.JsError) -> dict[str, Any]:
    out: dict[str, Any] = {"message": js.message}
    out["status"] = None if isinstance(js.status, sc.Undefined) else js.status
    out["error"] = {"undefined": True} if isinstance(js.error, sc.Undefined) else js.error
    return out


# Where the Python SDKs themselves part from the JavaScript ones, so no adapter can agree:
# a stream event whose data is not JSON (the JS SDK throws JSON.parse's SyntaxError, whose V8 text
# Python's decoder does not produce).
# And a chunk whose `error` is an empty object: truthy in JavaScript (the JS SDK throws "{}"), falsy
# for the Python SDK (which yields the chunk).
KNOWN_SDK_GAPS = {"event: error\ndata: not json at all\n\n", 'data: {"error": {}}\n\n'}


def _error_cases() -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(response, {family: JS SDK error}, {api: pi-ai result}) per recorded error response."""
    by_response: dict[str, list[Any]] = {}
    for case in CASES["sdkError"] + CASES["piErrorMessage"]:
        key = json.dumps(case["args"][1], sort_keys=True)
        by_response.setdefault(key, [case["args"][1], {}, {}])
        slot = 1 if case["fn"] == "sdkError" else 2
        by_response[key][slot][case["args"][0]] = case["result"]["ok"]
    return [tuple(v) for v in by_response.values()]  # type: ignore[misc]


API_FAMILY = {
    "openai-completions": "openai",
    "openai-responses": "openai-responses",
    "anthropic-messages": "anthropic",
}


def test_python_sdk_errors_become_the_js_sdk_errors() -> None:
    cases = _error_cases()
    assert len(cases) >= 45
    compared = 0
    bad = []
    for response, js_errors, pi_results in cases:
        if response["body"].get("text") in KNOWN_SDK_GAPS and "reject" not in response:
            continue
        for family, js in js_errors.items():
            exc = asyncio.run(_python_sdk_error(family, response))
            compared += 1
            if js.get("noError"):
                if exc is not None:
                    bad.append((family, response, "python raised", repr(exc)))
                continue
            if exc is None:
                bad.append((family, response, "python did not raise", js))
                continue
            got = _describe(sc.js_shaped_error_from(exc))
            want = {"message": js["message"], "status": js.get("status"), "error": js.get("error")}
            if not _same(got, want):
                bad.append((family, response, got, want))
            for api, fam in API_FAMILY.items():
                # pi-ai's anthropic-messages reads the stream itself (an `error` event becomes
                # `new Error(data)`): only its HTTP status errors come from the SDK
                sdk_made = api != "anthropic-messages" or response.get("status", 999) >= 400
                if fam == family and api in pi_results and sdk_made:
                    want_text = pi_results[api]["errorMessage"]
                    got_text = sc.api_error_message(api, exc)
                    if got_text != want_text:
                        bad.append((api, response, got_text, want_text))
    assert compared >= 130
    assert not bad, f"{len(bad)} differ; first: {bad[:3]}"


def test_plain_httpx_failures_read_as_the_js_sdk_failures() -> None:
    """A provider on plain httpx stands where the JS SDK's fetch is: its connection failures and
    timeouts give the JS SDK's texts, and an HTTP status error reads as the SDK's status error."""
    import httpx

    want = {}
    for case in CASES["sdkError"]:
        response = case["args"][1]
        if "reject" in response and case["args"][0] == "openai":
            want[response["reject"]] = case["result"]["ok"]["message"]
    assert set(want) == {"connect", "timeout"}
    req = httpx.Request("POST", "https://api.example.test/v1/chat/completions")
    assert sc.js_shaped_error_from(httpx.ConnectError("refused", request=req)).message == want["connect"]
    for timeout in (httpx.ConnectTimeout, httpx.ReadTimeout, httpx.PoolTimeout):
        assert sc.js_shaped_error_from(timeout("slow", request=req)).message == want["timeout"]
    for response, js_errors, _pi in _error_cases():
        if "reject" in response or response["status"] < 400:
            continue
        r = _response(response)
        content = r["body"].encode("utf-8") if isinstance(r["body"], str) else r["body"]
        answer = httpx.Response(r["status"], headers=r["headers"], content=content, request=req)
        got = _describe(sc.js_shaped_error_from(httpx.HTTPStatusError("x", request=req, response=answer)))
        js = js_errors["openai"]
        assert _same(got, {"message": js["message"], "status": js.get("status"), "error": js.get("error")})
        family_error = sc.js_sdk_status_error("anthropic", r["status"], content)
        js = js_errors["anthropic"]
        assert _same(
            _describe(family_error),
            {"message": js["message"], "status": js.get("status"), "error": js.get("error")},
        )


# ---------------------------------------------------------------- small helpers


def test_short_hash_and_calculate_cost_golden() -> None:
    _check("shortHash", util.short_hash, min_cases=40)

    def cost(model: Any, usage: Any) -> Any:
        result = util.calculate_cost(model, usage)
        return {"cost": result, "usage": usage}

    _check("calculateCost", cost, min_cases=100)


def test_sanitize_surrogates_and_prompt_cache_key_golden() -> None:
    _check("sanitizeSurrogates", util.sanitize_surrogates)
    _check("clampOpenAIPromptCacheKey", util.clamp_openai_prompt_cache_key)


def test_constrained_sampling_golden() -> None:
    _check("makeStrictJsonSchema", util.make_strict_json_schema, min_cases=15)
    _check("getJsonSchemaToolParameters", util.get_json_schema_tool_parameters, min_cases=45)
    _check("resolveJsonSchemaStrictSampling", util.resolve_json_schema_strict_sampling, min_cases=100)
    _check("resolveGrammarConstrainedSampling", util.resolve_grammar_constrained_sampling, min_cases=16)
    _check("createGrammarToolInputProperties", util.create_grammar_tool_input_properties, min_cases=3)

    def deltas(prop: str, steps: list[Any]) -> list[Any]:
        buffer: dict[str, Any] = {"input": "", "started": False, "closed": False}
        return [
            _outcome(lambda n=n, c=c: util.append_grammar_tool_input_json_delta(buffer, prop, n, c))
            for n, c in steps
        ]

    _check("grammarDeltas", lambda prop, steps: deltas(prop, steps), min_cases=3)


def test_split_deferred_tools_golden() -> None:
    def run(ctx: Any, enabled: bool, lower: bool) -> Any:
        immediate, deferred = util.split_deferred_tools(ctx, enabled, str.lower if lower else util._identity)
        return {"immediate": immediate, "deferred": deferred}

    _check("splitDeferredTools", run, min_cases=50)


def test_provider_env_value_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(name: str, env: Any, process_env: Any) -> Any:
        if process_env is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, process_env)
        return util.get_provider_env_value(name, env)

    _check("getProviderEnvValue", run, min_cases=6)


def test_headers_to_record_golden() -> None:
    import httpx

    # as a response's raw header bytes (latin-1, as fetch's ByteString headers)
    def run(pairs: list[list[str]]) -> Any:
        return util.headers_to_record(
            httpx.Headers([(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs])
        )

    _check("headersToRecord", run, min_cases=3)


def test_provider_attribution_headers_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(model: Any, session: Any, sources: Any, telemetry_env: Any, setting: Any) -> Any:
        if telemetry_env is None:
            monkeypatch.delenv("PI_TELEMETRY", raising=False)
        else:
            monkeypatch.setenv("PI_TELEMETRY", telemetry_env)
        return util.provider_attribution_headers(model, session, *sources, telemetry=setting)

    _check("attributionHeaders", run, min_cases=60)


# ---------------------------------------------------------------- transform invariants (property)

_TRIPLES = [("p", "api-a", "m"), ("p", "api-a", "other"), ("q", "api-b", "m")]
_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)}),
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": st.sampled_from(["", " ", "t"])},
        optional={"thinkingSignature": st.sampled_from(["", "s"]), "redacted": st.booleans()},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "id": st.sampled_from(["a", "b|c", "d e"]),
            "name": st.just("t"),
            "arguments": st.just({}),
        },
        optional={"thoughtSignature": st.just("sig")},
    ),
)
_image = st.just({"type": "image", "data": "x", "mimeType": "image/png"})
_message = st.one_of(
    st.builds(
        lambda content: {"role": "user", "content": content, "timestamp": 1},
        st.one_of(
            st.text(max_size=3),
            st.lists(st.one_of(_image, st.just({"type": "text", "text": "u"})), max_size=3),
        ),
    ),
    st.builds(
        lambda triple, content, stop: {
            "role": "assistant",
            "provider": triple[0],
            "api": triple[1],
            "model": triple[2],
            "content": content,
            "stopReason": stop,
            "timestamp": 1,
        },
        st.sampled_from(_TRIPLES),
        st.lists(_block, max_size=4),
        st.sampled_from(["stop", "toolUse", "error", "aborted"]),
    ),
    st.builds(
        lambda call_id, content: {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "t",
            "content": content,
            "isError": False,
            "timestamp": 1,
        },
        st.sampled_from(["a", "b|c", "d e", "zz"]),
        st.lists(st.one_of(_image, st.just({"type": "text", "text": "r"})), max_size=3),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_message, max_size=10), st.booleans())
def test_transform_messages_invariants(messages: list[Any], vision: bool) -> None:
    """Whatever the history: no error/aborted turn survives; every surviving tool call is answered
    before the next user or assistant message; a text-only model sees no image; only the target
    model's own turns keep thinking, signatures and redacted blocks; ids are normalised for
    other models' calls and their results follow."""
    model = {"provider": "p", "api": "api-a", "id": "m", "input": ["text", "image"] if vision else ["text"]}
    out = tm.transform_messages(messages, model, NORMALIZERS["sanitize64"])
    pending: set[str] = set()
    for m in out:
        raw: dict[str, Any] = dict(m)
        role = raw["role"]
        if role in ("user", "assistant"):
            assert not pending, (pending, out)
        if role == "assistant":
            assert raw["stopReason"] not in ("error", "aborted")
            same = (raw["provider"], raw["api"], raw["model"]) == ("p", "api-a", "m")
            for b in raw["content"]:
                if not same:
                    assert b["type"] != "thinking" and "thoughtSignature" not in b
                    if b["type"] == "toolCall":
                        assert re.fullmatch(r"[a-zA-Z0-9_-]*", b["id"])
                if b["type"] == "toolCall":
                    pending.add(b["id"])
        elif role == "toolResult":
            pending.discard(raw["toolCallId"])
        if not vision and isinstance(raw.get("content"), list):
            assert all(b.get("type") != "image" for b in raw["content"])
    assert not pending
