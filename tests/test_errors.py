"""The error tree drawn in pi_nb/errors.py's docstring is the real class hierarchy."""

from __future__ import annotations

import re

import pi_nb
import pi_nb.errors as errors


def _drawn_tree() -> dict[str, str | None]:
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        m = re.match(r"^(\s*(?:[│ ]\s*)*)(?:[├└]── )?([A-Z]\w+(?:Error))\b", line)
        if not m or "Error" not in m.group(2):
            continue
        depth = len(m.group(1)) + (4 if ("├" in line or "└" in line) else 0)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[m.group(2)] = stack[-1][1] if stack else None
        stack.append((depth, m.group(2)))
    return parents


def test_every_error_is_drawn_under_its_real_parent() -> None:
    drawn = _drawn_tree()
    warnings = {n for n in errors.__all__ if issubclass(getattr(errors, n), Warning)}
    assert set(drawn) == set(errors.__all__) - warnings
    for name in warnings:  # warnings are not errors: named in the docstring, outside the tree
        assert name in (errors.__doc__ or ""), name
    for name, parent in drawn.items():
        cls = getattr(errors, name)
        if parent is None:
            assert cls is errors.PiNbError
        else:
            assert issubclass(cls, getattr(errors, parent)), (name, parent)
            assert getattr(errors, parent) in cls.__bases__, (name, parent)


def test_errors_are_exported_at_the_top() -> None:
    for name in errors.__all__:
        assert getattr(pi_nb, name) is getattr(errors, name)


def test_entry_not_found_reads_like_pi() -> None:
    err = errors.EntryNotFoundError("Entry abc not found")
    assert str(err) == "Entry abc not found"
    assert isinstance(err, KeyError)
