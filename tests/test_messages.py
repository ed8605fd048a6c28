"""Messages: convert_to_llm, bash_execution_to_text, summary wrappers, blockImages, timestamps."""

from __future__ import annotations

import copy
import json
import math
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pi_nb
from pi_nb import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    InvalidEntryError,
    InvalidMessageError,
    bash_execution_to_text,
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
    session_entry_to_context_messages,
)
from pi_nb._js import UNDEFINED, js_stringify
from pi_nb.messages import IMAGE_BLOCKED_TEXT, js_date_ms

GOLDEN = json.loads(
    (Path(__file__).parent / "golden" / "session_trees_messages.json").read_text(encoding="utf-8")
)
CASES = [c for c in GOLDEN["cases"] if "fn" in c]


def as_json(value: Any) -> Any:
    return json.loads(js_stringify(value))


def by_fn(fn: str, *, with_env: bool = False) -> list[dict[str, Any]]:
    return [c for c in CASES if c["fn"] == fn and ("env" in c) == with_env]


def case_id(c: dict[str, Any]) -> str:
    return js_stringify(c["args"])[:80]


# ---------------------------------------------------------------------------------------------
# Golden replay
# ---------------------------------------------------------------------------------------------


def test_message_constants() -> None:
    (case,) = by_fn("messageConstants")
    assert case["response"]["result"] == {
        "COMPACTION_SUMMARY_PREFIX": COMPACTION_SUMMARY_PREFIX,
        "COMPACTION_SUMMARY_SUFFIX": COMPACTION_SUMMARY_SUFFIX,
        "BRANCH_SUMMARY_PREFIX": BRANCH_SUMMARY_PREFIX,
        "BRANCH_SUMMARY_SUFFIX": BRANCH_SUMMARY_SUFFIX,
    }


@pytest.mark.parametrize("case", by_fn("bashExecutionToText"), ids=case_id)
def test_bash_execution_to_text_golden(case: dict[str, Any]) -> None:
    assert case["response"]["ok"]
    assert bash_execution_to_text(case["args"]["message"]) == case["response"]["result"]


@pytest.mark.parametrize("case", by_fn("convertToLlm"), ids=case_id)
def test_convert_to_llm_golden(case: dict[str, Any]) -> None:
    messages = case["args"]["messages"]
    snapshot = copy.deepcopy(messages)
    if not case["response"]["ok"]:
        with pytest.raises(InvalidMessageError):
            convert_to_llm(messages)
        return
    assert as_json(convert_to_llm(messages)) == case["response"]["result"]
    assert messages == snapshot


# Strings only V8's legacy fallback parser understands; pi_nb gives NaN for them (documented at js_date_ms).
LEGACY_ONLY_TIMESTAMPS = {"Jan 1 2026"}


@pytest.mark.parametrize("case", by_fn("sessionEntryToContextMessages"), ids=case_id)
def test_session_entry_to_context_messages_golden(case: dict[str, Any]) -> None:
    entry = case["args"]["entry"]
    if isinstance(entry.get("timestamp"), str) and entry["timestamp"] in LEGACY_ONLY_TIMESTAMPS:
        assert case["response"]["result"][0]["timestamp"] is not None
        assert math.isnan(session_entry_to_context_messages(entry)[0]["timestamp"])
        return
    if not case["response"]["ok"]:
        with pytest.raises(InvalidEntryError):
            session_entry_to_context_messages(entry)
        return
    assert as_json(session_entry_to_context_messages(entry)) == case["response"]["result"]


@pytest.fixture
def local_zone() -> Iterator[Any]:
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is not available on this platform")
    old = os.environ.get("TZ")

    def use(tz: str) -> None:
        os.environ["TZ"] = tz
        time.tzset()

    yield use
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.mark.parametrize(
    "case",
    by_fn("sessionEntryToContextMessages", with_env=True),
    ids=lambda c: c["env"]["TZ"] + " " + str(c["args"]["entry"]["timestamp"]),
)
def test_local_time_parsing_golden(case: dict[str, Any], local_zone: Any) -> None:
    local_zone(case["env"]["TZ"])
    assert as_json(session_entry_to_context_messages(case["args"]["entry"])) == case["response"]["result"]


def test_golden_covers_timestamps_and_failures() -> None:
    stamps = [
        c for c in by_fn("sessionEntryToContextMessages") if c["args"]["entry"].get("type") == "compaction"
    ]
    assert len(stamps) >= 80
    assert any(not c["response"]["ok"] for c in CASES)


# ---------------------------------------------------------------------------------------------
# Spec §12 vectors, spelled out
# ---------------------------------------------------------------------------------------------


def bash(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "role": "bashExecution",
        "command": "ls",
        "output": "",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1,
    }
    return base | kw


