"""Session context projection: golden parity with Pi 0.85.0, Pi's own build-context tests, properties."""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb import (
    NO_LEAF,
    EntryCycleError,
    InvalidEntryError,
    SessionContext,
    build_context_entries,
    build_session_context,
    convert_to_llm,
    get_latest_compaction_entry,
    session_entry_to_context_messages,
)
from pi_nb._js import UNDEFINED, js_stringify
from pi_nb.session.context import build_entry_index, get_branch_entries

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
ABSENT = "__absent__"


def load(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


def as_json(value: Any) -> Any:
    """What Pi's JSON answer looks like: NaN -> null, undefined keys dropped (JSON.stringify)."""
    return json.loads(js_stringify(value))


def pi_leaf(leaf: Any) -> Any:
    """Pi's leafId in pi_nb's spelling: JS ``null`` is ``NO_LEAF`` (``None`` means "not given")."""
    return NO_LEAF if leaf is None else leaf


def leaf_kwargs(row: dict[str, Any]) -> dict[str, Any]:
    return {} if row.get("absent") else {"leaf_id": pi_leaf(row["leafId"])}


TREE_FILES = sorted(p.name for p in GOLDEN.glob("session_trees_[0-9]*.json"))
TREES = [(f, i, t) for f in TREE_FILES for i, t in enumerate(load(f)["cases"])]


# ---------------------------------------------------------------------------------------------
# Golden parity: random trees, every leaf
# ---------------------------------------------------------------------------------------------


def test_golden_has_enough_trees() -> None:
    assert len(TREES) >= 300
    kinds = {e.get("type") for _, _, t in TREES for e in t["entries"]}
    assert kinds >= {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }


@pytest.mark.parametrize(("fname", "n", "tree"), TREES, ids=[f"{f}#{i}" for f, i, _ in TREES])
def test_golden_tree(fname: str, n: int, tree: dict[str, Any]) -> None:
    entries = tree["entries"]
    snapshot = copy.deepcopy(entries)
    per_entry = tree["perEntry"]

    def ctx_of(i: int) -> list[Any]:
        return per_entry[i].get("ctx", [entries[i].get("message")])

    def llm_of(i: int) -> list[Any]:
        return per_entry[i].get("llm", ctx_of(i))

    pos = {id(e): i for i, e in enumerate(entries)}
    for i, e in enumerate(entries):
        mine = session_entry_to_context_messages(e)
        assert as_json(mine) == ctx_of(i), f"sessionEntryToContextMessages entry {i}"
        assert as_json(convert_to_llm(mine)) == llm_of(i), f"convertToLlm entry {i}"

    index = build_entry_index(entries)
    for row in tree["leaves"]:
        kw = leaf_kwargs(row)
        ce = build_context_entries(entries, **kw)
        # Pi answers with entry objects: compare them as JSON, position by position
        assert [as_json(e) for e in ce] == [entries[i] for i in row["ctx"]], f"buildContextEntries {row}"
        ctx = build_session_context(entries, **kw)
        expected_messages = [m for i in row["ctx"] for m in ctx_of(i)]
        assert as_json(ctx.to_dict()) == {"messages": expected_messages, **row["settings"]}, f"leaf {row}"
        expected_llm = [m for i in row["ctx"] for m in llm_of(i)]
        assert as_json(convert_to_llm(ctx.messages)) == expected_llm, f"convertToLlm leaf {row}"
        # the same with a prebuilt index; the entries returned are the input objects themselves
        again = build_context_entries(entries, by_id=index, **kw)
        assert [pos[id(e)] for e in again] == [pos[id(e)] for e in ce]
    latest = get_latest_compaction_entry(entries)
    if tree["latestCompaction"] is None:
        assert latest is None
    else:
        assert latest is entries[tree["latestCompaction"]]
    assert entries == snapshot, "inputs must not be mutated"


# ---------------------------------------------------------------------------------------------
# Golden parity: the oracle's fixture session, every leaf, full answers
# ---------------------------------------------------------------------------------------------

FIXTURE = load("session_trees_fixture.json")
FIXTURE_ENTRIES = [
    json.loads(line)
    for line in (HERE / "fixtures" / "pi_session.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
][1:]


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[repr(c["leaf"]) for c in FIXTURE["cases"]])
def test_fixture_session(case: dict[str, Any]) -> None:
    kw = {} if case["leaf"] == ABSENT else {"leaf_id": pi_leaf(case["leaf"])}
    sc = build_session_context(FIXTURE_ENTRIES, **kw)
    assert as_json(sc.to_dict()) == case["buildSessionContext"]["result"]
    assert as_json(build_context_entries(FIXTURE_ENTRIES, **kw)) == case["buildContextEntries"]["result"]
    assert as_json(convert_to_llm(sc.messages)) == case["convertToLlm"]["result"]


def test_fixture_session_shape() -> None:
    ctx = build_session_context(FIXTURE_ENTRIES)  # leaf = last entry (b9)
    roles = [m["role"] for m in ctx.messages]
    assert roles[:3] == ["user", "assistant", "toolResult"]
    assert "branchSummary" in roles and "custom" in roles and "bashExecution" in roles
    assert ctx.thinking_level == "high"
    assert ctx.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}


