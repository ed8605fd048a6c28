"""pi_nb's Gemini providers (``google-generative-ai``, ``google-vertex``) against pi-ai 0.85.0.

- Answers: what pi_nb records of each answer equals what pi-ai records
  (``tests/golden/wire_answers_google.json``, made by ``tests/golden/make_wire_answers_google.py``):
  recorded Gemini streams (thought signatures, thought summaries, function calls with and without
  ids or arguments, cached-token usage, a blocked prompt), HTTP error bodies, in-stream errors,
  streams cut short, finish reasons, provider retries. The final message, the event sequence and
  the number of requests.
- Requests: the body pi_nb sends has pi-ai's key order too (the wire test compares parsed JSON;
  here the text order of every Google case of the wire golden).
- Credentials: Vertex's application-default credentials against pi-ai's requests
  (``tests/golden/wire_google_adc.json``: a committed fake gcloud login, its token request
  answered in-process), pi-ai's texts for a missing project, location or credentials file, the
  key placeholders pi-ai treats as no key, a missing Gemini key, a key echoed in an error.
- models.json: Gemini and Vertex custom providers and an override of ``google``
  (``tests/golden/wire_google_models_json.json``).
- Aborts before and during the stream.

pi_nb's real providers run over an in-process transport (no Node, no network)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

GOLDEN_DIR = Path(__file__).parent / "golden"
FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(GOLDEN_DIR))
import make_wire_answers_google as answers  # noqa: E402

GOLDEN = json.loads((GOLDEN_DIR / "wire_answers_google.json").read_text(encoding="utf-8"))
CASES = {c["name"]: c for c in answers.cases()}
_GENERATED_ID = re.compile(r"^(.*)_(\d{13})_(\d+)$")


@pytest.fixture(autouse=True)
def _fake_keys() -> Any:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    env = wire_cases.fake_env({p: list(provider_api_key_env(p)) for p in list_providers()})
    names = [*env, "PI_CACHE_RETENTION", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"]
    names += ["GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_VERTEX_BASE_URL"]
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(env)
    for k in names[len(env) :]:
        os.environ.pop(k, None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


async def _collect(model: Any, ctx: dict[str, Any], level: str) -> tuple[Any, list[list[Any]]]:
    from pi_nb.providers.base import Context, StreamOptions

    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)
    events: list[list[Any]] = []
    final = None
    async for event in model.stream(Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), options):
        idx = event.get("contentIndex")
        if events and events[-1][0] == event["type"] and events[-1][1] == idx:
            events[-1][2] += 1
        else:
            events.append([event["type"], idx, 1])
        if event["type"] == "done":
            final = event["message"]
        elif event["type"] == "error":
            final = event["error"]
    return final, events


def _run(case: dict[str, Any]) -> tuple[list[dict[str, Any]], Any, list[list[Any]]]:
    from pi_nb.providers.catalog import find_model
    from pi_nb.providers.registry import get_model

    spec = find_model(case["provider"], case["model"])
    assert spec is not None
    transport = CaptureTransport(case["responses"])
    model = get_model(
        f"{case['provider']}/{case['model']}", transport=transport, max_retries=case["max_retries"]
    )
    ctx = answers.context_for(dict(spec.raw), case["conversation"])
    final, events = asyncio.run(_collect(model, ctx, case["level"]))
    return transport.requests, final, events


def _clean(message: Any) -> Any:
    """The message as compared: timestamp 0, and a generated tool-call id (``{name}_{ms}_{n}``)
    checked for its shape and kept by name only (the clock and pi-ai's process-wide counter differ)."""
    out = json.loads(json.dumps({**message, "timestamp": 0}))
    for block in out.get("content") or []:
        if block.get("type") == "toolCall":
            match = _GENERATED_ID.match(str(block.get("id")))
            if match:
                block["id"] = f"{match.group(1)}_<ms>_<n>"
    return out


def test_the_golden_has_every_case() -> None:
    assert set(GOLDEN) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pi_nb_records_what_pi_ai_records(name: str) -> None:
    want = GOLDEN[name]
    requests, message, events = _run(CASES[name])
    assert len(requests) == want["requests"]
    if "request" in want:  # a grammar tool, a strict JSON-schema tool; a tool a result adds
        from pi_nb.providers.simple_options import pi_user_agent

        assert wire_cases.comparable(requests[0], pi_user_agent()) == want["request"]
        assert json.dumps(json.loads(requests[0]["body"])) == json.dumps(want["request"]["body"])
    assert _clean(message) == _clean(want["message"])
    assert events == want["events"]


def test_generated_tool_call_ids_count_up() -> None:
    """pi-ai's ``{name}_{Date.now()}_{++counter}`` for calls Gemini sends without an id (or with a
    repeated one): the clock in milliseconds, the counter shared by the module's turns."""
    from pi_nb.providers.google_generative_ai import GoogleGenerativeAIModel

    case = CASES["google-generative-ai|calls_with_ids_and_duplicates|google/gemini-2.5-flash|tools|off"]
    start = GoogleGenerativeAIModel.tool_call_counter.value
    _, message, _ = _run(case)
    ids = [b["id"] for b in message["content"] if b["type"] == "toolCall"]
    assert ids[0] == "call-1"
    first = _GENERATED_ID.match(ids[1])
    second = _GENERATED_ID.match(ids[2])
    assert first is not None and second is not None
    assert (first.group(1), second.group(1)) == ("read", "write")
    assert (int(first.group(3)), int(second.group(3))) == (start + 1, start + 2)


# ---------------------------------------------------------------- request text order


def _google_golden() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for api in ("google-generative-ai", "google-vertex"):
        with gzip.open(GOLDEN_DIR / f"wire_requests_{api}.jsonl.gz", "rt", encoding="utf-8") as f:
            out.update((d["name"], d) for d in map(json.loads, f))
    return out


def test_request_bodies_have_pi_ais_key_order() -> None:
    """Every Google case of the wire golden (every 7th: the wire test covers all of them as JSON):
    the body text, keys in order, equals pi-ai's."""
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model

    golden = _google_golden()
    cases = [c for c in wire_cases.all_cases() if c[1]["api"].startswith("google-")][::7]
    assert len(cases) > 80
    for name, model_raw, conversation, level in cases:
        transport = CaptureTransport([wire_cases.canned_response(model_raw["api"])])
        model = get_model(f"{model_raw['provider']}/{model_raw['id']}", transport=transport)
        ctx = wire_cases.context_for(model_raw, conversation)
        asyncio.run(_collect(model, ctx, level))
        got = json.dumps(json.loads(transport.requests[0]["body"]))
        want = json.dumps(golden[name]["requests"][0]["body"])
        assert got == want, name
        opts = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)
        built = model.build_request(Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), opts)
        assert json.dumps(built) == want, name


