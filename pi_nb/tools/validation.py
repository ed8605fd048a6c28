"""Tool-argument validation as pi-ai 0.85 does it (``validateToolArguments``).

Pi's built-in tool schemas are TypeBox schemas, so pi-ai runs, on a deep copy of the arguments:

1. ``normalizeOptionalNulls``: an optional property whose value is ``null`` is deleted when its
   schema does not accept ``null`` (a model sending ``"offset": null`` means "no offset");
2. TypeBox ``Value.Convert`` (typebox 1.3): lenient coercion *before* checking. Strings become
   numbers by JavaScript's ``+value`` (``"0x10"`` -> 16, ``" 2 "`` -> 2, ``""`` -> 0) or a BigInt
   literal (``"2n"``); ``true``/``false`` become 1/0 for numbers; numbers and booleans become
   strings (``5`` -> ``"5"``, ``null`` -> ``"null"`` for a *required* string); ``"true"``/``"1"``
   /``1``/``null`` become booleans; a non-array where an array is expected is wrapped (``"x"`` ->
   ``["x"]``);
3. the schema check; on failure every error is listed as ``  - {path}: {message}`` (``root``
   for the top level, ``edits.0.oldText`` for nested ones; a ``required`` error names the first
   missing property and lists them all), followed by the *received* arguments as
   ``JSON.stringify(args, null, 2)``.

The schemas here use only ``object``/``array``/``string``/``number``/``boolean`` (all that the
built-in tools need); other keywords are accepted and ignored by the checker.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

from pi_nb._js import js_number_to_string, js_stringify_pretty
from pi_nb.errors import ToolValidationError

__all__ = ["validate_tool_arguments"]

_MAX_SAFE = 2**53 - 1

# JavaScript's StrWhiteSpaceChar: WhiteSpace and LineTerminator code points
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_RADIX = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)", re.ASCII)
_BIGINT = re.compile(r"-?(0|[1-9]\d*)n", re.ASCII)


def js_string_to_number(text: str) -> float:
    """``+text`` in JavaScript (StringToNumber): NaN when it is not a numeric literal."""
    s = text.strip(_JS_WS)
    if s == "":
        return 0.0
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    if _DECIMAL.fullmatch(s):
        return float(s)
    m = _RADIX.fullmatch(s)
    if m:
        body = m.group(1)
        base = {"x": 16, "o": 8, "b": 2}[body[0].lower()]
        return float(int(body[1:], base))
    return math.nan


def _js_number(x: float) -> int | float:
    """A JS number as the most natural Python value (integral values as ``int``)."""
    if math.isfinite(x) and x == int(x) and abs(x) <= _MAX_SAFE:
        return int(x)
    return x


def _is_number(v: Any) -> bool:
    """TypeBox's number check: a finite number (``Number.isFinite``); booleans are not numbers."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and math.isfinite(v)


_FAIL = object()


def _try_number(v: Any) -> Any:
    if isinstance(v, bool):
        return 1 if v else 0
    if _is_number(v):
        return v
    if v is None:
        return 0
    if isinstance(v, str):
        n = js_string_to_number(v)
        if math.isfinite(n):
            return _js_number(n)
        low = v.lower()
        if low == "false":
            return 0
        if low == "true":
            return 1
        m = _BIGINT.fullmatch(v)
        if m:
            big = int(v[:-1])
            return big if -_MAX_SAFE <= big <= _MAX_SAFE else _FAIL
        return _FAIL
    return _FAIL


def _try_boolean(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if _is_number(v):
        if v == 0:
            return False
        if v == 1:
            return True
        return _FAIL
    if v is None:
        return False
    if isinstance(v, str):
        low = v.lower()
        if low == "false" or v == "0":
            return False
        if low == "true" or v == "1":
            return True
    return _FAIL


def _try_string(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return js_number_to_string(v)
    if v is None:
        return "null"
    if isinstance(v, str):
        return v
    return _FAIL


# The schemas below are the tools' JSON Schemas (``tool.parameters``) and their sub-schemas: open JSON.


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def _convert(schema: Mapping[str, Any], value: Any) -> Any:
    """TypeBox ``Value.Convert`` for the schema kinds the tools use (mutates dicts in place)."""
    kind = schema.get("type")
    if kind == "array":
        items = value if isinstance(value, list) else [value]
        item_schema = schema.get("items")
        if isinstance(item_schema, Mapping):
            return [_convert(item_schema, item) for item in items]
        return list(items)
    if kind == "object":
        if isinstance(value, dict):
            properties = schema.get("properties") or {}
            for key, prop in properties.items():
                if key in value:
                    value[key] = _convert(prop, value[key])
        return value
    try_fn = {"number": _try_number, "boolean": _try_boolean, "string": _try_string}.get(str(kind))
    if try_fn is None:
        return value
    result = try_fn(value)
    return value if result is _FAIL else result


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    return "null" in _types(schema)


def _normalize_optional_nulls(value: Any, schema: Mapping[str, Any]) -> None:
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _normalize_optional_nulls(item, items)
        return
    if not isinstance(value, dict):
        return
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    required = set(schema.get("required") or [])
    for key, prop in properties.items():
        if key not in value:
            continue
        if value[key] is None and key not in required and "$ref" not in prop and not _accepts_null(prop):
            del value[key]
        else:
            _normalize_optional_nulls(value[key], prop)


def _matches(kind: str, v: Any) -> bool:
    if kind == "string":
        return isinstance(v, str)
    if kind == "number":
        return _is_number(v)
    if kind == "integer":
        return _is_number(v) and float(v).is_integer()
    if kind == "boolean":
        return isinstance(v, bool)
    if kind == "null":
        return v is None
    if kind == "array":
        return isinstance(v, list)
    if kind == "object":
        return isinstance(v, dict)
    return True


def _errors(schema: Mapping[str, Any], value: Any, path: list[str], out: list[str]) -> None:
    """TypeBox's error order: type, then one ``required`` error, then each property / item."""
    kinds = _types(schema)
    if kinds and not any(_matches(k, value) for k in kinds):
        out.append(f"  - {_format_path(path)}: must be {kinds[0]}")
        return
    if isinstance(value, dict):
        required = [k for k in schema.get("required") or [] if k not in value]
        if required:
            out.append(
                f"  - {_format_path([*path, required[0]])}: must have required properties {', '.join(required)}"
            )
        for key, prop in (schema.get("properties") or {}).items():
            if key in value:
                _errors(prop, value[key], [*path, key], out)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _errors(items, item, [*path, str(index)], out)


def _format_path(path: list[str]) -> str:
    return ".".join(path) if path else "root"


def validate_tool_arguments(tool: Any, args: Any) -> Any:
    """Coerce and check ``args`` against ``tool.parameters``; return the coerced copy.

    Raises :class:`pi_nb.errors.ToolValidationError` with pi-ai's exact message (the agent loop
    turns it into an error tool result). ``tool`` is anything with ``name`` and ``parameters``.
    """
    schema: Mapping[str, Any] = tool.parameters
    coerced = copy.deepcopy(args)
    _normalize_optional_nulls(coerced, schema)
    if schema.get("type") == "object":
        _convert(schema, coerced)  # Pi ignores Convert's return value: only in-place changes count
    else:
        coerced = _convert(schema, coerced)
    errors: list[str] = []
    _errors(schema, coerced, [], errors)
    if not errors:
        return coerced
    message = (
        f'Validation failed for tool "{tool.name}":\n'
        + "\n".join(errors)
        + "\n\nReceived arguments:\n"
        + js_stringify_pretty(args)
    )
    raise ToolValidationError(message)
