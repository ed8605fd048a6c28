"""Compile a JavaScript ``/pattern/i`` regular expression with JavaScript's matching rules.

The provider-error patterns of pi-ai are JavaScript regexes without the ``u`` flag. Three details
differ from Python's ``re`` in Unicode mode and are translated here so that the same error text
classifies the same way:

* ``\\d`` is ASCII ``[0-9]`` in JavaScript (Python: any Unicode digit);
* ``.`` excludes ``\\n``, ``\\r``, U+2028 and U+2029 in JavaScript (Python: only ``\\n``);
* ``/i`` folds only pairs that are both ASCII or both non-ASCII (so ``K``, the Kelvin sign, or
  ``ſ`` never match ``k``/``s``); every pattern here is ASCII, so ASCII case folding
  (``re.ASCII``) gives exactly JavaScript's result, while ``\\s`` is spelled out as JavaScript's
  whitespace set (which ``re.ASCII`` would otherwise narrow).
"""

from __future__ import annotations

import re

__all__ = ["compile_js_regex"]

_JS_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_JS_DOT = "[^\\n\\r\\u2028\\u2029]"


def compile_js_regex(source: str, *, ignore_case: bool = True) -> re.Pattern[str]:
    """Translate ``source`` (JavaScript syntax, no ``u`` flag) and compile it."""
    if not source.isascii():
        raise ValueError("only ASCII patterns are supported (non-ASCII case folding differs)")
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if nxt == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif nxt == "s":
                out.append(_JS_SPACE if in_class else f"[{_JS_SPACE}]")
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        elif ch == ".":
            out.append(_JS_DOT)
        else:
            out.append(ch)
        i += 1
    flags = re.ASCII | (re.IGNORECASE if ignore_case else 0)
    return re.compile("".join(out), flags)