# ---------------------------------------------------------------- credentials


def _ok() -> dict[str, Any]:
    return wire_cases.canned_response("google-vertex")


def _vertex(transport: CaptureTransport, model_id: str = "gemini-2.5-flash") -> Any:
    from pi_nb.providers.registry import get_model

    return get_model(f"google-vertex/{model_id}", transport=transport)


def _tools_ctx(api: str = "google-vertex") -> dict[str, Any]:
    return wire_cases.context_for(
        {"provider": "google-vertex", "api": api, "id": "gemini-2.5-flash"}, "tools"
    )


ADC_GOLDEN = json.loads((GOLDEN_DIR / "wire_google_adc.json").read_text(encoding="utf-8"))
ADC_CASES = {c["name"]: c for c in answers.adc_cases()}


def _auth_library_masked(request: dict[str, Any]) -> dict[str, Any]:
    """The token request's client labels name the auth library and runtime
    (``google-api-nodejs-client/10.6.2``, ``gl-node/22``): masked on both sides."""
    if request["url"] == "https://oauth2.googleapis.com/token":
        headers = {**request["headers"], "user-agent": "<auth library>", "x-goog-api-client": "<runtime>"}
        return {**request, "headers": headers}
    return request


def test_the_adc_golden_has_every_case() -> None:
    assert set(ADC_GOLDEN) == set(ADC_CASES)


