"""pi_nb.export.inspect: sessions written as Inspect AI eval logs and read back with Inspect's own
readers (inspect_ai.log.read_eval_log, inspect_ai.analysis.samples_df / messages_df)."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from pi_nb.errors import InvalidValueError, MissingDependencyError, NotebookError
from pi_nb.export import to_eval_log, write_inspect_log
from pi_nb.messages import COMPACTION_SUMMARY_PREFIX
from pi_nb.session.manager import SessionManager

ROOT = Path(__file__).resolve().parents[1]
REAL_PI = ROOT / "notebooks" / "data" / "real-pi"
PUBLIC_PI = ROOT / "tests" / "fixtures" / "public_pi"

needs_inspect = pytest.mark.skipif(
    find_spec("inspect_ai") is None,
    reason="inspect_ai is not installed (pip install 'pi_nb[inspect]'; the dev extra includes it)",
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def usage(
    inp: int, out: int, read: int = 0, write: int = 0, cost: float = 0.0, **extra: int
) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": read,
        "cacheWrite": write,
        **extra,
        "totalTokens": inp + out + read + write,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": cost},
    }


def assistant(
    content: list[Any],
    u: dict[str, Any],
    *,
    stop: str = "stop",
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
    ts: int = 1_767_225_600_000,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": u,
        "stopReason": stop,
        **extra,
        "timestamp": ts,
    }


def build_session() -> SessionManager:
    """A session with every shape the export maps: images, thinking, tool calls, a failed tool,
    a provider error, a model change, a bash command, a custom message and a compaction."""
    sm = SessionManager.in_memory("/tmp/proj")
    sm.append_model_change("anthropic", "claude-sonnet-4-5")
    sm.append_thinking_level_change("high")
    u1 = sm.append_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is in this picture?"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ],
            "timestamp": 1_767_225_600_000,
        }
    )
    sm.append_message(
        assistant(
            [
                {
                    "type": "thinking",
                    "thinking": "a tiny PNG; read the file too",
                    "thinkingSignature": "sig-1",
                },
                {"type": "thinking", "thinking": "", "redacted": True},
                {"type": "text", "text": "Let me look."},
                {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.txt"}},
                {"type": "toolCall", "id": "call_b", "name": "bash", "arguments": {"command": "false"}},
            ],
            usage(100, 20, read=1000, write=50, cost=0.01, reasoning=7),
            stop="toolUse",
        )
    )
    sm.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_a",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ],
            "isError": False,
            "timestamp": 1_767_225_601_000,
        }
    )
    sm.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_b",
            "toolName": "bash",
            "content": [{"type": "text", "text": "(no output)\n\nCommand exited with code 1"}],
            "isError": True,
            "timestamp": 1_767_225_602_000,
        }
    )
    sm.append_message(
        assistant([], usage(0, 0), stop="error", errorMessage="529 overloaded", ts=1_767_225_603_000)
    )
    sm.append_model_change("openai", "gpt-5")
    kept = sm.append_message({"role": "user", "content": "try again", "timestamp": 1_767_225_604_000})
    sm.append_message(
        assistant(
            [{"type": "text", "text": "It is one pixel."}],
            usage(300, 10, cost=0.02),
            provider="openai",
            model="gpt-5",
            ts=1_767_225_605_000,
        )
    )
    sm.append_message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a.txt",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1_767_225_606_000,
        }
    )
    sm.append_message(
        {
            "role": "bashExecution",
            "command": "secret",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1_767_225_606_500,
            "excludeFromContext": True,
        }
    )
    sm.append_compaction(
        "The user asked about a picture; it is one pixel.", kept, 4242, usage=usage(500, 40, cost=0.005)
    )
    sm.append_custom_message_entry("note", "remember the pixel", True)
    sm.append_message({"role": "user", "content": "thanks", "timestamp": 1_767_225_607_000})
    sm.append_message(
        assistant(
            [{"type": "text", "text": "You're welcome."}],
            usage(200, 5, read=100, cost=0.003),
            provider="openai",
            model="gpt-5",
            ts=1_767_225_608_000,
        )
    )
    assert u1
    return sm


def read_back(path: str) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(path, resolve_attachments=True)


def texts(message: Any) -> list[str]:
    from inspect_ai.model import ContentText

    if isinstance(message.content, str):
        return [message.content] if message.content else []
    return [c.text for c in message.content if isinstance(c, ContentText)]


def branch_llm_roles(sm: SessionManager) -> list[str]:
    """The roles of the LLM messages on the branch, read off the entries by hand (not with the
    export's own code): compactions and settings contribute none, ``!!`` commands none."""
    roles = []
    for entry in sm.get_branch():
        if entry["type"] == "message":
            m = entry["message"]
            if m["role"] in ("user", "assistant"):
                roles.append(m["role"])
            elif m["role"] == "toolResult":
                roles.append("tool")
            elif m["role"] == "bashExecution" and not m.get("excludeFromContext"):
                roles.append("user")
            elif m["role"] in ("custom", "branchSummary", "compactionSummary"):
                roles.append("user")
        elif entry["type"] == "custom_message" or (
            entry["type"] == "branch_summary" and entry.get("summary")
        ):
            roles.append("user")
    return roles


def session_usage(sm: SessionManager) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for entry in sm.get_branch():
        m = entry.get("message") if entry["type"] == "message" else None
        if m and m["role"] == "assistant":
            u = m["usage"]
            got = out.setdefault(
                f"{m['provider']}/{m['model']}",
                dict.fromkeys(("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"), 0.0),
            )
            for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
                got[k] += u[k]
            got["cost"] += u["cost"]["total"]
    return out


def assert_usage_equal(model_usage: dict[str, Any], expected: dict[str, dict[str, float]]) -> None:
    assert set(model_usage) == set(expected)
    for name, want in expected.items():
        got = model_usage[name]
        assert got.input_tokens == want["input"]
        assert got.output_tokens == want["output"]
        assert got.input_tokens_cache_read == want["cacheRead"]
        assert got.input_tokens_cache_write == want["cacheWrite"]
        assert got.total_tokens == want["totalTokens"]
        assert math.isclose(got.total_cost or 0.0, want["cost"], rel_tol=1e-9, abs_tol=1e-12)


# ---------------------------------------------------------------------------------------------


def test_without_inspect_ai_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai -> ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'pi_nb\[inspect\]'"):
        to_eval_log(build_session())
    with pytest.raises(MissingDependencyError, match=r"pi_nb\[inspect\]"):
        write_inspect_log(build_session(), "/tmp/never-written.eval")
    assert not Path("/tmp/never-written.eval").exists()


def test_importing_the_package_does_not_import_inspect_ai() -> None:
    import subprocess

    code = "import sys, pi_nb.export; print('inspect_ai' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "False"


@needs_inspect
@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_an_in_memory_session_round_trips_through_inspect(tmp_path: Path, fmt: str) -> None:
    from inspect_ai.event import CompactionEvent, InfoEvent, ModelEvent, ToolEvent
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        ContentImage,
        ContentReasoning,
    )

    sm = build_session()
    name = f"2026-01-01T00-00-00_pixel_run.{fmt}"  # an Inspect-style name: no warning for .json
    path = write_inspect_log(sm, tmp_path / name, task="pixel", system_prompt="You are Pi.")
    assert path == str(tmp_path / name)
    log = read_back(path)
    assert log.status == "success"
    assert log.eval.task == "pixel"
    assert log.eval.model == "openai/gpt-5"  # the last assistant's provider/model
    assert log.eval.created.startswith(sm.get_header()["timestamp"][:19])
    assert len(log.samples) == 1
    s = log.samples[0]
    assert s.id == sm.get_session_id()

    # messages: the whole branch as the LLM saw it, the system prompt first
    roles = [m.role for m in s.messages]
    assert roles == ["system", *branch_llm_roles(sm)]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
        "user",
        "user",
        "user",
        "assistant",
    ]
    system, user, a1, t1, t2, a_err, u2, a2, bash, custom, u3, a3 = s.messages
    assert isinstance(system, ChatMessageSystem) and system.content == "You are Pi."
    assert isinstance(user, ChatMessageUser)
    assert texts(user) == ["what is in this picture?"]
    images = [c for c in user.content if isinstance(c, ContentImage)]
    assert [i.image for i in images] == [f"data:image/png;base64,{PNG}"]

    assert isinstance(a1, ChatMessageAssistant)
    reasoning = [c for c in a1.content if isinstance(c, ContentReasoning)]
    assert [(r.reasoning, r.signature, r.redacted) for r in reasoning] == [
        ("a tiny PNG; read the file too", "sig-1", False),
        ("", None, True),
    ]
    assert texts(a1) == ["Let me look."]
    assert [(c.id, c.function, c.arguments) for c in a1.tool_calls] == [
        ("call_a", "read", {"path": "a.txt"}),
        ("call_b", "bash", {"command": "false"}),
    ]
    assert a1.model == "claude-sonnet-4-5"
    assert a1.metadata["provider"] == "anthropic" and a1.metadata["stopReason"] == "toolUse"

    assert isinstance(t1, ChatMessageTool) and isinstance(t2, ChatMessageTool)
    assert (t1.tool_call_id, t1.function, t1.error) == ("call_a", "read", None)
    assert texts(t1) == ["hello"] and any(isinstance(c, ContentImage) for c in t1.content)
    assert (t2.tool_call_id, t2.function) == ("call_b", "bash")
    assert t2.error is not None and t2.error.message == "(no output)\n\nCommand exited with code 1"

    assert isinstance(a_err, ChatMessageAssistant)
    assert a_err.metadata["errorMessage"] == "529 overloaded" and a_err.metadata["stopReason"] == "error"
    assert texts(u2) == ["try again"] and texts(a2) == ["It is one pixel."]
    assert texts(bash) == ["Ran `ls`\n```\na.txt\n```"]  # Pi's bashExecution text; the !! one is left out
    assert bash.metadata["pi_role"] == "bashExecution"
    assert texts(custom) == ["remember the pixel"] and custom.metadata["pi_role"] == "custom"
    assert texts(u3) == ["thanks"] and texts(a3) == ["You're welcome."]
    # each message carries its entry
    ids = {e["id"] for e in sm.get_branch()}
    assert all(m.id in ids for m in s.messages[1:])

    # usage: per model, the session's numbers
    assert_usage_equal(s.model_usage, session_usage(sm))
    assert s.model_usage["anthropic/claude-sonnet-4-5"].reasoning_tokens == 7
    assert_usage_equal(log.stats.model_usage, session_usage(sm))

    # metadata and times
    md = s.metadata
    assert md["session_id"] == sm.get_session_id() and md["cwd"] == "/tmp/proj"
    assert md["session_file"] is None and md["leaf_id"] == sm.get_leaf_id()
    assert md["compactions"] == 1
    (comp,) = md["compaction_summaries"]
    assert comp["summary"] == "The user asked about a picture; it is one pixel."
    assert comp["tokensBefore"] == 4242 and comp["usage"]["cost"]["total"] == 0.005
    assert s.started_at is not None and s.completed_at is not None
    assert s.total_time is not None and s.total_time >= 0

    # events: settings, model calls, tool calls, the compaction
    kinds = [type(e) for e in s.events]
    assert kinds.count(ModelEvent) == 4 and kinds.count(ToolEvent) == 2
    assert kinds.count(CompactionEvent) == 1 and kinds.count(InfoEvent) == 3
    comp_event = next(e for e in s.events if isinstance(e, CompactionEvent))
    assert comp_event.tokens_before == 4242 and comp_event.metadata["summary"] == comp["summary"]
    models = [e for e in s.events if isinstance(e, ModelEvent)]
    assert [e.model for e in models] == ["anthropic/claude-sonnet-4-5"] * 2 + ["openai/gpt-5"] * 2
    assert models[1].error == "529 overloaded"
    assert models[0].output.usage.input_tokens_cache_read == 1000
    assert [m.role for m in models[0].input] == ["system", "user"]
    # after the compaction the model saw its summary, then the kept messages on
    last_input = models[-1].input
    assert last_input[1].text.startswith(COMPACTION_SUMMARY_PREFIX)
    assert texts(last_input[2]) == ["try again"]
    tools = [e for e in s.events if isinstance(e, ToolEvent)]
    assert [(t.id, t.function, t.arguments) for t in tools] == [
        ("call_a", "read", {"path": "a.txt"}),
        ("call_b", "bash", {"command": "false"}),
    ]
    assert tools[0].error is None and tools[1].error is not None


