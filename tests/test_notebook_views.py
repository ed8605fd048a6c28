"""Static views (pi_nb.notebook.views): the session tree model, the budget bar, truncation
boundaries of real Pi tool results (golden), HTML content and escaping, size at 10,000 entries."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb._js import js_utf8_encode
from pi_nb.errors import NotebookError
from pi_nb.notebook.budget import BudgetInput, budget_input_from_session, compute_budget
from pi_nb.notebook.views import (
    SessionTreeModel,
    format_tool_call,
    load_session,
    render_budget_html,
    render_budget_text,
    render_tree_html,
    render_tree_text,
    render_truncation_html,
    render_truncation_text,
    truncation_report,
    truncation_report_for_text,
)
from pi_nb.session.manager import SessionManager
from pi_nb.truncation import TruncationResult

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"
DEMO = HERE / "fixtures" / "sessions" / "--tmp-demo--"


def _golden() -> tuple[dict[str, str], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    files: dict[str, str] = {}
    sources: dict[str, Any] = {}
    sessions: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    with open(HERE / "golden" / "notebook.json", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "files" in row:
                files = row["files"]
            elif "sessionSource" in row:
                sources[row["sessionSource"]["name"]] = row["sessionSource"]["entries"]
            elif "session" in row:
                sessions.append(row["session"])
            elif "tool" in row:
                tools.append(row["tool"])
    return files, sources, sessions, tools


FILES, SOURCES, SESSION_CASES, TOOL_CASES = _golden()


# =============================================================================================
# truncation boundaries of real Pi tool results
# =============================================================================================


def _tool_result(case: dict[str, Any]) -> dict[str, Any]:
    r = copy.deepcopy(case["result"])
    msg: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": "call_x",
        "toolName": case["tool"],
        "content": r["content"],
        "isError": r["isError"],
        "timestamp": 1,
    }
    if r.get("details") is not None:
        msg["details"] = r["details"]
    return msg


def _grep_output(params: dict[str, Any]) -> str:
    """The grep tool's text before its byte truncation (no context, no long lines here)."""
    name = params["path"]
    lines = FILES[name].split("\n")
    out = [f"{name}:{i + 1}: {line}" for i, line in enumerate(lines) if params["pattern"] in line]
    return "\n".join(out[: params.get("limit", 100)])


