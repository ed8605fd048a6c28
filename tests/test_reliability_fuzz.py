"""Fuzzing: truncation, session parsing, frontmatter and the trust store on arbitrary input.

Each target gets random input from hypothesis and must either give a correct result (checked
against invariants that hold for every input) or raise the documented :mod:`pi_nb.errors` class;
any other exception, a hang or a changed file is a failure.

Profiles: ``PI_NB_FUZZ=ci`` (the default: a few thousand examples in all, the file in well under a
minute on 2 CPUs) and ``PI_NB_FUZZ=deep`` (20x the examples, for a long run by hand or a nightly
job)::

    PI_NB_FUZZ=deep .venv/bin/pytest tests/test_reliability_fuzz.py
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pi_nb._js import js_utf8_encode
from pi_nb.errors import (
    FrontmatterError,
    PiNbError,
    SessionError,
    TruncationError,
    TrustStoreError,
)
from pi_nb.resources.frontmatter import parse_frontmatter, strip_frontmatter
from pi_nb.resources.trust import ProjectTrustStore
from pi_nb.session import SessionManager
from pi_nb.session.jsonl import read_session_file, serialize_entry
from pi_nb.truncation import OutputAccumulator, truncate_head, truncate_line, truncate_tail

# ---------------------------------------------------------------------------------------------
# profiles

settings.register_profile(
    "pi_nb-fuzz-ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    derandomize=False,
    print_blob=True,
)
settings.register_profile("pi_nb-fuzz-deep", settings.get_profile("pi_nb-fuzz-ci"))
PROFILE = os.environ.get("PI_NB_FUZZ", "ci")
if PROFILE not in ("ci", "deep"):
    raise RuntimeError(f"PI_NB_FUZZ must be 'ci' or 'deep', got {PROFILE!r}")
SCALE = 20 if PROFILE == "deep" else 1


def fuzz(examples: int) -> Callable[[Any], Any]:
    """``@settings`` of the active profile with ``examples`` (x20 under ``PI_NB_FUZZ=deep``)."""
    return settings(settings.get_profile(f"pi_nb-fuzz-{PROFILE}"), max_examples=examples * SCALE)


# ---------------------------------------------------------------------------------------------
# truncation

# text with the characters that matter: newlines (also \r), multibyte, astral, lone surrogates
_pieces = st.one_of(
    st.sampled_from(
        ["\n", "\n", "\r\n", "\r", "a", "é", "中", "🙂", "\x00", "\ud800", "\udfff", " ", "line\n"]
    ),
    st.characters(),
    st.text(max_size=8),
)
texts = st.lists(_pieces, max_size=120).map("".join)
limits = st.one_of(st.none(), st.integers(-3, 60))
byte_limits = st.one_of(st.none(), st.integers(-3, 400))


def _utf8(s: str) -> int:
    return len(js_utf8_encode(s))


def _lines(s: str) -> int:
    """Pi's line count: ``""`` has none, a trailing newline does not start a line."""
    if not s:
        return 0
    return s.count("\n") + (0 if s.endswith("\n") else 1)


def _tail_of(text: str, content: str) -> str | None:
    """What ``content`` is the end of: ``text``, or ``text`` without its final newline (Pi drops it
    when the last line is empty and the limits stop there); ``None`` if neither."""
    if text.endswith(content):
        return text
    if text.endswith("\n") and text[:-1].endswith(content):
        return text[:-1]
    return None


@fuzz(600)
@given(texts, limits, byte_limits)
def test_truncate_head_invariants(text: str, max_lines: int | None, max_bytes: int | None) -> None:
    try:
        r = truncate_head(text, max_lines=max_lines, max_bytes=max_bytes)
    except TruncationError:  # documented: Pi throws on an empty string with a negative limit
        assert text == "" and min(max_lines or 0, max_bytes or 0) < 0
        return
    assert text.startswith(r.content)  # a prefix, never invented text
    assert r.total_lines == _lines(text) and r.total_bytes == _utf8(text)
    assert r.truncated == (r.truncated_by is not None)
    if not r.truncated:
        assert r.content == text
    else:
        assert r.output_bytes == _utf8(r.content)
        if r.content:
            assert r.output_bytes <= r.max_bytes and r.output_lines <= r.max_lines
            assert text[len(r.content)] == "\n"  # whole lines only
    assert not r.last_line_partial


