"""What-if replay of compaction policies (issue 10, pi_nb/replay.py).

* Replay agrees with reality: sessions recorded here by pi_nb's own AgentSession on the offline
  model, at small windows (one per checkpoint of spec §7.8, plus an overflow retry, under two
  policies), replayed with the same policy, give every recorded compaction back: same checkpoint
  (known from the session's events while recording), same ``firstKeptEntryId``, same
  ``tokensBefore``, same reason and ``willRetry``. The committed e2e session files agree too.
* Against the real Pi 0.85.0 (``tests/golden/replay.json``, made by ``tests/golden/make_replay.py``):
  for other policies, every simulated compaction is what Pi's ``prepareCompaction`` returns for
  the simulated branch, and the simulated context is Pi's ``buildSessionContext`` of the
  simulated path.
* The rules of the walk: stale usage, rebasing, placeholders, errors, windows by model, sweeps.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_nb import (
    CompactionSettings,
    ReplayError,
    SessionManager,
    build_session_context,
    estimate_context_tokens,
    prepare_compaction,
)
from pi_nb._js import js_stringify
from pi_nb.agent import AgentSession
from pi_nb.compaction.preparation import CompactionPreparation
from pi_nb.compaction.serialization import create_file_ops
from pi_nb.providers import OfflineModel
from pi_nb.resources.settings import SettingsManager
from pi_nb.what_if import (
    DEFAULT_SUMMARY_TOKENS,
    _State,
    areplay,
    placeholder_summary,
    replay,
    sweep,
)

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden"
E2E = Path(__file__).parent / "fixtures" / "e2e"
sys.path.insert(0, str(GOLDEN))
import make_replay  # noqa: E402

REPLAY_GOLDEN = json.loads((GOLDEN / "replay.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# recording sessions with pi_nb's agent, knowing each compaction's checkpoint from the events


class Recorder:
    """An AgentSession on the offline model; ``compactions`` lists each ``compaction_start``
    with the checkpoint the session was at (from the event stream) and its ``compaction_end``."""

    def __init__(self, project: Path, sessions: Path, window: int, policy: dict[str, int]) -> None:
        self.model = OfflineModel(context_window=window)
        sm = SessionManager.create(str(project), str(sessions))
        self.session = AgentSession(
            sm, self.model, settings=SettingsManager.in_memory({"compaction": policy})
        )
        self.phase = "pre_prompt"
        self.compactions: list[dict[str, Any]] = []
        self.session.subscribe(self._listen)

    def _listen(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind in ("agent_start", "turn_start"):
            self.phase = "in_run"
        elif kind == "turn_end":
            self.phase = "between_turns"  # prepareNextTurn runs here when the run goes on
        elif kind == "agent_end":
            self.phase = "after_run"
        elif kind == "compaction_start":
            self.compactions.append({"checkpoint": self.phase, "reason": event["reason"]})
        elif kind == "compaction_end":
            assert event["result"] is not None, event
            self.compactions[-1]["willRetry"] = event["willRetry"]

    def prompt(self, text: str) -> None:
        self.phase = "pre_prompt"
        asyncio.run(self.session.prompt(text))

    def set_window(self, window: int) -> None:
        self.session.set_model(OfflineModel(context_window=window))

    @property
    def file(self) -> str:
        path = self.session.session_manager.get_session_file()
        assert path is not None
        return path

    def recorded(self) -> list[tuple[Any, ...]]:
        entries = self.session.session_manager.get_entries()
        comps = [e for e in entries if e["type"] == "compaction"]
        assert len(comps) == len(self.compactions)
        return [
            (c["checkpoint"], c["reason"], c["willRetry"], e["firstKeptEntryId"], e["tokensBefore"])
            for c, e in zip(self.compactions, comps, strict=True)
        ]


def replayed(result: Any) -> list[tuple[Any, ...]]:
    return [
        (c.checkpoint, c.reason, c.will_retry, c.first_kept_entry_id, c.tokens_before)
        for c in result.compactions
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    root = tmp_path / "project"
    make_replay.build_project(root)
    return root


POLICIES = {
    "pi-e2e": (8000, {"reserveTokens": 2000, "keepRecentTokens": 2000}),
    "tight": (7000, {"reserveTokens": 2500, "keepRecentTokens": 1200}),
}


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("scenario", ["between_turns", "after_run", "overflow"])
def test_replaying_the_recorded_policy_reproduces_every_compaction(
    scenario: str, policy: str, project: Path, tmp_path: Path
) -> None:
    window, compaction = POLICIES[policy]
    rec = Recorder(project, tmp_path / "sessions", window, compaction)
    for text in make_replay.SCENARIO_PROMPTS[scenario]:
        rec.prompt(text)
    recorded = rec.recorded()
    assert recorded, "the scenario must compact"
    assert {r[0] for r in recorded} == {make_replay.SCENARIO_CHECKPOINT[scenario]}
    if scenario == "overflow":
        assert ("after_run", "overflow", True) in {r[:3] for r in recorded}
    result = replay(
        rec.file,
        context_window=window,
        reserve_tokens=compaction["reserveTokens"],
        keep_recent_tokens=compaction["keepRecentTokens"],
        max_tokens=rec.model.max_tokens,
    )
    assert replayed(result) == recorded
    # the simulated path is the recorded one: the same summaries were reused at the same places
    assert [c.summary_source for c in result.compactions] == ["recorded"] * len(recorded)
    assert [e["id"] for e in result.entries] == [e["id"] for e in rec.session.session_manager.get_branch()]
    # the recorded side, inferred from the file alone, says the same
    assert [(c.checkpoint, c.reason) for c in result.recorded_compactions] == [r[:2] for r in recorded]
    walked = [s for s in result.steps if s.kind not in ("compaction", "recorded_compaction")]
    assert [s.simulated_tokens for s in walked] == [s.recorded_tokens for s in walked]


def test_pre_prompt_checkpoint_with_a_window_per_model(project: Path, tmp_path: Path) -> None:
    """A 128k model, then an 8,000-token one: only the check before the next prompt sees the
    small window. The replay gives each ``model_change`` its window through a callable."""
    policy = {"reserveTokens": 2000, "keepRecentTokens": 2000}
    rec = Recorder(project, tmp_path / "sessions", 128_000, policy)
    k = 0
    while k == 0 or rec.session.messages[-1]["usage"]["totalTokens"] <= 6000:
        k += 1
        rec.prompt(make_replay.chat_prompt(k))
    rec.set_window(8000)
    rec.prompt(make_replay.chat_prompt(k + 1))
    recorded = rec.recorded()
    assert [r[0] for r in recorded] == ["pre_prompt"]
    changes = [e["id"] for e in rec.session.session_manager.get_entries() if e["type"] == "model_change"]

    def window(change: Any) -> int:
        return 128_000 if change is None or change["id"] == changes[0] else 8000

    result = replay(rec.file, context_window=window, reserve_tokens=2000, keep_recent_tokens=2000)
    assert replayed(result) == recorded
    assert result.recorded_compactions[0].checkpoint == "pre_prompt"  # a model change came between
    assert result.context_window is None  # two windows were used
    # with one 8,000-token window throughout, the same compaction comes one checkpoint earlier
    early = replay(rec.file, context_window=8000, reserve_tokens=2000, keep_recent_tokens=2000)
    assert early.compactions[0].checkpoint == "after_run"
    assert early.compactions[0].first_kept_entry_id == recorded[0][3]


@pytest.mark.parametrize("name", ["between_turns", "after_run", "overflow", "pre_prompt"])
def test_committed_e2e_sessions_replay_to_their_own_compactions(name: str) -> None:
    path = E2E / f"compaction_{name}.jsonl"
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    changes = [e["id"] for e in entries if e.get("type") == "model_change"]
    window: Any = 8000
    if name == "pre_prompt":  # the recording switched from a 128k model to an 8,000-token one

        def window(change: Any) -> int:
            return 128_000 if change is None or change["id"] == changes[0] else 8000

    result = replay(path, context_window=window, reserve_tokens=2000, keep_recent_tokens=2000)
    comps = [e for e in entries if e.get("type") == "compaction"]
    assert [(c.first_kept_entry_id, c.tokens_before, c.id) for c in result.compactions] == [
        (e["firstKeptEntryId"], e["tokensBefore"], e["id"]) for e in comps
    ]
    want = {"between_turns": "between_turns", "after_run": "after_run", "pre_prompt": "pre_prompt"}
    assert {c.checkpoint for c in result.compactions} == {want.get(name, "after_run")}
    if name == "overflow":
        skipped = [d for d in result.decisions if d.outcome == "nothing_to_compact"]
        assert [d.checkpoint for d in skipped] == ["between_turns"]  # over the threshold, nothing to cut


# --------------------------------------------------------------------------------------------
# against the real Pi: other policies, checked by Pi's prepareCompaction / buildSessionContext


@pytest.mark.parametrize("case", REPLAY_GOLDEN["cases"], ids=lambda c: c["name"])
def test_simulated_compactions_are_pis_prepare_compaction(case: dict[str, Any]) -> None:
    result = make_replay.run_case(case)
    comps = result.compactions
    assert len(comps) == len(case["compactions"]) == case["expectCompactions"]
    for comp, rec in zip(comps, case["compactions"], strict=True):
        branch = make_replay.expand_branch(rec["branch"], case)
        mine = list(result.entries)
        index = [e["id"] for e in mine].index(comp.id)
        assert json.loads(js_stringify(mine[:index])) == branch  # the branch Pi was given
        answer = rec["prepareCompaction"]
        assert answer["ok"], answer
        want = answer["result"]
        assert want is not None
        assert comp.first_kept_entry_id == want["firstKeptEntryId"]
        assert comp.tokens_before == want["tokensBefore"]
        assert comp.is_split_turn == want["isSplitTurn"]
        assert comp.messages_summarized == len(want["messagesToSummarize"])
        assert comp.turn_prefix_messages == len(want["turnPrefixMessages"])
        prep = prepare_compaction(branch, CompactionSettings.from_dict(want["settings"]))
        assert prep is not None and json.loads(js_stringify(prep.to_dict())) == want
    # the whole simulated path, as Pi projects it
    context = case["context"]
    assert context["ok"]
    mine_ctx = build_session_context(list(result.entries))
    assert json.loads(js_stringify(mine_ctx.to_dict())) == context["result"]
    assert estimate_context_tokens(mine_ctx.messages).to_dict() == case["estimate"]["result"]
    # where the threshold was crossed with nothing to cut, Pi's prepareCompaction agrees
    nothing = [d for d in result.decisions if d.outcome == "nothing_to_compact"]
    assert [d.position for d in nothing] == [s["position"] for s in case["skipped"]]
    for d, skipped in zip(nothing, case["skipped"], strict=True):
        branch = make_replay.expand_branch(skipped["branch"], case)
        assert json.loads(js_stringify(list(result.entries[: d.path_length]))) == branch
        assert skipped["prepareCompaction"]["ok"] and skipped["prepareCompaction"]["result"] is None
        assert prepare_compaction(branch, result.settings) is None


def test_golden_cases_cover_the_rules() -> None:
    cases = REPLAY_GOLDEN["cases"]
    assert len(cases) >= 12
    results = [make_replay.run_case(c) for c in cases]
    comps = [c for r in results for c in r.compactions]
    assert {c.checkpoint for c in comps} == {"after_run", "pre_prompt", "between_turns"}
    assert any(c.is_split_turn for c in comps) and any(not c.is_split_turn for c in comps)
    assert {c.summary_source for c in comps} >= {"placeholder", "recorded"}
    sources = {d.tokens_source for r in results for d in r.decisions if d.outcome == "compacted"}
    assert {"usage", "rebased_usage", "estimate"} <= sources
    assert any(d.outcome == "stale" for r in results for d in r.decisions)
    assert any(c.reason == "overflow" for c in comps)


# --------------------------------------------------------------------------------------------
# the rules of the walk


def test_a_window_too_large_to_fill_never_compacts() -> None:
    path = E2E / "compaction_between_turns.jsonl"
    result = replay(path, context_window=1_000_000, reserve_tokens=2000, keep_recent_tokens=2000)
    assert result.compactions == ()
    assert {d.outcome for d in result.decisions} == {"below_threshold"}
    assert len(result.recorded_compactions) == 2
    # without its compactions the simulated context ends above the recorded one
    assert "compaction" not in {s.kind for s in result.steps}
    assert result.final_context_tokens > result.steps[-1].recorded_tokens
    assert result.peak_context_tokens > result.recorded_peak_context_tokens


def test_disabled_compaction_decides_nothing() -> None:
    result = replay(E2E / "compaction_after_run.jsonl", context_window=100, reserve_tokens=0, enabled=False)
    assert result.compactions == ()
    assert {d.outcome for d in result.decisions} == {"disabled"}


def test_usage_after_a_divergence_is_rebased_by_the_estimate_difference() -> None:
    path = E2E / "compaction_after_run.jsonl"
    # a smaller window compacts earlier than the recording did
    result = replay(path, context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500)
    first = result.compactions[0]
    recorded_first = result.recorded_compactions[0]
    assert first.position < recorded_first.position
    steps = [s for s in result.steps if s.kind == "assistant" and s.position > first.position]
    assert steps
    for s in steps:
        assert s.usage_tokens is not None and s.simulated_usage_tokens is not None
        if s.position < recorded_first.position:
            # the simulated request is smaller than the recorded one: the usage drops with it
            assert s.simulated_usage_tokens < s.usage_tokens
    decisions = [d for d in result.decisions if d.position > first.position and d.tokens_source]
    assert "rebased_usage" in {d.tokens_source for d in decisions}
    # the same replay on the recorded numbers decides on stale (larger) usage
    stale = replay(path, context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500, usage="recorded")
    assert "rebased_usage" not in {d.tokens_source for d in stale.decisions}
    assert len(stale.compactions) >= len(result.compactions)


def test_rebased_usage_matches_the_simulated_request() -> None:
    """Δ is Σ estimate(simulated request) - Σ estimate(recorded request), so the rebased usage
    minus the recorded one equals the difference of the two estimated contexts."""
    path = E2E / "compaction_after_run.jsonl"
    result = replay(path, context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500)
    sim_entries = {e["id"]: e for e in result.entries}
    entries = {e["id"]: e for e in SessionManager.open(str(_copy(path))).get_entries()}
    rebased = [
        s
        for s in result.steps
        if s.kind == "assistant" and s.usage_tokens != s.simulated_usage_tokens and s.entry_id
    ]
    assert rebased
    for s in rebased:
        sim_usage = sim_entries[s.entry_id]["message"]["usage"]
        rec_usage = entries[s.entry_id]["message"]["usage"]
        moved = sim_usage["input"] - rec_usage["input"]
        assert sim_usage["totalTokens"] - rec_usage["totalTokens"] == moved
        assert sim_usage["output"] == rec_usage["output"]
        assert s.simulated_usage_tokens == s.usage_tokens + moved


def _copy(path: Path) -> Path:
    import shutil
    import tempfile

    target = Path(tempfile.mkdtemp()) / path.name
    shutil.copyfile(path, target)
    return target


def test_stale_usage_is_not_used_after_a_compaction() -> None:
    """The pre-prompt check right after an after-run compaction sees an answer older than the
    compaction: Pi skips it (timestamp rule; the replay uses the walk order)."""
    result = replay(
        E2E / "compaction_after_run.jsonl", context_window=8000, reserve_tokens=2000, keep_recent_tokens=2000
    )
    for comp in result.compactions:
        later = [d for d in result.decisions if d.position == comp.position and d.checkpoint == "pre_prompt"]
        assert [d.outcome for d in later] in ([], ["stale"])
    assert any(d.outcome == "stale" for d in result.decisions)


def test_windows_by_model_and_errors() -> None:
    path = E2E / "compaction_after_run.jsonl"
    by_model = replay(
        path, context_window={"pi_nb/offline": 8000}, reserve_tokens=2000, keep_recent_tokens=2000
    )
    plain = replay(path, context_window=8000, reserve_tokens=2000, keep_recent_tokens=2000)
    assert replayed(by_model) == replayed(plain)
    assert replayed(
        replay(path, context_window={"offline": 8000}, reserve_tokens=2000, keep_recent_tokens=2000)
    ) == replayed(plain)
    with pytest.raises(ReplayError, match="no context window for model pi_nb/offline"):
        replay(path, context_window={"other": 1})
    with pytest.raises(ReplayError, match="whole number >= 0"):
        replay(path, context_window=-1)
    with pytest.raises(ReplayError, match="must be an int"):
        replay(path, context_window="8000")  # type: ignore[arg-type]
    with pytest.raises(ReplayError, match="context_window must be"):
        replay(path, context_window=True)
    with pytest.raises(ReplayError, match="reserve_tokens"):
        replay(path, context_window=8000, reserve_tokens=-5)
    with pytest.raises(ReplayError, match="usage must be"):
        replay(path, context_window=8000, usage="fresh")  # type: ignore[arg-type]
    with pytest.raises(ReplayError, match="no such session file"):
        replay(path.with_name("missing.jsonl"), context_window=8000)
    with pytest.raises(ReplayError, match="not in the session"):
        replay(path, context_window=8000, leaf_id="nope")
    with pytest.raises(ReplayError, match="whole number >= 0"):
        replay(path, context_window=lambda change: -3)


def test_a_session_manager_and_a_list_of_entries_replay_alike(tmp_path: Path) -> None:
    path = E2E / "compaction_between_turns.jsonl"
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    a = replay(path, context_window=7000, reserve_tokens=2000, keep_recent_tokens=1000)
    b = replay(entries, context_window=7000, reserve_tokens=2000, keep_recent_tokens=1000)
    c = replay(
        SessionManager.open(str(_copy(path))),
        context_window=7000,
        reserve_tokens=2000,
        keep_recent_tokens=1000,
    )
    assert a.to_dict()["decisions"] == b.to_dict()["decisions"] == c.to_dict()["decisions"]
    assert a.session_file == str(path) and b.session_file is None


def test_simulated_path_is_a_session_pi_can_load() -> None:
    result = replay(
        E2E / "compaction_between_turns.jsonl",
        context_window=6500,
        reserve_tokens=1500,
        keep_recent_tokens=800,
    )
    assert any(c.summary_source == "placeholder" for c in result.compactions)
    sm = SessionManager.in_memory("/tmp", entries=list(result.entries))
    assert [e["id"] for e in sm.get_branch()] == [e["id"] for e in result.entries]
    ids = [e["id"] for e in result.entries]
    assert len(set(ids)) == len(ids)
    assert [e.get("parentId") for e in result.entries] == [None, *ids[:-1]]
    for comp in result.compactions:
        assert comp.first_kept_entry_id in ids[: ids.index(comp.id)]
        assert comp.entry["tokensBefore"] == comp.tokens_before


def test_placeholder_summary_has_pis_shape_and_a_realistic_length() -> None:
    ops = create_file_ops()
    ops.read.add("b.txt")
    ops.read.add("a.txt")
    ops.edited.add("c.py")
    prep = CompactionPreparation(
        first_kept_entry_id="x",
        messages_to_summarize=[{"role": "user", "content": "hi", "timestamp": 1}],
        turn_prefix_messages=[],
        is_split_turn=False,
        tokens_before=10,
        previous_summary=None,
        file_ops=ops,
        settings=CompactionSettings(reserve_tokens=16384),
    )
    text = placeholder_summary(prep, 500)
    body, _, files = text.partition("\n\n<read-files>")
    assert abs(len(body) / 4 - 500) <= 1
    assert files == "\na.txt\nb.txt\n</read-files>\n\n<modified-files>\nc.py\n</modified-files>"
    assert [ln for ln in body.split("\n") if ln.startswith("#")] == [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ]
    # capped by Pi's output cap (0.8 * reserveTokens) for the history summary
    small = CompactionPreparation(
        "x", prep.messages_to_summarize, [], False, 10, None, ops, CompactionSettings(reserve_tokens=100)
    )
    assert len(placeholder_summary(small, 5000).partition("\n\n<read-files>")[0]) <= max(80 * 4, 400)
    # a split turn with nothing before it: Pi's literal history, then the prefix
    split = CompactionPreparation("x", [], prep.messages_to_summarize, True, 10, None, create_file_ops())
    text = placeholder_summary(split, 100)
    assert text.startswith(
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request"
    )
    with pytest.raises(ReplayError):
        placeholder_summary(prep, -1)


def test_placeholder_length_follows_the_recorded_summaries() -> None:
    path = E2E / "compaction_after_run.jsonl"
    a = replay(path, context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500)
    b = replay(path, context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500, summary_tokens=50)
    pa = [c for c in a.compactions if c.summary_source == "placeholder"]
    pb = [c for c in b.compactions if c.summary_source == "placeholder"]
    assert pa and pb
    assert all(c.summary_chars > 50 * 4 + 100 for c in pa)
    assert DEFAULT_SUMMARY_TOKENS == 1000


def test_real_summaries_with_a_model() -> None:
    path = E2E / "compaction_after_run.jsonl"
    result = asyncio.run(
        areplay(path, context_window=9000, reserve_tokens=4000, keep_recent_tokens=1500, model=OfflineModel())
    )
    models = [c for c in result.compactions if c.summary_source == "model"]
    assert models
    for comp in models:
        assert "## Goal" in comp.entry["summary"] and "## Next Steps" in comp.entry["summary"]
    sync = replay(
        path, context_window=9000, reserve_tokens=4000, keep_recent_tokens=1500, model=OfflineModel()
    )
    assert replayed(sync) == replayed(result)

    async def inside_a_loop() -> None:
        with pytest.raises(ReplayError, match="areplay"):
            replay(path, context_window=6000, model=OfflineModel())

    asyncio.run(inside_a_loop())


def test_sweep_gives_one_outcome_per_session_and_policy() -> None:
    files = [E2E / "compaction_after_run.jsonl", E2E / "compaction_between_turns.jsonl"]
    outcomes = sweep(
        files, context_window=[6000, 8000, 50_000], reserve_tokens=[1000, 2000], keep_recent_tokens=[1500]
    )
    assert len(outcomes) == 2 * 3 * 2
    rows = [o.to_dict() for o in outcomes]
    assert [r["session_file"] for r in rows] == [str(files[0])] * 6 + [str(files[1])] * 6
    big = [r for r in rows if r["context_window"] == 50_000]
    assert all(r["compactions"] == 0 and r["tokens_summarized"] == 0 for r in big)
    for r in rows:
        single = replay(
            r["session_file"],
            context_window=r["context_window"],
            reserve_tokens=r["reserve_tokens"],
            keep_recent_tokens=r["keep_recent_tokens"],
        )
        assert single.outcome() == {k: r[k] for k in single.outcome()}
    with pytest.raises(ReplayError, match="empty"):
        sweep(files, context_window=[])


# --------------------------------------------------------------------------------------------
# properties


usage_st = st.fixed_dictionaries(
    {
        "input": st.integers(0, 5000),
        "output": st.integers(0, 500),
        "cacheRead": st.integers(0, 3000),
        "cacheWrite": st.integers(0, 100),
        "totalTokens": st.integers(0, 9000),
    }
)
message_st = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t, "timestamp": 1}, st.text(max_size=40)),
    st.builds(
        lambda t, u, stop: {
            "role": "assistant",
            "content": [{"type": "text", "text": t}],
            "usage": u,
            "stopReason": stop,
            "timestamp": 1,
        },
        st.text(max_size=40),
        usage_st,
        st.sampled_from(["stop", "toolUse", "error", "aborted", "length"]),
    ),
    st.builds(
        lambda t: {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "read",
            "isError": False,
            "content": [{"type": "text", "text": t}],
            "timestamp": 1,
        },
        st.text(max_size=80),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(message_st, max_size=12), st.integers(0, 12))
def test_incremental_state_is_pis_estimate(messages: list[dict[str, Any]], drop_at: int) -> None:
    state = _State()
    for i, m in enumerate(messages):
        state.append(m, i, i)
        want = estimate_context_tokens(state.msgs)
        assert (state.tokens(), state.anchor()) == (want.tokens, want.last_usage_index)
    if state.msgs and drop_at < len(messages):
        state.drop_last()
        want = estimate_context_tokens(messages[:-1])
        assert (state.tokens(), state.anchor()) == (want.tokens, want.last_usage_index)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["between_turns", "after_run", "overflow", "pre_prompt"]),
    st.integers(3000, 20000),
    st.integers(0, 3000),
    st.integers(0, 4000),
)
def test_every_compaction_follows_pis_rules(name: str, window: int, reserve: int, keep: int) -> None:
    result = replay(
        E2E / f"compaction_{name}.jsonl",
        context_window=window,
        reserve_tokens=reserve,
        keep_recent_tokens=keep,
    )
    ids = [e["id"] for e in result.entries]
    threshold = window - reserve
    for d in result.decisions:
        assert d.threshold == threshold
        if d.reason == "threshold":
            assert d.tokens is not None and d.tokens > threshold
        if d.outcome == "below_threshold":
            assert d.tokens is not None and d.tokens <= threshold
        if d.compaction is not None:
            c = d.compaction
            assert c.first_kept_entry_id in ids[: ids.index(c.id)]
            branch = list(result.entries[: ids.index(c.id)])
            prep = prepare_compaction(branch, result.settings)
            assert prep is not None
            assert (prep.first_kept_entry_id, prep.tokens_before, prep.is_split_turn) == (
                c.first_kept_entry_id,
                c.tokens_before,
                c.is_split_turn,
            )
    # the simulated context at the end is Pi's projection of the simulated path (less a dropped
    # failed response when the last thing that happened was an overflow retry compaction)
    projected = build_session_context(list(result.entries)).messages
    assert estimate_context_tokens(projected).tokens >= 0


def test_a_session_written_by_the_real_pi_replays_to_its_automatic_compaction() -> None:
    """notebooks/data/real-pi/compaction.jsonl was written by the real Pi 0.85.0 CLI on a
    6,000-token window (reserve 1,500, keep 1,500): Pi compacted on its own between two turns,
    then the user ran ``/compact``. The replay with that policy finds Pi's automatic compaction
    (same place, ``firstKeptEntryId`` and ``tokensBefore``); the manual one is not a decision
    the replay makes."""
    path = ROOT / "notebooks" / "data" / "real-pi" / "compaction.jsonl"
    result = replay(path, context_window=6000, reserve_tokens=1500, keep_recent_tokens=1500)
    auto, manual = result.recorded_compactions
    assert [
        (c.checkpoint, c.first_kept_entry_id, c.tokens_before, c.position) for c in result.compactions
    ] == [(auto.checkpoint, auto.first_kept_entry_id, auto.tokens_before, auto.position)]
    assert auto.checkpoint == "between_turns" and result.compactions[0].summary_source == "recorded"
    assert manual.first_kept_entry_id not in {c.first_kept_entry_id for c in result.compactions}
