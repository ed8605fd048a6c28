"""Session format migrations v1 -> v2 -> v3 (Pi's migration.test.ts plus the edge cases of
``migrateSessionEntries``; Pi's answers on the same inputs are golden in test_session_roundtrip.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pi_nb import CURRENT_SESSION_VERSION, migrate_session_entries
from pi_nb._js import js_stringify


def v1() -> list[dict[str, Any]]:
    return [
        {"type": "session", "id": "sess-1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/tmp"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "timestamp": "2025-01-01T00:00:02Z", "message": {"role": "assistant", "content": [], "timestamp": 2}},
        {"type": "compaction", "timestamp": "2025-01-01T00:00:03Z", "summary": "s", "firstKeptEntryIndex": 2, "tokensBefore": 5},
        {"type": "message", "timestamp": "2025-01-01T00:00:04Z", "message": {"role": "hookMessage", "content": "h", "timestamp": 4}},
    ]  # fmt: skip


def test_v1_gets_version_3_ids_and_a_linear_chain() -> None:
    entries = v1()
    assert migrate_session_entries(entries) is True
    assert CURRENT_SESSION_VERSION == 3
    header, *rest = entries
    assert header["version"] == 3
    assert list(header) == ["type", "id", "timestamp", "cwd", "version"]  # appended, as in JS
    ids = [e["id"] for e in rest]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == 4
    assert [e["parentId"] for e in rest] == [None, *ids[:-1]]
    compaction = rest[2]
    assert compaction["firstKeptEntryId"] == rest[1]["id"]  # index 2 counts the header
    assert "firstKeptEntryIndex" not in compaction
    assert rest[3]["message"]["role"] == "custom"
    assert js_stringify(compaction).startswith('{"type":"compaction","timestamp"')


def test_already_migrated_entries_are_unchanged() -> None:
    entries = v1()
    migrate_session_entries(entries)
    snapshot = js_stringify(entries)
    assert migrate_session_entries(entries) is False
    assert js_stringify(entries) == snapshot


def test_v2_only_renames_hook_messages() -> None:
    entries: list[Any] = [
        {"type": "session", "version": 2, "id": "s"},
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "hookMessage"}},
        {"type": "message", "id": "b", "parentId": "a", "message": None},
        {"type": "custom_message", "id": "c", "parentId": "b"},
    ]
    assert migrate_session_entries(entries) is True
    assert [e.get("id") for e in entries] == ["s", "a", "b", "c"]
    assert entries[0]["version"] == 3 and entries[1]["message"]["role"] == "custom"


@pytest.mark.parametrize(
    ("version", "migrates", "gets_ids"),
    [(None, True, True), (1, True, True), (2, True, False), ("2", True, False), (3, False, False), (7, False, False), ("x", True, False), ([], True, True)],
)  # fmt: skip
def test_version_is_compared_like_javascript(version: Any, migrates: bool, gets_ids: bool) -> None:
    entries: list[Any] = [
        {"type": "session", "version": version, "id": "s"},
        {"type": "message", "id": "keep", "parentId": None, "message": {"role": "hookMessage"}},
    ]
    assert migrate_session_entries(entries) is migrates
    assert (entries[1]["id"] != "keep") is gets_ids
    if version == "x":  # NaN: every comparison is false, yet Pi reports (and rewrites) a migration
        assert entries[0]["version"] == "x" and entries[1]["message"]["role"] == "hookMessage"


def test_first_kept_entry_index_variants() -> None:
    entries: list[Any] = [
        {"type": "session", "id": "s"},
        {"type": "message", "message": {"role": "user"}},
        {"type": "compaction", "firstKeptEntryIndex": 0},  # the header: no id
        {"type": "compaction", "firstKeptEntryIndex": 1.0},  # integral float finds entry 1
        {"type": "compaction", "firstKeptEntryIndex": 1.5},  # not an index
        {"type": "compaction", "firstKeptEntryIndex": "1"},  # not a number: left alone
        {"type": "compaction", "firstKeptEntryIndex": 99, "firstKeptEntryId": "old"},  # out of range
        {"type": "compaction", "firstKeptEntryIndex": 8, "firstKeptEntryId": "old"},  # later entry: no id yet
        {"type": "message", "message": {"role": "user"}},
    ]
    migrate_session_entries(entries)
    first = entries[1]["id"]
    assert "firstKeptEntryId" not in entries[2] and "firstKeptEntryIndex" not in entries[2]
    assert entries[3]["firstKeptEntryId"] == first
    assert "firstKeptEntryId" not in entries[4] and "firstKeptEntryIndex" not in entries[4]
    assert entries[5]["firstKeptEntryIndex"] == "1" and "firstKeptEntryId" not in entries[5]
    assert entries[6]["firstKeptEntryId"] == "old"
    assert "firstKeptEntryId" not in entries[7]


def test_headerless_list_is_treated_as_v1() -> None:
    entries: list[Any] = [{"type": "message", "message": {"role": "hookMessage"}}]
    assert migrate_session_entries(entries) is True
    assert entries[0]["parentId"] is None and entries[0]["message"]["role"] == "custom"


def test_non_objects_raise_like_pi() -> None:
    with pytest.raises(TypeError):
        migrate_session_entries([None])
    with pytest.raises(TypeError):
        migrate_session_entries([{"type": "session", "id": "s"}, 42])
    assert migrate_session_entries([{"type": "session", "version": 3, "id": "s"}, 42]) is False
