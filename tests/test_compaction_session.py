"""``run_compaction`` over a real SessionManager with ScriptedModel (function-level ports).

From Pi's agent-session-compaction suite and regressions (spec 11.5): extension-provided manual
summary, cancel, no model, usage persisted, reasons/willRetry seen by hooks (5217), handler errors
fall back to the default, several handlers in order, event payloads, and the manual vs automatic
error behaviour.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_nb.compaction import (
    CompactionResult,
    CompactionSettings,
    HookRunner,
    SessionBeforeCompactEvent,
    SessionBeforeCompactResult,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    run_compaction,
)
from pi_nb.errors import CompactionCancelledError, CompactionError, NothingToCompactError, SummarizationError
from pi_nb.providers import ScriptedModel
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import estimate_tokens

KEEP_SMALL = CompactionSettings(keep_recent_tokens=150)  # cuts at the last user message


def _session(turns: int = 4, size: int = 400) -> SessionManager:
    sm = SessionManager.in_memory("/tmp/proj")
    m = ScriptedModel()
    for k in range(turns):
        sm.append_message({"role": "user", "content": f"request {k} " + "u" * size, "timestamp": 1000 + k})
        sm.append_message(m.text(f"answer {k} " + "a" * size, usage=m.usage(100 * (k + 1), 50)))
    return sm


def _run(sm: SessionManager, model: ScriptedModel | None, **kw: Any) -> Any:
    kw.setdefault("settings", KEEP_SMALL)
    settings = kw.pop("settings")
    return asyncio.run(run_compaction(sm, model, settings, **kw))


def test_manual_compaction_appends_the_entry_and_rebuilds_the_context() -> None:
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.text("## Goal\nsummary", usage=m.usage(30, 7)))
    events: list[dict[str, Any]] = []
    outcome = _run(sm, m, reason="manual", custom_instructions="keep paths", emit=events.append)
    assert outcome.status == "compacted" and outcome.compacted
    entry = sm.get_entries()[-1]
    assert entry["type"] == "compaction" and entry is not None
    assert entry["summary"] == "## Goal\nsummary"
    assert entry["usage"]["totalTokens"] == 37  # usage persisted
    assert entry["fromHook"] is False
    assert entry["details"] == {"readFiles": [], "modifiedFiles": []}
    assert entry["firstKeptEntryId"] == outcome.result.first_kept_entry_id
    assert outcome.entry == entry
    assert outcome.context.messages[0]["role"] == "compactionSummary"
    assert outcome.result.estimated_tokens_after == sum(estimate_tokens(x) for x in outcome.context.messages)
    assert events[0] == {"type": "compaction_start", "reason": "manual"}
    assert events[-1]["type"] == "compaction_end" and events[-1]["aborted"] is False
    assert events[-1]["result"]["summary"] == "## Goal\nsummary"
    assert m.requests[0].context.messages[0]["content"][0]["text"].endswith("Additional focus: keep paths")


def test_manual_nothing_to_compact_and_already_compacted() -> None:
    sm = SessionManager.in_memory("/tmp/proj")
    sm.append_message({"role": "user", "content": "hi", "timestamp": 1})
    events: list[dict[str, Any]] = []
    with pytest.raises(NothingToCompactError, match=r"^Nothing to compact \(session too small\)$"):
        _run(sm, ScriptedModel(), reason="manual", settings=CompactionSettings(), emit=events.append)
    assert events[-1]["errorMessage"] == "Compaction failed: Nothing to compact (session too small)"
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.text("S"))
    _run(sm, m, reason="manual")
    with pytest.raises(NothingToCompactError, match=r"^Already compacted$"):
        _run(sm, m, reason="manual")


def test_no_model() -> None:
    sm = _session()
    with pytest.raises(CompactionError, match="No model selected"):
        _run(sm, None, reason="manual")
    assert _run(sm, None, reason="threshold").status == "skipped"


def test_automatic_nothing_to_compact_is_silent() -> None:
    sm = SessionManager.in_memory("/tmp/proj")
    sm.append_message({"role": "user", "content": "hi", "timestamp": 1})
    events: list[dict[str, Any]] = []
    outcome = _run(sm, ScriptedModel(), reason="threshold", emit=events.append)
    assert outcome.status == "skipped" and events == []


def test_hook_supplies_the_compaction() -> None:
    sm = _session()
    m = ScriptedModel()
    hooks = HookRunner()
    seen: list[Any] = []

    def before(event: SessionBeforeCompactEvent) -> dict[str, Any]:
        seen.append(event)
        return {
            "compaction": {
                "summary": "from the hook",
                "firstKeptEntryId": event.preparation.first_kept_entry_id,
                "tokensBefore": event.preparation.tokens_before,
                "usage": m.usage(1, 2),
            }
        }

    after: list[SessionCompactEvent] = []
    hooks.on("session_before_compact", before)
    hooks.on("session_compact", after.append)
    outcome = _run(sm, m, reason="manual", hooks=hooks, custom_instructions="x")
    assert m.requests == []  # no model call
    assert outcome.from_extension and outcome.result.summary == "from the hook"
    entry = sm.get_entries()[-1]
    assert entry["fromHook"] is True and entry["usage"]["totalTokens"] == 3 and "details" not in entry
    event = seen[0]
    assert event.reason == "manual" and event.will_retry is False and event.custom_instructions == "x"
    assert event.branch_entries == sm.get_branch()[:-1]
    assert event.to_dict()["preparation"]["firstKeptEntryId"] == event.preparation.first_kept_entry_id
    assert after[0].compaction_entry == entry and after[0].from_extension is True
    assert after[0].to_dict()["type"] == "session_compact"


def test_cancel_manual_raises_and_reports() -> None:
    sm = _session()
    hooks = HookRunner()
    hooks.on("session_before_compact", lambda e: SessionBeforeCompactResult(cancel=True))
    failed: list[SessionCompactFailedEvent] = []
    hooks.on("session_compact_failed", failed.append)
    events: list[dict[str, Any]] = []
    before = len(sm.get_entries())
    with pytest.raises(CompactionCancelledError, match=r"^Compaction cancelled$"):
        _run(sm, ScriptedModel(), reason="manual", hooks=hooks, emit=events.append)
    assert len(sm.get_entries()) == before
    assert events[-1] == {
        "type": "compaction_end",
        "reason": "manual",
        "result": None,
        "aborted": True,
        "willRetry": False,
    }
    assert failed[0].aborted and failed[0].error_message is None


def test_cancel_automatic_returns_cancelled() -> None:
    sm = _session()
    hooks = HookRunner()
    hooks.on("session_before_compact", lambda e: {"cancel": True})
    events: list[dict[str, Any]] = []
    outcome = _run(sm, ScriptedModel(), reason="threshold", hooks=hooks, emit=events.append)
    assert outcome.status == "cancelled"
    assert [e["type"] for e in events] == ["compaction_start", "compaction_end"]
    assert events[-1]["aborted"] is True


def test_abort_signal_cancels_without_writing() -> None:
    class Signal:
        aborted = False

    signal = Signal()
    sm = _session()
    m = ScriptedModel()

    def respond(ctx: Any, opts: Any) -> dict[str, Any]:
        signal.aborted = True
        return m.text("late")

    m.enqueue(respond)
    before = len(sm.get_entries())
    with pytest.raises(CompactionCancelledError):
        _run(sm, m, reason="manual", signal=signal)
    assert len(sm.get_entries()) == before


@pytest.mark.parametrize(
    ("reason", "will_retry", "prefix"),
    [
        ("threshold", False, "Auto-compaction failed: "),
        ("overflow", True, "Context overflow recovery failed: "),
    ],
)
def test_automatic_errors_are_values(reason: str, will_retry: bool, prefix: str) -> None:
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.text("cut", stop_reason="length"))
    events: list[dict[str, Any]] = []
    outcome = _run(sm, m, reason=reason, will_retry=will_retry, emit=events.append)
    assert outcome.status == "failed"
    assert (
        outcome.error_message
        == prefix + "Summarization failed: generation hit the token cap and the summary is incomplete"
    )
    assert events[-1]["errorMessage"] == outcome.error_message
    assert sm.get_entries()[-1]["type"] == "message"  # nothing persisted


def test_manual_summary_failure_raises_with_formatted_event() -> None:
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.tool_call("read", {"path": "x"}, stop_reason="stop"))
    events: list[dict[str, Any]] = []
    with pytest.raises(SummarizationError, match=r"^Summarization attempted to call a tool$"):
        _run(sm, m, reason="manual", emit=events.append)
    assert events[-1]["errorMessage"] == "Compaction failed: Summarization attempted to call a tool"


@pytest.mark.parametrize(
    ("reason", "will_retry", "expected"),
    [
        ("manual", True, ("manual", False)),
        ("threshold", False, ("threshold", False)),
        ("overflow", True, ("overflow", True)),
    ],
)
def test_reason_and_will_retry_reach_both_hooks(
    reason: str, will_retry: bool, expected: tuple[str, bool]
) -> None:
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.text("S"))
    hooks = HookRunner()
    seen: list[tuple[str, bool]] = []
    hooks.on("session_before_compact", lambda e: seen.append((e.reason, e.will_retry)))
    hooks.on("session_compact", lambda e: seen.append((e.reason, e.will_retry)))
    outcome = _run(sm, m, reason=reason, will_retry=will_retry, hooks=hooks)
    assert outcome.compacted
    assert seen == [expected, expected]


def test_hook_errors_fall_back_and_later_handlers_win() -> None:
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.text("default summary"))
    hooks = HookRunner()
    order: list[str] = []

    def broken(event: Any) -> None:
        order.append("broken")
        raise RuntimeError("hook bug")

    async def first(event: Any) -> dict[str, Any]:
        order.append("first")
        return {
            "compaction": {
                "summary": "first",
                "firstKeptEntryId": event.preparation.first_kept_entry_id,
                "tokensBefore": 1,
            }
        }

    def second(event: Any) -> None:
        order.append("second")

    hooks.on("session_before_compact", broken)
    outcome = _run(sm, m, reason="threshold", hooks=hooks)
    assert outcome.result.summary == "default summary"  # the broken hook is skipped
    assert [str(e.error) for e in hooks.errors] == ["hook bug"]

    sm = _session()
    hooks = HookRunner()
    for h in (first, second):
        hooks.on("session_before_compact", h)
    order.clear()
    outcome = _run(sm, ScriptedModel(), reason="threshold", hooks=hooks)
    assert order == ["first", "second"]
    assert outcome.result.summary == "first" and outcome.from_extension  # second returned nothing


def test_cancel_stops_the_chain() -> None:
    hooks = HookRunner()
    calls: list[str] = []
    hooks.on("session_before_compact", lambda e: calls.append("a") or {"cancel": True})
    hooks.on("session_before_compact", lambda e: calls.append("b"))
    sm = _session()
    assert _run(sm, ScriptedModel(), reason="overflow", hooks=hooks).status == "cancelled"
    assert calls == ["a"]


def test_bad_hook_results_are_reported() -> None:
    hooks = HookRunner()
    hooks.on("session_before_compact", lambda e: {"compaction": {"summary": 5}})
    m = ScriptedModel()
    m.enqueue(m.text("fallback"))
    outcome = _run(_session(), m, reason="threshold", hooks=hooks)
    assert outcome.result.summary == "fallback" and len(hooks.errors) == 1
    with pytest.raises(CompactionError):
        hooks.on("no_such_event", print)
    assert (
        CompactionResult.from_dict({"summary": "s", "firstKeptEntryId": "k", "tokensBefore": 3}).tokens_before
        == 3
    )


def test_second_compaction_updates_the_previous_summary() -> None:
    sm = _session()
    m = ScriptedModel()
    m.enqueue(m.text("FIRST"))
    _run(sm, m, reason="manual")
    for k in range(3):
        sm.append_message({"role": "user", "content": f"more {k} " + "v" * 400, "timestamp": 5000 + k})
        sm.append_message(m.text(f"reply {k} " + "w" * 400, usage=m.usage(10, 5)))
    m.enqueue(m.text("SECOND"))
    outcome = _run(sm, m, reason="threshold")
    assert outcome.compacted
    prompt = m.requests[1].context.messages[0]["content"][0]["text"]
    assert "<previous-summary>\nFIRST\n</previous-summary>" in prompt
    assert [e["type"] for e in sm.get_entries()].count("compaction") == 2
    assert outcome.context.messages[0]["summary"].startswith("SECOND")


def test_offline_model_writes_the_checkpoint_and_the_branch_summary() -> None:
    """The embedded offline model answers our summary requests with Pi's sections."""
    from pi_nb.compaction import navigate_tree
    from pi_nb.providers.offline import OfflineModel

    sm = _session()
    model = OfflineModel()
    outcome = _run(sm, model, reason="manual")
    summary = outcome.result.summary
    for heading in ("## Goal", "## Progress", "### Done", "## Next Steps", "## Critical Context"):
        assert heading + "\n" in summary
    first = sm.get_entries()[0]["id"]
    result = asyncio.run(navigate_tree(sm, first, summarize=True, model=model))
    assert result.summary_entry is not None
    text = result.summary_entry["summary"]
    assert text.startswith("The user explored a different conversation branch before returning here.")
    assert "## Goal" in text and "## Critical Context" not in text
