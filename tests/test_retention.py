"""Retention metrics: the artifacts a compaction summarised and where each one survives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.analysis.retention import (
    ARTIFACT_KINDS,
    compaction_retention,
    extract_identifiers,
    message_artifacts,
    session_retention,
)
from pi_nb.notebook.frames import retention_df, retention_summary_df

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "notebooks" / "data" / "real-pi" / "compaction.jsonl"


def _chain(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries ``e1``, ``e2``... each the child of the one before."""
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items, 1):
        e = {
            "id": f"e{i}",
            "parentId": f"e{i - 1}" if i > 1 else None,
            "timestamp": "2026-01-01T00:00:00.000Z",
        }
        if "type" in item:
            e.update(item)
        else:
            e.update({"type": "message", "message": item})
        out.append(e)
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def call(*calls: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "toolCall", "id": f"c{i}{name}", "name": name, "arguments": a}
        for i, (name, a) in enumerate(calls)
    ]
    return {"role": "assistant", "content": content, "stopReason": "toolUse", "timestamp": 0}


def result(name: str, text: str, error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": "x",
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
        "timestamp": 0,
    }


SUMMARY = (
    "## Goal\nFix parse_config in app.py.\n\n<read-files>\napp.py\n</read-files>\n\n"
    "<modified-files>\napp.py\n</modified-files>"
)


def hand_session() -> list[dict[str, Any]]:
    return _chain(
        [
            user("please fix parse_config in app.py"),  # e1
            call(("read", {"path": "app.py"}), ("bash", {"command": "python -m pytest -q"})),  # e2
            result("read", "def parse_config(path):\n    return loadYaml(path)\n"),  # e3
            result(
                "bash",
                "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'name'\n",
                error=True,
            ),  # e4
            call(("edit", {"path": "app.py", "oldText": "a", "newText": "b"}), text="I will edit"),  # e5
            result("edit", "Successfully replaced text in app.py."),  # e6
            user("now run the tests again"),  # e7
            call(("bash", {"command": "pytest"})),  # e8
            result("bash", "1 passed"),  # e9
            {"type": "compaction", "summary": SUMMARY, "firstKeptEntryId": "e7", "tokensBefore": 100},  # e10
        ]
    )


def test_hand_checked_compaction() -> None:
    r = compaction_retention(hand_session())
    assert (r.compaction_id, r.first_kept_entry_id, r.dropped_entries, r.kept_entries) == ("e10", "e7", 6, 3)
    got = [(x.span, x.entry_id, x.kind, x.value, x.survived_in) for x in r.rows]
    assert got == [
        # "please", "parse", "config": two of three words (>= 0.6) are in the summary
        ("dropped", "e1", "instruction", "please fix parse_config in app.py", "summary"),
        ("dropped", "e1", "identifier", "parse_config", "summary"),
        ("dropped", "e2", "file_read", "app.py", "summary"),
        ("dropped", "e2", "command", "python -m pytest -q", "none"),
        # parse_config again (e3) is not listed twice; loadYaml is camelCase and a call
        ("dropped", "e3", "identifier", "loadYaml", "none"),
        ("dropped", "e4", "error", "Traceback (most recent call last):", "none"),
        ("dropped", "e4", "identifier", "KeyError", "none"),
        ("dropped", "e4", "error", "KeyError: 'name'", "none"),
        ("dropped", "e5", "file_modified", "app.py", "summary"),
        ("kept", "e7", "instruction", "now run the tests again", "kept"),
        ("kept", "e8", "command", "pytest", "kept"),
    ]
    counts = r.counts()
    assert counts["identifier"] == {"artifacts": 3, "summary": 1, "kept": 0, "none": 2}
    assert counts["error"] == {"artifacts": 2, "summary": 0, "kept": 0, "none": 2}
    assert counts["file_read"]["summary"] == counts["file_modified"]["summary"] == 1


def test_second_compaction_starts_at_the_previous_kept_boundary() -> None:
    entries = (
        hand_session()
        + _chain(
            [{}] * 10
            + [
                user("add a test for loadYaml"),  # e11
                call(("write", {"path": "test_app.py", "content": "x"})),  # e12
                result("write", "ok"),  # e13
                user("done?"),  # e14
                {"type": "compaction", "summary": "wrote test_app.py", "firstKeptEntryId": "e14"},  # e15
            ]
        )[10:]
    )
    r = session_retention(entries)
    assert [c.compaction_id for c in r] == ["e10", "e15"]
    second = r[1]
    # dropped: e7..e13 without the compaction e10 (from the first compaction's firstKeptEntryId)
    assert second.dropped_entries == 6
    dropped = {(x.kind, x.value): x.survived_in for x in second.rows if x.span == "dropped"}
    assert dropped == {
        ("instruction", "now run the tests again"): "none",
        ("command", "pytest"): "none",
        ("instruction", "add a test for loadYaml"): "none",
        ("identifier", "loadYaml"): "none",
        ("file_modified", "test_app.py"): "summary",
    }
    # kept: e14 (the summary of e15 is not a kept message)
    assert [(x.kind, x.value, x.survived_in) for x in second.rows if x.span == "kept"] == [
        ("instruction", "done?", "kept")
    ]


def test_identifier_rule() -> None:
    text = "call foo() then fooBar, snake_case, _private, __init__, ab_, MAX_SIZE, x_y, plain words a_b_c"
    assert extract_identifiers(text) == [
        "foo",
        "fooBar",
        "snake_case",
        "__init__",
        "MAX_SIZE",
        "x_y",
        "a_b_c",
    ]


