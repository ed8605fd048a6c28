"""JavaScript semantics that Pi's behaviour depends on, in one private module.

Pi is TypeScript: string lengths are UTF-16 code units, ``Buffer.from(s)`` turns a lone surrogate
into U+FFFD, ``Number.prototype.toFixed`` rounds the exact binary value half-up, and
``JSON.stringify`` prints numbers its own way (``5`` not ``5.0``, ``1e+21``, ``1e-7``) and escapes
lone surrogates. A faithful port needs all of these in many places, so they live here once.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "UNDEFINED",
    "Undefined",
    "is_array_index",
    "js_number_to_string",
    "js_sort_key",
    "js_stringify",
    "js_stringify_pretty",
    "js_to_fixed",
    "js_trim",
    "js_trim_end",
    "js_truthy",
    "js_utf8_encode",
    "utf16_len",
]


class Undefined:
    """JavaScript's ``undefined`` where Pi tells it apart from ``null`` (e.g. ``leafId``).

    An omitted argument defaults to :data:`UNDEFINED`; ``None`` means ``null``.
    """

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED = Undefined()

# A surrogate code point that is not part of a high+low pair (Python keeps astral characters as one
# code point, so surrogates only appear in a str built from lone halves).
_LONE_SURROGATE = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ANY_SURROGATE = re.compile(r"[\ud800-\udfff]")


def utf16_len(s: str) -> int:
    """``s.length`` in JavaScript: UTF-16 code units (astral characters count 2)."""
    if s.isascii():
        return len(s)
    # surrogatepass: a lone surrogate is one code unit, as in JS
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def js_utf8_encode(s: str) -> bytes:
    """``Buffer.from(s, "utf8")``: UTF-8, with lone surrogates encoded as U+FFFD (3 bytes).

    A high surrogate directly followed by a low surrogate (two code points in Python) is one
    astral character in JavaScript, so such pairs are joined first.
    """
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        pass
    # join pairs, then replace what is left alone
    joined = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _ANY_SURROGATE.sub("\ufffd", joined).encode("utf-8")


def js_to_fixed(x: float, digits: int) -> str:
    """``x.toFixed(digits)``: the exact binary value rounded half-up (1.25 -> "1.3", not "1.2")."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if abs(x) >= 1e21:
        return js_number_to_string(x)
    q = Decimal(1).scaleb(-digits)
    d = Decimal(x).quantize(q, rounding=ROUND_HALF_UP)
    text = f"{d:f}"
    if text.startswith("-") and Decimal(text) == 0:
        text = text[1:]  # (-0.01).toFixed(1) is "-0.0" in JS too, but x=-0.0 gives "0.0"
        if x < 0:
            text = "-" + text
    return text


