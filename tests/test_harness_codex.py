"""The Codex CLI rollout reader (:mod:`pi_nb.harness.codex`) on real rollouts from public
repositories (``tests/fixtures/other_agents/codex/SOURCES.md``) and on synthetic edge files.

The expected numbers are computed here from the files themselves (their own ``token_count``
totals, their own record counts), never from the reader."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_nb.harness import codex, detect_harness, read_foreign, read_foreign_bytes
from pi_nb.providers.catalog import calculate_cost, find_model
from pi_nb.session.source import SessionLoadWarning, open_session_source

FIXTURES = Path(__file__).parent / "fixtures" / "other_agents" / "codex"
REAL = sorted(p.name for p in FIXTURES.glob("*.jsonl") if not p.name.startswith("synthetic-"))
ALL = sorted(p.name for p in FIXTURES.glob("*.jsonl"))


def _records(name: str) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for every line of a fixture that parses (the test's own reading)."""
    out = []
    for n, line in enumerate((FIXTURES / name).read_bytes().split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8", errors="replace"))
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append((n, rec))
    return out


def _payload(rec: dict[str, Any]) -> Any:
    return rec.get("payload", rec)


def _items(name: str, *types: str) -> list[tuple[int, dict[str, Any]]]:
    """Response items of the given types (top level only, not inside replacement histories)."""
    out = []
    for n, rec in _records(name):
        p = _payload(rec)
        if rec.get("type") in ("response_item", *types) or "payload" not in rec:
            if isinstance(p, dict) and p.get("type") in types:
                out.append((n, p))
    return out


def _messages(entries: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"].get("role") == role]


def _usages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [m["usage"] for m in _messages(entries, "assistant")]
    out += [e["usage"] for e in entries if e["type"] == "compaction" and "usage" in e]
    return out


# ---------------------------------------------------------------------------------------------
# every real fixture


@pytest.mark.parametrize("name", REAL)
def test_real_rollout_reads_without_problems(name: str) -> None:
    fs = read_foreign(FIXTURES / name)
    assert fs.harness == "codex"
    assert fs.problems == []
    meta_line, meta = _records(name)[0]
    assert meta["type"] == "session_meta"
    header = fs.header
    assert header["type"] == "session" and header["version"] == 3
    assert header["harness"] == "codex"
    assert header["id"] == meta["payload"]["id"]
    assert header["cwd"] == meta["payload"]["cwd"]
    assert header["harnessVersion"] == meta["payload"]["cli_version"]
    assert header["raw"]["lines"] == [meta_line]


@pytest.mark.parametrize("name", ALL)
def test_entries_form_one_chain(name: str) -> None:
    fs = read_foreign(FIXTURES / name)
    entries = fs.entries[1:]
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
    assert entries[0]["parentId"] is None
    for prev, entry in itertools.pairwise(entries):
        assert entry["parentId"] == prev["id"]
    # deterministic: the same file gives the same ids
    assert [e["id"] for e in read_foreign(FIXTURES / name).entries[1:]] == ids


@pytest.mark.parametrize("name", ALL)
def test_session_manager_takes_the_entries(name: str) -> None:
    fs = read_foreign(FIXTURES / name)
    manager = fs.manager()
    assert len(manager.get_entries()) == len(fs.entries) - 1
    assert manager.get_leaf_id() == fs.entries[-1]["id"]
    context = manager.build_session_context()
    roles = {m["role"] for m in context.messages}
    assert roles <= {"user", "assistant", "toolResult", "custom", "compactionSummary"}
    # every session source opens the file through the registered reader (its problems warned)
    with pytest.warns(SessionLoadWarning) if fs.problems else contextlib.nullcontext():
        via_source = open_session_source(str(FIXTURES / name))
    assert [e["id"] for e in via_source.get_entries()] == [e["id"] for e in fs.entries[1:]]


@pytest.mark.parametrize("name", REAL)
def test_usage_sums_equal_the_files_own_totals(name: str) -> None:
    """Pi's usages add up to the rollout's own ``total_token_usage`` growth (a trimmed window
    starts from the total before its first counted call)."""
    counts = [
        _payload(r)["info"]
        for _n, r in _records(name)
        if r.get("type") == "event_msg"
        and _payload(r).get("type") == "token_count"
        and isinstance(_payload(r).get("info"), dict)
    ]
    if not counts:
        pytest.skip("no token counts in this rollout")
    first, final = counts[0], counts[-1]
    keys = ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens")
    expected = {
        k: final["total_token_usage"][k] - (first["total_token_usage"][k] - first["last_token_usage"][k])
        for k in keys
    }
    usages = _usages(read_foreign(FIXTURES / name).entries)
    assert sum(u["input"] + u["cacheRead"] for u in usages) == expected["input_tokens"]
    assert sum(u["cacheRead"] for u in usages) == expected["cached_input_tokens"]
    assert sum(u["output"] for u in usages) == expected["output_tokens"]
    assert sum(u["totalTokens"] for u in usages) == expected["total_tokens"]
    # Pi's totalTokens is input + output + cacheRead + cacheWrite, as Codex's total_tokens is
    for u in usages:
        assert u["totalTokens"] == u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"]


@pytest.mark.parametrize("name", REAL)
def test_tool_calls_and_results_match_the_file(name: str) -> None:
    entries = read_foreign(FIXTURES / name).entries
    outputs = _items(name, "function_call_output", "custom_tool_call_output")
    calls = _items(name, "function_call", "custom_tool_call", "local_shell_call")
    results = _messages(entries, "toolResult")
    assert len(results) == len(outputs)
    tool_calls = [b for m in _messages(entries, "assistant") for b in m["content"] if b["type"] == "toolCall"]
    assert len(tool_calls) == len(calls)
    names = {b["id"]: b["name"] for b in tool_calls}
    for r in results:
        assert names.get(r["toolCallId"]) == r["toolName"]
    for block, (_n, call) in zip(tool_calls, calls, strict=True):
        assert block["id"] == call["call_id"]
        assert isinstance(block["arguments"], dict)


@pytest.mark.parametrize("name", ALL)
def test_every_line_is_accounted_for(name: str) -> None:
    """Each non-blank line is an entry's (``raw["lines"]``) or a problem: nothing dropped.
    No line maps to two entries, but for a compaction's replacement history (after it) and a
    turn context that changes both the model and the effort."""
    fs = read_foreign(FIXTURES / name)
    lines = (FIXTURES / name).read_bytes().split(b"\n")
    wanted = {n for n, line in enumerate(lines, start=1) if line.strip()}
    seen: dict[int, int] = {}
    covered: set[int] = set()
    for entry in fs.entries:
        for n in entry["raw"]["lines"]:
            covered.add(n)
            if entry["type"] == "thinking_level_change" and "turnContext" not in entry["raw"]:
                continue  # (the model_change of the same turn context holds the record)
            if "replacementHistory" not in entry["raw"] or entry["type"] == "compaction":
                seen[n] = seen.get(n, 0) + 1
    problem_lines = {n for n, _ in fs.problems}
    assert wanted == covered | problem_lines
    assert all(v == 1 for v in seen.values())


@pytest.mark.parametrize("name", REAL)
def test_detected_as_codex(name: str) -> None:
    assert detect_harness(FIXTURES / name) == "codex"


# ---------------------------------------------------------------------------------------------
# the mapping, fixture by fixture


def test_messages_of_a_recent_exec_rollout() -> None:
    name = "agent-history-0.135-exec.jsonl"
    entries = read_foreign(FIXTURES / name).entries
    kinds = [(e["type"], e.get("customType") or e.get("message", {}).get("role")) for e in entries[1:]]
    assert kinds == [
        ("custom", "codex/task_started"),
        ("custom_message", "codex/developer"),
        ("custom_message", "codex/environment_context"),
        ("model_change", None),
        ("message", "user"),
        ("custom", "codex/user_message"),
        ("custom", "codex/agent_message"),
        ("message", "assistant"),
        ("custom", "codex/task_complete"),
    ]
    assistant = _messages(entries, "assistant")[0]
    assert assistant["content"] == [{"type": "text", "text": "[REDACTED_ASSISTANT_TEXT]"}]
    assert assistant["model"] == "gpt-5.5" and assistant["provider"] == "openai-codex"
    assert assistant["api"] == "openai-codex-responses"
    usage = assistant["usage"]
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["totalTokens"]) == (
        1675,
        20864,
        10,
        22549,
    )
    spec = find_model("openai-codex", "gpt-5.5")
    assert spec is not None
    assert usage["cost"] == calculate_cost(spec, usage)
    assert usage["cost"]["total"] > 0
    message_entry = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert message_entry["raw"]["items"][0]["phase"] == "final_answer"
    assert message_entry["raw"]["tokenCount"]["rate_limits"]["plan_type"] == "pro"
    # the developer and environment messages reach the model (as Pi's custom messages do)
    context = read_foreign(FIXTURES / name).manager().build_session_context()
    assert [m["role"] for m in context.messages] == ["custom", "custom", "user", "assistant"]
    assert all(m["display"] is False for m in context.messages if m["role"] == "custom")


def test_reasoning_tool_calls_and_an_unknown_price() -> None:
    name = "ai-sessions-pomodoro-0.47-turns-1-2.jsonl"
    entries = read_foreign(FIXTURES / name).entries
    assistants = _messages(entries, "assistant")
    first = assistants[0]
    assert [b["type"] for b in first["content"]] == ["thinking", "toolCall"]
    assert first["content"][0]["thinking"] == "**Examining repository structure**"
    assert first["content"][1]["name"] == "shell"
    assert first["content"][1]["arguments"]["command"] == ["zsh", "-lc", "ls"]
    assert first["stopReason"] == "toolUse"
    assert assistants[-1]["stopReason"] == "stop"
    # 0.47 writes a call's token_count before its items: the usage still joins that call
    assert first["usage"]["totalTokens"] == 5098
    # gpt-5-codex is not in the bundled catalog: no cost, said in raw
    assert all(a["usage"]["cost"]["total"] == 0 for a in assistants)
    assert all(
        e["raw"].get("costUnknown")
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    # custom tool calls (apply_patch) keep their free-form input
    patch = next(
        b for a in assistants for b in a["content"] if b["type"] == "toolCall" and b["name"] == "apply_patch"
    )
    assert isinstance(patch["arguments"]["input"], str) and patch["arguments"]["input"].startswith(
        "*** Begin Patch"
    )
    # shell outputs report their exit code
    shell = [
        e
        for e in entries
        if e["type"] == "message"
        and e["message"]["role"] == "toolResult"
        and e["message"]["toolName"] == "shell"
    ]
    assert shell and all(e["raw"]["exitCode"] == 0 and not e["message"]["isError"] for e in shell)


def test_failed_patch_is_an_error_result() -> None:
    name = "ai-sessions-pomodoro-0.47-patch-error.jsonl"
    results = _messages(read_foreign(FIXTURES / name).entries, "toolResult")
    failed = [r for r in results if r["isError"]]
    assert len(failed) == 1
    assert failed[0]["toolName"] == "apply_patch"
    assert failed[0]["content"][0]["text"].startswith("apply_patch verification failed")


def test_remote_compaction_keeps_what_codex_keeps() -> None:
    name = "localpush-0.104-remote-compaction.jsonl"
    fs = read_foreign(FIXTURES / name)
    [(line, rec)] = [(n, r) for n, r in _records(name) if r.get("type") == "compacted"]
    history = rec["payload"]["replacement_history"]
    [compaction] = [e for e in fs.entries if e["type"] == "compaction"]
    assert compaction["summary"] == rec["payload"]["message"]
    assert compaction["raw"]["lines"] == [line]
    # tokensBefore: the context size of the last call before it (the file's own last usage)
    last_before = [
        _payload(r)["info"]["last_token_usage"]["total_tokens"]
        for n, r in _records(name)
        if n < line
        and r.get("type") == "event_msg"
        and _payload(r).get("type") == "token_count"
        and _payload(r)["info"]["last_token_usage"]["input_tokens"] > 0
    ][-1]
    assert compaction["tokensBefore"] == last_before
    context = fs.manager().build_session_context()
    assert context.messages[0]["role"] == "compactionSummary"
    messages_in_history = [i for i in history if i.get("type") == "message"]
    after = [e for e in fs.entries if e["raw"]["lines"] and e["raw"]["lines"][0] > line]
    after_messages = [e for e in after if e["type"] in ("message", "custom_message")]
    assert len(context.messages) == 1 + len(messages_in_history) + len(after_messages)
    # the replacement history, in its order, right after the summary
    roles = [i["role"] for i in messages_in_history]
    mapped = [m["role"] for m in context.messages[1 : 1 + len(roles)]]
    assert mapped == ["custom" if r == "developer" else r for r in roles]
    # nothing from before the compaction is in the context (all of it is still in the session)
    from pi_nb.session.context import build_context_entries

    in_context = build_context_entries(fs.entries[1:])
    assert in_context[0] is compaction
    assert all(e["raw"]["lines"][0] >= line for e in in_context)
    assert any(e["raw"]["lines"][0] < line for e in fs.manager().get_entries())
    assert compaction["firstKeptEntryId"] == compaction["id"]
    # the encrypted summary item is kept, not shown
    kept = [e for e in fs.entries if e.get("customType") == "codex/replacement_compaction"]
    assert len(kept) == 1 and kept[0]["data"]["type"] == "compaction"


def test_function_call_with_unparseable_arguments_keeps_them() -> None:
    name = "localpush-0.104-remote-compaction.jsonl"  # its arguments were redacted to plain text
    entries = read_foreign(FIXTURES / name).entries
    calls = [
        (e, item)
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
        for item in e["raw"].get("items", [])
        if item["type"] == "function_call"
    ]
    assert calls
    for entry, item in calls:
        assert item["arguments"].startswith("[REDACTED_ARGUMENTS")
        block = entry["message"]["content"][item["block"]]
        assert block["type"] == "toolCall" and block["arguments"] == {}


def test_unanswered_call_and_thinking_level() -> None:
    name = "localpush-0.104-unanswered-call.jsonl"
    entries = read_foreign(FIXTURES / name).entries
    [assistant] = _messages(entries, "assistant")
    assert assistant["stopReason"] == "toolUse"
    assert _messages(entries, "toolResult") == []
    [level] = [e for e in entries if e["type"] == "thinking_level_change"]
    effort = next(_payload(r)["effort"] for _n, r in _records(name) if r.get("type") == "turn_context")
    assert level["thinkingLevel"] == effort


# ---------------------------------------------------------------------------------------------
# synthetic files


def test_broken_lines_are_problems_and_the_rest_is_read() -> None:
    fs = read_foreign(FIXTURES / "synthetic-broken.jsonl")
    assert [n for n, _ in fs.problems] == [3, 4, 5, 7, 10]
    reasons = dict(fs.problems)
    assert reasons[3].startswith("not JSON")
    assert reasons[10].startswith("not JSON")  # the torn last line
    assert "invalid UTF-8" in reasons[7]
    kinds = [(e["type"], e.get("customType")) for e in fs.entries[1:]]
    assert kinds == [
        ("message", None),
        ("custom", "codex/invalid"),
        ("custom", "codex/invalid"),
        ("message", None),
        ("custom", "codex/mystery_record"),
    ]
    text = _messages(fs.entries, "assistant")[0]["content"][0]["text"]
    assert text.startswith("café ") and "\ufffd" in text
    assert _messages(fs.entries, "assistant")[0]["usage"]["totalTokens"] == 105


def test_errors_aborts_images_and_local_compaction() -> None:
    fs = read_foreign(FIXTURES / "synthetic-events.jsonl")
    entries = fs.entries
    assert fs.problems == []
    user = _messages(entries, "user")[0]
    assert user["content"][1] == {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    bad = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert bad["message"]["content"][0]["arguments"] == {}
    assert bad["raw"]["items"][0]["arguments"] == '{"command": ["ls"'
    stops = [(m["stopReason"], m.get("errorMessage")) for m in _messages(entries, "assistant")]
    assert ("error", "unexpected status 500 Internal Server Error") in stops
    assert ("aborted", "turn aborted (interrupted)") in stops
    assert any(e.get("customType") == "codex/stream_error" for e in entries)
    levels = [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"]
    assert levels == ["medium", "high"]
    first, second = [e for e in entries if e["type"] == "compaction"]
    # the summarising call's usage is the compaction's
    assert first["usage"]["totalTokens"] == 1700 and first["tokensBefore"] == 1315
    # the summary Codex sends as a user message is the compaction's summary, not a second copy
    assert any(e.get("customType") == "codex/replacement_summary" for e in entries)
    i = entries.index(first)
    mid = [e for e in entries if entries.index(e) > i and e["raw"].get("replacementHistory")]
    assert [e["message"]["content"][0]["text"] for e in mid if e["type"] == "message"] == [
        "What is in this picture?",
        "now run the tests",
    ]
    # the leaf is after the second compaction, which has no replacement history: its summary only
    context = fs.manager().build_session_context()
    assert [m["role"] for m in context.messages] == ["compactionSummary"]
    assert context.messages[0]["summary"] == second["summary"]
    # on the leaf of the first compaction's branch, the replacement history follows the summary
    leaf = next(
        e["id"]
        for e in entries
        if e["type"] == "message" and e["message"].get("content") == [{"type": "text", "text": "thanks"}]
    )
    from pi_nb.session.context import build_session_context

    roles = [m["role"] for m in build_session_context(entries[1:], leaf).messages]
    assert roles == ["compactionSummary", "user", "user", "user"]
    # usage sums against the file's totals
    final = [
        _payload(r)["info"]["total_token_usage"]
        for _n, r in _records("synthetic-events.jsonl")
        if _payload(r).get("type") == "token_count"
    ][-1]
    assert sum(u["totalTokens"] for u in _usages(entries)) == final["total_tokens"]


def test_old_format() -> None:
    name = "synthetic-old-format.jsonl"
    assert detect_harness(FIXTURES / name) == "codex"
    fs = read_foreign(FIXTURES / name)
    assert fs.problems == []
    header = fs.header
    assert header["id"] == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert header["timestamp"] == "2025-05-07T17:24:21.000Z"
    assert "harnessVersion" not in header and header["raw"]["git"]["branch"] == "main"
    states = [e for e in fs.entries if e.get("customType") == "codex/state"]
    assert len(states) == 4
    results = _messages(fs.entries, "toolResult")
    assert [(r["toolName"], r["isError"]) for r in results] == [
        ("shell", False),
        ("shell", True),
        ("local_shell", False),
    ]
    assert results[0]["content"] == [{"type": "text", "text": "3\n"}]
    assistants = _messages(fs.entries, "assistant")
    assert [b["type"] for b in assistants[0]["content"]] == ["thinking", "text", "toolCall"]
    assert assistants[-1]["content"] == [{"type": "text", "text": "There are 3 files."}]
    custom = [e for e in fs.entries if e["type"] == "custom_message"]
    assert [c["customType"] for c in custom] == ["codex/environment_context"]


# ---------------------------------------------------------------------------------------------
# detection


def test_looks_like_refuses_pi_and_claude_code() -> None:
    pi_first = json.loads(
        (Path(__file__).parent / "fixtures" / "pi_session.jsonl").read_text().splitlines()[0]
    )
    assert not codex.looks_like([pi_first])
    claude = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "sessionId": "s",
            "message": {"role": "assistant"},
        },
    ]
    assert not codex.looks_like(claude)
    assert not codex.looks_like([])
    assert not codex.looks_like([{"id": "x", "timestamp": "t"}])  # a lone object is not enough
    for name in ALL:
        records = [r for _n, r in _records(name)][:25]
        assert codex.looks_like(records), name


def test_read_bytes_without_a_session_meta() -> None:
    data = (FIXTURES / "agent-history-0.135-exec.jsonl").read_bytes().split(b"\n", 1)[1]
    fs = read_foreign_bytes(data, "/x/rollout-2026-06-05T10-28-20-019e9625-802f-7e91-840a-cfe88d14117a.jsonl")
    assert fs.header["id"] == "019e9625-802f-7e91-840a-cfe88d14117a"
    assert fs.problems and fs.problems[0][0] == 1
    assert len(_messages(fs.entries, "assistant")) == 1


def _rollout(*records: dict[str, Any]) -> bytes:
    meta = {
        "timestamp": "2025-12-01T08:00:00.000Z",
        "type": "session_meta",
        "payload": {
            "id": "0199cccc-0000-7000-8000-000000000003",
            "timestamp": "2025-12-01T08:00:00.000Z",
            "cwd": "/w",
        },
    }
    return b"\n".join(json.dumps(r).encode() for r in (meta, *records)) + b"\n"


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2025-12-01T08:00:01.000Z", "type": "response_item", "payload": payload}


def test_items_without_a_pi_block_are_kept() -> None:
    data = _rollout(
        _item(
            {
                "type": "reasoning",
                "id": "rs_9",
                "summary": [],
                "content": None,
                "encrypted_content": "gAAAA...",
            }
        ),
        _item(
            {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "pi"}}
        ),
        _item(
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "found"}]}
        ),
        _item({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        _item(
            {
                "type": "function_call_output",
                "call_id": "call_nowhere",
                "output": [
                    {"type": "input_text", "text": "see"},
                    {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/"},
                    {"type": "input_image", "image_url": "https://example.invalid/x.png"},
                ],
            }
        ),
        {"timestamp": "2025-12-01T08:00:02.000Z", "type": "session_meta", "payload": {"id": "other"}},
    )
    fs = read_foreign_bytes(data)
    assert fs.problems == []
    [assistant_entry] = [
        e for e in fs.entries if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assistant = assistant_entry["message"]
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "", "redacted": True},
        {"type": "text", "text": "found"},
    ]
    items = assistant_entry["raw"]["items"]
    assert items[0]["encrypted_content"] == "gAAAA..." and items[0]["block"] == 0
    assert items[1]["type"] == "web_search_call" and items[1]["block"] is None
    assert items[1]["action"]["query"] == "pi"
    assert any(e.get("customType") == "codex/ghost_snapshot" for e in fs.entries)
    assert any(e.get("customType") == "codex/session_meta" for e in fs.entries)
    [result_entry] = [
        e for e in fs.entries if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert result_entry["message"]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image", "data": "/9j/", "mimeType": "image/jpeg"},
    ]
    assert result_entry["raw"]["outputItems"] == [
        {"type": "input_image", "image_url": "https://example.invalid/x.png"}
    ]
    assert result_entry["raw"]["unmatchedCall"] is True and result_entry["message"]["toolName"] == ""


def test_ids_differ_between_sessions_and_empty_data_is_a_problem() -> None:
    a = read_foreign(FIXTURES / "localpush-0.104-session.jsonl")
    b = read_foreign(FIXTURES / "localpush-0.104-unanswered-call.jsonl")
    assert not {e["id"] for e in a.entries[1:]} & {e["id"] for e in b.entries[1:]}
    empty = codex.read(b"", "/x/rollout-2025-01-01T00-00-00-0199dddd-0000-7000-8000-000000000004.jsonl")
    assert [e["type"] for e in empty.entries] == ["session"]
    assert empty.header["id"] == "0199dddd-0000-7000-8000-000000000004"
    assert len(empty.problems) == 1
