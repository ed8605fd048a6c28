"""The wire dict of a value object: one rule, one implementation.

pi_nb's value objects are frozen dataclasses with snake_case fields; their ``to_dict()`` is Pi's
JSON object, whose keys are those fields in camelCase, in field order (``context_window`` ->
``contextWindow``). Where a shape follows that rule exactly (every field, as it is, no key left
out), ``to_dict`` is :func:`wire_dict`; shapes with optional keys, nested objects or renamed keys
keep a hand-written ``to_dict``.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

__all__ = ["camel_case", "wire_dict", "wire_keys"]


def camel_case(name: str) -> str:
    """``snake_case`` -> ``snakeCase`` (``first_kept_entry_id`` -> ``firstKeptEntryId``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@cache
def wire_keys(cls: type) -> tuple[tuple[str, str], ...]:
    """``(field name, wire key)`` of each field of the dataclass ``cls``, in field order."""
    return tuple((f.name, camel_case(f.name)) for f in dataclasses.fields(cls))


def wire_dict(obj: Any) -> dict[str, Any]:
    """The dataclass instance ``obj`` as ``{camelCaseField: value}``, in field order (the values
    as they are, not copied)."""
    cls: type = type(obj)
    return {key: getattr(obj, name) for name, key in wire_keys(cls)}