@needs_inspect
def test_context_mode_gives_what_the_llm_sees_at_the_leaf() -> None:
    sm = build_session()
    s = to_eval_log(sm, messages="context").samples[0]
    contents = [m.text for m in s.messages]
    assert contents[0].startswith(COMPACTION_SUMMARY_PREFIX)
    assert "The user asked about a picture" in contents[0]
    assert contents[1:] == [
        "try again",
        "It is one pixel.",
        "Ran `ls`\n```\na.txt\n```",
        "remember the pixel",
        "thanks",
        "You're welcome.",
    ]
    # the usage stays the whole branch's
    assert_usage_equal(s.model_usage, session_usage(sm))


@needs_inspect
def test_without_model_events_only_compactions_and_settings_are_events() -> None:
    from inspect_ai.event import CompactionEvent, InfoEvent

    s = to_eval_log(build_session(), model_events=False).samples[0]
    assert {type(e) for e in s.events} == {CompactionEvent, InfoEvent}


@needs_inspect
def test_the_header_harness_and_version_reach_the_metadata() -> None:
    sm = build_session()
    entries = sm.get_file_entries()
    header = {**entries[0], "harness": {"name": "pi_nb", "version": "0.1.0"}}
    s = to_eval_log([header, *entries[1:]]).samples[0]
    assert s.metadata["harness"] == {"name": "pi_nb", "version": "0.1.0"}
    assert s.metadata["version"] == 3