# ---------------------------------------------------------------------------------------------
# Failures Pi throws on
# ---------------------------------------------------------------------------------------------

MESSAGES_GOLDEN = load("session_trees_messages.json")
FAILURES = [c["failure"] for c in MESSAGES_GOLDEN["cases"] if "failure" in c]


@pytest.mark.parametrize("case", FAILURES, ids=[c["name"] for c in FAILURES])
def test_failures_pi_throws_on(case: dict[str, Any]) -> None:
    assert case["response"]["ok"] is False
    expected = {
        "self-parent": EntryCycleError,
        "two-cycle": EntryCycleError,
        "null message": InvalidEntryError,
    }
    with pytest.raises(expected[case["name"]]):
        build_session_context(case["args"]["entries"])


def test_cycle_only_matters_on_the_walked_path() -> None:
    entries = [msg("a", None, "ok"), msg("b", "b", "self"), msg("c", "a", "leaf")]
    assert texts(build_session_context(entries)) == ["ok", "leaf"]
    with pytest.raises(EntryCycleError, match="Entry b"):
        build_session_context(entries, "b")
    with pytest.raises(EntryCycleError):
        build_context_entries(entries, "b")
    with pytest.raises(EntryCycleError):
        get_branch_entries(entries, "b")


def test_non_object_entries_are_rejected() -> None:
    with pytest.raises(InvalidEntryError):
        build_session_context([None])  # type: ignore[list-item]
    with pytest.raises(InvalidEntryError):
        session_entry_to_context_messages("message")  # type: ignore[arg-type]
    with pytest.raises(InvalidEntryError):
        build_entry_index([{"id": ["unhashable"], "parentId": None}])


# ---------------------------------------------------------------------------------------------
# Pi's build-context.test.ts (spec §11.6), ported. All timestamps are equal, as in Pi's tests.
# ---------------------------------------------------------------------------------------------

TS = "2025-01-01T00:00:00Z"


def msg(eid: str, parent: str | None, text: str, role: str = "user") -> dict[str, Any]:
    if role == "user":
        m: dict[str, Any] = {"role": "user", "content": text, "timestamp": 1}
    else:
        m = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-test",
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 1,
        }
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": TS, "message": m}


def asst(eid: str, parent: str | None, text: str) -> dict[str, Any]:
    return msg(eid, parent, text, role="assistant")


def compaction(eid: str, parent: str | None, summary: str, first_kept: str) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": 1000,
    }


def branch_summary(eid: str, parent: str | None, summary: str, from_id: str) -> dict[str, Any]:
    return {
        "type": "branch_summary",
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
        "fromId": from_id,
        "summary": summary,
    }


def thinking(eid: str, parent: str | None, level: str) -> dict[str, Any]:
    return {
        "type": "thinking_level_change",
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
        "thinkingLevel": level,
    }


def model_change(eid: str, parent: str | None, provider: str, model_id: str) -> dict[str, Any]:
    return {
        "type": "model_change",
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
        "provider": provider,
        "modelId": model_id,
    }


def custom(eid: str, parent: str | None) -> dict[str, Any]:
    return {
        "type": "custom",
        "customType": "state",
        "data": {"x": 1},
        "id": eid,
        "parentId": parent,
        "timestamp": TS,
    }


