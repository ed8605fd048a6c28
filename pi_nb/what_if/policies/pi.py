"""Pi 0.85.0's own policy as a value: :class:`PiPolicy` (the reference implementation).

Its decision is :func:`pi_nb.compaction.decision.decide` and its cut and summary input are
:func:`pi_nb.compaction.prepare_compaction`: the same two functions the live ``AgentSession`` and
:func:`pi_nb.what_if.replay` run. Replaying a session with ``PiPolicy`` goes through
:func:`pi_nb.what_if.replay` itself (so its decisions are exactly the replay's); the protocol
methods here run the same rule on a bare message list (each message wrapped as a session entry).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pi_nb.compaction.decision import Checkpoint, ContextCount, ModelRef, decide
from pi_nb.compaction.preparation import prepare_compaction
from pi_nb.compaction.settings import DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, CompactionSettings
from pi_nb.messages import AgentMessage, AssistantMessage
from pi_nb.session.types import SessionEntry
from pi_nb.tokens import estimate_context_tokens
from pi_nb.what_if.policies.base import PolicyContext, Rewrite

__all__ = ["PiPolicy"]


@dataclass(frozen=True)
class PiPolicy:
    """Pi's automatic compaction: ``reserve_tokens``, ``keep_recent_tokens``, ``enabled`` (Pi's
    compaction settings), ``rules`` (the Pi version whose checkpoints apply, see
    :func:`pi_nb.what_if.pi_rules`), ``summary_tokens`` (placeholder summary size; ``None``: the
    recording's mean), ``max_tokens`` (the model's output cap for the length rule) and ``manual``
    (``"apply"``: make the recording's manual ``/compact`` too, see :func:`pi_nb.what_if.replay`)."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    enabled: bool = True
    rules: str = "0.85.0"
    summary_tokens: int | None = None
    max_tokens: int | None = None
    manual: Literal["skip", "apply"] = "skip"
    name: str = "pi"

    @property
    def settings(self) -> CompactionSettings:
        return CompactionSettings(
            enabled=self.enabled,
            reserve_tokens=self.reserve_tokens,
            keep_recent_tokens=self.keep_recent_tokens,
        )

    def params(self) -> Mapping[str, Any]:
        return {
            "reserve_tokens": self.reserve_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
            "enabled": self.enabled,
            "rules": self.rules,
        }

    def replay_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`pi_nb.what_if.replay` this policy stands for."""
        return {
            "reserve_tokens": self.reserve_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
            "enabled": self.enabled,
            "rules": self.rules,
            "summary_tokens": self.summary_tokens,
            "max_tokens": self.max_tokens,
            "manual": self.manual,
        }

    def checkpoint(
        self, checkpoint: Checkpoint, messages: Sequence[AgentMessage], ctx: PolicyContext
    ) -> Rewrite | None:
        """Pi's rule on a bare message list: :func:`decide`, then :func:`prepare_compaction` on the
        messages wrapped as entries; the kept history is then a summary message and the kept part."""
        last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        if checkpoint != "between_turns" and last is None:
            return None
        model = ModelRef(
            cast(Mapping[str, Any], last or {}).get("provider"),
            cast(Mapping[str, Any], last or {}).get("model"),
            ctx.context_window,
            self.max_tokens or 0,
        )
        decision = decide(
            checkpoint,
            cast(AssistantMessage, last) if checkpoint != "between_turns" else None,
            self.settings,
            model,
            lambda: ContextCount(estimate_context_tokens(messages).tokens),
        )
        if not decision.compacts:
            return None
        entries = [
            cast(
                SessionEntry,
                {
                    "type": "message",
                    "id": f"m{i}",
                    "parentId": f"m{i - 1}" if i else None,
                    "timestamp": "",
                    "message": m,
                },
            )
            for i, m in enumerate(messages)
        ]
        preparation = prepare_compaction(entries, self.settings)
        if preparation is None:
            return None
        first = int(preparation.first_kept_entry_id[1:])
        summary_tokens = self.summary_tokens if self.summary_tokens is not None else ctx.summary_tokens
        summary_tokens = min(summary_tokens, math.floor(0.8 * self.reserve_tokens))
        summary = cast(
            AgentMessage,
            {
                "role": "compactionSummary",
                "summary": "x" * (summary_tokens * 4),
                "tokensBefore": preparation.tokens_before,
                "timestamp": 0,
            },
        )
        kept = [summary, *messages[first:]]
        summarized = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        before = ctx.tokens(messages)
        return Rewrite(
            kept,
            "compaction",
            before,
            ctx.tokens(kept),
            ctx.tokens(summarized) - ctx.overhead,
            summary_tokens,
        )

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]:
        return messages
