from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from pi_nb import redaction


def test_env_values_redacted_by_value(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-1234567890abcdef")
    monkeypatch.setenv("DEBUG", "1")
    text = "key=sk-test-1234567890abcdef and DEBUG=1"
    assert redaction.redact(text) == "key=[redacted: OPENAI_API_KEY] and DEBUG=1"


def test_short_values_are_not_secrets(monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "1")
    assert redaction.redact("a 1 b") == "a 1 b"


def test_registered_env_and_value(monkeypatch):
    monkeypatch.setenv("LLM_CRED", "zz-custom-secret-value")
    assert "zz-custom" in redaction.redact("v=zz-custom-secret-value")
    redaction.register_secret_env("LLM_CRED")
    assert redaction.redact("v=zz-custom-secret-value") == "v=[redacted: LLM_CRED]"
    redaction.register_secret("passed-in-code-key-123", "model api_key")
    assert redaction.redact("passed-in-code-key-123") == "[redacted: model api_key]"


def test_nested_values():
    table = {"sk-abcdefghijkl": "K"}
    assert redaction.redact_value({"a": ["x sk-abcdefghijkl"], "n": 3}, table) == {
        "a": ["x [redacted: K]"],
        "n": 3,
    }


@given(st.text(max_size=60), st.text(max_size=60), st.lists(st.integers(0, 200), max_size=6))
def test_stream_split_anywhere(before, after, cuts):
    secret = "sk-split-secret-0123456789"
    table = {secret: "OPENAI_API_KEY"}
    text = before + secret + after
    points = sorted({min(c, len(text)) for c in cuts})
    chunks, last = [], 0
    for p in points:
        chunks.append(text[last:p])
        last = p
    chunks.append(text[last:])
    r = redaction.StreamRedactor(table)
    out = "".join(r.feed(c) for c in chunks) + r.flush()
    assert out == redaction.redact(text, table)
    assert secret not in out


@given(st.text(alphabet="ab sk-x", max_size=40), st.text(alphabet="ab sk-x", max_size=40))
def test_a_growing_text_is_shown_as_a_growing_prefix_without_a_key_start(before, after):
    secret = "sk-grow-secret-0123456789"
    table = {secret: "K", "sk-x-other-secret-abc": "O"}
    text = before + secret + after
    shown = [redaction.redact_stream_text(text[:i], table) for i in range(len(text) + 1)]
    for a, b in itertools.pairwise(shown):
        assert b.startswith(a)
    final = redaction.redact(text, table)
    assert final.startswith(shown[-1])
    for s in shown:
        assert secret[:6] not in s
