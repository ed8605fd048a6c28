"""pi_nb.providers.readiness: whether a model can run now (its SDK package, its key)."""

from __future__ import annotations

import sys

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
