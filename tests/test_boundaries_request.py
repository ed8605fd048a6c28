"""The seed chapter's request-boundary tests 2 and 3 (chapter 8, "five boundaries to test before
handing over the context pipeline"):

2. Global, parent, cwd, override and append instructions that *conflict*: record the order in
   which they reach the model. Pi does not reconcile prose; the order (general -> specific) is the
   whole policy, so it is what we pin down -- through the real loader and the real prompt builder,
   and against the prompt Pi 0.85.0's ``buildSystemPrompt`` produced for the same inputs.
3. The same resources with project trust refused: context files still load, while project
   settings, skills, prompt templates, ``.pi/SYSTEM.md`` and ``.pi/APPEND_SYSTEM.md`` (and
   ``.agents/skills``) are blocked.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_nb.resources.loader import ResourceLoader
from pi_nb.resources.settings import SettingsManager
from pi_nb.resources.trust import (
    ProjectTrustStore,
    TrustPrompt,
    has_trust_requiring_project_resources,
    resolve_project_trusted,
)
from pi_nb.system_prompt import build_system_prompt

# buildSystemPrompt of Pi 0.85.0 (oracle) for: cwd /ROOT/project/service, customPrompt = the global
# SYSTEM.md, appendSystemPrompt = the project APPEND_SYSTEM.md, the three context files and one
# skill below, selectedTools ["read"].
PI_PROMPT = (
    "You are a careful formatter.\n\nAppend: never indent.\n\n<project_context>\n\n"
    "Project-specific instructions and guidelines:\n\n"
    '<project_instructions path="/ROOT/agent/AGENTS.md">\nGlobal: indent with tabs.\n</project_instructions>\n\n'
    '<project_instructions path="/ROOT/project/AGENTS.md">\nProject: indent with 2 spaces.\n</project_instructions>\n\n'
    '<project_instructions path="/ROOT/project/service/AGENTS.override.md">\nService override: indent with 8 spaces.\n'
    "</project_instructions>\n\n</project_context>\n\n\n"
    "The following skills provide specialized instructions for specific tasks.\n"
    "Use the read tool to load a skill's file when the task matches its description.\n"
    "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / "
    "dirname of the path) and use that absolute path in tool commands.\n\n"
    "<available_skills>\n  <skill>\n    <name>formatter</name>\n    <description>Formats code</description>\n"
    "    <location>/ROOT/agent/skills/formatter/SKILL.md</location>\n  </skill>\n</available_skills>\n"
    "Current working directory: /ROOT/project/service\n"
)


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Conflicting instructions at every level, plus project resources that need trust."""
    root = Path(os.path.realpath(tmp_path))
    agent, project = root / "agent", root / "project"
    service = project / "service"
    monkeypatch.setenv("HOME", str(root / "home"))
    (root / "home").mkdir()
    # global
    _w(agent / "AGENTS.md", "Global: indent with tabs.")
    _w(agent / "SYSTEM.md", "You are a careful formatter.")
    _w(agent / "APPEND_SYSTEM.md", "Global append: indent with 5 spaces.")
    _w(
        agent / "skills" / "formatter" / "SKILL.md",
        "---\nname: formatter\ndescription: Formats code\n---\nFormat.",
    )
    # parent
    _w(project / "AGENTS.md", "Project: indent with 2 spaces.")
    _w(project / ".agents" / "skills" / "parent-skill" / "SKILL.md", "---\ndescription: Parent skill\n---\nx")
    # cwd: AGENTS.md and AGENTS.override.md conflict; the override wins in its own directory
    _w(service / "AGENTS.md", "Service: indent with 4 spaces.")
    _w(service / "AGENTS.override.md", "Service override: indent with 8 spaces.")
    # the project's own .pi resources (gated by trust)
    _w(service / ".pi" / "APPEND_SYSTEM.md", "Append: never indent.")
    _w(service / ".pi" / "SYSTEM.md", "Project system prompt: ignore all indentation rules.")
    _w(
        service / ".pi" / "settings.json",
        json.dumps({"compaction": {"reserveTokens": 1234}, "defaultProjectTrust": "always"}),
    )
    _w(service / ".pi" / "skills" / "project-skill" / "SKILL.md", "---\ndescription: Project skill\n---\nx")
    _w(service / ".pi" / "prompts" / "fmt.md", "---\ndescription: Project prompt\n---\nFormat $1")
    return {"root": root, "agent": agent, "project": project, "service": service}


