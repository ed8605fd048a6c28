"""The token-budget model (pi_nb.notebook.budget): Pi's numbers from golden files, budget maths,
Pi's footer levels, the unknown state after a compaction, and the incremental tracker."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.errors import NotebookError
from pi_nb.notebook import budget as budget_mod
from pi_nb.notebook.budget import (
    MESSAGE_CATEGORIES,
    BudgetInput,
    BudgetTracker,
    budget_input_from_session,
    compute_budget,
    context_level,
    format_tokens,
    get_context_usage,
    has_usage_after_latest_compaction,
)
from pi_nb.notebook.views import load_session
from pi_nb.session.context import get_branch_entries
from pi_nb.tokens import calculate_context_tokens, count_message_tokens, count_tokens, estimate_tokens

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"


def _golden() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    sources: dict[str, list[dict[str, Any]]] = {}
    cases: list[dict[str, Any]] = []
    with open(HERE / "golden" / "notebook.json", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "sessionSource" in row:
                sources[row["sessionSource"]["name"]] = row["sessionSource"]["entries"]
            elif "session" in row:
                cases.append(row["session"])
    return sources, cases


SOURCES, SESSION_CASES = _golden()


def _manager(case: dict[str, Any]) -> Any:
    sm = load_session(json.loads(json.dumps(SOURCES[case["source"]])))
    if case["leaf"] != "<absent>":
        sm.branch(case["leaf"])
    return sm


def _msg(role: str, text: str, ts: int, **extra: Any) -> dict[str, Any]:
    if role == "assistant":
        return {
            "role": role,
            "content": [{"type": "text", "text": text}],
            "timestamp": ts,
            "stopReason": "stop",
            **extra,
        }
    if role == "toolResult":
        return {
            "role": role,
            "toolCallId": f"c{ts}",
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": ts,
        }
    return {"role": role, "content": text, "timestamp": ts, **extra}


def _usage(total: int) -> dict[str, Any]:
    return {"input": total - 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}


# ---------------------------------------------------------------------------------------------
# golden: Pi's numbers for real session contexts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda c: c["name"])
def test_budget_matches_pi_for_session(case: dict[str, Any]) -> None:
    sm = _manager(case)
    messages = sm.build_session_context().messages
    assert json.loads(json.dumps(messages)) == case["messages"]
    pi_estimate = case["estimateContextTokens"]["result"]
    pi_usage = case["getLastAssistantUsage"]["result"]
    for b in case["budgets"]:
        s = b["settings"]
        inp = budget_input_from_session(
            sm,
            model_context_window=b["contextWindow"],
            reserve_tokens=s["reserveTokens"],
            keep_recent_tokens=s["keepRecentTokens"],
        )
        budget = compute_budget(inp)
        # without the exact count of kept messages, the timestamps give the same window
        assert (
            compute_budget(dataclasses.replace(inp, compaction_kept_messages=None)).keep_recent
            == budget.keep_recent
        )
        # Pi's estimate, always computed (stale when unknown)
        assert budget.estimate.to_dict() == pi_estimate
        # provider usage = calculateContextTokens(getLastAssistantUsage(branch))
        assert budget.usage_tokens == (calculate_context_tokens(pi_usage) if pi_usage else None)
        # threshold and Pi's shouldCompact on the estimate
        assert budget.threshold == b["contextWindow"] - s["reserveTokens"]
        if budget.unknown:
            assert budget.should_compact is None and budget.percent is None and budget.estimate_tokens is None
        else:
            assert budget.should_compact is b["shouldCompact"]["result"]
            assert budget.percent == pytest.approx(pi_estimate["tokens"] / b["contextWindow"] * 100)
        # the keep-recent window starts where Pi's prepareCompaction would cut
        prep = b["prepareCompaction"]
        if prep["ok"] and prep.get("firstKeptEntryId"):
            first_kept = prep["firstKeptEntryId"]
            context_ids = case["inspect"]["contextEntries"]
            entries = {e["id"]: e for e in SOURCES[case["source"]] if e.get("type") != "session"}
            # index of the first kept entry's message in the context messages
            msg_index = 0
            for eid in context_ids:
                if eid == first_kept:
                    break
                etype = entries[eid]["type"]
                if etype in ("message", "custom_message", "compaction") or (
                    etype == "branch_summary" and entries[eid].get("summary")
                ):
                    msg_index += 1
            kr = budget.keep_recent
            assert kr.start_index == msg_index, (kr, first_kept)
            summary_kept = kr.includes_previous_summary
            assert kr.message_count == len(messages) - kr.start_index + summary_kept


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda c: c["name"])
def test_unknown_state_follows_pi(case: dict[str, Any]) -> None:
    sm = _manager(case)
    branch = sm.get_branch()
    assert [e["id"] for e in branch] == case["inspect"]["branch"]
    compaction_at = max((i for i, e in enumerate(branch) if e["type"] == "compaction"), default=-1)
    after = [
        e
        for e in branch[compaction_at + 1 :]
        if e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"].get("stopReason") not in ("aborted", "error")
        and calculate_context_tokens(e["message"]["usage"]) > 0
    ]
    expect_unknown = compaction_at >= 0 and not after
    assert has_usage_after_latest_compaction(branch) is (not expect_unknown)
    usage = get_context_usage(branch, sm.build_session_context().messages, 1000)
    assert usage is not None
    if expect_unknown:
        assert usage.tokens is None and usage.percent is None
    else:
        assert usage.tokens == case["estimateContextTokens"]["result"]["tokens"]


def test_fixture_session_right_after_compaction_is_unknown() -> None:
    sm = load_session(FIXTURE)
    sm.branch("e12")  # compaction e11, then a user message, no response yet
    budget = compute_budget(budget_input_from_session(sm, model_context_window=10000))
    assert budget.unknown is True
    assert budget.percent is None and budget.estimate_tokens is None and budget.should_compact is None
    assert budget.level == "ok"  # Pi shows "?" uncoloured
    # the last usage is still reported, labelled as provider usage
    assert budget.usage_tokens == 2300
    # the stale estimate is there for the record: usage of e10 (kept) + trailing estimates
    assert budget.estimate.usage_tokens == 2300
    sm.branch("e13")  # the response after the compaction reported usage
    budget = compute_budget(budget_input_from_session(sm, model_context_window=10000))
    assert (
        budget.unknown is False and budget.estimate_tokens == 2600 and budget.percent == pytest.approx(26.0)
    )


def test_get_context_usage_without_window_is_none() -> None:
    assert get_context_usage([], [], 0) is None


# ---------------------------------------------------------------------------------------------
# budget maths
# ---------------------------------------------------------------------------------------------


def _input(**kw: Any) -> BudgetInput:
    base: dict[str, Any] = {
        "messages": [
            _msg("user", "hello there, please look at the file", 1),
            _msg("assistant", "sure, reading it now", 2, usage=_usage(900)),
            _msg("toolResult", "line one\nline two\n" * 20, 3),
            {
                "role": "compactionSummary",
                "summary": "earlier we did things",
                "tokensBefore": 5000,
                "timestamp": 4,
            },
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "a\nb",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 5,
            },
        ],
        "context_window": 4000,
        "reserve_tokens": 1000,
        "keep_recent_tokens": 50,
    }
    base.update(kw)
    return BudgetInput(**base)


def test_categories_add_up_to_the_total() -> None:
    prompt = "You are a helpful assistant.\n<context>AGENTS.md says be brief</context>\n<skills>one skill</skills>\nAppendix."
    inp = _input(
        system_prompt=prompt,
        system_prompt_parts={
            "context files": "<context>AGENTS.md says be brief</context>",
            "skills list": "<skills>one skill</skills>",
        },
        tools=[
            {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        ],
    )
    b = compute_budget(inp)
    names = [c.name for c in b.categories]
    assert names == ["system prompt", "tool schemas", "context files", "skills list", *MESSAGE_CATEGORIES]
    assert b.tokens == sum(c.tokens for c in b.categories)
    assert b.free_tokens == 4000 - b.tokens
    assert b.category("context files").tokens == count_tokens("<context>AGENTS.md says be brief</context>")
    assert b.category("system prompt").tokens == count_tokens("You are a helpful assistant.\n\n\nAppendix.")
    assert b.category("tool schemas").tokens == count_tokens(
        '{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}'
    )
    msgs = inp.messages
    assert b.category("user").tokens == count_message_tokens(msgs[0]) + count_message_tokens(msgs[4])
    assert b.category("user").count == 2  # the bash execution counts as user (convert_to_llm)
    assert b.category("assistant").tokens == count_message_tokens(msgs[1])
    assert b.category("tool results").tokens == count_message_tokens(msgs[2])
    assert b.category("summaries").tokens == count_message_tokens(msgs[3])
    assert b.system_prompt_known is True


def test_unknown_system_prompt_counts_zero_but_says_unknown() -> None:
    b = compute_budget(_input(system_prompt=None, system_prompt_parts={"context files": "x"}))
    assert b.category("system prompt").known is False and b.category("system prompt").tokens == 0
    assert b.category("context files").known is False
    assert b.tokens == sum(c.tokens for c in b.categories if c.kind == "messages")


def test_threshold_marker_and_should_compact() -> None:
    # estimate = usage 900 + trailing estimates after the assistant message
    b = compute_budget(_input())
    assert b.threshold == 3000
    trailing = sum(estimate_tokens(m) for m in _input().messages[2:])
    assert b.estimate_tokens == 900 + trailing
    assert b.should_compact is False
    big = compute_budget(
        _input(messages=[*_input().messages[:1], _msg("assistant", "x", 2, usage=_usage(3001))])
    )
    assert big.estimate_tokens == 3001 and big.should_compact is True  # strictly greater than 3000
    at = compute_budget(
        _input(messages=[*_input().messages[:1], _msg("assistant", "x", 2, usage=_usage(3000))])
    )
    assert at.should_compact is False
    off = compute_budget(
        _input(compaction_enabled=False, messages=big and [_msg("assistant", "x", 2, usage=_usage(3500))])
    )
    assert off.should_compact is False


@pytest.mark.parametrize(
    ("tokens", "level"),
    [
        (0, "ok"),
        (700, "ok"),
        (701, "warning"),
        (900, "warning"),
        (901, "error"),
        (1000, "error"),
        (1200, "error"),
    ],
)
def test_levels_follow_pis_footer(tokens: int, level: str) -> None:
    b = compute_budget(
        _input(
            context_window=1000,
            reserve_tokens=0,
            messages=[_msg("assistant", "x", 1, usage=_usage(tokens))] if tokens else [],
        )
    )
    assert b.level == level
    assert context_level(tokens / 10) == level


def test_level_boundaries_are_strict() -> None:
    assert context_level(70.0) == "ok"
    assert context_level(70.0000001) == "warning"
    assert context_level(90.0) == "warning"
    assert context_level(90.0000001) == "error"
    assert context_level(None) == "ok"


def test_unknown_flag_from_input() -> None:
    b = compute_budget(_input(compacted_since_last_usage=True, last_usage=_usage(900)))
    assert b.unknown and b.estimate_tokens is None and b.percent is None and b.usage_tokens == 900
    assert b.estimate.tokens > 0  # stale but still computed


def test_keep_recent_window() -> None:
    msgs = [_msg("user", "u" * 400, i) if i % 2 == 0 else _msg("assistant", "a" * 400, i) for i in range(10)]
    # each message estimates 100 tokens; keep 250 -> accumulate 100, 200, 300 at index 7 -> cut at 7
    b = compute_budget(_input(messages=msgs, keep_recent_tokens=250))
    assert b.keep_recent.start_index == 7 and b.keep_recent.message_count == 3 and b.keep_recent.reached
    assert b.keep_recent.estimate_tokens == 300
    assert b.keep_recent.tokens == sum(count_message_tokens(m) for m in msgs[7:])
    # a cut can only land on a cut point: tool results are skipped forward
    msgs2 = [*msgs[:7], _msg("toolResult", "t" * 400, 7), *msgs[8:]]
    b2 = compute_budget(_input(messages=msgs2, keep_recent_tokens=250))
    assert b2.keep_recent.start_index == 8
    # everything fits: Pi keeps from the first cut point
    b3 = compute_budget(_input(messages=msgs, keep_recent_tokens=10**6))
    assert b3.keep_recent.start_index == 0 and not b3.keep_recent.reached
    b4 = compute_budget(_input(messages=[]))
    assert b4.keep_recent.message_count == 0 and b4.tokens == 0


def test_bad_inputs_raise_notebook_error() -> None:
    with pytest.raises(NotebookError, match="context_window"):
        _input(context_window=0)
    with pytest.raises(NotebookError, match="reserve_tokens"):
        _input(reserve_tokens=-1)
    with pytest.raises(NotebookError, match="not part of the system prompt"):
        _input(system_prompt="abc", system_prompt_parts={"context files": "zzz"})
    with pytest.raises(NotebookError, match="clashes"):
        _input(system_prompt="abc", system_prompt_parts={"user": "a"})
    with pytest.raises(NotebookError, match="overlaps"):
        compute_budget(_input(system_prompt="abc", system_prompt_parts={"a": "ab", "b": "bc"}))
    with pytest.raises(NotebookError, match="message 0"):
        compute_budget(_input(messages=["not a message"]))
    with pytest.raises(NotebookError, match="sequence"):
        _input(messages="hello")


def test_to_dict_is_camel_case_json() -> None:
    d = compute_budget(_input(system_prompt="hi")).to_dict()
    assert json.loads(json.dumps(d)) == d
    assert {
        "contextWindow",
        "reserveTokens",
        "threshold",
        "categories",
        "usageTokens",
        "estimate",
        "keepRecent",
    } <= set(d)
    assert d["estimate"].keys() == {"tokens", "usageTokens", "trailingTokens", "lastUsageIndex"}


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (1234, "1.2k"),
        (9999, "10.0k"),
        (10000, "10k"),
        (10500, "11k"),
        (200000, "200k"),
        (999499, "999k"),
        (999500, "1000k"),
        (1000000, "1.0M"),
        (1500000, "1.5M"),
        (12000000, "12M"),
    ],
)
def test_format_tokens_is_pis_footer_format(count: int, text: str) -> None:
    assert format_tokens(count) == text


# ---------------------------------------------------------------------------------------------
# the incremental tracker
# ---------------------------------------------------------------------------------------------


def _long_session(n_turns: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for i in range(n_turns):
        ts = 1_000_000 + i * 10
        msgs.append(_msg("user", f"question {i} " * 5, ts))
        msgs.append(_msg("assistant", f"answer {i} " * 8, ts + 1, usage=_usage(100 + i)))
    return msgs


def test_tracker_counts_only_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = budget_mod.message_token_breakdown

    def spy(message: Any, encoding: str = "o200k_base") -> Any:
        calls.append(message.get("role"))
        return real(message, encoding)

    monkeypatch.setattr(budget_mod, "message_token_breakdown", spy)
    msgs = _long_session(200)
    tracker = BudgetTracker()
    first = tracker.compute(_input(messages=msgs))
    assert len(calls) == 400
    calls.clear()
    # one more turn: only its two messages are counted
    more = [*msgs, *_long_session(201)[400:]]
    second = tracker.compute(_input(messages=more))
    assert calls == ["user", "assistant"]
    assert second.category("user").tokens == first.category("user").tokens + count_message_tokens(more[-2])
    # a rebuilt context (new dicts, same content) is recognised by its signature
    calls.clear()
    rebuilt = [dict(m) for m in more]
    third = tracker.compute(_input(messages=rebuilt))
    assert calls == ["assistant"]  # only the last message, which may still be streaming
    assert third.to_dict() == second.to_dict()
    # the result equals a from-scratch computation
    assert third.to_dict() == compute_budget(_input(messages=rebuilt)).to_dict()


def test_tracker_sees_replaced_and_streaming_messages() -> None:
    msgs = _long_session(3)
    tracker = BudgetTracker()
    tracker.compute(_input(messages=msgs))
    # an older message replaced by a new one (new content) is counted again
    msgs[1] = {**msgs[1], "content": [{"type": "text", "text": "a much longer answer now " * 5}]}
    b = tracker.compute(_input(messages=msgs))
    assert b.to_dict() == compute_budget(_input(messages=msgs)).to_dict()
    # the last message may grow in place while it streams
    msgs[-1]["content"][0]["text"] += " more streamed text" * 10
    b = tracker.compute(_input(messages=msgs))
    assert b.to_dict() == compute_budget(_input(messages=msgs)).to_dict()
    # an older message edited in place needs clear()
    msgs[0]["content"] = "edited " * 40
    tracker.clear()
    assert tracker.compute(_input(messages=msgs)).to_dict() == compute_budget(_input(messages=msgs)).to_dict()


def test_tracker_forgets_messages_that_left_the_context() -> None:
    tracker = BudgetTracker()
    tracker.compute(_input(messages=_long_session(50)))
    tracker.compute(_input(messages=_long_session(2)))
    assert len(tracker._by_key) == 4


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant", "toolResult"]), st.text(max_size=60), st.integers(0, 5000)
        ),
        max_size=12,
    ),
    st.integers(1, 10**6),
    st.integers(0, 5000),
)
def test_budget_invariants(rows: list[tuple[str, str, int]], window: int, reserve: int) -> None:
    msgs = [
        _msg(role, text, i, **({"usage": _usage(u + 11)} if role == "assistant" else {}))
        for i, (role, text, u) in enumerate(rows)
    ]
    b = compute_budget(
        BudgetInput(messages=msgs, context_window=window, reserve_tokens=reserve, system_prompt="sys")
    )
    assert b.tokens == sum(c.tokens for c in b.categories)
    assert b.free_tokens == window - b.tokens
    assert b.threshold == window - reserve
    assert 0 <= b.keep_recent.start_index <= len(msgs)
    assert b.keep_recent.tokens <= sum(c.tokens for c in b.categories if c.kind == "messages")
    assert b.level == context_level(b.percent)
    # incremental == from scratch, also after appending
    tracker = BudgetTracker()
    tracker.compute(
        BudgetInput(
            messages=msgs[: len(msgs) // 2],
            context_window=window,
            reserve_tokens=reserve,
            system_prompt="sys",
        )
    )
    again = tracker.compute(
        BudgetInput(messages=msgs, context_window=window, reserve_tokens=reserve, system_prompt="sys")
    )
    assert again.to_dict() == b.to_dict()


def test_budget_input_from_session_on_pis_fixture() -> None:
    sm = load_session(FIXTURE)
    inp = budget_input_from_session(sm, model_context_window=200000)
    assert inp.system_prompt is None
    branch = get_branch_entries(sm.get_entries(), sm.get_leaf_id())
    b6 = next(e for e in branch if e["id"] == "b6")  # the last assistant message on the branch
    assert inp.last_usage == b6["message"]["usage"]
    assert inp.compacted_since_last_usage is False
    b = compute_budget(inp)
    assert b.usage_tokens == 3100 and b.estimate.last_usage_index == 13
    assert b.message_count == 15


def test_import_is_pure() -> None:
    import subprocess

    code = (
        "import sys, pi_nb.notebook.budget\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pandas','matplotlib','ipywidgets','IPython'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_session_input_is_incremental_and_equal_to_a_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    sm = load_session(FIXTURE)
    tracker = BudgetTracker()

    def same(a: BudgetInput, b: BudgetInput) -> None:
        assert a.messages == b.messages
        assert (a.last_usage, a.compacted_since_last_usage, a.compaction_kept_messages) == (
            b.last_usage,
            b.compacted_since_last_usage,
            b.compaction_kept_messages,
        )
        assert tracker.compute(a).to_dict() == compute_budget(b).to_dict()

    args = {"model_context_window": 9000, "reserve_tokens": 1000, "keep_recent_tokens": 30}
    same(tracker.session_input(sm, **args), budget_input_from_session(sm, **args))
    walks: list[int] = []
    real = sm.build_context_entries
    monkeypatch.setattr(sm, "build_context_entries", lambda: walks.append(1) or real())
    # appended turns: no new walk of the path
    sm.append_message({"role": "user", "content": "next", "timestamp": 2_000_000_000_000})
    sm.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "stopReason": "stop",
            "usage": _usage(4000),
            "timestamp": 2_000_000_000_001,
        }
    )
    inc = tracker.session_input(sm, **args)
    assert walks == []
    same(inc, budget_input_from_session(sm, **args))
    # a navigation rebuilds
    sm.branch("e12")
    walks.clear()
    inc = tracker.session_input(sm, **args)
    assert len(walks) == 1
    same(inc, budget_input_from_session(sm, **args))
    # a compaction appended rebuilds too (the context changes shape)
    sm.branch("e15")
    tracker.session_input(sm, **args)
    sm.append_compaction("again", "e12", 2700)
    walks.clear()
    inc = tracker.session_input(sm, **args)
    assert len(walks) == 1 and inc.compacted_since_last_usage
    same(inc, budget_input_from_session(sm, **args))
