"""AgentSession.create (pi_nb.agent.factory.create_agent_session): a session built from options.

The model and thinking level a new session starts with are checked against Pi 0.85.0's own choice
(tests/golden/pi_files.json, recorded from pi-coding-agent's createAgentSession and the ``pi -p``
CLI by tests/golden/make_pi_files.py); the rest against the parts it assembles (SessionManager,
SettingsManager, the trust store)."""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from pi_nb.agent.factory import create_agent_session, default_model_spec, resolve_trust
from pi_nb.agent.session import AgentSession
from pi_nb.errors import SettingsFileWarning
from pi_nb.providers import ScriptedModel, get_model
from pi_nb.resources.settings import SettingsManager
from pi_nb.resources.trust import ProjectTrustStore, TrustPrompt
from pi_nb.session.manager import SessionManager
from pi_nb.session.paths import _default_session_dir_path

GOLDEN = json.loads((Path(__file__).parent / "golden" / "pi_files.json").read_text())
NEW_CASES = sorted(n for n, c in GOLDEN["cases"].items() if c["pi"].get("newSession"))
RESUME = json.loads((Path(__file__).parent / "golden" / "pi_resume.json").read_text())["cases"]


def _golden_script(name: str) -> Any:
    """A golden's generator, for the function that writes its inputs (it runs no Node when imported)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / "golden" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def _setup(inputs: dict[str, Any], dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    agent, cwd = dirs
    _write(agent / "models.json", inputs["models"])
    _write(agent / "settings.json", inputs["settings"])
    _write(cwd / ".pi" / "settings.json", inputs.get("project"))
    for name, value in (inputs.get("env") or {}).items():
        monkeypatch.setenv(name, value)


def _entries(session: AgentSession) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in e.items() if k not in ("id", "parentId", "timestamp")}
        for e in session.session_manager.get_entries()
    ]


def _project(cwd: Path, settings: dict[str, Any]) -> None:
    """Project resources that need trust: a .pi/settings.json."""
    _write(cwd / ".pi" / "settings.json", settings)


# -- Pi's choice of model and thinking level -----------------------------------------------------


@pytest.mark.parametrize("name", NEW_CASES)
def test_create_picks_pis_model_and_level(
    name: str, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = GOLDEN["cases"][name]
    agent, cwd = dirs
    _setup(case["input"], dirs, monkeypatch)
    new = case["input"]["newSession"]
    session = AgentSession.create(
        cwd=str(cwd),
        agent_dir=str(agent),
        model="/".join(new["model"]) if new.get("model") else None,
        thinking_level=new.get("thinkingLevel"),
        in_memory=True,
        project_trusted=True,  # the SDK's SettingsManager.create reads the project settings
    )
    for op, arg in new.get("ops") or []:  # what Pi's session did next
        if op == "thinking":
            session.set_thinking_level(arg)
        else:
            session.set_model(get_model("/".join(arg)))
    pi = case["pi"]["newSession"]
    assert [session.model.provider, session.model.id] == pi["model"]
    assert session.thinking_level == pi["thinkingLevel"]
    assert _entries(session) == pi["entries"]


@pytest.mark.parametrize("name", sorted(GOLDEN["cli"]))
def test_create_without_a_way_to_ask_records_what_the_pi_cli_records(
    name: str, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = GOLDEN["cli"][name]
    assert case["pi"]["rc"] == 0, case["pi"]["stderr"]
    agent, cwd = dirs
    _setup({**case["input"], "env": {}}, dirs, monkeypatch)
    session = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    assert session.settings.is_project_trusted() == (case["input"].get("project") is None)
    assert _entries(session) == [e for e in case["pi"]["entries"] if e["type"] != "session"]


@pytest.mark.parametrize("name", sorted(RESUME))
def test_a_resumed_session_picks_pis_model_and_level(
    name: str, dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No model given: the recorded one when it exists and its key is set, else the default."""
    case, pi = RESUME[name]["input"], RESUME[name]["pi"]
    agent, cwd = dirs
    _write(agent / "settings.json", case["settings"])
    for key in case["keys"]:
        monkeypatch.setenv(key, f"test-{key.lower()}")
    path = _golden_script("make_pi_resume").write_session(tmp_path / "sessions", cwd, case)
    session = AgentSession.create(session_file=path, agent_dir=str(agent))
    assert [session.model.provider, session.model.id] == pi["model"]
    assert session.thinking_level == pi["thinkingLevel"]
    assert _entries(session) == pi["entries"]


# -- the session manager -------------------------------------------------------------------------


