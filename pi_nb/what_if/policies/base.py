"""A context policy as a value: what it decides at Pi's checkpoints and what the next request holds.

A policy sees the agent's messages at three places (Pi's names, :data:`pi_nb.what_if.CHECKPOINTS`):
``after_run`` (a run ended), ``pre_prompt`` (before a new prompt is added) and ``between_turns``
(after a tool-result batch, before the next request). There :meth:`ContextPolicy.checkpoint` may
*rewrite the kept history* (a compaction, a trim): the rewrite stays, later messages are appended
to it. Before every request :meth:`ContextPolicy.request` returns the messages actually sent,
which may differ from the kept history without changing it (masking, clearing, truncating tool
output: the history stays whole, each request shows a view of it).

Both get a :class:`PolicyContext`: the context window in force, a token count of messages
calibrated on the recording (``overhead`` is the system prompt and tools as the provider counted
them), and :meth:`PolicyContext.derived`, which hands out one stable copy of a rewritten message
(so two requests that show the same rewrite share the same object, which the cache model reads
as the same prefix).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pi_nb.compaction.decision import Checkpoint
from pi_nb.messages import AgentMessage
from pi_nb.tokens import estimate_tokens

__all__ = ["ContextPolicy", "PolicyContext", "Rewrite", "forget_estimates", "message_tokens"]


@dataclass(frozen=True)
class Rewrite:
    """A checkpoint's rewrite of the kept history.

    ``messages``: the new kept history. ``kind``: a short name (``"compaction"``, ``"trim"``).
    ``summary_input_tokens`` / ``summary_output_tokens``: the summary call it needed (0 and 0 when
    none: a trim calls no model); billed at the model's prices, with no cache read.
    ``tokens_before`` / ``tokens_after``: the calibrated context size around it.
    """

    messages: list[AgentMessage]
    kind: str
    tokens_before: int
    tokens_after: int
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0


_ESTIMATES: dict[int, tuple[AgentMessage, int]] = {}


def message_tokens(message: AgentMessage) -> int:
    """Pi's ``estimateTokens(message)``, remembered per message object."""
    key = id(message)
    hit = _ESTIMATES.get(key)
    if hit is not None and hit[0] is message:
        return hit[1]
    tokens = estimate_tokens(message)
    if len(_ESTIMATES) > 200_000:
        _ESTIMATES.clear()
    _ESTIMATES[key] = (message, tokens)
    return tokens


def forget_estimates() -> None:
    """Drop the remembered estimates (and with them the messages they keep alive)."""
    _ESTIMATES.clear()


@dataclass
class PolicyContext:
    """What a policy may read during a replay (one per replayed session and policy).

    ``context_window``: the window in force (tokens). ``overhead``: the recorded prompt tokens not
    in the messages' estimate (system prompt, tools, estimation error), from the latest recorded
    usage. ``summary_tokens``: the size of a summary when a policy writes one (the recording's
    mean summary, else 1,000). ``max_output_tokens``: the model's output cap (0: unknown).
    """

    context_window: int
    overhead: int = 0
    summary_tokens: int = 1000
    max_output_tokens: int = 0
    _memo: dict[tuple[int, str], tuple[AgentMessage, AgentMessage]] = field(default_factory=dict, repr=False)

    def tokens(self, messages: Sequence[AgentMessage]) -> int:
        """The calibrated prompt size of a request holding ``messages``."""
        return self.overhead + sum(message_tokens(m) for m in messages)

    def derived(
        self, original: AgentMessage, variant: str, make: Callable[[AgentMessage], AgentMessage]
    ) -> AgentMessage:
        """``make(original)``, built once per (message, variant) and then handed out again."""
        key = (id(original), variant)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is original:
            return hit[1]
        made = make(original)
        self._memo[key] = (original, made)
        return made


@runtime_checkable
class ContextPolicy(Protocol):
    """A context policy (see the module docstring). ``name`` labels it in tables and plots;
    :meth:`params` are its settings (a table row)."""

    name: str

    def params(self) -> Mapping[str, Any]: ...

    def checkpoint(
        self, checkpoint: Checkpoint, messages: Sequence[AgentMessage], ctx: PolicyContext
    ) -> Rewrite | None: ...

    def request(self, messages: Sequence[AgentMessage], ctx: PolicyContext) -> Sequence[AgentMessage]: ...
