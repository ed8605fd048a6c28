"""The value objects whose wire dict is generated (:func:`pi_nb._wire.wire_dict`): each one's keys
are its fields in camelCase, in field order, and exactly the keys (in order) of the TypedDict its
``to_dict`` is declared to return, so generating the dict changes nothing on the wire."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import typing
from pathlib import Path

import pytest

from pi_nb._wire import camel_case, wire_dict, wire_keys

ROOT = Path(__file__).resolve().parent.parent


def _generated() -> list[tuple[str, str]]:
    """(module, class) of every dataclass whose ``to_dict`` returns ``wire_dict(self)``."""
    found = []
    for path in sorted((ROOT / "pi_nb").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for cls in (
            n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ClassDef)
        ):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "to_dict":
                    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
                    if any(isinstance(c.func, ast.Name) and c.func.id == "wire_dict" for c in calls):
                        found.append((module, cls.name))
    return found


GENERATED = _generated()


def test_camel_case() -> None:
    assert camel_case("tokens") == "tokens"
    assert camel_case("first_kept_entry_id") == "firstKeptEntryId"
    assert camel_case("includes_previous_summary") == "includesPreviousSummary"


def test_wire_dict_is_the_fields_in_order() -> None:
    @dataclasses.dataclass(frozen=True)
    class Shape:
        context_window: int
        tokens: list[int]

    value = Shape(10, [1])
    out = wire_dict(value)
    assert out == {"contextWindow": 10, "tokens": [1]} and list(out) == ["contextWindow", "tokens"]
    assert out["tokens"] is value.tokens


def test_the_generated_shapes_are_the_ones_expected() -> None:
    assert len(GENERATED) >= 15


@pytest.mark.parametrize(("module", "name"), GENERATED, ids=[f"{m}.{n}" for m, n in GENERATED])
def test_generated_keys_are_the_declared_typeddict_keys(module: str, name: str) -> None:
    mod = importlib.import_module(module)
    cls = getattr(mod, name)
    returns = cls.to_dict.__annotations__["return"]
    shape = getattr(mod, returns) if isinstance(returns, str) else returns
    assert typing.is_typeddict(shape), shape
    assert [key for _, key in wire_keys(cls)] == list(shape.__annotations__)
    assert shape.__required_keys__ == frozenset(shape.__annotations__)  # no key Pi leaves out
