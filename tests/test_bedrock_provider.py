"""Amazon Bedrock (``bedrock-converse-stream``) against pi-ai 0.85.0.

* Answers: recorded ConverseStream answers (pydantic-ai's cassettes) and error answers built
  after AWS's documented shapes (``tests/fixtures/bedrock/``) replayed to pi_nb equal what pi-ai
  makes of them (``tests/golden/bedrock_answers.json``, ``tests/golden/make_bedrock_answers.py``):
  the message (text, reasoning with signatures or redacted payloads, tool calls, stop reason,
  usage with cache reads and writes, cost, error text, diagnostics), the events, and the requests
  (the SDK's retries of throttling and 5xx answers).
* Signed requests: with AWS keys, a session token, a profile in the AWS files, a region from the
  environment or the profile, skip-auth, under a fixed clock: URL, body and headers equal pi-ai's
  (SigV4 signs HTTP/2's ``:authority`` in the JavaScript SDK, ``host`` here: the signed-header
  lists differ by that name only), and botocore's signer reproduces the JavaScript SDK's
  signature from its own request.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import itertools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import wire_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_capture import CaptureTransport

pytest.importorskip("botocore")

import aws_eventstream
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from pi_nb.providers import bedrock_converse_stream as bcs
from pi_nb.providers.base import Context, StreamOptions
from pi_nb.providers.catalog import find_model, list_models
from pi_nb.providers.registry import SPOKEN_APIS, get_model

HERE = Path(__file__).parent
ANSWERS = json.loads((HERE / "fixtures" / "bedrock" / "answers.json").read_text())
GOLDEN = json.loads((HERE / "golden" / "bedrock_answers.json").read_text())
FIXED = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
FIXED_UUID = "3f2b8c1e-9d4a-4e6b-8f1c-2a7d5e9b0c34"
CONFIG_FILES = {
    "config": "[profile pi]\nregion = ap-southeast-2\n\n[profile bare]\n",
    "credentials": "[pi]\naws_access_key_id = AKIDPROFILE0000000001\naws_secret_access_key = "
    "profileSecretKey0000000000000000000000\n\n[bare]\naws_access_key_id = AKIDBARE000000000001\n"
    "aws_secret_access_key = bareSecret\n",
}


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """No AWS setting of this machine: the AWS files are the test's, no retry waits."""
    import os

    for name in list(os.environ):
        if name.startswith("AWS_") or name == "PI_CACHE_RETENTION":
            monkeypatch.delenv(name)
    for name, text in CONFIG_FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))

    async def no_wait(_seconds: float) -> None:
        return None

    monkeypatch.setattr(bcs, "_retry_sleep", no_wait)
    return monkeypatch


def _responses(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "status": r["status"],
            "headers": r.get("headers") or {},
            "body": base64.b64decode(r.get("bodyB64") or ""),
        }
        for r in raw
    ]


def _run(model_id: str, level: str, transport: Any) -> tuple[Any, list[list[Any]]]:
    spec = find_model("amazon-bedrock", model_id)
    assert spec is not None
    model = get_model(f"amazon-bedrock/{model_id}", transport=transport)
    ctx = wire_cases.context_for(dict(spec.raw), "tools")
    context = Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools"))
    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)

    async def go() -> tuple[Any, list[list[Any]]]:
        final = None
        events: list[list[Any]] = []
        async for event in model.stream(context, options):
            index = event.get("contentIndex")
            if events and events[-1][0] == event["type"] and events[-1][1] == index:
                events[-1][2] += 1
            else:
                events.append([event["type"], index, 1])
            if event["type"] == "done":
                final = event["message"]
            elif event["type"] == "error":
                final = event["error"]
        return final, events

    return asyncio.run(go())


def _clean(message: Any) -> Any:
    out = json.loads(json.dumps({**message, "timestamp": 0}))
    for diagnostic in out.get("diagnostics") or []:
        diagnostic["timestamp"] = 0
    return out


