"""Branch summaries and ``navigate_tree`` (spec 9, ports of Pi's tree-navigation tests, 11.7).

ScriptedModel stands in for Pi's faux provider; the session is a real in-memory SessionManager.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.compaction import (
    BRANCH_SUMMARY_PREAMBLE,
    BRANCH_SUMMARY_PROMPT,
    HookRunner,
    RetrySettings,
    SessionBeforeTreeEvent,
    SessionBeforeTreeResult,
    SessionTreeEvent,
    generate_branch_summary,
    navigate_tree,
    prepare_branch_entries,
)
from pi_nb.errors import CompactionError, EntryNotFoundError, SummarizationError
from pi_nb.providers import ScriptedModel
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import estimate_tokens


class Signal:
    aborted = False


def _tree() -> tuple[SessionManager, dict[str, str]]:
    """u1 -> a1 -> u2 -> a2(read+edit) -> r -> a3 (leaf)."""
    sm = SessionManager.in_memory("/tmp/proj")
    m = ScriptedModel()
    ids = {
        "u1": sm.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": "first "}, {"type": "text", "text": "question"}],
                "timestamp": 1,
            }
        ),
        "a1": sm.append_message(m.text("first answer", usage=m.usage(10, 5))),
        "u2": sm.append_message({"role": "user", "content": "second question", "timestamp": 2}),
    }
    msg = m.message(
        [
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/a.ts"}},
            {"type": "toolCall", "id": "c2", "name": "edit", "arguments": {"path": "src/b.ts", "edits": []}},
        ],
        stop_reason="toolUse",
    )
    ids["a2"] = sm.append_message(msg)
    ids["r"] = sm.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "code"}],
            "isError": False,
            "timestamp": 3,
        }
    )
    ids["a3"] = sm.append_message(m.text("second answer"))
    return sm, ids


def _nav(sm: SessionManager, target: str, **kw: Any) -> Any:
    return asyncio.run(navigate_tree(sm, target, **kw))


def _prompt(m: ScriptedModel) -> str:
    return m.requests[-1].context.messages[0]["content"][0]["text"]


def test_to_the_first_user_message_resets_the_leaf() -> None:
    sm, ids = _tree()
    result = _nav(sm, ids["u1"])
    assert result.editor_text == "first question"
    assert sm.get_leaf_id() is None and result.new_leaf_id is None
    assert result.to_dict() == {"editorText": "first question", "cancelled": False}
    assert result.context.messages == []


def test_to_an_assistant_message_keeps_it_as_leaf() -> None:
    sm, ids = _tree()
    result = _nav(sm, ids["a1"])
    assert result.editor_text is None and sm.get_leaf_id() == ids["a1"]
    assert [m["role"] for m in result.context.messages] == ["user", "assistant"]
    assert not any(e["type"] == "branch_summary" for e in sm.get_entries())


def test_same_target_is_a_no_op() -> None:
    sm, ids = _tree()
    before = list(sm.get_entries())
    result = _nav(sm, ids["a3"], summarize=True, model=ScriptedModel())
    assert result.to_dict() == {"cancelled": False}
    assert sm.get_entries() == before


def test_errors() -> None:
    sm, ids = _tree()
    with pytest.raises(CompactionError, match=r"^No model available for summarization$"):
        _nav(sm, ids["a1"], summarize=True)
    with pytest.raises(EntryNotFoundError, match=r"^Entry nope not found$"):
        _nav(sm, "nope")


def test_summarize_to_the_root_user_message() -> None:
    sm, ids = _tree()
    m = ScriptedModel(context_window=50000, max_tokens=64000)
    m.enqueue(m.text("## Goal\nexplored", usage=m.usage(40, 9)))
    result = _nav(sm, ids["u1"], summarize=True, model=m)
    entry = result.summary_entry
    assert entry is not None and entry["type"] == "branch_summary"
    assert entry["parentId"] is None and entry["fromId"] == ids["a3"]
    assert sm.get_leaf_id() == entry["id"] and result.editor_text == "first question"
    assert entry["summary"] == (
        BRANCH_SUMMARY_PREAMBLE
        + "## Goal\nexplored\n\n<read-files>\nsrc/a.ts\n</read-files>\n\n<modified-files>\nsrc/b.ts\n</modified-files>"
    )
    assert entry["details"] == {"readFiles": ["src/a.ts"], "modifiedFiles": ["src/b.ts"]}
    assert entry["usage"]["totalTokens"] == 49 and entry["fromHook"] is False
    assert [m_["role"] for m_ in result.context.messages] == ["branchSummary"]
    options = m.requests[0].options
    assert options.max_tokens == 4096 and options.reasoning is None and options.cache_retention == "none"
    assert m.requests[0].context.tools is None
    text = _prompt(m)
    assert text.endswith("</conversation>\n\n" + BRANCH_SUMMARY_PROMPT)
    assert "[Tool result]" not in text  # tool results are skipped
    assert '[Assistant tool calls]: read(path="src/a.ts"); edit(path="src/b.ts", edits=[])' in text


def test_nested_user_target_summary_hangs_under_the_previous_assistant() -> None:
    sm, ids = _tree()
    m = ScriptedModel()
    m.enqueue(m.text("S"))
    result = _nav(sm, ids["u2"], summarize=True, model=m)
    entry = result.summary_entry
    assert entry["parentId"] == ids["a1"] and result.editor_text == "second question"
    children = [e["id"] for e in sm.get_children(ids["a1"])]
    assert children == [ids["u2"], entry["id"]]


def test_assistant_target_summary_hangs_under_the_target() -> None:
    sm, ids = _tree()
    m = ScriptedModel()
    m.enqueue(m.text("S"))
    result = _nav(sm, ids["a1"], summarize=True, model=m)
    assert result.summary_entry["parentId"] == ids["a1"] and result.editor_text is None
    assert [x["role"] for x in result.context.messages] == ["user", "assistant", "branchSummary"]


def test_abort_during_summarisation_changes_nothing() -> None:
    sm, ids = _tree()
    signal = Signal()
    m = ScriptedModel()

    def respond(ctx: Any, opts: Any) -> dict[str, Any]:
        signal.aborted = True
        return m.text("never used")

    m.enqueue(respond)
    before = list(sm.get_entries())
    result = _nav(sm, ids["a1"], summarize=True, model=m, signal=signal)
    assert result.to_dict() == {"cancelled": True, "aborted": True}
    assert sm.get_entries() == before and sm.get_leaf_id() == ids["a3"]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("length", "Branch summarization failed: generation hit the token cap and the summary is incomplete"),
        ("error", "Branch summarization failed: invalid_request_error"),
        ("tool", "Branch summarization attempted to call a tool"),
    ],
)
def test_failed_summary_raises_and_writes_nothing(reply: str, message: str) -> None:
    sm, ids = _tree()
    m = ScriptedModel()
    if reply == "length":
        m.enqueue(m.text("partial", stop_reason="length"))
    elif reply == "error":
        m.enqueue(m.error("invalid_request_error"))
    else:
        m.enqueue(m.tool_call("read", {"path": "x"}, stop_reason="stop"))
    before = list(sm.get_entries())
    with pytest.raises(SummarizationError, match=f"^{message}$"):
        _nav(sm, ids["a1"], summarize=True, model=m)
    assert sm.get_entries() == before and sm.get_leaf_id() == ids["a3"]


def test_custom_instructions_added_or_replacing() -> None:
    sm, ids = _tree()
    m = ScriptedModel()
    m.enqueue(m.text("S1"), m.text("S2"))
    _nav(sm, ids["a1"], summarize=True, model=m, custom_instructions="MONKEY MONKEY MONKEY")
    assert _prompt(m).endswith(BRANCH_SUMMARY_PROMPT + "\n\nAdditional focus: MONKEY MONKEY MONKEY")
    sm, ids = _tree()
    _nav(sm, ids["a1"], summarize=True, model=m, custom_instructions="ONLY THIS", replace_instructions=True)
    assert _prompt(m).endswith("</conversation>\n\nONLY THIS")


def test_without_summarize_no_summary_and_label_on_target() -> None:
    sm, ids = _tree()
    result = _nav(sm, ids["a1"], label="checkpoint")
    assert not any(e["type"] == "branch_summary" for e in sm.get_entries())
    assert sm.get_label(ids["a1"]) == "checkpoint"
    last = sm.get_entries()[-1]
    assert last["type"] == "label" and last["parentId"] == ids["a1"] and result.new_leaf_id == last["id"]


def test_label_goes_on_the_summary_entry() -> None:
    sm, ids = _tree()
    m = ScriptedModel()
    m.enqueue(m.text("S"))
    result = _nav(sm, ids["a1"], summarize=True, model=m, label="tried plan A")
    assert sm.get_label(result.summary_entry["id"]) == "tried plan A"
    assert sm.get_label(ids["a1"]) is None


def test_descendant_target_has_nothing_to_summarise() -> None:
    sm, ids = _tree()
    _nav(sm, ids["a1"])
    m = ScriptedModel()
    result = _nav(sm, ids["a3"], summarize=True, model=m)
    assert m.requests == [] and result.summary_entry is None and sm.get_leaf_id() == ids["a3"]


def test_branch_of_only_tool_results_gives_no_content_summary() -> None:
    sm, ids = _tree()
    sm.branch(ids["a2"])
    sm.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c2",
            "toolName": "edit",
            "content": [{"type": "text", "text": "ok"}],
            "isError": False,
            "timestamp": 9,
        }
    )
    m = ScriptedModel()
    result = _nav(sm, ids["a3"], summarize=True, model=m)
    assert m.requests == []
    assert result.summary_entry["summary"] == "No content to summarize"
    assert result.summary_entry["details"] == {"readFiles": [], "modifiedFiles": []}
    assert "usage" not in result.summary_entry


def test_hooks_cancel_supply_and_override() -> None:
    sm, ids = _tree()
    hooks = HookRunner()
    hooks.on("session_before_tree", lambda e: {"cancel": True})
    before = list(sm.get_entries())
    assert _nav(sm, ids["a1"], hooks=hooks).to_dict() == {"cancelled": True}
    assert sm.get_entries() == before and sm.get_leaf_id() == ids["a3"]

    seen: list[SessionBeforeTreeEvent] = []
    trees: list[SessionTreeEvent] = []

    def supply(event: SessionBeforeTreeEvent) -> SessionBeforeTreeResult:
        seen.append(event)
        return SessionBeforeTreeResult.coerce(
            {"summary": {"summary": "hook summary", "usage": ScriptedModel.usage(2, 3)}, "label": "hooked"}
        )  # type: ignore[return-value]

    hooks = HookRunner()
    hooks.on("session_before_tree", supply)
    hooks.on("session_tree", trees.append)
    m = ScriptedModel()
    result = _nav(sm, ids["a1"], summarize=True, model=m, hooks=hooks, custom_instructions="ci")
    assert m.requests == []
    entry = result.summary_entry
    assert (
        entry["summary"] == "hook summary"
        and entry["fromHook"] is True
        and entry["usage"]["totalTokens"] == 5
    )
    assert "details" not in entry and sm.get_label(entry["id"]) == "hooked"
    prep = seen[0].preparation
    assert (
        prep.target_id == ids["a1"] and prep.old_leaf_id == ids["a3"] and prep.common_ancestor_id == ids["a1"]
    )
    assert [e["id"] for e in prep.entries_to_summarize] == [ids["u2"], ids["a2"], ids["r"], ids["a3"]]
    assert prep.user_wants_summary and prep.custom_instructions == "ci"
    assert trees[0].old_leaf_id == ids["a3"] and trees[0].from_extension is True
    assert trees[0].new_leaf_id == sm.get_leaf_id() and trees[0].summary_entry == entry


def test_hook_summary_ignored_without_summarize_and_instruction_override() -> None:
    sm, ids = _tree()
    hooks = HookRunner()
    hooks.on("session_before_tree", lambda e: {"summary": {"summary": "unused"}})
    result = _nav(sm, ids["a1"], hooks=hooks)
    assert result.summary_entry is None and sm.get_leaf_id() == ids["a1"]

    sm, ids = _tree()
    hooks = HookRunner()
    hooks.on(
        "session_before_tree", lambda e: {"customInstructions": "FROM HOOK", "replaceInstructions": True}
    )
    m = ScriptedModel()
    m.enqueue(m.text("S"))
    _nav(sm, ids["a1"], summarize=True, model=m, hooks=hooks, custom_instructions="mine")
    assert _prompt(m).endswith("</conversation>\n\nFROM HOOK")


def test_generate_branch_summary_budget_and_limits() -> None:
    sm, ids = _tree()
    entries = sm.get_branch()
    m = ScriptedModel(max_tokens=1000)
    m._context_window = 0  # a model reporting no window (pi_nb's own models refuse 0 where it is set)
    m.enqueue(m.text("S"))
    result = asyncio.run(generate_branch_summary(entries, model=m, reserve_tokens=127990))
    assert m.requests[0].options.max_tokens == 1000
    # budget (128000 fallback) - 127990 = 10 tokens: only the newest message fits
    assert "first question" not in _prompt(m) and "[Assistant]: second answer" in _prompt(m)
    assert result.summary is not None and result.summary.startswith(BRANCH_SUMMARY_PREAMBLE + "S")
    prep = prepare_branch_entries(entries, 10)
    assert [x["role"] for x in prep.messages] == ["assistant"]


def test_generate_branch_summary_outcomes_are_values() -> None:
    sm, ids = _tree()
    entries = sm.get_branch()
    m = ScriptedModel()
    m.enqueue(m.error("terminated"), m.text("after retry"))
    waits: list[int] = []

    async def sleep(ms: int) -> None:
        waits.append(ms)

    result = asyncio.run(generate_branch_summary(entries, model=m, retry=RetrySettings(), sleep=sleep))
    assert result.summary is not None and "after retry" in result.summary and waits == [2000]
    m.enqueue(m.error("bad request"))
    result = asyncio.run(generate_branch_summary(entries, model=m))
    assert result.error == "Branch summarization failed: bad request" and result.summary is None
    assert asyncio.run(generate_branch_summary([], model=m)).to_dict() == {
        "summary": "No content to summarize"
    }


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant", "toolResult", "summary", "compaction"]), st.integers(0, 300)
        ),
        max_size=25,
    ),
    st.integers(-5, 2000),
)
def test_prepare_branch_entries_properties(spec: list[tuple[str, int]], budget: int) -> None:
    m = ScriptedModel()
    entries: list[dict[str, Any]] = []
    for i, (kind, size) in enumerate(spec):
        base = {
            "id": f"e{i}",
            "parentId": f"e{i - 1}" if i else None,
            "timestamp": "2026-01-01T00:00:00.000Z",
        }
        if kind == "user":
            entries.append(
                {
                    **base,
                    "type": "message",
                    "message": {"role": "user", "content": "u" * size, "timestamp": 1},
                }
            )
        elif kind == "assistant":
            entries.append({**base, "type": "message", "message": m.text("a" * size)})
        elif kind == "toolResult":
            tr = {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": [],
                "isError": False,
                "timestamp": 1,
            }
            entries.append({**base, "type": "message", "message": tr})
        elif kind == "summary":
            entries.append({**base, "type": "branch_summary", "fromId": "root", "summary": "s" * size})
        else:
            entries.append(
                {
                    **base,
                    "type": "compaction",
                    "summary": "c" * size,
                    "firstKeptEntryId": "e0",
                    "tokensBefore": 1,
                }
            )
    everything = prepare_branch_entries(entries).messages
    prep = prepare_branch_entries(entries, budget)
    k = len(prep.messages)
    assert prep.messages == everything[len(everything) - k :]  # the newest messages, in order
    assert prep.total_tokens == sum(estimate_tokens(x) for x in prep.messages)
    if budget > 0 and prep.total_tokens > budget:
        oldest = prep.messages[0]
        assert oldest["role"] in ("branchSummary", "compactionSummary")  # the 90 % rule
        assert prep.total_tokens - estimate_tokens(oldest) < 0.9 * budget
    if budget <= 0:
        assert k == len(everything)