def test_a_new_session_is_a_file_in_pis_layout(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    session = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), model=ScriptedModel(["hello"]))
    assert session.cwd == str(cwd) and session.agent_dir == str(agent)
    path = session.session_file
    assert path is not None and os.path.dirname(path) == _default_session_dir_path(str(cwd), str(agent))
    session.run("hi")
    assert os.path.isfile(path)
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(cwd)
    assert [e.get("message", {}).get("role") for e in lines if e["type"] == "message"] == [
        "user",
        "assistant",
    ]


def test_open_and_continue_resume_the_recorded_session(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    agent, cwd = dirs
    first = AgentSession.create(
        cwd=str(cwd),
        agent_dir=str(agent),
        model=ScriptedModel(["one"], reasoning=True),
        thinking_level="high",
    )
    first.run("hi")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    opened = AgentSession.create(
        cwd=str(elsewhere), session_file=first.session_file, model=ScriptedModel(reasoning=True)
    )
    assert opened.cwd == str(cwd)  # the header's cwd, not the one given
    assert opened.session_id == first.session_id
    assert opened.thinking_level == "high"  # the recorded level
    assert [m["role"] for m in opened.messages] == ["user", "assistant"]
    recent = AgentSession.create(
        cwd=str(cwd), agent_dir=str(agent), continue_recent=True, model=ScriptedModel(reasoning=True)
    )
    assert recent.session_file == first.session_file
    # nothing recorded yet for another cwd: continue starts a new session
    fresh = AgentSession.create(
        cwd=str(elsewhere), agent_dir=str(agent), continue_recent=True, model=ScriptedModel()
    )
    assert fresh.session_id != first.session_id and fresh.messages == []


def test_a_given_session_manager_brings_its_cwd(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    agent, _ = dirs
    manager = SessionManager.in_memory(str(tmp_path))
    session = AgentSession.create(
        cwd="/somewhere/else", agent_dir=str(agent), session_manager=manager, model=ScriptedModel()
    )
    assert session.session_manager is manager and session.cwd == str(tmp_path)


def test_one_kind_of_session_at_a_time(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    with pytest.raises(ValueError, match="give one of session_file, in_memory, not several"):
        AgentSession.create(
            cwd=str(cwd), agent_dir=str(agent), session_file=str(cwd / "x.jsonl"), in_memory=True
        )


# -- the model -----------------------------------------------------------------------------------


def test_model_as_a_spec_an_object_or_the_settings_default(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, cwd = dirs
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    assert (s.model.provider, s.model.id) == ("pi_nb", "offline")
    s = AgentSession.create(
        cwd=str(cwd),
        agent_dir=str(agent),
        in_memory=True,
        model="offline",
        context_window=5000,
        max_tokens=700,
    )
    assert (s.model.context_window, s.model.max_tokens) == (5000, 700)
    scripted = ScriptedModel()
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, model=scripted)
    assert s.model is scripted
    s = AgentSession.create(
        cwd=str(cwd), agent_dir=str(agent), in_memory=True, model=scripted, context_window=9000
    )
    assert s.model.context_window == 9000 and scripted.context_window == 128_000
    _write(agent / "settings.json", {"defaultProvider": "openai", "defaultModel": "gpt-4o"})
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    assert s.model.id == "offline"  # the default model's key is not set
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    assert (s.model.provider, s.model.id) == ("openai", "gpt-4o")
    assert default_model_spec(s.settings) == "openai/gpt-4o"


# -- trust and settings --------------------------------------------------------------------------


def test_trust_is_asked_only_where_pi_asks(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    asked: list[TrustPrompt] = []

    def ask(prompt: TrustPrompt) -> None:
        asked.append(prompt)

    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, ask=ask)
    assert asked == [] and s.settings.is_project_trusted()  # no project resources: trusted
    _project(cwd, {"compaction": {"reserveTokens": 1234}})
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, ask=ask)
    assert [p.cwd for p in asked] == [str(cwd)]
    # dismissed: untrusted for this session, the project's settings unread, nothing saved
    assert not s.settings.is_project_trusted()
    assert s.settings.get_compaction_settings().reserve_tokens == 16384
    assert ProjectTrustStore(str(agent)).get(str(cwd)) is None
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, project_trusted=True, ask=ask)
    assert len(asked) == 1 and s.settings.get_compaction_settings().reserve_tokens == 1234


def test_an_answered_trust_question_is_saved(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    _project(cwd, {"compaction": {"reserveTokens": 1234}})
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, ask=lambda p: "Trust")
    assert s.settings.is_project_trusted()
    assert ProjectTrustStore(str(agent)).get(str(cwd)) is True
    # saved: the next session is trusted without asking
    assert resolve_trust(str(cwd), str(agent), ask=lambda p: pytest.fail("asked again")) is True
    again = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    assert again.settings.get_compaction_settings().reserve_tokens == 1234


def test_settings_files_then_overrides(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    _write(agent / "settings.json", {"compaction": {"reserveTokens": 3000, "keepRecentTokens": 5000}})
    s = AgentSession.create(
        cwd=str(cwd),
        agent_dir=str(agent),
        in_memory=True,
        settings_overrides={"compaction": {"keepRecentTokens": 700}},
    )
    comp = s.settings.get_compaction_settings()
    assert (comp.reserve_tokens, comp.keep_recent_tokens) == (3000, 700)
    assert json.loads((agent / "settings.json").read_text())["compaction"]["keepRecentTokens"] == 5000
    given = SettingsManager.in_memory({"compaction": {"reserveTokens": 100}})
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, settings=given)
    assert s.settings is given and s.settings.get_compaction_settings().reserve_tokens == 100


def test_a_settings_file_that_cannot_be_read_is_reported(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    (agent / "settings.json").write_text("{torn")
    with pytest.warns(SettingsFileWarning, match=f"^Invalid settings file {agent / 'settings.json'}: "):
        AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    (agent / "settings.json").write_text("{}")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SettingsFileWarning)
        AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)


