"""JavaScript semantics helpers (pi_nb._js)."""

from __future__ import annotations

import pytest

from pi_nb._js import js_number_to_string, js_stringify, js_to_fixed, js_utf8_encode, utf16_len


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0, "0"),
        (5.0, "5"),
        (0.5, "0.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (123.456, "123.456"),
        (-2.5e-10, "-2.5e-10"),
        (1.5e300, "1.5e+300"),
        (10**22, "1e+22"),
    ],
)
def test_number_to_string(x: float, want: str) -> None:
    assert js_number_to_string(x) == want


@pytest.mark.parametrize(
    ("x", "want"), [(1.25, "1.3"), (0.25, "0.3"), (1024.0, "1024.0"), (50.0, "50.0"), (1.05, "1.1")]
)
def test_to_fixed_rounds_half_up_on_the_exact_value(x: float, want: str) -> None:
    # 1.05 is 1.0500000000000000444 in binary, so it rounds up in JS as well
    assert js_to_fixed(x, 1) == want


def test_utf16_and_buffer_semantics() -> None:
    assert utf16_len("a😀") == 3
    assert js_utf8_encode("a\ud83d") == b"a\xef\xbf\xbd"
    assert js_utf8_encode("\ud83d\ude00") == "😀".encode()


def test_stringify() -> None:
    assert js_stringify({"path": "é", "n": 1.0, "l": [True, None]}) == '{"path":"é","n":1,"l":[true,null]}'
    assert js_stringify("x\ud83dy") == '"x\\ud83dy"'
