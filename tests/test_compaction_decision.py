"""The compaction decision alone (pi_nb.compaction.decision) against Pi 0.85.0's own checks.

tests/golden/compaction_decision.json holds hand-picked and random states at the three checkpoints
and what Pi's ``AgentSession._checkCompaction`` / ``_compactBeforeNextAssistantResponse`` did on
each (recorded by tests/golden/make_compaction_decision.py). Every case goes through the live
session's own glue (``AgentSession._decide`` on a stand-in ``self``) into :func:`decide`, and the
decision must say what Pi did: whether ``_runAutoCompaction`` ran and with which reason and
``willRetry``, the error of a failed second recovery, the dropped answer, the one-retry flag.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.agent.session import AgentSession
from pi_nb.compaction.decision import CompactionDecision, ContextCount, ModelRef, decide, freed_no_room
from pi_nb.compaction.settings import CompactionSettings

sys.path.insert(0, str(Path(__file__).parent / "golden"))
from make_compaction_decision import expand

GOLDEN = json.loads((Path(__file__).parent / "golden" / "compaction_decision.json").read_text("utf-8"))
CASES: list[dict[str, Any]] = expand(GOLDEN["cases"])


def _pi_nb_decision(case: dict[str, Any]) -> CompactionDecision:
    m = case["model"]
    model = (
        SimpleNamespace(
            provider=m["provider"], id=m["id"], context_window=m["contextWindow"], max_tokens=m["maxTokens"]
        )
        if m is not None
        else None
    )
    compaction = CompactionSettings.from_dict(case["settings"])
    messages = [dict(x) for x in case["messages"]]
    stand_in = SimpleNamespace(
        model=model,
        session_manager=SimpleNamespace(get_branch=lambda: case["branch"]),
        settings=SimpleNamespace(get_compaction_settings=lambda: compaction),
        agent=SimpleNamespace(state=SimpleNamespace(messages=messages)),
        _overflow_recovery_attempted=case["overflowAttempted"],
        _overflow_signature=None,
        _auto_compactions=0,
    )
    return AgentSession._decide(stand_in, case["checkpoint"], case["message"], messages)  # type: ignore[arg-type]


def _ids() -> list[str]:
    return [c.get("name") or f"random-{i}" for i, c in enumerate(CASES)]


def test_the_golden_has_the_cases() -> None:
    names = [c["name"] for c in CASES if "name" in c]
    assert len(names) >= 40 and len(CASES) >= 400
    assert {c["checkpoint"] for c in CASES} == {"after_run", "pre_prompt", "between_turns"}
    runs = {json.dumps(c["pi"]["run"]) for c in CASES}
    assert {
        "null",
        *(
            json.dumps({"reason": r, "willRetry": w})
            for r, w in [("threshold", False), ("overflow", True), ("overflow", False)]
        ),
    } <= runs


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_decision_equals_pi(case: dict[str, Any]) -> None:
    pi = case["pi"]
    decision = _pi_nb_decision(case)
    if pi["threw"] is not None:
        # Pi's isContextOverflow / isRecoverableLength read usage.input / usage.output of an answer
        # without usage and throw; pi_nb reads a missing usage as none (it estimates, as for a
        # zero usage)
        assert "usage" not in case["message"]
        assert "TypeError: Cannot read properties of undefined" in pi["threw"]
        return
    ran = {"reason": decision.action, "willRetry": decision.will_retry} if decision.compacts else None
    assert ran == pi["run"], decision
    assert decision.error_message == pi["errorMessage"]
    assert decision.will_retry == pi["dropped"]
    assert (case["overflowAttempted"] or decision.will_retry) == pi["overflowAttemptedAfter"]


def test_the_count_of_cases_equal_to_pi() -> None:
    equal = 0
    for case in CASES:
        d = _pi_nb_decision(case)
        ran = {"reason": d.action, "willRetry": d.will_retry} if d.compacts else None
        equal += (
            case["pi"]["threw"] is None
            and ran == case["pi"]["run"]
            and d.error_message == case["pi"]["errorMessage"]
        )
    threw = sum(c["pi"]["threw"] is not None for c in CASES)
    assert equal + threw == len(CASES)


# -- pi_nb's own rules (not in Pi: off in the golden) --------------------------------------------


def _over(tokens: int = 190_000, stop: str = "stop", error: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": [],
        "provider": "p",
        "model": "m",
        "stopReason": stop,
        "usage": {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens},
        "timestamp": 1,
    }
    if error:
        msg["errorMessage"] = error
    return msg


MODEL = ModelRef("p", "m", 200_000, 32_000)


def test_the_per_prompt_limit_stops_a_due_compaction() -> None:
    s = CompactionSettings(max_auto_compactions_per_prompt=2)
    est = lambda: ContextCount(0)  # noqa: E731
    assert decide("after_run", _over(), s, MODEL, est, compactions_so_far=1).compacts  # type: ignore[arg-type]
    limited = decide("after_run", _over(), s, MODEL, est, compactions_so_far=2)  # type: ignore[arg-type]
    assert limited.action == "threshold" and limited.over_limit and not limited.compacts
    below = decide("after_run", _over(10), s, MODEL, est, compactions_so_far=5)  # type: ignore[arg-type]
    assert not below.over_limit


def test_the_same_overflow_again_is_no_room() -> None:
    msg = _over(0, "error", "prompt is too long: 300000 tokens > 200000 maximum")
    s = CompactionSettings()
    first = decide("after_run", msg, s, MODEL, lambda: ContextCount(0))  # type: ignore[arg-type]
    assert (first.action, first.why, first.will_retry) == ("overflow", "overflow", True)
    again = decide("after_run", msg, s, MODEL, lambda: ContextCount(0), repeats_overflow=True)  # type: ignore[arg-type]
    assert (again.action, again.why) == ("none", "no_room")
    assert (
        freed_no_room(first, 200_000) and not freed_no_room(first, 199_999) and not freed_no_room(first, None)
    )


def test_the_estimate_is_read_only_when_needed() -> None:
    def boom() -> ContextCount:
        raise AssertionError("estimate read")

    d = decide("after_run", _over(), CompactionSettings(), MODEL, boom)  # type: ignore[arg-type]
    assert (d.tokens, d.tokens_source, d.why) == (190_000, "usage", "over_threshold")


# -- invariants --------------------------------------------------------------------------------

_windows = st.integers(min_value=1, max_value=2_000_000)


@settings(max_examples=300, deadline=None)
@given(
    window=_windows,
    reserve_frac=st.floats(min_value=0, max_value=0.9),
    frac=st.floats(min_value=0, max_value=1),
    stop=st.sampled_from(["stop", "toolUse", "aborted"]),
    checkpoint=st.sampled_from(["after_run", "pre_prompt", "between_turns"]),
    attempted=st.booleans(),
    stale=st.booleans(),
)
def test_nothing_fires_at_or_below_the_threshold_without_an_overflow(
    window: int, reserve_frac: float, frac: float, stop: str, checkpoint: Any, attempted: bool, stale: bool
) -> None:
    reserve = int(window * reserve_frac)
    tokens = int((window - reserve) * frac)
    s = CompactionSettings(reserve_tokens=reserve)
    msg = _over(max(tokens, 1) if tokens else 0, stop)
    if tokens == 0:
        msg["usage"]["totalTokens"] = 0
    model = ModelRef("p", "m", window, 32_000)
    d = decide(
        checkpoint,
        msg if checkpoint != "between_turns" else None,
        s,
        model,
        lambda: ContextCount(tokens),  # type: ignore[arg-type]
        overflow_attempted=attempted,
        message_stale=stale,
    )
    assert d.action == "none", d
    assert d.tokens is None or d.tokens <= d.threshold


@settings(max_examples=300, deadline=None)
@given(
    window=st.integers(min_value=0, max_value=400_000),
    tokens=st.integers(min_value=0, max_value=800_000),
    stop=st.sampled_from(["stop", "toolUse", "length", "error", "aborted"]),
    error=st.sampled_from([None, "prompt is too long", "Overloaded"]),
    checkpoint=st.sampled_from(["after_run", "pre_prompt", "between_turns"]),
    enabled=st.booleans(),
    attempted=st.booleans(),
)
def test_decisions_are_consistent(
    window: int, tokens: int, stop: str, error: str | None, checkpoint: Any, enabled: bool, attempted: bool
) -> None:
    s = CompactionSettings(enabled=enabled, reserve_tokens=min(16_384, window))
    msg = _over(tokens, stop, error if stop == "error" else None)
    d = decide(
        checkpoint,
        msg if checkpoint != "between_turns" else None,
        s,
        ModelRef("p", "m", window, 32_000),
        lambda: ContextCount(tokens),
        overflow_attempted=attempted,
    )  # type: ignore[arg-type]
    assert d.threshold == window - s.reserve_tokens
    if not enabled:
        assert d.action == "none" and d.why == "disabled"
    if d.will_retry:
        assert d.action == "overflow" and stop != "stop" and not attempted and checkpoint != "between_turns"
    if d.action == "threshold":
        assert d.tokens is not None and d.tokens > d.threshold
    if checkpoint == "between_turns":
        assert d.action in ("none", "threshold") and d.tokens_source == "estimate"