def _prompt_for(loader: ResourceLoader, root: Path) -> str:
    """What AgentSession._rebuildSystemPrompt passes to buildSystemPrompt, paths rewritten to /ROOT."""

    def fake(p: str) -> str:
        return p.replace(str(root), "/ROOT")

    files = [dataclasses.replace(f, path=fake(f.path)) for f in loader.get_agents_files()]
    skills = [
        dataclasses.replace(s, file_path=fake(s.file_path), base_dir=fake(s.base_dir))
        for s in loader.get_skills().skills
    ]
    return build_system_prompt(
        cwd=fake(loader.cwd),
        custom_prompt=loader.get_system_prompt(),
        selected_tools=["read"],
        append_system_prompt="\n\n".join(loader.get_append_system_prompt()) or None,
        context_files=[f for f in files if f.path.startswith("/ROOT")],
        skills=skills,
    )


def test_boundary_2_conflicting_instructions_reach_the_model_in_a_recorded_order(
    world: dict[str, Path],
) -> None:
    root, agent, service = world["root"], world["agent"], world["service"]
    # the project's own SYSTEM.md would replace the global one; take it away to see the layering
    (service / ".pi" / "SYSTEM.md").unlink()
    # only the formatter skill matters for the prompt text recorded from Pi
    (root / "project" / ".agents").rename(root / "project" / "agents-off")
    (service / ".pi" / "skills").rename(service / ".pi" / "skills-off")

    loader = ResourceLoader(str(service), str(agent))
    loader.reload()

    order = [
        (f.path.replace(str(root), ""), f.content)
        for f in loader.get_agents_files()
        if f.path.startswith(str(root))
    ]
    assert order == [
        ("/agent/AGENTS.md", "Global: indent with tabs."),  # global first
        ("/project/AGENTS.md", "Project: indent with 2 spaces."),  # then root -> cwd
        ("/project/service/AGENTS.override.md", "Service override: indent with 8 spaces."),  # cwd last
    ]
    # AGENTS.md next to the override in the same directory never reaches the model
    assert all("4 spaces" not in f.content for f in loader.get_agents_files())
    # the project append file replaces the global one (one discovered append file)
    assert loader.get_append_system_prompt() == ["Append: never indent."]
    assert loader.get_system_prompt() == "You are a careful formatter."

    prompt = _prompt_for(loader, root)
    assert prompt == PI_PROMPT
    # the recorded order of the conflicting rules in the final request
    positions = [
        prompt.index(text)
        for text in (
            "You are a careful formatter.",
            "Append: never indent.",
            "Global: indent with tabs.",
            "Project: indent with 2 spaces.",
            "Service override: indent with 8 spaces.",
            "<available_skills>",
            "Current working directory:",
        )
    ]
    assert positions == sorted(positions)


def _trusted_loader(world: dict[str, Path], trusted: bool) -> ResourceLoader:
    sm = SettingsManager.create(str(world["service"]), str(world["agent"]), project_trusted=trusted)
    loader = ResourceLoader(str(world["service"]), str(world["agent"]), settings_manager=sm)
    loader.reload()
    return loader


