"""The Claude Code transcript reader (pi_nb.harness.claude_code), on real public transcripts.

Every check that counts something (tokens, tool results, images, compactions, lines) counts it a
second time straight from the JSONL file with the standard library, independently of the reader.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_nb.errors import InvalidSessionFileError
from pi_nb.harness import claude_code, detect_harness, read_foreign, read_foreign_bytes
from pi_nb.messages import convert_to_llm
from pi_nb.providers.anthropic_provider import to_anthropic_messages
from pi_nb.providers.base import Context
from pi_nb.providers.catalog import calculate_cost, find_model
from pi_nb.session.context import build_session_context, get_branch_entries
from pi_nb.session.source import load_session_file

FIXTURES = Path(__file__).parent / "fixtures" / "other_agents" / "claude_code"
SHOWCASE = FIXTURES / "daaain_showcase" / "55550000-0000-4000-8000-000000000001.jsonl"
SUBAGENT = (
    FIXTURES
    / "daaain_showcase"
    / "55550000-0000-4000-8000-000000000001"
    / "subagents"
    / "agent-showcol1.jsonl"
)

#: every fixture read whole, with the problems it must report (1-based lines)
EXPECTED_PROBLEMS: dict[str, list[int]] = {
    "ccviewer_1af7fc5e.jsonl": [],
    "ccviewer_5c0375b4_first32.jsonl": [],
    "ccviewer_agent-test-hash-123.jsonl": [],
    "ccviewer_fe5e1c67_first37.jsonl": [],
    "daaain_dag_compact_after_rewind.jsonl": [],
    "daaain_edge_cases.jsonl": [11, 13, 15, 16],  # no message object, "massive error", 42, [1]
    "daaain_sidechain_integrated.jsonl": [],
    "daaain_todowrite.jsonl": [],
    "kvsankar_compaction.jsonl": [],
    "kvsankar_fork.jsonl": [],
    "kvsankar_golden.jsonl": [],
    "kvsankar_real_session.jsonl": [],
    "kvsankar_rejection.jsonl": [],
    "synthetic_features.jsonl": [],
    "synthetic_corrupt.jsonl": [2, 3, 4, 7],
    str(SHOWCASE.relative_to(FIXTURES)): [],
    str(SUBAGENT.relative_to(FIXTURES)): [],
}
ALL = sorted(EXPECTED_PROBLEMS)


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for each line that is a JSON object (stdlib json, bad bytes replaced)."""
    out = []
    for n, line in enumerate(path.read_bytes().split(b"\n"), 1):
        try:
            value = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append((n, value))
    return out


def _read(name: str) -> Any:
    return claude_code.read((FIXTURES / name).read_bytes(), str(FIXTURES / name))


def _messages(fs: Any, role: str) -> list[dict[str, Any]]:
    return [e["message"] for e in fs.entries[1:] if e["type"] == "message" and e["message"]["role"] == role]


# ---------------------------------------------------------------------------------------------
# every fixture


@pytest.mark.parametrize("name", ALL)
def test_reads_with_exactly_the_expected_problems(name: str) -> None:
    fs = _read(name)
    assert [n for n, _ in fs.problems] == EXPECTED_PROBLEMS[name]
    assert fs.harness == "claude-code"
    header = fs.header
    assert header["type"] == "session" and header["version"] == 3 and header["harness"] == "claude-code"
    first = next(r for _, r in _records(FIXTURES / name) if isinstance(r.get("timestamp"), str))
    assert header["timestamp"] == first["timestamp"]


@pytest.mark.parametrize("name", ALL)
def test_detected_as_claude_code(name: str) -> None:
    assert detect_harness(FIXTURES / name) == "claude-code"


@pytest.mark.parametrize("name", ALL)
def test_every_parent_exists_and_ids_are_unique(name: str) -> None:
    fs = _read(name)
    ids = [e["id"] for e in fs.entries[1:]]
    assert len(ids) == len(set(ids))
    for e in fs.entries[1:]:
        assert e["parentId"] is None or e["parentId"] in ids, e


@pytest.mark.parametrize("name", ALL)
def test_leaf_is_the_main_chains_last_entry(name: str) -> None:
    fs = _read(name)
    recs = _records(FIXTURES / name)
    conv = [
        r
        for _, r in recs
        if r.get("type") in ("user", "assistant", "system") and isinstance(r.get("uuid"), str)
    ]
    main = [r for r in conv if r.get("isSidechain") is not True] or conv
    manager = fs.manager()
    leaf = manager.get_leaf_entry()
    assert leaf is fs.entries[-1] or leaf["id"] == fs.entries[-1]["id"]
    if main:
        line = next(n for n, r in recs if r is main[-1])
        # the record's own entry, or the entry it was merged into / the compaction it belongs to
        assert line in _lines_of(leaf)


