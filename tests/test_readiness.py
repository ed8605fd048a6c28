"""pi_nb.providers.readiness: whether a model can run now (its SDK package, its key)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pi_nb.providers import get_model
from pi_nb.providers.readiness import Readiness, _sdk_requirement, model_readiness


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MISTRAL_API_KEY", "OLLAMA_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _without(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """``package`` as if not installed: a ``None`` in ``sys.modules`` makes its import fail."""
    monkeypatch.setitem(sys.modules, package, None)


def test_a_model_without_its_key() -> None:
    r = model_readiness(get_model("openai/gpt-4o"))
    assert r == Readiness(
        False,
        key_env="OPENAI_API_KEY",
        message="openai/gpt-4o needs an API key in $OPENAI_API_KEY, which is not set",
    )
    assert not r
    r = model_readiness(get_model("anthropic/claude-sonnet-4-5"), "my-spec")
    assert r.key_env == "ANTHROPIC_API_KEY" and r.message.startswith("my-spec needs an API key")


@pytest.mark.parametrize("value", ["sk-test", "  sk-test  "])
def test_a_key_set_is_ready(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", value)
    assert model_readiness(get_model("openai/gpt-4o")) == Readiness(True)


def test_a_blank_key_is_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "   ")
    assert model_readiness(get_model("openai/gpt-4o")).key_env == "OPENAI_API_KEY"


def test_models_that_send_no_key_are_ready() -> None:
    assert model_readiness(get_model("offline")).ok
    assert model_readiness(get_model("scripted")).ok
    local = get_model("openai/gpt-4o").with_overrides(base_url="http://localhost:8000/v1")
    assert model_readiness(local).ok  # a server on this machine


def test_a_missing_sdk_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _without(monkeypatch, "openai")
    r = model_readiness(get_model("openai/gpt-4o"))
    assert (r.ok, r.package, r.extra, r.key_env) == (False, "openai", "openai", None)
    assert r.message == (
        "openai/gpt-4o needs the openai package, which is not installed — pip install 'pi_nb[openai]'"
    )


def test_the_sdk_is_checked_before_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "openai")
    assert model_readiness(get_model("openai/gpt-4o")).package == "openai"


def test_sdk_requirements() -> None:
    assert _sdk_requirement("openai-completions") == ("openai", "openai")
    assert _sdk_requirement("openai-responses") == ("openai", "openai")
    assert _sdk_requirement("anthropic-messages") == ("httpx", "anthropic")
    assert _sdk_requirement("scripted") is None


def _clear_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    names = {n for p in list_providers() for n in provider_api_key_env(p)}
    names |= {
        "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "OPENAI_CODEX_ACCESS_TOKEN", "CLOUDFLARE_ACCOUNT_ID",
        "CLOUDFLARE_GATEWAY_ID", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
    }  # fmt: skip
    for name in names:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no gcloud credentials file, no ~/.aws
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))  # no auth.json


def test_every_catalog_model_runs_or_names_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Without any credential, each catalog model is refused for exactly one named reason: a key
    variable, a sign-in, AWS's or Google's credentials, or a setting its URL needs."""
    from pi_nb.providers.catalog import list_models
    from pi_nb.providers.readiness import spec_readiness

    _clear_credentials(monkeypatch, tmp_path)
    reasons = {
        "key": "needs an API key in $",
        "sign-in": "needs a sign-in: %pi login ",
        "aws": "needs AWS credentials: $AWS_PROFILE",
        "google": "application-default credentials",
        "setting": "the base URL",
        "sdk": "package, which is not installed",
    }
    seen: dict[str, int] = {}
    for spec in list_models():
        ready = spec_readiness(spec)
        assert not ready.ok, spec.key
        kinds = [k for k, text in reasons.items() if text in ready.message]
        assert len(kinds) == 1, (spec.key, ready.message)
        seen[kinds[0]] = seen.get(kinds[0], 0) + 1
    assert seen["sign-in"] >= 27 + 7 and seen["aws"] == 121 and seen["google"] == 14 and seen["setting"] > 0


def test_with_every_credential_every_catalog_model_is_ready(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from pi_nb.providers.catalog import list_models, list_providers, provider_api_key_env
    from pi_nb.providers.readiness import spec_readiness

    _clear_credentials(monkeypatch, tmp_path)
    for p in list_providers():
        for name in provider_api_key_env(p):
            monkeypatch.setenv(name, "sk-test")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("OPENAI_CODEX_ACCESS_TOKEN", "token")
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct")
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw")
    monkeypatch.setenv("AWS_PROFILE", "default")
    not_ready = [(s.key, r.message) for s in list_models() if not (r := spec_readiness(s)).ok]
    assert not_ready == []


def test_ambient_credentials_as_pi_ai_finds_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from pi_nb.auth import credential_source
    from pi_nb.auth.ambient import ambient_credential

    _clear_credentials(monkeypatch, tmp_path)
    assert ambient_credential("amazon-bedrock") is None
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA")
    assert ambient_credential("amazon-bedrock") is None  # the secret key too, as pi-ai
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    assert credential_source("amazon-bedrock") == "environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY"
    adc = tmp_path / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text("{}")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    assert ambient_credential("google-vertex") is None  # no location
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    assert ambient_credential("google-vertex") == f"application-default credentials: {adc}"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    assert ambient_credential("google-vertex") is None