@fuzz(600)
@given(texts, limits, byte_limits)
def test_truncate_tail_invariants(text: str, max_lines: int | None, max_bytes: int | None) -> None:
    try:
        r = truncate_tail(text, max_lines=max_lines, max_bytes=max_bytes)
    except TruncationError:  # documented: Pi throws on an empty string with a negative limit
        assert text == "" and min(max_lines or 0, max_bytes or 0) < 0
        return
    # a partial last line is cut from the UTF-8 bytes (Buffer semantics: a lone surrogate is U+FFFD)
    whole = _tail_of(js_utf8_encode(text).decode() if r.last_line_partial else text, r.content)
    assert whole is not None  # a suffix, never invented text
    assert r.total_lines == _lines(text) and r.total_bytes == _utf8(text)
    assert r.truncated == (r.truncated_by is not None)
    if not r.truncated:
        assert r.content == text
    else:
        assert r.output_bytes == _utf8(r.content)
        if r.content:
            assert r.output_bytes <= max(r.max_bytes, 0)
        if not r.last_line_partial and r.content and len(r.content) < len(whole):
            assert r.output_lines <= max(r.max_lines, 1)
            assert whole[len(whole) - len(r.content) - 1] == "\n"  # whole lines only
    assert not r.first_line_exceeds_limit


@fuzz(400)
@given(texts, st.integers(-5, 120))
def test_truncate_line_invariants(text: str, max_chars: int) -> None:
    line, cut = truncate_line(text, max_chars)
    if not cut:
        assert line == text
    else:
        assert line.endswith("... [truncated]")
        kept = line[: -len("... [truncated]")]
        assert text.startswith(kept)


@fuzz(150)
@given(
    st.one_of(st.integers(), st.floats(), st.binary(max_size=5), st.lists(st.text(max_size=3)), st.none()),
    st.one_of(st.text(max_size=3), st.floats(allow_nan=True), st.booleans(), st.just([])),
)
def test_truncation_bad_arguments_raise_truncation_error(content: Any, limit: Any) -> None:
    for fn in (truncate_head, truncate_tail):
        with pytest.raises(TruncationError):
            fn(content)
        with pytest.raises(TruncationError):
            fn("text", max_lines=limit)
        with pytest.raises(TruncationError):
            fn("text", max_bytes=limit)


@fuzz(250)
@given(
    st.lists(st.binary(max_size=300), max_size=12),
    st.integers(0, 20),
    st.integers(0, 300),
)
def test_output_accumulator_on_arbitrary_bytes(chunks: list[bytes], max_lines: int, max_bytes: int) -> None:
    """Arbitrary (also invalid UTF-8, NUL) bytes in any chunking: counts match the whole stream,
    the shown text is a suffix of the decoded stream within the limits, the temp file holds every
    raw byte."""
    with tempfile.TemporaryDirectory() as d:
        acc = OutputAccumulator(max_lines=max_lines, max_bytes=max_bytes, tmpdir=d)
        with acc:
            for c in chunks:
                acc.append(c)
            acc.finish()
            snap = acc.snapshot(persist_if_truncated=True)
            raw = b"".join(chunks)
            decoded = raw.decode("utf-8-sig", "replace")  # TextDecoder: a leading BOM is dropped
            assert acc.total_raw_bytes == len(raw)
            assert acc.total_bytes == _utf8(decoded)
            assert snap.truncation.total_bytes == _utf8(decoded)
            assert _tail_of(decoded, snap.content) is not None
            if snap.truncation.truncated:
                assert snap.full_output_path is not None
        if snap.full_output_path is not None:
            assert Path(snap.full_output_path).read_bytes() == raw


