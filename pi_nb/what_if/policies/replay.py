"""Replaying a recorded session under any context policy: the requests each policy would send.

:func:`replay_policy` walks the recorded active branch in order. The conversation is what was
recorded (the same user prompts, the same answers, the same tool results); what changes is the
context each request carries. For every recorded assistant message there is one
:class:`PolicyRequest`: the messages the policy sends for it, their calibrated size, the answer's
output tokens and time (for the cost and cache model, :mod:`pi_nb.what_if.policies.cost`).

* :class:`~pi_nb.what_if.policies.pi.PiPolicy`: the requests follow the simulated path of
  :func:`pi_nb.what_if.replay` (its compactions, its summaries), which is kept as ``pi``.
* ``"recorded"`` (:data:`RECORDED`): the requests the recording really sent (Pi's context of the
  recorded path, its own compactions included): the calibration baseline.
* any other :class:`~pi_nb.what_if.policies.base.ContextPolicy`: its checkpoints run where Pi's would
  (``between_turns`` before an answer that follows tool results, ``after_run`` after an answer
  with no tool call, ``pre_prompt`` before a user prompt), and its request view before every
  answer.

**Sizes.** A request's ``tokens`` is ``overhead + Σ estimateTokens(message)``, where ``overhead``
is the recorded prompt size of the same answer (``input + cacheRead + cacheWrite``) minus the
estimate of the messages the recording sent: the system prompt and tools as the provider counted
them, plus the estimate's error on that request. For the recorded policy the size is therefore
the recorded one exactly. Assistant messages that ended in an error or were aborted are not sent
(pi-ai's ``transformMessages`` drops them), so they are left out of every request.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

from pi_nb.compaction.decision import Checkpoint
from pi_nb.errors import ReplayError
from pi_nb.messages import AgentMessage
from pi_nb.session.types import SessionEntry
from pi_nb.what_if.policies.base import ContextPolicy, PolicyContext, message_tokens
from pi_nb.what_if.policies.pi import PiPolicy

if TYPE_CHECKING:
    from pi_nb.what_if import ReplayResult, SessionInput, WindowSpec

__all__ = ["RECORDED", "PolicyEvent", "PolicyReplay", "PolicyRequest", "replay_policy"]

RECORDED: Final = "recorded"
"""The policy name of the recording itself (its real requests)."""


@dataclass(frozen=True)
class PolicyRequest:
    """One request a policy sends: for the recorded answer ``entry_id``.

    ``tokens``: the calibrated prompt size; ``recorded_tokens``: what the recording's usage says
    the real request held (``None`` without a usage); ``output_tokens``: the answer's recorded
    output; ``time_ms``: the answer's timestamp; ``messages``: what was sent (left out of repr).
    ``overhead``: the calibrated system prompt and tools part of ``tokens``.
    """

    index: int
    entry_id: str
    provider: str | None
    model: str | None
    api: str | None
    time_ms: float | None
    tokens: int
    overhead: int
    recorded_tokens: int | None
    output_tokens: int
    recorded_usage: Mapping[str, Any] | None = field(repr=False)
    messages: tuple[AgentMessage, ...] = field(repr=False)
    stop_reason: str | None = None

    @property
    def billed(self) -> bool:
        """The provider billed this request: not an error answer without any usage (a request
        refused for overflowing the window costs nothing)."""
        return not (self.stop_reason in ("error", "aborted") and self.recorded_tokens is None)


@dataclass(frozen=True)
class PolicyEvent:
    """A rewrite of the kept history (a compaction, a trim) before request ``before_request``."""

    checkpoint: Checkpoint
    before_request: int
    kind: str
    tokens_before: int
    tokens_after: int
    summary_input_tokens: int
    summary_output_tokens: int
    provider: str | None
    model: str | None


@dataclass(frozen=True)
class PolicyReplay:
    """The requests and rewrites of one policy over one session (:func:`replay_policy`)."""

    policy: str
    params: Mapping[str, Any]
    session_id: str | None
    session_file: str | None
    context_window: int
    requests: tuple[PolicyRequest, ...]
    events: tuple[PolicyEvent, ...]
    pi: ReplayResult | None = field(default=None, repr=False)

    @property
    def peak_tokens(self) -> int:
        return max((r.tokens for r in self.requests), default=0)

    @property
    def total_prompt_tokens(self) -> int:
        return sum(r.tokens for r in self.requests)

    def outcome(self) -> dict[str, Any]:
        """One table row: the policy, its settings and its numbers."""
        return {
            "policy": self.policy,
            **{f"param_{k}": v for k, v in self.params.items()},
            "session_id": self.session_id,
            "requests": len(self.requests),
            "rewrites": len(self.events),
            "compactions": sum(1 for e in self.events if e.kind == "compaction"),
            "peak_tokens": self.peak_tokens,
            "prompt_tokens": self.total_prompt_tokens,
            "over_window": sum(1 for r in self.requests if r.tokens > self.context_window),
            "summary_input_tokens": sum(e.summary_input_tokens for e in self.events),
            "summary_output_tokens": sum(e.summary_output_tokens for e in self.events),
        }


# ---------------------------------------------------------------------------------------------
# the recording's own requests, and those along any path (Pi's simulated one)
# ---------------------------------------------------------------------------------------------


def _sent(message: AgentMessage) -> bool:
    return not (message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted"))


def _prompt_tokens(usage: object) -> int | None:
    if not isinstance(usage, Mapping) or not usage:
        return None
    total = sum(int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
    return total if total > 0 else None


def _path_requests(path: Sequence[SessionEntry]) -> list[tuple[SessionEntry, list[AgentMessage]]]:
    """For every assistant message entry of ``path``: the messages sent before it (Pi's
    ``buildSessionContext`` of the path up to there, failed answers left out)."""
    from pi_nb.what_if import _context_items, _entry_messages

    out: list[tuple[SessionEntry, list[AgentMessage]]] = []
    context: list[AgentMessage] = []
    walked: list[SessionEntry] = []
    for entry in path:
        walked.append(entry)
        if entry.get("type") == "compaction":
            n = len(walked)
            context = [m for m, _, _ in _context_items(walked, list(range(n)), [None] * n)]
            continue
        messages = _entry_messages(entry)
        if entry.get("type") == "message" and messages and messages[0].get("role") == "assistant":
            out.append((entry, [m for m in context if _sent(m)]))
        context.extend(messages)
    return out


def _request(
    index: int,
    entry: SessionEntry,
    messages: Sequence[AgentMessage],
    overhead: int,
) -> PolicyRequest:
    message = cast(Mapping[str, Any], entry.get("message") or {})
    usage = message.get("usage")
    ts = message.get("timestamp")
    estimate = sum(message_tokens(m) for m in messages)
    return PolicyRequest(
        index=index,
        entry_id=str(entry.get("id")),
        provider=message.get("provider"),
        model=message.get("model"),
        api=message.get("api"),
        time_ms=float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else None,
        tokens=max(0, overhead + estimate),
        overhead=overhead,
        recorded_tokens=_prompt_tokens(usage),
        output_tokens=int(usage.get("output") or 0) if isinstance(usage, Mapping) else 0,
        recorded_usage=usage if isinstance(usage, Mapping) else None,
        messages=tuple(messages),
        stop_reason=message.get("stopReason"),
    )


def _overheads(recorded: list[tuple[SessionEntry, list[AgentMessage]]]) -> dict[str, int]:
    """Per recorded answer: its recorded prompt size minus the estimate of what it was sent
    (carried forward over answers without a usage)."""
    out: dict[str, int] = {}
    last = 0
    for entry, messages in recorded:
        message = cast(Mapping[str, Any], entry.get("message") or {})
        prompt = _prompt_tokens(message.get("usage"))
        if prompt is not None:
            last = prompt - sum(message_tokens(m) for m in messages)
        out[str(entry.get("id"))] = last
    return out


def _summary_tokens(path: Sequence[SessionEntry]) -> int:
    sizes = [math.ceil(len(str(e.get("summary"))) / 4) for e in path if e.get("type") == "compaction"]
    return round(sum(sizes) / len(sizes)) if sizes else 1000


# ---------------------------------------------------------------------------------------------
# the walk
# ---------------------------------------------------------------------------------------------


def replay_policy(
    session: SessionInput,
    policy: ContextPolicy | str,
    *,
    context_window: WindowSpec,
    leaf_id: str | None = None,
    loaded: tuple[list[SessionEntry], str | None, str | None] | None = None,
) -> PolicyReplay:
    """The requests ``policy`` would send over the recorded ``session`` (see the module docstring).

    ``policy``: a :class:`~pi_nb.what_if.policies.base.ContextPolicy` (``PiPolicy(...)`` included) or
    ``"recorded"``. ``context_window``: as for :func:`pi_nb.what_if.replay` (one number, a mapping
    by model, or a callable). ``loaded``: the branch already read (entries, session id, file).
    No model is called.
    """
    from pi_nb.what_if import _load, _window_for, replay

    if loaded is None:
        path, session_id, session_file, _header = _load(session, leaf_id)
    else:
        path, session_id, session_file = loaded
    recorded = _path_requests(path)
    overheads = _overheads(recorded)
    first_window = _window_for(
        context_window, next((cast(Any, e) for e in path if e.get("type") == "model_change"), None)
    )

    def build(pairs: Sequence[tuple[SessionEntry, Sequence[AgentMessage]]]) -> tuple[PolicyRequest, ...]:
        return tuple(
            _request(i, entry, msgs, overheads.get(str(entry.get("id")), 0))
            for i, (entry, msgs) in enumerate(pairs)
        )

    if isinstance(policy, str):
        if policy != RECORDED:
            raise ReplayError(f"a policy must be a ContextPolicy or 'recorded', got {policy!r}")
        return PolicyReplay(RECORDED, {}, session_id, session_file, first_window, build(recorded), ())
    if isinstance(policy, PiPolicy):
        result = replay(path, context_window=context_window, **policy.replay_kwargs())
        result = dataclasses.replace(result, session_id=session_id, session_file=session_file)
        pairs = _path_requests(result.entries)
        # the simulated path may carry rebased usages: the recorded ones are the recording's
        own = {r.entry_id: r for r in build(recorded)}
        requests = tuple(
            dataclasses.replace(
                r,
                recorded_usage=own[r.entry_id].recorded_usage,
                recorded_tokens=own[r.entry_id].recorded_tokens,
                output_tokens=own[r.entry_id].output_tokens,
            )
            if r.entry_id in own
            else r
            for r in build(pairs)
        )
        by_id = {r.entry_id: r.index for r in requests}
        events = []
        for c in result.compactions:
            after = next(
                (by_id[str(e.get("id"))] for e in result.entries[c.position :] if str(e.get("id")) in by_id),
                len(requests),
            )
            ref = requests[min(after, len(requests) - 1)] if requests else None
            events.append(
                PolicyEvent(
                    c.checkpoint,
                    after,
                    "compaction",
                    c.tokens_before,
                    c.tokens_after,
                    c.tokens_summarized,
                    math.ceil(c.summary_chars / 4),
                    ref.provider if ref else None,
                    ref.model if ref else None,
                )
            )
        return PolicyReplay(
            policy.name,
            dict(policy.params()),
            session_id,
            session_file,
            first_window,
            requests,
            tuple(events),
            result,
        )
    if not isinstance(policy, ContextPolicy):
        raise ReplayError(f"a policy must be a ContextPolicy or 'recorded', got {type(policy).__name__}")
    return _walk(path, policy, context_window, overheads, session_id, session_file, first_window)


def _walk(
    path: Sequence[SessionEntry],
    policy: ContextPolicy,
    window_spec: WindowSpec,
    overheads: Mapping[str, int],
    session_id: str | None,
    session_file: str | None,
    first_window: int,
) -> PolicyReplay:
    from pi_nb.what_if import _ends_run, _entry_messages, _window_for

    ctx = PolicyContext(context_window=first_window, summary_tokens=_summary_tokens(path))
    kept: list[AgentMessage] = []
    requests: list[PolicyRequest] = []
    events: list[PolicyEvent] = []
    model_change: Any = None
    last_role: str | None = None
    upcoming = [
        str(e.get("id"))
        for e in path
        if e.get("type") == "message"
        and _entry_messages(e)
        and _entry_messages(e)[0].get("role") == "assistant"
    ]
    provider: str | None = None
    model: str | None = None

    def check(checkpoint: Checkpoint) -> None:
        nonlocal kept
        rewrite = policy.checkpoint(checkpoint, kept, ctx)
        if rewrite is not None:
            kept = list(rewrite.messages)
            events.append(
                PolicyEvent(
                    checkpoint,
                    len(requests),
                    rewrite.kind,
                    rewrite.tokens_before,
                    rewrite.tokens_after,
                    rewrite.summary_input_tokens,
                    rewrite.summary_output_tokens,
                    provider,
                    model,
                )
            )

    for entry in path:
        kind = entry.get("type")
        if kind == "compaction":
            continue  # the recorded policy's, not this one's
        if kind == "model_change":
            model_change = entry
            ctx.context_window = _window_for(window_spec, model_change)
        messages = _entry_messages(entry)
        if not messages:
            continue
        role = messages[0].get("role")
        n = len(requests)
        if n < len(upcoming):
            ctx.overhead = overheads.get(upcoming[n], ctx.overhead)
        if role == "assistant" and kind == "message":
            message = messages[0]
            provider, model = (
                cast("str | None", message.get("provider")),
                cast("str | None", message.get("model")),
            )
            if last_role == "toolResult":
                check("between_turns")
            sent = [m for m in policy.request(kept, ctx) if _sent(m)]
            requests.append(_request(n, entry, sent, ctx.overhead))
            kept.extend(messages)
            if _ends_run(message) and message.get("stopReason") != "aborted":
                if n + 1 < len(upcoming):
                    ctx.overhead = overheads.get(upcoming[n + 1], ctx.overhead)
                check("after_run")
        else:
            if (
                role == "user"
                and last_role not in (None, "toolResult")
                and any(m.get("role") == "assistant" for m in kept)
            ):
                check("pre_prompt")
            kept.extend(messages)
        last_role = str(role)
    return PolicyReplay(
        policy.name,
        dict(policy.params()),
        session_id,
        session_file,
        first_window,
        tuple(requests),
        tuple(events),
    )
