"""A folder of Pi, Claude Code and Codex sessions is one session source: every frame, the corpus
loader, the views and the what-if replay read it, with a ``harness`` column, the ``raw`` fields
and the readers' problems handled as Pi's corrupt lines are."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from pi_nb.errors import SessionFileCorruptError
from pi_nb.harness import HARNESSES, detect_harness, read_foreign
from pi_nb.notebook import (
    compactions_df,
    entries_df,
    load_corpus,
    messages_df,
    session_tree,
    sessions_df,
    token_budget,
    tool_results_df,
    usage_df,
)
from pi_nb.session.source import SessionLoadWarning, open_session_source

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "other_agents"
REAL_PI = ROOT / "notebooks" / "data" / "real-pi"
CLAUDE = sorted(p for p in (FIX / "claude_code").rglob("*.jsonl") if not p.name.startswith("synthetic"))
CODEX = sorted(p for p in (FIX / "codex").rglob("*.jsonl") if not p.name.startswith("synthetic"))
PI = sorted(REAL_PI.glob("*.jsonl"))
BROKEN = sorted(p for p in FIX.rglob("synthetic*.jsonl") if "broken" in p.name or "corrupt" in p.name)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    for i, p in enumerate(CLAUDE):
        dst = root / "claude" / "projects" / "-home-u-app" / f"{i:02d}-{p.name}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst)
    for p in CODEX:
        dst = root / "codex" / "sessions" / "2026" / "01" / "02" / f"rollout-{p.name}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst)
    for p in PI:
        dst = root / "pi" / "--tmp--" / p.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst)
    return root


def _quiet(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SessionLoadWarning)
        return fn(*args, **kwargs)


def test_fixtures_of_every_harness_are_here() -> None:
    assert CLAUDE and CODEX and PI and BROKEN
    assert HARNESSES == ("pi", "claude-code", "codex")


def test_detection_is_from_the_content_not_the_name(tmp_path: Path) -> None:
    for paths, want in ((CLAUDE, "claude-code"), (CODEX, "codex"), (PI, "pi")):
        for p in paths:
            assert detect_harness(p) == want, p
            renamed = tmp_path / "x.jsonl"  # a name that says nothing
            shutil.copy(p, renamed)
            assert detect_harness(renamed) == want, p
    (tmp_path / "notes.jsonl").write_text('{"hello": "world"}\n')
    assert detect_harness(tmp_path / "notes.jsonl") is None


def test_sessions_df_over_a_mixed_folder(mixed: Path) -> None:
    df = _quiet(sessions_df, mixed)
    counts = df["harness"].value_counts().to_dict()
    files = {
        h: len(list(mixed.glob(f"{d}/**/*.jsonl")))
        for h, d in (("claude-code", "claude"), ("codex", "codex"), ("pi", "pi"))
    }
    assert counts == files
    assert str(df["harness"].dtype) == "string" and str(df["harness_version"].dtype) == "string"
    assert df.loc[df["harness"] == "pi", "harness_version"].isna().all()
    assert df.loc[df["harness"] != "pi", "harness_version"].notna().all()
    # the token columns add up the same way for every harness
    for kind in ("input", "output", "cache_read", "cache_write"):
        assert (df[f"{kind}_tokens"] >= 0).all()
    parts = df["input_tokens"] + df["output_tokens"] + df["cache_read_tokens"] + df["cache_write_tokens"]
    assert (parts == df["total_tokens"]).all()


def test_every_frame_has_the_harness_and_the_raw_fields(mixed: Path) -> None:
    for fn in (entries_df, messages_df, tool_results_df, usage_df, compactions_df):
        df = _quiet(fn, mixed)
        assert "harness" in df.columns and "raw" in df.columns, fn.__name__
        assert set(df["harness"].dropna()) <= set(HARNESSES)
        pi_rows = df[df["harness"] == "pi"]
        assert pi_rows["raw"].isna().all(), fn.__name__  # Pi's own entries have no raw fields
        other = df[df["harness"] != "pi"]
        if len(other):
            for text in other["raw"].dropna().head(50):
                assert isinstance(json.loads(text), dict)
    entries = _quiet(entries_df, mixed)
    assert {"claude-code", "codex", "pi"} <= set(entries["harness"])
    # records with no Pi counterpart are custom entries of "<harness>/<type>"
    custom = entries[entries["type"] == "custom"]
    assert len(custom) > 0


def test_usage_sums_equal_the_readers_entries(mixed: Path) -> None:
    usage = _quiet(usage_df, mixed)
    for path in sorted(mixed.glob("claude/**/*.jsonl")) + sorted(mixed.glob("codex/**/*.jsonl")):
        fs = read_foreign(path)
        want = sum(
            int(e["message"]["usage"].get("totalTokens") or 0)
            for e in fs.entries
            if e.get("type") == "message"
            and e["message"].get("role") == "assistant"
            and isinstance(e["message"].get("usage"), dict)
        )
        got = usage.loc[usage["session_file"] == str(path), "total_tokens"].sum()
        assert got == want, path


def test_tool_results_of_other_agents(mixed: Path) -> None:
    results = _quiet(tool_results_df, mixed)
    for harness in ("claude-code", "codex"):
        rows = results[results["harness"] == harness]
        assert len(rows) > 0
        assert rows["tool_name"].notna().mean() > 0.9
        assert (rows["content_bytes"] >= 0).all()
    assert results.loc[results["harness"] != "pi", "is_error"].any()


def test_compactions_of_every_harness(mixed: Path) -> None:
    comp = _quiet(compactions_df, mixed)
    assert {"claude-code", "codex", "pi"} <= set(comp["harness"])
    missing = comp["raw"].fillna("").str.contains('"summaryMissing":true', regex=False)
    assert (comp.loc[~missing, "summary_chars"] > 0).all()
    assert missing.sum() <= 1  # one fixture's boundary has no summary record after it


def test_corpus_loader_gives_the_same_frames(mixed: Path) -> None:
    kinds = ["sessions", "usage", "tool_results", "compactions"]
    one = _quiet(load_corpus, mixed, kinds, workers=1, progress=False)
    two = _quiet(load_corpus, mixed, kinds, workers=2, progress=False)
    for kind in kinds:
        pd.testing.assert_frame_equal(one[kind], two[kind])
        direct = _quiet(
            {
                "sessions": sessions_df,
                "usage": usage_df,
                "tool_results": tool_results_df,
                "compactions": compactions_df,
            }[kind],
            mixed,
        )
        pd.testing.assert_frame_equal(one[kind].reset_index(drop=True), direct.reset_index(drop=True))


def test_broken_files_are_reported_and_the_rest_read(tmp_path: Path) -> None:
    for p in BROKEN:
        with pytest.warns(SessionLoadWarning, match="could not be used"):
            sessions_df(p)
        with pytest.raises(SessionFileCorruptError):
            sessions_df(p, strict=True)
        df, errors = sessions_df(p, strict=False)
        assert len(errors) == len(read_foreign(p).problems) > 0
        assert errors["line"].notna().all()


def test_a_file_of_no_known_format_is_skipped_in_a_folder(tmp_path: Path) -> None:
    shutil.copy(CODEX[0], tmp_path / "a.jsonl")
    (tmp_path / "notes.jsonl").write_text('{"hello": "world"}\n')
    with pytest.warns(SessionLoadWarning, match="nor another agent's transcript"):
        df = sessions_df(tmp_path)
    assert list(df["harness"]) == ["codex"]


def test_views_and_replay_open_other_agents_sessions() -> None:
    from pi_nb import replay

    for path in (CLAUDE[0], CODEX[0]):
        sm = open_session_source(path)
        assert sm.get_header()["harness"] in ("claude-code", "codex")
        tree = session_tree(path)
        bundle = tree._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        assert "text/html" in data or "text/plain" in data
        assert sm.get_leaf_entry() is sm.get_entries()[-1] or sm.get_leaf_id() is not None
        budget = token_budget(path, model_context_window=200_000)
        assert budget is not None
        result = replay(path, context_window=200_000)
        assert result.peak_context_tokens is None or result.peak_context_tokens >= 0


def test_context_policies_replay_other_agents_sessions() -> None:
    from pi_nb.policies import ObservationMasking, PiPolicy, replay_policy

    for path in (CLAUDE[0], *CODEX[:2]):
        sm = open_session_source(path)
        recorded = replay_policy(path, "recorded", context_window=400_000)
        masked = replay_policy(path, ObservationMasking(), context_window=400_000)
        pi = replay_policy(path, PiPolicy(reserve_tokens=1000, keep_recent_tokens=1000), context_window=8_000)
        for r in (recorded, masked, pi):
            out = r.outcome()
            assert out["requests"] >= 0
        # the recorded policy sends one request per recorded response of the active branch
        responses = [
            e
            for e in sm.get_branch()
            if e.get("type") == "message" and e["message"].get("role") == "assistant"
        ]
        assert recorded.outcome()["requests"] == len(responses), path
