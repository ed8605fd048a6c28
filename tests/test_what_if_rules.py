"""The what-if replay reproduces what the real Pi decided, on small hand-built sessions: the model
in force, retries before the after-run check, the rules of older Pi versions, manual compactions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_nb.errors import ReplayError
from pi_nb.what_if import PI_RULE_CHANGES, pi_rules, replay

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_790_000_000_000


def _usage(tokens: int) -> dict[str, Any]:
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "input": tokens,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens,
        "cost": cost,
    }


class Session:
    """A chain of entries, one call per entry."""

    def __init__(self, created: str = "2026-12-01T00:00:00.000Z") -> None:
        self.entries: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": "s", "timestamp": created, "cwd": "/tmp"}
        ]
        self.n = 0

    def _add(self, entry: dict[str, Any]) -> str:
        self.n += 1
        parent = self.entries[-1]["id"] if len(self.entries) > 1 else None
        entry_id = f"e{self.n}"
        self.entries.append(
            {**entry, "id": entry_id, "parentId": parent, "timestamp": f"2026-12-01T00:00:{self.n:02d}.000Z"}
        )
        return entry_id

    def user(self, text: str = "do it " * 40) -> str:
        msg = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": T0 + self.n}
        return self._add({"type": "message", "message": msg})

    def assistant(
        self,
        tokens: int,
        *,
        stop: str = "stop",
        model: str = "small",
        error: str | None = None,
        tool: bool = False,
    ) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": "answer " * 40}]
        if tool:
            content.append(
                {"type": "toolCall", "id": f"c{self.n}", "name": "read", "arguments": {"path": "a"}}
            )
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "p",
            "model": model,
            "usage": _usage(tokens),
            "stopReason": "toolUse" if tool else stop,
            "timestamp": T0 + self.n,
        }
        if error is not None:
            msg["errorMessage"] = error
        return self._add({"type": "message", "message": msg})

    def tool_result(self, size: int = 400) -> str:
        msg = {
            "role": "toolResult",
            "toolCallId": f"c{self.n - 1}",
            "toolName": "read",
            "content": [{"type": "text", "text": "r" * size}],
            "isError": False,
            "timestamp": T0 + self.n,
        }
        return self._add({"type": "message", "message": msg})

    def model_change(self, model: str) -> str:
        return self._add({"type": "model_change", "provider": "p", "modelId": model})

    def compaction(self, first_kept: str, tokens_before: int = 100) -> str:
        return self._add(
            {
                "type": "compaction",
                "summary": "## Goal\nx",
                "firstKeptEntryId": first_kept,
                "tokensBefore": tokens_before,
            }
        )


def _history(s: Session, turns: int = 3) -> None:
    for i in range(turns):
        s.user()
        s.assistant(300 + 100 * i)


POLICY: dict[str, Any] = {"context_window": 4000, "reserve_tokens": 1000, "keep_recent_tokens": 200}


# -- (a) the model in force ------------------------------------------------------------------------


def test_an_overflow_counts_when_the_model_in_force_is_the_answers_own() -> None:
    """Pi compares with the model it restored from the latest model_change OR assistant message:
    after a model_change to "big", answers from "small" make "small" the model in force again."""
    s = Session()
    s.model_change("big")
    _history(s)
    s.user()
    err = s.assistant(0, stop="error", error="prompt is too long: 9000 tokens > 4000 maximum")
    s.user()
    result = replay(s.entries, **POLICY)
    after = [d for d in result.decisions if d.message_entry_id == err and d.checkpoint == "after_run"]
    assert [(d.reason, d.will_retry) for d in after] == [("overflow", True)]


# -- (b) retries first -------------------------------------------------------------------------------


def test_a_retried_transient_error_is_dropped_before_any_check() -> None:
    s = Session()
    _history(s)
    s.user()
    err = s.assistant(0, stop="error", error="503 Service Unavailable")
    ok = s.assistant(3500)  # Pi's retry (agent.continue()), over the 3000 threshold
    s.user()
    result = replay(s.entries, **POLICY)
    at_err = [d for d in result.decisions if d.message_entry_id == err]
    assert [(d.checkpoint, d.outcome, d.reason) for d in at_err] == [("after_run", "retried", None)]
    at_ok = next(d for d in result.decisions if d.message_entry_id == ok)
    assert (at_ok.checkpoint, at_ok.reason, at_ok.tokens_source) == ("after_run", "threshold", "usage")
    # the compaction Pi made there summarised a state without the failed answer
    assert result.compactions[0].tokens_before > 0


def test_an_error_the_user_answered_with_a_new_prompt_is_checked() -> None:
    s = Session()
    _history(s)
    s.user()
    err = s.assistant(0, stop="error", error="503 Service Unavailable")
    s.user()
    d = next(d for d in replay(s.entries, **POLICY).decisions if d.message_entry_id == err)
    assert (d.checkpoint, d.outcome, d.tokens_source) == ("after_run", "below_threshold", "estimate")


def test_an_overflow_is_never_retried_as_a_transient_error() -> None:
    s = Session()
    _history(s)
    s.user()
    err = s.assistant(0, stop="error", error="prompt is too long: 9000 tokens > 4000 maximum")
    s.assistant(500)
    d = next(d for d in replay(s.entries, **POLICY).decisions if d.message_entry_id == err)
    assert d.outcome != "retried" and d.reason == "overflow"


# -- (c) the rules of the Pi version -------------------------------------------------------------------


def _tool_session(created: str = "2026-12-01T00:00:00.000Z") -> Session:
    s = Session(created)
    _history(s)
    s.user()
    s.assistant(2900, tool=True)
    s.tool_result(2000)  # the estimate crosses the 3000 threshold between turns
    s.assistant(500)
    s.user()
    return s


def test_pi_rules_by_version() -> None:
    assert pi_rules().version == "0.85.0" and pi_rules().between_turns and pi_rules().pre_prompt
    assert not pi_rules("0.84.3").between_turns and pi_rules("0.84.4").between_turns
    assert not pi_rules("0.23.2").pre_prompt and pi_rules("0.23.3").pre_prompt
    assert not pi_rules("0.80.3").custom_messages_kept and pi_rules("0.80.4").custom_messages_kept
    assert pi_rules("auto", {"timestamp": "2026-08-28T10:00:00Z"}).version == "0.84.4"
    assert pi_rules("auto", {"timestamp": "2026-08-27T10:00:00Z"}).version == "0.80.4"
    assert pi_rules("auto", {"timestamp": "2025-01-01T00:00:00Z"}).version == "0.23.2"
    assert pi_rules("auto", None).version == "0.85.0"
    assert [v for v, _, _ in PI_RULE_CHANGES] == ["0.23.3", "0.80.4", "0.84.4", "0.85.0"]
    with pytest.raises(ReplayError):
        pi_rules("latest")
    with pytest.raises(ReplayError):
        replay(_tool_session().entries, rules="0.x", **POLICY)


def test_the_between_turns_checkpoint_exists_since_0_84_4() -> None:
    """A big tool result crosses the threshold mid-run; the run's final answer is small again.
    0.85.0 compacts between the turns; 0.84.3 has no such checkpoint and never compacts."""
    policy = {**POLICY, "keep_recent_tokens": 600}
    s = _tool_session()
    now = replay(s.entries, **policy)
    assert [(c.checkpoint, c.reason) for c in now.compactions] == [("between_turns", "threshold")]
    old = replay(s.entries, rules="0.84.3", **policy)
    assert "between_turns" not in {d.checkpoint for d in old.decisions} and not old.compactions
    auto_old = replay(_tool_session("2026-08-01T00:00:00.000Z").entries, rules="auto", **policy)
    assert [d.to_dict() for d in auto_old.decisions] == [d.to_dict() for d in old.decisions]
    auto_new = replay(_tool_session("2026-09-10T00:00:00.000Z").entries, rules="auto", **policy)
    assert [d.to_dict() for d in auto_new.decisions] == [d.to_dict() for d in now.decisions]


def test_the_pre_prompt_checkpoint_exists_since_0_23_3() -> None:
    s = Session()
    _history(s)
    s.user()
    s.assistant(3500, stop="aborted")  # skipped after the run, counted before the next prompt
    s.user()
    now = replay(s.entries, **POLICY)
    assert [(c.checkpoint, c.reason) for c in now.compactions] == [("pre_prompt", "threshold")]
    old = replay(s.entries, rules="0.23.2", **POLICY)
    assert "pre_prompt" not in {d.checkpoint for d in old.decisions} and not old.compactions


# -- (d) manual compactions --------------------------------------------------------------------------


def test_a_compaction_below_the_threshold_is_reported_as_manual() -> None:
    s = Session()
    _history(s)
    kept = s.user()
    s.assistant(3500)
    s.compaction(kept)  # over the threshold after the run: automatic
    s.user()
    s.assistant(1000)
    s.compaction(kept)  # far below the threshold: the user's /compact
    s.user()
    reasons = [(c.checkpoint, c.reason) for c in replay(s.entries, **POLICY).recorded_compactions]
    assert reasons == [("after_run", "threshold"), ("after_run", "manual")]


def test_a_compaction_right_after_another_is_manual() -> None:
    s = Session()
    _history(s)
    kept = s.user()
    s.assistant(3500)
    s.compaction(kept)
    s.compaction(kept)  # nothing new since the first: only the user can ask for this one
    s.user()
    reasons = [c.reason for c in replay(s.entries, **POLICY).recorded_compactions]
    assert reasons == ["threshold", "manual"]


def test_the_real_pis_manual_compaction_is_told_apart() -> None:
    """notebooks/data/real-pi/compaction.jsonl: Pi compacted on its own between two turns, then
    the user ran /compact (policy 6,000 / 1,500 / 1,500)."""
    path = ROOT / "notebooks" / "data" / "real-pi" / "compaction.jsonl"
    result = replay(path, context_window=6000, reserve_tokens=1500, keep_recent_tokens=1500)
    assert [(c.checkpoint, c.reason) for c in result.recorded_compactions] == [
        ("between_turns", "threshold"),
        ("after_run", "manual"),
    ]
