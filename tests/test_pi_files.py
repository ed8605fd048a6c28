"""Pi's own files as Pi 0.85.0 reads them: models.json (custom providers, overrides of built-in
ones, Pi's defaults and errors), settings.json (merged defaults), and the model and thinking level
a new session picks. Goldens: tests/golden/pi_files.json (tests/golden/make_pi_files.py, recorded
from pi-coding-agent's ModelRuntime / SettingsManager / createAgentSession and the real ``pi -p``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_nb.agent.session import AgentSession, initial_thinking_level
from pi_nb.providers import get_model
from pi_nb.providers.catalog import find_model, list_models, list_providers
from pi_nb.providers.models_json import ModelsJsonError, load_models_json
from pi_nb.providers.registry import default_model_spec_from_settings
from pi_nb.providers.thinking_levels import clamp_thinking_level, supported_thinking_levels
from pi_nb.resources.settings import SettingsManager
from pi_nb.session.manager import SessionManager

GOLDEN = json.loads((Path(__file__).parent / "golden" / "pi_files.json").read_text())
CASES = GOLDEN["cases"]
CLI = GOLDEN["cli"]


def _write(path: Path, body: Any) -> None:
    if body is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, indent=2))


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    for name in ("VLLM_API_KEY", "TEAM_NAME", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return agent, cwd


def _setup(
    case: dict[str, Any], dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    agent, cwd = dirs
    _write(agent / "models.json", case["input"]["models"])
    _write(agent / "settings.json", case["input"]["settings"])
    _write(cwd / ".pi" / "settings.json", case["input"].get("project"))
    for name, value in (case["input"].get("env") or {}).items():
        monkeypatch.setenv(name, value)
    return agent, cwd


def _unpath(text: str | None, agent: Path) -> str | None:
    return None if text is None else text.replace(str(agent), "<AGENT>")


@pytest.mark.parametrize("name", sorted(CASES))
def test_models_json_loads_as_pi_loads_it(
    name: str, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    agent, _ = _setup(case, dirs, monkeypatch)
    loaded = load_models_json()
    pi_error = case["pi"]["error"]
    mine = _unpath(loaded.error, agent)
    assert mine == pi_error
    for provider, info in case["pi"]["providers"].items():
        if provider in loaded.provider_errors:
            continue
        models = loaded.provider_models(provider) or []
        assert len(models) == info["count"]
        if len(info["models"]) < info["count"]:
            ids = {m["id"] for m in info["models"]}
            models = [m for m in models if m["id"] in ids]
        assert models == info["models"]


LOOKUPS = [(name, i) for name in sorted(CASES) for i in range(len(CASES[name]["pi"]["lookups"]))]


@pytest.mark.parametrize(("name", "index"), LOOKUPS)
def test_get_model_is_pis_model(
    name: str, index: int, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    agent, _ = _setup(case, dirs, monkeypatch)
    look = case["pi"]["lookups"][index]
    spec = f"{look['provider']}/{look['id']}"
    if look["model"] is None:
        assert find_model(look["provider"], look["id"]) is None
        with pytest.raises((ModelsJsonError, ValueError)) as info:
            get_model(spec)
        text = _unpath(str(info.value), agent) or ""
        pi_error = case["pi"]["error"] or ""
        if pi_error.startswith(f'Provider "{look["provider"]}": '):
            # the provider's entry is left out: Pi's words, and the file
            assert pi_error in text and "File: <AGENT>/models.json" in text
        elif pi_error and not pi_error.startswith("Provider "):
            # the whole file is unusable: Pi's error (its schema lines, the file) is in the message
            assert pi_error in text
        return
    spec_obj = find_model(look["provider"], look["id"])
    assert spec_obj is not None and spec_obj.to_dict() == look["model"]
    assert spec_obj in list_models(look["provider"]) and look["provider"] in list_providers()
    model = get_model(spec)
    assert model.pi_ai_model() == look["model"]
    assert {lv: clamp_thinking_level(model, lv) for lv in look["clamp"]} == look["clamp"]
    auth = look.get("auth") or {}
    if "error" in auth:
        # Pi fails the request, not the lookup; pi_nb's key or headers fail with Pi's words
        problem = auth["error"].split(": ", 1)[-1]
        key_env = getattr(model, "api_key_env", "")
        if key_env and not os.environ.get(key_env):
            assert problem.endswith(f"environment variable: {key_env}")
        else:
            with pytest.raises(ModelsJsonError, match="Failed to resolve"):
                model.request_headers()  # type: ignore[attr-defined]
        return
    assert os.environ.get(model.api_key_env) == auth.get("apiKey")  # type: ignore[attr-defined]
    headers = getattr(model, "request_headers", lambda: {})()
    assert (headers or None) == auth.get("headers")


def test_clamp_thinking_level_properties() -> None:
    levels = ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
    maps: list[dict[str, Any]] = [
        {},
        {"off": None},
        {"off": None, "minimal": None},
        {"xhigh": "x"},
        {"max": "m"},
    ]
    for reasoning in (False, True):
        for level_map in maps:
            model = {"reasoning": reasoning, "thinkingLevelMap": level_map}
            supported = supported_thinking_levels(model)
            for level in levels:
                got = clamp_thinking_level(model, level)
                assert got in supported
                assert (got == level) == (level in supported)
                if level in supported:
                    continue
                above = [s for s in supported if levels.index(s) > levels.index(level)]
                assert got == (above[0] if above else supported[-1])


SETTINGS_CASES = sorted(CASES)


@pytest.mark.parametrize("name", SETTINGS_CASES)
def test_settings_read_as_pi_reads_them(
    name: str, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    agent, cwd = _setup(case, dirs, monkeypatch)
    settings = SettingsManager.create(str(cwd), str(agent))
    pi = case["pi"]["settings"]
    assert settings.get_default_provider() == pi["defaultProvider"]
    assert settings.get_default_model() == pi["defaultModel"]
    assert settings.get_default_thinking_level() == pi["defaultThinkingLevel"]
    assert settings.get_all_model_thinking_levels() == pi["modelThinkingLevels"]
    comp = settings.get_compaction_settings()
    assert {
        "enabled": comp.enabled,
        "reserveTokens": comp.reserve_tokens,
        "keepRecentTokens": comp.keep_recent_tokens,
    } == pi["compaction"]
    errors = settings.drain_errors()
    assert [e.scope for e in errors] == [e["scope"] for e in pi["errors"]]
    for mine, theirs in zip(errors, pi["errors"], strict=True):
        assert theirs["error"] in str(mine.error)  # V8's JSON.parse message, framed with the file


def _new_session(agent: Path, cwd: Path, new: dict[str, Any]) -> AgentSession:
    settings = SettingsManager.create(str(cwd), str(agent))
    if new.get("model"):
        spec = "/".join(new["model"])
    else:
        spec = default_model_spec_from_settings(settings) or "offline"
    model = get_model(spec)
    manager = SessionManager.in_memory(str(cwd))
    session = AgentSession(manager, model, settings=settings, thinking_level=new.get("thinkingLevel"))
    for op, arg in new.get("ops") or []:
        if op == "thinking":
            session.set_thinking_level(arg)
        else:
            session.set_model(get_model("/".join(arg)))
    return session


NEW_CASES = sorted(n for n, c in CASES.items() if c["pi"].get("newSession"))


@pytest.mark.parametrize("name", NEW_CASES)
def test_a_new_session_picks_pis_model_and_level(
    name: str, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    agent, cwd = _setup(case, dirs, monkeypatch)
    session = _new_session(agent, cwd, case["input"]["newSession"])
    pi = case["pi"]["newSession"]
    assert [session.model.provider, session.model.id] == pi["model"]
    assert session.thinking_level == pi["thinkingLevel"]
    entries = [
        {k: v for k, v in e.items() if k not in ("id", "parentId", "timestamp")}
        for e in session.session_manager.get_entries()
    ]
    assert entries == pi["entries"]


@pytest.mark.parametrize("name", sorted(CLI))
def test_a_new_session_records_what_the_pi_cli_records(
    name: str, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CLI[name]
    assert case["pi"]["rc"] == 0, case["pi"]["stderr"]
    agent, cwd = _setup({"input": {**case["input"], "env": {}}}, dirs, monkeypatch)
    # as the CLI does: project trust resolved with no way to ask (a project with .pi/settings.json
    # stays untrusted, so its defaultThinkingLevel is not read)
    spec = default_model_spec_from_settings(
        SettingsManager.create(str(cwd), str(agent), project_trusted=False)
    )
    session = AgentSession(
        SessionManager.in_memory(str(cwd)), get_model(spec or "offline"), agent_dir=str(agent)
    )
    assert session.settings.is_project_trusted() == (case["input"].get("project") is None)
    entries = [
        {k: v for k, v in e.items() if k not in ("id", "parentId", "timestamp")}
        for e in session.session_manager.get_entries()
    ]
    assert entries == [e for e in case["pi"]["entries"] if e["type"] != "session"]
    # what Pi sent: reasoning_effort exactly when the recorded level is not "off"
    sent_effort = ["reasoning_effort" in r["keys"] for r in case["pi"]["requests"]]
    assert sent_effort == [session.thinking_level != "off"]


def test_initial_level_resumes_the_recorded_one() -> None:
    model = get_model("scripted", reasoning=True)
    settings = SettingsManager.in_memory({"defaultThinkingLevel": "low"})
    assert initial_thinking_level(model, settings, has_messages=True, recorded="high") == "high"
    assert initial_thinking_level(model, settings, has_messages=True) == "low"
    assert initial_thinking_level(model, settings) == "low"
    assert initial_thinking_level(model, SettingsManager.in_memory()) == "medium"
    assert initial_thinking_level(model, settings, explicit="xhigh") == "high"


def test_default_model_needs_its_key(dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    agent, cwd = dirs
    _write(agent / "settings.json", {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"})
    settings = SettingsManager.create(str(cwd), str(agent))
    assert default_model_spec_from_settings(settings) is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert default_model_spec_from_settings(settings) == "anthropic/claude-sonnet-4-5"


def test_pi_new_starts_where_pi_starts(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``%pi new`` with no model or level configured: Pi's settings' default model (a models.json
    one here) at the level the real ``pi -p`` recorded for it."""
    case = CLI["cli_reasoning_default"]
    agent = Path(os.environ["PI_CODING_AGENT_DIR"])
    models = json.loads(json.dumps(case["input"]["models"]).replace("<BASE>", "http://127.0.0.1:9/v1"))
    _write(agent / "models.json", models)
    _write(agent / "settings.json", case["input"]["settings"])
    shell.run_line_magic("pi", "new --in-memory")
    session = shell.user_ns["_pi_magics"].session
    pi_entries = [e for e in case["pi"]["entries"] if e["type"] != "session"]
    assert [session.model.provider, session.model.id] == [pi_entries[0]["provider"], pi_entries[0]["modelId"]]
    assert session.thinking_level == pi_entries[1]["thinkingLevel"] == "medium"
    assert session.model.pi_ai_model()["baseUrl"] == "http://127.0.0.1:9/v1"
    # an explicit choice still wins
    shell.run_line_magic("config", "PiMagics.model = 'offline'")
    shell.run_line_magic("pi", "new --in-memory")
    assert shell.user_ns["_pi_magics"].session.model.provider != "scripted"