@needs_inspect
@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_real_pi_sessions_one_sample_each(tmp_path: Path, fmt: str) -> None:
    files = sorted(str(f) for f in REAL_PI.glob("*.jsonl"))
    assert len(files) == 3
    path = write_inspect_log(REAL_PI, tmp_path, format=fmt)  # a directory: Inspect's own file name
    assert Path(path).parent == tmp_path and path.endswith(f".{fmt}")
    log = read_back(path)
    assert sorted(s.metadata["session_file"] for s in log.samples) == files
    total: dict[str, dict[str, float]] = {}
    for sample in log.samples:
        sm = SessionManager.in_memory_from_file(sample.metadata["session_file"])
        assert sample.id == sm.get_session_id()
        assert [m.role for m in sample.messages] == branch_llm_roles(sm)
        assert_usage_equal(sample.model_usage, session_usage(sm))
        # tool calls as Pi recorded them
        want_calls = [
            (b["id"], b["name"], b["arguments"])
            for e in sm.get_branch()
            if e["type"] == "message" and e["message"]["role"] == "assistant"
            for b in e["message"]["content"]
            if b["type"] == "toolCall"
        ]
        got_calls = [
            (c.id, c.function, c.arguments)
            for m in sample.messages
            if m.role == "assistant"
            for c in m.tool_calls or []
        ]
        assert got_calls == want_calls and got_calls
        compactions = [e for e in sm.get_branch() if e["type"] == "compaction"]
        assert sample.metadata["compactions"] == len(compactions)
        assert [c["summary"] for c in sample.metadata["compaction_summaries"]] == [
            c["summary"] for c in compactions
        ]
        for name, u in session_usage(sm).items():
            acc = total.setdefault(name, dict.fromkeys(u, 0.0))
            for k, v in u.items():
                acc[k] += v
    assert {s.metadata["session_name"] for s in log.samples} == {"branches", "compaction", "tools"}
    assert sum(s.metadata["compactions"] for s in log.samples) == 2
    assert_usage_equal(log.stats.model_usage, total)
    assert log.eval.model == "pi-nb-offline/offline"
    assert log.eval.dataset.samples == 3
    assert (log.results.total_samples, log.results.completed_samples) == (3, 3)  # Inspect View's counts