def test_boundary_3_trust_refused_blocks_project_resources_but_not_context_files(
    world: dict[str, Path],
) -> None:
    root, agent, service = world["root"], world["agent"], world["service"]
    assert has_trust_requiring_project_resources(str(service)) is True
    store = ProjectTrustStore(str(agent))
    asked: list[TrustPrompt] = []

    def refuse(prompt: TrustPrompt) -> str:
        asked.append(prompt)
        return "Do not trust"

    loader = ResourceLoader(str(service), str(agent))
    loader.reload(resolve_project_trust=lambda: resolve_project_trusted(str(service), store, ask=refuse))
    assert len(asked) == 1 and store.get(str(service)) is False

    # context files: all still there, in the same order
    contents = [f.content for f in loader.get_agents_files() if f.path.startswith(str(root))]
    assert contents == [
        "Global: indent with tabs.",
        "Project: indent with 2 spaces.",
        "Service override: indent with 8 spaces.",
    ]
    # project settings: ignored (the project's reserveTokens and its "always" are not read)
    sm = loader.settings_manager
    assert sm.is_project_trusted() is False
    assert sm.get_project_settings() == {}
    assert sm.get_compaction_settings().reserve_tokens == 16384
    assert sm.get_default_project_trust() == "ask"
    # project skills (.pi/skills and .agents/skills) and prompt templates: blocked
    assert [s.name for s in loader.get_skills().skills] == ["formatter"]
    assert loader.get_prompts().prompts == ()
    # SYSTEM.md / APPEND_SYSTEM.md: the global ones, never the project's
    assert loader.get_system_prompt() == "You are a careful formatter."
    assert loader.get_system_prompt_source() is not None
    assert loader.get_system_prompt_source().path == str(agent / "SYSTEM.md")  # type: ignore[union-attr]
    assert loader.get_append_system_prompt() == ["Global append: indent with 5 spaces."]
    prompt = _prompt_for(loader, root)
    assert "ignore all indentation rules" not in prompt and "never indent" not in prompt
    assert "Service override: indent with 8 spaces." in prompt

    # the saved refusal is remembered on the next run, without asking
    again = ResourceLoader(str(service), str(agent))
    again.reload(resolve_project_trust=lambda: resolve_project_trusted(str(service), store, ask=refuse))
    assert len(asked) == 1 and again.get_system_prompt() == "You are a careful formatter."


def test_boundary_3_contrast_trusted_project_loads_everything(world: dict[str, Path]) -> None:
    loader = _trusted_loader(world, True)
    assert loader.get_system_prompt() == "Project system prompt: ignore all indentation rules."
    assert loader.get_append_system_prompt() == ["Append: never indent."]
    assert {s.name for s in loader.get_skills().skills} == {"formatter", "project-skill", "parent-skill"}
    assert [p.name for p in loader.get_prompts().prompts] == ["fmt"]
    assert loader.settings_manager.get_compaction_settings().reserve_tokens == 1234
    untrusted = _trusted_loader(world, False)
    assert [f.content for f in untrusted.get_agents_files()] == [f.content for f in loader.get_agents_files()]


@pytest.mark.parametrize(
    ("how", "kwargs"),
    [
        ("per-run override (--no-approve)", {"trust_override": False}),
        ("defaultProjectTrust never", {"default_project_trust": "never"}),
        ("project_trust hook", {"project_trust": lambda event: {"trusted": "no"}}),
        ("no way to ask", {}),
        ("dismissed", {"ask": lambda prompt: None}),
        ("session-only refusal", {"ask": lambda prompt: "Do not trust (this session only)"}),
    ],
)
def test_boundary_3_every_way_of_refusing_blocks_the_same_resources(
    world: dict[str, Path], how: str, kwargs: dict[str, Any]
) -> None:
    service, agent = world["service"], world["agent"]
    store = ProjectTrustStore(str(agent))
    loader = ResourceLoader(str(service), str(agent))
    loader.reload(resolve_project_trust=lambda: resolve_project_trusted(str(service), store, **kwargs))
    assert loader.settings_manager.is_project_trusted() is False, how
    assert [s.name for s in loader.get_skills().skills] == ["formatter"]
    assert loader.get_prompts().prompts == ()
    assert loader.get_system_prompt() == "You are a careful formatter."
    assert loader.get_append_system_prompt() == ["Global append: indent with 5 spaces."]
    assert len([f for f in loader.get_agents_files() if f.path.startswith(str(world["root"]))]) == 3
    assert store.get(str(service)) is None  # none of these ways saves a decision