def js_number_to_string(x: float | int) -> str:
    """``String(x)`` for a JavaScript number (ECMAScript Number::toString)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if abs(x) <= _MAX_SAFE_INTEGER:
            return str(x)
        # a JavaScript number is a double: 12345678901234567891 is 12345678901234567000 there
        x = _int_to_double(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))  # shortest round-trip digits, like JS
    if "e" in r:
        mant, exp_s = r.split("e")
        exp = int(exp_s)
    else:
        mant, exp = r, 0
    if "." in mant:
        int_part, frac = mant.split(".")
    else:
        int_part, frac = mant, ""
    digits = (int_part + frac).lstrip("0")
    # position of the decimal point relative to the start of `digits`
    n = len(int_part.lstrip("0")) + exp if int_part.strip("0") else exp - (len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = f"+{e}" if e >= 0 else f"-{-e}"
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + es
    return sign + out


_MAX_SAFE_INTEGER = 2**53 - 1
_MAX_ARRAY_INDEX = 2**32 - 2


def _int_to_double(x: int) -> float:
    """The double JavaScript would hold for the integer literal ``x`` (``Infinity`` past 1.8e308)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def is_array_index(key: str) -> bool:
    """An "array index" key (``"0"`` .. ``"4294967294"``, no leading zero): JS orders it first."""
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def _needs_slow_path(value: Any) -> bool:
    """True when ``json.dumps`` would differ from JSON.stringify: floats, ints past 2**53 (doubles
    in JS), and objects with array-index keys (JS enumerates those first, in ascending order).
    (Plain strings, dicts and lists are recognised by their exact type first: the common case.)"""
    stack = [value]
    push = stack.append
    while stack:
        v = stack.pop()
        t = type(v)
        if t is dict:
            for k, x in v.items():
                if type(k) is str:
                    # an array index starts with an ASCII digit (most keys do not: no full test)
                    if k and "0" <= k[0] <= "9" and is_array_index(k):
                        return True
                elif is_array_index(str(k)):
                    return True
                if type(x) is not str and x is not None:
                    push(x)
        elif t is list:
            for x in v:
                if type(x) is not str and x is not None:
                    push(x)
        elif t is str or v is None or t is bool:
            continue
        elif isinstance(v, float):
            return True
        elif isinstance(v, int):
            if abs(v) > _MAX_SAFE_INTEGER:
                return True
        elif isinstance(v, dict):
            if any(is_array_index(str(k)) for k in v):
                return True
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


def js_key_order(d: dict[Any, Any]) -> list[tuple[str, Any]]:
    """Own-property order of a JS object: array-index keys ascending, then the rest as inserted."""
    items = [(str(k), x) for k, x in d.items()]
    index = sorted(((k, x) for k, x in items if is_array_index(k)), key=lambda kx: int(kx[0]))
    if not index:
        return items
    return index + [(k, x) for k, x in items if not is_array_index(k)]