def _lines_of(entry: dict[str, Any]) -> set[int]:
    """The source lines an entry was read from (its own, merged records', its compact summary's)."""
    raw = entry.get("raw") or {}
    lines = {raw["line"]} | {m["line"] for m in raw.get("merged", [])}
    if "summaryRecord" in raw:
        lines.add(raw["summaryRecord"]["line"])
    return lines


@pytest.mark.parametrize("name", ALL)
def test_context_and_tree_through_the_session_manager(name: str) -> None:
    fs = _read(name)
    manager = fs.manager()
    entries = manager.get_entries()
    assert len(entries) == len(fs.entries) - 1
    ctx = manager.build_session_context()
    assert ctx.messages == build_session_context(entries).messages
    tree = manager.get_tree()
    count = 0
    stack = list(tree)
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children)
    assert count == len(entries)  # every entry is in the tree
    for m in ctx.messages:
        assert m["role"] in ("user", "assistant", "toolResult", "custom", "compactionSummary")
    if any(m["role"] == "assistant" for m in ctx.messages):
        assert ctx.model is not None and ctx.model["provider"] == "anthropic"


def _dedup_usage(recs: list[tuple[int, dict[str, Any]]], keep: str = "last") -> dict[str, int]:
    """One usage per API response (message.id, requestId), computed here: the ``"last"`` record's
    (pi_nb's rule) or the ``"first"`` one's (ccusage's)."""
    by_key: dict[Any, dict[str, Any]] = {}
    for i, (_, r) in enumerate(recs):
        msg = r.get("message")
        if r.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        key = (msg.get("id"), r.get("requestId"), r.get("isSidechain") is True) if msg.get("id") else i
        u = msg.get("usage") if isinstance(msg.get("usage"), dict) else {}
        if key not in by_key or keep == "last":
            by_key[key] = u
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "messages": len(by_key)}
    for u in by_key.values():
        totals["input"] += u.get("input_tokens") or 0
        totals["output"] += u.get("output_tokens") or 0
        totals["cacheRead"] += u.get("cache_read_input_tokens") or 0
        totals["cacheWrite"] += u.get("cache_creation_input_tokens") or 0
    return totals


@pytest.mark.parametrize("name", ALL)
def test_token_sums_equal_an_independent_dedup_of_the_file(name: str) -> None:
    fs = _read(name)
    want = _dedup_usage(_records(FIXTURES / name))
    got = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "messages": 0}
    for m in _messages(fs, "assistant"):
        got["messages"] += 1
        for k in ("input", "output", "cacheRead", "cacheWrite"):
            got[k] += m["usage"][k]
        u = m["usage"]
        assert u["totalTokens"] == u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"]
    assert got == want