# ---------------------------------------------------------------------------------------------
# session parsing

HEADER = {
    "type": "session",
    "version": 3,
    "id": "fuzz",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/tmp",
}


def _entries(n: int, rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parent = None
    for i in range(n):
        eid = f"e{i:04d}"
        kind = rng.random()
        if kind < 0.35:
            e = {"type": "message", "message": {"role": "user", "content": f"q{i}", "timestamp": i}}
        elif kind < 0.65:
            e = {"type": "message", "message": {
                "role": "assistant", "content": [{"type": "text", "text": f"a{i}"},
                                                 {"type": "toolCall", "id": f"c{i}", "name": "read",
                                                  "arguments": {"path": "x"}}],
                "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12},
                "stopReason": "toolUse", "timestamp": i}}  # fmt: skip
        elif kind < 0.8:
            e = {"type": "message", "message": {"role": "toolResult", "toolCallId": f"c{i - 1}", "toolName": "read",
                                                "content": [{"type": "text", "text": "r"}], "isError": False,
                                                "timestamp": i}}  # fmt: skip
        elif kind < 0.86 and out:
            e = {"type": "compaction", "summary": "s", "firstKeptEntryId": out[rng.randrange(len(out))]["id"],
                 "tokensBefore": 100}  # fmt: skip
        elif kind < 0.9 and out:
            e = {"type": "label", "targetId": out[rng.randrange(len(out))]["id"], "label": "L"}
        elif kind < 0.94:
            e = {"type": "branch_summary", "fromId": parent or "root", "summary": "b"}
        else:
            e = {"type": "model_change", "provider": "p", "modelId": "m"}
        e.update({"id": eid, "parentId": parent, "timestamp": f"2026-01-01T00:00:{i % 60:02d}.000Z"})
        out.append(e)
        parent = eid if rng.random() > 0.1 or not out else out[rng.randrange(len(out))]["id"]
    return out


# values of the wrong type for known fields
_wrong = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_fields = st.sampled_from(
    [
        ("id",),
        ("parentId",),
        ("type",),
        ("timestamp",),
        ("message",),
        ("message", "role"),
        ("message", "content"),
        ("message", "usage"),
        ("message", "timestamp"),
        ("message", "stopReason"),
        ("summary",),
        ("firstKeptEntryId",),
        ("tokensBefore",),
        ("targetId",),
        ("label",),
        ("fromId",),
    ]
)


def _exercise(sm: SessionManager) -> None:
    """Everything a notebook does with a loaded session; PiNbError is the only allowed failure."""
    for fn in (
        sm.build_session_context,
        sm.get_tree,
        sm.get_branch,
        sm.build_context_entries,
        sm.get_session_name,
        sm.get_leaf_entry,
    ):
        try:
            fn()
        except PiNbError:
            pass
    for e in sm.get_entries()[:20]:
        eid = e.get("id")
        if isinstance(eid, str):
            try:
                sm.get_branch(eid)
                sm.get_children(eid)
            except PiNbError:
                pass


def _open(path: Path) -> SessionManager | None:
    try:
        return SessionManager.open(str(path))
    except SessionError:
        return None


@fuzz(200)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash_the_loader(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        path.write_bytes(data)
        contents = read_session_file(path)
        assert contents.size == len(data)
        for p in contents.problems:
            assert 1 <= p.line_number <= contents.line_count
        sm = _open(path)
        after = path.read_bytes()
        # the bytes the user had are kept: at most a "\n" was appended (or a header written into an empty file)
        assert after.startswith(data) or (data.strip() == b"" and not contents.valid)
        if sm is not None:
            _exercise(sm)


@fuzz(200)
@given(
    st.integers(1, 40),
    st.randoms(use_true_random=False),
    st.lists(st.text(alphabet='{}[]",:0123456789abc \\\n\x00é', max_size=30), max_size=4),
)
def test_junk_lines_among_valid_entries_are_reported_never_lost(
    n: int, rng: random.Random, junk: list[str]
) -> None:
    entries = _entries(n, rng)
    lines = [serialize_entry(HEADER)] + [serialize_entry(e) for e in entries]
    for j in junk:
        lines.insert(
            rng.randint(1, len(lines)), (j.replace("\n", " ") + "\n").encode("utf-8", "surrogatepass")
        )
    data = b"".join(lines)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        path.write_bytes(data)
        contents = read_session_file(path)
        assert contents.valid
        loaded_ids = [e.get("id") for e in contents.entries[1:]]
        expected = [e["id"] for e in entries]
        # every valid entry is there, in order; junk that happens to be a JSON object may add entries
        it = iter(loaded_ids)
        assert all(any(x == want for x in it) for want in expected)
        sm = _open(path)
        assert sm is not None
        _exercise(sm)
        assert path.read_bytes() == data  # complete file: nothing rewritten


@fuzz(200)
@given(st.integers(1, 30), st.randoms(use_true_random=False), st.data())
def test_torn_file_keeps_every_complete_line(n: int, rng: random.Random, data: st.DataObject) -> None:
    entries = _entries(n, rng)
    full = serialize_entry(HEADER) + b"".join(serialize_entry(e) for e in entries)
    cut = data.draw(st.integers(len(serialize_entry(HEADER)), len(full)))
    torn = full[:cut]
    complete_lines = torn.count(b"\n") - 1  # entries whose newline made it
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        path.write_bytes(torn)
        sm = SessionManager.open(str(path))
        ids = [e["id"] for e in sm.get_entries()]
        assert ids[:complete_lines] == [e["id"] for e in entries[:complete_lines]]
        assert len(ids) <= complete_lines + 1
        after = path.read_bytes()
        assert after.startswith(torn)  # original bytes kept, the repair only appends
        assert after == torn or after == torn + b"\n"
        _exercise(sm)
        # the next entry lands on a line of its own and everything reloads
        new = sm.append_custom_entry("after", {"k": 1})
        again = SessionManager.open(str(path))
        assert [e["id"] for e in again.get_entries()][-1] == new


@fuzz(300)
@given(
    st.integers(1, 25),
    st.randoms(use_true_random=False),
    st.lists(st.tuples(_fields, _wrong), min_size=1, max_size=4),
)
def test_wrong_types_in_known_fields(
    n: int, rng: random.Random, mutations: list[tuple[tuple[str, ...], Any]]
) -> None:
    """A file whose entries have wrong types where Pi's types say otherwise: it opens (or raises a
    SessionError), and every read of it either works or raises a PiNbError, never a TypeError,
    AttributeError, KeyError or RecursionError from deep inside."""
    entries = _entries(n, rng)
    for field, value in mutations:
        target = entries[rng.randrange(len(entries))]
        if len(field) == 2:
            msg = target.get("message")
            if not isinstance(msg, dict):
                continue
            msg[field[1]] = value
        else:
            target[field[0]] = value
    data = serialize_entry(HEADER) + b"".join(serialize_entry(e) for e in entries)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        path.write_bytes(data)
        sm = _open(path)
        if sm is None:
            return
        _exercise(sm)
        try:
            sm.append_message({"role": "user", "content": "more", "timestamp": 1})
        except PiNbError:
            return
        again = _open(path)
        assert again is not None


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=4), children, max_size=3)
    )


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5), _containers, max_leaves=12
)