def test_bash_vectors_from_the_spec() -> None:
    m = bash(output="a\nb", exitCode=1, truncated=True, fullOutputPath="/tmp/f.log")
    assert bash_execution_to_text(m) == (
        "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 1\n\n[Output truncated. Full output: /tmp/f.log]"
    )
    assert bash_execution_to_text(bash(command="echo", exitCode=None, cancelled=True)) == (
        "Ran `echo`\n(no output)\n\n(command cancelled)"
    )
    assert bash_execution_to_text(bash()) == "Ran `ls`\n(no output)"
    # exit code: only a non-zero, non-null number is reported; cancelled wins
    assert bash_execution_to_text(bash(exitCode=2, cancelled=True)).endswith("(command cancelled)")
    no_code = bash()
    del no_code["exitCode"]
    assert bash_execution_to_text(no_code) == "Ran `ls`\n(no output)"
    # truncated without a path: no notice
    assert "truncated" not in bash_execution_to_text(bash(truncated=True))


def test_convert_vectors_from_the_spec() -> None:
    out = convert_to_llm(
        [
            bash(command="secret", excludeFromContext=True),
            {"role": "custom", "customType": "x", "content": "note", "display": True, "timestamp": 4},
            {"role": "branchSummary", "summary": "BS", "fromId": "a", "timestamp": 5},
            {"role": "compactionSummary", "summary": "CS", "tokensBefore": 9, "timestamp": 6},
        ]
    )
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "note"}], "timestamp": 4},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nBS</summary>",
                }
            ],
            "timestamp": 5,
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The conversation history before this point was compacted into the following summary:\n\n<summary>\nCS\n</summary>",
                }
            ],
            "timestamp": 6,
        },
    ]


def test_llm_roles_pass_through_as_new_dicts() -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 3}
    (out,) = convert_to_llm([user])
    assert out == user and out is not user
    assert out["content"] is user["content"]  # nested values shared, as Pi shares the object


def test_custom_block_content_is_kept_as_is() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]
    (out,) = convert_to_llm(
        [{"role": "custom", "customType": "c", "content": blocks, "display": False, "timestamp": 1}]
    )
    assert out == {"role": "user", "content": blocks, "timestamp": 1}


def test_unknown_roles_and_non_objects_are_dropped_null_raises() -> None:
    assert convert_to_llm([{"role": "hookMessage"}, {"content": "x"}, "text", 5]) == []
    with pytest.raises(InvalidMessageError):
        convert_to_llm([None])


def test_convert_accepts_any_iterable() -> None:
    gen = (m for m in [{"role": "user", "content": "a", "timestamp": 1}])
    assert convert_to_llm(gen) == [{"role": "user", "content": "a", "timestamp": 1}]


# ---------------------------------------------------------------------------------------------
# blockImages (core/sdk.ts convertToLlmWithBlockImages)
# ---------------------------------------------------------------------------------------------

IMG = {"type": "image", "data": "AA==", "mimeType": "image/png"}
PLACEHOLDER = {"type": "text", "text": IMAGE_BLOCKED_TEXT}


def test_block_images_replaces_and_collapses_runs() -> None:
    msg = {
        "role": "user",
        "content": [IMG, IMG, {"type": "text", "text": "t"}, IMG, IMG, IMG],
        "timestamp": 1,
    }
    (out,) = convert_to_llm([msg], block_images=True)
    assert out["content"] == [PLACEHOLDER, {"type": "text", "text": "t"}, PLACEHOLDER]
    assert msg["content"][0] is IMG  # input untouched
    (plain,) = convert_to_llm([msg])
    assert plain["content"] == msg["content"]


def test_block_images_merges_an_existing_placeholder_text_only_when_images_exist() -> None:
    msg = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "read",
        "content": [PLACEHOLDER, IMG],
        "isError": False,
        "timestamp": 1,
    }
    (out,) = convert_to_llm([msg], block_images=True)
    assert out["content"] == [PLACEHOLDER]
    no_images = {"role": "user", "content": [PLACEHOLDER, PLACEHOLDER], "timestamp": 1}
    (out2,) = convert_to_llm([no_images], block_images=True)
    assert out2["content"] == [PLACEHOLDER, PLACEHOLDER]


def test_block_images_covers_custom_messages_but_not_strings_or_assistants() -> None:
    custom = {"role": "custom", "customType": "c", "content": [IMG], "display": True, "timestamp": 1}
    (out,) = convert_to_llm([custom], block_images=True)
    assert out["content"] == [PLACEHOLDER]
    (s,) = convert_to_llm([{"role": "user", "content": "text", "timestamp": 1}], block_images=True)
    assert s["content"] == "text"
    odd_assistant = {"role": "assistant", "content": [IMG], "timestamp": 1}
    (a,) = convert_to_llm([odd_assistant], block_images=True)
    assert a["content"] == [IMG]