@pytest.mark.parametrize("name", ALL)
def test_one_tool_result_per_tool_result_block(name: str) -> None:
    fs = _read(name)
    recs = _records(FIXTURES / name)
    blocks = [
        b
        for _, r in recs
        if r.get("type") == "user"
        and isinstance(r.get("message"), dict)
        and isinstance(r["message"].get("content"), list)
        for b in r["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    results = _messages(fs, "toolResult")
    assert len(results) == len(blocks)
    assert [m["toolCallId"] for m in results] == [b.get("tool_use_id") for b in blocks]
    assert [m["isError"] for m in results] == [b.get("is_error") is True for b in blocks]
    names = {
        b["id"]: b["name"]
        for _, r in recs
        if r.get("type") == "assistant" and isinstance(r.get("message"), dict)
        for b in r["message"].get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    for m in results:
        assert m["toolName"] == names.get(m["toolCallId"], "")


def _count_images(value: Any) -> int:
    if isinstance(value, list):
        return sum(_count_images(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("source"), dict):
            return 1
        return _count_images(value.get("content")) if value.get("type") == "tool_result" else 0
    return 0


@pytest.mark.parametrize("name", ALL)
def test_images_kept(name: str) -> None:
    fs = _read(name)
    want = sum(
        _count_images(r["message"].get("content"))
        for _, r in _records(FIXTURES / name)
        if r.get("type") == "user" and isinstance(r.get("message"), dict)
    )
    got = 0
    for e in fs.entries[1:]:
        content = e["message"].get("content") if e["type"] == "message" else e.get("content")
        if isinstance(content, list):
            got += sum(1 for b in content if b.get("type") == "image")
    assert got == want


@pytest.mark.parametrize("name", ALL)
def test_nothing_dropped(name: str) -> None:
    """Every record is a custom entry (the record itself), or the line of a mapped entry whose
    fields are all either mapped or in ``raw``."""
    fs = _read(name)
    lines: dict[int, list[dict[str, Any]]] = {}
    for e in fs.entries[1:]:
        for n in sorted(_lines_of(e)):
            lines.setdefault(n, []).append(e)
    problem_lines = {n for n, _ in fs.problems}
    mapped = {"type", "uuid", "parentUuid", "timestamp", "message", "toolUseResult", "logicalParentUuid"}
    for n, r in _records(FIXTURES / name):
        got = lines.get(n)
        assert got, f"line {n} dropped"
        e = got[0]
        if e["type"] == "custom":
            assert e["data"] == r
            continue
        raw = e["raw"]
        if e["type"] == "compaction" and raw.get("summaryRecord", {}).get("line") == n:
            assert raw["summaryRecord"]["uuid"] == r["uuid"]
            continue
        if raw["line"] != n:  # a later record merged into an earlier one
            continue
        for key in r:
            assert key in mapped or key in raw, (n, key)
        if "toolUseResult" in r:
            assert any((x.get("raw") or {}).get("toolUseResult") == r["toolUseResult"] for x in got)
    blank = {n for n, line in enumerate((FIXTURES / name).read_bytes().split(b"\n"), 1) if not line.strip()}
    all_lines = set(range(1, len((FIXTURES / name).read_bytes().split(b"\n")) + 1)) - blank
    assert all_lines == set(lines) | problem_lines  # every line: an entry's, or a problem


@pytest.mark.parametrize("name", ALL)
def test_compactions_mapped(name: str) -> None:
    fs = _read(name)
    recs = _records(FIXTURES / name)
    boundaries = [r for _, r in recs if r.get("type") == "system" and r.get("subtype") == "compact_boundary"]
    compactions = [e for e in fs.entries[1:] if e["type"] == "compaction"]
    assert len(compactions) == len(boundaries)
    summaries = {r.get("parentUuid"): r for _, r in recs if r.get("isCompactSummary") is True}
    for b, c in zip(boundaries, compactions, strict=True):
        assert c["id"] == b["uuid"] and c["firstKeptEntryId"] == c["id"]
        assert c["tokensBefore"] == b["compactMetadata"]["preTokens"]
        s = summaries.get(b["uuid"])
        if s is not None:
            content = s["message"]["content"]
            text = content if isinstance(content, str) else "\n".join(x["text"] for x in content)
            assert c["summary"] == text
        parent = next(e for e in fs.entries[1:] if e["id"] == c["parentId"])
        assert parent["id"] == b["logicalParentUuid"] or b["logicalParentUuid"] in [
            m.get("uuid") for m in (parent.get("raw") or {}).get("merged", [])
        ]


# ---------------------------------------------------------------------------------------------
# particular fixtures


def test_context_after_a_compaction_is_the_summary_and_what_follows() -> None:
    fs = _read("daaain_dag_compact_after_rewind.jsonl")
    ctx = fs.manager().build_session_context()
    assert [m["role"] for m in ctx.messages] == ["compactionSummary", "user", "assistant"]
    assert ctx.messages[0]["summary"].startswith("This session is being continued")
    assert ctx.messages[0]["tokensBefore"] == 150000
    assert ctx.messages[1]["content"] == [{"type": "text", "text": "After compaction"}]
    # the path still runs through the rewound branch's last answer to the first prompt
    path = [e["id"] for e in get_branch_entries(fs.manager().get_entries(), "p1a")]
    assert path == ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2", "cb", "p1u", "p1a"]
    # the abandoned branch is in the tree, off the path
    ids = {e["id"] for e in fs.entries[1:]}
    assert {"b1u", "b1a"} <= ids and "cs" not in ids


def test_synthetic_features() -> None:
    fs = _read("synthetic_features.jsonl")
    by_id = {e["id"]: e for e in fs.entries[1:]}
    # one API response split over three records -> one message, usage once, blocks in order
    a1 = by_id["a-1a"]["message"]
    assert [b["type"] for b in a1["content"]] == ["thinking", "text", "toolCall"]
    assert a1["content"][0]["thinkingSignature"] == "c2lnbmF0dXJlLTE="
    assert a1["content"][2] == {"type": "toolCall", "id": "toolu_synth_read", "name": "Read",
                                "arguments": {"file_path": "/work/demo/logo.png"}}  # fmt: skip
    assert a1["stopReason"] == "toolUse" and a1["rawStopReason"] == "tool_use"
    assert "a-1b" not in by_id and "a-1c" not in by_id
    assert [m["uuid"] for m in by_id["a-1a"]["raw"]["merged"]] == ["a-1b", "a-1c"]
    assert by_id["u-2"]["parentId"] == "a-1a"
    assert a1["usage"]["cacheWrite1h"] == 2048
    spec = find_model("anthropic", "claude-opus-4-7")
    assert spec is not None
    assert a1["usage"]["cost"] == calculate_cost(spec, a1["usage"]) and a1["usage"]["cost"]["total"] > 0
    # images: pasted by the user, and returned by a tool
    user = by_id["u-1"]["message"]
    assert user["content"][1]["type"] == "image" and user["content"][1]["mimeType"] == "image/png"
    tool = by_id["u-2"]["message"]
    assert (
        tool["role"] == "toolResult" and tool["toolName"] == "Read" and tool["content"][0]["type"] == "image"
    )
    assert by_id["u-2"]["raw"]["toolUseResult"]["type"] == "image"
    # a tool error
    err = by_id["u-3"]["message"]
    assert err["isError"] is True and err["toolName"] == "Bash"
    assert by_id["u-3"]["raw"]["toolUseResult"].startswith("Error: Exit code 127")
    # a system api_error record is a custom entry in the chain; the synthetic error message
    assert by_id["sys-1"]["type"] == "custom" and by_id["sys-1"]["customType"] == "claude-code/system"
    api = by_id["a-err"]["message"]
    assert api["stopReason"] == "error" and api["errorMessage"].startswith("API Error: 529")
    assert by_id["a-err"]["raw"]["apiErrorStatus"] == 529 and by_id["a-err"]["raw"]["costUnknown"] is True
    assert api["usage"]["cost"]["total"] == 0
    # isMeta -> a hidden custom message (sent to the model)
    meta = by_id["u-4"]
    assert (
        meta["type"] == "custom_message"
        and meta["display"] is False
        and meta["customType"] == "claude-code/meta"
    )
    # compaction: boundary + summary -> one entry on the boundary's logical parent
    comp = by_id["cb-1"]
    assert comp["type"] == "compaction" and comp["parentId"] == "u-5" and comp["tokensBefore"] == 7421
    assert comp["raw"]["summaryRecord"]["isVisibleInTranscriptOnly"] is True
    assert by_id["u-6"]["parentId"] == "cb-1"
    # redacted thinking, max_tokens
    a3 = by_id["a-3"]["message"]
    assert a3["content"][0] == {"type": "thinking", "thinking": "[Reasoning redacted]",
                                "thinkingSignature": "RVJEQUNURUQ=", "redacted": True}  # fmt: skip
    assert a3["stopReason"] == "length" and a3["rawStopReason"] == "max_tokens"
    # the inline sidechain is its own root, after the main leaf in the file, yet the leaf is a-3
    assert by_id["sc-1"]["parentId"] is None and by_id["sc-2"]["parentId"] == "sc-1"
    assert fs.entries[-1]["id"] == "a-3"
    ctx = fs.manager().build_session_context()
    assert [m["role"] for m in ctx.messages] == ["compactionSummary", "user", "assistant"]
    # untyped-position records hang on the main chain: the snapshot at the root, the title last
    snap = next(e for e in fs.entries[1:] if e.get("customType") == "claude-code/file-history-snapshot")
    assert snap["parentId"] is None
    title = next(e for e in fs.entries[1:] if e.get("customType") == "claude-code/summary")
    assert title["parentId"] == "a-3" and title["data"]["summary"] == "Describing a pasted screenshot"


def test_split_response_in_a_real_sidechain() -> None:
    fs = _read("daaain_sidechain_integrated.jsonl")
    by_id = {e["id"]: e for e in fs.entries[1:]}
    side = by_id["b674eedd-0d9d-49e7-8116-1f092cd750ed"]
    assert [b["type"] for b in side["message"]["content"]] == ["text", "toolCall"]
    assert side["message"]["usage"]["cacheWrite"] == 19830  # once, not twice
    assert side["raw"]["unmappedContent"] == [{"index": 0, "extra": {"citations": None}}]
    # a parent outside the (trimmed) file: a root, the uuid kept in raw
    first = by_id["83a7cabd-3642-45d6-ba73-9b9f843b9ab1"]
    assert first["parentId"] is None and first["raw"]["parentUuid"] == "8ae40e91-fa63-40a9-969d-70c0c1d6175e"
    assert fs.entries[-1]["id"] == "91c82c1c-29b0-4149-a261-e5582d944ac6"
    ctx = fs.manager().build_session_context()
    assert [m["role"] for m in ctx.messages] == ["assistant", "toolResult", "assistant"]


def test_subagent_transcript_names_its_parent_session() -> None:
    fs = read_foreign(SUBAGENT)
    assert fs.header["parentSession"] == str(SHOWCASE.resolve())
    assert fs.header["id"] == "55550000-0000-4000-8000-000000000001/agent-showcol1"
    assert fs.header["agentId"] == "showcol1"
    main = read_foreign(SHOWCASE)
    assert "parentSession" not in main.header and main.header["id"] == "55550000-0000-4000-8000-000000000001"
    ctx = fs.manager().build_session_context()
    assert [m["role"] for m in ctx.messages] == ["user", "assistant"]
    # the parent's Agent tool results carry toolUseResult in raw
    results = [e for e in main.entries[1:] if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert [e["raw"]["toolUseResult"]["agentId"] for e in results[-2:]] == ["showcol1", "showcol2"]


def test_real_session_header_and_costs() -> None:
    fs = _read("kvsankar_real_session.jsonl")
    h = fs.header
    assert h["id"] == "06090cb1-3e64-433a-bc7e-a621c0f596d2"
    assert h["cwd"] == "/tmp/agent-history-real-agent/claude/workspace"
    assert h["harnessVersion"] == "2.1.152" and h["gitBranch"] == "HEAD"
    assert h["timestamp"] == "2026-06-05T04:56:32.693Z"
    assert [e.get("customType") for e in fs.entries[1:] if e["type"] == "custom"] == [
        "claude-code/queue-operation", "claude-code/queue-operation", "claude-code/last-prompt",
    ]  # fmt: skip
    a = _messages(fs, "assistant")[0]
    assert a["usage"]["input"] == 6 and a["usage"]["cacheWrite"] == 1045 and a["usage"]["cacheRead"] == 3057
    assert a["usage"]["cost"]["total"] == pytest.approx(
        (6 * 5 + 16 * 25 + 3057 * 0.5) / 1e6 + 1045 * 10 / 1e6  # the 1-hour cache write costs twice input
    )
    assert a["stopReason"] == "stop" and a["rawStopReason"] == "end_turn"
    assert fs.entries[-1]["id"] == "4a6cda39-a1c1-404b-91c3-8ed94d28e177"


def test_unknown_model_costs_zero_and_says_so() -> None:
    fs = _read("kvsankar_compaction.jsonl")
    for e in fs.entries[1:]:
        if e["type"] == "message" and e["message"]["role"] == "assistant":
            assert e["message"]["model"] == "claude-sonnet-4-20250514"
            assert e["message"]["usage"]["cost"]["total"] == 0 and e["raw"]["costUnknown"] is True


def test_corrupt_lines_and_invalid_utf8() -> None:
    fs = _read("synthetic_corrupt.jsonl")
    reasons = dict(fs.problems)
    assert reasons[2].startswith("not JSON") and reasons[7].startswith("not JSON")
    assert reasons[3].startswith("invalid UTF-8") and reasons[4].startswith("not a JSON object")
    by_id = {e["id"]: e for e in fs.entries[1:]}
    assert set(by_id) == {"c-u1", "c-u2", "c-a1"}
    assert by_id["c-u2"]["message"]["content"].startswith("café \ufffd")
    assert [m["role"] for m in fs.manager().build_session_context().messages] == ["user", "user", "assistant"]


def test_empty_file() -> None:
    fs = _read("synthetic_empty.jsonl")
    assert fs.entries == [fs.header] and fs.problems == []
    assert fs.header["id"] == "synthetic_empty"
    assert claude_code.looks_like([]) is False
    with pytest.raises(InvalidSessionFileError):
        read_foreign_bytes(b"")


def test_looks_like_refuses_pi_and_codex() -> None:
    pi = [{"type": "session", "version": 3, "id": "x", "timestamp": "t", "cwd": "/"},
          {"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": {"role": "user"}}]  # fmt: skip
    codex = [{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}},
             {"timestamp": "t", "type": "response_item", "payload": {"type": "message"}}]  # fmt: skip
    assert not claude_code.looks_like(pi) and not claude_code.looks_like(codex)
    assert not claude_code.looks_like([{"type": "user"}, 3, "x"])
    assert claude_code.looks_like([{"type": "summary", "summary": "t", "leafUuid": "u"}])


def test_session_source_opens_a_transcript() -> None:
    manager = load_session_file(str(FIXTURES / "daaain_dag_compact_after_rewind.jsonl"))
    assert manager.get_leaf_id() == "p1a"
    assert manager.get_header()["harness"] == "claude-code"  # type: ignore[typeddict-item]


# ---------------------------------------------------------------------------------------------
# generated transcripts

_text = st.text(alphabet="abc xyz\n", max_size=8)


@st.composite
def _transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Claude Code-like records: prompts, responses split over records, tool calls and results,
    sidechains, compactions, records of unknown types; parents point back into the file."""
    out: list[dict[str, Any]] = []
    uuids: list[str] = []
    open_calls: list[str] = []
    n_steps = draw(st.integers(0, 14))
    for i in range(n_steps):
        kind = draw(st.sampled_from(["prompt", "response", "result", "meta", "compact", "other", "snapshot"]))
        parent = draw(st.sampled_from([None, *uuids[-3:]])) if uuids else None
        side = draw(st.booleans()) and i > 2
        base = {"parentUuid": parent, "isSidechain": side, "sessionId": "gen", "cwd": "/g",
                "timestamp": f"2026-01-01T00:00:{i:02d}.000Z"}  # fmt: skip
        uid = f"g{i}"
        if kind == "prompt":
            out.append(
                {**base, "type": "user", "uuid": uid, "message": {"role": "user", "content": draw(_text)}}
            )
        elif kind == "meta":
            out.append({**base, "type": "user", "uuid": uid, "isMeta": True,
                        "message": {"role": "user", "content": [{"type": "text", "text": draw(_text)}]}})  # fmt: skip
        elif kind == "response":
            usage = {"input_tokens": draw(st.integers(0, 99)), "output_tokens": draw(st.integers(0, 99)),
                     "cache_read_input_tokens": draw(st.integers(0, 99)),
                     "cache_creation_input_tokens": draw(st.integers(0, 99))}  # fmt: skip
            model = draw(st.sampled_from(["claude-opus-4-7", "claude-3-opus", "<synthetic>"]))
            parts = draw(st.integers(1, 3))
            prev = parent
            for k in range(parts):
                block: dict[str, Any]
                if draw(st.booleans()):
                    call = f"t{i}_{k}"
                    open_calls.append(call)
                    block = {"type": "tool_use", "id": call, "name": "Bash", "input": {"c": draw(_text)}}
                else:
                    block = {"type": "text", "text": draw(_text)}
                rid = uid if k == 0 else f"{uid}_{k}"
                usage = {**usage, "output_tokens": usage["output_tokens"] + draw(st.integers(0, 9))}  # grows
                out.append({**base, "parentUuid": prev, "type": "assistant", "uuid": rid, "requestId": f"r{i}",
                            "message": {"id": f"m{i}", "role": "assistant", "model": model, "content": [block],
                                        "stop_reason": None, "usage": usage}})  # fmt: skip
                prev = rid
                uuids.append(rid)
            continue
        elif kind == "result":
            call = open_calls.pop() if open_calls else "t_missing"
            out.append({**base, "type": "user", "uuid": uid, "toolUseResult": {"x": 1},
                        "message": {"role": "user", "content": [
                            {"type": "tool_result", "tool_use_id": call, "content": draw(_text),
                             "is_error": draw(st.booleans())},
                            {"type": "text", "text": "after"}]}})  # fmt: skip
        elif kind == "compact":
            out.append({**base, "parentUuid": None, "logicalParentUuid": parent, "type": "system",
                        "subtype": "compact_boundary", "uuid": uid,
                        "compactMetadata": {"trigger": "auto", "preTokens": 5}})  # fmt: skip
            uuids.append(uid)
            uid = f"g{i}s"
            out.append({**base, "parentUuid": f"g{i}", "type": "user", "uuid": uid, "isCompactSummary": True,
                        "message": {"role": "user", "content": "summary " + draw(_text)}})  # fmt: skip
        elif kind == "other":
            out.append({**base, "type": draw(st.sampled_from(["progress", "system", "attachment"])), "uuid": uid,
                        "data": draw(_text)})  # fmt: skip
        else:
            out.append({"type": "file-history-snapshot", "messageId": uid, "snapshot": {}})
            continue
        uuids.append(uid)
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_transcripts(), st.lists(st.sampled_from([b"{oops", b"[1]", b"\xff{}"]), max_size=2))
def test_generated_transcripts(records: list[dict[str, Any]], junk: list[bytes]) -> None:
    data = b"\n".join([json.dumps(r).encode() for r in records] + junk) + b"\n"
    fs = claude_code.read(data, None)
    assert len(fs.problems) == len(junk)
    ids = [e["id"] for e in fs.entries[1:]]
    assert len(ids) == len(set(ids))
    assert all(e["parentId"] is None or e["parentId"] in ids for e in fs.entries[1:])
    # usage counted once per (message id, request id)
    want = _dedup_usage(list(enumerate(records, 1)))
    msgs = _messages(fs, "assistant")
    assert len(msgs) == want["messages"]
    assert sum(m["usage"]["output"] for m in msgs) == want["output"]
    assert sum(m["usage"]["input"] for m in msgs) == want["input"]
    assert sum(m["usage"]["cacheWrite"] for m in msgs) == want["cacheWrite"]
    for m in msgs:
        assert not math.isnan(m["timestamp"])
    # one tool result per block, one compaction per boundary
    n_results = sum(1 for r in records if r.get("toolUseResult"))
    assert len(_messages(fs, "toolResult")) == n_results
    assert sum(e["type"] == "compaction" for e in fs.entries) == sum(
        r.get("subtype") == "compact_boundary" for r in records
    )
    # the leaf is the last main-chain record's entry
    main = [
        r
        for r in records
        if r.get("type") in ("user", "assistant", "system") and r.get("isSidechain") is not True
    ]
    conv = main or [r for r in records if r.get("type") in ("user", "assistant", "system")]
    manager = fs.manager()
    manager.build_session_context()
    if conv:
        line = next(n for n, r in enumerate(records, 1) if r is conv[-1])
        assert line in _lines_of(fs.entries[-1])


def _line(**record: Any) -> bytes:
    base = {"sessionId": "s", "cwd": "/", "isSidechain": False, "timestamp": "2026-01-01T00:00:00.000Z"}
    return json.dumps({**base, **record}).encode()


def test_a_parent_written_after_its_child_is_linked_without_loops() -> None:
    data = b"\n".join(
        [
            _line(type="user", uuid="b", parentUuid="a", message={"role": "user", "content": "second"}),
            _line(type="user", uuid="a", parentUuid=None, message={"role": "user", "content": "first"}),
            _line(type="user", uuid="x", parentUuid="y", message={"role": "user", "content": "loop 1"}),
            _line(type="user", uuid="y", parentUuid="x", message={"role": "user", "content": "loop 2"}),
        ]
    )
    fs = claude_code.read(data)
    by_id = {e["id"]: e for e in fs.entries[1:]}
    assert by_id["b"]["parentId"] == "a" and by_id["b"]["raw"]["parentLater"] is True
    assert by_id["x"]["parentId"] is None and by_id["x"]["raw"]["parentUnresolved"] is True
    assert by_id["y"]["parentId"] == "x"
    fs.manager().build_session_context()  # no EntryCycleError


def test_stop_reason_of_a_split_response_follows_its_blocks() -> None:
    def part(uuid: str, parent: str | None, block: dict[str, Any], stop: str | None) -> bytes:
        message = {"id": "m1", "role": "assistant", "model": "claude-opus-4-7", "content": [block],
                   "stop_reason": stop, "usage": {"input_tokens": 1, "output_tokens": 2}}  # fmt: skip
        return _line(type="assistant", uuid=uuid, parentUuid=parent, requestId="r1", message=message)

    text = {"type": "text", "text": "hi"}
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    fs = claude_code.read(b"\n".join([part("p1", None, text, None), part("p2", "p1", call, None)]))
    (entry,) = fs.entries[1:]
    assert entry["message"]["stopReason"] == "toolUse" and "rawStopReason" not in entry["message"]
    assert entry["message"]["usage"]["output"] == 2
    fs = claude_code.read(b"\n".join([part("p1", None, call, None), part("p2", "p1", text, "end_turn")]))
    assert fs.entries[1]["message"]["stopReason"] == "stop"
    assert list(fs.entries[1]["message"]) == [
        "role", "content", "api", "provider", "model", "responseId", "usage", "stopReason", "rawStopReason",
        "timestamp",
    ]  # fmt: skip


@pytest.mark.parametrize("name", ALL)
def test_context_pairs_every_tool_result_with_its_call(name: str) -> None:
    """In the context, each tool result answers a tool call of the assistant message before it,
    as the Anthropic API requires of a conversation sent back to it."""
    fs = _read(name)
    known = {e["message"]["toolCallId"] for e in fs.entries[1:] if e["type"] == "message"
             and e["message"]["role"] == "toolResult" and not e.get("raw", {}).get("toolNameUnknown")}  # fmt: skip
    open_calls: set[str] = set()
    for m in fs.manager().build_session_context().messages:
        if m["role"] == "assistant":
            open_calls = {b["id"] for b in m["content"] if b["type"] == "toolCall"}
        elif m["role"] == "toolResult" and m["toolCallId"] in known:
            assert m["toolCallId"] in open_calls
            open_calls.discard(m["toolCallId"])


def test_real_split_response_over_four_records() -> None:
    fs = _read("ccviewer_fe5e1c67_first37.jsonl")
    by_id = {e["id"]: e for e in fs.entries[1:]}
    entry = by_id["9cfc1ad1-3875-41ae-9f8d-9b070ea7d415"]
    assert [b["type"] for b in entry["message"]["content"]] == ["text", "toolCall", "toolCall", "toolCall"]
    assert [b["name"] for b in entry["message"]["content"][1:]] == ["Task", "Task", "Task"]
    assert len(entry["raw"]["merged"]) == 3
    # the records repeat the usage of the stream so far: the last one's output count is kept
    assert entry["message"]["usage"]["output"] == 598
    assert entry["raw"]["firstRecordUsage"]["output_tokens"] == 1
    assert entry["message"]["stopReason"] == "toolUse" and "rawStopReason" not in entry["message"]
    recs = _records(FIXTURES / "ccviewer_fe5e1c67_first37.jsonl")
    assert _dedup_usage(recs, "first")["output"] < _dedup_usage(recs, "last")["output"]
    # the isMeta command expansion is a hidden custom message, in the context
    meta = by_id["5a3fdd4a-ac04-44ec-8323-407fdb4c7c06"]
    assert meta["type"] == "custom_message" and meta["display"] is False
    ctx = fs.manager().build_session_context()
    assert ctx.messages[1]["role"] == "custom" and ctx.messages[1]["display"] is False
    # the leaf is the main chain's Task result, after twenty sidechain records
    assert fs.entries[-1]["id"] == "418df566-85d7-43fb-b694-390add9fb3ec"
    assert (
        fs.entries[-1]["message"]["role"] == "toolResult" and fs.entries[-1]["message"]["toolName"] == "Task"
    )
    # the session title, before any record of the chain, is a root
    title = fs.entries[1]
    assert title["customType"] == "claude-code/summary" and title["parentId"] is None


def test_real_inline_sidechains_interleaved_with_the_main_chain() -> None:
    fs = _read("ccviewer_5c0375b4_first32.jsonl")
    assert fs.entries[-1]["id"] == "cfca867b-e0bb-4682-a5ff-2dd1b228a44f"  # the file ends in a sidechain
    by_id = {e["id"]: e for e in fs.entries[1:]}
    assert by_id["6340ddef-f656-4b72-a065-82390f637678"]["parentId"] is None
    path = [e["id"] for e in get_branch_entries(fs.manager().get_entries(), fs.entries[-1]["id"])]
    assert all(by_id[i].get("raw", {}).get("isSidechain") is not True for i in path)


def test_an_agent_file_without_its_parent_beside_it() -> None:
    fs = _read("ccviewer_agent-test-hash-123.jsonl")
    assert fs.header["id"] == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7/ccviewer_agent-test-hash-123"
    assert "parentSession" not in fs.header
    assert [m["role"] for m in fs.manager().build_session_context().messages] == ["user", "assistant"]


def test_json_that_orjson_refuses_is_still_read() -> None:
    big = b'{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","big":123456789012345678901234567890,' \
          b'"message":{"role":"user","content":"a \\ud800 b"}}'  # fmt: skip
    fs = claude_code.read(b"\xef\xbb\xbf" + big)
    assert fs.problems == []
    assert fs.entries[1]["raw"]["big"] == 123456789012345678901234567890


def _flat(content: Any) -> list[tuple[str, Any]]:
    if isinstance(content, str):
        return [("text", content)]
    out: list[tuple[str, Any]] = []
    for b in content or []:
        kind = b.get("type") if isinstance(b, dict) else None
        if isinstance(b, str):  # (a bare string in a content list: read as a text block)
            out.append(("text", b))
        elif kind == "text":
            out.append(("text", b["text"]))
        elif kind == "tool_use":
            out.append(("tool_use", b["id"]))
        elif kind == "tool_result":
            out.append(("tool_result", b["tool_use_id"]))
        elif kind == "image":
            out.append(("image", b["source"]["data"]))
    return out


#: fixtures whose context goes back to the Anthropic API block for block as Claude Code sent it;
#: the others differ where Pi means to: a compaction's summary is wrapped in Pi's prefix, thinking
#: without a signature goes back as text, a tool call whose result was trimmed away gets Pi's
#: "No result provided" result
ROUND_TRIP = [
    "ccviewer_1af7fc5e.jsonl",
    "ccviewer_agent-test-hash-123.jsonl",
    "daaain_edge_cases.jsonl",
    "daaain_sidechain_integrated.jsonl",
    "daaain_todowrite.jsonl",
    "kvsankar_fork.jsonl",
    "kvsankar_real_session.jsonl",
    "kvsankar_rejection.jsonl",
    "synthetic_corrupt.jsonl",
    str(SHOWCASE.relative_to(FIXTURES)),
    str(SUBAGENT.relative_to(FIXTURES)),
]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_context_goes_back_to_the_api_as_claude_code_sent_it(name: str) -> None:
    """The blocks pi_nb would send Anthropic for the leaf equal the blocks of the records on the
    leaf's parentUuid chain, walked here from the raw file."""
    fs = _read(name)
    ctx = fs.manager().build_session_context()
    sent = to_anthropic_messages(Context(None, convert_to_llm(ctx.messages)))
    got = [x for m in sent for x in _flat(m["content"])]
    recs = [r for _, r in _records(FIXTURES / name)]
    conv = [
        r for r in recs if r.get("type") in ("user", "assistant", "system") and isinstance(r.get("uuid"), str)
    ]
    main = [r for r in conv if r.get("isSidechain") is not True] or conv
    by_uuid = {r["uuid"]: r for r in conv}
    path: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = main[-1]
    while cur is not None:
        path.append(cur)
        cur = by_uuid.get(cur.get("parentUuid") or "")
    want = [
        x
        for r in reversed(path)
        if isinstance(r.get("message"), dict)
        for x in _flat(r["message"].get("content"))
    ]
    assert got == want