@fuzz(100)
@given(_json_values)
def test_in_memory_entries_of_any_shape(value: Any) -> None:
    """``SessionManager.in_memory(entries=...)`` with arbitrary JSON values: a clear error or a session."""
    candidates = [
        [value],
        [HEADER, value],
        [HEADER, {"type": "message", "id": "a", "parentId": None, "message": value}],
    ]
    for entries in candidates:
        try:
            sm = SessionManager.in_memory("/tmp", entries=entries)
        except PiNbError:
            continue
        _exercise(sm)


# ---------------------------------------------------------------------------------------------
# frontmatter


@fuzz(500)
@given(st.text(max_size=300))
def test_frontmatter_arbitrary_text(text: str) -> None:
    try:
        data, body = parse_frontmatter(text)
    except FrontmatterError:
        return
    assert isinstance(body, str)
    assert isinstance(strip_frontmatter(text), str)


_yaml_tokens = st.sampled_from(
    ["name", "description", ":", " ", "  ", "\n", "- ", "|", ">", "'", '"', "[", "]", "{", "}", ",", "#",
     "&a", "*a", "!!str", "!!int", "? ", "---", "...", "\t", "0x1F", "1e3", ".inf", "null", "~", "yes",
     "2026-01-01", "\\", "é", "🙂", "<<", "%YAML 1.2"]
)  # fmt: skip