@pytest.mark.parametrize("name", sorted(GOLDEN["answers"]))
def test_answer_equals_pi_ai(name: str, aws_env: Any) -> None:
    answer = ANSWERS[name]
    want = GOLDEN["answers"][name]
    aws_env.setenv("AWS_BEARER_TOKEN_BEDROCK", wire_cases.FAKE_ENV_VALUE)
    transport = CaptureTransport(_responses(answer["responses"]))
    message, events = _run(answer["model"], answer["level"], transport)
    assert _clean(message) == _clean(want["message"])
    assert events == want["events"]
    got = [wire_cases.comparable(q) for q in transport.requests]
    assert json.dumps(got) == json.dumps(want["requests"])  # (with the body's key order)


def _authorization(value: str) -> dict[str, str]:
    scheme, _, rest = value.partition(" ")
    if scheme == "Bearer":
        return {"scheme": scheme, "token": rest}
    parts = dict(p.strip().split("=", 1) for p in rest.split(","))
    return {"scheme": scheme, **parts}


def _js_host(headers: dict[str, str]) -> str:
    return headers[":authority"]


@pytest.mark.parametrize("name", sorted(GOLDEN["signed"]))
def test_signed_request_equals_pi_ai(name: str, aws_env: Any) -> None:
    want = GOLDEN["signed"][name]
    for key, value in want["env"].items():
        aws_env.setenv(key, value)
    aws_env.setattr(botocore.auth, "get_current_datetime", lambda: FIXED.replace(tzinfo=None))
    aws_env.setattr(bcs, "_invocation_id", lambda: FIXED_UUID)
    answer = ANSWERS["nova_text"]
    transport = CaptureTransport(_responses(answer["responses"]))
    message, _ = _run(want["model"], want["level"], transport)
    assert _clean(message) == _clean(want["message"])
    if not want["requests"]:  # pi-ai failed before sending (no region): so does pi_nb
        assert transport.requests == []
        return
    (got,) = transport.requests
    (exp,) = want["requests"]
    assert got["url"] == exp["url"] and got["method"] == exp["method"]
    assert json.dumps(json.loads(got["body"])) == json.dumps(exp["body"])
    g = {
        k: v
        for k, v in got["headers"].items()
        if k not in ("host", "user-agent", "x-amz-user-agent", "accept-encoding", "connection")
    }
    e = {k: v for k, v in exp["headers"].items() if k not in (":authority", "user-agent", "x-amz-user-agent")}
    assert got["headers"]["host"] == _js_host(exp["headers"])
    g_auth, e_auth = _authorization(g.pop("authorization")), _authorization(e.pop("authorization"))
    assert g == e
    if e_auth["scheme"] == "Bearer":
        assert g_auth == e_auth
        return
    assert g_auth["Credential"] == e_auth["Credential"]
    assert g_auth["SignedHeaders"] == e_auth["SignedHeaders"].replace(":authority;", "").replace(
        "content-type;", "content-type;host;"
    )
    # botocore's signer, given the JavaScript SDK's request, makes its signature
    assert _botocore_signature(exp, want["env"], e_auth) == e_auth["Signature"]


class _ListedHeadersSigV4(botocore.auth.SigV4Auth):
    """SigV4 over exactly the headers a JavaScript signature lists (``:authority``, no ``host``)."""

    def __init__(self, credentials: Any, region: str, names: list[str]) -> None:
        super().__init__(credentials, "bedrock", region)
        self.names = names

    def headers_to_sign(self, request: Any) -> Any:
        from botocore.compat import HTTPHeaders

        out = HTTPHeaders()
        for name in self.names:
            out[name] = request.headers[name]
        return out


def _botocore_signature(exp: dict[str, Any], env: dict[str, str], auth: dict[str, str]) -> str:
    key_id, _date, region, _service, _ = auth["Credential"].split("/")
    secrets = {
        "AKIDEXAMPLE000000001": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIDPROFILE0000000001": "profileSecretKey0000000000000000000000",
        "dummy-access-key": "dummy-secret-key",
    }
    credentials = Credentials(key_id, secrets[key_id], env.get("AWS_SESSION_TOKEN"))
    headers = {k: v for k, v in exp["headers"].items() if k != "authorization"}
    body = json.dumps(exp["body"], ensure_ascii=False, separators=(",", ":")).encode()
    assert str(len(body)) == headers["content-length"]
    request = AWSRequest(method="POST", url=exp["url"], data=body, headers=headers)
    signer = _ListedHeadersSigV4(credentials, region, auth["SignedHeaders"].split(";"))
    request.context["timestamp"] = headers["x-amz-date"]
    canonical = signer.canonical_request(request)
    signature: str = signer.signature(signer.string_to_sign(request, canonical), request)
    return signature


