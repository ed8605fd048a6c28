"""Token-span view: a message as the model's tokenizer cuts it, and three token counts side by side.

* :func:`token_spans` — the tiktoken tokens of a text as spans (a span holds several token ids
  when one character's UTF-8 bytes are split across tokens, so every span is real text);
* :func:`token_view` — a message (or text) rendered as coloured token spans, ids and the text on
  hover, whitespace made visible (``·`` space, ``→`` tab, ``↵`` newline), with Pi's estimate,
  the tiktoken count and the provider's usage (for an assistant: its ``output``) in the header;
  plain ``text/html`` + ``text/plain``, no widget needed;
* :func:`token_comparison_df` / :func:`turn_comparison_df` — Pi's ``estimateTokens`` (chars/4)
  vs tiktoken vs provider usage, per message and per turn of a session's active branch.

What is tokenized is what :func:`pi_nb.tokens.message_token_breakdown` counts: text blocks,
thinking, and for a tool call its name and ``JSON.stringify(arguments)``; custom roles as the
user message :func:`pi_nb.messages.convert_to_llm` makes of them. Images are listed, not tokenized.
tiktoken is exact for OpenAI models and an approximation for others; the provider's own numbers
also hold the system prompt, tool schemas and chat framing, which no message carries.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

import pandas as pd

from pi_nb._js import js_stringify
from pi_nb.errors import NotebookError
from pi_nb.notebook.views import StaticView, load_session
from pi_nb.session.context import build_session_context, session_entry_to_context_messages
from pi_nb.tokens import (
    DEFAULT_ENCODING,
    calculate_context_tokens,
    count_message_tokens,
    estimate_tokens,
    get_encoding,
)

if TYPE_CHECKING:
    from pi_nb.messages import AgentMessage, Usage
    from pi_nb.session.types import SessionEntry

__all__ = [
    "TokenSpan",
    "TokenSpanView",
    "message_parts",
    "token_comparison_df",
    "token_spans",
    "token_view",
    "turn_comparison_df",
]

PALETTE = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#e0e7ff", "#ccfbf1")
_VISIBLE = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}


@dataclass(frozen=True)
class TokenSpan:
    """One piece of text and the token ids that make it (usually one; several when a character's
    bytes straddle tokens). ``start`` is the offset of the text in the input (Python characters)."""

    text: str
    ids: tuple[int, ...]
    start: int

    @property
    def visible(self) -> str:
        """The text with spaces, tabs and line breaks drawn (``·``, ``→``, ``↵``)."""
        return "".join(_VISIBLE.get(ch, ch) for ch in self.text)


def token_spans(text: str, encoding: str = DEFAULT_ENCODING) -> list[TokenSpan]:
    """The tokens of ``text`` (``encode_ordinary``: special-token text is plain text) as spans
    whose texts join back to ``text``."""
    if not isinstance(text, str):
        raise NotebookError(f"token_spans() needs a str, got {type(text).__name__}")
    enc = get_encoding(encoding)
    spans: list[TokenSpan] = []
    buf = b""
    ids: list[int] = []
    start = 0
    for token in enc.encode_ordinary(text):
        buf += enc.decode_single_token_bytes(token)
        ids.append(token)
        try:
            piece = buf.decode("utf-8")
        except UnicodeDecodeError:
            continue
        spans.append(TokenSpan(piece, tuple(ids), start))
        start += len(piece)
        buf, ids = b"", []
    if ids:
        spans.append(TokenSpan(buf.decode("utf-8", errors="replace"), tuple(ids), start))
    return spans


def _content_parts(content: Any, role: str) -> list[tuple[str, str]]:
    if isinstance(content, str):
        return [("text", content)]
    parts: list[tuple[str, str]] = []
    for block in content or []:
        if not isinstance(block, Mapping):
            raise NotebookError(f"{role} content block must be a mapping, got {type(block).__name__}")
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(("text", block["text"]))
        elif block.get("type") == "image":
            parts.append(("image", ""))
    return parts


def message_parts(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``[(part, text)]`` of what the model sees of one agent message, in order.

    The message is any mapping with a ``role`` (an agent message as a user passed it or a
    session line holds it: not validated, its fields are read tolerantly).

    Parts: ``text``, ``thinking``, ``tool call`` (the name), ``tool arguments`` (compact JSON),
    ``image`` (text ``""``: not tokenized). Their tiktoken counts add up to
    :func:`pi_nb.tokens.count_message_tokens`.
    """
    if not isinstance(message, Mapping):
        raise NotebookError(f"a message must be a mapping, got {type(message).__name__}")
    role = message.get("role")
    if role in ("user", "toolResult"):
        return _content_parts(message.get("content"), str(role))
    if role == "assistant":
        parts: list[tuple[str, str]] = []
        for block in message.get("content") or []:
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "text":
                parts.append(("text", str(block.get("text") or "")))
            elif kind == "thinking":
                parts.append(("thinking", str(block.get("thinking") or "")))
            elif kind == "toolCall":
                parts.append(("tool call", str(block.get("name") or "")))
                parts.append(("tool arguments", js_stringify(block.get("arguments"))))
        return parts
    if role in ("bashExecution", "custom", "branchSummary", "compactionSummary"):
        from pi_nb.messages import convert_to_llm

        out: list[tuple[str, str]] = []
        for rendered in convert_to_llm([cast(Any, message)]):
            out.extend(_content_parts(rendered.get("content"), str(role)))
        return out
    return []


