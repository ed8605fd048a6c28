"""pi-ai's resolution order (explicit key, auth.json, environment), OAuth refresh as pi-ai runs it
(five-minute margin, once under the lock, written back), where a credential comes from, and the
providers taking their key from it without changing their requests."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import wire_cases
from wire_capture import CaptureTransport

from pi_nb.auth import AuthError, credential_source, resolve_provider_auth
from pi_nb.auth.http import redirect_to
from pi_nb.auth.testing import FakeOAuthServer, fake_jwt

NOW_MS = time.time() * 1000
HOUR = 3600 * 1000


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "agent"
    d.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(d))
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_OAUTH_TOKEN",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "COPILOT_GITHUB_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    return d


def _write(agent: Path, data: dict[str, Any]) -> None:
    (agent / "auth.json").write_text(json.dumps(data, indent=2))


def test_explicit_then_auth_json_then_environment(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789")
    got = resolve_provider_auth("openai", env_vars=["OPENAI_API_KEY"])
    assert got is not None and (got.api_key, got.source) == (
        "sk-env-0123456789",
        "environment: OPENAI_API_KEY",
    )
    _write(agent, {"openai": {"type": "api_key", "key": "sk-stored-0123456789"}})
    got = resolve_provider_auth("openai", env_vars=["OPENAI_API_KEY"])
    assert got is not None and (got.api_key, got.source) == ("sk-stored-0123456789", "auth.json (api key)")
    got = resolve_provider_auth("openai", api_key="sk-explicit-0123", env_vars=["OPENAI_API_KEY"])
    assert got is not None and (got.api_key, got.source) == ("sk-explicit-0123", "explicit")


def test_a_stored_entry_without_a_key_falls_through_to_the_environment(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789")
    _write(agent, {"openai": {"type": "api_key", "env": {"X": "y"}}})
    got = resolve_provider_auth("openai", env_vars=["OPENAI_API_KEY"])
    assert got is not None and got.api_key == "sk-env-0123456789"


def test_an_oauth_entry_owns_the_provider(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a provider without a sign-in: nothing (no silent fall-back to the environment), as pi-ai
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789")
    _write(agent, {"openai": {"type": "oauth", "access": "a", "refresh": "r", "expires": NOW_MS + HOUR}})
    assert resolve_provider_auth("openai", env_vars=["OPENAI_API_KEY"]) is None


def test_a_valid_token_is_used_as_it_is(agent: Path) -> None:
    _write(
        agent,
        {
            "openai-codex": {
                "type": "oauth",
                "access": fake_jwt(),
                "refresh": "r",
                "expires": NOW_MS + HOUR,
                "accountId": "acct-fake-0001",
            }
        },
    )
    with FakeOAuthServer() as server, redirect_to(server.url):
        got = resolve_provider_auth("openai-codex")
        assert server.requests == []
    assert got is not None and got.api_key == fake_jwt() and got.oauth and got.source == "auth.json (OAuth)"


def test_a_token_expiring_within_five_minutes_is_refreshed_once_and_written_back(agent: Path) -> None:
    stored = {
        "openai": {"type": "api_key", "key": "sk-keep-0123456789"},
        "anthropic": {
            "type": "oauth",
            "access": "sk-ant-oat01-old",
            "refresh": "sk-ant-ort01-old",
            "expires": NOW_MS + 4 * 60 * 1000,
        },
    }
    _write(agent, stored)
    with FakeOAuthServer() as server, redirect_to(server.url):
        results: list[Any] = []
        threads = [
            threading.Thread(target=lambda: results.append(resolve_provider_auth("anthropic")))
            for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(server.requests) == 1  # four requests, one refresh (re-checked under the lock)
        assert json.loads(server.requests[0]["body"])["refresh_token"] == "sk-ant-ort01-old"
    assert {r.api_key for r in results} == {"sk-ant-oat01-fakeAccess0001"}
    after = json.loads((agent / "auth.json").read_text())
    assert after["openai"] == stored["openai"] and list(after) == ["openai", "anthropic"]
    assert after["anthropic"]["refresh"] == "sk-ant-ort01-fakeRefresh0001"
    assert after["anthropic"]["expires"] == pytest.approx(
        time.time() * 1000 + 28800 * 1000 - 300000, abs=60000
    )


def test_a_failed_refresh_is_an_error_and_keeps_the_credential(agent: Path) -> None:
    stored = {"xai": {"type": "oauth", "access": "old", "refresh": "old-r", "expires": 5}}
    _write(agent, stored)
    before = (agent / "auth.json").read_text()
    with FakeOAuthServer() as server:
        with redirect_to(server.url + "/nowhere"):
            with pytest.raises(AuthError, match="OAuth refresh failed for xai"):
                resolve_provider_auth("xai")
    assert (agent / "auth.json").read_text() == before


def test_credential_source(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert credential_source("openai") is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789")
    assert credential_source("openai") == "environment: OPENAI_API_KEY"
    _write(
        agent,
        {
            "openai": {"type": "api_key", "key": "!echo never-run"},
            "anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 4102444800000},
            "xai": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1000},
        },
    )
    assert credential_source("openai") == "auth.json (api key)"
    assert credential_source("anthropic") == "auth.json (OAuth, expires 2100-01-01 00:00 UTC)"
    assert credential_source("xai") == "auth.json (OAuth, expired 1970-01-01 00:00 UTC)"
    (agent / "auth.json").write_text("{broken")
    assert credential_source("openai") == "auth.json: unreadable"


def _request(spec: str) -> dict[str, Any]:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model

    model = get_model(
        spec, transport=CaptureTransport([wire_cases.canned_response(get_model(spec).pi_ai_model()["api"])])
    )
    ctx = {"systemPrompt": "s", "messages": [{"role": "user", "content": "hi", "timestamp": 0}]}

    async def run() -> Any:
        async for event in model.stream(Context(ctx["systemPrompt"], ctx["messages"], None), StreamOptions()):
            if event["type"] in ("done", "error"):
                return event
        return None

    event = asyncio.run(run())
    assert event is not None and event["type"] == "done", event
    transport = model.transport
    assert isinstance(transport, CaptureTransport)
    return wire_cases.comparable(transport.requests[0])


def test_an_anthropic_sign_in_in_auth_json_takes_the_oauth_token_path(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "sk-ant-oat01-fromAuthJson0123456789"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", token)
    via_env = _request("anthropic/claude-haiku-4-5")
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api-ignored-0123456789")  # auth.json owns the provider
    _write(agent, {"anthropic": {"type": "oauth", "access": token, "refresh": "r", "expires": NOW_MS + HOUR}})
    via_auth_json = _request("anthropic/claude-haiku-4-5")
    assert via_auth_json == via_env
    assert via_env["headers"]["authorization"] == f"Bearer {token}"
    assert "oauth-2025-04-20" in via_env["headers"]["anthropic-beta"]


def test_an_api_key_in_auth_json_sends_what_the_environment_sends(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-same-0123456789")
    via_env = _request("openai/gpt-4.1")
    monkeypatch.delenv("OPENAI_API_KEY")
    _write(agent, {"openai": {"type": "api_key", "key": "sk-same-0123456789"}})
    assert _request("openai/gpt-4.1") == via_env


def test_copilot_refreshes_its_token_then_talks_to_the_host_the_token_names(agent: Path) -> None:
    _write(
        agent,
        {
            "github-copilot": {
                "type": "oauth",
                "access": "tid=old;proxy-ep=proxy.old.githubcopilot.com",
                "refresh": "gho_fakeGitHubToken0001",
                "expires": 1000,
            }
        },
    )
    with FakeOAuthServer() as server, redirect_to(server.url):
        request = _request("github-copilot/gpt-5.4")
        assert [q["url"] for q in server.requests] == [
            "https://api.github.com/copilot_internal/v2/token",
            "https://api.individual.githubcopilot.com/models",
        ]
    assert request["url"] == "https://api.individual.githubcopilot.com/responses"
    assert request["headers"]["authorization"].startswith("Bearer tid=fake1;")
    assert (
        request["headers"]["x-initiator"] == "user"
        and request["headers"]["openai-intent"] == "conversation-edits"
    )
    stored = json.loads((agent / "auth.json").read_text())["github-copilot"]
    assert stored["availableModelIds"] == ["gpt-5.4", "claude-opus-4.8"] and stored["access"].startswith(
        "tid=fake1;"
    )


def test_copilot_with_a_github_token_in_the_environment(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "gho_envToken0123456789")
    request = _request("github-copilot/gpt-5.4")
    assert request["url"] == "https://api.individual.githubcopilot.com/responses"
    assert request["headers"]["authorization"] == "Bearer gho_envToken0123456789"


def test_an_openai_codex_sign_in_resolves_to_its_access_token(agent: Path) -> None:
    from pi_nb.providers.openai_responses import OpenAIResponsesProvider

    _write(
        agent,
        {
            "openai-codex": {
                "type": "oauth",
                "access": fake_jwt(),
                "refresh": "r",
                "expires": NOW_MS + HOUR,
                "accountId": "acct-fake-0001",
            }
        },
    )
    model = OpenAIResponsesProvider("gpt-5.5", provider="openai-codex")
    assert model.resolve_api_key() == fake_jwt()
    assert model.resolve_api_key("explicit-key-0123") == "explicit-key-0123"


def test_a_broken_auth_json_is_an_error_event_not_a_crash(agent: Path) -> None:
    from pi_nb.providers.base import Context, StreamOptions
    from pi_nb.providers.registry import get_model

    (agent / "auth.json").write_text("{broken")
    for spec in (
        "openai/gpt-4.1",
        "anthropic/claude-haiku-4-5",
        "github-copilot/gpt-5.4",
        "mistral/devstral-latest",
    ):
        model = get_model(
            spec, transport=CaptureTransport([wire_cases.canned_response("openai-completions")])
        )

        async def run(model: Any = model) -> Any:
            async for event in model.stream(
                Context("s", [{"role": "user", "content": "hi", "timestamp": 0}], None), StreamOptions()
            ):
                if event["type"] in ("done", "error"):
                    return event
            return None

        with (
            pytest.warns(RuntimeWarning, match="not valid JSON") if spec.startswith("openai") else _nothing()
        ):
            event = asyncio.run(run())
        assert event["type"] == "error", spec
        if not spec.startswith("anthropic"):  # anthropic: its own environment chain says "No API key"
            assert "not valid JSON" in event["error"]["errorMessage"], spec
    assert (agent / "auth.json").read_text() == "{broken"


def test_an_unreadable_auth_json_leaves_the_environment_working_as_in_pi(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (agent / "auth.json").mkdir()  # a directory: Pi's storage passes over it too
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789")
    with pytest.warns(RuntimeWarning, match="is a directory, not a regular file"):
        got = resolve_provider_auth("openai", env_vars=["OPENAI_API_KEY"])
    assert got is not None and got.api_key == "sk-env-0123456789"
    assert credential_source("openai") == "auth.json: unreadable"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_available_model_ids_of_a_copilot_sign_in(agent: Path) -> None:
    from pi_nb.auth import available_model_ids

    assert available_model_ids("github-copilot") is None
    cred = {"type": "oauth", "access": "a", "refresh": "r", "expires": 5, "availableModelIds": ["gpt-5.4"]}
    _write(agent, {"github-copilot": cred, "xai": {**cred, "availableModelIds": [1]}})
    assert available_model_ids("github-copilot") == ["gpt-5.4"]
    assert available_model_ids("xai") is None