@fuzz(700)
@given(st.lists(_yaml_tokens, max_size=40), st.text(max_size=40))
def test_frontmatter_yaml_like_input(tokens: list[str], body: str) -> None:
    """Input shaped like YAML (anchors, tags, flow collections, block scalars, merges)."""
    text = "---\n" + "".join(tokens) + "\n---\n" + body
    try:
        data, rest = parse_frontmatter(text)
    except FrontmatterError:
        return
    assert isinstance(rest, str)
    json.dumps(data, default=str)  # plain data (no YAML objects, no cycles)


@fuzz(60)
@given(st.integers(1, 6), st.integers(1, 4))
def test_frontmatter_alias_bombs_stay_bounded(depth: int, width: int) -> None:
    """Billion-laughs style aliases: a result or a clear error, never minutes of work or GBs."""
    lines = ["a0: &a0 [x, x, x, x]"]
    for i in range(1, depth + 5):
        refs = ", ".join([f"*a{i - 1}"] * (width + 4))
        lines.append(f"a{i}: &a{i} [{refs}]")
    text = "---\n" + "\n".join(lines) + "\n---\nbody"
    try:
        parse_frontmatter(text)
    except FrontmatterError:
        pass


# ---------------------------------------------------------------------------------------------
# trust store


def _trust_file(d: str) -> Path:
    return Path(d) / "trust.json"


@fuzz(300)
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_trust_store_arbitrary_bytes(data: bytes) -> None:
    """Any trust.json: a decision, or TrustStoreError; the file is never changed by a read, and a
    write over an invalid file raises and leaves it as it was."""
    with tempfile.TemporaryDirectory() as d:
        path = _trust_file(d)
        path.write_bytes(data)
        store = ProjectTrustStore(d)
        try:
            decision = store.get("/tmp/project")
        except TrustStoreError:
            with pytest.raises(TrustStoreError):
                store.set("/tmp/project", True)
            assert path.read_bytes() == data
            return
        assert decision in (True, False, None)
        assert path.read_bytes() == data
        store.set("/tmp/project", True)
        assert store.get("/tmp/project") is True


_dirs = st.lists(st.sampled_from(["a", "b", "c", "é", "x y"]), min_size=0, max_size=4).map(
    lambda parts: "/" + "/".join(parts)
)


@fuzz(300)
@given(
    st.dictionaries(_dirs, st.one_of(st.booleans(), st.none()), max_size=8),
    _dirs,
)
def test_trust_store_nearest_ancestor_wins(saved: dict[str, bool | None], cwd: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = _trust_file(d)
        path.write_text(json.dumps(saved))
        store = ProjectTrustStore(d)
        # model: walk up from cwd; the first true/false wins
        expected = None
        cur = cwd
        while True:
            v = saved.get(cur)
            if v is True or v is False:
                expected = v
                break
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
        assume(not any(k != "/" and k.endswith("/") for k in saved))
        assert store.get(cwd) is expected