@pytest.mark.parametrize("case", TOOL_CASES, ids=lambda c: c["name"])
def test_truncation_report_of_pi_tool_result(case: dict[str, Any], tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    msg = _tool_result(case)
    details = msg.get("details") or {}
    stored = details.get("truncation")
    kwargs: dict[str, Any] = {}
    if case["tool"] == "bash" and case["fullOutput"] is not None:
        full_path = tmp_path / "pi-bash-full.log"
        full_path.write_bytes(case["fullOutput"].encode("utf-8"))
        details["fullOutputPath"] = str(full_path)  # the recorded file, where the report will find it
    elif case["tool"] == "read":
        kwargs = {"tool_call": {"arguments": case["params"]}, "cwd": str(tmp_path)}
    elif case["tool"] == "grep":
        kwargs = {"full_text": _grep_output(case["params"])}
    report = truncation_report(msg, **kwargs)
    text = msg["content"][0]["text"]
    assert report.model_text == text
    if stored is None:
        assert not report.truncated
        assert "not truncated" in render_truncation_text(
            report
        ) or "no truncation details" in render_truncation_text(report)
        return
    assert report.truncation == TruncationResult.from_dict(stored)
    assert report.mode == ("tail" if case["tool"] == "bash" else "head")
    # the full output was found and pi_nb.truncation cuts it exactly as Pi did
    assert report.full_text is not None, report.full_text_source
    assert report.matches is True, report.mismatches
    # the notice is what Pi appended after the kept text
    if stored["firstLineExceedsLimit"]:
        assert report.notice == text and text.startswith("[Line 1 is ")
        assert report.cut_offset == 0
    else:
        assert text == stored["content"] + "\n\n" + report.notice
        assert report.notice.startswith("[") and report.notice.endswith("]")
    # the cut offset points into the UTF-8 of the full output
    full = js_utf8_encode(report.full_text)
    kept = js_utf8_encode(stored["content"])
    if report.mode == "head":
        assert full[: report.cut_offset] == kept
    else:
        assert full[report.cut_offset : report.cut_offset + len(kept)] == kept
        assert full[report.cut_offset] & 0xC0 != 0x80  # never starts inside a character
    if stored["lastLinePartial"]:
        assert report.naive_cut_offset is not None
        skipped = full[report.naive_cut_offset : report.cut_offset]
        assert all(b & 0xC0 == 0x80 for b in skipped)
        roles = {role for _, _, role in report.hex_window()}
        if "emoji" in case["name"]:
            assert len(skipped) == 2 and "skipped" in roles
        elif "UTF-8" in case["name"]:
            assert len(skipped) == 1 and "skipped" in roles
        else:
            assert skipped == b""
    # both renderings carry the facts
    html = render_truncation_html(report)
    plain = render_truncation_text(report)
    for needle in (
        f"{stored['outputLines']} of {stored['totalLines']} lines",
        f"cut by {stored['truncatedBy']}",
    ):
        assert needle in plain
        assert needle in html
    assert "bytes at the cut" in html
    assert "gives the same cut" in html


def test_missing_full_output_shows_only_the_stored_numbers() -> None:
    case = next(c for c in TOOL_CASES if c["name"].startswith("bash seq"))
    report = truncation_report(_tool_result(case))
    assert report.full_output_path == "$TMPDIR/pi-bash-MASKED.log" and not report.full_output_exists
    assert report.full_text is None and report.matches is None and report.cut_offset is None
    assert report.truncation is not None and report.truncation.truncated_by == "lines"
    assert report.notice == "[Showing lines 1001-3000 of 3000. Full output: $TMPDIR/pi-bash-MASKED.log]"
    assert "full output not available" in render_truncation_text(report)
    html = render_truncation_html(report)
    assert "no longer exists" in html and "$TMPDIR/pi-bash-MASKED.log" in html


def test_a_changed_file_is_reported_as_a_different_cut(tmp_path: Path) -> None:
    case = next(c for c in TOOL_CASES if c["name"] == "read 3000 lines (lines)")
    (tmp_path / "big.txt").write_text("".join(f"changed {i}\n" for i in range(10)), encoding="utf-8")
    report = truncation_report(_tool_result(case), tool_call={"arguments": case["params"]}, cwd=str(tmp_path))
    assert report.full_text_source == "re-read file"
    assert report.matches is False and "truncated" in report.mismatches
    assert "different cut" in render_truncation_html(report)


def test_relative_full_output_path_resolves_against_base_dir() -> None:
    sm = load_session(next(DEMO.glob("*d001.jsonl")))
    entry = sm.get_entry("t07")
    assert entry is not None
    report = truncation_report(entry, base_dir=str(DEMO))
    assert report.full_output_exists and report.full_text_source == "fullOutputPath"
    assert (
        report.matches is True and report.truncation is not None and report.truncation.truncated_by == "bytes"
    )
    # without the base dir the file is not found and only numbers are shown
    assert truncation_report(entry).full_text is None


def test_truncation_report_rejects_other_messages() -> None:
    with pytest.raises(NotebookError, match="toolResult"):
        truncation_report({"role": "user", "content": "hi"})
    with pytest.raises(NotebookError, match=r"details\.truncation"):
        truncation_report({"role": "toolResult", "content": [], "details": {"truncation": {"content": 1}}})
    with pytest.raises(NotebookError, match="mode"):
        truncation_report_for_text("x", "middle")  # type: ignore[arg-type]


def test_truncation_view_for_text_reports_pis_quirk() -> None:
    # Q1: the trailing newline pushes the total over the byte limit; Pi says "lines"
    report = truncation_report_for_text("aaaa\n", "head", max_bytes=4)
    assert report.truncation is not None and report.truncation.truncated_by == "lines"
    assert "quirk" in render_truncation_text(report)


@settings(max_examples=80, deadline=None)
@given(
    st.text(alphabet="ab\né日🙂", max_size=80),
    st.sampled_from(["head", "tail"]),
    st.integers(1, 6),
    st.integers(0, 40),
)
def test_truncation_view_cut_is_consistent(text: str, mode: str, max_lines: int, max_bytes: int) -> None:
    report = truncation_report_for_text(text, mode, max_lines=max_lines, max_bytes=max_bytes)  # type: ignore[arg-type]
    t = report.truncation
    assert t is not None
    full = js_utf8_encode(text)
    if not t.truncated:
        assert report.cut_offset is None
        return
    rng = report.kept_range()
    assert rng is not None
    assert full[rng[0] : rng[1]] == js_utf8_encode(t.content)
    assert report.cut_offset == (rng[1] if mode == "head" else rng[0])
    if report.naive_cut_offset is not None:
        assert all(b & 0xC0 == 0x80 for b in full[report.naive_cut_offset : report.cut_offset])
    window = report.hex_window(4)
    assert all(abs(off - report.cut_offset) <= 4 for off, _, _ in window)
    render_truncation_html(report)
    render_truncation_text(report)


def test_truncation_html_escapes_output() -> None:
    report = truncation_report_for_text("<script>alert(1)</script>\n" * 5, "head", max_lines=2)
    html = render_truncation_html(report)
    assert "<script>" not in html and "&lt;script&gt;" in html


# =============================================================================================
# the session tree
# =============================================================================================


def _expected_flatten(tree: list[list[Any]], leaf: str | None) -> list[str]:
    """Pi's tree-selector order, from Pi's own getTree: pre-order, the active subtree first."""

    def contains(node: list[Any]) -> bool:
        return node[0] == leaf or any(contains(c) for c in node[2])

    out: list[str] = []

    def walk(nodes: list[list[Any]]) -> None:
        for n in sorted(nodes, key=lambda n: not contains(n)):
            out.append(n[0])
            walk(n[2])

    walk(tree)
    return out


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda c: c["name"])
def test_tree_model_matches_pis_tree(case: dict[str, Any]) -> None:
    sm = load_session(copy.deepcopy(SOURCES[case["source"]]))
    if case["leaf"] != "<absent>":
        sm.branch(case["leaf"])
    model = SessionTreeModel(sm, run_threshold=10**6)
    rows = model.rows()
    leaf = case["inspect"]["leafId"]
    assert [r.entry_id for r in rows] == _expected_flatten(case["inspect"]["tree"], leaf)
    assert {r.entry_id for r in rows if r.on_active_path} == set(case["inspect"]["branch"])
    assert {r.entry_id for r in rows if r.in_context} == set(case["inspect"]["contextEntries"])
    assert [r.entry_id for r in rows if r.is_leaf] == [leaf]
    labels = {}

    def collect(nodes: list[list[Any]]) -> None:
        for n in nodes:
            if n[1] is not None:
                labels[n[0]] = n[1]
            collect(n[2])

    collect(case["inspect"]["tree"])
    assert {r.entry_id: r.label for r in rows if r.label} == labels


