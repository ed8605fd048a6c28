"""System prompt: parity with Pi 0.85.0 (tests/golden/system_prompt.json) and Pi's system-prompt tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.resources.skills import Skill, create_synthetic_source_info
from pi_nb.system_prompt import (
    BUILTIN_TOOL_GUIDELINES,
    BUILTIN_TOOL_SNIPPETS,
    DEFAULT_SELECTED_TOOLS,
    PI_NB_INTRO,
    DocPaths,
    build_system_prompt,
    collect_tool_prompt_options,
    get_doc_paths,
    normalize_prompt_guidelines,
    normalize_prompt_snippet,
)

HERE = Path(__file__).resolve().parent
GOLDEN = json.loads((HERE / "golden" / "system_prompt.json").read_text(encoding="utf-8"))
PI_INTRO = GOLDEN["piProse"]["intro"]
PI_DOCS = GOLDEN["piProse"]["docs"]
OPT_PI = DocPaths("/opt/pi/README.md", "/opt/pi/docs", "/opt/pi/examples")


def _skill(d: dict[str, Any]) -> Skill:
    return Skill(
        d["name"],
        d["description"],
        d["filePath"],
        d["baseDir"],
        create_synthetic_source_info(d["filePath"], source="test"),
        d["disableModelInvocation"],
    )


def ours(args: dict[str, Any], docs: DocPaths = OPT_PI) -> str:
    o = args["options"]
    snippets = o.get("toolSnippets")
    guidelines = o.get("promptGuidelines")
    selected = o.get("selectedTools")
    if args.get("toolDefaults"):
        # what the session does for built-in tools (the oracle's toolDefaults mirrors it)
        selected = list(selected) if selected is not None else list(DEFAULT_SELECTED_TOOLS)
        # Pi also has a Windows `powershell` tool, which pi_nb does not: take its texts from Pi
        ps = GOLDEN["toolInfo"]["powershell"]
        builtin = [t for t in selected if t in BUILTIN_TOOL_SNIPPETS or t == "powershell"]
        s, g = collect_tool_prompt_options(
            builtin,
            {**BUILTIN_TOOL_SNIPPETS, "powershell": ps["promptSnippet"]},
            {**BUILTIN_TOOL_GUIDELINES, "powershell": ps["promptGuidelines"]},
        )
        snippets = {**s, **(snippets or {})}
        guidelines = list(dict.fromkeys([*g, *(guidelines or [])]))
    return build_system_prompt(
        cwd=o["cwd"],
        custom_prompt=o.get("customPrompt"),
        selected_tools=selected,
        tool_snippets=snippets,
        prompt_guidelines=guidelines,
        append_system_prompt=o.get("appendSystemPrompt"),
        context_files=o.get("contextFiles"),
        skills=[_skill(s) for s in o["skills"]] if o.get("skills") is not None else None,
        docs=docs,
    )


def our_docs_block() -> str:
    probe = build_system_prompt(cwd="/x", selected_tools=[], docs=OPT_PI)
    return probe.split("Show file paths clearly when working with files\n\n", 1)[1].split(
        "\nCurrent working directory: /x"
    )[0]


@pytest.mark.parametrize(
    "case", [c for c in GOLDEN["cases"] if c["path"] == "custom"], ids=lambda c: c["name"]
)
def test_custom_path_byte_equal(case: dict[str, Any]) -> None:
    assert ours(case["args"]) == case["response"]["result"]


@pytest.mark.parametrize(
    "case", [c for c in GOLDEN["cases"] if c["path"] == "default"], ids=lambda c: c["name"]
)
def test_default_path_equal_after_prose_swap(case: dict[str, Any]) -> None:
    pi = case["response"]["result"]
    assert pi.count(PI_INTRO) == 1 and pi.count(PI_DOCS) == 1
    swapped = pi.replace(PI_INTRO, PI_NB_INTRO).replace(PI_DOCS, our_docs_block())
    assert ours(case["args"]) == swapped


def test_golden_counts() -> None:
    assert sum(c["path"] == "custom" for c in GOLDEN["cases"]) >= 300
    assert sum(c["path"] == "default" for c in GOLDEN["cases"]) >= 300


def test_builtin_tool_texts_are_pis() -> None:
    for name, info in GOLDEN["toolInfo"].items():
        if name == "powershell":
            continue  # Windows-only in Pi; pi_nb has no PowerShell tool
        assert BUILTIN_TOOL_SNIPPETS[name] == info["promptSnippet"]
        assert list(BUILTIN_TOOL_GUIDELINES[name]) == (info["promptGuidelines"] or [])
    assert set(BUILTIN_TOOL_SNIPPETS) == set(GOLDEN["toolInfo"]) - {"powershell"}


def test_prose_keeps_pis_line_structure() -> None:
    ours_docs = our_docs_block().split("\n")
    pi_docs = PI_DOCS.split("\n")
    assert len(ours_docs) == len(pi_docs) == 8
    for a, b in zip(ours_docs[1:], pi_docs[1:], strict=True):
        assert a.startswith("- ") and b.startswith("- ")
    assert ours_docs[1:3] == pi_docs[1:3]  # Main documentation / Additional docs paths
    assert ours_docs[3].startswith("- Examples: /opt/pi/examples (")
    assert "pi_nb" in PI_NB_INTRO and "\n" not in PI_NB_INTRO


# --- Pi's system-prompt.test.ts (§11.4) ----------------------------------------------------------


def test_no_tools() -> None:
    p = build_system_prompt(cwd="/w", selected_tools=[])
    assert "Available tools:\n(none)" in p
    assert "Show file paths clearly" in p


def test_builtin_snippets_listed() -> None:
    p = build_system_prompt(cwd="/w", tool_snippets=BUILTIN_TOOL_SNIPPETS)
    for name in ("read", "bash", "edit", "write"):
        assert f"- {name}: " in p


def test_docs_block_present() -> None:
    p = build_system_prompt(cwd="/w", docs=DocPaths("/d/README.md", "/d/docs", "/d/ex"))
    assert "- Main documentation: /d/README.md" in p
    assert "resolve docs/... under Additional docs and examples/... under Examples" in p


def test_dynamic_tool_snippet_and_guidelines() -> None:
    p = build_system_prompt(
        cwd="/w",
        selected_tools=["read", "dynamic_tool"],
        tool_snippets={"dynamic_tool": "Run dynamic test behavior"},
    )
    assert "- dynamic_tool: Run dynamic test behavior" in p
    assert "dynamic_tool" not in build_system_prompt(cwd="/w", selected_tools=["read", "dynamic_tool"])
    g = build_system_prompt(
        cwd="/w",
        selected_tools=["read"],
        prompt_guidelines=[
            "Use dynamic_tool for project summaries.",
            "  Use dynamic_tool for project summaries.  ",
            "",
            "   ",
        ],
    )
    assert g.count("- Use dynamic_tool for project summaries.") == 1
    assert "\n- \n" not in g


def test_custom_path_trailing_newline_and_cwd() -> None:
    assert build_system_prompt(cwd="C:\\x\\y", custom_prompt="CUSTOM", selected_tools=[]) == (
        "CUSTOM\nCurrent working directory: C:/x/y\n"
    )
    assert build_system_prompt(cwd="/w").endswith("\nCurrent working directory: /w")


def test_skills_need_read_or_bash() -> None:
    s = Skill("s", "d", "/s/SKILL.md", "/s", create_synthetic_source_info("/s/SKILL.md", source="t"))
    assert "Use the read tool" in build_system_prompt(
        cwd="/w", custom_prompt="C", selected_tools=["read", "bash"], skills=[s]
    )
    assert "Use bash to load" in build_system_prompt(
        cwd="/w", custom_prompt="C", selected_tools=["bash"], skills=[s]
    )
    assert "<available_skills>" not in build_system_prompt(
        cwd="/w", custom_prompt="C", selected_tools=["edit"], skills=[s]
    )


def test_context_file_objects() -> None:
    class CF:
        path = "/p/AGENTS.md"
        content = "Rule 1"

    p = build_system_prompt(cwd="/w", custom_prompt="C", context_files=[CF()])
    assert (
        '<project_instructions path="/p/AGENTS.md">\nRule 1\n</project_instructions>\n\n</project_context>\n'
        in p
    )


def test_normalizers_and_collect() -> None:
    assert normalize_prompt_snippet("  a\r\n b\t\tc  ") == "a b c"
    assert normalize_prompt_snippet("") is None and normalize_prompt_snippet(" \n ") is None
    assert normalize_prompt_guidelines([" a ", "a", "", "b"]) == ["a", "b"]
    snippets, guidelines = collect_tool_prompt_options(["read", "grep", "custom"])
    assert snippets == {"read": "Read file contents", "grep": BUILTIN_TOOL_SNIPPETS["grep"]}
    assert guidelines == ["Use read to examine files instead of cat or sed."]


def test_get_doc_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_NB_PACKAGE_DIR", "/pkg")
    assert get_doc_paths() == DocPaths("/pkg/README.md", "/pkg/docs", "/pkg/notebooks")


_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\u2028\u2029"), max_size=12
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["read", "bash", "edit", "write", "grep", "find", "ls", "powershell", "x"]),
        max_size=5,
    ),
    st.lists(_line, max_size=5),
)
def test_guidelines_are_unique_and_end_with_the_two_fixed_ones(tools: list[str], extra: list[str]) -> None:
    p = build_system_prompt(cwd="/w", selected_tools=tools, prompt_guidelines=extra, docs=OPT_PI)
    section = p.split("Guidelines:\n", 1)[1].split("\n\npi_nb documentation", 1)[0]
    bullets = section.split("\n")
    assert all(b.startswith("- ") and len(b) > 2 for b in bullets)  # blanks dropped (JS trim)
    assert len(set(bullets)) == len(bullets)
    assert bullets[-2:] == [
        "- Be concise in your responses",
        "- Show file paths clearly when working with files",
    ]
    assert p.endswith("\nCurrent working directory: /w")


# --- tool-system-prompt-contributions.test.ts ----------------------------------------------------


def test_each_builtin_tool_carries_its_contribution(tmp_path: Path) -> None:
    from pi_nb.tools import create_all_tools
    from pi_nb.tools.bash import create_bash_tool

    tools = create_all_tools(str(tmp_path))
    assert set(tools) == set(BUILTIN_TOOL_SNIPPETS)
    for name, tool in tools.items():
        assert tool.prompt_snippet == BUILTIN_TOOL_SNIPPETS[name]
        assert tuple(tool.prompt_guidelines or ()) == BUILTIN_TOOL_GUIDELINES[name]
    assert create_bash_tool(str(tmp_path), expose_session_environment=False).prompt_guidelines is None
