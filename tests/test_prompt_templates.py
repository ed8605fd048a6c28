"""Prompt templates: parity with Pi 0.85.0 (tests/golden/prompt_templates.json) and the rules."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _fs_tree import mask, materialize, unmask
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.resources.prompt_templates import (
    PromptTemplate,
    collect_prompt_entries,
    dedupe_prompts,
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_args,
)
from pi_nb.resources.skills import SourceInfo

HERE = Path(__file__).resolve().parent
GOLDEN = json.loads((HERE / "golden" / "prompt_templates.json").read_text(encoding="utf-8"))["cases"]


def _template(name: str, content: str, description: str = "") -> PromptTemplate:
    return PromptTemplate(name, description, content, SourceInfo(f"/p/{name}.md", "local"), f"/p/{name}.md")


def run(fn: str, args: dict[str, Any]) -> Any:
    if fn == "parseCommandArgs":
        return parse_command_args(args["argsString"])
    if fn == "substituteArgs":
        return substitute_args(args["content"], args["args"])
    if fn == "expandPromptTemplate":
        templates = [_template(t["name"], t["content"], t["description"]) for t in args["templates"]]
        return expand_prompt_template(args["text"], templates)
    if fn == "loadPromptTemplates":
        o = args["options"]
        return [
            t.to_dict()
            for t in load_prompt_templates(o["cwd"], o["agentDir"], o["promptPaths"], o["includeDefaults"])
        ]
    if fn == "collectAutoPromptEntries":
        return collect_prompt_entries(args["dir"])
    raise AssertionError(fn)


@pytest.mark.parametrize("case", [c for c in GOLDEN if c["section"] == "functions"], ids=lambda c: c["name"])
def test_function_golden(case: dict[str, Any]) -> None:
    assert case["response"]["ok"]
    assert run(case["fn"], case["args"]) == case["response"]["result"]


@pytest.mark.parametrize("case", [c for c in GOLDEN if c["section"] == "trees"], ids=lambda c: c["name"])
def test_tree_golden(case: dict[str, Any], tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    for rel, spec in case["specs"].items():
        materialize(os.path.join(root, rel), spec)
    for call in case["calls"]:
        assert call["response"]["ok"]
        assert mask(run(call["fn"], unmask(call["args"], root)), root) == call["response"]["result"]


def test_golden_counts() -> None:
    assert sum(c["section"] == "trees" for c in GOLDEN) >= 30
    assert sum(c.get("fn") == "expandPromptTemplate" for c in GOLDEN) >= 50


# --- the rules, spelled out ---------------------------------------------------------------------


def test_parse_command_args() -> None:
    assert parse_command_args("one \"two three\" 'four five' six") == ["one", "two three", "four five", "six"]
    assert parse_command_args('a"b c"d') == ["ab cd"]
    assert parse_command_args('"unclosed runs on') == ["unclosed runs on"]
    assert parse_command_args('"" x') == ["x"]  # an empty quoted argument vanishes
    assert parse_command_args("a\u00a0b\tc\nd") == ["a", "b", "c", "d"]


def test_substitute_args() -> None:
    assert substitute_args("$1 and $2 and $3", ["a", "b"]) == "a and b and "
    assert substitute_args("$@|$ARGUMENTS", ["a", "b"]) == "a b|a b"
    assert substitute_args("${1:-x} ${2:-y}", ["", "b"]) == "x b"
    assert substitute_args("${@:-none}", []) == "none"
    assert substitute_args("${@:2} ${@:1:1} ${@:0}", ["a", "b", "c"]) == "b c a a b c"
    assert substitute_args("$0 $10", ["a"]) == " "
    assert substitute_args("$1", ["$2", "x"]) == "$2"  # no recursive substitution


def test_expand_prompt_template() -> None:
    ts = [_template("review", "Review $1; rest: ${@:2}"), _template("review", "shadowed")]
    assert expand_prompt_template('/review a.py "b c" d', ts) == "Review a.py; rest: b c d"
    assert expand_prompt_template("/review", ts) == "Review ; rest: "
    assert expand_prompt_template("/reviewer x", ts) == "/reviewer x"
    assert expand_prompt_template("review x", ts) == "review x"
    assert expand_prompt_template("/ review", ts) == "/ review"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_load_prompt_templates(tmp_path: Path) -> None:
    agent, proj = tmp_path / "agent", tmp_path / "proj"
    _write(
        agent / "prompts" / "review.md",
        "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1",
    )
    _write(agent / "prompts" / "nested" / "deep.md", "not loaded: no recursion")
    _write(proj / ".pi" / "prompts" / "fix.md", "\n\nFix the bug in $1 " + "x" * 60)
    _write(proj / ".pi" / "prompts" / "broken.md", "---\na: [\n---\nskipped silently")
    templates = load_prompt_templates(str(proj), str(agent))
    assert [t.name for t in templates] == ["review", "fix"]
    review, fix = templates
    assert (review.description, review.argument_hint, review.content) == (
        "Review code",
        "<file>",
        "Review $1",
    )
    assert review.source_info.scope == "user"
    assert fix.description == ("Fix the bug in $1 " + "x" * 60)[:60] + "..."
    assert fix.source_info.scope == "project" and fix.argument_hint is None
    assert "argumentHint" not in fix.to_dict()


def test_collect_prompt_entries_and_dedupe(tmp_path: Path) -> None:
    root = tmp_path / "prompts"
    for name in ("a.md", "B.md", ".hidden.md", "c.txt"):
        _write(root / name, "x")
    _write(root / ".gitignore", "b.md\n")  # case-insensitive, like Pi's `ignore`
    assert collect_prompt_entries(str(root)) == [str(root / "a.md")]
    one, two = _template("x", "1"), PromptTemplate("x", "", "2", SourceInfo("/q/x.md", "local"), "/q/x.md")
    kept, diags = dedupe_prompts([one, two])
    assert kept == [one]
    assert [d.to_dict() for d in diags] == [
        {
            "type": "collision",
            "message": 'name "/x" collision',
            "path": "/q/x.md",
            "collision": {
                "resourceType": "prompt",
                "name": "x",
                "winnerPath": "/p/x.md",
                "loserPath": "/q/x.md",
            },
        }
    ]


_words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\"'"), min_size=1, max_size=8
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_words.filter(lambda w: not any(c.isspace() or c == "\ufeff" for c in w)), max_size=6))
def test_plain_words_round_trip(words: list[str]) -> None:
    assert parse_command_args(" ".join(words)) == words
    assert substitute_args("$@", words) == " ".join(words)