def _escape_lone(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def _stringify_slow(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        if abs(v) <= _MAX_SAFE_INTEGER:
            return str(v)
        v = _int_to_double(v)
    if isinstance(v, float):
        return "null" if not math.isfinite(v) else js_number_to_string(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dict):
        return (
            "{"
            + ",".join(
                json.dumps(k, ensure_ascii=False) + ":" + _stringify_slow(x) for k, x in js_key_order(v)
            )
            + "}"
        )
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_stringify_slow(x) for x in v) + "]"
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` (compact, JS key order, JS number printing).

    Key order is JavaScript's own-property order: array-index keys (``"0"``, ``"12"``) first in
    ascending numeric order, then the other keys as inserted. Integers beyond 2**53 are doubles in
    JavaScript, so they print as such (``10**22`` -> ``1e+22``).

    Lone surrogates are escaped as ``\\udXXX`` (well-formed JSON.stringify, ES2019); everything
    else non-ASCII is written raw, as JavaScript does. Fast path: the C encoder when no float
    is involved (ints, strings, bools and null print identically in both languages).
    """
    if _needs_slow_path(value):
        out = _stringify_slow(value)
    else:
        out = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if not out.isascii() and _ANY_SURROGATE.search(out):
        out = _LONE_SURROGATE.sub(_escape_lone, out)
    return out


#: The characters JavaScript's ``String.prototype.trim`` removes (WhiteSpace + LineTerminator).
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(s: str) -> str:
    """``s.trim()`` (strips U+FEFF too, keeps U+001C..U+001F and U+0085, unlike ``str.strip``)."""
    return s.strip(JS_WHITESPACE)


def js_trim_end(s: str) -> str:
    """``s.trimEnd()``."""
    return s.rstrip(JS_WHITESPACE)


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: ``undefined``, ``null``, ``false``, ``0``, ``NaN`` and ``""`` are
    falsy; ``[]`` and ``{}`` are truthy (unlike Python)."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == value and value != 0  # NaN != NaN
    if isinstance(value, str):
        return value != ""
    return True


def js_sort_key(s: str) -> bytes:
    """Sort key for JavaScript's default ``Array.prototype.sort`` order: UTF-16 code units, so an
    astral character (a surrogate pair from U+D800) sorts before U+E000..U+FFFF."""
    return s.encode("utf-16-be", "surrogatepass")


def js_stringify_pretty(value: Any, indent: int | str = 2, _level: int = 0) -> str:
    """``JSON.stringify(value, null, indent)``: scalars print as :func:`js_stringify`, array-index
    keys come first (as JavaScript enumerates them)."""
    unit = indent if isinstance(indent, str) else " " * indent
    inner, outer = unit * (_level + 1), unit * _level
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = [str(k) for k in value]
        items = {str(k): v for k, v in value.items()}
        ordered = sorted((k for k in keys if is_array_index(k)), key=int) + [
            k for k in keys if not is_array_index(k)
        ]
        parts = [
            f"{inner}{js_stringify(k)}: {js_stringify_pretty(items[k], unit, _level + 1)}" for k in ordered
        ]
        return "{\n" + ",\n".join(parts) + "\n" + outer + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        parts = [inner + js_stringify_pretty(v, unit, _level + 1) for v in value]
        return "[\n" + ",\n".join(parts) + "\n" + outer + "]"
    return js_stringify(value)


# --- JSON.parse ---------------------------------------------------------------------------------


def _reject_js_constant(name: str) -> Any:
    # JSON.parse has no NaN / Infinity / -Infinity literals (Python's json module accepts them)
    raise ValueError(f"Unexpected token {name[0]} in JSON: {name} is not JSON")


def _js_big_int(text: str) -> int | float:
    # Python refuses int literals over 4300 digits; JavaScript reads them as a (possibly infinite) double.
    try:
        return int(text)
    except ValueError:
        return float(text)


JS_JSON_DECODER = json.JSONDecoder(parse_constant=_reject_js_constant)
"""A decoder that refuses what ``JSON.parse`` refuses (for callers that need its ``scan_once``)."""
_JS_JSON_SLOW = json.JSONDecoder(parse_constant=_reject_js_constant, parse_int=_js_big_int)


def js_json_parse(text: str) -> Any:
    """``JSON.parse(text)``: raises ``ValueError`` (``json.JSONDecodeError`` for a syntax error, or
    ``RecursionError`` past Python's nesting limit) where JavaScript throws. Strict JSON: no
    ``NaN``/``Infinity``, no raw control characters in strings; integers of any length are read (as a
    double past Python's 4,300-digit limit, like JavaScript). The one JSON.parse of pi_nb."""
    try:
        return JS_JSON_DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "digits" not in str(exc):
            raise
        return _JS_JSON_SLOW.decode(text)


def js_round(x: float) -> int:
    """JavaScript's ``Math.round``: halves round up, towards +infinity (``-2.5`` -> ``-2``)."""
    return math.floor(x + 0.5)


def js_homedir() -> str:
    """Node's ``process.env.HOME || os.homedir()``: ``$HOME`` when set and not empty, else the
    password database's home (the one home directory of pi_nb, as Pi resolves ``~``)."""
    return os.environ.get("HOME") or os.path.expanduser("~")


def js_type_name(value: object) -> str:
    """How JavaScript names a JSON value's type in an error message: ``null``, ``boolean``,
    ``number``, ``string``, ``array``, ``object`` (a Python type's own name otherwise)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


class JsSyntaxError(ValueError):
    """What ``JSON.parse`` throws, with V8's own message (``Unexpected token 'E', "..." is not valid JSON``)."""


def js_json_parse_v8(text: str) -> Any:
    """:func:`js_json_parse`, raising :class:`JsSyntaxError` with the text V8 gives its ``SyntaxError``
    (for errors pi-ai records as ``error.message`` of a failed ``JSON.parse``)."""
    try:
        return js_json_parse(text)
    except ValueError:  # a syntax error, or a NaN / Infinity literal
        from pi_nb._v8_json_errors import v8_json_parse_error

        raise JsSyntaxError(v8_json_parse_error(text) or "Unexpected end of JSON input") from None
