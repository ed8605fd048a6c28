"""``v8_json_parse_error`` gives V8's own ``JSON.parse`` error text (golden: Node 22 on 3,047 texts)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pi_nb._js import js_json_parse
from pi_nb._v8_json_errors import v8_json_parse_error

GOLDEN = json.loads((Path(__file__).parent / "golden" / "v8_json_errors.json").read_text(encoding="utf-8"))


def test_every_text_gets_v8s_message() -> None:
    bad = [(c["text"], v8_json_parse_error(c["text"]), c["error"]) for c in GOLDEN["cases"]]
    bad = [b for b in bad if b[1] != b[2]]
    assert not bad, bad[:5]
    assert sum(c["error"] is None for c in GOLDEN["cases"]) > 50  # valid texts are in the set too


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_valid_json_has_no_error(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert v8_json_parse_error(text) is None
    assert js_json_parse(text) == value