# -- thinking level, tools, check ----------------------------------------------------------------


def test_thinking_level_and_tools(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    s = AgentSession.create(
        cwd=str(cwd),
        agent_dir=str(agent),
        in_memory=True,
        model=ScriptedModel(reasoning=True),
        thinking_level="low",
        active_tools=["read"],
    )
    assert s.thinking_level == "low" and s.get_active_tool_names() == ["read"]
    s = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True, model=ScriptedModel())
    assert s.thinking_level == "off"  # clamped: the model has no reasoning
    assert s.get_active_tool_names() == ["read", "bash", "edit", "write"]


def test_check_sees_model_and_settings_before_anything_is_written(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    first = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), model=ScriptedModel(["one"]))
    first.run("hi")
    assert first.session_file is not None
    before = Path(first.session_file).read_bytes()
    seen: list[tuple[int, int]] = []

    def refuse(model: Any, settings: SettingsManager) -> None:
        seen.append((model.context_window, settings.get_compaction_settings().reserve_tokens))
        raise RuntimeError("no room")

    with pytest.raises(RuntimeError, match="no room"):
        AgentSession.create(
            session_file=first.session_file,
            agent_dir=str(agent),
            model=get_model("offline"),
            context_window=4000,
            check=refuse,
        )
    assert seen == [(4000, 16384)]
    assert Path(first.session_file).read_bytes() == before


def test_the_classmethod_is_the_factory(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    a = AgentSession.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    b = create_agent_session(cwd=str(cwd), agent_dir=str(agent), in_memory=True)
    assert type(a) is type(b) is AgentSession
    assert _entries(a) == _entries(b)


def test_create_on_a_subclass_builds_the_subclass(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs

    class Mine(AgentSession):
        pass

    assert type(Mine.create(cwd=str(cwd), agent_dir=str(agent), in_memory=True)) is Mine


def _recorded_on(path: Path, cwd: Path, provider: str, model_id: str) -> str:
    """A session file whose one exchange ran on ``provider/model_id`` (written by pi_nb's manager)."""
    manager = SessionManager.create(str(cwd), str(path))
    manager.append_model_change(provider, model_id)
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello"}],
            "api": "openai-responses",
            "provider": provider,
            "model": model_id,
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    file = manager.get_session_file()
    assert file is not None and os.path.isfile(file)
    return file


def test_a_resumed_session_runs_on_its_recorded_model_when_its_key_is_set(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, cwd = dirs
    path = _recorded_on(tmp_path / "sessions", cwd, "openai", "gpt-4o")
    s = AgentSession.create(session_file=path, agent_dir=str(agent))
    assert s.model.id == "offline"  # the recorded model's key is not set: the default
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    s = AgentSession.create(session_file=path, agent_dir=str(agent))
    assert (s.model.provider, s.model.id) == ("openai", "gpt-4o")
    s = AgentSession.create(session_file=path, agent_dir=str(agent), model="offline")
    assert s.model.id == "offline"  # an explicit model wins
    gone = _recorded_on(tmp_path / "sessions", cwd, "openai", "no-such-model")
    assert AgentSession.create(session_file=gone, agent_dir=str(agent)).model.id == "offline"
