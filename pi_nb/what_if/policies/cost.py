"""What a policy's requests cost as the provider bills them: prices, prefix caching, summaries.

:func:`policy_cost` prices every :class:`~pi_nb.what_if.policies.replay.PolicyRequest` of a
:class:`~pi_nb.what_if.policies.replay.PolicyReplay` with the catalog's prices
(:func:`pi_nb.providers.catalog.calculate_cost`: input, output, cache read, cache write with
Anthropic's 1-hour rate, price tiers), after splitting its prompt into uncached input, cache
read and cache write with a cache model:

* ``"anthropic"``: explicit breakpoints where pi-ai puts ``cache_control`` (the system prompt,
  the last tool, the last user message): a request reads the longest prefix an earlier request
  wrote at one of its breakpoints (within the TTL, which a read renews) and writes the prefix up
  to its own last user message (tool results are user messages on the wire). Prefixes under
  1,024 tokens are not cached.
* ``"openai"``: automatic prefix caching: the longest prefix shared with an earlier request
  within the TTL is read, rounded down to 128 tokens, from 1,024 tokens on; nothing is billed
  for writing.
* ``"none"``: everything is input.
* ``"auto"`` (default): the recording is the calibration: a session whose usages show no cache
  read or write at all gets ``"none"``; otherwise the provider's model (Anthropic's API for
  ``anthropic-messages`` and Bedrock's Claude, the automatic one for the others).

A prefix is a run of the same message objects (the replay hands out one object per rewritten
message, so a masked message shows the same prefix twice); a compaction, a trim or a newly
masked or cleared message therefore changes the prefix from the first changed message on, and
the cache is read only up to there. The TTL is 5 minutes, or 1 hour when the recording wrote
1-hour cache entries (``cacheWrite1h``), measured between the answers' timestamps. Anthropic's
shortest cacheable prompt is 1,024 tokens, 4,096 for Opus 4.5/4.6 and Haiku 4.5.

**Calibration.** A real provider misses now and then where the prefix model says hit (an evicted
entry, an agent restarted with a new date in its system prompt). :func:`calibrate_miss_rate`
measures that on the recording (its recorded cache reads against the model's, for the recorded
requests); ``policy_cost(..., miss_rate=...)`` then bills that share of every modelled read as a
write (or input), which makes the recorded policy's reads match the recording's in total.

Summary calls (a compaction's model call) are billed at the same model's prices, all input,
plus the summarisation prompt.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pi_nb.compaction.prompts import SUMMARIZATION_PROMPT
from pi_nb.errors import ReplayError
from pi_nb.providers.catalog import ModelCost, ModelSpec, calculate_cost, find_model
from pi_nb.what_if.policies.replay import PolicyReplay, PolicyRequest

__all__ = [
    "CacheModel",
    "PolicyCost",
    "RequestCost",
    "calibrate_miss_rate",
    "policy_cost",
    "recorded_cost",
]

CacheModel: TypeAlias = Literal["auto", "anthropic", "openai", "none"]

FIVE_MINUTES_MS = 5 * 60 * 1000
ONE_HOUR_MS = 60 * 60 * 1000
MIN_CACHEABLE = 1024
MIN_CACHEABLE_4096 = ("claude-opus-4-5", "claude-opus-4-6", "claude-haiku-4-5")
"""Anthropic models whose shortest cacheable prompt is 4,096 tokens (1,024 for the others)."""
OPENAI_INCREMENT = 128
SUMMARY_PROMPT_TOKENS = math.ceil(len(SUMMARIZATION_PROMPT) / 4)
"""The summarisation prompt's own estimated tokens, added to a summary call's input."""


@dataclass(frozen=True)
class RequestCost:
    """One request's modelled bill: token split, dollars, and the recording's own bill."""

    index: int
    entry_id: str
    input: int
    cache_read: int
    cache_write: int
    cache_write_1h: int
    output: int
    cost: float
    recorded_cost: float | None
    recorded_cache_read: int | None


@dataclass(frozen=True)
class PolicyCost:
    """:func:`policy_cost` of one policy over one session (dollars)."""

    policy: str
    params: Mapping[str, Any]
    session_id: str | None
    cache_model: str
    requests: tuple[RequestCost, ...] = field(repr=False)
    requests_cost: float
    summaries_cost: float
    unpriced_requests: int

    @property
    def total(self) -> float:
        return self.requests_cost + self.summaries_cost

    @property
    def recorded_cost(self) -> float:
        return sum(r.recorded_cost or 0.0 for r in self.requests)

    @property
    def cache_read_tokens(self) -> int:
        return sum(r.cache_read for r in self.requests)

    def row(self) -> dict[str, Any]:
        """One table row."""
        return {
            "policy": self.policy,
            **{f"param_{k}": v for k, v in self.params.items()},
            "session_id": self.session_id,
            "cache_model": self.cache_model,
            "requests_cost": self.requests_cost,
            "summaries_cost": self.summaries_cost,
            "total_cost": self.total,
            "recorded_cost": self.recorded_cost,
            "input_tokens": sum(r.input for r in self.requests),
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": sum(r.cache_write for r in self.requests),
            "output_tokens": sum(r.output for r in self.requests),
        }


def _provider_cache(api: str | None, provider: str | None, model: str | None) -> CacheModel:
    if api == "anthropic-messages" or (provider == "amazon-bedrock" and "claude" in str(model)):
        return "anthropic"
    return "openai"


def _spec(request: PolicyRequest, prices: ModelSpec | ModelCost | None) -> ModelSpec | ModelCost | None:
    if prices is not None:
        return prices
    if request.provider is None or request.model is None:
        return None
    return find_model(request.provider, request.model)


def _calibrated_cache(requests: Sequence[PolicyRequest]) -> bool:
    for r in requests:
        u = r.recorded_usage
        if u and (int(u.get("cacheRead") or 0) > 0 or int(u.get("cacheWrite") or 0) > 0):
            return True
    return False


def _long_ttl(requests: Sequence[PolicyRequest]) -> bool:
    return any(int((r.recorded_usage or {}).get("cacheWrite1h") or 0) > 0 for r in requests)


def recorded_cost(replay: PolicyReplay, prices: ModelSpec | ModelCost | None = None) -> float:
    """The recording's own bill for the requests of ``replay`` (its usages at the catalog's
    prices; the recorded ``usage.cost.total`` when the model is not in the catalog)."""
    total = 0.0
    for r in replay.requests:
        total += _recorded_request_cost(r, prices) or 0.0
    return total


def _recorded_request_cost(r: PolicyRequest, prices: ModelSpec | ModelCost | None) -> float | None:
    if not r.recorded_usage:
        return None
    spec = _spec(r, prices)
    if spec is not None:
        return calculate_cost(spec, r.recorded_usage)["total"]
    cost = r.recorded_usage.get("cost")
    if isinstance(cost, Mapping) and isinstance(cost.get("total"), (int, float)):
        return float(cost["total"])
    return None


def policy_cost(
    replay: PolicyReplay,
    *,
    cache: CacheModel = "auto",
    ttl_ms: int | None = None,
    prices: ModelSpec | ModelCost | None = None,
    miss_rate: float = 0.0,
) -> PolicyCost:
    """Price ``replay``'s requests (see the module docstring). ``prices``: bill everything at this
    model's prices instead of each answer's own model's. ``ttl_ms``: the cache lifetime (default
    from the recording: 1 hour if it wrote 1-hour entries, else 5 minutes). ``miss_rate``: the
    share of modelled cache reads the provider does not serve after all (evictions, a restarted
    agent with a new system prompt...), from :func:`calibrate_miss_rate`: that part of each read
    is billed as a cache write (Anthropic) or as input (the others) instead."""
    if not 0.0 <= miss_rate <= 1.0:
        raise ReplayError(f"miss_rate must be between 0 and 1, got {miss_rate!r}")
    if cache not in ("auto", "anthropic", "openai", "none"):
        raise ReplayError(f"cache must be 'auto', 'anthropic', 'openai' or 'none', got {cache!r}")
    requests = replay.requests
    calibrated = _calibrated_cache(requests)
    long_ttl = _long_ttl(requests)
    ttl = ttl_ms if ttl_ms is not None else (ONE_HOUR_MS if long_ttl else FIVE_MINUTES_MS)
    store: dict[int, tuple[int, float]] = {}  # prefix hash -> (tokens, expires at ms)
    out: list[RequestCost] = []
    unpriced = 0
    total = 0.0
    used_models: set[str] = set()
    clock = 0.0
    for r in requests:
        mode: CacheModel = cache
        if cache == "auto":
            mode = _provider_cache(r.api, r.provider, r.model) if calibrated else "none"
        used_models.add(mode)
        now = r.time_ms if r.time_ms is not None else clock
        clock = now
        if not r.billed:
            out.append(
                RequestCost(r.index, r.entry_id, 0, 0, 0, 0, 0, 0.0, _recorded_request_cost(r, prices), None)
            )
            continue
        read, write = _cache_split(r, mode, store, now, ttl)
        if miss_rate and read:
            missed = round(read * miss_rate)
            read -= missed
            if mode == "anthropic":
                write += missed
        write_1h = write if long_ttl and mode == "anthropic" else 0
        usage = {
            "input": max(0, r.tokens - read - write),
            "output": r.output_tokens,
            "cacheRead": read,
            "cacheWrite": write,
            "cacheWrite1h": write_1h,
        }
        spec = _spec(r, prices)
        if spec is None:
            unpriced += 1
            cost = 0.0
        else:
            cost = calculate_cost(spec, usage)["total"]
        total += cost
        rec_read = int(r.recorded_usage.get("cacheRead") or 0) if r.recorded_usage else None
        out.append(
            RequestCost(
                r.index,
                r.entry_id,
                int(usage["input"]),
                read,
                write,
                write_1h,
                r.output_tokens,
                cost,
                _recorded_request_cost(r, prices),
                rec_read,
            )
        )
    summaries = 0.0
    for e in replay.events:
        if e.summary_input_tokens <= 0 and e.summary_output_tokens <= 0:
            continue
        ref = requests[min(e.before_request, len(requests) - 1)] if requests else None
        spec = (
            prices
            if prices is not None
            else (find_model(e.provider, e.model) if e.provider and e.model else None)
        )
        if spec is None and ref is not None:
            spec = _spec(ref, None)
        if spec is None:
            continue
        summaries += calculate_cost(
            spec,
            {
                "input": e.summary_input_tokens + SUMMARY_PROMPT_TOKENS,
                "output": e.summary_output_tokens,
                "cacheRead": 0,
                "cacheWrite": 0,
            },
        )["total"]
    label = cache if cache != "auto" else "auto:" + "+".join(sorted(used_models) or ["none"])
    return PolicyCost(
        replay.policy, replay.params, replay.session_id, label, tuple(out), total, summaries, unpriced
    )


def calibrate_miss_rate(
    recorded: PolicyReplay, *, cache: CacheModel = "auto", ttl_ms: int | None = None
) -> float:
    """The recording's own cache misses: ``1 - recorded cache reads / modelled cache reads`` over
    the requests of the recorded policy (``replay_policy(session, "recorded")``), in [0, 1]; 0
    when the model predicts no reads."""
    modelled = policy_cost(recorded, cache=cache, ttl_ms=ttl_ms)
    predicted = sum(r.cache_read for r in modelled.requests)
    actual = sum(r.recorded_cache_read or 0 for r in modelled.requests)
    if predicted <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - actual / predicted))


def _prefix_hashes(r: PolicyRequest) -> tuple[list[int], list[int]]:
    """Rolling hashes of every message prefix (index k: the first k messages, after the system
    prompt and tools) and the calibrated tokens of each."""
    h = hash(("system", r.provider, r.model))
    hashes = [h]
    cum = [r.overhead]
    from pi_nb.what_if.policies.base import message_tokens

    for m in r.messages:
        h = hash((h, id(m)))
        hashes.append(h)
        cum.append(cum[-1] + message_tokens(m))
    return hashes, cum


def _cache_split(
    r: PolicyRequest, mode: CacheModel, store: dict[int, tuple[int, float]], now: float, ttl: int
) -> tuple[int, int]:
    """(cache read, cache write) tokens of one request under ``mode``; updates ``store``.

    A stored prefix keeps the size it had when it was written (the provider caches tokens, not
    estimates), so a read is that size, capped by this request's prompt."""
    if mode == "none" or r.tokens <= 0:
        return 0, 0
    hashes, cum = _prefix_hashes(r)
    scale = r.tokens / cum[-1] if cum[-1] > 0 else 1.0
    sizes = [min(r.tokens, math.floor(c * scale)) for c in cum]
    read = 0
    for k in range(len(hashes) - 1, -1, -1):
        stored = store.get(hashes[k])
        if stored is not None and stored[1] >= now:
            read = min(r.tokens, stored[0])
            store[hashes[k]] = (stored[0], now + ttl)
            break
    if mode == "openai":
        read = (read // OPENAI_INCREMENT) * OPENAI_INCREMENT if read >= MIN_CACHEABLE else 0
        for k, h in enumerate(hashes):
            old = store.get(h)
            store[h] = (old[0] if old is not None and old[1] >= now else sizes[k], now + ttl)
        return read, 0
    # anthropic: breakpoints after the system prompt + tools, and after the last user message
    last_user = max(
        (i + 1 for i, m in enumerate(r.messages) if m.get("role") in ("user", "toolResult")), default=0
    )
    breakpoint_tokens = sizes[last_user]
    minimum = 4096 if str(r.model).startswith(MIN_CACHEABLE_4096) else MIN_CACHEABLE
    if read < minimum:
        read = 0
    write = 0
    if breakpoint_tokens >= minimum and breakpoint_tokens > read:
        write = breakpoint_tokens - read
    for k in {0, last_user}:
        old = store.get(hashes[k])
        if sizes[k] >= minimum and (old is None or old[1] < now):
            store[hashes[k]] = (sizes[k], now + ttl)
    return read, write


def sum_costs(costs: Iterable[PolicyCost]) -> float:
    """The total of several :class:`PolicyCost` (dollars)."""
    return sum(c.total for c in costs)