def texts(ctx: SessionContext) -> list[str]:
    out = []
    for m in ctx.messages:
        if m["role"] == "user":
            c = m["content"]
            out.append(c if isinstance(c, str) else "".join(b.get("text", "") for b in c))
        elif m["role"] == "assistant":
            out.append("".join(b.get("text", "") for b in m["content"] if b["type"] == "text"))
        else:
            out.append(m["role"])
    return out


def test_empty_entries() -> None:
    ctx = build_session_context([])
    assert ctx.to_dict() == {"messages": [], "thinkingLevel": "off", "model": None}
    assert build_context_entries([]) == []


def test_single_and_simple_conversation() -> None:
    assert texts(build_session_context([msg("1", None, "hello")])) == ["hello"]
    entries = [msg("1", None, "hello"), asst("2", "1", "hi there"), msg("3", "2", "how are you")]
    ctx = build_session_context(entries)
    assert texts(ctx) == ["hello", "hi there", "how are you"]
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user"]


def test_thinking_level_is_tracked() -> None:
    entries = [msg("1", None, "hello"), thinking("2", "1", "high"), asst("3", "2", "thinking hard")]
    ctx = build_session_context(entries)
    assert ctx.thinking_level == "high"
    assert len(ctx.messages) == 2


def test_model_from_assistant_message() -> None:
    ctx = build_session_context([msg("1", None, "hello"), asst("2", "1", "hi")])
    assert ctx.model == {"provider": "anthropic", "modelId": "claude-test"}


def test_assistant_overrides_earlier_model_change() -> None:
    entries = [model_change("1", None, "openai", "gpt-4"), msg("2", "1", "hello"), asst("3", "2", "hi")]
    assert build_session_context(entries).model == {"provider": "anthropic", "modelId": "claude-test"}
    # and a later model_change overrides the assistant
    entries.append(model_change("4", "3", "openai", "gpt-5"))
    assert build_session_context(entries).model == {"provider": "openai", "modelId": "gpt-5"}


