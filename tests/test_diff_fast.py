"""The edit tool's fast diff paths give jsdiff's script exactly (the scalar port is the reference).

``diff_lines(..., vectorized=False)`` is the plain port of jsdiff 8.0.4 that the golden tests pin
against the real Pi; the numpy search and the no-line-in-common shortcut must give the same parts.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.tools.diff import diff_lines


def lines(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(list(alphabet)), max_size=size).map(lambda xs: "".join(x + "\n" for x in xs))


@settings(max_examples=400, deadline=None)
@given(old=lines("abc", 40), new=lines("abc", 40), tail=st.booleans())
def test_numpy_search_equals_the_scalar_port(old: str, new: str, tail: bool) -> None:
    if tail:
        new = new.rstrip("\n")
    assert diff_lines(old, new, vectorized=True) == diff_lines(old, new, vectorized=False)


@settings(max_examples=150, deadline=None)
@given(old=lines("abcdefghij", 120), new=lines("abcdefghij", 120))
def test_numpy_search_equals_the_scalar_port_on_longer_texts(old: str, new: str) -> None:
    assert diff_lines(old, new, vectorized=True) == diff_lines(old, new, vectorized=False)


def test_handover_after_the_scalar_steps_equals_the_scalar_port() -> None:
    """Default mode: the scalar search runs its first steps, then numpy takes over its state."""
    rnd = random.Random(7)
    base = [f"line {i}\n" for i in range(600)]
    for _ in range(6):
        new = [x if rnd.random() < 0.6 else rnd.choice(["x\n", "y\n", f"n{rnd.randint(0, 50)}\n"]) for x in base]
        old_text, new_text = "".join(base), "".join(new)
        assert diff_lines(old_text, new_text) == diff_lines(old_text, new_text, vectorized=False)


def test_no_line_in_common_removes_then_adds_for_every_size() -> None:
    for a in range(0, 45):
        for b in range(0, 45, 3):
            prefix = "same\n" * (a % 3)
            old = prefix + "".join(f"o{i}\n" for i in range(a))
            new = prefix + "".join(f"n{i % 4}\n" for i in range(b))
            assert diff_lines(old, new) == diff_lines(old, new, vectorized=False), (a, b)


def test_a_large_rewrite_and_a_large_interleaving_match_the_scalar_port() -> None:
    old = "".join(f"line {i:05d} of the file\n" for i in range(1500))
    alt = "".join(f"CHANGED {i}\n" if i % 2 else f"line {i:05d} of the file\n" for i in range(1500))
    rew = "".join(f"new {i}\n" for i in range(1500))
    for new in (alt, rew):
        assert diff_lines(old, new) == diff_lines(old, new, vectorized=False)