def _as_message(source: Any) -> Mapping[str, Any]:
    """The message :func:`token_view` shows: the given mapping itself when it has a ``role`` (not
    validated), a ``str`` as a bare user message, or a session entry's first context message."""
    if isinstance(source, str):
        return {"role": "user", "content": source}
    if isinstance(source, Mapping):
        if "role" in source:
            return source
        if "type" in source:  # a session entry
            messages = session_entry_to_context_messages(cast("SessionEntry", source))  # checked there
            if not messages:
                raise NotebookError(
                    f"entry {source.get('id')!r} ({source.get('type')}) puts no message in context"
                )
            return messages[0]
    raise NotebookError(
        f"token_view() needs a message, a session entry or a str, got {type(source).__name__}"
    )


class TokenSpanView(StaticView):
    """A message as coloured token spans (see :func:`token_view`)."""

    def __init__(self, message: Mapping[str, Any], encoding: str, max_tokens: int) -> None:
        # any mapping with a role (see :func:`_as_message`), read tolerantly
        self.message = message
        self.encoding = encoding
        self.max_tokens = max_tokens
        self.parts = [(label, token_spans(text, encoding)) for label, text in message_parts(message)]
        self.tiktoken = sum(len(s.ids) for _, spans in self.parts for s in spans)
        self.estimate = estimate_tokens(cast("AgentMessage", message))  # read tolerantly there
        usage = message.get("usage") if message.get("role") == "assistant" else None
        self.usage_output: int | None = (
            int(usage["output"])
            if isinstance(usage, Mapping) and isinstance(usage.get("output"), int)
            else None
        )

    def _counts(self) -> list[tuple[str, str]]:
        rows = [
            ("Pi's estimate (chars/4)", f"{self.estimate:,}"),
            (f"tiktoken ({self.encoding})", f"{self.tiktoken:,}"),
        ]
        if self.usage_output is not None:
            rows.append(("provider usage (output)", f"{self.usage_output:,}"))
        return rows

    def to_html(self) -> str:
        role = html.escape(str(self.message.get("role")))
        counts = "".join(
            f"<td style='padding:2px 10px'><b>{html.escape(v)}</b><br><small>{html.escape(k)}</small></td>"
            for k, v in self._counts()
        )
        out = [
            "<div class='pi-nb-token-spans' style='font-family:sans-serif;font-size:13px'>",
            f"<div><b>{role}</b> message</div><table><tr>{counts}</tr></table>",
        ]
        shown = 0
        for label, spans in self.parts:
            out.append(f"<div style='margin-top:6px;color:#475569'><small>{html.escape(label)}</small></div>")
            if label == "image":
                out.append("<div><i>[image: not tokenized]</i></div>")
                continue
            pieces = []
            for s in spans:
                if shown >= self.max_tokens:
                    break
                color = PALETTE[shown % len(PALETTE)]
                hover = f"id {' '.join(map(str, s.ids))}: {s.text!r}"
                text = html.escape(s.visible)
                if "\n" in s.text:
                    text = text.replace("↵", "↵<br>")
                pieces.append(
                    f"<span title='{html.escape(hover, quote=True)}' style='background:{color};"
                    f"border-radius:2px;margin-right:1px'>{text}</span>"
                )
                shown += len(s.ids)
            out.append(
                "<div style='font-family:monospace;white-space:pre-wrap;line-height:1.7'>"
                + "".join(pieces)
                + "</div>"
            )
        if shown < self.tiktoken:
            out.append(
                f"<div><i>… {self.tiktoken - shown:,} more tokens not shown (max_tokens={self.max_tokens})</i></div>"
            )
        out.append("</div>")
        return "".join(out)

    def to_text(self) -> str:
        lines = [f"{self.message.get('role')} message: " + ", ".join(f"{k} {v}" for k, v in self._counts())]
        shown = 0
        for label, spans in self.parts:
            visible = []
            for s in spans:
                if shown >= self.max_tokens:
                    break
                visible.append(s.visible)
                shown += len(s.ids)
            lines.append(f"[{label}] " + ("(image)" if label == "image" else "|".join(visible)))
        if shown < self.tiktoken:
            lines.append(f"… {self.tiktoken - shown:,} more tokens")
        return "\n".join(lines)


