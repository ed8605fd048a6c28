"""AgentSession on the ScriptedModel: persistence, compaction checkpoints, overflow retry, tree navigation,
hooks, skill expansion (Pi's agent-session and auto-compaction scenarios, spec §7.8, §9.3, §11.5)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_nb.agent.session import (
    OVERFLOW_RECOVERY_FAILED,
    TRUNCATED_RECOVERY_FAILED,
    AgentSession,
    SessionHooks,
)
from pi_nb.providers import ScriptedModel
from pi_nb.resources.loader import PromptsResult
from pi_nb.resources.settings import SettingsManager
from pi_nb.resources.skills import LoadSkillsResult
from pi_nb.session import SessionManager


class FakeLoader:
    """A resource loader with nothing discovered (the real one is tested in test_resource_loader)."""

    def __init__(self, skills: list[Any] | None = None) -> None:
        self.skills = skills or []

    def reload(self) -> None:
        pass

    def get_skills(self) -> LoadSkillsResult:
        return LoadSkillsResult(skills=tuple(self.skills))

    def get_prompts(self) -> PromptsResult:
        return PromptsResult()

    def get_agents_files(self) -> list[Any]:
        return []

    def get_system_prompt(self) -> str | None:
        return None

    def get_append_system_prompt(self) -> list[str]:
        return []


def summarizing(model: ScriptedModel, *responses: Any) -> ScriptedModel:
    """Queue ``responses`` for the agent's requests; summary requests (Pi's ``<conversation>`` prompt)
    are answered with a small structured summary without consuming them."""
    queue = list(responses)

    def answer(ctx: Any, opts: Any) -> dict[str, Any]:
        first = ctx.messages[0] if ctx.messages else {}
        content = first.get("content")
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
        if text.startswith("<conversation>"):
            return model.text(f"## Goal\nsummary #{len(model.requests)}")
        return queue.pop(0) if queue else model.error("test: no response left")

    model.enqueue(*([answer] * (len(responses) + 6)))
    return model


def make_session(
    tmp_path: Path, model: ScriptedModel, settings: dict[str, Any] | None = None, **kw: Any
) -> AgentSession:
    sm = SessionManager.in_memory(str(tmp_path))
    return AgentSession(
        sm,
        model,
        settings=SettingsManager.in_memory(settings or {}),
        resource_loader=kw.pop("loader", FakeLoader()),  # type: ignore[arg-type]
        agent_dir=str(tmp_path / "agent"),
        **kw,
    )


def events_of(session: AgentSession) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    session.subscribe(seen.append)
    return seen


def roles(session: AgentSession) -> list[str]:
    return [
        e["type"] if e["type"] != "message" else e["message"]["role"]
        for e in session.session_manager.get_entries()
    ]


def test_prompt_records_entries_and_starts_with_model_and_thinking(tmp_path: Path) -> None:
    m = ScriptedModel()
    m.enqueue(m.text("hello back", usage=m.usage(10, 3)))
    s = make_session(tmp_path, m)
    result = asyncio.run(s.prompt("hello"))
    assert roles(s) == ["model_change", "thinking_level_change", "user", "assistant"]
    assert result.text == "hello back" and result.usage["totalTokens"] == 13
    assert len(result.entry_ids) == 2
    assert "Current working directory:" in m.requests[0].context.system_prompt
    assert [t["name"] for t in m.requests[0].context.tools] == ["read", "bash", "edit", "write"]


def test_tool_round_trip_with_the_real_read_tool(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a\nb\n")
    m = ScriptedModel()
    m.enqueue(m.tool_call("read", {"path": "notes.txt"}, id="r1"), m.text("done"))
    s = make_session(tmp_path, m)
    asyncio.run(s.prompt("read it"))
    tool_result = [
        e
        for e in s.session_manager.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ][0]
    assert tool_result["message"]["content"] == [{"type": "text", "text": "a\nb\n"}]


def test_threshold_compaction_after_a_run(tmp_path: Path) -> None:
    m = ScriptedModel(context_window=1000)
    settings = {"compaction": {"reserveTokens": 200, "keepRecentTokens": 10}}
    m.enqueue(m.text("first answer " * 20, usage=m.usage(100, 10)))
    s = make_session(tmp_path, m, settings)
    asyncio.run(s.prompt("first question " * 20))
    m.enqueue(m.text("second answer", usage=m.usage(850, 10)), m.text("## Goal\nsummary text"))
    seen = events_of(s)
    result = asyncio.run(s.prompt("second question"))
    kinds = [e["type"] for e in seen]
    assert "compaction_start" in kinds and "compaction_end" in kinds
    end = next(e for e in seen if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["willRetry"] is False and not end["aborted"]
    comp = [e for e in s.session_manager.get_entries() if e["type"] == "compaction"][0]
    assert "## Goal\nsummary text" in comp["summary"]  # a split turn: "No prior history." + turn context
    assert s.session_manager.get_entry(comp["firstKeptEntryId"]) is not None
    assert s.messages[0]["role"] == "compactionSummary"
    assert result.compactions and result.compactions[0]["reason"] == "threshold"
    # the summary request had no tools and Pi's prompt structure
    summary_request = m.requests[-1]
    assert summary_request.context.tools in (None, []) and summary_request.context.messages[0]["content"][0][
        "text"
    ].startswith("<conversation>")


def test_overflow_is_compacted_and_retried_exactly_once(tmp_path: Path) -> None:
    m = ScriptedModel(context_window=100_000)
    summarizing(
        m,
        m.text("ok", usage=m.usage(100, 5)),
        m.error("prompt is too long: 210000 tokens > 200000 maximum"),
        m.text("completed response", usage=m.usage(50, 5)),
    )
    s = make_session(tmp_path, m, {"compaction": {"keepRecentTokens": 1}})
    asyncio.run(s.prompt("warm up " * 50))
    seen = events_of(s)
    result = asyncio.run(s.prompt("big request"))
    end = next(e for e in seen if e["type"] == "compaction_end")
    assert (end["reason"], end["willRetry"], end["aborted"]) == ("overflow", True, False)
    assert result.text == "completed response"
    # the failed assistant stays in the file but not in the retried context
    assert any(
        e["type"] == "message" and e["message"].get("stopReason") == "error"
        for e in s.session_manager.get_entries()
    )
    assert all(msg.get("stopReason") != "error" for msg in s.messages)


def test_second_overflow_reports_the_recovery_failure(tmp_path: Path) -> None:
    m = ScriptedModel()
    err = m.error("prompt is too long: 1 tokens > 0 maximum")
    summarizing(m, m.text("ok", usage=m.usage(100, 5)), err, dict(err))
    s = make_session(tmp_path, m, {"compaction": {"keepRecentTokens": 1}})
    asyncio.run(s.prompt("warm up " * 50))
    seen = events_of(s)
    asyncio.run(s.prompt("big"))
    ends = [e for e in seen if e["type"] == "compaction_end"]
    assert len(ends) == 2 and ends[1]["errorMessage"] == OVERFLOW_RECOVERY_FAILED
    assert len([e for e in s.session_manager.get_entries() if e["type"] == "compaction"]) == 1


def test_recoverable_length_stop_retry_then_truncated_failure(tmp_path: Path) -> None:
    m = ScriptedModel(max_tokens=1000)
    summarizing(
        m,
        m.text("ok", usage=m.usage(100, 5)),
        m.text("cut", usage=m.usage(100, 16), stop_reason="length"),
        m.text("cut again", usage=m.usage(100, 16), stop_reason="length"),
    )
    s = make_session(tmp_path, m, {"compaction": {"keepRecentTokens": 1}})
    asyncio.run(s.prompt("warm up " * 50))
    seen = events_of(s)
    asyncio.run(s.prompt("go"))
    ends = [e for e in seen if e["type"] == "compaction_end"]
    assert ends[0]["willRetry"] is True
    assert ends[-1]["errorMessage"] == TRUNCATED_RECOVERY_FAILED


def test_length_stop_reaching_max_tokens_does_not_compact(tmp_path: Path) -> None:
    m = ScriptedModel(max_tokens=16)
    m.enqueue(
        m.text("ok", usage=m.usage(100, 5)), m.text("cut", usage=m.usage(100, 16), stop_reason="length")
    )
    s = make_session(tmp_path, m)
    asyncio.run(s.prompt("a"))
    seen = events_of(s)
    asyncio.run(s.prompt("b"))
    assert not [e for e in seen if e["type"].startswith("compaction")]


def test_stale_pre_compaction_usage_is_ignored_before_the_next_prompt(tmp_path: Path) -> None:
    m = ScriptedModel(context_window=1000)
    settings = {"compaction": {"reserveTokens": 200, "keepRecentTokens": 10}}
    m.enqueue(m.text("a " * 50, usage=m.usage(900, 10)), m.text("## Goal\nsum"))
    s = make_session(tmp_path, m, settings)
    asyncio.run(s.prompt("question " * 30))
    assert len([e for e in s.session_manager.get_entries() if e["type"] == "compaction"]) == 1
    m.enqueue(m.text("fine", usage=m.usage(100, 5)))
    seen = events_of(s)
    asyncio.run(s.prompt("next"))
    assert not [e for e in seen if e["type"] == "compaction_start"]
    assert len(m.requests) == 3


def test_between_turns_compaction_checkpoint(tmp_path: Path) -> None:
    # Pi never cuts at a tool result, so the checkpoint fires once a later tool batch leaves a cut point
    (tmp_path / "big.txt").write_text("line of text\n" * 300)
    m = ScriptedModel(context_window=1000)
    settings = {"compaction": {"reserveTokens": 200, "keepRecentTokens": 50}}
    s = make_session(tmp_path, m, settings)
    summarizing(
        m,
        m.text("hi", usage=m.usage(20, 2)),
        m.tool_call("read", {"path": "big.txt"}, id="r1", usage=m.usage(100, 5)),
        m.tool_call("bash", {"command": "echo x"}, id="b1", usage=m.usage(1200, 5)),
        m.text("done", usage=m.usage(100, 5)),
    )
    asyncio.run(s.prompt("start " * 40))
    seen = events_of(s)
    asyncio.run(s.prompt("read big.txt"))
    starts = [e for e in seen if e["type"] == "compaction_start"]
    assert [e["reason"] for e in starts] == ["threshold"]
    ends = [e for e in seen if e["type"] == "compaction_end"]
    assert ends[0]["result"] is not None
    # the request after the second tool batch begins with the summary; the run then finished normally
    final_request = m.requests[-1]
    assert final_request.context.messages[0]["content"][0]["text"].startswith(
        "The conversation history before this point was compacted"
    )
    assert s.messages[-1]["content"][0]["text"] == "done"


def test_manual_compact_with_instructions_and_hooks(tmp_path: Path) -> None:
    m = ScriptedModel()
    hooks = SessionHooks()
    seen_events: list[str] = []
    hooks.on("session_before_compact", lambda e: seen_events.append(e.reason))
    hooks.on("session_compact", lambda e: seen_events.append("after:" + e.reason))
    s = make_session(tmp_path, m, {"compaction": {"keepRecentTokens": 1}}, hooks=hooks)
    summarizing(m, *[m.text(f"answer {i} " * 20, usage=m.usage(50, 5)) for i in range(3)])
    for i in range(3):
        asyncio.run(s.prompt(f"question {i} " * 20))
    outcome = asyncio.run(s.compact("focus on answers"))
    assert outcome.compacted and seen_events == ["manual", "after:manual"]
    prompts = [r.context.messages[0]["content"][0]["text"] for r in m.requests if r.context.messages]
    assert any("Additional focus: focus on answers" in p for p in prompts)


def test_navigate_tree_with_and_without_summary(tmp_path: Path) -> None:
    m = ScriptedModel()
    s = make_session(tmp_path, m)
    m.enqueue(m.text("A1"), m.text("B1"))
    asyncio.run(s.prompt("branch A"))
    a_leaf = s.session_manager.get_leaf_id()
    user_a = [
        e
        for e in s.session_manager.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "user"
    ][0]
    res = asyncio.run(s.navigate_tree(user_a["id"]))
    assert res.editor_text == "branch A"
    asyncio.run(s.prompt("branch B"))
    b_leaf = s.session_manager.get_leaf_id()
    m.enqueue(m.text("## Goal\nexplored B"))
    seen = events_of(s)
    res2 = asyncio.run(s.navigate_tree(a_leaf, summarize=True))
    entry = res2.summary_entry
    assert entry is not None and entry["fromId"] == b_leaf and entry["parentId"] == a_leaf
    assert s.messages[-1]["role"] == "branchSummary"
    assert any(e["type"] == "session_tree" for e in seen)


def test_context_and_before_agent_start_hooks(tmp_path: Path) -> None:
    m = ScriptedModel()
    m.enqueue(m.text("ok"))
    hooks = SessionHooks()
    hooks.on("context", lambda e: {"messages": e["messages"][-1:]})
    hooks.on(
        "before_agent_start",
        lambda e: {
            "systemPrompt": "REPLACED",
            "messages": [{"customType": "note", "content": "extra", "display": False}],
        },
    )
    s = make_session(tmp_path, m, hooks=hooks)
    asyncio.run(s.prompt("hi"))
    req = m.requests[0]
    assert req.context.system_prompt == "REPLACED"
    assert [msg["role"] for msg in req.context.messages] == [
        "user"
    ]  # the context hook kept only the custom message -> converted
    assert req.context.messages[0]["content"] == [{"type": "text", "text": "extra"}]
    assert "custom_message" in roles(s)
    assert s.system_prompt != "REPLACED"


def test_skill_expansion_before_sending(tmp_path: Path) -> None:
    from pi_nb.resources.skills import Skill, create_synthetic_source_info

    skill_file = tmp_path / "skills" / "test" / "SKILL.md"
    skill_file.parent.mkdir(parents=True)
    skill_file.write_text("---\nname: test\ndescription: A test skill\n---\nDo the test thing.\n")
    skill = Skill(
        name="test",
        description="A test skill",
        file_path=str(skill_file),
        base_dir=str(skill_file.parent),
        source_info=create_synthetic_source_info(str(skill_file), source="test"),
        disable_model_invocation=False,
    )
    m = ScriptedModel()
    m.enqueue(m.text("ok"))
    s = make_session(tmp_path, m, loader=FakeLoader([skill]))
    asyncio.run(s.prompt("/skill:test explain this"))
    text = m.requests[0].context.messages[0]["content"][0]["text"]
    assert (
        text.startswith(f'<skill name="test" location="{skill_file}">')
        and "Do the test thing." in text
        and text.endswith("explain this")
    )
    assert "<available_skills>" in m.requests[0].context.system_prompt


def test_prompt_while_streaming_needs_a_behaviour(tmp_path: Path) -> None:
    m = ScriptedModel(delay=0.05)
    m.enqueue(m.text("slow answer"), m.text("follow up answer"))
    s = make_session(tmp_path, m)

    async def run() -> None:
        task = asyncio.create_task(s.prompt("first"))
        await asyncio.sleep(0.01)
        from pi_nb.errors import AgentError

        with pytest.raises(AgentError, match="already processing"):
            await s.prompt("second")
        await s.prompt("second", streaming_behavior="follow_up")
        await task

    asyncio.run(run())
    assert [msg["role"] for msg in s.messages] == ["user", "assistant", "user", "assistant"]


def test_compaction_reasons_reach_both_hooks(tmp_path: Path) -> None:
    """Regression 5217: (reason, willRetry) on session_before_compact and session_compact."""
    seen: list[tuple[str, str, bool]] = []
    hooks = SessionHooks()
    hooks.on("session_before_compact", lambda e: seen.append(("before", e.reason, e.will_retry)))
    hooks.on("session_compact", lambda e: seen.append(("after", e.reason, e.will_retry)))
    m = ScriptedModel(context_window=1000)
    summarizing(
        m,
        m.text("a " * 40, usage=m.usage(100, 5)),
        m.text("b", usage=m.usage(900, 5)),  # crosses 1000 - 200 after the run: threshold
        m.error("prompt is too long: 2000 tokens > 1000 maximum"),  # overflow: retried
        m.text("recovered", usage=m.usage(100, 5)),
    )
    s = make_session(tmp_path, m, {"compaction": {"reserveTokens": 200, "keepRecentTokens": 1}}, hooks=hooks)
    asyncio.run(s.prompt("first " * 40))
    asyncio.run(s.prompt("second " * 40))
    asyncio.run(s.prompt("third " * 40))
    asyncio.run(s.compact())
    pairs = [(reason, retry) for kind, reason, retry in seen if kind == "before"]
    assert pairs == [("threshold", False), ("overflow", True), ("manual", False)]
    assert [(r, w) for k, r, w in seen if k == "after"] == pairs


def test_stored_length_stop_compacts_before_the_next_prompt_without_continuing(tmp_path: Path) -> None:
    """Regression pre-prompt-compaction-no-continue: overflow compaction (willRetry) before the prompt,
    no agent.continue(), exactly one provider call for the prompt."""
    m = ScriptedModel(max_tokens=1000)
    s = make_session(tmp_path, m, {"compaction": {"keepRecentTokens": 1}})
    summarizing(
        m, m.text("x " * 30, usage=m.usage(100, 5)), m.text("answer to the new prompt", usage=m.usage(50, 5))
    )
    asyncio.run(s.prompt("first " * 30))
    # a truncated answer recorded without a post-run check (e.g. the kernel stopped): append it directly
    truncated = m.text("cut", usage=m.usage(100, 16), stop_reason="length")
    s.session_manager.append_message(truncated)
    s.agent.state.messages.append(truncated)
    seen = events_of(s)
    before = len(m.requests)
    result = asyncio.run(s.prompt("new prompt"))
    end = next(e for e in seen if e["type"] == "compaction_end")
    assert (end["reason"], end["willRetry"]) == ("overflow", True)
    main_calls = [
        r
        for r in m.requests[before:]
        if not r.context.messages[0]["content"][0]["text"].startswith("<conversation>")
    ]
    assert len(main_calls) == 1
    assert result.text == "answer to the new prompt"


def test_threshold_compaction_continues_only_for_queued_messages(tmp_path: Path) -> None:
    """A threshold compaction after a run continues the agent only when messages are queued."""
    m = ScriptedModel(context_window=1000, delay=0.02)
    summarizing(
        m, m.text("a " * 40, usage=m.usage(900, 5)), m.text("follow-up answer", usage=m.usage(100, 5))
    )
    s = make_session(tmp_path, m, {"compaction": {"reserveTokens": 200, "keepRecentTokens": 1}})

    async def run() -> None:
        task = asyncio.create_task(s.prompt("question " * 40))
        await asyncio.sleep(0.005)
        await s.prompt("queued follow-up", streaming_behavior="follow_up")
        await task

    asyncio.run(run())
    texts = [msg["content"][0]["text"] for msg in s.messages if msg["role"] == "assistant"]
    assert texts[-1] == "follow-up answer"
    assert any(e["type"] == "compaction" for e in s.session_manager.get_entries())


def test_manual_compact_during_a_response_runs_only_the_manual_compaction(tmp_path: Path) -> None:
    """Regression 7253: compact() aborts the running turn; exactly one (manual) compaction runs."""
    m = ScriptedModel(delay=0.05)
    s = make_session(tmp_path, m, {"compaction": {"keepRecentTokens": 1}})
    summarizing(m, m.text("one " * 30, usage=m.usage(50, 5)), m.text("slow answer", usage=m.usage(50, 5)))
    asyncio.run(s.prompt("first " * 30))
    reasons: list[str] = []
    s.subscribe(lambda e: reasons.append(e["reason"]) if e["type"] == "compaction_start" else None)

    async def run() -> None:
        task = asyncio.create_task(s.prompt("second"))
        await asyncio.sleep(0.01)
        await s.compact()
        await task

    asyncio.run(run())
    assert reasons == ["manual"]
    assert [e["type"] for e in s.session_manager.get_entries()].count("compaction") == 1


def test_project_trust_resolution_through_hooks_and_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec §3 in the session: untrusted without a way to ask; a project_trust hook or an answer trusts."""
    agent_dir = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text('{"compaction": {"reserveTokens": 1234}}')

    def session(**kw: Any) -> AgentSession:
        return AgentSession(
            SessionManager.in_memory(str(project)), ScriptedModel(), agent_dir=str(agent_dir), **kw
        )

    assert session().settings.get_compaction_settings().reserve_tokens == 16384  # untrusted: project ignored
    hooks = SessionHooks()
    seen: list[dict[str, Any]] = []
    hooks.on("project_trust", lambda e: seen.append(e) or {"trusted": "yes"})
    assert session(hooks=hooks).settings.get_compaction_settings().reserve_tokens == 1234
    assert seen and seen[0]["type"] == "project_trust" and seen[0]["cwd"].endswith("proj")
    asked: list[str] = []

    def ask(prompt: Any) -> str:
        asked.append(prompt.message)
        return "Trust"

    assert session(ask=ask).settings.get_compaction_settings().reserve_tokens == 1234
    assert asked[0].startswith("Trust project folder?")
    assert session().settings.get_compaction_settings().reserve_tokens == 1234  # the answer was saved