def test_fixture_tree_display_text_is_pis() -> None:
    model = SessionTreeModel(FIXTURE)
    by_id = {r.entry_id: r for r in model.rows()}
    assert (by_id["e1"].title, by_id["e1"].text) == ("user:", "Please read README.md")
    assert by_id["e2"].title == "[model: claude-sonnet-4-5]"
    assert by_id["e3"].title == "[thinking: high]"
    assert (by_id["e4"].title, by_id["e4"].text) == ("assistant:", "[read: README.md]")
    assert (by_id["e5"].title, by_id["e5"].text) == ("[read: README.md]", "# Readme Hello world")
    assert by_id["e9"].title == "[edit: main.py]"
    assert by_id["e11"].title == "[compaction: 5k tokens]"
    assert by_id["e11"].detail == "tokensBefore 5000, keeps from e7"
    assert (by_id["b1"].title, by_id["b1"].detail) == ("[branch summary]:", "from e15")
    assert (by_id["b3"].title, by_id["b3"].text) == ("[note]:", "Reminder: follow the style guide")
    assert (by_id["b7"].title, by_id["b7"].text) == ("[bash]:", "ls")
    assert by_id["b8"].title == "[label: checkpoint]"
    assert by_id["b9"].title == "[title: demo session]"
    assert by_id["e7"].label == "checkpoint"
    assert by_id["e10"].child_count == 2
    # Pi's indentation: a branch point shifts its children, the first generation shifts again
    assert [by_id[i].indent for i in ("e9", "e10", "b1", "b2", "e11", "e12")] == [0, 0, 1, 2, 1, 2]
    # the active branch (towards b9) is listed before the other one
    ids = [r.entry_id for r in model.rows()]
    assert ids.index("b1") < ids.index("e11")


def test_filter_modes() -> None:
    model = SessionTreeModel(FIXTURE, filter_mode="default")
    ids = [r.entry_id for r in model.rows()]
    assert "e2" not in ids and "b8" not in ids and "b9" not in ids  # settings entries hidden
    assert "e4" not in ids and "b4" not in ids  # tool-call-only assistant messages hidden
    assert "e6" in ids and "e11" in ids
    model.set_filter("user-only")
    assert [r.entry_id for r in model.rows()] == ["e1", "e7", "b2", "e12"]
    model.set_filter("labeled-only")
    assert [r.entry_id for r in model.rows()] == ["e7"]
    model.set_filter("no-tools")
    ids = [r.entry_id for r in model.rows()]
    assert "e5" not in ids and "b7" in ids
    with pytest.raises(NotebookError, match="filter_mode"):
        model.set_filter("bogus")