@pytest.mark.parametrize("name", sorted(ADC_CASES))
def test_vertex_application_default_credentials_as_pi_ai(name: str) -> None:
    """No Vertex key: the gcloud login's refresh token is exchanged for an access token (over the
    model's transport, the form as google-auth-library sends it) and sent as a bearer token, with
    the login's quota project, to the location's endpoint; a refused token fails the turn with the
    OAuth error code."""
    from pi_nb.providers.catalog import find_model
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    case = ADC_CASES[name]
    want = ADC_GOLDEN[name]
    os.environ.pop("GOOGLE_CLOUD_API_KEY", None)
    os.environ.update(case["env"])
    os.environ["GOOGLE_APPLICATION_CREDENTIALS"] = str(Path(__file__).parents[1] / answers.ADC_FILE)
    spec = find_model(case["provider"], case["model"])
    assert spec is not None
    transport = CaptureTransport(case["responses"])
    model = get_model(f"{case['provider']}/{case['model']}", transport=transport)
    message, events = asyncio.run(
        _collect(model, wire_cases.context_for(dict(spec.raw), case["conversation"]), case["level"])
    )
    got = [_auth_library_masked(wire_cases.comparable(q, pi_user_agent())) for q in transport.requests]
    assert got == [_auth_library_masked(q) for q in want["requests"]]
    assert _clean(message) == _clean(want["message"])
    assert events == want["events"]


def test_vertex_adc_file_missing() -> None:
    """A ``$GOOGLE_APPLICATION_CREDENTIALS`` that names no file: Node's ``readFile`` error, as pi-ai
    shows it."""
    os.environ.pop("GOOGLE_CLOUD_API_KEY", None)
    os.environ.update(
        GOOGLE_APPLICATION_CREDENTIALS="/nonexistent/adc.json",
        GOOGLE_CLOUD_PROJECT="p",
        GOOGLE_CLOUD_LOCATION="us-central1",
    )
    transport = CaptureTransport([_ok()])
    message, _ = asyncio.run(_collect(_vertex(transport), _tools_ctx(), "off"))
    assert message["errorMessage"] == "ENOENT: no such file or directory, open '/nonexistent/adc.json'"
    assert transport.requests == []


@pytest.mark.parametrize(
    ("env", "text"),
    [
        (
            {"GOOGLE_CLOUD_LOCATION": "us-central1"},
            "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options.",
        ),
        (
            {"GOOGLE_CLOUD_PROJECT": "p"},
            "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options.",
        ),
    ],
)
def test_vertex_without_key_needs_project_and_location(env: dict[str, str], text: str) -> None:
    os.environ.pop("GOOGLE_CLOUD_API_KEY", None)
    os.environ.update(env)
    transport = CaptureTransport([_ok()])
    message, events = asyncio.run(_collect(_vertex(transport), _tools_ctx(), "off"))
    assert (message["stopReason"], message["errorMessage"]) == ("error", text)
    assert events == [["error", None, 1]]
    assert transport.requests == []


@pytest.mark.parametrize("key", ["<authenticated>", "gcp-vertex-credentials", "  "])
def test_vertex_placeholder_keys_are_no_key(key: str) -> None:
    """pi-ai's ``<...>`` placeholder and credentials marker mean "use ADC", as a blank key does."""
    os.environ["GOOGLE_CLOUD_API_KEY"] = key
    from pi_nb.providers.google_vertex import GoogleVertexModel

    model = _vertex(CaptureTransport([_ok()]))
    assert isinstance(model, GoogleVertexModel)
    assert model._api_key({"apiKey": key}) is None
    assert model._api_key({"apiKey": " AIzaKey "}) == "AIzaKey"


