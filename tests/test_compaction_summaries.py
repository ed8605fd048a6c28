"""Summary requests and ``compact`` against ScriptedModel (Pi's faux-provider tests, ported).

Covers compaction-summary-reasoning.test.ts (reasoning option, cacheRetention, session ids, split
turn limits and usage), getSummarizationFailure and the tool-call rejection, the prompts'
structure, and the retry policy of 6647-compaction-retries-transient-stream-drop.test.ts.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from pi_nb.compaction import (
    BRANCH_SUMMARY_PROMPT,
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
    CompactionPreparation,
    CompactionSettings,
    RetryCallbacks,
    RetrySettings,
    compact,
    generate_summary,
    generate_summary_with_usage,
    get_summarization_failure,
    prepare_compaction,
    retry_assistant_call,
)
from pi_nb.compaction.serialization import FileOperations, OrderedStrSet
from pi_nb.errors import SummarizationError
from pi_nb.providers import ScriptedModel

CASES = json.loads((Path(__file__).parent / "golden" / "compaction_cases.json").read_text(encoding="utf-8"))[
    "cases"
]
MESSAGES = [{"role": "user", "content": "fix the bug in src/a.ts", "timestamp": 1}]


class Signal:
    def __init__(self) -> None:
        self.aborted = False


def _no_sleep_recorder() -> tuple[list[int], Any]:
    waits: list[int] = []

    async def sleep(ms: int) -> None:
        waits.append(ms)

    return waits, sleep


def _prompt(model: ScriptedModel, n: int = 0) -> str:
    return model.requests[n].context.messages[0]["content"][0]["text"]


# ---- compaction-summary-reasoning.test.ts ------------------------------------------------------


def test_reasoning_model_gets_the_thinking_level() -> None:
    m = ScriptedModel(reasoning=True)
    m.enqueue(m.text("## Goal\nx", usage=m.usage(10, 5)))
    result = asyncio.run(generate_summary_with_usage(MESSAGES, m, 16384, thinking_level="medium"))
    assert result.text == "## Goal\nx"
    assert result.usage["totalTokens"] == 15
    options = m.requests[0].options
    assert options.reasoning == "medium"
    assert options.max_tokens == 13107  # floor(0.8 * 16384), below the model's 16384
    assert options.cache_retention == "none"


@pytest.mark.parametrize(("reasoning", "level"), [(True, "off"), (False, "high"), (True, None)])
def test_no_reasoning_option(reasoning: bool, level: str | None) -> None:
    m = ScriptedModel(reasoning=reasoning)
    m.enqueue(m.text("s"))
    assert asyncio.run(generate_summary(MESSAGES, m, 16384, thinking_level=level)) == "s"
    assert m.requests[0].options.reasoning is None


def test_each_call_gets_a_fresh_uuid7_unless_given() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("a"), m.text("b"), m.text("c"))
    asyncio.run(generate_summary(MESSAGES, m, 1000))
    asyncio.run(generate_summary(MESSAGES, m, 1000))
    asyncio.run(generate_summary(MESSAGES, m, 1000, session_id="routing-1"))
    ids = [r.options.session_id for r in m.requests]
    assert ids[0] != ids[1] and ids[2] == "routing-1"
    assert all(uuid.UUID(i).version == 7 for i in ids[:2] if i is not None)
    assert all(r.options.cache_retention == "none" for r in m.requests)


def test_request_shape_no_tools_one_user_message() -> None:
    m = ScriptedModel(max_tokens=500)
    m.enqueue(m.text("s"))
    asyncio.run(generate_summary(MESSAGES, m, 16384, custom_instructions="focus on tests"))
    ctx = m.requests[0].context
    assert ctx.system_prompt == SUMMARIZATION_SYSTEM_PROMPT
    assert ctx.tools is None
    assert len(ctx.messages) == 1 and ctx.messages[0]["role"] == "user"
    assert m.requests[0].options.max_tokens == 500  # capped by the model
    text = _prompt(m)
    assert text.startswith("<conversation>\n[User]: fix the bug in src/a.ts\n</conversation>\n\n")
    assert text.endswith(SUMMARIZATION_PROMPT + "\n\nAdditional focus: focus on tests")
    assert "<previous-summary>" not in text


def test_update_prompt_with_previous_summary() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("s"))
    asyncio.run(generate_summary(MESSAGES, m, 16384, previous_summary="OLD"))
    text = _prompt(m)
    assert (
        "</conversation>\n\n<previous-summary>\nOLD\n</previous-summary>\n\n" + UPDATE_SUMMARIZATION_PROMPT
        in text
    )


def _split_preparation(reserve: int, with_history: bool = True) -> CompactionPreparation:
    return CompactionPreparation(
        first_kept_entry_id="k",
        messages_to_summarize=list(MESSAGES) if with_history else [],
        turn_prefix_messages=[{"role": "user", "content": "prefix", "timestamp": 2}],
        is_split_turn=True,
        tokens_before=1234,
        previous_summary="PREV",
        file_ops=FileOperations(read=OrderedStrSet(["b.ts", "a.ts"]), edited=OrderedStrSet(["a.ts"])),
        settings=CompactionSettings(reserve_tokens=reserve),
    )


def test_split_turn_two_calls_capped_by_model_and_usage_summed() -> None:
    m = ScriptedModel(max_tokens=128000)
    m.enqueue(m.text("HISTORY", usage=m.usage(10, 10)), m.text("PREFIX", usage=m.usage(10, 10)))
    result = asyncio.run(compact(_split_preparation(500000), m))
    assert [r.options.max_tokens for r in m.requests] == [128000, 128000]
    assert result.usage is not None
    assert (result.usage["input"], result.usage["output"], result.usage["totalTokens"]) == (20, 20, 40)
    assert result.summary == (
        "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
        "\n\n<read-files>\nb.ts\n</read-files>\n\n<modified-files>\na.ts\n</modified-files>"
    )
    assert result.details == {"readFiles": ["b.ts"], "modifiedFiles": ["a.ts"]}
    assert result.tokens_before == 1234 and result.first_kept_entry_id == "k"
    assert _prompt(m, 1).endswith(TURN_PREFIX_SUMMARIZATION_PROMPT)


def test_split_turn_limits_from_the_reserve() -> None:
    m = ScriptedModel(max_tokens=10**9)  # a model cap above the reserve: 0 is refused now
    m.enqueue(m.text("H"), m.text("P"))
    asyncio.run(compact(_split_preparation(16384), m))
    assert [r.options.max_tokens for r in m.requests] == [13107, 8192]


def test_split_turn_without_history_says_no_prior_history() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("PREFIX", usage=m.usage(3, 4)))
    result = asyncio.run(compact(_split_preparation(16384, with_history=False), m))
    assert len(m.requests) == 1
    assert result.summary.startswith("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    assert result.usage is not None and result.usage["totalTokens"] == 7
    assert "PREV" not in _prompt(m)  # the previous summary is not carried on this path


def test_compact_on_the_spec_vector() -> None:
    case = next(c for c in CASES if c["name"] == "spec 12 prepareCompaction keep 120")
    prep = prepare_compaction(case["args"]["entries"], CompactionSettings(keep_recent_tokens=120))
    assert prep is not None and prep.is_split_turn
    m = ScriptedModel()
    m.enqueue(m.text("H"), m.text("P"))
    result = asyncio.run(compact(prep, m, "watch the edits"))
    assert (
        result.summary
        == "H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\nsrc/a.ts\n</read-files>"
    )
    history, prefix = _prompt(m, 0), _prompt(m, 1)
    assert history.endswith("Additional focus: watch the edits")
    assert '[Assistant tool calls]: read(path="src/a.ts")' in prefix
    assert "Additional focus" not in prefix


# ---- failures ----------------------------------------------------------------------------------


def test_get_summarization_failure() -> None:
    assert get_summarization_failure({"stopReason": "error", "errorMessage": "boom"}, "Summarization") == (
        "Summarization failed: boom"
    )
    assert get_summarization_failure({"stopReason": "error"}, "X") == "X failed: Unknown error"
    assert get_summarization_failure({"stopReason": "length"}, "Turn prefix summarization") == (
        "Turn prefix summarization failed: generation hit the token cap and the summary is incomplete"
    )
    assert get_summarization_failure({"stopReason": "stop"}, "X") is None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda m: m.text("partial", stop_reason="length"),
            "Summarization failed: generation hit the token cap",
        ),
        (lambda m: m.error("invalid_request_error: bad"), "Summarization failed: invalid_request_error: bad"),
        (
            lambda m: m.tool_call("read", {"path": "x"}, stop_reason="stop"),
            "Summarization attempted to call a tool",
        ),
    ],
)
def test_failed_summaries_raise(make: Any, message: str) -> None:
    m = ScriptedModel()
    m.enqueue(make(m))
    with pytest.raises(SummarizationError, match=re.escape(message)):
        asyncio.run(generate_summary(MESSAGES, m, 16384, retry=RetrySettings(enabled=False)))


def test_turn_prefix_failure_label() -> None:
    m = ScriptedModel()
    m.enqueue(m.text("H"), m.text("cut", stop_reason="length"))
    with pytest.raises(
        SummarizationError, match=r"^Turn prefix summarization failed: generation hit the token cap"
    ):
        asyncio.run(compact(_split_preparation(16384), m))


# ---- retries (6647-compaction-retries-transient-stream-drop) -----------------------------------


def test_terminated_is_retried_with_backoff() -> None:
    m = ScriptedModel()
    m.enqueue(m.error("terminated"), m.error("socket hang up"), m.text("ok"))
    waits, sleep = _no_sleep_recorder()
    events: list[tuple[Any, ...]] = []
    callbacks = RetryCallbacks(
        on_retry_scheduled=lambda *a: events.append(("scheduled", *a)),
        on_retry_attempt_start=lambda: events.append(("start",)),
        on_retry_finished=lambda *a: events.append(("finished", *a)),
    )
    text = asyncio.run(
        generate_summary(MESSAGES, m, 1000, retry=RetrySettings(), callbacks=callbacks, sleep=sleep)
    )
    assert text == "ok" and len(m.requests) == 3
    assert waits == [2000, 4000]
    assert events == [
        ("scheduled", 1, 3, 2000, "terminated"),
        ("start",),
        ("scheduled", 2, 3, 4000, "socket hang up"),
        ("start",),
        ("finished", True, 2),
    ]
    # all three attempts are the same request: same session id
    assert len({r.options.session_id for r in m.requests}) == 1


def test_quota_errors_are_not_retried() -> None:
    m = ScriptedModel()
    m.enqueue(m.error("insufficient_quota"), m.text("never"))
    waits, sleep = _no_sleep_recorder()
    with pytest.raises(SummarizationError, match="insufficient_quota"):
        asyncio.run(generate_summary(MESSAGES, m, 1000, retry=RetrySettings(), sleep=sleep))
    assert len(m.requests) == 1 and waits == []


def test_retry_disabled_and_exhausted() -> None:
    m = ScriptedModel()
    m.enqueue(m.error("terminated"))
    with pytest.raises(SummarizationError):
        asyncio.run(generate_summary(MESSAGES, m, 1000, retry=RetrySettings(enabled=False)))
    assert len(m.requests) == 1
    m = ScriptedModel()
    m.enqueue(*[m.error("terminated")] * 5)
    waits, sleep = _no_sleep_recorder()
    with pytest.raises(SummarizationError, match="terminated"):
        asyncio.run(generate_summary(MESSAGES, m, 1000, retry=RetrySettings(max_retries=2), sleep=sleep))
    assert len(m.requests) == 3 and waits == [2000, 4000]


def test_abort_during_backoff_returns_aborted() -> None:
    signal = Signal()
    calls = 0

    async def produce() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return {
            "role": "assistant",
            "content": [],
            "stopReason": "error",
            "errorMessage": "overloaded",
            "timestamp": 1,
        }

    async def sleep(ms: int) -> None:
        signal.aborted = True

    finished: list[tuple[Any, ...]] = []
    response = asyncio.run(
        retry_assistant_call(
            produce,
            RetrySettings(),
            signal,
            RetryCallbacks(on_retry_finished=lambda *a: finished.append(a)),
            sleep=sleep,
        )
    )
    assert calls == 1
    assert response["stopReason"] == "aborted" and "errorMessage" not in response
    assert finished == [(False, 1, "overloaded")]


def test_default_sleep_stops_early_on_abort() -> None:
    signal = Signal()

    async def produce() -> dict[str, Any]:
        signal.aborted = True  # aborted right after the first failure: no 10 s wait
        return {
            "role": "assistant",
            "content": [],
            "stopReason": "error",
            "errorMessage": "503",
            "timestamp": 1,
        }

    response = asyncio.run(retry_assistant_call(produce, RetrySettings(base_delay_ms=10_000), signal))
    assert response["stopReason"] == "aborted"


def test_prompt_structure_headings() -> None:
    headings = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress",
                "### Blocked", "## Key Decisions", "## Next Steps"]  # fmt: skip
    closing = "Keep each section concise. Preserve exact file paths, function names, and error messages."
    for prompt in (SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT, BRANCH_SUMMARY_PROMPT):
        lines = prompt.split("\n")
        positions = [lines.index(h) for h in headings]
        assert positions == sorted(positions)
        assert "Use this EXACT format:" in lines
        assert lines[-1] == closing
    assert "## Critical Context" in SUMMARIZATION_PROMPT.split("\n")
    assert "## Critical Context" in UPDATE_SUMMARIZATION_PROMPT.split("\n")
    assert "## Critical Context" not in BRANCH_SUMMARY_PROMPT
    assert "<previous-summary>" in UPDATE_SUMMARIZATION_PROMPT and "NEW" in UPDATE_SUMMARIZATION_PROMPT
    tp = TURN_PREFIX_SUMMARIZATION_PROMPT.split("\n")
    assert [
        tp.index(h) for h in ("## Original Request", "## Early Progress", "## Context for Suffix")
    ] == sorted(tp.index(h) for h in ("## Original Request", "## Early Progress", "## Context for Suffix"))
    assert "Do NOT continue the conversation." in SUMMARIZATION_SYSTEM_PROMPT
    assert SUMMARIZATION_SYSTEM_PROMPT.endswith("ONLY output the structured summary.")