def test_assistant_error_and_bash_execution() -> None:
    err = {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": "429 rate limited\nretry",
    }
    assert [(a.kind, a.value) for a in message_artifacts(err)] == [("error", "429 rate limited")]
    bash = {"role": "bashExecution", "command": "ls  -la", "output": "my_file.txt", "exitCode": 0}
    assert [(a.kind, a.value) for a in message_artifacts(bash)] == [
        ("command", "ls -la"),
        ("identifier", "my_file"),
    ]


_word = st.text("abcdefgh_XY", min_size=3, max_size=8)
_msg = st.one_of(
    st.builds(lambda w: user(f"please look at {w}() now"), _word),
    st.builds(lambda w: call(("read", {"path": f"{w}.py"})), _word),
    st.builds(lambda w: call(("bash", {"command": f"grep -n {w}  src"})), _word),
    st.builds(lambda w, e: result("bash", f"{w}_x = 1\n{w}Fn(2)", error=e), _word, st.booleans()),
    st.builds(lambda w: result("bash", f"Traceback (most recent call last):\nValueError: bad {w}"), _word),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_msg, min_size=2, max_size=12), st.data())
def test_every_artifact_of_a_kept_message_survives_as_kept(msgs: list[dict[str, Any]], data: Any) -> None:
    cut = data.draw(st.integers(1, len(msgs)))
    entries = _chain([*msgs, {"type": "compaction", "summary": "", "firstKeptEntryId": f"e{cut}"}])
    r = compaction_retention(entries)
    kept_values = set()
    for e in entries[cut - 1 : -1]:
        for a in message_artifacts(e["message"]):
            kept_values.add((a.kind, a.value))
    for row in r.rows:
        if row.span == "kept" or (row.kind, row.value) in kept_values:
            assert row.survived_in == "kept", row
    assert {(x.kind, x.value) for x in r.rows if x.span == "kept"} == kept_values


def test_real_session_frames() -> None:
    df = retention_df(REAL)
    assert list(df["compaction_index"].unique()) == [0, 1]
    assert set(df["survived_in"]) <= {"kept", "summary", "none"}
    assert (df.loc[df["span"] == "kept", "survived_in"] == "kept").all()
    summary = retention_summary_df(REAL)
    assert len(summary) == 2 * len(ARTIFACT_KINDS)
    assert (summary["artifacts"] == summary["in_kept"] + summary["in_summary"] + summary["lost"]).all()
    files = summary[summary["kind"] == "file_read"]
    # Pi's summary lists the files read in <read-files>: none is lost
    assert list(files["lost"]) == [0, 0] and list(files["artifacts"]) == [3, 1]
    rates = summary["survival_rate"].dropna()
    assert ((rates >= 0) & (rates <= 1)).all()
    # the 30 handler_N identifiers of the dropped read of src/app.py mostly are not in the summary
    ident = summary[summary["kind"] == "identifier"]
    assert list(ident["artifacts"]) == [30, 30] and (ident["lost"] >= 25).all()


def test_replay_frames_per_policy() -> None:
    from pi_nb.what_if import replay

    res = {
        f"keep {k}": replay(REAL, context_window=4000, reserve_tokens=1000, keep_recent_tokens=k)
        for k in (500, 1500)
    }
    df = retention_summary_df(res)
    assert set(df["policy"]) == set(res)
    assert df["simulated"].all()
    for label, r in res.items():
        assert df.loc[df["policy"] == label, "compaction_index"].nunique() == len(r.compactions)
    rows = retention_df(res["keep 500"])
    assert rows["policy"].isna().all() and rows["simulated"].all()
    assert (rows.loc[rows["span"] == "kept", "survived_in"] == "kept").all()


def test_fixture_session() -> None:
    """tests/fixtures/pi_session.jsonl: one compaction (e11, kept from e7), checked by hand."""
    df = retention_df(ROOT / "tests" / "fixtures" / "pi_session.jsonl")
    got = list(df[["span", "entry_id", "kind", "value", "survived_in"]].itertuples(index=False, name=None))
    assert got == [
        # "please", "read", "readme": "read" and "readme" are words of the summary (2/3)
        ("dropped", "e1", "instruction", "Please read README.md", "summary"),
        # the summary text has no <read-files> list ("README" is not "README.md")
        ("dropped", "e4", "file_read", "README.md", "none"),
        ("kept", "e7", "instruction", "Now edit main.py", "kept"),
        ("kept", "e8", "file_modified", "main.py", "kept"),
        ("kept", "e9", "identifier", "block", "kept"),
    ]


def test_session_without_compactions_has_no_rows() -> None:
    df = retention_df(ROOT / "notebooks" / "data" / "real-pi" / "tools.jsonl")
    assert len(df) == 0
    assert list(df.columns)[:3] == ["session_id", "session_file", "policy"]


def test_plot_retention() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from pi_nb.errors import NotebookError
    from pi_nb.notebook.plots import plot_retention

    fig = plot_retention(REAL)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "share of artifacts (%)"
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "file_read",
        "command",
        "identifier",
        "instruction",
    ]
    # each stacked bar of a kind with artifacts reaches 100 %
    tops: dict[float, float] = {}
    for p in ax.patches:
        x = round(p.get_x(), 6)
        tops[x] = max(tops.get(x, 0.0), p.get_y() + p.get_height())
    assert all(abs(v - 100) < 1e-9 for v in tops.values())
    assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == [
        "still in the kept messages",
        "only in the summary",
        "lost",
    ]
    counts = plot_retention(REAL, by="compaction", share=False, ax=Figure().add_subplot())
    assert counts.get_ylabel() == "artifacts (count)"
    assert [t.get_text() for t in counts.get_xticklabels()] == [
        "recorded abecdb84 #0",
        "recorded abecdb84 #1",
    ]
    with pytest.raises(NotebookError):
        plot_retention(REAL, kinds=["nope"])
