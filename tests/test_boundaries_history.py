"""The seed chapter's boundary tests 4 and 5 (history defences: compaction, branch summaries).

4. Cross the token threshold once through provider usage and once through estimated trailing
   messages; check the kept boundary.
5. Navigate between two sibling leaves once without and once with a summary; check ``fromId``,
   ``parentId`` and the projected messages.

Token sizes are chosen so every estimate is exact: 400 characters = 100 tokens (chars / 4).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_nb.compaction import (
    CompactionSettings,
    navigate_tree,
    prepare_compaction,
    run_compaction,
    should_compact,
)
from pi_nb.messages import BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, convert_to_llm
from pi_nb.providers import ScriptedModel
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import estimate_context_tokens

WINDOW = 2000
SETTINGS_USAGE = CompactionSettings(reserve_tokens=500, keep_recent_tokens=200)  # threshold 1500


def _user(sm: SessionManager, label: str, ts: int) -> str:
    return sm.append_message(
        {"role": "user", "content": label + ":" + "u" * (400 - len(label) - 1), "timestamp": ts}
    )


def _assistant(sm: SessionManager, m: ScriptedModel, label: str, total: int) -> str:
    return sm.append_message(
        m.text(label + ":" + "a" * (400 - len(label) - 1), usage=m.usage(total - 50, 50))
    )


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for msg in messages:
        content = msg.get("content", msg.get("summary"))
        text = content if isinstance(content, str) else content[0].get("text", "") if content else ""
        out.append(text.split(":", 1)[0] if msg["role"] != "compactionSummary" else "SUMMARY")
    return out


def test_4a_threshold_crossed_by_provider_usage() -> None:
    m = ScriptedModel(context_window=WINDOW)
    sm = SessionManager.in_memory("/tmp/proj")
    _user(sm, "u0", 1)
    _assistant(sm, m, "a0", 300)
    _user(sm, "u1", 2)
    _assistant(sm, m, "a1", 700)
    u2 = _user(sm, "u2", 3)
    _assistant(sm, m, "a2", 1600)  # the provider says: 1600 tokens in context

    est = estimate_context_tokens(sm.build_session_context().messages)
    assert (est.tokens, est.usage_tokens, est.trailing_tokens, est.last_usage_index) == (1600, 1600, 0, 5)
    assert should_compact(est.tokens, WINDOW, SETTINGS_USAGE)

    # keep 200: a2 (100) + u2 (100) reach the budget at u2, a turn start -> no split
    prep = prepare_compaction(sm.get_branch(), SETTINGS_USAGE)
    assert prep is not None and prep.first_kept_entry_id == u2 and not prep.is_split_turn
    assert _texts(prep.messages_to_summarize) == ["u0", "a0", "u1", "a1"]

    m.enqueue(m.text("## Goal\nthe first two turns"))
    outcome = asyncio.run(run_compaction(sm, m, SETTINGS_USAGE, reason="threshold"))
    assert outcome.compacted
    entry = sm.get_entries()[-1]
    assert entry["type"] == "compaction" and entry["firstKeptEntryId"] == u2 and entry["tokensBefore"] == 1600
    assert _texts(outcome.context.messages) == ["SUMMARY", "u2", "a2"]
    prompt = m.requests[0].context.messages[0]["content"][0]["text"]
    assert "u1:" in prompt and "u2:" not in prompt  # summarised before the boundary, kept after it
    assert outcome.result.estimated_tokens_after < 1600


def test_4b_threshold_crossed_by_estimated_trailing_messages() -> None:
    m = ScriptedModel(context_window=WINDOW)
    sm = SessionManager.in_memory("/tmp/proj")
    settings = CompactionSettings(reserve_tokens=500, keep_recent_tokens=700)
    _user(sm, "u0", 1)
    _assistant(sm, m, "a0", 300)
    u1 = _user(sm, "u1", 2)
    call = m.tool_call("read", {"path": "big.log"}, id="c1", usage=m.usage(950, 50))  # usage 1000
    sm.append_message(call)
    result_id = sm.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x" * 2400}],
            "isError": False,
            "timestamp": 4,
        }
    )

    messages = sm.build_session_context().messages
    est = estimate_context_tokens(messages)
    # the last usage (1000) is below the threshold; the tool result after it (600 estimated) is not
    assert not should_compact(est.usage_tokens, WINDOW, settings)
    assert (est.usage_tokens, est.trailing_tokens, est.last_usage_index) == (1000, 600, 3)
    assert should_compact(est.tokens, WINDOW, settings)

    # keep 700: tool result 600 + tool call 5 + u1 100 reach it at u1: the whole last turn is kept
    m.enqueue(m.text("## Goal\nfirst turn"))
    outcome = asyncio.run(run_compaction(sm, m, settings, reason="threshold"))
    assert outcome.compacted
    assert outcome.result.first_kept_entry_id == u1
    assert [x["role"] for x in outcome.context.messages] == [
        "compactionSummary",
        "user",
        "assistant",
        "toolResult",
    ]
    assert outcome.context.messages[2]["content"][0]["id"] == "c1"  # the call stays with its result
    assert sm.get_entries()[-1]["type"] == "compaction" and sm.get_entries()[-1]["parentId"] == result_id

    # with a smaller budget the 600-token result alone would exceed it: no cut point at or after a
    # tool result exists, so nothing could be cut and Pi reports nothing to compact
    sm2 = SessionManager.in_memory("/tmp/proj")
    for e in sm.get_branch()[:-1]:
        if e["type"] == "message":
            sm2.append_message(e["message"])
    assert prepare_compaction(sm2.get_branch(), CompactionSettings(keep_recent_tokens=200)) is None


def _siblings() -> tuple[SessionManager, dict[str, str], ScriptedModel]:
    """u0 -> a0 -> {uA -> aA, uB -> aB}; the leaf ends on aB."""
    m = ScriptedModel()
    sm = SessionManager.in_memory("/tmp/proj")
    ids: dict[str, str] = {}
    ids["u0"] = _user(sm, "u0", 1)
    ids["a0"] = _assistant(sm, m, "a0", 200)
    ids["uA"] = _user(sm, "uA", 2)
    ids["aA"] = _assistant(sm, m, "aA", 400)
    sm.branch(ids["a0"])
    ids["uB"] = _user(sm, "uB", 3)
    ids["aB"] = _assistant(sm, m, "aB", 400)
    return sm, ids, m


def test_5_navigate_between_sibling_leaves() -> None:
    sm, ids, m = _siblings()

    # without a summary: the leaf moves, nothing is written, the context is the other branch
    entries_before = len(sm.get_entries())
    plain = asyncio.run(navigate_tree(sm, ids["aA"]))
    assert plain.summary_entry is None and len(sm.get_entries()) == entries_before
    assert sm.get_leaf_id() == ids["aA"] and plain.old_leaf_id == ids["aB"]
    assert _texts(plain.context.messages) == ["u0", "a0", "uA", "aA"]

    # with a summary: back to aB, carrying what branch A found
    m.enqueue(m.text("## Goal\nbranch A failed on src/x.ts"))
    result = asyncio.run(navigate_tree(sm, ids["aB"], summarize=True, model=m))
    entry = result.summary_entry
    assert entry is not None
    assert entry["parentId"] == ids["aB"]  # hangs at the navigation target
    assert entry["fromId"] == ids["aA"]  # the leaf we came from
    assert sm.get_leaf_id() == entry["id"]
    projected = result.context.messages
    assert [x["role"] for x in projected] == ["user", "assistant", "user", "assistant", "branchSummary"]
    assert _texts(projected[:4]) == ["u0", "a0", "uB", "aB"]
    assert projected[4]["fromId"] == ids["aA"] and projected[4]["summary"] == entry["summary"]
    llm = convert_to_llm(projected)
    assert llm[4]["role"] == "user"
    assert llm[4]["content"][0]["text"] == BRANCH_SUMMARY_PREFIX + entry["summary"] + BRANCH_SUMMARY_SUFFIX
    # only branch A's own entries (below the common ancestor a0) were summarised
    prompt = m.requests[0].context.messages[0]["content"][0]["text"]
    assert "uA:" in prompt and "aA:" in prompt and "u0:" not in prompt and "uB:" not in prompt
