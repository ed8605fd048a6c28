"""Frontmatter: golden parity with Pi 0.85.0 (tests/golden/skills.json) and Pi's frontmatter tests."""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb._js import js_stringify
from pi_nb.errors import FrontmatterError, ResourceError
from pi_nb.resources.frontmatter import parse_frontmatter, strip_frontmatter

HERE = Path(__file__).resolve().parent
CASES = [
    c
    for c in json.loads((HERE / "golden" / "skills.json").read_text(encoding="utf-8"))["cases"]
    if c["section"] == "frontmatter"
]


def to_pi_json(value: Any) -> Any:
    """Our value as the oracle's JSON shows Pi's (bytes, dates, NaN/Infinity, JS numbers)."""

    def conv(v: Any) -> Any:
        if isinstance(v, bytes):
            return {"__bytes_base64": base64.b64encode(v).decode()}
        if isinstance(v, dt.datetime):
            return v.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{v.microsecond // 1000:03d}Z"
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v

    return json.loads(js_stringify(conv(value)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_frontmatter_golden(case: dict[str, Any]) -> None:
    content = case["content"]
    parse, strip = case["parse"], case["strip"]
    if parse["ok"]:
        fm, body = parse_frontmatter(content)
        assert {"frontmatter": to_pi_json(fm), "body": body} == parse["result"]
    else:
        with pytest.raises(FrontmatterError) as exc:
            parse_frontmatter(content)
        assert str(exc.value) and "line" in str(exc.value)
    if strip["ok"]:
        assert strip_frontmatter(content) == strip["result"]
    else:
        with pytest.raises(FrontmatterError):
            strip_frontmatter(content)


def test_golden_has_errors_and_values() -> None:
    assert sum(not c["parse"]["ok"] for c in CASES) >= 10
    assert sum(c["parse"]["ok"] for c in CASES) >= 100


# --- Pi's frontmatter.test.ts -----------------------------------------------------------------


def test_quoted_values() -> None:
    fm, body = parse_frontmatter("---\nname: \"quoted\"\ndescription: 'single'\n---\nBody text")
    assert fm == {"name": "quoted", "description": "single"}
    assert body == "Body text"


def test_crlf_normalised() -> None:
    fm, body = parse_frontmatter("---\r\nname: x\r\n---\r\nLine one\r\nLine two\r\n")
    assert fm == {"name": "x"} and body == "Line one\nLine two"


def test_invalid_yaml_raises_with_position() -> None:
    with pytest.raises(FrontmatterError, match=r"at line 1, column \d+") as exc:
        parse_frontmatter("---\nname: [unclosed\n---\nbody")
    assert isinstance(exc.value, ResourceError) and isinstance(exc.value, ValueError)


def test_block_scalar() -> None:
    fm, _ = parse_frontmatter("---\ndescription: |\n  Line one\n  Line two\n---\n")
    assert fm["description"] == "Line one\nLine two\n"


def test_missing_or_unterminated_frontmatter() -> None:
    assert parse_frontmatter("Just text") == ({}, "Just text")
    text = "---\nname: x\nno end"
    assert parse_frontmatter(text) == ({}, text)


def test_comment_only_frontmatter() -> None:
    assert parse_frontmatter("---\n# comment\n---\nBody") == ({}, "Body")


def test_strip_frontmatter() -> None:
    assert strip_frontmatter("---\nname: x\n---\n\n  Body  \n") == "Body"
    assert strip_frontmatter("\n  No frontmatter body  \n") == "\n  No frontmatter body  \n"


# --- YAML 1.2 (JS yaml library) semantics on PyYAML --------------------------------------------


def test_yaml_12_core_schema() -> None:
    fm, _ = parse_frontmatter(
        "---\na: yes\nb: 2024-01-01\nc: 012\nd: 0o12\ne: 1_000\nf: on\ng: 0x1f\nh: ~\n---"
    )
    assert fm == {
        "a": "yes",
        "b": "2024-01-01",
        "c": 12,
        "d": 10,
        "e": "1_000",
        "f": "on",
        "g": 31,
        "h": None,
    }


def test_duplicate_keys_and_merge_key() -> None:
    with pytest.raises(FrontmatterError, match="Map keys must be unique"):
        parse_frontmatter("---\na: 1\na: 2\n---")
    fm, _ = parse_frontmatter("---\nx: &a {k: 1}\ny: {<<: *a}\n---")
    assert fm == {"x": {"k": 1}, "y": {"<<": {"k": 1}}}


def test_alias_limit() -> None:
    lines = ["a: &a [1]"] + [f"b{i}: *a" for i in range(120)]
    with pytest.raises(FrontmatterError, match="Excessive alias count"):
        parse_frontmatter("---\n" + "\n".join(lines) + "\n---")


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join([f'*{prev}'] * 9)}]")
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\n" + "\n".join(lines) + "\n---")


def test_tabs_as_separation_and_indentation() -> None:
    assert parse_frontmatter("---\na:\tb\nc: d\te\n---")[0] == {"a": "b", "c": "d\te"}
    with pytest.raises(FrontmatterError, match="Tabs are not allowed as indentation"):
        parse_frontmatter("---\na:\n\tb: 1\n---")


def test_keys_become_js_object_keys() -> None:
    fm, _ = parse_frontmatter("---\nz: 0\n10: a\n2: b\ntrue: c\nnull: d\n1.5: e\n---")
    assert list(fm) == ["2", "10", "z", "true", "", "1.5"]


def test_non_mapping_frontmatter_is_returned_as_is() -> None:
    assert parse_frontmatter("---\n- a\n---\nx") == (["a"], "x")
    assert parse_frontmatter("---\nfalse\n---\nx") == (False, "x")
    assert parse_frontmatter("---\nnull\n---\nx") == ({}, "x")


def test_special_characters_survive() -> None:
    text = "---\na: x\x01\u2028\x85\ufffe y\n---"
    assert parse_frontmatter(text)[0] == {"a": "x\x01\u2028\x85\ufffe y"}


_yamlish = st.text(
    alphabet=st.sampled_from([*list("ab:-'\"[]{}#&*!|>\n \t,?~%@`\\"), "é", "😀", "\x00"]), max_size=40
)


@settings(max_examples=300, deadline=None)
@given(_yamlish, st.text(max_size=30))
def test_parse_never_fails_otherwise(yaml_text: str, body: str) -> None:
    """Any text either parses or raises FrontmatterError (never another exception)."""
    try:
        parse_frontmatter(f"---\n{yaml_text}\n---\n{body}")
    except FrontmatterError as exc:
        assert str(exc)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_text_without_frontmatter_is_kept(text: str) -> None:
    if text.lstrip("\ufeff").replace("\r", "\n").startswith("---"):
        return
    fm, body = parse_frontmatter(text)
    expected = text[1:] if text.startswith("\ufeff") else text
    assert fm == {} and body == expected.replace("\r\n", "\n").replace("\r", "\n")


_SIMPLE_ALPHABET = "ab_-: .,;()/'#\"\n\t1xyzTrueFalsenul"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_SIMPLE_ALPHABET, max_size=60))
def test_simple_frontmatter_shortcut_agrees_with_the_full_parser(text: str) -> None:
    from pi_nb.errors import FrontmatterError
    from pi_nb.resources.frontmatter import _parse_simple, _parse_yaml

    quick = _parse_simple(text)
    if quick is None:
        return
    try:
        full = _parse_yaml(text)
    except FrontmatterError:  # pragma: no cover - the shortcut must never accept what fails
        raise AssertionError(f"shortcut accepted text the parser refuses: {text!r}") from None
    assert quick == full and list(quick) == list(full)


