"""The wire, byte for byte: for every runnable catalog model x conversation x thinking level
(``tests/wire_cases.py``), pi_nb's request (url, method, headers, JSON body) and the message it
records of the canned answer equal what pi-ai 0.85.0 sends and records as Pi's agent calls it
(``tests/golden/wire_requests.jsonl.gz``, made by ``tests/golden/make_wire.py``).

Runs pi_nb's real providers (their SDKs and HTTP code) over an in-process capturing transport.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

GOLDEN = Path(__file__).parent / "golden" / "wire_requests.jsonl.gz"


def _golden() -> dict[str, dict[str, Any]]:
    """Every golden case: the first four APIs' file and one file per API added after them."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(GOLDEN.parent.glob("wire_requests*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            out.update((d["name"], d) for d in map(json.loads, f))
    return out


def _pi_nb_side(model_raw: dict[str, Any], conversation: str, level: str) -> tuple[list[dict[str, Any]], Any]:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    transport = CaptureTransport([wire_cases.canned_response(model_raw["api"])])
    model = get_model(f"{model_raw['provider']}/{model_raw['id']}", transport=transport)
    ctx = wire_cases.context_for(model_raw, conversation)
    context = Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools"))
    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)

    async def run() -> Any:
        final = None
        async for event in model.stream(context, options):
            if event["type"] == "done":
                final = event["message"]
            elif event["type"] == "error":
                final = event["error"]
        return final

    final = asyncio.run(run())
    ua = pi_user_agent()
    return [wire_cases.comparable(q, ua) for q in transport.requests], final


@pytest.fixture(scope="module")
def fake_keys() -> Any:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    env = wire_cases.fake_env({p: list(provider_api_key_env(p)) for p in list_providers()})
    saved = {
        k: os.environ.get(k)
        for k in [*env, "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "PI_CACHE_RETENTION"]
    }
    os.environ.update(env)
    for k in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "PI_CACHE_RETENTION"):
        os.environ.pop(k, None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _clean_message(message: Any) -> Any:
    if isinstance(message, dict):
        message = {**message, "timestamp": 0}
    return json.loads(json.dumps(message))


def test_golden_covers_the_runnable_catalog() -> None:
    golden = _golden()
    names = {c[0] for c in wire_cases.all_cases()}
    assert names == set(golden)


@pytest.mark.parametrize("api", wire_cases.RUN_APIS)
def test_every_request_equals_pi_ai(
    api: str, fake_keys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every case of one API. ``PI_NB_WIRE_STEP=N`` (development only) runs every N-th case."""
    golden = _golden()
    step = int(os.environ.get("PI_NB_WIRE_STEP", "1"))
    cases = [c for c in wire_cases.all_cases() if c[1]["api"] == api][::step]
    failures: Counter[str] = Counter()
    examples: dict[str, str] = {}
    # an agent dir of its own whose auth.json holds the Codex and Copilot sign-ins (and no real credential)
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "auth.json").write_text(json.dumps(wire_cases.pi_auth_json()))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    for name, model_raw, conversation, level in cases:
        want = golden[name]
        got_requests, got_message = _pi_nb_side(model_raw, conversation, level)
        for part, got, exp in (
            ("requests", got_requests, want["requests"]),
            ("message", _clean_message(got_message), _clean_message(want["message"])),
        ):
            # Bedrock's body is written by the AWS SDK in its schema's key order: compared as text
            ordered = api == "bedrock-converse-stream" and part == "requests"
            if got != exp or (ordered and json.dumps(got) != json.dumps(exp)):
                key = f"{conversation}:{part}"
                failures[key] += 1
                examples.setdefault(
                    key, f"{name}\n got: {json.dumps(got)[:2500]}\nwant: {json.dumps(exp)[:2500]}"
                )
    assert not failures, (
        f"{sum(failures.values())} of {len(cases)} cases differ: {dict(failures)}\n"
        + "\n\n".join(examples.values())
    )
