"""Golden parity with Pi 0.85.0 over 320 generated session paths (no oracle needed).

Replays tests/golden/compaction_paths_*.jsonl (written by tests/golden/make_compaction.py):
``findValidCutPoints``, ``findCutPoint``, ``findTurnStartIndex``, ``prepareCompaction``,
``estimateContextTokens``, ``shouldCompact``, ``serializeConversation`` and ``computeFileLists``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_nb.compaction import (
    CompactionSettings,
    compute_file_lists,
    create_file_ops,
    extract_file_ops_from_message,
    find_cut_point,
    find_turn_start_index,
    find_valid_cut_points,
    format_file_operations,
    prepare_compaction,
    serialize_conversation,
    should_compact,
)
from pi_nb.errors import PiNbError
from pi_nb.tokens import estimate_context_tokens

GOLDEN = Path(__file__).parent / "golden"


def _load() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(GOLDEN.glob("compaction_paths_*.jsonl")):
        # split on "\n" only: the JSON keeps U+2028 and friends raw, which str.splitlines would cut
        lines = path.read_text(encoding="utf-8").split("\n")
        header = json.loads(lines[0])
        assert header["source"] == "Pi 0.85.0 via pi-oracle"
        records.extend(json.loads(line) for line in lines[1:] if line)
    return records


RECORDS = _load()


def _expand(messages: list[Any], entries: list[dict[str, Any]]) -> list[Any]:
    return [entries[m["$entry"]]["message"] if isinstance(m, dict) and "$entry" in m else m for m in messages]


def _run(fn: str, args: dict[str, Any], entries: list[dict[str, Any]]) -> Any:
    if fn == "findValidCutPoints":
        return find_valid_cut_points(entries, args.get("startIndex", 0), args.get("endIndex"))
    if fn == "findCutPoint":
        return find_cut_point(
            entries, args.get("startIndex", 0), args.get("endIndex"), args.get("keepRecentTokens", 20000)
        ).to_dict()
    if fn == "findTurnStartIndex":
        return find_turn_start_index(entries, args["entryIndex"], args.get("startIndex", 0))
    if fn == "prepareCompaction":
        prep = prepare_compaction(entries, CompactionSettings.from_dict(args["settings"]))
        return None if prep is None else prep.to_dict()
    if fn == "estimateContextTokens":
        return estimate_context_tokens(_expand(args["messages"], entries)).to_dict()
    if fn == "shouldCompact":
        settings = CompactionSettings.from_dict(args.get("settings"))
        return should_compact(args["contextTokens"], args["contextWindow"], settings)
    if fn == "serializeConversation":
        return serialize_conversation(_expand(args["messages"], entries))
    if fn == "computeFileLists":
        ops = create_file_ops()
        for message in _expand(args["messages"], entries):
            extract_file_ops_from_message(message, ops)
        lists = compute_file_lists(ops)
        return {
            "fileOps": ops.to_dict(),
            **lists.to_dict(),
            "formatted": format_file_operations(lists.read_files, lists.modified_files),
        }
    raise AssertionError(f"unknown fn {fn}")


def test_golden_files_cover_the_brief() -> None:
    assert len(RECORDS) >= 300
    fns = {call["fn"] for rec in RECORDS for call in rec["calls"]}
    assert fns == {
        "findValidCutPoints",
        "findCutPoint",
        "findTurnStartIndex",
        "prepareCompaction",
        "estimateContextTokens",
        "shouldCompact",
        "serializeConversation",
        "computeFileLists",
    }
    kinds = {e["type"] for rec in RECORDS for e in rec["entries"]}
    assert {"compaction", "branch_summary", "custom_message", "model_change", "label", "custom"} <= kinds
    roles = {e["message"]["role"] for rec in RECORDS for e in rec["entries"] if e["type"] == "message"}
    assert roles == {"user", "assistant", "toolResult", "bashExecution"}
    split = [
        c
        for rec in RECORDS
        for c in rec["calls"]
        if c["fn"] == "findCutPoint" and c["response"].get("ok") and c["response"]["result"]["isSplitTurn"]
    ]
    assert len(split) > 100
    prepared = [
        c
        for rec in RECORDS
        for c in rec["calls"]
        if c["fn"] == "prepareCompaction" and c["response"].get("result")
    ]
    assert any("previousSummary" in c["response"]["result"] for c in prepared)
    assert any(c["response"]["result"]["isSplitTurn"] for c in prepared)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["name"])
def test_matches_pi(record: dict[str, Any]) -> None:
    entries = record["entries"]
    for call in record["calls"]:
        fn, args, response = call["fn"], call["args"], call["response"]
        if not response.get("ok"):
            with pytest.raises(PiNbError):
                _run(fn, args, entries)
            continue
        want = response["result"]
        if fn == "prepareCompaction" and want is not None:
            want = {
                **want,
                "messagesToSummarize": _expand(want["messagesToSummarize"], entries),
                "turnPrefixMessages": _expand(want["turnPrefixMessages"], entries),
            }
        got = _run(fn, args, entries)
        assert got == want, f"{record['name']}: {fn}({args})"
