"""Context policies of other agents, as values (each one's source is in its docstring).

All of them work on Pi's messages (``user``, ``assistant`` with ``toolCall`` blocks, ``toolResult``
and Pi's custom roles). A *step* is one assistant message with the tool results that answer it;
a *turn* (for trimming) starts at a ``user`` message. Token counts are
:meth:`PolicyContext.tokens` (Pi's estimate, calibrated on the recording's usage).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from pi_nb.compaction.decision import Checkpoint
from pi_nb.messages import AgentMessage
from pi_nb.what_if.policies.base import PolicyContext, Rewrite, message_tokens

__all__ = [
    "ClaudeCodeAutoCompact",
    "ClearToolUses",
    "CodexTruncation",
    "InspectTrim",
    "KeepAll",
    "ObservationMasking",
    "TrimLastTokens",
    "TrimLastTurns",
]

MASK_PLACEHOLDER = "Old environment output: ({lines} lines omitted)"
CLEARED_PLACEHOLDER = "[cleared to save context]"


def _text_of(message: AgentMessage) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def _with_text(message: AgentMessage, text: str) -> AgentMessage:
    return cast(AgentMessage, {**message, "content": [{"type": "text", "text": text}]})


def _step_of(messages: Sequence[AgentMessage]) -> list[int]:
    """For each message, the index of the step (assistant message) it belongs to (-1 before any)."""
    out: list[int] = []
    step = -1
    for m in messages:
        if m.get("role") == "assistant":
            step += 1
        out.append(step)
    return out


class _Stateless:
    """A policy that never rewrites the kept history at a checkpoint."""

    name: str

    def params(self) -> Mapping[str, Any]:
        return asdict(cast(Any, self))

    def checkpoint(
        self, checkpoint: Checkpoint, messages: Sequence[AgentMessage], ctx: PolicyContext
    ) -> Rewrite | None:
        return None

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        return messages


@dataclass(frozen=True)
class KeepAll(_Stateless):
    """No context management at all: every request sends the whole history (the baseline)."""

    name: str = "keep_all"


@dataclass(frozen=True)
class ObservationMasking(_Stateless):
    """Observation masking: tool outputs older than the last ``keep_turns`` steps are replaced by
    a placeholder; the agent's own messages stay.

    Source: SWE-agent's ``LastNObservations`` history processor (placeholder
    ``"Old environment output: (N lines omitted)"``), studied in Lindenbauer et al., "The
    Complexity Trap: Simple Observation Masking Is as Efficient as LLM Summarization for Agent
    Context Management" (arXiv 2508.21433), which keeps the last M = 10 turns.
    """

    keep_turns: int = 10
    name: str = "observation_masking"

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        steps = _step_of(messages)
        last = steps[-1] if steps else -1
        out: list[AgentMessage] = []
        for m, s in zip(messages, steps, strict=True):
            if m.get("role") == "toolResult" and s <= last - self.keep_turns:
                out.append(ctx.derived(m, "mask", _mask))
            else:
                out.append(m)
        return out


def _mask(message: AgentMessage) -> AgentMessage:
    lines = len(_text_of(message).splitlines())
    return _with_text(message, MASK_PLACEHOLDER.format(lines=lines))


def _turn_starts(messages: Sequence[AgentMessage]) -> list[int]:
    return [i for i, m in enumerate(messages) if m.get("role") == "user"]


@dataclass(frozen=True)
class TrimLastTurns(_Stateless):
    """Send only the last ``turns`` turns (a turn starts at a user message).

    Source: the OpenAI Agents SDK session memory's trimming (``SessionABC.get_items(limit=...)``
    and the cookbook's ``TrimmingSession``, which keeps the last N user turns with everything
    that followed each).
    """

    turns: int = 8
    name: str = "trim_last_turns"

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        starts = _turn_starts(messages)
        if len(starts) <= self.turns or self.turns <= 0:
            return messages
        return messages[starts[len(starts) - self.turns] :]


@dataclass(frozen=True)
class TrimLastTokens(_Stateless):
    """Send the longest suffix of whole messages whose estimate fits in ``tokens`` (it never starts
    on a tool result: a result must follow its call). Source: the OpenAI Agents SDK's token-based
    session trimming (keep the most recent items within a token budget)."""

    tokens: int = 50_000
    name: str = "trim_last_tokens"

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        total = 0
        start = len(messages)
        for i in range(len(messages) - 1, -1, -1):
            total += message_tokens(messages[i])
            if total > self.tokens and start < len(messages):
                break
            start = i
        while start < len(messages) - 1 and messages[start].get("role") == "toolResult":
            start += 1
        return messages[start:]


@dataclass(frozen=True)
class InspectTrim:
    """Inspect AI's ``CompactionTrim``: when the prompt reaches ``threshold`` of the window, the
    history is trimmed and stays trimmed.

    Source: ``inspect_ai.model._compaction.trim.CompactionTrim`` (``threshold=0.9``,
    ``preserve=0.8``) and ``inspect_ai.model._trim.trim_messages``: the first user message (the
    sample's input) is kept; of the rest, the first ``int(n * (1 - preserve))`` are dropped; tool
    results whose call was dropped go, tool calls whose result was dropped are removed from their
    assistant message, and a trailing assistant message is dropped.
    """

    threshold: float = 0.9
    preserve: float = 0.8
    name: str = "inspect_trim"

    def params(self) -> Mapping[str, Any]:
        return asdict(self)

    def checkpoint(
        self, checkpoint: Checkpoint, messages: Sequence[AgentMessage], ctx: PolicyContext
    ) -> Rewrite | None:
        if checkpoint == "after_run" or not messages:
            return None
        limit = self.threshold * ctx.context_window if self.threshold <= 1 else self.threshold
        before = ctx.tokens(messages)
        if before < limit:
            return None
        trimmed = inspect_trim_messages(messages, self.preserve)
        return Rewrite(trimmed, "trim", before, ctx.tokens(trimmed))

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        return messages


def inspect_trim_messages(messages: Sequence[AgentMessage], preserve: float) -> list[AgentMessage]:
    """``trim_messages`` of Inspect AI on Pi's messages (see :class:`InspectTrim`)."""
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    head = [messages[first_user]] if first_user is not None else []
    conversation = [m for i, m in enumerate(messages) if i != first_user]
    start = int(len(conversation) * (1 - preserve))
    kept: list[AgentMessage] = []
    active: set[str] = set()
    for m in conversation[start:]:
        role = m.get("role")
        if role == "assistant":
            active = {str(b.get("id")) for b in _blocks(m) if b.get("type") == "toolCall"}
            kept.append(m)
        elif role == "toolResult":
            if str(m.get("toolCallId")) in active:
                kept.append(m)
        else:
            active = set()
            kept.append(m)
    answered = {str(m.get("toolCallId")) for m in kept if m.get("role") == "toolResult"}
    out: list[AgentMessage] = []
    for m in kept:
        if m.get("role") == "assistant":
            calls = [b for b in _blocks(m) if b.get("type") == "toolCall"]
            if any(str(b.get("id")) not in answered for b in calls):
                content = [
                    b for b in _blocks(m) if b.get("type") != "toolCall" or str(b.get("id")) in answered
                ]
                m = cast(AgentMessage, {**m, "content": content})
        out.append(m)
    if out and out[-1].get("role") == "assistant":
        out.pop()
    return head + out


def _blocks(message: AgentMessage) -> list[Mapping[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


@dataclass(frozen=True)
class ClaudeCodeAutoCompact:
    """Claude Code's auto-compact: when the context passes ``window - buffer`` the whole history is
    replaced by one summary (a model call), and the conversation goes on from there.

    Source: Claude Code's ``/context`` view reserves an "autocompact buffer" of 45.0k tokens
    (22.5%) of a 200k window, and the warning threshold sits at window - 13k
    (``AUTOCOMPACT_BUFFER_TOKENS = 13_000`` in its bundle, with up to 20k reserved for the summary's
    output). ``buffer_fraction`` scales the buffer with the window (0.225: 45k of 200k).
    """

    buffer_fraction: float = 0.225
    name: str = "claude_code_autocompact"

    def params(self) -> Mapping[str, Any]:
        return asdict(self)

    def checkpoint(
        self, checkpoint: Checkpoint, messages: Sequence[AgentMessage], ctx: PolicyContext
    ) -> Rewrite | None:
        if not messages:
            return None
        trigger = ctx.context_window - math.floor(self.buffer_fraction * ctx.context_window)
        before = ctx.tokens(messages)
        if before < trigger:
            return None
        # the current run's tool results must stay answered: keep an unfinished step whole
        tail: list[AgentMessage] = []
        if checkpoint == "between_turns":
            last_assistant = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
            tail = list(messages[last_assistant:])
        summary = _summary_message(ctx.summary_tokens, messages[-1])
        kept = [summary, *tail]
        return Rewrite(kept, "compaction", before, ctx.tokens(kept), before, ctx.summary_tokens)

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        return messages


def _summary_message(tokens: int, last: AgentMessage) -> AgentMessage:
    text = "This session is being continued from a previous conversation. Summary: " + "x" * max(
        0, tokens * 4 - 72
    )
    return cast(
        AgentMessage,
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": last.get("timestamp", 0)},
    )


@dataclass(frozen=True)
class CodexTruncation(_Stateless):
    """Codex CLI's head+tail truncation of tool output: an output over ``max_bytes`` or
    ``max_lines`` keeps its first and last ``max_lines // 2`` lines (and at most ``max_bytes // 2``
    bytes each side) around an ``[... omitted N of M lines ...]`` marker.

    Source: codex-rs ``MODEL_FORMAT_MAX_BYTES = 10 * 1024``, ``MODEL_FORMAT_MAX_LINES = 256``,
    ``MODEL_FORMAT_HEAD_LINES = 128`` (``format_exec_output`` / ``truncate_middle``).
    """

    max_bytes: int = 10 * 1024
    max_lines: int = 256
    name: str = "codex_truncation"

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        return [
            ctx.derived(m, f"codex{self.max_bytes}/{self.max_lines}", self._truncate)
            if m.get("role") == "toolResult"
            else m
            for m in messages
        ]

    def _truncate(self, message: AgentMessage) -> AgentMessage:
        text = _text_of(message)
        return _with_text(message, codex_head_tail(text, self.max_bytes, self.max_lines))


def codex_head_tail(text: str, max_bytes: int, max_lines: int) -> str:
    """The head+tail form of ``text`` (see :class:`CodexTruncation`); ``text`` when it fits."""
    lines = text.split("\n")
    if len(text.encode()) <= max_bytes and len(lines) <= max_lines:
        return text
    half_lines = max(1, max_lines // 2)
    head = "\n".join(lines[:half_lines])
    tail = "\n".join(lines[-half_lines:]) if len(lines) > half_lines else ""
    half_bytes = max_bytes // 2
    head = head.encode()[:half_bytes].decode(errors="ignore")
    tail_b = tail.encode()
    tail = tail_b[max(0, len(tail_b) - half_bytes) :].decode(errors="ignore")
    omitted = max(0, len(lines) - 2 * half_lines)
    return f"{head}\n[... omitted {omitted} of {len(lines)} lines ...]\n\n{tail}"


@dataclass(frozen=True)
class ClearToolUses(_Stateless):
    """Anthropic's context editing ``clear_tool_uses_20250919``: when the prompt passes ``trigger``
    input tokens, the oldest tool results are replaced by a placeholder, keeping the last ``keep``
    tool uses; nothing is cleared unless it frees at least ``clear_at_least`` tokens.

    Source: Anthropic's context-editing documentation (defaults: trigger 100,000 input tokens,
    keep 3 tool uses, ``clear_at_least`` unset). The server applies it to each request, so the
    client's history stays whole.
    """

    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    name: str = "clear_tool_uses"

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        if ctx.tokens(messages) <= self.trigger:
            return messages
        results = [i for i, m in enumerate(messages) if m.get("role") == "toolResult"]
        clear = set(results[: max(0, len(results) - self.keep)])
        if not clear:
            return messages
        out = [ctx.derived(m, "clear", _clear) if i in clear else m for i, m in enumerate(messages)]
        freed = sum(message_tokens(messages[i]) - message_tokens(out[i]) for i in clear)
        if freed < self.clear_at_least:
            return messages
        return out


def _clear(message: AgentMessage) -> AgentMessage:
    return _with_text(message, CLEARED_PLACEHOLDER)
