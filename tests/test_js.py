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


def test_stringify_integers_past_2_53_are_doubles() -> None:
    # expected strings from Node 22: JSON.stringify(JSON.parse("[...]")) of the same literals
    got = js_stringify(
        [2**53 - 1, 2**53 + 1, 12345678901234567891, 9999999999999999999, 10**21, -(10**400), 10**400]
    )
    assert (
        got == "[9007199254740991,9007199254740992,12345678901234567000,10000000000000000000,1e+21,null,null]"
    )
    assert js_stringify({"a": 10**22}) == '{"a":1e+22}'
    assert js_number_to_string(9999999999999999999) == "10000000000000000000"
    assert js_number_to_string(-12345678901234567891) == "-12345678901234567000"


def test_stringify_orders_array_index_keys_first() -> None:
    # JS own-property order: "0".."4294967294" ascending, then the rest in insertion order (Node 22)
    value = {"b": 1, "1": 2, "01": 3, "4294967295": 4, "4294967294": 5, "-1": 6, "0": 7, "1.5": 8}
    assert js_stringify(value) == '{"0":7,"1":2,"4294967294":5,"b":1,"01":3,"4294967295":4,"-1":6,"1.5":8}'
    assert js_stringify({"z": {"10": 1, "9": 2, "a": [1.0, -0.0]}}) == '{"z":{"9":2,"10":1,"a":[1,0]}}'
