"""SessionManager: Pi's own session-manager tests (spec §11.6), ported, plus paths and listing.

Ported from ``packages/coding-agent/test/session-manager/{tree-traversal,labels,migration,
save-entry,file-operations,custom-session-id}.test.ts`` and ``test/session-info-modified-timestamp
.test.ts`` / ``test/session-file-invalid.test.ts`` (behaviour as of 0.85.0).
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb import (
    EntryNotFoundError,
    InvalidEntryError,
    InvalidSessionFileError,
    InvalidSessionIdError,
    SessionManager,
    find_most_recent_session,
    get_agent_dir,
    get_default_session_dir,
    list_all_sessions,
    list_sessions,
    load_entries_from_file,
)
from pi_nb.session.paths import resolve_session_dir, session_file_name

UUID_V7_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
USAGE = {
    "input": 10,
    "output": 20,
    "cacheRead": 30,
    "cacheWrite": 40,
    "totalTokens": 100,
    "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0.3, "cacheWrite": 0.4, "total": 1},
}


def user_msg(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": int(time.time() * 1000)}


def assistant_msg(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": int(time.time() * 1000),
    }


def read_records(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().strip().split("\n") if line]


# ---------------------------------------------------------------------------------------------
# tree-traversal.test.ts


class TestAppend:
    def test_append_message_parent_chain(self) -> None:
        s = SessionManager.in_memory()
        id1 = s.append_message(user_msg("first"))
        id2 = s.append_message(assistant_msg("second"))
        id3 = s.append_message(user_msg("third"))
        entries = s.get_entries()
        assert [e["id"] for e in entries] == [id1, id2, id3]
        assert [e["parentId"] for e in entries] == [None, id1, id2]
        assert entries[0]["type"] == "message"
        assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in (id1, id2, id3))

    def test_thinking_level_and_model_change_in_tree(self) -> None:
        s = SessionManager.in_memory()
        msg = s.append_message(user_msg("hello"))
        thinking = s.append_thinking_level_change("high")
        model = s.append_model_change("openai", "gpt-4")
        s.append_message(assistant_msg("response"))
        entries = s.get_entries()
        assert entries[1] == {
            **entries[1],
            "type": "thinking_level_change",
            "parentId": msg,
            "thinkingLevel": "high",
        }
        assert entries[2]["parentId"] == thinking
        assert (entries[2]["provider"], entries[2]["modelId"]) == ("openai", "gpt-4")
        assert entries[3]["parentId"] == model

    def test_append_compaction(self) -> None:
        s = SessionManager.in_memory()
        id1 = s.append_message(user_msg("1"))
        id2 = s.append_message(assistant_msg("2"))
        cid = s.append_compaction("summary", id1, 1000, from_hook=False, usage=USAGE)
        s.append_message(user_msg("3"))
        entry = s.get_entry(cid)
        assert entry is not None
        assert entry["parentId"] == id2
        assert (entry["summary"], entry["firstKeptEntryId"], entry["tokensBefore"]) == ("summary", id1, 1000)
        assert entry["usage"] == USAGE
        assert "details" not in entry and entry["fromHook"] is False
        assert list(entry) == [
            "type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "usage", "fromHook",
        ]  # fmt: skip
        assert s.get_entries()[3]["parentId"] == cid

    def test_append_custom_entry(self) -> None:
        s = SessionManager.in_memory()
        msg = s.append_message(user_msg("hello"))
        cid = s.append_custom_entry("my_data", {"key": "value"})
        s.append_message(assistant_msg("response"))
        entry = s.get_entry(cid)
        assert entry is not None
        assert (entry["parentId"], entry["customType"], entry["data"]) == (msg, "my_data", {"key": "value"})
        assert list(entry) == ["type", "customType", "data", "id", "parentId", "timestamp"]
        assert s.get_entries()[2]["parentId"] == cid

    def test_leaf_advances(self) -> None:
        s = SessionManager.in_memory()
        assert s.get_leaf_id() is None
        id1 = s.append_message(user_msg("1"))
        assert s.get_leaf_id() == id1
        id2 = s.append_message(assistant_msg("2"))
        assert s.get_leaf_id() == id2
        id3 = s.append_thinking_level_change("high")
        assert s.get_leaf_id() == id3

    def test_summary_messages_are_not_message_entries(self) -> None:
        s = SessionManager.in_memory()
        with pytest.raises(InvalidEntryError, match="append_compaction"):
            s.append_message({"role": "compactionSummary", "summary": "x", "tokensBefore": 1, "timestamp": 1})
        with pytest.raises(InvalidEntryError):
            s.append_message("not a message")  # type: ignore[arg-type]
        assert s.get_entries() == []


class TestGetBranchAndTree:
    def test_get_branch(self) -> None:
        s = SessionManager.in_memory()
        assert s.get_branch() == []
        id1 = s.append_message(user_msg("1"))
        assert [e["id"] for e in s.get_branch()] == [id1]
        id2 = s.append_message(assistant_msg("2"))
        id3 = s.append_thinking_level_change("high")
        id4 = s.append_message(user_msg("3"))
        assert [e["id"] for e in s.get_branch()] == [id1, id2, id3, id4]
        assert [e["id"] for e in s.get_branch(id2)] == [id1, id2]
        assert s.get_branch("unknown") == []

    def test_tree_empty_and_linear(self) -> None:
        s = SessionManager.in_memory()
        assert s.get_tree() == []
        id1 = s.append_message(user_msg("1"))
        id2 = s.append_message(assistant_msg("2"))
        id3 = s.append_message(user_msg("3"))
        tree = s.get_tree()
        assert len(tree) == 1
        assert tree[0].entry["id"] == id1
        assert [c.entry["id"] for c in tree[0].children] == [id2]
        assert [c.entry["id"] for c in tree[0].children[0].children] == [id3]
        assert tree[0].children[0].children[0].children == ()

    def test_tree_with_branches(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("1"))
        id2 = s.append_message(assistant_msg("2"))
        id3 = s.append_message(user_msg("3"))
        s.branch(id2)
        id4 = s.append_message(user_msg("4-branch"))
        tree = s.get_tree()
        node2 = tree[0].children[0]
        assert node2.entry["id"] == id2
        assert sorted(c.entry["id"] for c in node2.children) == sorted([id3, id4])

    def test_three_way_and_deep_branching(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("root"))
        id2 = s.append_message(assistant_msg("response"))
        ids = []
        for name in "ABC":
            s.branch(id2)
            ids.append(s.append_message(user_msg(f"branch-{name}")))
        assert sorted(c.entry["id"] for c in s.get_tree()[0].children[0].children) == sorted(ids)

        s = SessionManager.in_memory()
        s.append_message(user_msg("1"))
        id2 = s.append_message(assistant_msg("2"))
        id3 = s.append_message(user_msg("3"))
        s.append_message(assistant_msg("4"))
        s.branch(id2)
        id5 = s.append_message(user_msg("5"))
        s.append_message(assistant_msg("6"))
        s.branch(id5)
        s.append_message(user_msg("7"))
        node2 = s.get_tree()[0].children[0]
        assert len(node2.children) == 2
        node5 = next(c for c in node2.children if c.entry["id"] == id5)
        node3 = next(c for c in node2.children if c.entry["id"] == id3)
        assert (len(node5.children), len(node3.children)) == (2, 1)

    def test_children_sorted_by_timestamp_and_orphans_are_roots(self) -> None:
        s = SessionManager.in_memory(
            entries=[
                {
                    "type": "session",
                    "version": 3,
                    "id": "s",
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "cwd": "/",
                },
                {
                    "type": "custom",
                    "customType": "r",
                    "id": "r",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:00Z",
                },
                {
                    "type": "custom",
                    "customType": "c",
                    "id": "late",
                    "parentId": "r",
                    "timestamp": "2026-01-01T00:00:09Z",
                },
                {
                    "type": "custom",
                    "customType": "c",
                    "id": "early",
                    "parentId": "r",
                    "timestamp": "2026-01-01T00:00:01Z",
                },
                {
                    "type": "custom",
                    "customType": "o",
                    "id": "orphan",
                    "parentId": "gone",
                    "timestamp": "2026-01-01T00:00:02Z",
                },
                {
                    "type": "custom",
                    "customType": "o",
                    "id": "self",
                    "parentId": "self",
                    "timestamp": "2026-01-01T00:00:03Z",
                },
            ]
        )
        tree = s.get_tree()
        assert [n.entry["id"] for n in tree] == ["r", "orphan", "self"]
        assert [c.entry["id"] for c in tree[0].children] == ["early", "late"]
        assert tree[0].to_dict()["children"][0]["entry"]["id"] == "early"

    def test_deep_linear_tree_has_no_recursion_limit(self) -> None:
        s = SessionManager.in_memory()
        for i in range(3000):
            s.append_custom_entry("n", i)
        tree = s.get_tree()
        depth = sum(1 for _ in tree[0].walk())
        assert depth == 3000
        d = tree[0].to_dict()
        for _ in range(2999):
            d = d["children"][0]
        assert d["entry"]["data"] == 2999 and d["children"] == []


class TestBranching:
    def test_branch_moves_leaf(self) -> None:
        s = SessionManager.in_memory()
        id1 = s.append_message(user_msg("1"))
        s.append_message(assistant_msg("2"))
        id3 = s.append_message(user_msg("3"))
        assert s.get_leaf_id() == id3
        s.branch(id1)
        assert s.get_leaf_id() == id1
        id4 = s.append_message(user_msg("branched"))
        assert s.get_entry(id4)["parentId"] == id1  # type: ignore[index]

    def test_branch_unknown(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("hello"))
        with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
            s.branch("nonexistent")
        with pytest.raises(KeyError):  # EntryNotFoundError is a KeyError too
            s.branch("nonexistent")

    def test_reset_leaf_makes_new_root(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("1"))
        s.reset_leaf()
        assert s.get_leaf_id() is None
        assert s.build_session_context().messages == []
        new = s.append_message(user_msg("new root"))
        assert s.get_entry(new)["parentId"] is None  # type: ignore[index]
        assert len(s.get_tree()) == 2

    def test_branch_with_summary(self) -> None:
        s = SessionManager.in_memory()
        id1 = s.append_message(user_msg("1"))
        s.append_message(assistant_msg("2"))
        id3 = s.append_message(user_msg("3"))
        sid = s.branch_with_summary(id1, "Summary of abandoned work", from_hook=False, usage=USAGE)
        assert s.get_leaf_id() == sid
        entry = s.get_entry(sid)
        assert entry is not None
        assert (entry["parentId"], entry["fromId"], entry["summary"]) == (
            id1,
            id3,
            "Summary of abandoned work",
        )
        assert entry["usage"] == USAGE
        assert list(entry) == [
            "type",
            "id",
            "parentId",
            "timestamp",
            "fromId",
            "summary",
            "usage",
            "fromHook",
        ]
        with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
            s.branch_with_summary("nonexistent", "summary")
        s.reset_leaf()
        root_summary = s.branch_with_summary(None, "from nowhere")
        assert s.get_entry(root_summary)["fromId"] == "root"  # type: ignore[index]
        assert s.get_entry(root_summary)["parentId"] is None  # type: ignore[index]

    def test_leaf_and_entry_getters(self) -> None:
        s = SessionManager.in_memory()
        assert s.get_leaf_entry() is None
        assert s.get_entry("nonexistent") is None
        id1 = s.append_message(user_msg("first"))
        id2 = s.append_message(assistant_msg("second"))
        assert s.get_leaf_entry()["id"] == id2  # type: ignore[index]
        assert s.get_entry(id1)["message"]["content"] == "first"  # type: ignore[index,typeddict-item]
        assert [e["id"] for e in s.get_children(id1)] == [id2]

    def test_context_follows_current_branch_only(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("msg1"))
        id2 = s.append_message(assistant_msg("msg2"))
        s.append_message(user_msg("msg3"))
        s.branch(id2)
        s.append_message(assistant_msg("msg4-branch"))
        messages = s.build_session_context().messages
        assert [
            m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in messages
        ] == [  # type: ignore[typeddict-item]
            "msg1",
            "msg2",
            "msg4-branch",
        ]


class TestCreateBranchedSession:
    def test_unknown(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("hello"))
        with pytest.raises(EntryNotFoundError, match="Entry nonexistent not found"):
            s.create_branched_session("nonexistent")

    def test_in_memory_keeps_only_path(self) -> None:
        s = SessionManager.in_memory()
        id1 = s.append_message(user_msg("1"))
        id2 = s.append_message(assistant_msg("2"))
        id3 = s.append_message(user_msg("3"))
        s.append_message(assistant_msg("4"))
        s.branch(id3)
        s.append_message(user_msg("5"))
        old_id = s.get_session_id()
        assert s.create_branched_session(id2) is None
        assert [e["id"] for e in s.get_entries()] == [id1, id2]
        assert s.get_session_id() != old_id and UUID_V7_RE.match(s.get_session_id())
        assert s.get_header()["id"] == s.get_session_id()  # type: ignore[index]

    def test_path_from_branched_tree(self) -> None:
        s = SessionManager.in_memory()
        id1 = s.append_message(user_msg("1"))
        id2 = s.append_message(assistant_msg("2"))
        s.append_message(user_msg("3"))
        s.branch(id2)
        id4 = s.append_message(user_msg("4"))
        id5 = s.append_message(assistant_msg("5"))
        s.create_branched_session(id5)
        assert [e["id"] for e in s.get_entries()] == [id1, id2, id4, id5]

    def test_fork_from_first_user_message_defers_file_and_never_duplicates(self, tmp_path: Path) -> None:
        s = SessionManager.create(str(tmp_path), str(tmp_path))
        id1 = s.append_message(user_msg("first question"))
        s.append_message(assistant_msg("first answer"))
        s.append_message(user_msg("second question"))
        s.append_message(assistant_msg("second answer"))
        new_file = s.create_branched_session(id1)
        assert new_file is not None and not os.path.exists(new_file)
        s.append_custom_entry("preset-state", {"name": "plan"})
        s.append_message(assistant_msg("new answer"))
        records = read_records(new_file)
        assert sum(r["type"] == "session" for r in records) == 1
        ids = [r["id"] for r in records if r["type"] != "session"]
        assert len(set(ids)) == len(ids) == 3

    def test_usage_survives_reload(self, tmp_path: Path) -> None:
        s = SessionManager.create(str(tmp_path), str(tmp_path))
        root = s.append_message(user_msg("question"))
        s.append_message(assistant_msg("answer"))
        s.append_message(
            {
                "role": "toolResult",
                "toolCallId": "call-1",
                "toolName": "nested-model",
                "content": [{"type": "text", "text": "result"}],
                "isError": False,
                "usage": USAGE,
                "timestamp": 1,
            }
        )
        s.append_compaction("summary", root, 100, from_hook=False, usage=USAGE)
        s.branch_with_summary(root, "branch summary", from_hook=False, usage=USAGE)
        reopened = SessionManager.open(s.get_session_file(), str(tmp_path))  # type: ignore[arg-type]
        by_type = {e["type"]: e for e in reopened.get_entries()}
        assert by_type["compaction"]["usage"] == USAGE  # type: ignore[typeddict-item]
        assert by_type["branch_summary"]["usage"] == USAGE  # type: ignore[typeddict-item]
        assert reopened.get_entries() == s.get_entries()

    def test_path_with_assistant_written_at_once(self, tmp_path: Path) -> None:
        s = SessionManager.create(str(tmp_path), str(tmp_path))
        s.append_message(user_msg("first question"))
        id2 = s.append_message(assistant_msg("first answer"))
        old_file = s.get_session_file()
        s.append_message(user_msg("second question"))
        new_file = s.create_branched_session(id2)
        assert new_file is not None and os.path.exists(new_file)
        records = read_records(new_file)
        assert [r["type"] for r in records] == ["session", "message", "message"]
        assert records[0]["parentSession"] == old_file


# ---------------------------------------------------------------------------------------------
# labels.test.ts


class TestLabels:
    def test_set_get_latest_and_clear(self) -> None:
        s = SessionManager.in_memory()
        msg = s.append_message(user_msg("hello"))
        label_id = s.append_label_change(msg, "checkpoint")
        assert re.fullmatch(r"[0-9a-f]{8}", label_id)
        assert s.get_entry(label_id)["type"] == "label"  # type: ignore[index]
        assert s.get_leaf_id() == label_id  # the label entry is the new leaf
        assert s.get_label(msg) == "checkpoint"
        s.append_label_change(msg, "second")
        s.append_label_change(msg, "third")
        assert s.get_label(msg) == "third"
        s.append_label_change(msg)  # undefined clears
        assert s.get_label(msg) is None
        assert "label" not in s.get_entries()[-1]
        s.append_label_change(msg, "again")
        s.append_label_change(msg, "")  # empty clears too
        assert s.get_label(msg) is None

    def test_labels_on_tree_nodes_with_timestamp(self) -> None:
        s = SessionManager.in_memory()
        msg = s.append_message(user_msg("hello"))
        s.append_label_change(msg, "important")
        label_entry = s.get_leaf_entry()
        tree = s.get_tree()
        assert tree[0].label == "important"
        assert tree[0].label_timestamp == label_entry["timestamp"]  # type: ignore[index]
        assert tree[0].to_dict()["labelTimestamp"] == label_entry["timestamp"]  # type: ignore[index]
        # the label entry itself is a node (a child of the message): Pi's labels are tree entries
        assert tree[0].children[0].entry["type"] == "label"
        assert tree[0].children[0].label is None

    def test_labels_not_in_context(self) -> None:
        s = SessionManager.in_memory()
        msg = s.append_message(user_msg("hello"))
        s.append_label_change(msg, "x")
        assert [m["role"] for m in s.build_session_context().messages] == ["user"]

    def test_unknown_target(self) -> None:
        s = SessionManager.in_memory()
        with pytest.raises(EntryNotFoundError, match=r"^Entry non-existent not found$"):
            s.append_label_change("non-existent", "label")

    def test_branched_session_keeps_and_rechains_labels(self) -> None:
        s = SessionManager.in_memory()
        u1 = s.append_message(user_msg("1"))
        a1 = s.append_message(assistant_msg("2"))
        s.append_label_change(u1, "first")
        s.append_label_change(a1, "answer")
        mc = s.append_model_change("openai", "gpt-4")  # child of the second label entry
        s.branch(u1)
        off = s.append_message(user_msg("off path"))
        s.append_label_change(off, "off-path")
        s.create_branched_session(mc)
        entries = s.get_entries()
        assert [e["type"] for e in entries] == ["message", "message", "model_change", "label", "label"]
        assert entries[2]["parentId"] == a1  # re-parented past the removed labels
        assert [(e["targetId"], e["label"]) for e in entries[3:]] == [(u1, "first"), (a1, "answer")]  # type: ignore[typeddict-item]
        assert entries[3]["parentId"] == mc and entries[4]["parentId"] == entries[3]["id"]
        assert s.get_label(u1) == "first" and s.get_label(off) is None

    def test_compaction_pointing_at_removed_label_moves_to_next_entry(self) -> None:
        s = SessionManager.in_memory()
        s.append_message(user_msg("1"))
        a1 = s.append_message(assistant_msg("2"))
        lab = s.append_label_change(a1, "mark")
        u2 = s.append_message(user_msg("3"))
        comp = s.append_compaction("summary", lab, 10)
        s.create_branched_session(comp)
        compaction = next(e for e in s.get_entries() if e["type"] == "compaction")
        assert compaction["firstKeptEntryId"] == u2  # type: ignore[typeddict-item]


# ---------------------------------------------------------------------------------------------
# save-entry.test.ts, migration.test.ts


def test_custom_entry_between_messages_not_in_context() -> None:
    s = SessionManager.in_memory()
    u = s.append_message(user_msg("hello"))
    c = s.append_custom_entry("my_data", {"foo": "bar"})
    a = s.append_message(assistant_msg("hi"))
    entries = s.get_entries()
    assert [e["id"] for e in entries] == [u, c, a]
    assert entries[1]["parentId"] == u and entries[2]["parentId"] == c
    assert len(s.get_tree()) == 1
    assert [m["role"] for m in s.build_session_context().messages] == ["user", "assistant"]


def test_v1_file_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    lines = [
        {"type": "session", "id": "sess-1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/tmp"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "timestamp": "2025-01-01T00:00:02Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "timestamp": 2}},
    ]  # fmt: skip
    original = "".join(json.dumps(line) + "\n" for line in lines)
    path.write_text(original)
    s = SessionManager.open(str(path))
    assert s.get_header()["version"] == 3  # type: ignore[index,typeddict-item]
    entries = s.get_entries()
    assert all(re.fullmatch(r"[0-9a-f]{8}", e["id"]) for e in entries)
    assert entries[0]["parentId"] is None and entries[1]["parentId"] == entries[0]["id"]
    # rewritten as v3; the original bytes are kept beside it
    assert read_records(str(path))[0]["version"] == 3
    assert s.backup_path == str(path) + ".bak"
    assert Path(s.backup_path).read_text() == original
    # already migrated: ids stay, no second backup
    again = SessionManager.open(str(path))
    assert [e["id"] for e in again.get_entries()] == [e["id"] for e in entries]
    assert again.backup_path is None


# ---------------------------------------------------------------------------------------------
# file-operations.test.ts, session-file-invalid.test.ts

HEADER = '{"type":"session","id":"abc","timestamp":"2025-01-01T00:00:00Z","cwd":"/tmp"}\n'
MESSAGE = '{"type":"message","id":"1","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}\n'


class TestLoadEntriesFromFile:
    def test_empty_results(self, tmp_path: Path) -> None:
        assert load_entries_from_file(tmp_path / "nonexistent.jsonl") == []
        (tmp_path / "empty.jsonl").write_text("")
        assert load_entries_from_file(tmp_path / "empty.jsonl") == []
        (tmp_path / "no-header.jsonl").write_text('{"type":"message","id":"1"}\n')
        assert load_entries_from_file(tmp_path / "no-header.jsonl") == []
        (tmp_path / "malformed.jsonl").write_text("not json\n")
        assert load_entries_from_file(tmp_path / "malformed.jsonl") == []

    def test_valid_and_malformed_middle(self, tmp_path: Path) -> None:
        (tmp_path / "valid.jsonl").write_text(HEADER + MESSAGE)
        assert [e["type"] for e in load_entries_from_file(tmp_path / "valid.jsonl")] == ["session", "message"]
        (tmp_path / "mixed.jsonl").write_text(HEADER + "not valid json\n" + MESSAGE)
        assert len(load_entries_from_file(tmp_path / "mixed.jsonl")) == 2

    def test_header_after_blank_and_malformed_lines(self, tmp_path: Path) -> None:
        (tmp_path / "late.jsonl").write_text("\n\nnot json\n" + HEADER + MESSAGE)
        assert [e["type"] for e in load_entries_from_file(tmp_path / "late.jsonl")] == ["session", "message"]
        assert SessionManager.open(str(tmp_path / "late.jsonl")).get_session_id() == "abc"

    def test_header_longer_than_read_buffer(self, tmp_path: Path) -> None:
        big_cwd = "/tmp/" + "x" * (2 * 1024 * 1024)
        path = tmp_path / "big.jsonl"
        path.write_text(
            json.dumps({"type": "session", "id": "big", "timestamp": "2025-01-01T00:00:00Z", "cwd": big_cwd})
            + "\n"
            + MESSAGE
        )
        s = SessionManager.open(str(path))
        assert s.get_session_id() == "big" and s.get_cwd() == big_cwd
        assert find_most_recent_session(str(tmp_path)) is None  # discovery reads at most 1 MiB

    def test_missing_trailing_newline_is_repaired(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        path.write_text(HEADER + MESSAGE.rstrip("\n"))
        assert len(load_entries_from_file(path)) == 2
        assert path.read_text() == HEADER + MESSAGE


class TestFindMostRecentSession:
    def test_nothing(self, tmp_path: Path) -> None:
        assert find_most_recent_session(str(tmp_path)) is None
        assert find_most_recent_session(str(tmp_path / "nonexistent")) is None
        (tmp_path / "file.txt").write_text("hello")
        (tmp_path / "file.json").write_text("{}")
        (tmp_path / "invalid.jsonl").write_text('{"type":"message"}\n')
        assert find_most_recent_session(str(tmp_path)) is None

    def test_newest_valid(self, tmp_path: Path) -> None:
        old, new, bad = tmp_path / "older.jsonl", tmp_path / "newer.jsonl", tmp_path / "bad.jsonl"
        old.write_text(HEADER)
        new.write_text(HEADER)
        bad.write_text('{"type":"not-session"}\n')
        os.utime(old, (1_000_000, 1_000_000))
        os.utime(new, (2_000_000, 2_000_000))
        os.utime(bad, (3_000_000, 3_000_000))
        assert find_most_recent_session(str(tmp_path)) == str(new)

    def test_cwd_filter(self, tmp_path: Path) -> None:
        a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
        for path, cwd in ((a, tmp_path / "project-a"), (b, tmp_path / "project-b")):
            path.write_text(
                json.dumps(
                    {"type": "session", "id": path.stem, "timestamp": "2025-01-01T00:00:00Z", "cwd": str(cwd)}
                )
                + "\n"
            )
        os.utime(a, (1_000_000, 1_000_000))
        assert find_most_recent_session(str(tmp_path), str(tmp_path / "project-a")) == str(a)
        assert find_most_recent_session(str(tmp_path), str(tmp_path / "project-b")) == str(b)


def _persisted(cwd: str, session_dir: str, label: str) -> str:
    s = SessionManager.create(cwd, session_dir)
    s.append_message(user_msg(label))
    s.append_message(assistant_msg(f"reply to {label}"))
    path = s.get_session_file()
    assert path is not None
    return path


def test_flat_custom_session_dir_is_scoped_by_cwd(tmp_path: Path) -> None:
    project_a, project_b = str(tmp_path / "project-a"), str(tmp_path / "project-b")
    os.makedirs(project_a)
    os.makedirs(project_b)
    session_a = _persisted(project_a, str(tmp_path), "from A")
    time.sleep(0.01)
    session_b = _persisted(project_b, str(tmp_path), "from B")
    assert [s.path for s in list_sessions(project_a, str(tmp_path))] == [session_a]
    assert {s.path for s in list_all_sessions(str(tmp_path))} == {session_a, session_b}
    assert SessionManager.continue_recent(project_a, str(tmp_path)).get_session_file() == session_a


class TestInvalidFiles:
    def test_empty_file_gets_a_header(self, tmp_path: Path) -> None:
        path = tmp_path / "empty.jsonl"
        path.write_text("")
        s = SessionManager.open(str(path), str(tmp_path))
        assert s.get_session_file() == str(path)
        records = read_records(str(path))
        assert (
            len(records) == 1 and records[0]["type"] == "session" and records[0]["id"] == s.get_session_id()
        )
        assert SessionManager.open(str(path)).get_session_id() == s.get_session_id()
        assert s.backup_path is None

    @pytest.mark.parametrize(
        "content",
        [
            '{"type":"message","id":"abc","parentId":"orphaned","timestamp":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"test"}}\n',
            '{"type":"event","data":"not a session"}\n',
            "\n  \n",
        ],
    )
    def test_non_session_file_throws_and_is_untouched(self, tmp_path: Path, content: str) -> None:
        path = tmp_path / "not-a-session.log"
        path.write_text(content)
        with pytest.raises(InvalidSessionFileError) as err:
            SessionManager.open(str(path), str(tmp_path))
        assert str(err.value) == f"Session file is not a valid pi session: {path}"
        assert path.read_text() == content
        assert os.listdir(tmp_path) == ["not-a-session.log"]

    def test_missing_file_keeps_path_and_writes_on_first_answer(self, tmp_path: Path) -> None:
        path = tmp_path / "sub" / "explicit.jsonl"
        s = SessionManager.open(str(path))
        assert s.get_session_file() == str(path)
        s.append_message(user_msg("q"))
        assert not path.exists()
        s.append_message(assistant_msg("a"))
        assert [r["type"] for r in read_records(str(path))] == ["session", "message", "message"]


# ---------------------------------------------------------------------------------------------
# custom-session-id.test.ts


class TestSessionIds:
    def test_custom_ids(self, tmp_path: Path) -> None:
        s = SessionManager.in_memory()
        s.new_session("my-custom-id")
        assert s.get_session_id() == "my-custom-id" and s.get_header()["id"] == "my-custom-id"  # type: ignore[index]
        s.new_session("abc-123_def.456")
        assert s.get_session_id() == "abc-123_def.456"
        mem = SessionManager.in_memory(os.getcwd(), session_id="memory-session-id")
        assert mem.get_session_id() == "memory-session-id" and mem.get_session_file() is None

    @pytest.mark.parametrize(
        "bad", ["", "-abc", "abc-", "_abc", "abc_", ".abc", "abc.", "abc/def", "abc\\def", "abc def", "abc\n"]
    )
    def test_rejected(self, bad: str) -> None:
        s = SessionManager.in_memory()
        with pytest.raises(
            InvalidSessionIdError,
            match=r"^Session id must be non-empty, contain only alphanumeric characters",
        ):
            s.new_session(bad)

    def test_generated_ids_are_uuid7(self) -> None:
        s = SessionManager.in_memory()
        assert UUID_V7_RE.match(s.get_session_id())
        s.new_session(parent_session="parent.jsonl")
        assert UUID_V7_RE.match(s.get_session_id())
        assert s.get_header()["parentSession"] == "parent.jsonl"  # type: ignore[index,typeddict-item]

    def test_persisted_custom_id_file_name(self, tmp_path: Path) -> None:
        s = SessionManager.create(str(tmp_path), str(tmp_path), session_id="created-session-id")
        assert s.get_session_id() == "created-session-id"
        path = s.get_session_file()
        assert path is not None
        assert re.fullmatch(
            r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_created-session-id\.jsonl", os.path.basename(path)
        )
        assert not os.path.exists(path)

    def test_forks_point_at_their_source(self, tmp_path: Path) -> None:
        source = tmp_path / "source.jsonl"
        source.write_text(
            json.dumps(
                {
                    "type": "session",
                    "version": 3,
                    "id": "legacy-session-id",
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "cwd": str(tmp_path),
                }
            )
            + "\n"
        )
        forked = SessionManager.fork_from(str(source), str(tmp_path), str(tmp_path))
        assert UUID_V7_RE.match(forked.get_session_id())
        assert forked.get_header()["parentSession"] == str(source)  # type: ignore[index,typeddict-item]
        named = SessionManager.fork_from(
            str(source), str(tmp_path), str(tmp_path), session_id="forked-session-id"
        )
        assert named.get_session_file().endswith("_forked-session-id.jsonl")  # type: ignore[union-attr]
        with pytest.raises(InvalidSessionIdError):
            SessionManager.fork_from(str(source), str(tmp_path), str(tmp_path), session_id="bad id")

    def test_fork_of_invalid_source(self, tmp_path: Path) -> None:
        (tmp_path / "bad.jsonl").write_text("nope\n")
        with pytest.raises(Exception, match="Cannot fork: source session file is empty or invalid"):
            SessionManager.fork_from(str(tmp_path / "bad.jsonl"), str(tmp_path), str(tmp_path))


# ---------------------------------------------------------------------------------------------
# paths, names, listing (session-info-modified-timestamp.test.ts)


def test_agent_dir_and_default_session_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_agent_dir() == str(tmp_path / "home" / ".pi" / "agent")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/custom-agent")
    assert get_agent_dir() == str(tmp_path / "home" / "custom-agent")
    d = get_default_session_dir("/home/u/proj", str(tmp_path / "agent"))
    assert d == str(tmp_path / "agent" / "sessions" / "--home-u-proj--") and os.path.isdir(d)
    s = SessionManager.create("/home/u/proj")
    assert os.path.dirname(s.get_session_file()) == str(
        tmp_path / "home" / "custom-agent" / "sessions" / "--home-u-proj--"
    )  # type: ignore[arg-type]
    assert s.uses_default_session_dir()


def test_session_file_name_and_dir_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    assert session_file_name("2026-12-02T08:24:02.711Z", "01a2") == "2026-12-02T08-24-02-711Z_01a2.jsonl"
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    assert resolve_session_dir(None, "/from/settings") == "/from/settings"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", "/from/env")
    assert resolve_session_dir(None, "/from/settings") == "/from/env"
    assert resolve_session_dir("/explicit", "/from/settings") == "/explicit"


def test_list_sessions_uses_last_message_time_names_and_texts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = [
        {"type": "session", "version": 3, "id": "sid", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p", "parentSession": "/parent.jsonl"},
        {"type": "message", "id": "1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}], "timestamp": 1767225600000 + 5000}},
        {"type": "message", "id": "2", "parentId": "1", "timestamp": "2026-01-01T00:00:02.000Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
        {"type": "message", "id": "3", "parentId": "2", "timestamp": "2026-01-01T00:09:00.000Z", "message": {"role": "toolResult", "content": [{"type": "text", "text": "ignored"}], "timestamp": 1767225600000 + 999999}},
        {"type": "session_info", "id": "4", "parentId": "3", "timestamp": "2026-01-01T00:00:03.000Z", "name": " first "},
        {"type": "session_info", "id": "5", "parentId": "4", "timestamp": "2026-01-01T00:00:04.000Z", "name": "  named  "},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "empty-header.jsonl").write_text(
        json.dumps({"type": "session", "id": "e", "timestamp": "2025-06-01T00:00:00.000Z"}) + "\n"
    )
    (tmp_path / "not-session.jsonl").write_text('{"type":"message"}\n')
    infos = list_sessions("/p", str(tmp_path))
    assert [i.id for i in infos] == ["sid"]  # flat dir: the other header has no cwd
    info = list_all_sessions(str(tmp_path))[0]
    assert info.id == "sid"
    assert info.modified == datetime(
        2026, 1, 1, 0, 0, 5, tzinfo=UTC
    )  # user timestamp, assistant's entry time
    assert info.created == datetime(2026, 1, 1, tzinfo=UTC)
    assert (info.name, info.message_count, info.first_message) == ("named", 3, "hello there")
    assert info.all_messages_text == "hello there hi"
    assert info.parent_session_path == "/parent.jsonl"
    assert info.to_dict()["modified"] == "2026-01-01T00:00:05.000Z"
    other = list_all_sessions(str(tmp_path))[1]
    assert (other.cwd, other.first_message, other.modified) == (
        "",
        "(no messages)",
        datetime(2025, 6, 1, tzinfo=UTC),
    )


def test_session_name() -> None:
    s = SessionManager.in_memory()
    assert s.get_session_name() is None
    s.append_session_info("My\r\n\nname ")
    assert s.get_session_name() == "My name"
    assert s.get_entries()[-1]["name"] == "My name"  # type: ignore[typeddict-item]
    s.append_session_info("   ")
    assert s.get_session_name() is None
    with pytest.raises(InvalidEntryError):
        s.append_session_info(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# property: whatever was appended comes back from the file


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=20)),
        st.tuples(st.just("assistant"), st.text(max_size=20)),
        # (an int past 2**53 is a double in JavaScript and is written as Pi would write it: rounded)
        st.tuples(st.just("custom"), st.integers(-(2**53) + 1, 2**53 - 1)),
        st.tuples(st.just("label"), st.integers(0, 50)),
        st.tuples(st.just("branch"), st.integers(0, 50)),
        st.tuples(st.just("summary"), st.integers(0, 50)),
        st.tuples(st.just("reset"), st.none()),
    ),
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_reload_gives_back_entries_tree_and_context(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, Any]]
) -> None:
    directory = tmp_path_factory.mktemp("prop")
    s = SessionManager.create("/tmp/proj", str(directory))
    ids: list[str] = []
    for kind, arg in ops:
        if kind == "user":
            ids.append(s.append_message(user_msg(arg)))
        elif kind == "assistant":
            ids.append(s.append_message(assistant_msg(arg)))
        elif kind == "custom":
            ids.append(s.append_custom_entry("c", {"n": arg}))
        elif kind == "reset":
            s.reset_leaf()
        elif ids:
            target = ids[arg % len(ids)]
            if kind == "label":
                ids.append(s.append_label_change(target, f"l{arg}"))
            elif kind == "branch":
                s.branch(target)
            else:
                ids.append(s.branch_with_summary(target, f"s{arg}"))
    path = s.get_session_file()
    assert path is not None
    if not any(k == "assistant" for k, _ in ops):
        assert not os.path.exists(path)  # Pi's rule: no answer, no file
        return
    reloaded = SessionManager.open(path)
    assert reloaded.load_problems == []
    assert reloaded.get_entries() == s.get_entries()
    assert [n.to_dict() for n in reloaded.get_tree()] == [n.to_dict() for n in s.get_tree()]
    last = s.get_entries()[-1]["id"]
    s.branch(last)  # a reload puts the leaf on the last entry
    assert reloaded.build_session_context() == s.build_session_context()
    assert reloaded.get_session_id() == s.get_session_id()