# ---------------------------------------------------------------------------- the stream, chunked


class _ChunkedTransport(httpx.AsyncBaseTransport):
    """Answers with one body cut into the given pieces (the stream reader must not care)."""

    def __init__(self, body: bytes, cuts: list[int]) -> None:
        self.body = body
        self.cuts = sorted(set(cuts))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        edges = [0, *self.cuts, len(self.body)]
        pieces = [self.body[a:b] for a, b in itertools.pairwise(edges) if b > a]

        class Body(httpx.AsyncByteStream):
            async def __aiter__(self) -> Any:
                for piece in pieces:
                    yield piece

        return httpx.Response(
            200, headers={"x-amzn-requestid": "req-stream-1"}, stream=Body(), request=request
        )


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=20_000), max_size=12))
def test_a_stream_reads_the_same_however_it_is_chunked(cuts: list[int]) -> None:
    import os

    saved = {k: os.environ.get(k) for k in ("AWS_BEARER_TOKEN_BEDROCK",)}
    os.environ["AWS_BEARER_TOKEN_BEDROCK"] = wire_cases.FAKE_ENV_VALUE
    try:
        answer = ANSWERS["claude_redacted_thinking"]
        body = base64.b64decode(answer["responses"][0]["bodyB64"])
        message, _events = _run(
            answer["model"], answer["level"], _ChunkedTransport(body, [c % len(body) for c in cuts])
        )
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert _clean(message) == _clean(GOLDEN["answers"]["claude_redacted_thinking"]["message"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["messageStart", "contentBlockDelta", "metadata"]),
            st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=30), max_size=4),
        ),
        max_size=6,
    )
)
def test_the_event_stream_encoder_is_what_botocore_parses(events: list[tuple[str, dict[str, str]]]) -> None:
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(aws_eventstream.stream(events))
    parsed = [(m.headers[":event-type"], json.loads(m.payload)) for m in buffer]
    assert parsed == events


# ---------------------------------------------------------------------------- the model object


def test_every_bedrock_catalog_model_runs() -> None:
    assert "bedrock-converse-stream" in SPOKEN_APIS
    models = [m for m in list_models("amazon-bedrock") if m.api == "bedrock-converse-stream"]
    assert len(models) == 121
    for spec in models:
        model = get_model(spec.key)
        assert isinstance(model, bcs.BedrockConverseStreamModel)
        assert (model.context_window, model.max_tokens, model.reasoning) == (
            spec.context_window,
            spec.max_tokens,
            spec.reasoning,
        )
        assert model.base_url == spec.base_url.rstrip("/")
    assert bcs.BedrockConverseStreamModel.sdk_module == "botocore"
    assert bcs.BedrockConverseStreamModel.extra == "bedrock-converse-stream"


def test_no_credentials_is_pis_error(aws_env: Any) -> None:
    aws_env.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    aws_env.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    aws_env.setenv("AWS_EC2_METADATA_DISABLED", "true")
    transport = CaptureTransport(_responses(ANSWERS["nova_text"]["responses"]))
    message, events = _run("amazon.nova-micro-v1:0", "off", transport)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Provider is not configured: amazon-bedrock"  # Pi's check
    assert events == [["error", None, 1]] and transport.requests == []


def test_an_inference_profile_arn_names_its_region(aws_env: Any) -> None:
    aws_env.setenv("AWS_REGION", "us-east-1")
    arn = "arn:aws:bedrock:eu-west-3:123456789012:application-inference-profile/abc123"
    model = bcs.BedrockConverseStreamModel(arn, base_url="https://bedrock-runtime.us-east-1.amazonaws.com")
    assert model._target(model.pi_ai_model(), {}) == (
        "https://bedrock-runtime.eu-west-3.amazonaws.com",
        "eu-west-3",
    )
    custom = bcs.BedrockConverseStreamModel("m", base_url="https://proxy.example/bedrock/")
    assert custom._target(custom.pi_ai_model(), {}) == ("https://proxy.example/bedrock", "us-east-1")


