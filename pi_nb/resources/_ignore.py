"""A port of the npm ``ignore`` package (7.0.5), the ``.gitignore`` matcher Pi's skill discovery uses.

Why not ``pathspec``: Pi's results depend on this library's own reading of gitignore rules, which
differs from git's (and from ``pathspec``) in ways a port must keep:

* matching is **case-insensitive** (the library's default, which Pi does not change);
* a path is ignored when any parent directory is ignored (checked first, ``"a/"`` then ``"a/b"``),
  and a negation cannot re-include a path below an ignored directory;
* the last matching rule wins; rules are compiled to regular expressions by the library's list of
  textual replacements (ported one by one below, quirks included: ``**`` inside a name acts as a
  single ``*``, invalid ranges like ``[z-a]`` are dropped, ``[abc\\]`` never matches ...).

The compiled patterns are JavaScript regular expressions; :func:`_js_regex_to_python` translates
the few constructs whose meaning differs in Python (``$``, ``.``, ``\\s``, empty classes, identity
escapes). A rule whose expression JavaScript would reject makes ``ignores()`` raise
:class:`IgnoreRuleError`, as the library throws there (Pi's directory scan then stops, see skills).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable

__all__ = ["Ignore", "IgnoreRuleError"]

_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_S = f"[{_JS_WS}]"
_JS_DOT = "[^\\n\\r\\u2028\\u2029]"


class IgnoreRuleError(ValueError):
    """A rule compiled to a regular expression JavaScript rejects (``new RegExp`` throws)."""


def _sanitize_range(rng: str) -> str:
    # Invalid (out of order) ranges are fine for gitignore but fatal for a regex: drop them.
    return re.sub(r"([0-z])-([0-z])", lambda m: m.group(0) if ord(m.group(1)) <= ord(m.group(2)) else "", rng)


def _clean_range_backslash(slashes: str) -> str:
    n = len(slashes)
    return slashes[: n - n % 2]


def _trailing_spaces(m: re.Match[str]) -> str:
    m1, m2 = m.group(1), m.group(2)
    return m1 + (" " if m2.startswith("\\") else "")


def _escaped_space(m: re.Match[str]) -> str:
    m1 = m.group(1)
    n = len(m1)
    return m1[: n - n % 2] + " "


def _two_globstars(m: re.Match[str]) -> str:
    # `index + 6 < str.length`: not the last "/**"
    return r"(?:\/[^\/]+)*" if m.start() + 6 < len(m.string) else r"\/.+"


def _intermediate_wildcards(m: re.Match[str]) -> str:
    p1, p2 = m.group(1), m.group(2)  # p2: the LAST repetition of (\\\*)+, as in JavaScript
    return p1 + p2.replace("\\*", "[^\\/]*")


def _range(m: re.Match[str]) -> str:
    lead_escape, rng, end_escape, close = m.group(1), m.group(2), m.group(3), m.group(4)
    if lead_escape == "\\":
        return f"\\[{rng}{_clean_range_backslash(end_escape)}{close}"
    if close == "]":
        if len(end_escape) % 2 == 0:
            return f"[{_sanitize_range(rng)}{end_escape}]"
        return "[]"
    return "[]"


def _ending(m: re.Match[str]) -> str:
    match = m.group(0)
    return f"{match}$" if match.endswith("/") else f"{match}(?=$|\\/$)"


# (regex, replacement, global?) -- the library's REPLACERS in order; JS `$` = end of input (\Z),
# JS `\s` = JavaScript whitespace, JS `.` = anything but a line terminator.
_Replacer = tuple[re.Pattern[str], Callable[[re.Match[str]], str] | None, bool]
_REPLACERS_HEAD: list[_Replacer] = [
    (re.compile("^\ufeff"), lambda m: "", False),
    (re.compile(r"((?:\\\\)*?)(\\?" + _JS_S + r"+)\Z"), _trailing_spaces, False),
    (re.compile(r"(\\+?)" + _JS_S), _escaped_space, True),
    (re.compile(r"[\\$.|*+(){^]"), lambda m: "\\" + m.group(0), True),
    (re.compile(r"(?!\\)\?"), lambda m: "[^/]", True),
    (re.compile(r"^/"), lambda m: "^", False),
    (re.compile(r"/"), lambda m: "\\/", True),
    (re.compile(r"^\^*\\\*\\\*\\/"), lambda m: "^(?:.*\\/)?", False),
]
# `/^(?=[^^])/` with a replacer that looks at the *original* pattern: handled in _make_regex_prefix
_STARTING = re.compile(r"^(?=[^^])", re.DOTALL)
_HAS_INNER_SLASH = re.compile(r"/(?!\Z)")
_REPLACERS_TAIL: list[_Replacer] = [
    (re.compile(r"\\/\\\*\\\*(?=\\/|\Z)"), _two_globstars, True),
    (re.compile(r"(^|[^\\]+)(\\\*)+(?=" + _JS_DOT + r"+)"), _intermediate_wildcards, True),
    (re.compile(r"\\\\\\(?=[$.|*+(){^])"), lambda m: "\\", True),
    (re.compile(r"\\\\"), lambda m: "\\", True),
    (re.compile(r"(\\)?\[([^\]/]*?)(\\*)(\Z|\])"), _range, True),
    (re.compile(r"(?:[^*])\Z", re.DOTALL), _ending, False),
]
_TRAILING_WILDCARD = re.compile(r"(^|\\/)?\\\*\Z")


def _apply(pattern: re.Pattern[str], fn: Callable[[re.Match[str]], str] | None, glob: bool, s: str) -> str:
    assert fn is not None
    return pattern.sub(fn, s, count=0 if glob else 1)


def _make_regex_prefix(body: str) -> str:
    s = body
    for pattern, fn, glob in _REPLACERS_HEAD:
        s = _apply(pattern, fn, glob, s)
    starting = "(?:^|\\/)" if not _HAS_INNER_SLASH.search(body) else "^"
    s = _STARTING.sub(lambda m: starting, s, count=1)
    for pattern, fn, glob in _REPLACERS_TAIL:
        s = _apply(pattern, fn, glob, s)
    return s


def _trailing_wildcard_ignore(m: re.Match[str]) -> str:
    p1 = m.group(1)
    prefix = f"{p1}[^/]+" if p1 else "[^/]*"
    return f"{prefix}(?=$|\\/$)"


_OCTAL = re.compile(r"[0-7]{1,3}")
_W = "[A-Za-z0-9_]"
_ASCII_BOUNDARY = f"(?-i:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))"
_ASCII_NON_BOUNDARY = f"(?-i:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))"


def _js_regex_to_python(src: str) -> str:
    """Translate a (non-unicode-mode) JavaScript regular expression source to Python ``re``."""
    out: list[str] = []
    i, n = 0, len(src)
    in_class = False
    while i < n:
        ch = src[i]
        if ch == "\\":
            if i + 1 >= n:
                raise IgnoreRuleError("\\ at end of pattern")
            text, consumed = _translate_escape(src[i + 1], src, i + 2, in_class)
            out.append(text)
            i += 2 + consumed
            continue
        if in_class:
            if ch == "]":
                in_class = False
                out.append("]")
            elif ch in "[&|~":
                out.append("\\" + ch)
            else:
                out.append(ch)
            i += 1
            continue
        if ch == "[":
            if src.startswith("[]", i):
                out.append("(?!)")  # JS: an empty class never matches
                i += 2
                continue
            if src.startswith("[^]", i):
                out.append("[\\s\\S]")  # JS: any character
                i += 3
                continue
            in_class = True
            if src.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            continue
        if ch == ".":
            out.append(_JS_DOT)
        elif ch == "$":
            out.append(r"\Z")
        else:
            out.append(ch)
        i += 1
    if in_class:
        raise IgnoreRuleError("Unterminated character class")
    return "".join(out)


def _translate_escape(nxt: str, src: str, i: int, in_class: bool) -> tuple[str, int]:
    """One JS escape ``\\<nxt>`` (``src[i:]`` follows it): the Python text and extra characters used."""
    if nxt == "d":
        return ("0-9" if in_class else "[0-9]"), 0
    if nxt == "D":
        return (r"\D" if in_class else "[^0-9]"), 0
    if nxt == "w":
        return ("A-Za-z0-9_" if in_class else "(?-i:[A-Za-z0-9_])"), 0
    if nxt == "W":
        return (r"\W" if in_class else "(?-i:[^A-Za-z0-9_])"), 0
    if nxt == "s":
        return (_JS_WS if in_class else _JS_S), 0
    if nxt == "S":
        return (r"\S" if in_class else f"[^{_JS_WS}]"), 0
    if nxt in "bB" and not in_class:
        # JS word boundaries use ASCII word characters only (Python's are Unicode-aware)
        return (_ASCII_BOUNDARY if nxt == "b" else _ASCII_NON_BOUNDARY), 0
    if nxt == "b":
        return "\\b", 0  # in a class: a backspace in both languages
    if nxt in "fnrtv":
        return "\\" + nxt, 0
    if nxt == "x" and re.match(r"[0-9A-Fa-f]{2}", src[i : i + 2]):
        return re.escape(chr(int(src[i : i + 2], 16))), 2
    if nxt == "u" and re.match(r"[0-9A-Fa-f]{4}", src[i : i + 4]):
        return re.escape(chr(int(src[i : i + 4], 16))), 4
    if nxt == "c" and i < len(src) and src[i].isascii() and src[i].isalpha():
        return re.escape(chr(ord(src[i]) % 32)), 1
    if nxt in "01234567":
        m = _OCTAL.match(src, i - 1)
        assert m is not None
        digits = m.group(0)
        if int(digits, 8) > 0o377:
            digits = digits[:2]
        return re.escape(chr(int(digits, 8))), len(digits) - 1
    # an identity escape (JS non-unicode mode): the character itself
    return re.escape(nxt), 0


class _Rule:
    __slots__ = ("_regex", "negative", "pattern", "regex_prefix")

    def __init__(self, pattern: str, negative: bool, regex_prefix: str) -> None:
        self.pattern = pattern
        self.negative = negative
        self.regex_prefix = regex_prefix
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            js = _TRAILING_WILDCARD.sub(_trailing_wildcard_ignore, self.regex_prefix, count=1)
            try:
                py = _js_regex_to_python(js)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)
                    self._regex = re.compile(py, re.IGNORECASE)
            except re.error as exc:
                raise IgnoreRuleError(f"Invalid regular expression: /{js}/i: {exc}") from None
        return self._regex


def _check_pattern(pattern: str) -> bool:
    return (
        bool(pattern)
        and not re.fullmatch(_JS_S + "+", pattern)
        and not re.search(r"(?:[^\\]|^)\\\Z", pattern)
        and not pattern.startswith("#")
    )


def _create_rule(pattern: str) -> _Rule:
    negative = False
    body = pattern
    if body.startswith("!"):
        negative = True
        body = body[1:]
    body = re.sub(r"^\\!", "!", body, count=1)
    body = re.sub(r"^\\#", "#", body, count=1)
    return _Rule(pattern, negative, _make_regex_prefix(body))


class Ignore:
    """``ignore()`` with its defaults (case-insensitive, strict relative paths)."""

    def __init__(self) -> None:
        self._rules: list[_Rule] = []
        self._cache: dict[str, tuple[bool, bool]] = {}

    def add(self, patterns: str | Iterable[str]) -> Ignore:
        items = (
            [p for p in re.split(r"\r?\n", patterns) if p] if isinstance(patterns, str) else list(patterns)
        )
        added = False
        for p in items:
            if _check_pattern(p):
                self._rules.append(_create_rule(p))
                added = True
        if added:
            self._cache = {}
        return self

    def _test_one(self, path: str) -> tuple[bool, bool]:
        ignored = unignored = False
        for rule in self._rules:
            negative = rule.negative
            # the library skips rules that cannot change the outcome (checkUnignored = false)
            if (unignored == negative and ignored != unignored) or (
                negative and not ignored and not unignored
            ):
                continue
            if not rule.regex.search(path):
                continue
            ignored = not negative
            unignored = negative
        return ignored, unignored

    def _t(self, path: str, slices: list[str] | None = None) -> tuple[bool, bool]:
        if path in self._cache:
            return self._cache[path]
        if slices is None:
            slices = [s for s in path.split("/") if s]
        slices.pop()
        if not slices:
            result = self._test_one(path)
        else:
            parent = self._t("/".join(slices) + "/", slices)
            result = parent if parent[0] else self._test_one(path)
        self._cache[path] = result
        return result

    def ignores(self, path: str) -> bool:
        """Whether ``path`` (a ``path.relative()``-style POSIX path; ``dir/`` for directories) is ignored."""
        if not path:
            raise ValueError("path must not be empty")
        if re.match(r"^\.{0,2}/|^\.{1,2}\Z", path):
            raise ValueError(f'path should be a `path.relative()`d string, but got "{path}"')
        return self._t(path)[0]