@needs_inspect
@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_inspect_analysis_frames_open_the_log(tmp_path: Path, fmt: str) -> None:
    from inspect_ai.analysis import messages_df, samples_df

    path = write_inspect_log(REAL_PI, tmp_path, format=fmt)
    log = to_eval_log(REAL_PI)
    for where in (path, str(tmp_path)):  # the file, and the directory Inspect lists
        samples = samples_df(where)
        assert len(samples) == 3
    by_id = samples.set_index("id")
    for s in log.samples:
        row = by_id.loc[s.id]
        want = sum(u.total_tokens for u in s.model_usage.values())
        assert row["total_tokens"] == want and want > 0
        assert json.loads(row["model_usage"])["pi-nb-offline/offline"]["input_tokens"] == (
            s.model_usage["pi-nb-offline/offline"].input_tokens
        )
        assert row["metadata_compactions"] == s.metadata["compactions"]
        assert row["metadata_session_id"] == s.metadata["session_id"]
        assert row["message_count"] == len(s.messages)
    # messages_df is Inspect's union of what the model calls saw and answered: the branch up to
    # the last answer, and the compaction summaries the later calls saw
    messages = messages_df(path)
    for s in log.samples:
        rows = messages[messages["sample_id"] == s.uuid]
        last = max(i for i, m in enumerate(s.messages) if m.role == "assistant")
        want_ids = {m.id for m in s.messages[: last + 1]} | {
            c["id"] for c in s.metadata["compaction_summaries"]
        }
        assert set(rows["message_id"]) == want_ids
        assert len(rows) == len(want_ids)
    assert set(messages["role"]) == {"user", "assistant", "tool"}
    calls = messages[messages["role"] == "tool"]
    assert set(calls["tool_call_function"]) >= {"read", "bash", "grep"}


