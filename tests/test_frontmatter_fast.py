"""The libyaml fast path of the frontmatter parser gives exactly what the exact parser gives.

``pi_nb.resources.frontmatter`` reads YAML with libyaml (PyYAML's ``CParser``) when the text has
nothing libyaml reads differently from the exact parser (PyYAML's pure-Python parser patched to
the JavaScript library's rules), and falls back to the exact parser on any doubt or error. These
tests generate YAML (scalars of every kind, block and flow nesting, quotes, block scalars, tags,
anchors and aliases, comments) and token soup, and check: whenever the fast path answers, its value
equals the exact parser's (and the exact parser does not fail); ``_parse_yaml`` always answers as
the exact parser does, errors worded the same.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_nb.errors import FrontmatterError
from pi_nb.resources import frontmatter as fm

pytestmark = pytest.mark.skipif(fm._cyaml is None, reason="PyYAML without libyaml")


def comparable(value: Any, path: tuple[int, ...] = ()) -> Any:
    """A structure equal for equal values: NaN equal to NaN, types kept (1 vs 1.0 vs True), a
    collection containing itself (``&a [*a]``) as the distance to the ancestor it repeats."""
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, (dict, list)):
        if id(value) in path:
            return ("cycle", len(path) - path.index(id(value)))
        inner = (*path, id(value))
        if isinstance(value, dict):
            return ("dict", [(k, comparable(v, inner)) for k, v in value.items()])
        return ("list", [comparable(v, inner) for v in value])
    return (type(value).__name__, value)


def outcome(fn: Any, text: str) -> Any:
    try:
        return ("ok", comparable(fn(text)))
    except FrontmatterError as exc:
        return ("error", str(exc))


def check(text: str) -> bool:
    """Fast path == exact parser on ``text``; True when the fast path answered."""
    if not text.endswith("\n"):
        text += "\n"
    exact = outcome(fm._parse_yaml_exact, text)
    fast = fm._parse_yaml_fast(text)
    if fast is not fm._NO_RESULT:
        assert exact == ("ok", comparable(fast)), text
    assert outcome(fm._parse_yaml, text) == exact, text
    return fast is not fm._NO_RESULT


# --- scalars: every kind the two YAML versions (1.1 in PyYAML, 1.2 core in Pi's library) resolve
# differently, plus strings that look like other things
PLAIN_SCALARS = [
    "", "~", "null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "false", "False", "FALSE",
    "yes", "no", "Yes", "NO", "on", "off", "On", "OFF", "y", "n", "0", "-0", "+0", "12", "-12", "+12",
    "012", "0o17", "0o19", "0x1F", "0xg", "0b101", "1_000", "1:20", "1:20:30.5", "190:20:30",
    "9007199254740993", "123456789012345678901234567890", "1.5", "-1.5", ".5", "5.", "1e3", "1E-3",
    "1.0e+3", ".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", ".NAN", "nan", "inf", "1.2.3", "2024-01-01",
    "2024-1-1", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "=", "<<", "a b c",
    "a:b", "http://x.y/z?q=1", "a#b", "-a", "?a", "a,b", "a]b", "x: ", "caf\u00e9", "\u2603 snow",
    "emoji \U0001f600", "It's", 'say "hi"', "a  b", "C++",
]  # fmt: skip
QUOTED_SCALARS = [
    "''", '""', "'x'", '"x"', "'it''s'", '"a\\"b"', '"\\n\\t\\\\"', '"\\x41\\u00e9\\U0001F600"',
    '"\\/"', '"\\0\\a\\b\\e\\v\\f\\r"', '"\\N\\_\\L\\P"', '"\\ud800"', '"\\q"', "'12'", '"true"',
    "'~'", '"2024-01-01"', "'a: b'", '"# not a comment"', "'unterminated", '"also',
]  # fmt: skip
TAGS = ["", "", "", "!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!binary ", "!!timestamp ",
        "! ", "!custom ", "!!map ", "!!seq ", "!!set ", "!!omap "]  # fmt: skip
ANCHORS = ["a", "b", "anchor-1"]

scalar = st.one_of(
    st.sampled_from(PLAIN_SCALARS),
    st.sampled_from(QUOTED_SCALARS),
    st.text(alphabet="ab1:-# ',.[]{}&*!|>?%@`\"\\", min_size=1, max_size=8),
)


def decorate(draw: Any, text: str) -> str:
    prefix = draw(st.sampled_from(TAGS))
    if draw(st.integers(0, 5)) == 0:
        prefix = f"&{draw(st.sampled_from(ANCHORS))} " + prefix
    return prefix + text


@st.composite
def node(draw: Any, depth: int, indent: int) -> tuple[str, bool]:
    """(text, is_block): a YAML node, the block ones meant to start on their own line."""
    kind = draw(st.integers(0, 9 if depth < 3 else 2))
    if kind <= 1:
        return decorate(draw, draw(scalar)), False
    if kind == 2:
        return f"*{draw(st.sampled_from(ANCHORS))}", False
    if kind == 3:
        items = [draw(node(depth + 1, indent))[0] for _ in range(draw(st.integers(0, 3)))]
        items = [i if "\n" not in i else "x" for i in items]
        return decorate(draw, "[" + ", ".join(items) + "]"), False
    if kind == 4:
        pairs = []
        for _ in range(draw(st.integers(0, 3))):
            k = draw(scalar)
            v = draw(node(depth + 1, indent))[0]
            pairs.append(f"{k}: {v if chr(10) not in v else 'y'}")
        return decorate(draw, "{" + ", ".join(pairs) + "}"), False
    if kind == 5:
        style = draw(st.sampled_from(["|", ">", "|-", ">-", "|+", ">+", "|2", ">1-"]))
        pad = " " * (indent + 2)
        lines = draw(
            st.lists(st.sampled_from(["line one", "  more", "", "x: y", "# not comment"]), max_size=4)
        )
        comment = draw(st.sampled_from(["", " # c"]))
        return style + comment + "".join(f"\n{pad}{line}" if line else "\n" for line in lines), False
    pad = " " * indent
    inner = indent + draw(st.integers(1, 3))
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        value, _block = draw(node(depth + 1, inner))
        sep = (
            "\n" + " " * inner
            if value and value[0] not in "|>" and draw(st.booleans()) and depth < 3
            else " "
        )
        if kind <= 7:  # block mapping
            key = draw(
                st.one_of(
                    st.sampled_from(["name", "description", "tags", "1", "true", "null", "<<", "a"]), scalar
                )
            )
            lines.append(f"{pad}{key}:{sep}{value}")
        else:  # block sequence
            lines.append(f"{pad}-{sep}{value}")
        if draw(st.integers(0, 4)) == 0:
            lines.append(f"{pad}# a comment")
    text = "\n".join(lines)
    return ("\n" + text if depth else text), True


@st.composite
def document(draw: Any) -> str:
    text, _ = draw(node(0, 0))
    if text.startswith("\n"):
        text = text[1:]
    if draw(st.integers(0, 3)) == 0:
        text = f"# leading comment\n{text}"
    if draw(st.integers(0, 3)) == 0:
        text += " # trailing"
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document())
def test_fast_path_equals_the_exact_parser_on_generated_yaml(text: str) -> None:
    check(text)


@settings(max_examples=800, deadline=None)
@given(
    st.text(alphabet=st.sampled_from([*"ab1 :-#'\"[]{},&*!|>?\n\t~.\\%", "\u2028", "\x85", "é"]), max_size=40)
)
def test_fast_path_equals_the_exact_parser_on_token_soup(text: str) -> None:
    check(text)


REALISTIC = [
    "name: pdf\ndescription: Extract text from PDF files. Use when the user asks about PDFs.\n",
    "name: a\ndescription: |\n  Two\n  lines.\ntags: [a, b, c]\ndisable-model-invocation: false\nversion: 1.2\n",
    "name: 'quoted'\ndescription: \"Use: for x\"\nallowed-tools:\n  - read\n  - bash\n",
    "name: b # comment\nmetadata:\n  author: me\n  version: 012\n  date: 2024-01-01\n  ok: yes\n",
    "defaults: &d\n  a: 1\nother:\n  <<: *d\n  b: [*d, *d]\n",
    "description: >-\n  folded\n  text\n\n  para\nlist: [1, 0o17, 0x1F, .inf, ~]\ntime: 1:20\n",
]


@pytest.mark.parametrize("text", REALISTIC)
def test_realistic_frontmatter_takes_the_fast_path(text: str) -> None:
    assert check(text)


@pytest.mark.parametrize(
    "text",
    [
        "a:\tb\n",  # a tab: the exact parser's rule
        '"x"#c\n',  # a comment glued to a token: an error in the exact parser, a comment in libyaml
        "[a,#c\n b]\n",
        "a: 'multi\n  line'\n",  # a multi-line quoted scalar: indentation rule
        "a:\n  - [x,\n  y]\n",  # a multi-line flow collection
        "a: &x 1\nb: &x 2\nc: *x\n",  # anchor redefinition: libyaml refuses, the exact parser allows
        "a: 1\na: 2\n",  # duplicate keys: the exact parser's error message
        "a: *nope\n",
        "...\n",
        "%YAML 1.2\n---\na: 1\n",
        ": v\n",
        "a: [\n",
        "x: \x01\n",
        "a: &a [*a]\n",
        "k" * 1100 + ": v\n",
    ],
)
def test_constructs_the_fast_path_leaves_to_the_exact_parser(text: str) -> None:
    check(text)
    if "\t" in text or "#c" in text or "'multi" in text or "[x," in text or "&x 2" in text:
        assert fm._parse_yaml_fast(text) is fm._NO_RESULT


def test_errors_keep_the_exact_parsers_words() -> None:
    with pytest.raises(FrontmatterError, match=r"Map keys must be unique at line 2, column 1"):
        fm.parse_frontmatter("---\na: 1\na: 2\n---\nbody")
    big = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcd", "bcde", strict=True)
    )
    with pytest.raises(FrontmatterError, match="Excessive alias count"):
        fm.parse_frontmatter(f"---\n{big}---\n")


def test_without_libyaml_the_exact_parser_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    text = REALISTIC[1]
    expected = fm._parse_yaml(text)
    monkeypatch.setattr(fm, "_cyaml", None)
    assert fm._parse_yaml_fast(text) is fm._NO_RESULT
    assert fm._parse_yaml(text) == expected
