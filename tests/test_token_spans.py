"""Token-span view and the estimate / tiktoken / usage comparisons (pi_nb/notebook/token_spans.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.errors import NotebookError
from pi_nb.notebook.token_spans import (
    message_parts,
    token_comparison_df,
    token_spans,
    token_view,
    turn_comparison_df,
)
from pi_nb.session.context import build_session_context
from pi_nb.tokens import (
    calculate_context_tokens,
    count_message_tokens,
    count_tokens,
    estimate_tokens,
    get_encoding,
)

ROOT = Path(__file__).resolve().parents[1]
REAL_PI = ROOT / "notebooks" / "data" / "real-pi"


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60),
    st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_spans_join_back_to_the_text_and_hold_every_token(text: str, encoding: str) -> None:
    spans = token_spans(text, encoding)
    assert "".join(s.text for s in spans) == text
    assert [t for s in spans for t in s.ids] == get_encoding(encoding).encode_ordinary(text)
    assert [s.start for s in spans] == [sum(len(x.text) for x in spans[:i]) for i in range(len(spans))]
    assert all(s.ids for s in spans)


def test_a_character_split_across_tokens_is_one_span() -> None:
    text = "日本語のテキスト 🧑‍🔬"
    spans = token_spans(text)
    assert "".join(s.text for s in spans) == text
    assert any(len(s.ids) > 1 for s in spans)  # an emoji's bytes straddle tokens
    assert sum(len(s.ids) for s in spans) == count_tokens(text)


def test_whitespace_is_visible() -> None:
    spans = token_spans("a b\tc\nd")
    assert "".join(s.visible for s in spans) == "a·b→c↵d"


ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "look at the file"},
        {"type": "text", "text": "Reading <it> & more"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a b.txt", "limit": 5}},
    ],
    "usage": {"input": 100, "output": 21, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 121},
    "stopReason": "toolUse",
    "timestamp": 1,
}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.titles: list[str] = []
        self.span_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br",):
            self.stack.append(tag)
        if tag == "span":
            self.titles.append(dict(attrs).get("title") or "")

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "span":
            self.span_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()


def test_view_of_an_assistant_message() -> None:
    view = token_view(ASSISTANT)
    assert [p for p, _ in message_parts(ASSISTANT)] == ["thinking", "text", "tool call", "tool arguments"]
    assert view.tiktoken == count_message_tokens(ASSISTANT)
    assert view.estimate == estimate_tokens(ASSISTANT)
    assert view.usage_output == 21
    bundle = view._repr_mimebundle_()
    page = bundle["text/html"]
    parser = _Parser()
    parser.feed(page)
    assert parser.stack == []
    assert len(parser.titles) == sum(len(spans) for _, spans in view.parts)
    assert parser.titles[0].startswith("id ")
    # the spans hold the visible text of every token, escaped (no raw "<it>" in the page)
    assert "".join(parser.span_text) == "".join(s.visible for _, spans in view.parts for s in spans)
    assert "Reading·<it>·&·more" in "".join(parser.span_text)
    assert "<it>" not in page
    assert '{"path":"a·b.txt","limit":5}' in "".join(parser.span_text)
    text = bundle["text/plain"]
    assert text.splitlines()[0] == (
        f"assistant message: Pi's estimate (chars/4) {view.estimate}, tiktoken (o200k_base) {view.tiktoken}, "
        "provider usage (output) 21"
    )
    assert "[tool call] read" in text


def test_view_limits_entries_and_errors() -> None:
    long = "word " * 500
    view = token_view(long, max_tokens=10)
    assert view.tiktoken == count_tokens(long)
    rest = view.tiktoken - 10
    assert f"… {rest} more tokens not shown (max_tokens=10)" in view.to_html()
    assert view.to_text().endswith(f"… {rest} more tokens")
    entry = {
        "type": "compaction",
        "id": "c",
        "summary": "S",
        "firstKeptEntryId": "x",
        "tokensBefore": 1,
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    assert token_view(entry).message["role"] == "compactionSummary"
    image = {
        "role": "user",
        "content": [{"type": "text", "text": "see"}, {"type": "image", "data": "x", "mimeType": "image/png"}],
    }
    assert "[image: not tokenized]" in token_view(image).to_html()
    with pytest.raises(NotebookError):
        token_view(3)
    with pytest.raises(NotebookError):
        token_view({"type": "label", "id": "l", "targetId": "x"})
    with pytest.raises(NotebookError):
        token_view("x", max_tokens=-1)


def test_message_and_turn_comparisons_on_a_real_pi_session() -> None:
    path = REAL_PI / "tools.jsonl"
    per_message = token_comparison_df(path)
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    assistants = per_message[per_message["role"] == "assistant"]
    assert len(assistants) == sum(
        1 for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    assert (
        per_message["estimate_minus_tiktoken"]
        == per_message["estimate_tokens"] - per_message["tiktoken_tokens"]
    ).all()
    assert (
        assistants["usage_output"].notna().all()
        and per_message[per_message["role"] != "assistant"]["usage_output"].isna().all()
    )
    per_turn = turn_comparison_df(path)
    assert list(per_turn["turn"]) == sorted(set(per_message["turn"]))
    for _, row in per_turn.iterrows():
        part = per_message[per_message["turn"] == row["turn"]]
        assert row["messages"] == len(part)
        assert row["estimate_tokens"] == part["estimate_tokens"].sum()
        assert row["tiktoken_tokens"] == part["tiktoken_tokens"].sum()
        if row["last_entry_id"] is None:
            continue
        context = build_session_context([e for e in entries], row["last_entry_id"]).messages
        last = context[-1]
        assert row["context_usage_tokens"] == calculate_context_tokens(last["usage"])
        assert row["context_tiktoken_tokens"] == sum(count_message_tokens(m) for m in context)
        # the provider counted the system prompt and the tool schemas too
        assert row["overhead_tokens"] > 0
