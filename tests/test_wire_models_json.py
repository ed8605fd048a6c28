"""Models from an agent dir's ``models.json`` (custom providers, overrides of built-in ones) on the
wire: pi_nb sends what pi-ai 0.85.0 sends for them as Pi's agent calls it: their URLs, keys (``$VAR``,
literal, ``!command``, ``authHeader``), provider, model and override headers, compat flags
(``tests/golden/wire_models_json.json.gz``, made by ``tests/golden/make_wire_models_json.py``)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

GOLDEN = json.loads(gzip.open(Path(__file__).parent / "golden" / "wire_models_json.json.gz", "rt").read())


def _api_of(provider: str, mid: str) -> str:
    if provider == "openrouter" and mid.startswith("anthropic/"):
        return "anthropic-messages"
    return {
        "corp-claude": "anthropic-messages",
        "corp-gpt": "openai-responses",
        "mistral": "mistral-conversations",
    }.get(provider, "openai-completions")


@pytest.fixture()
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    (tmp_path / "models.json").write_text(json.dumps(GOLDEN["modelsJson"]))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    for name, value in {
        **wire_cases.fake_env({p: list(provider_api_key_env(p)) for p in list_providers()}),
        **GOLDEN["env"],
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "PI_CACHE_RETENTION", "PI_TELEMETRY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["name"] for c in GOLDEN["cases"]])
def test_models_json_model_sends_what_pi_sends(case: dict[str, Any], agent_dir: Path) -> None:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    spec, conversation, level = case["name"].split("|")
    provider, mid = spec.split("/", 1)
    transport = CaptureTransport([wire_cases.canned_response(_api_of(provider, mid))])
    model = get_model(spec, transport=transport)
    ctx = wire_cases.context_for(
        {"provider": provider, "id": mid, "api": _api_of(provider, mid)}, conversation
    )
    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)

    async def run() -> Any:
        final = None
        async for event in model.stream(
            Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), options
        ):
            if event["type"] in ("done", "error"):
                final = event.get("message") or event.get("error")
        return final

    final = asyncio.run(run())
    got = [wire_cases.comparable(q, pi_user_agent()) for q in transport.requests]
    assert got == case["requests"]
    assert {**final, "timestamp": 0} == {**case["message"], "timestamp": 0}
