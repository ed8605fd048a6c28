"""Context policies as values (pi_nb.policies): each on a small hand-checked session, and on the
recorded real sessions (the notebook's and the e2e fixtures).

The hand session (``_hand``): an Anthropic claude-sonnet-4-5 session (prices per million: input 3,
output 15, cache read 0.3, cache write 3.75) whose system prompt and tools are 2,000 tokens:

    u1   user, 400 chars             100 tokens
    a1   assistant text+read()       100      request: 2000 + 100                 = 2100
    r1   tool result, 4000 chars    1000
    a2   assistant text+read()       100      request: 2100 + 100 + 1000          = 3200
    r2   tool result, 4000 chars    1000
    a3   final answer                100      request: 3200 + 100 + 1000          = 4300
    u2   user (10 minutes later)     100
    a4   final answer                100      request: 4300 + 100 + 100           = 4500

Its usages are what Anthropic's prefix cache bills with pi-ai's breakpoints (the last user
message; a tool result is one): a1 writes 2100; a2 reads 2100 and writes 1100; a3 reads 3200 and
writes 1100; a4 comes after the 5-minute TTL: reads 0, writes 4500.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_nb.errors import ReplayError
from pi_nb.policies import (
    RECORDED,
    ClaudeCodeAutoCompact,
    ClearToolUses,
    CodexTruncation,
    ContextPolicy,
    InspectTrim,
    KeepAll,
    ObservationMasking,
    PiPolicy,
    TrimLastTokens,
    TrimLastTurns,
    policy_cost,
    replay_policy,
    sweep_policies,
)
from pi_nb.providers.catalog import find_model
from pi_nb.what_if import replay, sweep
from pi_nb.what_if.policies.library import codex_head_tail, inspect_trim_messages

ROOT = Path(__file__).parent
REAL = sorted((ROOT.parent / "notebooks" / "data" / "real-pi").glob("*.jsonl"))
E2E = sorted((ROOT / "fixtures" / "e2e").glob("*.jsonl"))

T0 = 1_780_000_000_000


def _usage(read: int, write: int, inp: int = 0, out: int = 100) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": inp + out + read + write,
    }


def _hand() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s-hand",
            "timestamp": "2026-09-10T00:00:00.000Z",
            "cwd": "/w",
        },
        {
            "type": "model_change",
            "id": "mc",
            "parentId": None,
            "timestamp": "2026-09-10T00:00:00.000Z",
            "provider": "anthropic",
            "modelId": "claude-sonnet-4-5",
        },
    ]

    def add(eid: str, message: dict[str, Any]) -> None:
        entries.append(
            {
                "type": "message",
                "id": eid,
                "parentId": entries[-1]["id"],
                "timestamp": "2026-09-10T00:00:01.000Z",
                "message": message,
            }
        )

    def assistant(calls: bool, usage: dict[str, Any], ts: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": "a" * (394 if calls else 400)}]
        if calls:
            content.append({"type": "toolCall", "id": f"c{ts}", "name": "read", "arguments": {}})
        return {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": usage,
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": ts,
        }

    def result(call_ts: int) -> dict[str, Any]:
        return {
            "role": "toolResult",
            "toolCallId": f"c{call_ts}",
            "toolName": "read",
            "content": [{"type": "text", "text": "r" * 4000}],
            "isError": False,
            "timestamp": call_ts + 1,
        }

    add("u1", {"role": "user", "content": [{"type": "text", "text": "u" * 400}], "timestamp": T0})
    add("a1", assistant(True, _usage(0, 2100), T0 + 1000))
    add("r1", result(T0 + 1000))
    add("a2", assistant(True, _usage(2100, 1100), T0 + 2000))
    add("r2", result(T0 + 2000))
    add("a3", assistant(False, _usage(3200, 1100), T0 + 3000))
    add("u2", {"role": "user", "content": [{"type": "text", "text": "v" * 400}], "timestamp": T0 + 600_000})
    add("a4", assistant(False, _usage(0, 4500), T0 + 601_000))
    return entries


SONNET = find_model("anthropic", "claude-sonnet-4-5")


def _tokens(policy: ContextPolicy | str, window: int = 200_000) -> list[int]:
    return [r.tokens for r in replay_policy(_hand(), policy, context_window=window).requests]


def test_recorded_requests_are_the_recorded_sizes() -> None:
    result = replay_policy(_hand(), RECORDED, context_window=200_000)
    assert [r.tokens for r in result.requests] == [2100, 3200, 4300, 4500]
    assert [r.overhead for r in result.requests] == [2000] * 4
    assert [r.entry_id for r in result.requests] == ["a1", "a2", "a3", "a4"]


def test_recorded_cost_is_reproduced_by_the_anthropic_cache_model() -> None:
    assert SONNET is not None
    cost = policy_cost(replay_policy(_hand(), RECORDED, context_window=200_000))
    assert cost.cache_model == "auto:anthropic"
    split = [(r.input, r.cache_read, r.cache_write) for r in cost.requests]
    assert split == [(0, 0, 2100), (0, 2100, 1100), (0, 3200, 1100), (0, 0, 4500)]
    # by hand: a1 2100*3.75 + 100*15; a2 2100*0.3 + 1100*3.75 + 1500; a3 3200*0.3 + 1100*3.75 + 1500;
    # a4 4500*3.75 + 1500 (per million)
    by_hand = (7875 + 1500 + 630 + 4125 + 1500 + 960 + 4125 + 1500 + 16875 + 1500) / 1e6
    assert cost.total == pytest.approx(by_hand, rel=1e-12)
    assert cost.recorded_cost == pytest.approx(by_hand, rel=1e-12)


def test_openai_and_no_cache_models() -> None:
    result = replay_policy(_hand(), RECORDED, context_window=200_000)
    openai = policy_cost(result, cache="openai")
    # automatic prefix caching: the previous request's whole prompt, rounded down to 128 tokens
    assert [r.cache_read for r in openai.requests] == [0, 2048, 3200, 0]
    assert [r.cache_write for r in openai.requests] == [0, 0, 0, 0]
    none = policy_cost(result, cache="none")
    assert [r.input for r in none.requests] == [2100, 3200, 4300, 4500]
    assert none.total == pytest.approx((14100 * 3 + 400 * 15) / 1e6)


def test_pi_policy_is_the_replay() -> None:
    for path in [*E2E, *REAL]:
        for window in (6000, 8000, 30_000):
            policy = PiPolicy(reserve_tokens=2000, keep_recent_tokens=2000)
            got = replay(path, context_window=window, policy=policy)
            plain = replay(path, context_window=window, reserve_tokens=2000, keep_recent_tokens=2000)
            assert got.pi is not None
            assert got.pi.to_dict() == plain.to_dict()
            assert len(got.events) == len(plain.compactions)


@pytest.mark.parametrize("path", [p for p in E2E if p.name.startswith("compaction_")], ids=lambda p: p.stem)
def test_pi_policy_with_the_recorded_settings_sends_the_recorded_requests(path: Path) -> None:
    """The replay of the recorded policy reproduces every recorded request size exactly (so the
    recorded bill too, at any prices: tolerance 0 on these sessions)."""
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    changes = [e["id"] for e in entries if e.get("type") == "model_change"]
    window: Any = 8000
    if path.stem == "compaction_pre_prompt":

        def window(change: Any) -> int:
            return 128_000 if change is None or change["id"] == changes[0] else 8000

    pi = replay_policy(path, PiPolicy(reserve_tokens=2000, keep_recent_tokens=2000), context_window=window)
    rec = replay_policy(path, RECORDED, context_window=window)
    assert [r.tokens for r in pi.requests] == [r.tokens for r in rec.requests]
    with_usage = [r for r in rec.requests if r.recorded_tokens is not None]
    assert len(with_usage) >= len(rec.requests) - 1  # an overflow error has no usage
    assert [r.tokens for r in with_usage] == [r.recorded_tokens for r in with_usage]
    priced = policy_cost(pi, prices=SONNET)
    recorded = policy_cost(rec, prices=SONNET)
    assert priced.requests_cost == pytest.approx(recorded.recorded_cost, rel=1e-12)
    assert len(pi.events) == sum(1 for e in entries if e.get("type") == "compaction")


def test_observation_masking_by_hand() -> None:
    # keep 1 step: at a3, r1 (step 0) is masked: "Old environment output: (1 lines omitted)" is 41
    # chars = 11 tokens; at a4, r2 too.
    assert _tokens(ObservationMasking(keep_turns=1)) == [
        2100,
        3200,
        2000 + 100 + 100 + 11 + 100 + 1000,
        2000 + 100 + 100 + 11 + 100 + 11 + 100 + 100,
    ]
    cost = policy_cost(replay_policy(_hand(), ObservationMasking(keep_turns=1), context_window=200_000))
    # a3 reads only the prefix a1 wrote (u1: 2100), the first changed message is r1; a4 is past the TTL
    assert [(r.cache_read, r.cache_write) for r in cost.requests] == [
        (0, 2100),
        (2100, 1100),
        (2100, 1211),
        (0, 2522),
    ]
    assert _tokens(ObservationMasking(keep_turns=10)) == [2100, 3200, 4300, 4500]


def test_trimming_by_hand() -> None:
    assert _tokens(TrimLastTurns(turns=1)) == [2100, 3200, 4300, 2000 + 100]
    # 1150 tokens: at a2, r1 (1000) + a1 (100) fit and u1 does not; at a3, r2 + a2; at a4, u2 + a3
    assert _tokens(TrimLastTokens(tokens=1150)) == [2100, 2000 + 1100, 2000 + 1100, 2000 + 100 + 100]


def test_inspect_trim_by_hand() -> None:
    # window 4000, threshold 0.9: 3600. Before a3 the context is 4300: trimmed. The first user
    # message stays; of [a1, r1, a2, r2] int(4 * 0.5) = 2 go.
    result = replay_policy(_hand(), InspectTrim(preserve=0.5), context_window=4000)
    assert [r.tokens for r in result.requests] == [2100, 3200, 3200, 3400]
    assert [(e.checkpoint, e.before_request, e.tokens_before, e.tokens_after) for e in result.events] == [
        ("between_turns", 2, 4300, 3200)
    ]


def test_inspect_trim_messages_keeps_calls_and_results_paired() -> None:
    u = {"role": "user", "content": "q"}
    a1 = {"role": "assistant", "content": [{"type": "toolCall", "id": "x", "name": "n", "arguments": {}}]}
    r1 = {"role": "toolResult", "toolCallId": "x", "content": []}
    a2 = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "t"},
            {"type": "toolCall", "id": "y", "name": "n", "arguments": {}},
        ],
    }
    # preserve 0.75 of [a1, r1, a2]: int(3 * 0.25) = 0 dropped; a2's call has no result: removed,
    # and a2 is then a trailing assistant: dropped
    out = inspect_trim_messages([u, a1, r1, a2], 0.75)  # type: ignore[list-item]
    assert out == [u, a1, r1]
    # preserve 0.5: int(3 * 0.5) = 1 dropped (a1): r1's call is gone, so r1 goes too
    assert inspect_trim_messages([u, a1, r1, a2], 0.5) == [u]  # type: ignore[list-item]


def test_claude_code_autocompact_by_hand() -> None:
    # window 4000: trigger 4000 - 900 = 3100. Before a2 the context is 3200: the history becomes a
    # 1000-token summary (4000 chars) and the unfinished step (a1, r1).
    result = replay_policy(_hand(), ClaudeCodeAutoCompact(), context_window=4000)
    assert [r.tokens for r in result.requests][:2] == [2100, 2000 + 1000 + 100 + 1000]
    first = result.events[0]
    assert (first.checkpoint, first.kind, first.summary_input_tokens, first.summary_output_tokens) == (
        "between_turns",
        "compaction",
        3200,
        1000,
    )
    cost = policy_cost(result)
    assert cost.summaries_cost > 0


def test_codex_head_tail_by_hand() -> None:
    text = "\n".join(str(i) for i in range(300))
    out = codex_head_tail(text, 10 * 1024, 256)
    lines = out.split("\n")
    assert lines[:128] == [str(i) for i in range(128)]
    assert lines[128] == "[... omitted 44 of 300 lines ...]"
    assert lines[-128:] == [str(i) for i in range(172, 300)]
    assert codex_head_tail("short", 10 * 1024, 256) == "short"
    # the 4000-char results fit in 10 KiB and 256 lines; with 1 KiB they are cut to 512 + 512 bytes
    assert _tokens(CodexTruncation()) == [2100, 3200, 4300, 4500]
    small = _tokens(CodexTruncation(max_bytes=1024))
    marker = len("\n[... omitted 0 of 1 lines ...]\n\n")
    per_result = -(-(512 + marker + 0) // 4)  # one line: head is the line cut to 512 bytes, tail empty
    assert small[1] == 2000 + 100 + 100 + per_result


def test_clear_tool_uses_by_hand() -> None:
    # trigger 3000, keep 1: at a3 (4300) r1 is cleared ("[cleared to save context]": 7 tokens); at
    # a4 too, and r2 is the last tool use: kept
    assert _tokens(ClearToolUses(trigger=3000, keep=1)) == [
        2100,
        3200,
        2000 + 100 + 100 + 7 + 100 + 1000,
        2000 + 100 + 100 + 7 + 100 + 1000 + 100 + 100,
    ]
    # clearing r1 frees 993 tokens: under clear_at_least=2000, nothing is cleared at a3
    assert _tokens(ClearToolUses(trigger=3000, keep=1, clear_at_least=2000))[2] == 4300


def test_keep_all_is_the_recording_without_compactions() -> None:
    assert _tokens(KeepAll()) == _tokens(RECORDED)


ALL = [
    KeepAll(),
    PiPolicy(reserve_tokens=2000, keep_recent_tokens=2000),
    ObservationMasking(keep_turns=2),
    TrimLastTurns(turns=2),
    TrimLastTokens(tokens=3000),
    InspectTrim(),
    ClaudeCodeAutoCompact(),
    CodexTruncation(max_lines=20),
    ClearToolUses(trigger=4000, keep=2),
]


@pytest.mark.parametrize("path", [*REAL, *E2E], ids=lambda p: p.stem)
def test_every_policy_on_the_real_sessions(path: Path) -> None:
    rec = replay_policy(path, RECORDED, context_window=8000)
    for policy in ALL:
        result = replay_policy(path, policy, context_window=8000)
        assert [r.entry_id for r in result.requests] == [r.entry_id for r in rec.requests]
        # a policy never sends more than the whole history does
        if not isinstance(policy, (KeepAll, ClaudeCodeAutoCompact, PiPolicy)):
            full = replay_policy(path, KeepAll(), context_window=8000)
            assert all(a.tokens <= b.tokens for a, b in zip(result.requests, full.requests, strict=True))
        cost = policy_cost(result, prices=SONNET)
        assert cost.total >= 0
        assert cost.unpriced_requests == 0
        # every request's split adds up to its prompt
        for r, c in zip(result.requests, cost.requests, strict=True):
            assert c.input + c.cache_read + c.cache_write == (r.tokens if r.billed else 0)


def test_sweep_with_policies_and_params() -> None:
    rows = sweep(
        REAL[:1],
        context_window=[8000, 16000],
        policies=[ObservationMasking(), "recorded"],
        params={"observation_masking": [{"keep_turns": 1}, {"keep_turns": 3}]},
    )
    assert [(r["context_window"], r["policy"], r.get("param_keep_turns")) for r in rows] == [
        (8000, "observation_masking", 1),
        (8000, "observation_masking", 3),
        (8000, "recorded", None),
        (16000, "observation_masking", 1),
        (16000, "observation_masking", 3),
        (16000, "recorded", None),
    ]
    assert rows == sweep_policies(
        REAL[:1],
        [ObservationMasking(), "recorded"],
        context_window=[8000, 16000],
        params={"observation_masking": [{"keep_turns": 1}, {"keep_turns": 3}]},
    )


def test_bad_policies() -> None:
    with pytest.raises(ReplayError):
        replay_policy(_hand(), "nope", context_window=8000)
    with pytest.raises(ReplayError):
        replay_policy(_hand(), object(), context_window=8000)  # type: ignore[arg-type]
    with pytest.raises(ReplayError):
        policy_cost(replay_policy(_hand(), RECORDED, context_window=8000), cache="lru")  # type: ignore[arg-type]


def test_old_cut_rule_counts_only_message_entries() -> None:
    from pi_nb.compaction.cut_points import find_cut_point

    def msg(i: int, role: str, chars: int) -> dict[str, Any]:
        return {
            "type": "message",
            "id": f"e{i}",
            "parentId": None,
            "timestamp": "",
            "message": {"role": role, "content": "x" * chars, "timestamp": 0},
        }

    custom = {
        "type": "custom_message",
        "id": "c",
        "parentId": None,
        "timestamp": "",
        "customType": "note",
        "content": "y" * 4000,
        "display": True,
    }
    entries: list[Any] = [msg(0, "user", 400), msg(1, "user", 400), custom, msg(3, "user", 400)]
    # 0.85.0: the custom message's 1000 tokens count, the budget (1050) is reached at it -> cut there (index 2)
    assert find_cut_point(entries, 0, 4, 1050).first_kept_entry_index == 2
    # before 0.80.4: only message entries count: 100 (e3) + 100 (e1) + 100 (e0) never reach 1050
    assert find_cut_point(entries, 0, 4, 1050, message_entries_only=True).first_kept_entry_index == 0
    assert find_cut_point(entries, 0, 4, 150, message_entries_only=True).first_kept_entry_index == 1


def test_notebook_08_runs_offline_and_shows_the_policies(tmp_path: Path) -> None:
    """notebooks/08_policies.ipynb, executed the way tools/run_notebooks.py runs every notebook."""
    import sys

    pytest.importorskip("nbclient")
    sys.path.insert(0, str(ROOT.parent / "tools"))
    import run_notebooks

    nb = run_notebooks.execute_notebook(
        ROOT.parent / "notebooks" / "08_policies.ipynb", agent_dir=str(tmp_path / "agent")
    )
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(
        o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
        for o in outputs
    )
    assert "17 requests; the same size as recorded: the first 15" in text
    assert "observation_masking" in text and "claude_code_autocompact" in text
    assert sum(1 for o in outputs if "image/png" in o.get("data", {})) == 6


PUBLIC = sorted((ROOT / "fixtures" / "public_pi").glob("*.jsonl.gz"))


@pytest.fixture(scope="module")
def public_sessions(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    import gzip

    out = tmp_path_factory.mktemp("public_pi")
    files = []
    for gz in PUBLIC:
        target = out / gz.name.removesuffix(".gz")
        target.write_bytes(gzip.decompress(gz.read_bytes()))
        files.append(target)
    return files


def test_public_sessions_are_committed() -> None:
    assert [p.name for p in PUBLIC] == ["before-compaction.jsonl.gz", "large-session.jsonl.gz"]


def test_recorded_cost_of_real_billed_sessions(public_sessions: list[Path]) -> None:
    """The recorded requests of two real Anthropic-billed Pi sessions, priced by the cache model.

    Measured: uncalibrated the model bills 14.3 % and 43.7 % less than the recording (it serves
    every prefix hit; the provider missed 1.9 % and 8.2 % of those tokens); with each session's
    miss rate the bill is within 0.01 % of the recorded one."""
    from pi_nb.policies import calibrate_miss_rate

    recorded_bills = {"before-compaction.jsonl": 42.596, "large-session.jsonl": 30.33}
    for path in public_sessions:
        rec = replay_policy(path, RECORDED, context_window=200_000)
        raw = policy_cost(rec)
        assert raw.cache_model.startswith("auto:anthropic")
        assert raw.recorded_cost == pytest.approx(recorded_bills[path.name], abs=5e-3)
        assert -0.5 < raw.total / raw.recorded_cost - 1 < 0
        rate = calibrate_miss_rate(rec)
        assert 0 < rate < 0.1
        calibrated = policy_cost(rec, miss_rate=rate)
        assert calibrated.total == pytest.approx(calibrated.recorded_cost, rel=1e-4)
        assert calibrated.cache_read_tokens == pytest.approx(
            sum(r.recorded_cache_read or 0 for r in calibrated.requests), abs=10
        )


def test_policies_on_real_billed_sessions(public_sessions: list[Path]) -> None:
    """Every policy on the real sessions: each request is the recorded answer's, and a view that
    rewrites older messages on every request (masking) busts the prefix cache: it costs more than
    keeping everything, although it sends fewer tokens."""
    path = public_sessions[0]
    keep = replay_policy(path, KeepAll(), context_window=200_000)
    masked = replay_policy(path, ObservationMasking(keep_turns=10), context_window=200_000)
    assert masked.total_prompt_tokens < keep.total_prompt_tokens
    assert policy_cost(masked).total > policy_cost(keep).total
    pi = replay_policy(path, PiPolicy(), context_window=200_000)
    assert pi.pi is not None and len(pi.events) == len(pi.pi.compactions) == 2
    assert policy_cost(pi).recorded_cost == pytest.approx(policy_cost(keep).recorded_cost)


def test_manual_compactions_applied_make_the_replay_the_recording() -> None:
    """compaction.jsonl: Pi's own automatic compaction, then the user's /compact. With
    ``manual="apply"`` the replay makes the /compact too, and every request is the recorded one."""
    path = REAL[1]
    assert path.name == "compaction.jsonl"
    rec = replay_policy(path, RECORDED, context_window=6000)
    skip = replay_policy(path, PiPolicy(reserve_tokens=1500, keep_recent_tokens=1500), context_window=6000)
    apply = replay_policy(
        path, PiPolicy(reserve_tokens=1500, keep_recent_tokens=1500, manual="apply"), context_window=6000
    )
    assert [r.tokens for r in apply.requests] == [r.tokens for r in rec.requests]
    assert [r.tokens for r in skip.requests][:15] == [r.tokens for r in rec.requests][:15]
    assert [r.tokens - s.tokens for r, s in zip(rec.requests, skip.requests, strict=True)][15:] == [
        -249,
        -249,
    ]
    plain = replay(path, context_window=6000, reserve_tokens=1500, keep_recent_tokens=1500)
    assert apply.pi is not None
    # the same decisions; after the /compact the applied replay counts the recorded (smaller) context
    assert [d.outcome for d in apply.pi.decisions] == [d.outcome for d in plain.decisions]
    assert apply.pi.decisions[:22] == plain.decisions[:22]
    assert apply.pi.decisions[22].tokens == 3865 and plain.decisions[22].tokens == 4114
    with pytest.raises(ReplayError):
        replay(path, context_window=6000, manual="sometimes")  # type: ignore[call-overload]