def test_fold_and_unfold() -> None:
    model = SessionTreeModel(FIXTURE)
    model.fold("e10")
    rows = model.rows()
    ids = [r.entry_id for r in rows]
    assert ids[-1] == "e10"
    e10 = rows[-1]
    assert e10.folded and e10.hidden_descendants == 14
    assert "+14 folded" in render_tree_html(model)
    model.unfold("e10")
    assert len(model.rows()) == 24
    with pytest.raises(NotebookError, match="no children"):
        model.fold("b9")
    with pytest.raises(NotebookError, match="not found"):
        model.fold("nope")
    model.fold_branches()
    assert model.folded == {"e11"}
    model.unfold_all()
    assert not model.folded


def test_tree_html_and_text_content() -> None:
    model = SessionTreeModel(FIXTURE)
    html = render_tree_html(model)
    text = render_tree_text(model)
    for needle in (
        "24 entries",
        "1 compactions",
        "leaf",
        "b9",
        "[compaction: 5k tokens]",
        "checkpoint",
        "demo session",
    ):
        assert needle in html
    assert 'data-entry-id="e11"' in html
    assert "<- leaf" in text and "* ─ e1 user: Please read README.md" in text
    assert "tok" in html  # tiktoken counts per row


def test_tree_escapes_user_text() -> None:
    sm = SessionManager.in_memory("/tmp")
    sm.append_message({"role": "user", "content": '<img src=x onerror=alert(1)> & "q"', "timestamp": 1})
    sm.append_label_change(sm.get_leaf_id() or "", "<b>bold</b>")
    html = render_tree_html(SessionTreeModel(sm))
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot;" in html
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html


def _big_session(n: int) -> SessionManager:
    entries: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "big", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}
    ]
    parent = None
    for i in range(n):
        eid = f"n{i:05d}"
        p = parent
        if i and i % 2500 == 0:
            p = f"n{i - 1200:05d}"  # a branch every 2500 entries
        ts = f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        if i % 2 == 0:
            msg: dict[str, Any] = {"role": "user", "content": f"question {i} " + "x" * 80, "timestamp": i}
        else:
            msg = {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i}"}],
                "timestamp": i,
                "stopReason": "stop",
            }
        entries.append({"type": "message", "id": eid, "parentId": p, "timestamp": ts, "message": msg})
        parent = eid
    return SessionManager.in_memory("/tmp", entries=entries)


def test_tree_stays_small_with_10000_entries() -> None:
    sm = _big_session(10_000)
    model = SessionTreeModel(sm, page_size=100)
    assert model.entry_count == 10_000
    rows = model.rows()
    runs = [r for r in rows if r.run_length]
    assert runs and sum(r.run_length for r in runs) + len([r for r in rows if not r.run_length]) == 10_000
    html = render_tree_html(model)
    assert len(html.encode()) < 120_000
    assert any(r.is_leaf for r in model.page_rows(model.page_of(model.leaf_id)))
    # selecting an entry hidden in a collapsed run makes it visible
    target = "n05100"
    assert target not in {r.entry_id for r in model.rows() if not r.run_length}
    model.select(target)
    visible = {r.entry_id for r in model.rows() if not r.run_length}
    assert target in visible
    assert any(r.entry_id == target for r in model.page_rows(model.page_of(target)))
    text = render_tree_text(model)
    assert len(text) < 60_000


def test_paging_bounds() -> None:
    model = SessionTreeModel(FIXTURE, page_size=10)
    assert model.page_count == 3
    assert len(model.page_rows(2)) == 4
    with pytest.raises(NotebookError, match="out of range"):
        model.page_rows(3)
    with pytest.raises(NotebookError):
        SessionTreeModel(FIXTURE, page_size=0)


@pytest.mark.parametrize(
    ("name", "args", "text"),
    [
        ("read", {"path": "a.py"}, "[read: a.py]"),
        ("read", {"path": "a.py", "offset": 5, "limit": 10}, "[read: a.py:5-14]"),
        ("read", {"path": "a.py", "offset": 5}, "[read: a.py:5]"),
        ("bash", {"command": "echo\thi\nthere"}, "[bash: echo hi there]"),
        ("bash", {"command": "x" * 60}, "[bash: " + "x" * 50 + "...]"),
        ("grep", {"pattern": "TODO"}, "[grep: /TODO/ in .]"),
        ("find", {"pattern": "*.py", "path": "src"}, "[find: *.py in src]"),
        ("ls", {}, "[ls: .]"),
        ("mytool", {"a": 1}, '[mytool: {"a":1}]'),
    ],
)
def test_format_tool_call_is_pis(name: str, args: dict[str, Any], text: str) -> None:
    assert format_tool_call(name, args) == text


