"""The offline model: planning, one tool call per step, answers from results, summaries, usage."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_nb.providers import Context, StreamOptions
from pi_nb.providers.offline import OFFLINE_RESPONSE_MODEL, OfflineModel, plan_actions

ALL_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"]
TOOL_SCHEMAS = [{"name": n, "description": n, "parameters": {"type": "object"}} for n in ALL_TOOLS]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_plan_in_text_order_with_fallbacks() -> None:
    text = 'Please read big.txt lines 10-19, then run `seq 5000` and search for "TODO" in src; list docs.'
    plan = plan_actions(text, ALL_TOOLS)
    assert [(a.tool, a.arguments) for a in plan] == [
        ("read", {"path": "big.txt", "offset": 10, "limit": 10}),
        ("bash", {"command": "seq 5000"}),
        ("grep", {"pattern": "TODO", "path": "src"}),
        ("ls", {"path": "docs"}),
    ]
    fallback = plan_actions('search for "TODO" and list docs', ["read", "bash"])
    assert [a.arguments["command"] for a in fallback] == ["grep -rn -- TODO .", "ls -la docs"]
    assert plan_actions("run `ls`", ["read"])[0].tool == "unavailable:bash"


def test_write_and_edit_are_parsed() -> None:
    plan = plan_actions(
        'write "hello\\nworld" to out.txt then replace "hello" with "bye" in out.txt', ALL_TOOLS
    )
    assert plan[0].tool == "write" and plan[0].arguments == {"path": "out.txt", "content": "hello\nworld"}
    assert plan[1].arguments == {"path": "out.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}


def test_one_tool_call_per_step_then_an_answer() -> None:
    m = OfflineModel()
    msgs = [user("read notes.txt and run `echo hi`")]
    first = m.respond(Context("sys", msgs, TOOL_SCHEMAS))
    assert first["stopReason"] == "toolUse"
    call = first["content"][-1]
    assert call["name"] == "read" and call["arguments"] == {"path": "notes.txt"}
    assert first["responseModel"] == OFFLINE_RESPONSE_MODEL and first["api"] == "offline"
    msgs += [
        first,
        {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": "read",
            "content": [{"type": "text", "text": "line one\nline two"}],
            "isError": False,
            "timestamp": 2,
        },
    ]
    second = m.respond(Context("sys", msgs, TOOL_SCHEMAS))
    assert second["content"][-1]["name"] == "bash"
    msgs += [
        second,
        {
            "role": "toolResult",
            "toolCallId": "x",
            "toolName": "bash",
            "content": [{"type": "text", "text": "hi\n"}],
            "isError": False,
            "timestamp": 3,
        },
    ]
    final = m.respond(Context("sys", msgs, TOOL_SCHEMAS))
    assert final["stopReason"] == "stop"
    text = final["content"][0]["text"]
    assert "`notes.txt`: 2 lines shown" in text and "line one" in text and "`echo hi`" in text


def test_usage_counts_the_request_with_tiktoken() -> None:
    from pi_nb.tokens import count_tokens

    m = OfflineModel()
    ctx = Context("You are terse.", [user("hello there")], None)
    msg = m.respond(ctx)
    assert msg["usage"]["input"] == count_tokens("You are terse.\nhello there") + 4
    assert msg["usage"]["output"] > 0
    assert msg["usage"]["totalTokens"] == msg["usage"]["input"] + msg["usage"]["output"]


def test_overflow_error_and_length_stop() -> None:
    from pi_nb.compaction import is_context_overflow

    small = OfflineModel(context_window=10)
    msg = small.respond(Context("x " * 50, [user("hi")], None))
    assert msg["stopReason"] == "error" and msg["errorMessage"].startswith("prompt is too long:")
    assert is_context_overflow(msg, 10)
    cut = OfflineModel().respond(Context(None, [user("hello")], None), StreamOptions(max_tokens=5))
    assert cut["stopReason"] == "length" and cut["usage"]["output"] == 5


def test_summary_follows_requested_headings_and_merges_previous() -> None:
    prompt = (
        "<conversation>\n[User]: Fix the bug in app.py. Never touch tests.\n\n"
        '[Assistant tool calls]: read(path="app.py")\n\n[Tool result]: def f(): return 1/0\n\n'
        "[Assistant]: Found a division by zero.\n</conversation>\n\n"
        "<previous-summary>\n## Goal\n- Earlier goal\n</previous-summary>\n\n"
        "Use this format:\n\n## Goal\n## Constraints & Preferences\n## Progress\n### Done\n### In Progress\n"
        "### Blocked\n## Key Decisions\n## Next Steps\n## Critical Context\n"
    )
    out = OfflineModel().respond(Context("summarise", [user(prompt)], None))["content"][0]["text"]
    headings = [ln for ln in out.split("\n") if ln.startswith("#")]
    assert headings == [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ]
    assert "- Earlier goal" in out and "Fix the bug in app.py" in out
    assert "Never touch tests." in out
    assert 'read(path="app.py")' in out and "File: app.py" in out


def test_stream_emits_deltas_that_add_up() -> None:
    m = OfflineModel()

    async def run() -> list[dict[str, Any]]:
        return [dict(e) async for e in m.stream(Context(None, [user("hello")], None))]

    events = asyncio.run(run())
    deltas = "".join(e["delta"] for e in events if e["type"] == "text_delta")
    assert events[-1]["type"] == "done"
    assert deltas == events[-1]["message"]["content"][0]["text"]


def test_continues_from_the_summary_after_an_overflow_retry() -> None:
    summary = (
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\n- read notes.txt and run `echo hi`\n\n"
        "## Early Progress\n- (none)\n</summary>"
    )
    m = OfflineModel()
    first = m.respond(Context("sys", [user(summary)], TOOL_SCHEMAS))
    assert first["stopReason"] == "toolUse" and first["content"][-1]["name"] == "read"


def test_backticked_commands_stay_commands_and_call_ids_differ_between_branches() -> None:
    plan = plan_actions("run `cat notes.txt` then read `other.txt`", ALL_TOOLS)
    assert [(a.tool, a.arguments) for a in plan] == [
        ("bash", {"command": "cat notes.txt"}),
        ("read", {"path": "other.txt"}),
    ]
    m = OfflineModel()
    a = m.respond(Context(None, [user("run `echo a`")], TOOL_SCHEMAS))["content"][-1]["id"]
    b = m.respond(Context(None, [user("run `echo b`")], TOOL_SCHEMAS))["content"][-1]["id"]
    again = m.respond(Context(None, [user("run `echo a`")], TOOL_SCHEMAS))["content"][-1]["id"]
    assert a != b and a == again


def test_updating_a_summary_carries_bullets_not_blocks() -> None:
    previous = (
        "## Goal\n- first goal\n\n## Critical Context\n- File: a.py\n\n---\n\n**Turn Context (split turn):**\n\n"
        "## Original Request\n- do x\n\n<read-files>\na.py\n</read-files>"
    )
    prompt = (
        "<conversation>\n[User]: next\n</conversation>\n\n<previous-summary>\n"
        + previous
        + "\n</previous-summary>\n\n"
        "## Goal\n## Critical Context\n"
    )
    out = OfflineModel().respond(Context("s", [user(prompt)], None))["content"][0]["text"]
    assert "Turn Context" not in out and "---" not in out and "<read-files>" not in out
    assert "- first goal" in out and "- File: a.py" in out