def test_gemini_without_key() -> None:
    from pi_nb.providers.registry import get_model

    os.environ.pop("GEMINI_API_KEY", None)
    transport = CaptureTransport([_ok()])
    model = get_model("google/gemini-2.5-flash", transport=transport)
    message, _ = asyncio.run(_collect(model, _tools_ctx("google-generative-ai"), "off"))
    assert message["errorMessage"] == "No API key for provider: google"
    assert transport.requests == []


def test_error_text_redacts_the_key() -> None:
    """A server that echoes the key in its error body: the recorded text has it redacted."""
    from pi_nb.providers.registry import get_model

    os.environ["GEMINI_API_KEY"] = "AIzaSy-secret-key-123"
    body = json.dumps(
        {
            "error": {
                "code": 400,
                "message": "API key AIzaSy-secret-key-123 not valid",
                "status": "INVALID_ARGUMENT",
            }
        }
    )
    transport = CaptureTransport(
        [{"status": 400, "headers": {"content-type": "application/json"}, "body": body}]
    )
    model = get_model("google/gemini-2.5-flash", transport=transport)
    message, _ = asyncio.run(_collect(model, _tools_ctx("google-generative-ai"), "off"))
    assert "AIzaSy-secret-key-123" not in message["errorMessage"]
    assert "[redacted API key]" in message["errorMessage"]
    assert transport.requests[0]["headers"]["x-goog-api-key"] == "AIzaSy-secret-key-123"


def test_provider_classes_declare_module_and_extra() -> None:
    from pi_nb.providers.google_generative_ai import GoogleGenerativeAIModel
    from pi_nb.providers.google_vertex import GoogleVertexModel

    assert (GoogleGenerativeAIModel.sdk_module, GoogleGenerativeAIModel.extra) == (
        "httpx",
        "google-generative-ai",
    )
    assert (GoogleVertexModel.sdk_module, GoogleVertexModel.extra) == ("google.auth", "google-vertex")


class _Signal:
    def __init__(self) -> None:
        self.aborted = False


@pytest.mark.parametrize("spec", ["google/gemini-2.5-flash", "google-vertex/gemini-2.5-flash"])
def test_abort_before_and_during_the_stream(spec: str) -> None:
    """An aborted signal before the request: pi-ai's ``Request aborted`` (nothing sent); during the
    stream: the fetch's ``This operation was aborted``; both ``stopReason: "aborted"``."""
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model

    body = answers._sse(
        [answers._chunk([{"text": "one"}]), answers._chunk([{"text": " two"}], "STOP", answers.USAGE)]
    )
    ctx = _tools_ctx(spec.split("/")[0] if "vertex" in spec else "google-generative-ai")
    context = Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools"))

    async def run(abort_at: str | None, transport: CaptureTransport) -> tuple[Any, list[str]]:
        signal = _Signal()
        if abort_at == "before":
            signal.aborted = True
        model = get_model(spec, transport=transport)
        seen: list[str] = []
        final = None
        async for event in model.stream(context, StreamOptions(signal=signal)):
            seen.append(event["type"])
            if event["type"] == "text_delta" and abort_at == "delta":
                signal.aborted = True
            if event["type"] in ("done", "error"):
                final = event.get("message") or event.get("error")
        return final, seen

    before = CaptureTransport([{"status": 200, "headers": answers.SSE, "body": body}])
    message, seen = asyncio.run(run("before", before))
    assert (message["stopReason"], message["errorMessage"], seen, before.requests) == (
        "aborted",
        "Request aborted",
        ["error"],
        [],
    )
    during = CaptureTransport([{"status": 200, "headers": answers.SSE, "body": body}])
    message, seen = asyncio.run(run("delta", during))
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", "This operation was aborted")
    assert seen[-1] == "error" and "done" not in seen


MODELS_JSON_GOLDEN = json.loads((GOLDEN_DIR / "wire_google_models_json.json").read_text(encoding="utf-8"))


def test_the_models_json_golden_has_every_case() -> None:
    assert set(MODELS_JSON_GOLDEN) == {f"{s}|{c}|{lv}" for s, _, c, lv in answers.MODELS_JSON_CASES}