def token_view(source: Any, *, encoding: str = DEFAULT_ENCODING, max_tokens: int = 2000) -> TokenSpanView:
    """A message (an agent message dict, a session entry, or a plain string as a user message)
    as its tokens: coloured spans, token ids and the exact text on hover, whitespace visible;
    the header compares Pi's estimate, tiktoken and (assistant) the provider's ``output``.
    At most ``max_tokens`` tokens are drawn."""
    if max_tokens < 0:
        raise NotebookError(f"max_tokens must be 0 or more, got {max_tokens}")
    return TokenSpanView(_as_message(source), encoding, max_tokens)


# ---------------------------------------------------------------------------------------------
# comparisons


MESSAGE_COMPARISON_COLUMNS = (
    "session_id",
    "entry_id",
    "turn",
    "role",
    "estimate_tokens",
    "tiktoken_tokens",
    "usage_output",
    "usage_context",
    "estimate_minus_tiktoken",
)


def _path_messages(
    source: Any,
) -> tuple[str, list[tuple[SessionEntry, AgentMessage]], list[SessionEntry]]:
    """The session's id, ``(entry, message)`` for each context message on the active branch, and
    all its entries."""
    sm = load_session(source)
    path = list(sm.get_branch())
    pairs = [(e, m) for e in path for m in session_entry_to_context_messages(e)]
    return sm.get_session_id(), pairs, list(sm.get_entries())


