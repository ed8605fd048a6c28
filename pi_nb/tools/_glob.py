"""fd's ``--glob`` patterns (the Rust ``globset`` crate), translated to Python regexes (private).

Rules (globset defaults on Unix, as fd uses them):

* ``?`` one character, ``*`` any run of characters; with ``literal_separator`` (fd's
  ``--full-path`` mode) neither crosses ``/``;
* ``**`` as a whole path component: ``**/x`` (any leading directories, or none), ``x/**``
  (everything below ``x``), ``x/**/y`` (zero or more directories between); elsewhere ``**`` is
  ``*``; the glob ``**`` alone matches everything;
* ``[abc]``, ``[a-z]``, ``[!a-z]``/``[^a-z]`` classes (a ``]`` first in the class is literal);
* ``{a,b}`` alternatives (not nested); ``\\`` escapes the next character.

Errors carry globset's wording, e.g. ``error parsing glob '[': unclosed character class; missing ']'``.
"""

from __future__ import annotations

import re

__all__ = ["GlobError", "compile_glob"]


class GlobError(ValueError):
    """A malformed glob; ``str()`` is globset's message."""


def _class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the class starting after ``[`` at index ``i``; returns (regex, next index)."""
    n = len(pattern)
    negated = False
    if i < n and pattern[i] in "!^":
        negated = True
        i += 1
    items: list[str] = []
    first = True
    while True:
        if i >= n:
            raise GlobError("unclosed character class; missing ']'")
        ch = pattern[i]
        if ch == "]" and not first:
            i += 1
            break
        first = False
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            lo, hi = ch, pattern[i + 2]
            if lo > hi:
                raise GlobError(f"invalid range; '{lo}' > '{hi}'")
            items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            i += 3
            continue
        items.append(re.escape(ch) if ch not in "-" else r"\-")
        i += 1
    return ("[^" if negated else "[") + "".join(items) + "]", i


def _translate(pattern: str, literal_separator: bool) -> str:
    star = "[^/]*" if literal_separator else ".*"
    any_char = "[^/]" if literal_separator else "."
    out: list[str] = []
    alternates: list[list[str]] | None = None  # alternatives of the open {...} group
    i, n = 0, len(pattern)

    def emit(piece: str) -> None:
        (alternates[-1] if alternates is not None else out).append(piece)

    def current() -> list[str]:
        return alternates[-1] if alternates is not None else out

    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                raise GlobError("dangling '\\'")
            emit(re.escape(pattern[i + 1]))
            i += 2
        elif ch == "*" and i + 1 < n and pattern[i + 1] == "*":
            prev_slash = i == 0 or pattern[i - 1] == "/"
            nxt = pattern[i + 2] if i + 2 < n else None
            if prev_slash and (nxt is None or nxt == "/"):
                cur = current()
                if i == 0 and alternates is None:
                    if nxt is None:
                        emit(".*")
                        i += 2
                    else:
                        emit("(?:/?|.*/)")
                        i += 3
                elif nxt is None:
                    if cur and cur[-1] == "/":
                        cur.pop()
                    emit("/.*")
                    i += 2
                else:
                    if cur and cur[-1] == "/":
                        cur.pop()
                    emit("(?:/|/.*/)")
                    i += 3
            else:
                emit(star)
                i += 2
                while i < n and pattern[i] == "*":
                    i += 1
        elif ch == "*":
            emit(star)
            i += 1
        elif ch == "?":
            emit(any_char)
            i += 1
        elif ch == "[":
            piece, i = _class(pattern, i + 1)
            emit(piece)
        elif ch == "{":
            if alternates is not None:
                raise GlobError("nested alternate groups are not allowed")
            alternates = [[]]
            i += 1
        elif ch == "," and alternates is not None:
            alternates.append([])
            i += 1
        elif ch == "}" and alternates is not None:
            out.append("(?:" + "|".join("".join(a) for a in alternates) + ")")
            alternates = None
            i += 1
        else:
            emit("/" if ch == "/" else re.escape(ch))
            i += 1
    if alternates is not None:
        raise GlobError("unclosed alternate group; missing '}'")
    return "".join(out)


def compile_glob(pattern: str, *, literal_separator: bool, case_insensitive: bool) -> re.Pattern[str]:
    """The anchored regex of ``pattern`` (an empty glob matches everything, as in fd)."""
    if pattern == "":
        body = ".*"
    else:
        try:
            body = _translate(pattern, literal_separator)
        except GlobError as exc:
            raise GlobError(f"error parsing glob '{pattern}': {exc}") from None
    flags = re.DOTALL | (re.IGNORECASE if case_insensitive else 0)
    return re.compile(f"^(?:{body})$", flags)
