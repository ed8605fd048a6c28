"""When to compact: Pi's one rule (``AgentSession._checkCompaction`` and the between-turns check).

:func:`decide` returns a :class:`CompactionDecision` (none, threshold, or overflow with or without
a retry; the rule that spoke; where the token count came from). It runs nothing and keeps no
state: the live session and the what-if replay both call it and keep only their side effects.

The checkpoints: ``after_run`` (a run ended; aborted answers are skipped), ``pre_prompt`` (before a
new prompt is sent; aborted answers count) and ``between_turns`` (after a tool-result batch, on the
estimate of the whole context). Two rules are pi_nb's own and are off unless asked for: the limit of
automatic compactions per prompt (``compactions_so_far``) and "compaction freed no room"
(``repeats_overflow``: the same tool call overflows again right after a compaction).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pi_nb.compaction.overflow import is_context_overflow, is_recoverable_length
from pi_nb.compaction.settings import CompactionSettings, should_compact
from pi_nb.errors import InvalidMessageError
from pi_nb.messages import AssistantMessage
from pi_nb.tokens import calculate_context_tokens

__all__ = [
    "OVERFLOW_RECOVERY_FAILED",
    "TRUNCATED_RECOVERY_FAILED",
    "Checkpoint",
    "CompactionDecision",
    "ContextCount",
    "ModelRef",
    "decide",
    "freed_no_room",
]

Checkpoint: TypeAlias = Literal["after_run", "pre_prompt", "between_turns"]
Action: TypeAlias = Literal["none", "threshold", "overflow"]
Why: TypeAlias = Literal[
    "disabled",  # compaction.enabled is false
    "aborted",  # after a run: the answer was aborted by the user
    "stale",  # the message is not newer than the latest compaction
    "stale_usage",  # the estimate rests on a usage older than the latest compaction
    "no_window",  # between turns: no model, or a window of 0
    "below_threshold",
    "over_threshold",  # -> threshold
    "overflow",  # the request overflowed the window -> overflow, retried
    "length",  # a length stop below the model's output limit -> overflow, retried
    "overflow_completed",  # a successful answer over the window -> overflow, not retried
    "recovery_failed",  # a second overflow/length stop before any success: give up
    "no_room",  # pi_nb: the same tool call overflowed again after compacting
]

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
TRUNCATED_RECOVERY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


@dataclass(frozen=True)
class ModelRef:
    """The model in force: who it is (to tell its own errors from another model's) and its sizes."""

    provider: str | None
    id: str | None
    context_window: int
    max_tokens: int = 0


@dataclass(frozen=True)
class ContextCount:
    """``estimateContextTokens`` of the agent state; ``anchor_stale``: its usage is from an
    assistant message not newer than the latest compaction."""

    tokens: int
    anchor_stale: bool = False


@dataclass(frozen=True)
class CompactionDecision:
    """What a checkpoint decided.

    ``action`` is what Pi's rule asks for; ``why`` says which rule spoke. ``tokens`` is the number
    compared with ``threshold`` (or the answer's own usage for an overflow; ``None`` when a rule
    stopped first) and ``tokens_source`` where it came from: the answer's ``"usage"`` or the
    ``"estimate"`` of the context. ``over_limit`` (pi_nb) says the prompt has used up its automatic
    compactions, so the action is not carried out.
    """

    checkpoint: Checkpoint
    action: Action
    why: Why
    will_retry: bool = False
    tokens: int | None = None
    tokens_source: Literal["usage", "estimate"] | None = None
    context_window: int = 0
    threshold: int = 0
    trigger: Literal["overflow", "length"] | None = None
    over_limit: bool = False

    @property
    def compacts(self) -> bool:
        """A compaction is to run now."""
        return self.action != "none" and not self.over_limit

    @property
    def error_message(self) -> str | None:
        """Pi's text for a failed second recovery (``recovery_failed``), else ``None``."""
        if self.why != "recovery_failed":
            return None
        return OVERFLOW_RECOVERY_FAILED if self.trigger == "overflow" else TRUNCATED_RECOVERY_FAILED


def _direct_tokens(message: AssistantMessage) -> int:
    usage = message.get("usage")
    return calculate_context_tokens(usage) if isinstance(usage, Mapping) and usage else 0


def decide(
    checkpoint: Checkpoint,
    message: AssistantMessage | None,
    settings: CompactionSettings,
    model: ModelRef | None,
    estimate: Callable[[], ContextCount],
    *,
    message_stale: bool = False,
    overflow_attempted: bool = False,
    repeats_overflow: bool = False,
    compactions_so_far: int | None = None,
) -> CompactionDecision:
    """Pi's decision at ``checkpoint`` on ``message`` (``None`` between turns). ``estimate`` is
    called only when a rule needs it; ``overflow_attempted`` is Pi's one-retry flag (set by an
    overflow retry, cleared by a user message or a successful answer)."""
    window = model.context_window if model is not None else 0
    threshold = window - settings.reserve_tokens

    def made(
        action: Action,
        why: Why,
        tokens: int | None = None,
        source: Literal["usage", "estimate"] | None = None,
        trigger: Literal["overflow", "length"] | None = None,
    ) -> CompactionDecision:
        over = action != "none" and (compactions_so_far or 0) >= settings.max_auto_compactions_per_prompt
        over = over and compactions_so_far is not None
        will_retry = action == "overflow" and why != "overflow_completed"
        return CompactionDecision(
            checkpoint, action, why, will_retry, tokens, source, window, threshold, trigger, over
        )

    if checkpoint == "between_turns" or message is None:
        count = estimate().tokens
        if not settings.enabled:
            return made("none", "disabled", count, "estimate")
        if window <= 0:
            return made("none", "no_window", count, "estimate")
        if should_compact(count, window, settings):
            return made("threshold", "over_threshold", count, "estimate")
        return made("none", "below_threshold", count, "estimate")
    if not settings.enabled:
        return made("none", "disabled")
    if checkpoint == "after_run" and message.get("stopReason") == "aborted":
        return made("none", "aborted")
    if message_stale:
        return made("none", "stale")
    same_model = (
        model is not None and message.get("provider") == model.provider and message.get("model") == model.id
    )
    overflow = same_model and is_context_overflow(message, window)
    length = same_model and model is not None and is_recoverable_length(message, model.max_tokens)
    if overflow or length:
        try:  # (reported only: Pi never reads this usage on this path)
            direct: int | None = _direct_tokens(message)
        except InvalidMessageError:
            direct = None
        trigger: Literal["overflow", "length"] = "overflow" if overflow else "length"
        if message.get("stopReason") == "stop":
            return made("overflow", "overflow_completed", direct, "usage", trigger)
        if overflow_attempted:
            return made("none", "recovery_failed", direct, "usage", trigger)
        if overflow and repeats_overflow:
            return made("none", "no_room", direct, "usage", trigger)
        return made("overflow", trigger, direct, "usage", trigger)
    used = _direct_tokens(message)
    source: Literal["usage", "estimate"] = "usage"
    if message.get("stopReason") == "error" or used == 0:
        counted = estimate()
        if counted.anchor_stale:
            return made("none", "stale_usage", counted.tokens, "estimate")
        used, source = counted.tokens, "estimate"
    if should_compact(used, window, settings):
        return made("threshold", "over_threshold", used, source)
    return made("none", "below_threshold", used, source)


def freed_no_room(decision: CompactionDecision, tokens_after: int | None) -> bool:
    """pi_nb: an overflow compaction to be retried left a context still too big for the window."""
    return decision.will_retry and tokens_after is not None and tokens_after >= decision.context_window
