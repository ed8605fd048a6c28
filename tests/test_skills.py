"""Skills: golden parity with Pi 0.85.0 (tests/golden/skills.json) and Pi's own skills tests (§11.3)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from _fs_tree import ROOT, mask, materialize, unmask

from pi_nb.errors import FrontmatterError
from pi_nb.resources.skills import (
    LoadSkillsResult,
    ResourceDiagnostic,
    Skill,
    SourceInfo,
    collect_skill_entries,
    create_synthetic_source_info,
    expand_skill_command,
    format_skills_for_prompt,
    load_skill_from_file,
    load_skills,
    load_skills_from_dir,
)

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "skills"
COLLISION_FIXTURES = HERE / "fixtures" / "skills-collision"
GOLDEN = json.loads((HERE / "golden" / "skills.json").read_text(encoding="utf-8"))["cases"]


def _cases(section: str) -> list[dict[str, Any]]:
    return [c for c in GOLDEN if c["section"] == section]


def skill_from_dict(d: dict[str, Any], source: str = "test") -> Skill:
    return Skill(
        name=d["name"],
        description=d["description"],
        file_path=d["filePath"],
        base_dir=d.get("baseDir", os.path.dirname(d["filePath"])),
        source_info=create_synthetic_source_info(d["filePath"], source=source),
        disable_model_invocation=d.get("disableModelInvocation", False),
    )


def assert_same_result(got: dict[str, Any], want: dict[str, Any], yaml_errors: list[int]) -> None:
    """Equal, except diagnostics carrying the YAML parser's own message: same type and path, and
    our message is non-empty and names a line."""
    assert got["skills"] == want["skills"]
    assert len(got["diagnostics"]) == len(want["diagnostics"])
    for i, (g, w) in enumerate(zip(got["diagnostics"], want["diagnostics"], strict=True)):
        if i in yaml_errors:
            assert (g["type"], g.get("path")) == (w["type"], w.get("path"))
            assert g["message"] and "line" in g["message"]
        else:
            assert g == w


def run_call(fn: str, args: dict[str, Any]) -> Any:
    if fn == "loadSkillsFromDir":
        return load_skills_from_dir(args["dir"], args.get("source", "path")).to_dict()
    if fn == "loadSkills":
        return load_skills(
            args["cwd"], args.get("agentDir"), args.get("skillPaths", []), args.get("includeDefaults", True)
        ).to_dict()
    if fn == "formatSkillsForPrompt":
        skills = [skill_from_dict(s) for s in args["skills"]]
        return format_skills_for_prompt(skills, args.get("fileReadTool", "read"))
    if fn == "collectSkillEntries":
        return collect_skill_entries(args["dir"], args["mode"])
    raise AssertionError(fn)


def check_call(call: dict[str, Any], root: str) -> None:
    resp = call["response"]
    assert resp["ok"], resp
    got = mask(run_call(call["fn"], unmask(call["args"], root)), root)
    if isinstance(got, dict) and "diagnostics" in got:
        assert_same_result(got, resp["result"], call.get("yamlErrors", []))
    else:
        assert got == resp["result"]


# ---------------------------------------------------------------------------------------------
# Golden parity
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fixture_root(tmp_path: Path) -> str:
    root = os.path.realpath(tmp_path)
    shutil.copytree(FIXTURES, os.path.join(root, "skills"))
    shutil.copytree(COLLISION_FIXTURES, os.path.join(root, "skills-collision"))
    os.makedirs(os.path.join(root, "empty-agent"))
    os.makedirs(os.path.join(root, "empty-cwd"))
    home = os.path.join(root, "home", ".pi", "agent", "skills")
    os.makedirs(home)
    shutil.copytree(FIXTURES / "valid-skill", os.path.join(home, "valid-skill"))
    return root


@pytest.mark.parametrize("case", _cases("fixtures"), ids=lambda c: c["name"])
def test_fixture_golden(case: dict[str, Any], fixture_root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.get("env"):
        for k, v in unmask(case["env"], fixture_root).items():
            monkeypatch.setenv(k, v)
    check_call({**case, "yamlErrors": case["yamlErrors"]}, fixture_root)


@pytest.mark.parametrize("case", _cases("trees"), ids=lambda c: c["name"])
def test_tree_golden(case: dict[str, Any], tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    materialize(os.path.join(root, "tree"), case["spec"])
    materialize(os.path.join(root, "agent", "skills"), case["agentSpec"])
    materialize(os.path.join(root, "proj", ".pi", "skills"), case["projSpec"])
    cwd = os.getcwd()
    try:
        for call in case["calls"]:
            check_call(call, root)
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("case", _cases("format"), ids=lambda c: c["name"])
def test_format_golden(case: dict[str, Any]) -> None:
    assert run_call("formatSkillsForPrompt", case["args"]) == case["response"]["result"]


def test_golden_counts() -> None:
    assert len(_cases("trees")) >= 60
    assert len(_cases("fixtures")) >= 15


# ---------------------------------------------------------------------------------------------
# Pi's skills.test.ts (§11.3), in pytest form
# ---------------------------------------------------------------------------------------------


def _load(name: str) -> LoadSkillsResult:
    return load_skills_from_dir(str(FIXTURES / name), "test")


def _has(diags: tuple[ResourceDiagnostic, ...], text: str) -> bool:
    return any(text in d.message for d in diags)


def test_valid_skill() -> None:
    r = _load("valid-skill")
    assert len(r.skills) == 1
    assert r.skills[0].name == "valid-skill"
    assert r.skills[0].description == "A valid skill for testing purposes."
    assert r.skills[0].source_info.source == "test"
    assert r.diagnostics == ()
    assert r.skills[0].disable_model_invocation is False


def test_name_from_frontmatter_without_mismatch_warning() -> None:
    r = _load("name-mismatch")
    assert [s.name for s in r.skills] == ["different-name"]
    assert r.diagnostics == ()


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("invalid-name-chars", "invalid characters"),
        ("long-name", "exceeds 64 characters"),
        ("consecutive-hyphens", "consecutive hyphens"),
    ],
)
def test_name_warnings_still_load(fixture: str, message: str) -> None:
    r = _load(fixture)
    assert len(r.skills) == 1
    assert _has(r.diagnostics, message)


@pytest.mark.parametrize("fixture", ["missing-description", "no-frontmatter"])
def test_missing_description_skips(fixture: str) -> None:
    r = _load(fixture)
    assert r.skills == ()
    assert _has(r.diagnostics, "description is required")


def test_unknown_field_ignored() -> None:
    r = _load("unknown-field")
    assert len(r.skills) == 1 and r.diagnostics == ()


def test_nested_and_root_preferred() -> None:
    assert [s.name for s in _load("nested").skills] == ["child-skill"]
    r = _load("root-skill-preferred")
    assert [(s.name, s.description) for s in r.skills] == [("root-skill-preferred", "Root skill should win.")]
    assert r.diagnostics == ()


def test_invalid_yaml_is_a_warning_with_a_line() -> None:
    r = _load("invalid-yaml")
    assert r.skills == ()
    assert len(r.diagnostics) == 1
    assert r.diagnostics[0].type == "warning"
    assert "at line" in r.diagnostics[0].message


def test_multiline_description() -> None:
    r = _load("multiline-description")
    assert "\n" in r.skills[0].description
    assert "This is a multiline description." in r.skills[0].description
    assert r.diagnostics == ()


def test_whole_fixture_dir_and_missing_dir() -> None:
    assert len(load_skills_from_dir(str(FIXTURES), "test").skills) >= 6
    missing = load_skills_from_dir("/non/existent/path", "test")
    assert missing.skills == () and missing.diagnostics == ()


def test_disable_model_invocation() -> None:
    r = _load("disable-model-invocation")
    assert r.skills[0].name == "disable-model-invocation"
    assert r.skills[0].disable_model_invocation is True
    assert not _has(r.diagnostics, "unknown frontmatter field")


def _skill(name: str, description: str, path: str, disabled: bool = False) -> Skill:
    return Skill(name, description, path, os.path.dirname(path), SourceInfo(path, "test"), disabled)


def test_format_skills_for_prompt() -> None:
    assert format_skills_for_prompt([]) == ""
    one = format_skills_for_prompt([_skill("test-skill", "A test skill.", "/path/to/skill/SKILL.md")])
    for part in (
        "<available_skills>",
        "</available_skills>",
        "<skill>",
        "<name>test-skill</name>",
        "<description>A test skill.</description>",
        "<location>/path/to/skill/SKILL.md</location>",
    ):
        assert part in one
    intro = one[: one.index("<available_skills>")]
    assert "The following skills provide specialized instructions" in intro
    assert "Use the read tool to load a skill's file" in intro
    assert one.startswith("\n\n") and not one.endswith("\n")
    esc = format_skills_for_prompt([_skill("t", 'A skill with <special> & "characters".', "/p/SKILL.md")])
    assert "&lt;special&gt;" in esc and "&amp;" in esc and "&quot;characters&quot;" in esc
    two = format_skills_for_prompt(
        [_skill("skill-one", "1", "/one/SKILL.md"), _skill("skill-two", "2", "/two/SKILL.md")]
    )
    assert two.count("<skill>") == 2
    mixed = format_skills_for_prompt(
        [_skill("visible", "v", "/v/SKILL.md"), _skill("hidden", "h", "/h/SKILL.md", True)]
    )
    assert (
        "<name>visible</name>" in mixed and "<name>hidden</name>" not in mixed and mixed.count("<skill>") == 1
    )
    assert format_skills_for_prompt([_skill("hidden", "h", "/h/SKILL.md", True)]) == ""
    assert "Use bash to load a skill's file" in format_skills_for_prompt([_skill("a", "b", "/c.md")], "bash")


def test_load_skills_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, cwd = str(tmp_path / "agent"), str(tmp_path / "cwd")
    r = load_skills(cwd, agent, [str(FIXTURES / "valid-skill")], True)
    assert len(r.skills) == 1 and r.skills[0].source_info.scope == "temporary" and r.diagnostics == ()
    r = load_skills(cwd, agent, ["/non/existent/path"], True)
    assert r.skills == () and _has(r.diagnostics, "does not exist")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home_skills = tmp_path / "home" / ".pi" / "agent" / "skills"
    shutil.copytree(FIXTURES / "valid-skill", home_skills / "valid-skill")
    with_tilde = load_skills(cwd, agent, ["~/.pi/agent/skills"], True)
    without = load_skills(cwd, agent, [str(home_skills)], True)
    assert len(with_tilde.skills) == len(without.skills) == 1


def test_collision_first_wins() -> None:
    first = str(COLLISION_FIXTURES / "first")
    second = str(COLLISION_FIXTURES / "second")
    r = load_skills("/", "/nonexistent-agent", [first, second], False)
    assert [s.description for s in r.skills] == ["The first calendar skill."]
    (diag,) = r.diagnostics
    assert diag.type == "collision" and diag.message == 'name "calendar" collision'
    assert diag.collision is not None
    assert diag.collision.winner_path.startswith(first) and diag.collision.loser_path.startswith(second)


# ---------------------------------------------------------------------------------------------
# Discovery details beyond the golden trees
# ---------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _md(desc: str = "D.", name: str | None = None) -> str:
    return "---\n" + (f"name: {name}\n" if name else "") + f"description: {desc}\n---\nBody\n"


def test_agents_mode_rules(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write(root / "root.md", _md())
    _write(root / "group" / "inner.md", _md())
    _write(root / "group" / "deeper" / "x.md", _md())
    _write(root / "skill" / "SKILL.md", _md())
    _write(root / "skill" / "other.md", _md())
    agents = [os.path.relpath(p, root) for p in collect_skill_entries(str(root), "agents")]
    assert agents == ["group/deeper/x.md", "group/inner.md", "skill/SKILL.md"]
    pi = [os.path.relpath(p, root) for p in collect_skill_entries(str(root), "pi")]
    assert pi == ["root.md", "skill/SKILL.md"]
    loaded = load_skills_from_dir(str(root), "project", mode="agents")
    assert [os.path.relpath(s.file_path, root) for s in loaded.skills] == agents


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write(root / "a" / "s" / "SKILL.md", _md(name="s"))
    os.symlink("..", root / "a" / "up")
    os.symlink("../a", root / "a" / "again")
    (root / "b").mkdir()
    os.symlink("../b", root / "b" / "self")
    r = load_skills_from_dir(str(root))
    # each skill once, under its first path (Pi would walk the loops until ELOOP)
    assert [os.path.relpath(s.file_path, root) for s in r.skills] == ["a/s/SKILL.md"]
    assert collect_skill_entries(str(root), "agents") == [str(root / "a" / "s" / "SKILL.md")]


def test_ignore_rules_are_rerooted_and_case_insensitive(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write(root / "keep" / "SKILL.md", _md())
    _write(root / "Drop" / "SKILL.md", _md())
    _write(root / "sub" / "x" / "SKILL.md", _md())
    _write(root / "sub" / "deep" / "x" / "SKILL.md", _md())
    _write(root / ".gitignore", "drop/\n")
    _write(root / "sub" / ".ignore", "x\n")  # becomes sub/x: only directly under sub
    found = sorted(os.path.relpath(s.file_path, root) for s in load_skills_from_dir(str(root)).skills)
    assert found == ["keep/SKILL.md", "sub/deep/x/SKILL.md"]


def test_hidden_and_node_modules_skipped(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write(root / ".hidden" / "SKILL.md", _md())
    _write(root / "node_modules" / "pkg" / "SKILL.md", _md())
    _write(root / "ok" / "SKILL.md", _md())
    assert [s.base_dir for s in load_skills_from_dir(str(root)).skills] == [str(root / "ok")]


def test_load_skill_from_file_sources(tmp_path: Path) -> None:
    f = tmp_path / "dir" / "SKILL.md"
    _write(f, _md())
    for source, (src, scope) in {
        "user": ("local", "user"),
        "project": ("local", "project"),
        "path": ("local", "temporary"),
        "npm:pkg": ("npm:pkg", "temporary"),
    }.items():
        skill, diags = load_skill_from_file(str(f), source)
        assert skill is not None and diags == []
        assert (skill.source_info.source, skill.source_info.scope, skill.source_info.base_dir) == (
            src,
            scope,
            str(tmp_path / "dir"),
        )
        assert skill.name == "dir"


def test_non_skill_md_without_description_is_silent(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    _write(f, "# just notes\n")
    assert load_skill_from_file(str(f)) == (None, [])
    _write(f, "---\nname: [broken\n---\n")
    assert load_skill_from_file(str(f)) == (None, [])


def test_description_length_counts_utf16(tmp_path: Path) -> None:
    f = tmp_path / "s" / "SKILL.md"
    _write(f, _md("😀" * 513))  # 513 code points, 1026 UTF-16 units
    skill, diags = load_skill_from_file(str(f))
    assert skill is not None
    assert [d.message for d in diags] == ["description exceeds 1024 characters (1026)"]


def test_to_dict_shapes() -> None:
    s = _skill("a", "b", "/x/SKILL.md")
    assert s.to_dict() == {
        "name": "a",
        "description": "b",
        "filePath": "/x/SKILL.md",
        "baseDir": "/x",
        "sourceInfo": {"path": "/x/SKILL.md", "source": "test", "scope": "temporary", "origin": "top-level"},
        "disableModelInvocation": False,
    }
    assert ResourceDiagnostic("warning", "m").to_dict() == {"type": "warning", "message": "m"}


# ---------------------------------------------------------------------------------------------
# /skill:name expansion (AgentSession._expandSkillCommand)
# ---------------------------------------------------------------------------------------------


def test_expand_skill_command(tmp_path: Path) -> None:
    f = tmp_path / "test" / "SKILL.md"
    _write(f, "---\nname: test\ndescription: T.\n---\n\n  Do the thing.  \n\n")
    skill, _ = load_skill_from_file(str(f))
    assert skill is not None
    head = f'<skill name="test" location="{f}">\nReferences are relative to {tmp_path / "test"}.\n\nDo the thing.\n</skill>'
    assert expand_skill_command("/skill:test explain this", [skill]) == head + "\n\nexplain this"
    assert expand_skill_command("/skill:test", [skill]) == head
    assert expand_skill_command("/skill:test    ", [skill]) == head
    assert expand_skill_command("/skill:test   a  b  ", [skill]) == head + "\n\na  b"
    assert expand_skill_command("/skill:other x", [skill]) == "/skill:other x"
    assert expand_skill_command("please /skill:test", [skill]) == "please /skill:test"
    # a tab is not the separator: the name would be "test\targs"
    assert expand_skill_command("/skill:test\targs", [skill]) == "/skill:test\targs"


def test_expand_skill_command_no_frontmatter_and_disabled(tmp_path: Path) -> None:
    f = tmp_path / "raw" / "SKILL.md"
    _write(f, "\n  plain body  \n")
    skill = Skill("raw", "d", str(f), str(f.parent), SourceInfo(str(f), "x"), disable_model_invocation=True)
    assert expand_skill_command("/skill:raw", [skill]).endswith("\n\nplain body\n</skill>")


def test_expand_skill_command_errors(tmp_path: Path) -> None:
    missing = Skill("gone", "d", str(tmp_path / "gone.md"), str(tmp_path), SourceInfo("x", "x"))
    with pytest.raises(OSError):
        expand_skill_command("/skill:gone now", [missing])
    seen: list[tuple[str, type[Exception]]] = []
    out = expand_skill_command(
        "/skill:gone now", [missing], on_error=lambda s, e: seen.append((s.name, type(e)))
    )
    assert out == "/skill:gone now" and seen == [("gone", FileNotFoundError)]
    bad = tmp_path / "bad" / "SKILL.md"
    _write(bad, "---\na: [\n---\n")
    broken = Skill("bad", "d", str(bad), str(bad.parent), SourceInfo("x", "x"))
    with pytest.raises(FrontmatterError):
        expand_skill_command("/skill:bad", [broken])


def test_root_placeholder_is_not_in_real_paths() -> None:
    assert ROOT not in str(FIXTURES)


# ---------------------------------------------------------------------------------------------
# Live differential check (only with ../shared/pi-oracle installed; the golden file covers CI)
# ---------------------------------------------------------------------------------------------


def _oracle_available() -> bool:
    import sys

    sys.path.insert(0, str(HERE.parents[1] / "shared" / "pi-oracle"))
    sys.path.insert(0, str(HERE.parent / "shared" / "pi-oracle"))
    try:
        from oracle_client import oracle_available
    except ImportError:
        return False
    return bool(oracle_available())


@pytest.mark.oracle
@pytest.mark.skipif(not _oracle_available(), reason="pi-oracle not installed")
def test_random_trees_against_live_oracle(tmp_path: Path) -> None:
    import random
    import sys

    from oracle_client import Oracle

    sys.path.insert(0, str(HERE / "golden"))
    import make_skills

    with Oracle() as o:
        for n in range(12):
            rng = random.Random(777_000 + n)
            root = os.path.realpath(tmp_path / f"t{n}")
            spec = make_skills.random_tree(rng)
            materialize(root, spec)
            source = rng.choice(["user", "project", "path", "x"])
            want = o.request("loadSkillsFromDir", {"dir": root, "source": source})
            got = load_skills_from_dir(root, source).to_dict()
            assert_same_result(got, want["result"], make_skills.yaml_error_indices(o, want))
            for _ in range(10):
                text = make_skills.random_yaml(rng)
                want_fm = o.request("parseFrontmatter", {"content": text})
                if want_fm["ok"]:
                    from test_frontmatter import to_pi_json

                    from pi_nb.resources.frontmatter import parse_frontmatter

                    fm, body = parse_frontmatter(text)
                    assert {"frontmatter": to_pi_json(fm), "body": body} == want_fm["result"]


def test_skill_frontmatter_is_parsed_again_only_when_the_file_changes(tmp_path, monkeypatch):
    """The parse is cached by file stat: a second load does not parse, any change does."""
    import pi_nb.resources.skills as skills_mod

    skills_mod.clear_frontmatter_cache()
    calls: list[str] = []
    real = skills_mod.parse_frontmatter

    def counting(content: str):  # type: ignore[no-untyped-def]
        calls.append(content)
        return real(content)

    monkeypatch.setattr(skills_mod, "parse_frontmatter", counting)
    d = tmp_path / "s" / "alpha"
    d.mkdir(parents=True)
    f = d / "SKILL.md"
    f.write_text("---\nname: alpha\ndescription: first\n---\nbody\n")
    first = skills_mod.load_skills_from_dir(str(tmp_path / "s"), "user")
    again = skills_mod.load_skills_from_dir(str(tmp_path / "s"), "user")
    assert [s.description for s in first.skills] == [s.description for s in again.skills] == ["first"]
    assert len(calls) == 1
    f.write_text("---\nname: alpha\ndescription: second, longer\n---\nbody\n")
    assert [s.description for s in skills_mod.load_skills_from_dir(str(tmp_path / "s"), "user").skills] == [
        "second, longer"
    ]
    assert len(calls) == 2
    # same size, new content: the modification time (ns) / ctime tell it apart
    f.write_text("---\nname: alpha\ndescription: second, LONGER\n---\nbody\n")
    assert [s.description for s in skills_mod.load_skills_from_dir(str(tmp_path / "s"), "user").skills] == [
        "second, LONGER"
    ]
    # broken YAML is reported on every load, not only the first
    f.write_text("---\nname: [unclosed\ndescription: x\n---\n")
    for _ in range(2):
        result = skills_mod.load_skills_from_dir(str(tmp_path / "s"), "user")
        assert not result.skills and len(result.diagnostics) == 1