def token_comparison_df(source: Any, *, encoding: str = DEFAULT_ENCODING) -> Any:
    """Per message of the active branch (root -> leaf, compaction summaries included): Pi's
    estimate, tiktoken, and for assistants the provider's ``output`` and context tokens
    (``calculateContextTokens``). ``turn`` counts user messages (0 before the first)."""
    session_id, pairs, _ = _path_messages(source)
    rows = []
    turn = 0
    for entry, message in pairs:
        role = message.get("role")
        if role == "user":
            turn += 1
        usage = message.get("usage") if role == "assistant" else None
        est = estimate_tokens(message)
        tik = count_message_tokens(message, encoding)
        rows.append(
            {
                "session_id": session_id,
                "entry_id": entry.get("id"),
                "turn": turn,
                "role": role,
                "estimate_tokens": est,
                "tiktoken_tokens": tik,
                "usage_output": usage.get("output") if isinstance(usage, Mapping) else None,
                "usage_context": calculate_context_tokens(cast("Usage", usage))
                if isinstance(usage, Mapping) and usage
                else None,
                "estimate_minus_tiktoken": est - tik,
            }
        )
    df = pd.DataFrame(rows, columns=list(MESSAGE_COMPARISON_COLUMNS))
    for col in ("usage_output", "usage_context"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    return df


class _TurnRow(TypedDict):
    """A row of :func:`turn_comparison_df` (``TURN_COMPARISON_COLUMNS``) while it is built;
    ``_last`` (the turn's last assistant message) is taken out before the frame is made."""

    session_id: str
    turn: int
    messages: int
    estimate_tokens: int
    tiktoken_tokens: int
    assistant_tiktoken_tokens: int
    usage_output: int
    last_entry_id: str | None
    _last: NotRequired[AgentMessage]
    context_estimate_tokens: NotRequired[int | None]
    context_tiktoken_tokens: NotRequired[int | None]
    context_usage_tokens: NotRequired[int | None]
    overhead_tokens: NotRequired[int | None]


TURN_COMPARISON_COLUMNS = (
    "session_id",
    "turn",
    "messages",
    "estimate_tokens",
    "tiktoken_tokens",
    "assistant_tiktoken_tokens",
    "usage_output",
    "last_entry_id",
    "context_estimate_tokens",
    "context_tiktoken_tokens",
    "context_usage_tokens",
    "overhead_tokens",
)


def turn_comparison_df(source: Any, *, encoding: str = DEFAULT_ENCODING) -> Any:
    """Per turn of the active branch (a user message and everything until the next one).

    Within the turn: Pi's estimate and tiktoken of its messages; tiktoken of what the assistant
    wrote against the provider's ``output`` for it. At the turn's last assistant: the context
    the model was sent, as Pi's per-message estimates summed, as tiktoken, and as the provider
    reported it (``calculateContextTokens``); ``overhead_tokens`` = reported - tiktoken (system
    prompt, tool schemas, chat framing: what no message carries).
    """
    session_id, pairs, entries = _path_messages(source)
    turns: dict[int, _TurnRow] = {}
    turn = 0
    for entry, message in pairs:
        role = message.get("role")
        if role == "user":
            turn += 1
        t = turns.setdefault(
            turn,
            {
                "session_id": session_id,
                "turn": turn,
                "messages": 0,
                "estimate_tokens": 0,
                "tiktoken_tokens": 0,
                "assistant_tiktoken_tokens": 0,
                "usage_output": 0,
                "last_entry_id": None,
            },
        )
        tik = count_message_tokens(message, encoding)
        t["messages"] += 1
        t["estimate_tokens"] += estimate_tokens(message)
        t["tiktoken_tokens"] += tik
        if role == "assistant":
            t["assistant_tiktoken_tokens"] += tik
            usage = message.get("usage")
            if isinstance(usage, Mapping) and isinstance(usage.get("output"), int):
                t["usage_output"] += usage["output"]
            t["last_entry_id"] = entry.get("id")
            t["_last"] = message
    rows = []
    for t in turns.values():
        last = t.pop("_last", None)
        context: Sequence[AgentMessage] = []
        if t["last_entry_id"] is not None:
            context = build_session_context(entries, t["last_entry_id"]).messages
        usage = last.get("usage") if last is not None else None
        reported = (
            calculate_context_tokens(cast("Usage", usage)) if isinstance(usage, Mapping) and usage else None
        )
        t["context_estimate_tokens"] = sum(estimate_tokens(m) for m in context) if context else None
        t["context_tiktoken_tokens"] = (
            sum(count_message_tokens(m, encoding) for m in context) if context else None
        )
        t["context_usage_tokens"] = reported
        t["overhead_tokens"] = (
            reported - t["context_tiktoken_tokens"]
            if reported is not None and t["context_tiktoken_tokens"] is not None
            else None
        )
        rows.append(t)
    df = pd.DataFrame(rows, columns=list(TURN_COMPARISON_COLUMNS))
    for col in (
        "context_estimate_tokens",
        "context_tiktoken_tokens",
        "context_usage_tokens",
        "overhead_tokens",
    ):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    return df