def test_load_session_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = FIXTURE.read_bytes().rstrip(b"\n")  # no trailing newline: SessionManager.open would add one
    path.write_bytes(data)
    sm = load_session(path)
    assert sm.get_leaf_id() == "b9"
    assert path.read_bytes() == data
    with pytest.raises(NotebookError, match="no such"):
        load_session(tmp_path / "missing.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"a":1}\n')
    with pytest.raises(NotebookError, match="not a pi session"):
        load_session(tmp_path / "bad.jsonl")
    with pytest.raises(NotebookError):
        load_session(42)  # type: ignore[arg-type]


# =============================================================================================
# the budget bar
# =============================================================================================


def test_budget_html_shows_everything() -> None:
    sm = load_session(FIXTURE)
    budget = compute_budget(
        budget_input_from_session(
            sm,
            model_context_window=4000,
            reserve_tokens=500,
            keep_recent_tokens=40,
            system_prompt="You are pi_nb.",
        )
    )
    html = render_budget_html(budget)
    for needle in (
        "system prompt",
        "tool schemas",
        "user",
        "assistant",
        "tool results",
        "summaries",
        "free",
        "reserve",
        "compact above 3.5k",
        "Pi estimate:",
        "provider usage:",
        "tiktoken",
        "keep-recent window",
        "77.6%/4.0k",
    ):
        assert needle in html, needle
    assert "#d97706" in html  # Pi's warning colour (above 70 %)
    assert re.search(r"left:87\.5000%", html)  # the threshold marker at 3500 / 4000
    text = render_budget_text(budget)
    assert "Pi estimate: 3104 (warning)" in text and "|" in text


def test_budget_html_unknown_after_compaction() -> None:
    sm = load_session(FIXTURE)
    sm.branch("e12")
    budget = compute_budget(budget_input_from_session(sm, model_context_window=4000))
    html = render_budget_html(budget)
    assert "unknown until the next response" in html and "?/4.0k" in html
    assert "(from before the compaction)" in html
    assert "unknown until the next response" in render_budget_text(budget)


def test_budget_html_levels() -> None:
    def html_for(tokens: int) -> str:
        msg = {
            "role": "assistant",
            "content": [],
            "stopReason": "stop",
            "usage": {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens},
        }
        return render_budget_html(
            compute_budget(BudgetInput(messages=[msg], context_window=1000, reserve_tokens=0))
        )

    assert "color:#15803d;font-weight:700" in html_for(500)
    assert "color:#d97706;font-weight:700" in html_for(800)
    assert "color:#dc2626;font-weight:700" in html_for(950)


def test_package_exports_resolve_lazily() -> None:
    import subprocess
    import sys

    import pi_nb.notebook as nb

    for name in nb.__all__:
        assert getattr(nb, name) is not None
    with pytest.raises(AttributeError):
        nb.does_not_exist  # noqa: B018
    code = (
        "import sys, pi_nb.notebook\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pandas','matplotlib','ipywidgets','IPython'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _assert_balanced(html: str) -> None:
    from html.parser import HTMLParser

    void = {"br", "img", "hr", "meta", "input"}

    class Checker(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag not in void:
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
            self.stack.pop()

    checker = Checker()
    checker.feed(html)
    checker.close()
    assert checker.stack == []
    assert "<script" not in html and "<style" not in html and "http" not in html  # self-contained


def test_static_html_is_well_formed_and_self_contained(tmp_path: Path) -> None:
    sm = load_session(FIXTURE)
    _assert_balanced(render_tree_html(SessionTreeModel(sm)))
    model = SessionTreeModel(_big_session(3000))
    model.fold_branches()
    _assert_balanced(render_tree_html(model))
    _assert_balanced(
        render_budget_html(compute_budget(budget_input_from_session(sm, model_context_window=4000)))
    )
    sm.branch("e12")
    _assert_balanced(
        render_budget_html(compute_budget(budget_input_from_session(sm, model_context_window=4000)))
    )
    for text, mode in (("a\n" * 3000, "head"), ("é" * 30000 + "x", "tail"), ("ok\n", "head")):
        _assert_balanced(render_truncation_html(truncation_report_for_text(text, mode)))  # type: ignore[arg-type]