def test_simple_frontmatter_shortcut_cases() -> None:
    from pi_nb.resources.frontmatter import _parse_simple, _parse_yaml

    for text in (
        "name: my-skill\ndescription: Does X when the user asks about Y.",
        "name: a\n\ndescription: it's (really) fine, ok; a/b",
        "name: a\nlicense: MIT",
        "a: yes\nb: on\nc: Infinity\nd: NaN",
    ):
        assert _parse_simple(text) == _parse_yaml(text), text
    for text in (
        "a: true",
        "a: null",
        "a: 1",
        "a: x: y",
        "a: b # c",
        "a: 'q'",
        "a: b\na: c",
        "a:\n  - x",
        "a: é",
    ):
        assert _parse_simple(text) is None, text


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,5}", fullmatch=True),
            st.text(alphabet="aZ0 .,;()/_'-:#tTrueFalsNl", min_size=1, max_size=15),
        ),
        max_size=4,
    )
)
def test_simple_frontmatter_shortcut_agrees_on_key_value_lines(pairs: list[tuple[str, str]]) -> None:
    from pi_nb.errors import FrontmatterError
    from pi_nb.resources.frontmatter import _parse_simple, _parse_yaml

    text = "\n".join(f"{k}: {v}" for k, v in pairs)
    quick = _parse_simple(text)
    if quick is None:
        return
    try:
        full = _parse_yaml(text)
    except FrontmatterError:  # pragma: no cover
        raise AssertionError(f"shortcut accepted text the parser refuses: {text!r}") from None
    assert quick == full and list(quick) == list(full), text