def test_compaction_keeps_from_first_kept() -> None:
    entries = [
        msg("1", None, "first"),
        asst("2", "1", "response1"),
        msg("3", "2", "second"),
        asst("4", "3", "response2"),
        compaction("5", "4", "Summary of first two turns", "3"),
        msg("6", "5", "third"),
        asst("7", "6", "response3"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx.messages) == 5
    assert ctx.messages[0]["role"] == "compactionSummary"
    assert ctx.messages[0]["summary"] == "Summary of first two turns"  # type: ignore[typeddict-item]
    assert texts(ctx)[1:] == ["second", "response2", "third", "response3"]


def test_compaction_keeping_from_the_first_entry() -> None:
    entries = [
        msg("1", None, "first"),
        asst("2", "1", "response1"),
        compaction("3", "2", "Empty summary", "1"),
        msg("4", "3", "second"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx.messages) == 4
    assert texts(ctx) == ["compactionSummary", "first", "response1", "second"]


def test_two_compactions_use_the_latest() -> None:
    entries = [
        msg("1", None, "a"),
        asst("2", "1", "b"),
        compaction("3", "2", "First summary", "1"),
        msg("4", "3", "c"),
        asst("5", "4", "d"),
        compaction("6", "5", "Second summary", "4"),
        msg("7", "6", "e"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx.messages) == 4
    assert ctx.messages[0]["summary"] == "Second summary"  # type: ignore[typeddict-item]
    assert texts(ctx)[1:] == ["c", "d", "e"]


def test_build_context_entries_with_custom_entries() -> None:
    entries = [
        msg("1", None, "u1"),
        custom("2", "1"),
        asst("3", "2", "a3"),
        custom("4", "3"),
        msg("5", "4", "u5"),
        compaction("6", "5", "summary", "4"),
        custom("7", "6"),
        asst("8", "7", "a8"),
    ]
    assert [e["id"] for e in build_context_entries(entries)] == ["6", "4", "5", "7", "8"]
    assert [m["role"] for m in build_session_context(entries).messages] == [
        "compactionSummary",
        "user",
        "assistant",
    ]


def test_thinking_level_from_full_path_even_if_compacted_away() -> None:
    entries = [
        msg("1", None, "a"),
        thinking("2", "1", "high"),
        asst("3", "2", "b"),
        msg("4", "3", "c"),
        compaction("5", "4", "summary", "4"),
        asst("6", "5", "d"),
    ]
    ctx = build_session_context(entries)
    assert ctx.thinking_level == "high"
    assert texts(ctx) == ["compactionSummary", "c", "d"]


def test_branches_select_the_right_path() -> None:
    entries = [
        msg("1", None, "start"),
        asst("2", "1", "response"),
        msg("3", "2", "branch A"),
        msg("4", "2", "branch B"),
    ]
    assert texts(build_session_context(entries, "3")) == ["start", "response", "branch A"]
    assert texts(build_session_context(entries, "4")) == ["start", "response", "branch B"]


def test_branch_summary_in_path() -> None:
    entries = [
        msg("1", None, "start"),
        asst("2", "1", "response"),
        msg("3", "2", "abandoned path"),
        branch_summary("4", "2", "Summary of abandoned work", "3"),
        msg("5", "4", "new direction"),
    ]
    ctx = build_session_context(entries, "5")
    assert len(ctx.messages) == 4
    assert ctx.messages[2]["role"] == "branchSummary"
    assert ctx.messages[2]["summary"] == "Summary of abandoned work"  # type: ignore[typeddict-item]
    assert texts(ctx) == ["start", "response", "branchSummary", "new direction"]


def test_complex_tree_with_compaction_and_branch_summary() -> None:
    entries = [
        msg("1", None, "start"),
        asst("2", "1", "r1"),
        msg("3", "2", "q2"),
        asst("4", "3", "r2"),
        compaction("5", "4", "Compacted history", "3"),
        msg("6", "5", "q3"),
        asst("7", "6", "r3"),
        # side branch from 2 with a summary of the abandoned main line
        branch_summary("8", "2", "Tried wrong approach", "7"),
        msg("9", "8", "better approach"),
    ]
    main = build_session_context(entries, "7")
    assert texts(main) == ["compactionSummary", "q2", "r2", "q3", "r3"]
    side = build_session_context(entries, "9")
    assert texts(side) == ["start", "r1", "branchSummary", "better approach"]
    assert side.messages[2]["summary"] == "Tried wrong approach"  # type: ignore[typeddict-item]


def test_unknown_leaf_falls_back_to_last_entry() -> None:
    entries = [msg("1", None, "hello"), asst("2", "1", "hi")]
    assert texts(build_session_context(entries, "nonexistent")) == ["hello", "hi"]
    assert texts(build_session_context(entries, "")) == ["hello", "hi"]


def test_orphan_parent_gives_only_the_orphan() -> None:
    entries = [msg("1", "missing", "orphan")]
    assert texts(build_session_context(entries)) == ["orphan"]
    entries = [msg("1", None, "root"), msg("2", "gone", "orphan"), msg("3", "2", "child")]
    assert texts(build_session_context(entries)) == ["orphan", "child"]


def test_null_leaf_gives_empty_context_but_absent_leaf_the_last_entry() -> None:
    entries = [thinking("1", None, "high"), msg("2", "1", "hello")]
    assert build_session_context(entries, NO_LEAF).to_dict() == {
        "messages": [],
        "thinkingLevel": "off",
        "model": None,
    }
    assert build_context_entries(entries, NO_LEAF) == []
    assert texts(build_session_context(entries, UNDEFINED)) == ["hello"]
    assert build_session_context(entries).thinking_level == "high"


def test_label_and_custom_and_info_entries_are_not_in_context() -> None:
    entries = [
        msg("1", None, "hello"),
        {"type": "label", "id": "2", "parentId": "1", "timestamp": TS, "targetId": "1", "label": "x"},
        {"type": "session_info", "id": "3", "parentId": "2", "timestamp": TS, "name": "n"},
        custom("4", "3"),
        asst("5", "4", "hi"),
    ]
    assert texts(build_session_context(entries)) == ["hello", "hi"]
    assert [e["id"] for e in build_context_entries(entries)] == ["1", "2", "3", "4", "5"]


def test_compaction_whose_first_kept_is_not_before_it() -> None:
    entries = [msg("1", None, "a"), compaction("2", "1", "S", "3"), msg("3", "2", "b")]
    assert [e["id"] for e in build_context_entries(entries)] == ["2", "3"]


# ---------------------------------------------------------------------------------------------
# Details: timestamps, message copies, helpers
# ---------------------------------------------------------------------------------------------


def test_summary_messages_take_the_entry_timestamp_in_ms() -> None:
    (m,) = session_entry_to_context_messages(
        compaction("c", None, "S", "x") | {"timestamp": "2026-01-01T00:00:01.5Z"}
    )
    assert m == {
        "role": "compactionSummary",
        "summary": "S",
        "tokensBefore": 1000,
        "timestamp": 1767225601500,
    }
    (b,) = session_entry_to_context_messages(branch_summary("b", None, "S", "x") | {"timestamp": "nope"})
    assert math.isnan(b["timestamp"])
    assert as_json(b) == {"role": "branchSummary", "summary": "S", "fromId": "x", "timestamp": None}
    assert session_entry_to_context_messages(branch_summary("b", None, "", "x")) == []


def test_null_content_becomes_empty_list_for_the_three_llm_roles_only() -> None:
    for role in ("user", "assistant", "toolResult"):
        entry = {
            "type": "message",
            "id": "1",
            "parentId": None,
            "timestamp": TS,
            "message": {"role": role, "content": None},
        }
        assert session_entry_to_context_messages(entry) == [{"role": role, "content": []}]
        entry["message"] = {"role": role, "timestamp": 2}
        assert session_entry_to_context_messages(entry) == [{"role": role, "timestamp": 2, "content": []}]
    bash = {
        "type": "message",
        "id": "1",
        "parentId": None,
        "timestamp": TS,
        "message": {"role": "bashExecution"},
    }
    assert session_entry_to_context_messages(bash) == [{"role": "bashExecution"}]


def test_returned_messages_are_new_top_level_dicts() -> None:
    entries = [msg("1", None, "hello"), asst("2", "1", "hi")]
    ctx = build_session_context(entries)
    assert ctx.messages[0] == entries[0]["message"] and ctx.messages[0] is not entries[0]["message"]
    ctx.messages[0]["content"] = "changed"
    assert entries[0]["message"]["content"] == "hello"
    # nested values are shared, as in Pi
    assert ctx.messages[1]["content"] is entries[1]["message"]["content"]


def test_get_branch_entries() -> None:
    entries = [msg("1", None, "a"), asst("2", "1", "b"), msg("3", "2", "c"), msg("4", "2", "d")]
    assert [e["id"] for e in get_branch_entries(entries, "3")] == ["1", "2", "3"]
    assert [e["id"] for e in get_branch_entries(entries, "4")] == ["1", "2", "4"]
    assert get_branch_entries(entries, None) == []
    assert get_branch_entries(entries, "nope") == []  # no fallback, unlike the projection
    assert [e["id"] for e in get_branch_entries([msg("x", "missing", "o")], "x")] == ["x"]


def test_latest_compaction_is_by_list_order_not_path() -> None:
    entries = [msg("1", None, "a"), compaction("2", "1", "S1", "1"), compaction("3", None, "S2", "1")]
    assert get_latest_compaction_entry(entries) is entries[2]
    assert get_latest_compaction_entry(entries[:1]) is None


def test_duplicate_ids_last_wins_in_the_index() -> None:
    entries = [msg("1", None, "first"), msg("2", "1", "child"), msg("1", None, "second")]
    # leaf "2" walks to the *last* entry with id "1"
    assert texts(build_session_context(entries, "2")) == ["second", "child"]


def test_session_context_to_dict_and_defaults() -> None:
    ctx = SessionContext()
    assert ctx.to_dict() == {"messages": [], "thinkingLevel": "off", "model": None}
    odd = build_session_context(
        [{"type": "thinking_level_change", "id": "1", "parentId": None, "timestamp": TS}]
    )
    assert odd.thinking_level is UNDEFINED
    assert odd.to_dict() == {"messages": [], "model": None}
    partial = build_session_context(
        [{"type": "model_change", "id": "1", "parentId": None, "timestamp": TS, "provider": "p"}]
    )
    assert partial.model == {"provider": "p"}


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


@st.composite
def trees(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 25))
    entries: list[dict[str, Any]] = []
    for i in range(n):
        eid = f"e{i}"
        parent = draw(
            st.one_of(st.none(), st.sampled_from([f"e{j}" for j in range(i)] or ["gone"]), st.just("gone"))
        )
        kind = draw(st.sampled_from(["user", "assistant", "compaction", "branch", "thinking", "custom"]))
        if kind == "user":
            entries.append(msg(eid, parent, f"u{i}"))
        elif kind == "assistant":
            entries.append(asst(eid, parent, f"a{i}"))
        elif kind == "compaction":
            entries.append(compaction(eid, parent, f"s{i}", f"e{draw(st.integers(0, n))}"))
        elif kind == "branch":
            entries.append(branch_summary(eid, parent, draw(st.sampled_from(["", f"b{i}"])), "x"))
        elif kind == "thinking":
            entries.append(thinking(eid, parent, draw(st.sampled_from(["low", "high"]))))
        else:
            entries.append(custom(eid, parent))
    return entries


@settings(max_examples=150, deadline=None)
@given(trees(), st.data())
def test_context_entries_are_drawn_from_the_path(entries: list[dict[str, Any]], data: st.DataObject) -> None:
    leaf = data.draw(st.sampled_from([e["id"] for e in entries]))
    path = get_branch_entries(entries, leaf)
    assert path[-1]["id"] == leaf
    ids = [id(e) for e in path]
    ce = build_context_entries(entries, leaf)
    comps = [e for e in path if e["type"] == "compaction"]
    if not comps:
        assert [id(e) for e in ce] == ids
    else:
        assert ce[0] is comps[-1]
        # after the compaction, the kept entries appear in path order
        rest = [ids.index(id(e)) for e in ce[1:]]
        assert rest == sorted(rest)
        if path[-1] is not comps[-1]:
            assert ce[-1] is path[-1]
    ctx = build_session_context(entries, leaf)
    assert len(ctx.messages) == sum(len(session_entry_to_context_messages(e)) for e in ce)
    levels = [e["thinkingLevel"] for e in path if e["type"] == "thinking_level_change"]
    assert ctx.thinking_level == (levels[-1] if levels else "off")


def test_index_is_built_once_linear_size() -> None:
    # a long linear session: the walk visits every entry once (no quadratic re-indexing)
    n = 20_000
    entries = [msg("e0", None, "start")] + [msg(f"e{i}", f"e{i - 1}", str(i)) for i in range(1, n)]
    ctx = build_session_context(entries)
    assert len(ctx.messages) == n
    assert sys.getrecursionlimit() < n  # the walk is iterative


# ---------------------------------------------------------------------------------------------
# Differential check against the live oracle (optional; the golden files above are the coverage)
# ---------------------------------------------------------------------------------------------

ORACLE_DIR = HERE.parent.parent / "shared" / "pi-oracle"


def _oracle_available() -> bool:
    if not (ORACLE_DIR / "oracle_client.py").exists():
        return False
    sys.path.insert(0, str(ORACLE_DIR))
    try:
        from oracle_client import oracle_available  # type: ignore[import-not-found]
    except ImportError:
        return False
    return bool(oracle_available())


@pytest.mark.oracle
@pytest.mark.skipif(not _oracle_available(), reason="pi-oracle not installed")
def test_random_trees_against_live_oracle() -> None:
    import importlib.util
    import random

    from oracle_client import Oracle

    spec = importlib.util.spec_from_file_location("make_session_trees", GOLDEN / "make_session_trees.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    rng = random.Random(777)  # a different seed than the recorded trees
    with Oracle() as o:
        for n in range(8):
            entries = gen.random_tree(rng, n)
            for leaf in [*(e["id"] for e in entries), ABSENT, None]:
                args = {"entries": entries} | ({} if leaf == ABSENT else {"leafId": leaf})
                kw = {} if leaf == ABSENT else {"leaf_id": pi_leaf(leaf)}
                expected = o.call("buildSessionContext", **args)
                mine = build_session_context(entries, **kw)
                assert as_json(mine.to_dict()) == expected
                assert as_json(convert_to_llm(mine.messages)) == o.call(
                    "convertToLlm", messages=expected["messages"]
                )


def test_none_is_not_given_and_no_leaf_is_pis_null() -> None:
    """No trap: ``None`` means the same as leaving the leaf out; Pi's ``null`` leaf is ``NO_LEAF``."""
    entries = [msg("1", None, "hello"), asst("2", "1", "hi")]
    assert build_session_context(entries, None) == build_session_context(entries)
    assert texts(build_session_context(entries, None)) == ["hello", "hi"]
    assert build_session_context(entries, NO_LEAF).messages == []
    assert build_context_entries(entries, NO_LEAF) == []
    assert build_context_entries(entries, None) == build_context_entries(entries)