@pytest.mark.parametrize(("spec", "api", "conversation", "level"), answers.MODELS_JSON_CASES)
def test_models_json_gemini_and_vertex_providers(
    spec: str, api: str, conversation: str, level: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini and Vertex models of an agent dir's ``models.json`` (a proxy's base URL with its
    version, a Vertex base URL used as a collection with and without a version, a literal key,
    provider and model headers, an override of the built-in ``google``): pi-ai's request."""
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    (tmp_path / "models.json").write_text(json.dumps(answers.MODELS_JSON))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    for name, value in answers.MODELS_JSON_ENV.items():
        monkeypatch.setenv(name, value)
    want = MODELS_JSON_GOLDEN[f"{spec}|{conversation}|{level}"]
    provider, mid = spec.split("/", 1)
    transport = CaptureTransport([wire_cases.canned_response(api)])
    model = get_model(spec, transport=transport)
    ctx = wire_cases.context_for({"provider": provider, "api": api, "id": mid}, conversation)
    message, _ = asyncio.run(_collect(model, ctx, level))
    assert [wire_cases.comparable(q, pi_user_agent()) for q in transport.requests] == want["requests"]
    assert _clean(message) == _clean(want["message"])


async def _final(model: Any, context: Any, options: Any) -> Any:
    final = None
    async for event in model.stream(context, options):
        if event["type"] in ("done", "error"):
            final = event.get("message") or event.get("error")
    return final


LEVELS_GOLDEN = json.loads((GOLDEN_DIR / "wire_google_levels.json").read_text(encoding="utf-8"))
LEVEL_CASES = {c["name"]: c for c in answers.level_cases()}


def test_the_levels_golden_has_every_case() -> None:
    assert set(LEVELS_GOLDEN) == set(LEVEL_CASES)


def test_every_model_at_every_level() -> None:
    """Every Google catalog model at every thinking level Pi offers, and with Pi's custom thinking
    budgets: the ``generationConfig`` pi-ai sends (levels clamped to the model's, mapped to Gemini
    3 / Gemma 4 thinking levels or Gemini 2.5 budgets) and the message it records."""
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model

    failures = []
    for name, case in LEVEL_CASES.items():
        transport = CaptureTransport([wire_cases.canned_response(case["api"])])
        model = get_model(f"{case['provider']}/{case['model']}", transport=transport)
        ctx = wire_cases.context_for(
            {"provider": case["provider"], "api": case["api"], "id": case["model"]}, "tools"
        )
        extra = {"thinking_budgets": case["budgets"]} if case["budgets"] else {}
        options = StreamOptions(reasoning=case["level"], session_id=wire_cases.SESSION_ID, extra=extra)

        context = Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools"))
        message = asyncio.run(_final(model, context, options))
        want = LEVELS_GOLDEN[name]
        got_config = (
            json.loads(transport.requests[0]["body"]).get("generationConfig") if transport.requests else None
        )
        if json.dumps(got_config) != json.dumps(want["generationConfig"]) or _clean(message) != _clean(
            want["message"]
        ):
            failures.append(f"{name}: {got_config} != {want['generationConfig']}")
    assert not failures, "\n".join(failures[:10])


def test_vertex_without_any_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, no credentials file, no gcloud login, not on Google Cloud: google-auth-library's
    text, as pi-ai shows it (the metadata-server probe is skipped here: ``NO_GCE_CHECK``)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    os.environ.pop("GOOGLE_CLOUD_API_KEY", None)
    os.environ.update(GOOGLE_CLOUD_PROJECT="p", GOOGLE_CLOUD_LOCATION="us-central1")
    transport = CaptureTransport([_ok()])
    message, _ = asyncio.run(_collect(_vertex(transport), _tools_ctx(), "off"))
    assert message["errorMessage"] == (
        "Could not load the default credentials. Browse to "
        "https://cloud.google.com/docs/authentication/getting-started for more information."
    )
    assert transport.requests == []