def test_block_images_null_block_raises() -> None:
    with pytest.raises(InvalidMessageError):
        convert_to_llm([{"role": "user", "content": [IMG, None], "timestamp": 1}], block_images=True)


block = st.sampled_from([IMG, PLACEHOLDER, {"type": "text", "text": "a"}, {"type": "text", "text": "b"}])


@settings(max_examples=200, deadline=None)
@given(st.lists(block, max_size=12), st.sampled_from(["user", "toolResult"]))
def test_block_images_properties(content: list[dict[str, Any]], role: str) -> None:
    msg = {"role": role, "content": content, "timestamp": 1}
    (out,) = convert_to_llm([msg], block_images=True)
    result = out["content"]
    assert isinstance(result, list)
    assert all(b["type"] != "image" for b in result)
    if any(b["type"] == "image" for b in content):
        # no two placeholders in a row, and the other blocks keep their order
        assert not any(result[i] == PLACEHOLDER == result[i + 1] for i in range(len(result) - 1))
        others = [b for b in content if b["type"] != "image" and b != PLACEHOLDER]
        assert [b for b in result if b != PLACEHOLDER] == others
        # applying the block again changes nothing
        (again,) = convert_to_llm([out], block_images=True)
        assert again["content"] == result
    else:
        assert result == content


# ---------------------------------------------------------------------------------------------
# Builders and JS value semantics
# ---------------------------------------------------------------------------------------------


def test_builders_match_pi_shapes_and_drop_undefined() -> None:
    ts = "2026-01-01T00:00:00.000Z"
    assert create_branch_summary_message("S", "abc", ts) == {
        "role": "branchSummary",
        "summary": "S",
        "fromId": "abc",
        "timestamp": 1767225600000,
    }
    assert create_compaction_summary_message("S", 5, ts) == {
        "role": "compactionSummary",
        "summary": "S",
        "tokensBefore": 5,
        "timestamp": 1767225600000,
    }
    custom = create_custom_message("t", "c", True, UNDEFINED, ts)
    assert list(custom) == ["role", "customType", "content", "display", "timestamp"]
    with_details = create_custom_message("t", "c", False, None, ts)
    assert list(with_details) == ["role", "customType", "content", "display", "details", "timestamp"]


def test_summary_text_uses_js_string_conversion() -> None:
    (out,) = convert_to_llm([{"role": "compactionSummary", "tokensBefore": 1, "timestamp": 1}])
    assert out["content"][0]["text"] == COMPACTION_SUMMARY_PREFIX + "undefined" + COMPACTION_SUMMARY_SUFFIX  # type: ignore[index]
    (out,) = convert_to_llm([{"role": "branchSummary", "summary": 2.0, "timestamp": 1}])
    assert out["content"][0]["text"] == BRANCH_SUMMARY_PREFIX + "2" + BRANCH_SUMMARY_SUFFIX  # type: ignore[index]


def test_js_date_ms_formats_pi_writes() -> None:
    assert js_date_ms("2026-01-01T00:00:00.000Z") == 1767225600000
    assert js_date_ms("2026-01-01T00:00:00Z") == 1767225600000
    assert js_date_ms("2026-01-01T00:00:00.123456Z") == 1767225600123
    assert js_date_ms("+275760-09-13T00:00:00.000Z") == 8.64e15
    assert math.isnan(js_date_ms("+275760-09-13T00:00:00.001Z"))
    assert js_date_ms("-000001-01-01T00:00:00.000Z") == -62198755200000
    assert math.isnan(js_date_ms(UNDEFINED))
    assert js_date_ms(None) == 0
    assert js_date_ms(1.9) == 1


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-8_640_000_000_000_000, max_value=8_640_000_000_000_000))
def test_js_date_ms_round_trips_to_iso_string(ms: int) -> None:
    # Date.prototype.toISOString: 4-digit years for 0..9999, else a signed 6-digit year
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    days, rem = divmod(ms, 86_400_000)
    # proleptic Gregorian through a 400-year shift, so that years outside datetime's range work
    shift_years = 0
    d = days
    while not (-719_162 <= d <= 2_932_896):
        step = 146_097 * (1 if d > 0 else -1)
        d -= step
        shift_years += 400 * (1 if step > 0 else -1)
    when = epoch + timedelta(days=d, milliseconds=rem)
    year = when.year + shift_years
    ys = f"{year:04d}" if 0 <= year <= 9999 else ("+" if year > 0 else "-") + f"{abs(year):06d}"
    iso = f"{ys}-{when:%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z"
    assert js_date_ms(iso) == ms


def test_public_names_are_exported() -> None:
    for name in ("convert_to_llm", "bash_execution_to_text", "AgentMessage", "Message", "Usage", "ToolCall"):
        assert name in pi_nb.__all__