@needs_inspect
def test_a_json_log_named_without_a_timestamp_is_written_with_a_warning(tmp_path: Path) -> None:
    from inspect_ai.analysis import samples_df

    with pytest.warns(UserWarning, match="starts with a timestamp"):
        path = write_inspect_log(build_session(), tmp_path / "plain.json")
    assert len(read_back(path).samples) == 1  # read_eval_log reads it; Inspect's listings skip it
    assert len(samples_df(path)) == 0


@needs_inspect
def test_a_real_public_pi_session_with_two_compactions(tmp_path: Path) -> None:
    src = tmp_path / "before-compaction.jsonl"
    with gzip.open(PUBLIC_PI / "before-compaction.jsonl.gz", "rb") as f, src.open("wb") as out:
        shutil.copyfileobj(f, out)
    sm = SessionManager.in_memory_from_file(str(src))
    path = write_inspect_log(src, tmp_path / "opus.eval", task="pi-mono")
    log = read_back(path)
    (s,) = log.samples
    assert s.metadata["compactions"] == 2
    assert [m.role for m in s.messages] == branch_llm_roles(sm)
    assert_usage_equal(s.model_usage, session_usage(sm))
    # the recorded bill of tests/fixtures/public_pi/README.md
    assert round(s.model_usage["anthropic/claude-opus-4-5"].total_cost, 2) == 42.60
    assert log.eval.model == "anthropic/claude-opus-4-5"


@needs_inspect
def test_several_sessions_and_duplicate_ids_get_unique_samples(tmp_path: Path) -> None:
    one = REAL_PI / "tools.jsonl"
    log = to_eval_log([one, str(one), build_session()])
    ids = [s.id for s in log.samples]
    assert len(set(ids)) == 3 and ids[1] == f"{ids[0]}-2"
    assert len({s.uuid for s in log.samples}) == 3
    assert log.eval.dataset.sample_ids == ids
    path = write_inspect_log([one, one], tmp_path / "dup.eval")
    assert len(read_back(path).samples) == 2


@needs_inspect
def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    sm = build_session()
    with pytest.raises(InvalidValueError, match="does not match"):
        write_inspect_log(sm, tmp_path / "x.json", format="eval")
    with pytest.raises(InvalidValueError, match="format"):
        write_inspect_log(sm, tmp_path / "x.log", format="xml")  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="messages"):
        to_eval_log(sm, messages="all")  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="task"):
        to_eval_log(sm, task="")
    with pytest.raises(NotebookError):
        to_eval_log(42)
    assert not any(tmp_path.iterdir())
    # another suffix: the .eval format, read back by format
    from inspect_ai.log import read_eval_log

    path = write_inspect_log(sm, tmp_path / "x.log")
    assert len(read_eval_log(path, format="eval").samples) == 1


@needs_inspect
def test_an_empty_session_is_an_empty_sample() -> None:
    sm = SessionManager.in_memory("/tmp/empty")
    log = to_eval_log(sm)
    (s,) = log.samples
    assert s.messages == [] and s.model_usage == {} and s.input == ""
    assert log.eval.model == "none"


@needs_inspect
def test_a_line_that_cannot_be_read_is_counted_and_strict_raises(tmp_path: Path) -> None:
    from pi_nb.errors import SessionFileCorruptError
    from pi_nb.session.source import SessionLoadWarning

    lines = (REAL_PI / "tools.jsonl").read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*lines[:5], "{not json", *lines[5:]]) + "\n", encoding="utf-8")
    with pytest.warns(SessionLoadWarning, match="line 6"):
        log = to_eval_log(tmp_path)
    (s,) = log.samples
    assert s.metadata["skipped_lines"] == 1
    sm = SessionManager.in_memory_from_file(str(REAL_PI / "tools.jsonl"))
    assert [m.role for m in s.messages] == branch_llm_roles(sm)
    assert_usage_equal(s.model_usage, session_usage(sm))
    with pytest.raises(SessionFileCorruptError):
        to_eval_log(broken, strict=True)
    assert to_eval_log(REAL_PI / "tools.jsonl").samples[0].metadata["skipped_lines"] == 0