@pytest.mark.parametrize("case", GOLDEN["atob"], ids=lambda c: repr(c["input"]))
def test_atob_is_nodes(case: dict[str, str]) -> None:
    """Images and redacted reasoning are decoded as Node's ``atob`` decodes them (its errors too)."""
    try:
        got = {"ok": bcs._node_atob(case["input"]).hex()}
    except bcs._NamedError as error:
        got = {"err": error.message}
    assert {"input": case["input"], **got} == case


def test_tool_call_ids_keep_bedrocks_characters() -> None:
    assert bcs.normalize_tool_call_id("call_abc|fc/1.2") == "call_abc_fc_1_2"
    assert len(bcs.normalize_tool_call_id("x" * 100)) == 64


def test_an_aborted_signal_aborts_without_a_diagnostic(aws_env: Any) -> None:
    aws_env.setenv("AWS_BEARER_TOKEN_BEDROCK", wire_cases.FAKE_ENV_VALUE)

    class Aborted:
        aborted = True

    model = get_model(
        "amazon-bedrock/amazon.nova-micro-v1:0",
        transport=CaptureTransport(_responses(ANSWERS["nova_text"]["responses"])),
    )
    options = StreamOptions(signal=Aborted())

    async def go() -> Any:
        return [
            e
            async for e in model.stream(
                Context("s", [{"role": "user", "content": "hi", "timestamp": 0}]), options
            )
        ]

    (event,) = asyncio.run(go())
    assert event["type"] == "error" and event["reason"] == "aborted"
    assert event["error"]["errorMessage"] == "Request aborted" and "diagnostics" not in event["error"]


def test_a_dropped_connection_is_retried_as_the_sdk_retries_it(aws_env: Any) -> None:
    aws_env.setenv("AWS_BEARER_TOKEN_BEDROCK", wire_cases.FAKE_ENV_VALUE)
    body = base64.b64decode(ANSWERS["nova_text"]["responses"][0]["bodyB64"])

    class Flaky(httpx.AsyncBaseTransport):
        def __init__(self, failures: int) -> None:
            self.failures = failures
            self.attempts: list[str] = []

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            self.attempts.append(request.headers["amz-sdk-request"])
            if len(self.attempts) <= self.failures:
                raise httpx.ConnectError("connection refused", request=request)
            return httpx.Response(200, content=body, request=request)

    once = Flaky(1)
    message, _ = _run("amazon.nova-micro-v1:0", "off", once)
    assert message["stopReason"] == "stop"
    assert once.attempts == ["attempt=1; max=3", "attempt=2; max=3"]
    always = Flaky(5)
    message, _ = _run("amazon.nova-micro-v1:0", "off", always)
    assert (message["stopReason"], message["errorMessage"]) == ("error", "connection refused")
    assert len(always.attempts) == 3


def test_models_json_headers_are_sent_and_signed_but_never_the_reserved_ones(aws_env: Any) -> None:
    """pi-ai's custom-headers middleware: before signing, reserved names (``x-amz-*``,
    ``authorization``, ``host``) skipped."""
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE000000001")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    transport = CaptureTransport(_responses(ANSWERS["nova_text"]["responses"]))
    model = get_model("amazon-bedrock/amazon.nova-micro-v1:0", transport=transport)
    model.request_headers = lambda: {  # type: ignore[attr-defined]
        "X-Team": "pi",
        "x-amz-date": "19700101T000000Z",
        "Authorization": "Bearer nope",
        "Host": "evil.example",
    }

    async def go() -> Any:
        return [
            e async for e in model.stream(Context("s", [{"role": "user", "content": "hi", "timestamp": 0}]))
        ]

    events = asyncio.run(go())
    assert events[-1]["type"] == "done"
    (request,) = transport.requests
    headers = request["headers"]
    assert headers["x-team"] == "pi"
    assert headers["host"] == "bedrock-runtime.us-east-1.amazonaws.com"
    assert headers["x-amz-date"] != "19700101T000000Z"
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert "x-team" in _authorization(headers["authorization"])["SignedHeaders"].split(";")
