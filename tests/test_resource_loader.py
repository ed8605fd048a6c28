"""ResourceLoader: golden parity with Pi 0.85.0's DefaultResourceLoader, Pi's resource-loader tests
(ported), minimatch parity, and the override/extension behaviour."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_nb.errors import SettingsFileError
from pi_nb.resources._minimatch import minimatch
from pi_nb.resources.context_files import ContextFile
from pi_nb.resources.loader import (
    PathMetadata,
    PromptSource,
    PromptsResult,
    ResourceLoader,
    resolve_resource_paths,
)
from pi_nb.resources.settings import SettingsManager
from pi_nb.resources.skills import LoadSkillsResult, Skill, create_synthetic_source_info

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "resource_loader.json"
MINIMATCH = HERE / "golden" / "resource_minimatch.json"

_spec = importlib.util.spec_from_file_location(
    "make_context_files", HERE / "golden" / "make_context_files.py"
)
assert _spec is not None and _spec.loader is not None
mcf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mcf)

CASES = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").split("\n") if line.strip()]


def _scrub(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(root, "{ROOT}")
    if isinstance(value, list):
        return [_scrub(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, root) for k, v in value.items()}
    return value


def _diag(d: Any) -> dict[str, Any]:
    out: dict[str, Any] = d.to_dict()
    return out


def _normalize_yaml_messages(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """YAML error texts are the parser's own (JS ``yaml`` vs PyYAML): both must name a line."""
    for g, w in zip(got, want, strict=False):
        if " at line " in w.get("message", "") and " at line " in g.get("message", ""):
            g["message"] = w["message"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_golden_parity(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = os.path.realpath(tmp_path / "scratch")
    os.mkdir(root)
    mcf.build_tree(root, case["tree"])
    monkeypatch.setenv("HOME", mcf.sub_root(case["home"], root))
    cwd = mcf.sub_root(case["cwd"], root)
    agent_dir = mcf.sub_root(case["agentDir"], root)
    opts = json.loads(mcf.sub_root(json.dumps(case["options"]), root))
    kwargs: dict[str, Any] = {
        "additional_skill_paths": opts.get("additionalSkillPaths", ()),
        "additional_prompt_template_paths": opts.get("additionalPromptTemplatePaths", ()),
        "no_skills": opts.get("noSkills", False),
        "no_prompt_templates": opts.get("noPromptTemplates", False),
        "no_context_files": opts.get("noContextFiles", False),
        "system_prompt": opts.get("systemPrompt"),
        "append_system_prompt": opts.get("appendSystemPrompt"),
    }
    if case["trusted"] is not None:
        kwargs["settings_manager"] = SettingsManager.create(cwd, agent_dir, project_trusted=case["trusted"])
    loader = ResourceLoader(cwd, agent_dir, **kwargs)
    loader.reload()

    skills = loader.get_skills()
    prompts = loader.get_prompts()
    got = {
        "skills": [{k: v for k, v in s.to_dict().items() if k != "content"} for s in skills.skills],
        "skillDiagnostics": [_diag(d) for d in skills.diagnostics],
        "prompts": [p.to_dict() for p in prompts.prompts],
        "promptDiagnostics": [_diag(d) for d in prompts.diagnostics],
        "agentsFiles": [f.to_dict() for f in loader.get_agents_files()],
        "systemPrompt": loader.get_system_prompt(),
        "systemPromptSource": s.to_dict() if (s := loader.get_system_prompt_source()) else None,
        "appendSystemPrompt": loader.get_append_system_prompt(),
        "appendSystemPromptSources": [p.to_dict() for p in loader.get_append_system_prompt_sources()],
    }
    got = _scrub(got, root)
    want = dict(case["response"]["result"])
    assert want.pop("extensionErrors") == []
    # context files above the scratch dir depend on the machine, not on Pi
    got["agentsFiles"] = [f for f in got["agentsFiles"] if f["path"].startswith("{ROOT}")]
    _normalize_yaml_messages(got["skillDiagnostics"], want["skillDiagnostics"])
    assert got == want


# --- Pi's resource-loader.test.ts, ported


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    root = Path(os.path.realpath(tmp_path))
    agent, cwd, home = root / "agent", root / "project", root / "home"
    for d in (agent, cwd, home):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return root, agent, cwd


def _w(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_empty_before_reload(env: tuple[Path, Path, Path]) -> None:
    _root, agent, cwd = env
    _w(agent / "skills" / "s.md", "---\nname: s\ndescription: d\n---\n")
    _w(cwd / "AGENTS.md", "x")
    _w(agent / "SYSTEM.md", "sys")
    loader = ResourceLoader(str(cwd), str(agent))
    assert loader.loaded is False
    assert loader.get_skills().skills == () and loader.get_prompts().prompts == ()
    assert loader.get_agents_files() == [] and loader.get_system_prompt() is None
    assert loader.get_append_system_prompt() == [] and loader.get_system_prompt_source() is None
    loader.reload()
    assert loader.loaded is True
    assert [s.name for s in loader.get_skills().skills] == ["s"]
    assert loader.get_system_prompt() == "sys"


def test_untrusted_project_uses_global_system_prompt_and_keeps_context_files(
    env: tuple[Path, Path, Path],
) -> None:
    _root, agent, cwd = env
    _w(cwd / ".pi" / "SYSTEM.md", "project system")
    _w(agent / "SYSTEM.md", "global system")
    _w(agent / "AGENTS.md", "global agents")
    _w(cwd / "AGENTS.md", "project agents")
    _w(cwd / ".pi" / "skills" / "p" / "SKILL.md", "---\nname: p\ndescription: d\n---\n")
    _w(cwd / ".pi" / "prompts" / "pp.md", "pp")
    sm = SettingsManager.create(str(cwd), str(agent), project_trusted=False)
    loader = ResourceLoader(str(cwd), str(agent), settings_manager=sm)
    loader.reload()
    assert loader.get_system_prompt() == "global system"
    assert [f.content for f in loader.get_agents_files()][-2:] == ["global agents", "project agents"]
    assert loader.get_skills().skills == () and loader.get_prompts().prompts == ()
    assert loader.get_diagnostics() == []


def test_sources(env: tuple[Path, Path, Path]) -> None:
    root, agent, cwd = env
    sys_path = _w(root / "custom-system.md", "Custom system prompt.")
    app_path = _w(root / "custom-append.md", "Custom append prompt.")
    loader = ResourceLoader(
        str(cwd), str(agent), system_prompt=str(sys_path), append_system_prompt=[str(app_path), "Lit"]
    )
    loader.reload()
    assert loader.get_system_prompt() == "Custom system prompt."
    assert loader.get_system_prompt_source() == PromptSource(str(sys_path))
    assert loader.get_append_system_prompt() == ["Custom append prompt.", "Lit"]
    assert [s.to_dict() for s in loader.get_append_system_prompt_sources()] == [{"path": str(app_path)}]
    literal = ResourceLoader(
        str(cwd), str(agent), system_prompt="Literal.", append_system_prompt=["Only literal"]
    )
    literal.reload()
    assert literal.get_system_prompt() == "Literal." and literal.get_system_prompt_source() is None
    assert literal.get_append_system_prompt_sources() == []


def test_overrides_replace_not_append(env: tuple[Path, Path, Path]) -> None:
    _root, agent, cwd = env
    _w(agent / "skills" / "real.md", "---\nname: real\ndescription: d\n---\n")
    _w(agent / "prompts" / "real.md", "real prompt")
    _w(cwd / "AGENTS.md", "ctx")
    _w(agent / "APPEND_SYSTEM.md", "appended")
    injected = Skill(
        name="injected",
        description="Injected skill",
        file_path="/fake/path",
        base_dir="/fake",
        source_info=create_synthetic_source_info("/fake/path", source="custom"),
    )
    seen: dict[str, Any] = {}

    def skills_override(base: LoadSkillsResult) -> LoadSkillsResult:
        seen["skills"] = [s.name for s in base.skills]
        return LoadSkillsResult((injected,), ())

    def prompts_override(base: PromptsResult) -> PromptsResult:
        seen["prompts"] = [p.name for p in base.prompts]
        return PromptsResult((), ())

    def agents_override(base: list[ContextFile]) -> list[ContextFile]:
        seen["agents"] = [f.content for f in base if f.path.startswith(str(cwd))]
        return [ContextFile("/virtual/AGENTS.md", "virtual")]

    def sys_override(base: str | None) -> str | None:
        seen["system"] = base
        return "Custom system prompt"

    def append_override(base: list[str]) -> list[str]:
        seen["append"] = base
        return [*base, "more"]

    loader = ResourceLoader(
        str(cwd),
        str(agent),
        skills_override=skills_override,
        prompts_override=prompts_override,
        agents_files_override=agents_override,
        system_prompt_override=sys_override,
        append_system_prompt_override=append_override,
    )
    loader.reload()
    assert seen == {
        "skills": ["real"],
        "prompts": ["real"],
        "agents": ["ctx"],
        "system": None,
        "append": ["appended"],
    }
    [skill] = loader.get_skills().skills
    assert skill.name == "injected"
    # the override's own source info is kept (nothing discovered lives at /fake/path)
    assert skill.source_info.source == "custom"
    assert loader.get_prompts().prompts == ()
    assert loader.get_agents_files() == [ContextFile("/virtual/AGENTS.md", "virtual")]
    assert loader.get_system_prompt() == "Custom system prompt"
    assert loader.get_append_system_prompt() == ["appended", "more"]


def test_reload_with_trust_resolver(env: tuple[Path, Path, Path]) -> None:
    _root, agent, cwd = env
    _w(cwd / ".pi" / "settings.json", json.dumps({"compaction": {"reserveTokens": 1}}))
    _w(cwd / ".pi" / "SYSTEM.md", "project system")
    loader = ResourceLoader(str(cwd), str(agent))
    calls: list[bool] = []

    def resolver() -> bool:
        calls.append(loader.settings_manager.is_project_trusted())  # asked while untrusted
        return False

    loader.reload(resolve_project_trust=resolver)
    assert calls == [False]
    assert loader.settings_manager.is_project_trusted() is False
    assert loader.get_system_prompt() is None
    assert loader.settings_manager.get_compaction_reserve_tokens() == 16384
    loader.reload(resolve_project_trust=lambda: True)
    assert loader.get_system_prompt() == "project system"
    assert loader.settings_manager.get_compaction_reserve_tokens() == 1
    loader.reload()  # keeps the last decision
    assert loader.settings_manager.is_project_trusted() is True


def test_extend_resources(env: tuple[Path, Path, Path]) -> None:
    root, agent, cwd = env
    skill_dir = root / "extra skills" / "extra-skill"
    skill_path = _w(skill_dir / "SKILL.md", "---\nname: extra-skill\ndescription: Extra skill\n---\nExtra")
    prompt_dir = root / "extra-prompts"
    prompt_path = _w(prompt_dir / "extra.md", "---\ndescription: Extra prompt\n---\nExtra prompt content")
    loader = ResourceLoader(str(cwd), str(agent))
    loader.reload()
    meta = PathMetadata("extension:extra", "temporary", base_dir=str(skill_dir))
    loader.extend_resources(
        skill_paths=[(skill_dir.as_uri(), meta)],
        prompt_paths=[
            (str(prompt_path), PathMetadata("extension:extra", "temporary", base_dir=str(prompt_dir)))
        ],
    )
    [skill] = loader.get_skills().skills
    assert skill.file_path == str(skill_path)
    assert skill.source_info.source == "extension:extra" and skill.source_info.path == str(skill_path)
    [p] = loader.get_prompts().prompts
    assert (
        p.name == "extra"
        and p.source_info.source == "extension:extra"
        and p.source_info.path == str(prompt_path)
    )
    assert loader.get_skills().diagnostics == ()


def test_resolved_paths_metadata_and_precedence(env: tuple[Path, Path, Path]) -> None:
    _root, agent, cwd = env
    _w(agent / "settings.json", json.dumps({"skills": ["listed"], "prompts": ["-prompts/off.md"]}))
    _w(agent / "listed" / "l" / "SKILL.md", "---\ndescription: d\n---\n")
    _w(agent / "skills" / "u.md", "---\ndescription: d\n---\n")
    _w(cwd / ".pi" / "skills" / "p.md", "---\ndescription: d\n---\n")
    _w(agent / "prompts" / "off.md", "x")
    sm = SettingsManager.create(str(cwd), str(agent))
    resolved = resolve_resource_paths(str(cwd), str(agent), sm)
    assert [
        (r.path.replace(str(env[0]), ""), r.metadata.source, r.metadata.scope) for r in resolved.skills
    ] == [
        ("/project/.pi/skills/p.md", "auto", "project"),
        ("/agent/listed/l/SKILL.md", "local", "user"),
        ("/agent/skills/u.md", "auto", "user"),
    ]
    assert [(r.enabled, r.to_dict()["metadata"]) for r in resolved.prompts] == [
        (False, {"source": "auto", "scope": "user", "origin": "top-level", "baseDir": str(agent)})
    ]
    assert resolved.to_dict()["skills"][0]["enabled"] is True


def test_bad_settings_list_raises(env: tuple[Path, Path, Path]) -> None:
    _root, agent, cwd = env
    _w(agent / "settings.json", json.dumps({"skills": "not-a-list"}))
    loader = ResourceLoader(str(cwd), str(agent))
    with pytest.raises(SettingsFileError, match="arrays of strings"):
        loader.reload()


def test_default_agent_dir_from_environment(
    env: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _root, agent, cwd = env
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    _w(agent / "AGENTS.md", "from env agent dir")
    loader = ResourceLoader(str(cwd))
    loader.reload()
    assert loader.agent_dir == str(agent)
    assert loader.get_agents_files()[0] == ContextFile(str(agent / "AGENTS.md"), "from env agent dir")


# --- minimatch parity (vectors recorded from minimatch 10.2.5, Pi's dependency)


def test_minimatch_vectors() -> None:
    data = json.loads(MINIMATCH.read_text(encoding="utf-8"))
    assert len(data) >= 500
    mismatches = [
        (path, pattern, want) for path, pattern, want in data if minimatch(path, pattern) is not want
    ]
    assert mismatches == []


@pytest.mark.parametrize(
    ("path", "pattern", "want"),
    [
        ("a", "a/**", False),
        ("a/", "a/**", True),
        ("c", "**/c", True),
        ("a/.b", "a/*", False),
        ("a/.b", "a/.*", True),
        ("/a", "*/a", False),
        ("x", "#x", False),
        ("y", "!x", True),
        ("a.md", "!(*.md)", True),  # a leading "!" negates "(*.md)", a literal
        ("a3", "a{1..5}", True),
        ("a//b", "a/b", True),
        ("", "", True),
    ],
)
def test_minimatch_known_answers(path: str, pattern: str, want: bool) -> None:
    assert minimatch(path, pattern) is want
