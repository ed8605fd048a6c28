"""The glob matching of npm ``minimatch`` 10 with its default options, as Pi's resource
settings use it (``!pattern`` excludes and plain include patterns in ``skills``/``prompts`` lists).

Covered (checked against minimatch 10.2.5 in tests/test_resource_loader.py): brace expansion
(``{a,b}``, ``{1..3}``, ``{a..c}``), ``*``, ``?``, ``[...]`` / ``[!...]`` / POSIX classes,
extglobs ``@( )``, ``*( )``, ``+( )``, ``?( )``, ``!( )``, ``**`` segments (any number of path
segments in the middle, at least one at the end), leading ``!`` negation, ``#`` comments, repeated
slashes collapsed, a trailing slash on the path tolerated. Dot rule (``dot: false``): wildcards
never match a segment starting with ``.`` unless the pattern segment starts with a literal ``.``;
a wildcard segment never matches an empty one. Case-sensitive, POSIX separators only.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["minimatch"]

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\r\\n\\v\\f",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "A-Fa-f0-9",
}


def _expand_braces(pattern: str) -> list[str]:
    """Bash-style brace expansion (the ``brace-expansion`` package minimatch uses)."""
    depth = 0
    start = -1
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                body = pattern[start + 1 : i]
                pre, post = pattern[:start], pattern[i + 1 :]
                options = _brace_options(body)
                if options is None:  # "{x}" without a comma or a range is literal
                    return [
                        pre + "{" + b + "}" + p for b in _expand_braces(body) for p in _expand_braces(post)
                    ]
                out: list[str] = []
                for option in options:
                    for expanded in _expand_braces(pre + option + post):
                        out.append(expanded)
                return out
        i += 1
    return [pattern]


def _split_top_level_commas(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            current += body[i : i + 2]
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
        i += 1
    parts.append(current)
    return parts


_SEQ = re.compile(r"^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$|^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$")


def _brace_options(body: str) -> list[str] | None:
    m = _SEQ.match(body)
    if m:
        if m.group(1) is not None:
            a, b = int(m.group(1)), int(m.group(2))
            step = abs(int(m.group(3))) if m.group(3) else 1
            step = step or 1
            width = max(len(m.group(1)), len(m.group(2)))
            pad = (m.group(1).lstrip("-").startswith("0") and len(m.group(1).lstrip("-")) > 1) or (
                m.group(2).lstrip("-").startswith("0") and len(m.group(2).lstrip("-")) > 1
            )
            rng = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
            return [(f"{n:0{width}d}" if pad else str(n)) for n in rng]
        ca, cb = ord(m.group(4)), ord(m.group(5))
        step = abs(int(m.group(6))) if m.group(6) else 1
        step = step or 1
        crng = range(ca, cb + 1, step) if ca <= cb else range(ca, cb - 1, -step)
        return [chr(c) for c in crng]
    parts = _split_top_level_commas(body)
    if len(parts) < 2:
        return None
    return parts


class _Globstar:
    pass


_GLOBSTAR = _Globstar()


def _class_end(seg: str, i: int) -> int:
    """Index of the ``]`` closing the class opened at ``seg[i] == "["`` (or -1)."""
    j = i + 1
    if j < len(seg) and seg[j] in "!^":
        j += 1
    if j < len(seg) and seg[j] == "]":
        j += 1
    while j < len(seg):
        if seg[j] == "[" and seg.startswith("[:", j):
            k = seg.find(":]", j + 2)
            if k != -1:
                j = k + 2
                continue
        if seg[j] == "\\":
            j += 2
            continue
        if seg[j] == "]":
            return j
        j += 1
    return -1


def _class_to_regex(body: str) -> str:
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    out = ""
    i = 0
    while i < len(body):
        if body.startswith("[:", i):
            k = body.find(":]", i + 2)
            name = body[i + 2 : k] if k != -1 else ""
            if k != -1 and name in _POSIX_CLASSES:
                out += _POSIX_CLASSES[name]
                i = k + 2
                continue
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out += re.escape(body[i + 1])
            i += 2
            continue
        if ch == "-" and out and i + 1 < len(body):
            out += "-"
        else:
            out += re.escape(ch) if ch not in "-" else "\\-"
        i += 1
    return f"[^/{out}]" if negate else f"[{out}]"


def _find_paren_end(seg: str, i: int) -> int:
    depth = 0
    j = i
    while j < len(seg):
        ch = seg[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1


def _split_alternatives(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            current += body[i : i + 2]
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
        i += 1
    parts.append(current)
    return parts


def _segment_body(seg: str) -> tuple[str, bool]:
    """Regex for one path segment (without anchors) and whether it has any magic."""
    out = ""
    magic = False
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "\\":
            if i + 1 < len(seg):
                out += re.escape(seg[i + 1])
                i += 2
            else:
                out += re.escape("\\")
                i += 1
            continue
        if ch in "@*+?!" and i + 1 < len(seg) and seg[i + 1] == "(":
            end = _find_paren_end(seg, i + 1)
            if end != -1:
                alts = [_segment_body(a)[0] for a in _split_alternatives(seg[i + 2 : end])]
                group = "(?:" + "|".join(alts) + ")"
                rest_body, _ = _segment_body(seg[end + 1 :])
                magic = True
                if ch == "@":
                    out += group
                elif ch == "*":
                    out += group + "*"
                elif ch == "+":
                    out += group + "+"
                elif ch == "?":
                    out += group + "?"
                else:  # !( ): anything that is not one of the alternatives followed by the rest
                    out += f"(?:(?!{group}{rest_body}$)[^/]*?)"
                out += rest_body
                return out, magic
        if ch == "*":
            magic = True
            while i + 1 < len(seg) and seg[i + 1] == "*":
                i += 1
            out += "[^/]*?"
        elif ch == "?":
            magic = True
            out += "[^/]"
        elif ch == "[":
            end = _class_end(seg, i)
            if end == -1:
                out += re.escape("[")
            else:
                magic = True
                out += _class_to_regex(seg[i + 1 : end])
                i = end
        else:
            out += re.escape(ch)
        i += 1
    return out, magic


@lru_cache(maxsize=1024)
def _compile_segment(seg: str) -> re.Pattern[str] | str:
    body, magic = _segment_body(seg)
    if not magic:
        # a literal segment: compare unescaped text
        return re.sub(r"\\(.)", r"\1", seg)
    # a wildcard segment never matches an empty one -- except one that starts with an extglob
    # (minimatch lets "?(a)" or "*(a|b)" match an empty segment)
    prefix = "" if re.match(r"[@*+?!]\(", seg) else "(?=.)"
    if not seg.startswith("."):
        prefix += r"(?!\.)"
    return re.compile(prefix + body + r"\Z", re.DOTALL)


def _split(path: str) -> list[str]:
    parts = path.split("/")
    if len(parts) > 2:
        parts = [parts[0], *[p for p in parts[1:-1] if p], parts[-1]]
    return parts


def _segment_ok_for_globstar(seg: str) -> bool:
    return seg not in (".", "..") and not seg.startswith(".")


def _match_parts(file: list[str], pattern: list[object]) -> bool:
    memo: dict[tuple[int, int], bool] = {}

    def match(fi: int, pi: int) -> bool:
        key = (fi, pi)
        if key in memo:
            return memo[key]
        result: bool
        if pi == len(pattern):
            result = fi == len(file) or (fi == len(file) - 1 and file[fi] == "")
        elif pattern[pi] is _GLOBSTAR:
            if pi == len(pattern) - 1:
                rest = file[fi:]
                result = len(rest) >= 1 and all(_segment_ok_for_globstar(s) for s in rest)
            else:
                result = False
                k = fi
                while True:
                    if match(k, pi + 1):
                        result = True
                        break
                    if k >= len(file) or not _segment_ok_for_globstar(file[k]):
                        break
                    k += 1
        else:
            if fi >= len(file):
                result = False
            else:
                seg = pattern[pi]
                f = file[fi]
                ok = seg.fullmatch(f) is not None if isinstance(seg, re.Pattern) else seg == f
                result = ok and match(fi + 1, pi + 1)
        memo[key] = result
        return result

    return match(0, 0)


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> tuple[bool, tuple[tuple[object, ...], ...]] | None:
    """(negated, alternative segment lists) or ``None`` for a comment."""
    if pattern.startswith("#"):
        return None
    negate = False
    while pattern.startswith("!"):  # even "!(x)": a leading "!" always negates
        negate = not negate
        pattern = pattern[1:]
    alternatives: list[tuple[object, ...]] = []
    for expanded in _expand_braces(pattern):
        parts: list[object] = []
        for seg in _split(expanded):
            if seg == "**":
                if parts and parts[-1] is _GLOBSTAR:
                    continue
                parts.append(_GLOBSTAR)
            else:
                parts.append(_compile_segment(seg))
        alternatives.append(tuple(parts))
    return negate, tuple(alternatives)


def minimatch(path: str, pattern: str) -> bool:
    """``minimatch(path, pattern)`` with minimatch 10's default options (POSIX)."""
    if pattern == "":
        return path == ""
    compiled = _compile(pattern)
    if compiled is None:
        return False
    negate, alternatives = compiled
    file = _split(path)
    hit = any(_match_parts(file, list(alt)) for alt in alternatives)
    return hit != negate
