"""JSONL reading and writing: Pi's parsing rules, load problems, and the write primitives.

Golden answers of Pi's ``parseSessionEntries`` are in test_session_roundtrip.py; this file checks
the rules one by one and the invariants with hypothesis (a file cut at any byte loads every
complete line and reports the cut one; serialising then parsing gives the entry back).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb import (
    LoadProblem,
    parse_session_entries,
    read_session_file,
)
from pi_nb._js import js_stringify
from pi_nb.errors import SessionError
from pi_nb.session.jsonl import (
    append_to_file,
    create_file_exclusive,
    ensure_trailing_newline,
    read_session_header,
    rewrite_file_atomic,
    serialize_entry,
)

HEADER = {"type": "session", "version": 3, "id": "sid", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}


def entry(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "type": "custom",
        "customType": "t",
        "data": {"i": i, **extra},
        "id": f"e{i}",
        "parentId": None,
        "timestamp": "t",
    }


# ---------------------------------------------------------------------------------------------
# parse_session_entries


def test_parse_skips_blank_and_malformed_and_keeps_any_json_value() -> None:
    text = '\n  {"a":1}\nnot json\n\n42\nnull\n[1]\n{"b":2}\n'
    assert parse_session_entries(text) == [{"a": 1}, 42, None, [1], {"b": 2}]


def test_parse_follows_json_parse_not_python_json() -> None:
    assert parse_session_entries('{"a":NaN}\n{"b":Infinity}\n{"c":-Infinity}') == []
    assert parse_session_entries("\ufeff" + '{"a":1}') == [{"a": 1}]  # trim() removes a leading BOM
    assert parse_session_entries('{"a":1}\n\ufeff{"b":2}') == [
        {"a": 1}
    ]  # ... but JSON.parse does not skip one
    assert parse_session_entries('{"a":1}\r\n{"b":2}\r\n') == [{"a": 1}, {"b": 2}]
    assert parse_session_entries('{"n":' + "1" * 5000 + "}")[0]["n"] == float(
        "inf"
    )  # a huge literal is a double
    assert parse_session_entries('{"s":"\\ud83d\\ude00"}') == [{"s": "😀"}]
    assert parse_session_entries("\x1c") == []  # blank to Python, not to JS: still not JSON


def test_parse_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        parse_session_entries(b"{}")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parse_never_raises(text: str) -> None:
    for value in parse_session_entries(text):
        json.dumps(value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), max_size=4))
def test_serialize_then_parse_round_trips(entries: list[dict[str, Any]]) -> None:
    text = b"".join(serialize_entry(e) for e in entries).decode("utf-8")
    assert text.count("\n") == len(entries)  # one line per entry: JSON escapes every newline
    assert parse_session_entries(text) == entries


def test_serialize_is_js_stringify_plus_newline() -> None:
    e = {"type": "x", "f": 0.1 + 0.2, "big": 1e21, "small": 1e-7, "i": 5, "u": "é\u2028😀", "lone": "\ud800"}
    assert serialize_entry(e) == (js_stringify(e) + "\n").encode("utf-8")
    assert serialize_entry(e) == (
        '{"type":"x","f":0.30000000000000004,"big":1e+21,"small":1e-7,"i":5,"u":"é\u2028😀","lone":"\\ud800"}\n'
    ).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# read_session_file


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def lines(*objs: Any) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def test_read_reports_every_unused_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl", lines(HEADER) + "garbage\n" + lines(entry(1)) + "[1,2]\n\n" + '{"torn":'
    )
    contents = read_session_file(path)
    assert contents.valid and not contents.ends_with_newline
    assert [e.get("id") for e in contents.entries] == ["sid", "e1"]
    assert [(p.line_number, p.reason.split(":")[0]) for p in contents.problems] == [
        (2, "invalid JSON"),
        (4, "not a JSON object (skipped)"),
        (6, "torn last line (no newline at end of file), invalid JSON"),
    ]
    assert contents.problems[0] == LoadProblem(2, contents.problems[0].reason, "garbage")
    assert contents.problems[0].to_dict()["lineNumber"] == 2
    assert contents.line_count == 6 and contents.size == path.stat().st_size


def test_read_invalid_and_missing(tmp_path: Path) -> None:
    missing = read_session_file(tmp_path / "nope.jsonl")
    assert (missing.exists, missing.valid, missing.entries) == (False, False, [])
    empty = read_session_file(write(tmp_path / "e.jsonl", ""))
    assert (empty.exists, empty.valid, empty.size, empty.ends_with_newline) == (True, False, 0, True)
    no_header = read_session_file(write(tmp_path / "n.jsonl", lines(entry(1), HEADER)))
    assert not no_header.valid and no_header.entries == []
    assert no_header.problems[0].reason == "first entry is not a session header"
    assert no_header.line_count == 2
    bad_id = read_session_file(write(tmp_path / "b.jsonl", lines({**HEADER, "id": 7})))
    assert not bad_id.valid


def test_read_invalid_utf8_becomes_replacement_character(tmp_path: Path) -> None:
    raw = lines(HEADER).encode() + b'{"type":"custom","customType":"\xff\xfe","id":"x","parentId":null}\n'
    contents = read_session_file(write(tmp_path / "u.jsonl", raw))
    assert contents.entries[1]["customType"] == "\ufffd\ufffd"


def test_read_very_deep_nesting_is_reported_not_fatal(tmp_path: Path) -> None:
    deep = '{"type":"custom","id":"d","x":' + "[" * 100_000 + "]" * 100_000 + "}\n"
    contents = read_session_file(write(tmp_path / "d.jsonl", lines(HEADER) + deep + lines(entry(2))))
    assert [e["id"] for e in contents.entries] == ["sid", "e2"]
    assert [p.line_number for p in contents.problems] == [2]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_file_cut_at_any_byte_loads_every_complete_line(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    entries = [HEADER] + [
        entry(i, text=data.draw(st.text(max_size=30))) for i in range(data.draw(st.integers(1, 6)))
    ]
    blob = b"".join(serialize_entry(e) for e in entries)
    cut = data.draw(st.integers(0, len(blob)))
    path = tmp_path_factory.mktemp("cut") / "s.jsonl"
    path.write_bytes(blob[:cut])
    contents = read_session_file(path)
    ends = [i + 1 for i, b in enumerate(blob) if b == 0x0A]
    complete = sum(1 for end in ends if end <= cut)
    if cut + 1 in ends:  # only the newline is missing: the line is whole and kept (Pi adds the newline)
        complete += 1
    if complete == 0:
        # only the header could be cut; a partial header is not a session
        assert contents.entries == [] and (cut == 0 or not contents.valid)
        return
    assert contents.entries == entries[:complete]
    torn = cut not in ends and cut + 1 not in ends and cut > 0
    assert len(contents.problems) == (1 if torn else 0)
    if torn:
        assert contents.problems[0].reason.startswith("torn last line")
        # repair, append, reload: the new line is whole and the torn bytes are still there
        append_to_file(path, serialize_entry(entry(99)))
        again = read_session_file(path)
        assert again.entries == [*entries[:complete], entry(99)]
        assert path.read_bytes().startswith(blob[:cut] + b"\n")


def test_read_session_header(tmp_path: Path) -> None:
    assert read_session_header(write(tmp_path / "a", "\n\nnope\n" + lines(HEADER)))["id"] == "sid"  # type: ignore[index]
    assert read_session_header(write(tmp_path / "b", lines(entry(1), HEADER))) is None
    assert read_session_header(write(tmp_path / "c", json.dumps(HEADER))) == HEADER  # no newline at the end
    assert read_session_header(write(tmp_path / "d", "")) is None
    assert read_session_header(write(tmp_path / "e", "null\n" + lines(HEADER))) == HEADER
    with pytest.raises(ValueError, match="scan limit"):
        read_session_header(write(tmp_path / "f", json.dumps({**HEADER, "cwd": "x" * (1024 * 1024)}) + "\n"))


# ---------------------------------------------------------------------------------------------
# write primitives


def test_create_file_exclusive(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    create_file_exclusive(path, b"abc\n")
    assert path.read_bytes() == b"abc\n"
    with pytest.raises(SessionError, match="already exists"):
        create_file_exclusive(path, b"other\n")
    assert path.read_bytes() == b"abc\n"
    assert sorted(os.listdir(tmp_path)) == ["new.jsonl"]  # no temporary file left behind


def test_append_repairs_missing_newline(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", "line1")
    append_to_file(path, b"line2\n")
    assert path.read_bytes() == b"line1\nline2\n"
    ensure_trailing_newline(path)
    assert path.read_bytes() == b"line1\nline2\n"
    with pytest.raises(FileNotFoundError):
        append_to_file(tmp_path / "missing.jsonl", b"x\n")


def test_rewrite_keeps_numbered_backups(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", "v1\n")
    assert rewrite_file_atomic(path, b"v2\n") == str(path) + ".bak"
    assert rewrite_file_atomic(path, b"v3\n") == str(path) + ".bak.2"
    assert rewrite_file_atomic(path, b"v4\n", backup=False) is None
    assert path.read_bytes() == b"v4\n"
    assert (tmp_path / "s.jsonl.bak").read_bytes() == b"v1\n"
    assert (tmp_path / "s.jsonl.bak.2").read_bytes() == b"v2\n"
    assert sorted(os.listdir(tmp_path)) == ["s.jsonl", "s.jsonl.bak", "s.jsonl.bak.2"]
    empty = write(tmp_path / "empty.jsonl", "")
    assert rewrite_file_atomic(empty, b"h\n") is None  # nothing to keep


def test_deep_nesting_is_refused_whichever_parser_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """orjson (the fast path) may accept nesting the json module refuses; the outcome must not
    depend on it: deep lines always take the exact path."""
    from pi_nb.session import jsonl

    calls: list[int] = []

    def fast(raw: bytes) -> Any:
        calls.append(len(raw))
        return json.loads(raw)

    monkeypatch.setattr(jsonl, "_orjson_loads", fast)
    deep = '{"type":"custom","id":"d","x":' + "[" * 5000 + "]" * 5000 + "}\n"
    contents = read_session_file(write(tmp_path / "d.jsonl", lines(HEADER) + deep + lines(entry(2))))
    # the exact JSON.parse emulation decides: Python 3.11 refuses this depth (RecursionError, so the
    # line is a problem, as a stack overflow is in JavaScript), 3.12+ reads it (as V8 does)
    from pi_nb._js import js_json_parse

    try:
        js_json_parse(deep)
    except RecursionError:
        assert [e["id"] for e in contents.entries] == ["sid", "e2"]
        assert [p.line_number for p in contents.problems] == [2]
    else:
        assert [e["id"] for e in contents.entries] == ["sid", "d", "e2"]
        assert not contents.problems
    assert len(calls) == 2  # the header and entry 2 took the fast path, the deep line did not
