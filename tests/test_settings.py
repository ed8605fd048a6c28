"""SettingsManager: global + trusted project settings (Pi's settings-manager.ts, project-trust part).

The merge/migration/persistence expectations below were recorded from Pi 0.85.0's SettingsManager
on the same files (an ad-hoc differential run gave identical getters and identical file bytes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.compaction.settings import BranchSummarySettings, CompactionSettings, RetrySettings
from pi_nb.errors import CompactionError, ProjectNotTrustedError, SettingsFileError
from pi_nb.resources.paths import pi_file_lock
from pi_nb.resources.settings import (
    FileSettingsStorage,
    InMemorySettingsStorage,
    SettingsManager,
    deep_merge_settings,
    migrate_settings,
)

GLOBAL = {
    "compaction": {"reserveTokens": 1000, "keepRecentTokens": 5},
    "defaultProjectTrust": "always",
    "skills": ["a"],
    "queueMode": "all",
    "retry": {"maxDelayMs": 7},
    "images": {"blockImages": True},
}
PROJECT = {
    "compaction": {"reserveTokens": 2000},
    "defaultProjectTrust": "never",
    "skills": ["b"],
    "branchSummary": {"skipPrompt": True},
}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root = Path(os.path.realpath(tmp_path))
    agent, cwd = root / "agent", root / "proj"
    (cwd / ".pi").mkdir(parents=True)
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps(GLOBAL), encoding="utf-8")
    (cwd / ".pi" / "settings.json").write_text("\ufeff" + json.dumps(PROJECT), encoding="utf-8")
    return agent, cwd


def test_trusted_project_settings_merge_over_global(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    sm = SettingsManager.create(str(cwd), str(agent))
    assert sm.is_project_trusted() is True  # Pi's default for a bare manager
    assert sm.get_compaction_settings() == CompactionSettings(
        enabled=True, reserve_tokens=2000, keep_recent_tokens=5
    )
    assert sm.get_branch_summary_settings() == BranchSummarySettings(reserve_tokens=16384, skip_prompt=True)
    assert sm.get_default_project_trust() == "always"  # the project's "never" is ignored
    assert sm.get_skill_paths() == ["b"]
    assert sm.get_block_images() is True
    assert sm.get_steering_mode() == "all"  # migrated from queueMode
    assert sm.get_global_settings()["retry"] == {"provider": {"maxRetryDelayMs": 7}}
    assert sm.get_project_settings() == PROJECT


def test_untrusted_project_settings_are_skipped_and_writes_refused(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    before = (cwd / ".pi" / "settings.json").read_bytes()
    sm = SettingsManager.create(str(cwd), str(agent), project_trusted=False)
    assert sm.get_project_settings() == {}
    assert sm.get_compaction_settings().reserve_tokens == 1000
    assert sm.get_branch_summary_settings().skip_prompt is False
    assert sm.get_skill_paths() == ["a"]
    for write in (
        lambda: sm.set_project_skill_paths(["x"]),
        lambda: sm.set_project_prompt_template_paths(["x"]),
        lambda: sm.set_project_extension_paths(["x"]),
    ):
        with pytest.raises(ProjectNotTrustedError) as info:
            write()
        assert str(info.value) == "Project is not trusted; refusing to write project settings"
    assert (cwd / ".pi" / "settings.json").read_bytes() == before


def test_set_trusted_reloads_project_settings(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    sm = SettingsManager.create(str(cwd), str(agent), project_trusted=False)
    assert sm.get_skill_paths() == ["a"]
    sm.set_project_trusted(True)
    assert sm.get_skill_paths() == ["b"]
    sm.set_project_skill_paths(["x"])  # allowed now
    assert json.loads((cwd / ".pi" / "settings.json").read_text(encoding="utf-8"))["skills"] == ["x"]
    sm.set_project_trusted(False)
    assert sm.get_project_settings() == {}
    assert sm.get_skill_paths() == ["a"]


def test_default_project_trust_global_only_and_invalid_means_ask(tmp_path: Path) -> None:
    assert SettingsManager.in_memory({"defaultProjectTrust": "never"}).get_default_project_trust() == "never"
    assert SettingsManager.in_memory({"defaultProjectTrust": "yes"}).get_default_project_trust() == "ask"
    assert SettingsManager.in_memory({"defaultProjectTrust": None}).get_default_project_trust() == "ask"
    assert SettingsManager.in_memory().get_default_project_trust() == "ask"
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    (cwd / ".pi").mkdir(parents=True)
    (cwd / ".pi" / "settings.json").write_text('{"defaultProjectTrust": "always"}')
    sm = SettingsManager.create(str(cwd), str(agent))
    assert sm.get("defaultProjectTrust") == "always"  # merged view has it ...
    assert sm.get_default_project_trust() == "ask"  # ... but the getter reads global only
    sm.set_default_project_trust("never")
    assert json.loads((agent / "settings.json").read_text())["defaultProjectTrust"] == "never"


def test_writes_persist_only_changed_fields_pi_bytes(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    sm = SettingsManager.create(str(cwd), str(agent))
    sm.set_project_skill_paths(["x"])
    sm.set_compaction_enabled(False)
    sm.set_skill_paths(["c", "d"])
    # exactly what Pi 0.85.0 wrote for the same calls
    assert (agent / "settings.json").read_text(encoding="utf-8") == (
        '{\n  "compaction": {\n    "reserveTokens": 1000,\n    "keepRecentTokens": 5,\n    "enabled": false\n  },\n'
        '  "defaultProjectTrust": "always",\n  "skills": [\n    "c",\n    "d"\n  ],\n'
        '  "retry": {\n    "provider": {\n      "maxRetryDelayMs": 7\n    }\n  },\n'
        '  "images": {\n    "blockImages": true\n  },\n  "steeringMode": "all"\n}'
    )
    assert (cwd / ".pi" / "settings.json").read_text(encoding="utf-8") == (
        '{\n  "compaction": {\n    "reserveTokens": 2000\n  },\n  "defaultProjectTrust": "never",\n'
        '  "skills": [\n    "x"\n  ],\n  "branchSummary": {\n    "skipPrompt": true\n  }\n}'
    )
    assert sm.drain_errors() == []
    assert sorted(os.listdir(agent)) == ["settings.json"]  # no lock or temp file left


def test_concurrent_edit_of_another_key_is_kept(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": 1}}')
    sm = SettingsManager.create(str(tmp_path / "p"), str(agent))
    # another process edits the file meanwhile
    (agent / "settings.json").write_text(
        '{"compaction": {"reserveTokens": 1, "keepRecentTokens": 9}, "theme": "x"}'
    )
    sm.set_compaction_enabled(False)
    data = json.loads((agent / "settings.json").read_text())
    assert data == {"compaction": {"reserveTokens": 1, "keepRecentTokens": 9, "enabled": False}, "theme": "x"}


def test_missing_files_give_defaults_and_create_nothing(tmp_path: Path) -> None:
    sm = SettingsManager.create(str(tmp_path / "none"), str(tmp_path / "noagent"))
    assert sm.get_compaction_settings() == CompactionSettings()
    assert sm.get_branch_summary_settings() == BranchSummarySettings()
    assert sm.get_retry_settings() == RetrySettings()
    assert sm.get_block_images() is False
    assert sm.get_enable_skill_commands() is True
    assert (
        sm.get_skill_paths() == [] and sm.get_prompt_template_paths() == [] and sm.get_extension_paths() == []
    )
    assert not (tmp_path / "noagent").exists()
    assert not (tmp_path / "none").exists()
    assert sm.drain_errors() == []


def test_invalid_global_file_is_reported_and_never_overwritten(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    (agent / "settings.json").write_text("{bad")
    sm = SettingsManager.create(str(cwd), str(agent))
    sm.set_compaction_enabled(True)
    errors = sm.drain_errors()
    assert [(e.scope, e.path) for e in errors] == [("global", str(agent / "settings.json"))]
    assert isinstance(errors[0].error, SettingsFileError)
    assert "Invalid JSON" in str(errors[0].error)
    assert errors[0].to_dict()["scope"] == "global"
    assert (agent / "settings.json").read_text() == "{bad"
    assert sm.get_compaction_settings() == CompactionSettings(
        enabled=True, reserve_tokens=2000, keep_recent_tokens=20000
    )
    assert sm.drain_errors() == []


@pytest.mark.parametrize("content", ["[]", "null", "3", '"x"'])
def test_non_object_settings_are_errors(tmp_path: Path, content: str) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(content)
    sm = SettingsManager.create(str(tmp_path), str(agent))
    assert sm.get_global_settings() == {}
    [err] = sm.drain_errors()
    assert "expected an object" in str(err.error)


def test_reload_keeps_old_values_when_a_file_breaks(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    sm = SettingsManager.create(str(cwd), str(agent))
    (cwd / ".pi" / "settings.json").write_text("{nope")
    sm.reload()
    assert sm.get_skill_paths() == ["b"]
    assert [e.scope for e in sm.drain_errors()] == ["project"]
    (cwd / ".pi" / "settings.json").write_text('{"skills": ["z"]}')
    sm.reload()
    assert sm.get_skill_paths() == ["z"]


def test_locked_settings_file_is_recorded(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    with pi_file_lock(str(agent / "settings.json.lock")):
        sm = SettingsManager.create(str(cwd), str(agent))
    [err] = sm.drain_errors()
    assert err.scope == "global" and "Lock file is already being held" in str(err.error)
    assert sm.get_global_settings() == {}


def test_apply_overrides_is_memory_only(dirs: tuple[Path, Path]) -> None:
    agent, cwd = dirs
    before = (agent / "settings.json").read_bytes()
    sm = SettingsManager.create(str(cwd), str(agent))
    sm.apply_overrides({"compaction": {"enabled": False}, "images": {"blockImages": False}})
    assert sm.get_compaction_settings() == CompactionSettings(
        enabled=False, reserve_tokens=2000, keep_recent_tokens=5
    )
    assert sm.get_block_images() is False
    assert (agent / "settings.json").read_bytes() == before


def test_bad_compaction_values_raise_clearly() -> None:
    sm = SettingsManager.in_memory({"compaction": {"reserveTokens": "lots"}})
    with pytest.raises(CompactionError):
        sm.get_compaction_settings()


def test_in_memory_storage_and_setters() -> None:
    sm = SettingsManager.in_memory({"skills": {"customDirectories": ["~/s"], "enableSkillCommands": False}})
    assert sm.get_skill_paths() == ["~/s"]  # migrated from the old object form
    assert sm.get_enable_skill_commands() is False
    sm.set_default_model_and_provider("openai", "gpt-x")
    sm.set_default_thinking_level("high")
    sm.set_block_images(True)
    sm.set_retry_enabled(False)
    sm.set_prompt_template_paths(["p"])
    sm.set_extension_paths(["e"])
    sm.set_enable_skill_commands(True)
    assert (sm.get_default_provider(), sm.get_default_model(), sm.get_default_thinking_level()) == (
        "openai",
        "gpt-x",
        "high",
    )
    assert sm.get_block_images() is True and sm.get_retry_enabled() is False
    assert sm.get_prompt_template_paths() == ["p"] and sm.get_extension_paths() == ["e"]
    assert isinstance(sm.storage, InMemorySettingsStorage)
    stored: list[Any] = []
    sm.storage.with_lock("global", lambda cur: stored.append(cur))
    assert json.loads(stored[0])["images"] == {"blockImages": True}
    assert sm.get_hide_thinking_block() is False and sm.get_follow_up_mode() == "one-at-a-time"
    assert sm.get_session_dir() is None
    assert SettingsManager.in_memory({"sessionDir": "~/x"}).get_session_dir() == os.path.expanduser("~/x")


def test_file_storage_paths(tmp_path: Path) -> None:
    st_ = FileSettingsStorage(str(tmp_path / "p"), str(tmp_path / "a"))
    assert st_.global_settings_path == str(tmp_path / "a" / "settings.json")
    assert st_.project_settings_path == str(tmp_path / "p" / ".pi" / "settings.json")


def test_migrations() -> None:
    assert migrate_settings({"websockets": True}) == {"transport": "websocket"}
    assert migrate_settings({"websockets": False, "transport": "sse"}) == {
        "websockets": False,
        "transport": "sse",
    }
    assert migrate_settings({"queueMode": "all", "steeringMode": "x"}) == {
        "queueMode": "all",
        "steeringMode": "x",
    }
    assert migrate_settings({"skills": {"customDirectories": []}}) == {}
    assert migrate_settings({"retry": {"maxDelayMs": 5, "provider": {"maxRetryDelayMs": 9}}}) == {
        "retry": {"provider": {"maxRetryDelayMs": 9}}
    }


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(
    base=st.dictionaries(st.text(max_size=2), _json, max_size=4),
    over=st.dictionaries(st.text(max_size=2), _json, max_size=4),
)
def test_deep_merge_properties(base: dict[str, Any], over: dict[str, Any]) -> None:
    merged = deep_merge_settings(base, over)
    assert set(merged) == set(base) | set(over)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            assert merged[k] == deep_merge_settings(base[k], v)
        else:
            assert merged[k] == v
    for k in set(base) - set(over):
        assert merged[k] == base[k]
    assert deep_merge_settings(merged, {}) == merged
