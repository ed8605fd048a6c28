"""The provider table (``pi_nb.providers.registry``): one row per API pi_nb speaks, each naming its
module, class, extra and the module a turn imports; the classes agree with their rows, the extras
exist in pyproject, the classes are imported only when a model of their API is made, and
``SPOKEN_APIS`` is the table's API column."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pi_nb.providers.catalog import list_models
from pi_nb.providers.registry import (
    SPOKEN_APIS,
    ProviderEntry,
    UnsupportedApiError,
    get_model,
    provider_class,
    provider_entry,
    provider_table,
)

ROOT = Path(__file__).resolve().parents[1]


def test_spoken_apis_are_the_table_in_its_order() -> None:
    assert SPOKEN_APIS == tuple(row.api for row in provider_table())
    assert len(set(SPOKEN_APIS)) == len(SPOKEN_APIS)
    assert SPOKEN_APIS[:4] == (
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "mistral-conversations",
    )
    assert {"azure-openai-responses", "openai-codex-responses"} <= set(SPOKEN_APIS)


@pytest.mark.parametrize("row", provider_table(), ids=lambda r: r.api)
def test_each_class_declares_its_row(row: ProviderEntry) -> None:
    cls = provider_class(row.api)
    assert cls.__module__ == row.module and cls.__name__ == row.class_name
    assert cls.api == row.api
    assert (cls.extra, cls.sdk_module) == (row.extra, row.sdk_module)
    assert provider_entry(row.api) == row


@pytest.mark.parametrize("row", provider_table(), ids=lambda r: r.api)
def test_each_extra_is_in_pyproject_and_installs_what_a_turn_imports(row: ProviderEntry) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert row.extra in extras
    if row.sdk_module is not None:
        # the distribution that installs the module (google.auth comes from google-auth)
        dist = row.sdk_module.replace(".", "-")

        def name(dep: str) -> str:
            return dep.split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip()

        assert any(name(dep) == dist for dep in extras[row.extra])
        importlib.import_module(row.sdk_module)  # the test extra installs it too
        assert any(name(dep) == dist for dep in extras["test"])


def test_unknown_apis_have_no_row() -> None:
    assert provider_entry("no-such-api") is None
    with pytest.raises(
        UnsupportedApiError, match="does not speak the no-such-api API: it speaks anthropic-messages"
    ):
        provider_class("no-such-api")


def test_provider_modules_are_imported_only_for_their_models() -> None:
    code = (
        "import sys, pi_nb.providers.registry as r\n"
        "mods = [row.module for row in r.provider_table()]\n"
        "print(sorted(m for m in mods if m in sys.modules))\n"
        "r.get_model('azure-openai-responses/gpt-4.1')\n"
        "print(sorted(m for m in mods if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=None
    ).stdout.splitlines()
    assert "pi_nb.providers.azure_openai_responses" not in out[0]
    assert "pi_nb.providers.openai_codex_responses" not in out[0]
    assert "pi_nb.providers.azure_openai_responses" in out[1]
    assert "pi_nb.providers.openai_codex_responses" not in out[1]


def test_every_catalog_model_of_a_spoken_api_gets_its_rows_class(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct")
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw")
    seen: set[str] = set()
    for spec in list_models():
        row = provider_entry(spec.api)
        if row is None or spec.provider == "github-copilot":
            continue
        model = get_model(spec.key)
        assert type(model).__name__ == row.class_name and model.api == spec.api, spec.key
        seen.add(spec.api)
    assert seen == set(SPOKEN_APIS)


def test_a_missing_provider_module_is_an_unsupported_api(monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_nb.providers import registry

    row = registry._BY_API["openai-codex-responses"]
    monkeypatch.setitem(
        registry._BY_API,
        row.api,
        ProviderEntry(row.api, "pi_nb.providers._no_such_module", "X", row.extra, None),
    )
    with pytest.raises(
        UnsupportedApiError, match=r"openai-codex/gpt-5.5: the openai-codex-responses API needs"
    ):
        get_model("openai-codex/gpt-5.5")
    row = registry._BY_API["openai-responses"]
    monkeypatch.setitem(
        registry._BY_API, row.api, ProviderEntry(row.api, "pi_nb.providers._gone", "X", row.extra, None)
    )
    with pytest.raises(UnsupportedApiError, match=r"Responses provider.*api='openai-completions'"):
        get_model("openai/gpt-5.5")


def test_sign_in_providers_are_models_that_say_how_to_sign_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex and Copilot are made like any model (since auth.json sign-ins are ported); without a
    credential, readiness refuses with the one thing to do, not an unsupported-API error."""
    from pi_nb.providers.readiness import spec_readiness

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    model = get_model("openai-codex/gpt-5.5")
    assert (
        model.api == "openai-codex-responses"
        and getattr(model, "base_url", None) == "https://chatgpt.com/backend-api"
    )
    spec = list_models("github-copilot")[0]
    copilot = get_model("github-copilot/" + spec.id)
    assert copilot.api == spec.api
    ready = spec_readiness(spec)
    assert not ready.ok
    assert "needs a sign-in: %pi login github-copilot" in ready.message
