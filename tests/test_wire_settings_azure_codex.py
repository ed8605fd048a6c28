"""The settings the Azure and Codex providers read, as pi-ai 0.85.0 reads them
(``tests/golden/wire_settings_azure_codex.json``, made by
``tests/golden/make_wire_settings_azure_codex.py``): Azure's endpoint (``AZURE_OPENAI_BASE_URL``
normalised to ``/openai/v1`` on Azure hosts, or built from ``AZURE_OPENAI_RESOURCE_NAME``; the
errors without one or with an invalid one), ``AZURE_OPENAI_API_VERSION``,
``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``; the Codex sign-in token's account claim (``atob`` and
``JSON.parse`` of its payload, ``Failed to extract accountId from token``). Requests and the
recorded message, per variant."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

GOLDEN_DIR = Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN_DIR))
import make_wire_settings_azure_codex as settings  # noqa: E402

GOLDEN = json.loads((GOLDEN_DIR / "wire_settings_azure_codex.json").read_text(encoding="utf-8"))


def test_the_golden_has_every_variant() -> None:
    assert set(GOLDEN) == set(settings.VARIANTS) | set(settings.MODELS_JSON_VARIANTS)


@pytest.mark.parametrize("name", sorted(settings.VARIANTS))
def test_pi_nb_reads_the_settings_as_pi_ai(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.catalog import find_model, list_providers, provider_api_key_env
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    provider, model_id, level, changes, token = settings.VARIANTS[name]
    for key, value in wire_cases.fake_env(
        {p: list(provider_api_key_env(p)) for p in list_providers()}
    ).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    for key in ("AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_API_VERSION", "AZURE_OPENAI_DEPLOYMENT_NAME_MAP"):
        monkeypatch.delenv(key, raising=False)
    for key, change in changes.items():
        if change is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, change)
    if token is not None:
        monkeypatch.setenv(wire_cases.CODEX_TOKEN_ENV, token)
    spec = find_model(provider, model_id)
    assert spec is not None
    transport = CaptureTransport([wire_cases.canned_response(spec.api)])
    model = get_model(f"{provider}/{model_id}", transport=transport)
    ctx = wire_cases.context_for(dict(spec.raw), "history")
    options = StreamOptions(reasoning=None if level == "off" else level, session_id=wire_cases.SESSION_ID)
    message: Any = asyncio.run(
        model.complete(Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), options)
    )
    want = GOLDEN[name]
    assert [wire_cases.comparable(q, pi_user_agent()) for q in transport.requests] == want["requests"]
    assert json.loads(json.dumps({**message, "timestamp": 0})) == {**want["message"], "timestamp": 0}


@pytest.mark.parametrize("name", sorted(settings.MODELS_JSON_VARIANTS))
def test_a_models_json_base_url_is_read_as_pi_reads_it(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.catalog import find_model, list_providers, provider_api_key_env
    from pi_nb.providers.registry import get_model
    from pi_nb.providers.simple_options import pi_user_agent

    provider, model_id, models_json, changes = settings.MODELS_JSON_VARIANTS[name]
    for key, value in wire_cases.fake_env(
        {p: list(provider_api_key_env(p)) for p in list_providers()}
    ).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    for key, change in changes.items():
        if change is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, change)
    (tmp_path / "models.json").write_text(json.dumps(models_json), encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    spec = find_model(provider, model_id)
    assert spec is not None
    transport = CaptureTransport([wire_cases.canned_response(spec.api)])
    model = get_model(f"{provider}/{model_id}", transport=transport)
    ctx = wire_cases.context_for(dict(spec.raw), "tools")
    options = StreamOptions(session_id=wire_cases.SESSION_ID)
    message: Any = asyncio.run(
        model.complete(Context(ctx["systemPrompt"], ctx["messages"], ctx.get("tools")), options)
    )
    want = GOLDEN[name]
    assert [wire_cases.comparable(q, pi_user_agent()) for q in transport.requests] == want["requests"]
    assert json.loads(json.dumps({**message, "timestamp": 0})) == {**want["message"], "timestamp": 0}
