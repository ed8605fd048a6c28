"""The agent's boundaries hold against a hostile user (issue 13, the agent side).

* secrets are redacted by value in everything the agent records or shows (tool results, streamed
  updates, error texts, session entries, events), whatever path the key took;
* a turn always ends: automatic compactions per prompt are bounded, a compaction that frees no
  room ends the turn with an error saying what to do, a compaction that cannot run is reported;
* bad values (context windows, token limits, reserves, thinking levels) are refused where they enter;
* a session holding one huge entry is counted part by part, once;
* after a failed write (permission denied, disk full) the agent's history is what the file holds.

Faults are real: subprocesses with their own environment (``/proc/*/environ`` shows a process's
environment as it started), an effective uid that may not write the file, ``RLIMIT_FSIZE``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pi_nb import redaction, tokens
from pi_nb.agent import Agent, AgentSession, PromptResult
from pi_nb.compaction import CompactionSettings
from pi_nb.errors import InvalidValueError, PiNbError
from pi_nb.messages import convert_to_llm
from pi_nb.providers.base import Context, Model, StreamOptions, make_assistant_message
from pi_nb.providers.offline import PART_COUNT_CHARS, OfflineModel, PlannedAction
from pi_nb.resources.settings import SettingsManager
from pi_nb.session.manager import SessionManager
from pi_nb.tools.bash import sandbox_available

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-0123456789abcdefghijKLMNOP"  # a fake OpenAI key
CUSTOM_KEY = "zz-custom-key-9876543210-qwerty"  # kept under a variable no name rule catches
ANTHROPIC = "ant-fake-key-5555666677778888"


def _settings(compaction: dict[str, Any] | None = None) -> SettingsManager:
    return SettingsManager.in_memory({"compaction": compaction} if compaction is not None else {})


def _session(
    tmp_path: Path, model: Model, compaction: dict[str, Any] | None = None, cwd: Path | None = None
) -> AgentSession:
    project = cwd or tmp_path / "proj"
    project.mkdir(exist_ok=True)
    sm = SessionManager.create(str(project), str(tmp_path / "sessions"))
    return AgentSession(
        sm, model, settings=_settings(compaction), agent_dir=str(tmp_path / "agent"), project_trusted=True
    )


# --------------------------------------------------------------------------------------------
# secrets

_SECRET_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pi_nb.agent import AgentSession
    from pi_nb.providers.offline import OfflineModel
    from pi_nb.providers.openai_compat import OpenAICompatModel
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.session.manager import SessionManager

    cwd, sessions, agent_dir, out = sys.argv[1:5]
    sm = SessionManager.create(cwd, sessions)
    s = AgentSession(sm, OfflineModel(chunk_delay=0), settings=SettingsManager.in_memory({}),
                     agent_dir=agent_dir, project_trusted=True)
    # a remote model with its key under a custom variable is chosen: its variable is a secret now
    remote = OpenAICompatModel("gpt-x", api_key_env="MY_LLM_KEYVAR", base_url="http://127.0.0.1:9/v1")
    s.set_model(remote)
    s.set_model(OfflineModel())
    events = []
    s.subscribe(events.append)
    prompts = [
        "read /proc/self/environ",
        # bash's $PPID is pi_nb's supervisor; its parent is the kernel's own process
        "run `cat /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/environ`",
        "run `env`",
        "run `echo \\"prefix-$(cat half1)$(cat half2)-suffix in a longer line\\"`",
        "run `cat half1; sleep 0.4; cat half2; echo`",
        "run `cat /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/environ; exit 3`",
        "the key is sk-test-0123456789abcdefghijKLMNOP, remember it",
    ]
    results = []
    for p in prompts:
        r = asyncio.run(s.prompt(p))
        results.append({"messages": r.messages, "status": r.status, "error": r.error})
    with open(out, "w") as f:
        json.dump({"events": events, "results": results, "file": sm.get_session_file()}, f, default=repr)
    """
)


def test_keys_never_reach_results_updates_or_the_session_file(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "half1").write_text(KEY[:14])
    (project / "half2").write_text(KEY[14:])
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_API_KEY": ANTHROPIC,
        "MY_LLM_KEYVAR": CUSTOM_KEY,
        "DEBUG_LEVEL": "1",  # short values are not secrets
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _SECRET_SCRIPT,
            str(project),
            str(tmp_path / "s"),
            str(tmp_path / "a"),
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    session_bytes = Path(data["file"]).read_bytes()
    everything = out.read_bytes() + session_bytes
    for secret in (KEY, CUSTOM_KEY, ANTHROPIC):
        assert secret.encode() not in everything
    # nor the first half of a key split across two chunks of the bash stream (held back, not shown)
    updates = [e for e in data["events"] if e["type"] == "tool_execution_update"]
    assert updates and not any(KEY[:14] in json.dumps(u, default=repr) for u in updates)

    texts = [
        "".join(b.get("text", "") for b in m["content"] if isinstance(b, dict))
        for r in data["results"]
        for m in r["messages"]
        if m["role"] == "toolResult"
    ]
    read_env, ppid_env, plain_env, echoed, split, failed = texts
    # the read tool runs in the kernel's process: its environment, redacted
    assert "[redacted: OPENAI_API_KEY]" in read_env and "[redacted: ANTHROPIC_API_KEY]" in read_env
    if sandbox_available():
        # a sandboxed command cannot see the kernel's process at all
        for text in (ppid_env, failed):
            assert "/environ: No such file or directory" in text and "redacted" not in text
    else:
        for text in (ppid_env, failed):
            assert "[redacted: OPENAI_API_KEY]" in text and "[redacted: ANTHROPIC_API_KEY]" in text
    assert "exited with code 3" in failed
    assert "MY_LLM_KEYVAR=[redacted: MY_LLM_KEYVAR]" in plain_env
    assert "DEBUG_LEVEL=1" in plain_env  # a short value is left alone
    assert "prefix-[redacted: OPENAI_API_KEY]-suffix in a longer line" in echoed
    assert split.startswith("[redacted: OPENAI_API_KEY]")
    assert data["results"][-1]["messages"][0]["content"][0]["text"] == (
        "the key is [redacted: OPENAI_API_KEY], remember it"
    )
    assert b"[redacted: OPENAI_API_KEY]" in session_bytes


class _LeakyModel(Model):
    """A provider whose failure text repeats the key (a proxy's 401 that echoes it)."""

    api = "leaky"

    def __init__(self) -> None:
        super().__init__(id="leaky", provider="test", context_window=10_000, max_tokens=1000)

    async def stream(self, context: Context, options: StreamOptions | None = None) -> Any:
        if False:  # pragma: no cover - makes this an async generator
            yield {}
        raise RuntimeError(f"401 Unauthorized: invalid key {os.environ['OPENAI_API_KEY']}")


def test_error_text_with_the_key_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    s = _session(tmp_path, _LeakyModel(), {"reserveTokens": 1000})
    events: list[dict[str, Any]] = []
    s.subscribe(events.append)
    result = asyncio.run(s.prompt("hello"))
    assert result.status == "error" and result.error is not None
    assert KEY not in result.error and "[redacted: OPENAI_API_KEY]" in result.error
    assert KEY not in json.dumps(events, default=repr)
    assert KEY.encode() not in Path(s.session_file or "").read_bytes()


def test_a_model_key_variable_is_registered_when_the_model_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_ODD_NAME", CUSTOM_KEY)
    assert redaction.redact(CUSTOM_KEY) == CUSTOM_KEY  # no name rule catches it

    class Keyed(OfflineModel):
        api_key_env = "SOME_ODD_NAME"

    redaction.register_model_secrets(Keyed())
    assert redaction.redact(f"x {CUSTOM_KEY} y") == "x [redacted: SOME_ODD_NAME] y"


def test_stream_redactor_over_bytes_keeps_non_utf8_output() -> None:
    chunks: list[bytes] = []

    class Inner:
        async def exec(self, command: str, cwd: str, *, on_data: Any, **kwargs: Any) -> int:
            for piece in (b"\xff\xfe ok ", KEY[:5].encode(), KEY[5:].encode() + b" \xc3", b"\xa9 end"):
                on_data(piece)
            return 0

    table = {KEY: "K"}
    original = redaction.known_secrets
    try:
        redaction.known_secrets = lambda environ=None: dict(table)  # type: ignore[assignment]
        ops = redaction.RedactingBashOperations(Inner())
        asyncio.run(ops.exec("x", ".", on_data=chunks.append))
    finally:
        redaction.known_secrets = original  # type: ignore[assignment]
    assert b"".join(chunks) == b"\xff\xfe ok [redacted: K] \xc3\xa9 end"


# --------------------------------------------------------------------------------------------
# a turn always ends

SMALL = {"reserveTokens": 1000, "keepRecentTokens": 500}


def _bounded(s: AgentSession, limit: int = 12) -> list[dict[str, Any]]:
    """Collect events; abort the session if it compacts more than ``limit`` times (the old runaway)."""
    events: list[dict[str, Any]] = []

    def listen(event: dict[str, Any]) -> None:
        events.append(event)
        if sum(e["type"] == "compaction_end" for e in events) > limit:
            s.abort()
            raise AssertionError("runaway compaction")

    s.subscribe(listen)
    return events


@pytest.mark.parametrize("prompt", ["read big.txt", "run `seq 3000`"])
def test_the_issue_scenario_ends_in_bounded_steps(tmp_path: Path, prompt: str) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(1, 3001)))
    s = _session(tmp_path, OfflineModel(context_window=6000, max_tokens=1000), SMALL, project)
    events = _bounded(s)
    result = asyncio.run(s.prompt(prompt))
    assert 1 <= len(result.compactions) <= 3
    assert result.status == "ok", result.error
    # the offline model does not re-run the call the summary records as too big, and says why
    assert result.text.startswith("I did not run") and "does not fit" in result.text
    assert "offset and limit" in result.text and "bigger context window" in result.text
    summary = next(e for e in s.session_manager.get_entries() if e["type"] == "compaction")["summary"]
    assert "Result too big to keep:" in summary
    assert Path(s.session_file or "").stat().st_size < 1_000_000
    assert sum(e["type"] == "turn_start" for e in events) < 10


class _Rerunner(OfflineModel):
    """An offline model without the too-big rule: it re-runs the call, as a naive model would."""

    def _decline_too_big(self, action: PlannedAction, messages: Any, input_tokens: int) -> str | None:
        return None


def test_a_compaction_that_frees_no_room_ends_the_turn_with_advice(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(1, 3001)))
    s = _session(tmp_path, _Rerunner(context_window=6000, max_tokens=1000), SMALL, project)
    _bounded(s)
    result = asyncio.run(s.prompt("read big.txt and then read big.txt again"))
    assert result.status == "error"
    assert result.error is not None and result.error.startswith("Compaction freed no room")
    for advice in ("bigger context window", "keepRecentTokens", "offset/limit"):
        assert advice in result.error
    errors = [n for n in result.notices if n["level"] == "error"]
    assert [n["code"] for n in errors] == ["compaction_no_room"] and errors[0]["message"] == result.error
    assert len(result.compactions) <= 3
    assert Path(s.session_file or "").stat().st_size < 1_000_000


class _NewFileEachTime(OfflineModel):
    """Reads another big file after every compaction (so "the same tool call" never repeats)."""

    calls = 0

    def _turn(self, context: Context, input_tokens: int = 0) -> tuple[list[dict[str, Any]], str]:
        if context.messages and context.messages[-1].get("role") == "toolResult":
            return [{"type": "text", "text": "done"}], "stop"
        n = self.calls
        self.calls += 1
        call = {"type": "toolCall", "id": f"c{n}", "name": "read", "arguments": {"path": f"big{n}.txt"}}
        return [call], "toolUse"


def test_auto_compactions_per_prompt_are_limited(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    for n in range(12):
        (project / f"big{n}.txt").write_text("".join(f"{n} line {i} of a big file\n" for i in range(3000)))
    settings = {**SMALL, "maxAutoCompactionsPerPrompt": 2}
    s = _session(tmp_path, _NewFileEachTime(context_window=6000, max_tokens=1000), settings, project)
    _bounded(s)
    result = asyncio.run(s.prompt("go"))
    assert len(result.compactions) == 2
    assert result.status == "error" and result.error is not None
    assert "maxAutoCompactionsPerPrompt = 2" in result.error
    assert result.notices[-1]["code"] == "compaction_limit" and result.notices[-1]["level"] == "error"
    # the default is 3, and it is a setting in Pi's style
    assert CompactionSettings().max_auto_compactions_per_prompt == 3
    assert (
        CompactionSettings.from_dict({"maxAutoCompactionsPerPrompt": 5}).to_dict()[
            "maxAutoCompactionsPerPrompt"
        ]
        == 5
    )


def test_compaction_that_cannot_run_is_reported(tmp_path: Path) -> None:
    s = _session(
        tmp_path,
        OfflineModel(context_window=6000, max_tokens=1000),
        {"reserveTokens": 3500, "keepRecentTokens": 100_000},
    )
    events = _bounded(s)
    result = asyncio.run(s.prompt("run `seq 1200`"))
    notices = [e for e in events if e["type"] == "turn_notice"]
    assert notices and notices[0]["code"] == "compaction_skipped" and notices[0]["level"] == "warning"
    assert "keepRecentTokens" in notices[0]["message"] and "cannot run" in notices[0]["message"]
    assert result.notices == notices and result.compactions == []


def test_prompt_result_reports_the_final_error() -> None:
    r = PromptResult(
        messages=[make_assistant_message([], api="a", provider="p", model="m", stop_reason="aborted")]
    )
    assert r.status == "aborted" and r.error is None
    r.error = "boom"
    assert r.status == "error"


# --------------------------------------------------------------------------------------------
# values are checked where they enter


@pytest.mark.parametrize(
    "kwargs", [{"context_window": 0}, {"context_window": -5}, {"max_tokens": 0}, {"max_tokens": -1}]
)
def test_model_limits_are_checked(kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidValueError, match="must be greater than 0") as info:
        OfflineModel(**kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, PiNbError)
    m = OfflineModel()
    with pytest.raises(InvalidValueError):
        m.with_overrides(**kwargs)
    with pytest.raises(InvalidValueError):
        setattr(m, next(iter(kwargs)), 0)
    assert m.context_window == 128_000 and m.max_tokens == 16_384  # nothing changed


@pytest.mark.parametrize(
    "data",
    [{"reserveTokens": -1}, {"keepRecentTokens": -1}, {"maxAutoCompactionsPerPrompt": 0}],
)
def test_compaction_settings_are_checked(data: dict[str, int]) -> None:
    with pytest.raises(InvalidValueError):
        CompactionSettings.from_dict(data)
    sm = SettingsManager.in_memory({})
    with pytest.raises(InvalidValueError):
        sm.set_compaction_settings(**data)
    assert sm.get_compaction_settings() == CompactionSettings()  # nothing was written
    with pytest.raises(InvalidValueError):
        SettingsManager.in_memory({"compaction": data}).get_compaction_settings()


def test_zero_is_a_value_not_missing() -> None:
    s = CompactionSettings.from_dict({"reserveTokens": 0, "keepRecentTokens": 0})
    assert (s.reserve_tokens, s.keep_recent_tokens) == (0, 0)
    assert (
        SettingsManager.in_memory({"compaction": {"reserveTokens": 0}})
        .get_compaction_settings()
        .reserve_tokens
        == 0
    )


def test_session_refuses_a_reserve_that_fills_the_window(tmp_path: Path) -> None:
    s = _session(tmp_path, OfflineModel(context_window=6000), {"reserveTokens": 6000})
    with pytest.raises(
        InvalidValueError, match=r"reserveTokens \(6000\) must be less than the context window"
    ):
        asyncio.run(s.prompt("hello"))  # refused before anything is sent
    assert s.messages == []
    s.settings.set_compaction_settings(reserveTokens=5999, keepRecentTokens=0)
    assert asyncio.run(s.prompt("hello")).status == "ok"
    s.set_model(OfflineModel(context_window=5000))  # a notebook may set the window first ...
    with pytest.raises(InvalidValueError):
        asyncio.run(s.prompt("hello"))  # ... but the next prompt is refused until the reserve fits
    s.settings.set_compaction_settings(enabled=False)
    assert asyncio.run(s.prompt("hello")).status == "ok"  # no compaction, no reserve to fit


def test_thinking_levels_are_pis(tmp_path: Path) -> None:
    with pytest.raises(InvalidValueError, match="off, minimal, low, medium, high, xhigh, max"):
        _session(tmp_path, OfflineModel()).set_thinking_level("extreme")
    with pytest.raises(InvalidValueError):
        Agent(OfflineModel(), thinking_level="")
    with pytest.raises(InvalidValueError):
        SettingsManager.in_memory({}).set_default_thinking_level("huge")
    with pytest.raises(InvalidValueError, match="defaultThinkingLevel"):
        SettingsManager.in_memory({"defaultThinkingLevel": "loud"}).get_default_thinking_level()
    # every level is accepted and clamped to the model, as Pi's setThinkingLevel does
    s = _session(tmp_path, OfflineModel())
    for level in ("off", "minimal", "low", "medium", "high", "xhigh", "max"):
        s.set_thinking_level(level)
    assert s.thinking_level == "off"  # the offline model does not reason
    from pi_nb.providers.scripted import ScriptedModel

    (tmp_path / "r").mkdir()
    r = _session(tmp_path / "r", ScriptedModel(reasoning=True))
    for level in ("off", "minimal", "low", "medium", "high", "xhigh", "max"):
        r.set_thinking_level(level)
        assert r.thinking_level == ("high" if level in ("xhigh", "max") else level)  # no map: no xhigh/max
    sm = SessionManager.in_memory(str(tmp_path))
    with pytest.raises(InvalidValueError):
        AgentSession(sm, OfflineModel(), settings=_settings(), thinking_level="ultra", project_trusted=True)


# --------------------------------------------------------------------------------------------
# one huge entry


def test_a_huge_request_is_counted_part_by_part_once() -> None:
    model = OfflineModel()
    huge = "word " * (PART_COUNT_CHARS // 2)  # 2.5 M characters: over the exact limit
    ctx = Context("sys", [{"role": "user", "content": [{"type": "text", "text": huge}]}])
    first = model.count_request_tokens(ctx)
    exact = tokens.count_tokens(huge) + tokens.count_tokens("sys") + 1 + 4
    assert abs(first - exact) <= exact * 0.01
    key = (model.encoding, PART_COUNT_CHARS, hash(huge[:PART_COUNT_CHARS]))
    assert key in tokens._count_cache  # the head is counted once and kept
    assert model.count_request_tokens(ctx) == first


# --------------------------------------------------------------------------------------------
# failed writes: the agent's history and the file agree

_WRITE_FAIL_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, os, resource, signal, sys
    from pi_nb.agent import AgentSession
    from pi_nb.messages import convert_to_llm
    from pi_nb.providers.offline import OfflineModel
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.session.manager import SessionManager

    cwd, sessions, agent_dir, out, fault = sys.argv[1:6]

    class Recording(OfflineModel):
        requests = []
        def respond(self, context, options=None):
            Recording.requests.append(json.loads(json.dumps(list(context.messages))))
            return super().respond(context, options)

    sm = SessionManager.create(cwd, sessions)
    s = AgentSession(sm, Recording(), settings=SettingsManager.in_memory({}), agent_dir=agent_dir,
                     project_trusted=True)
    asyncio.run(s.prompt("run `echo first`"))
    path = sm.get_session_file()
    size = os.path.getsize(path)
    if fault == "eacces":
        os.chmod(os.path.dirname(path), 0o755)
        os.seteuid(65534)  # nobody: the file (root's, 0644) cannot be written any more
        prompt = "run `echo second`"
    else:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 3000, hard))  # the disk is "full" soon
        prompt = "run `seq 1500`"  # 6 KB, no truncation: no full-output temp file to hit the limit
    failed = asyncio.run(s.prompt(prompt))
    if fault == "eacces":
        os.seteuid(0)
    else:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    in_memory = json.loads(json.dumps(s.messages))
    n = len(Recording.requests)
    asyncio.run(s.prompt("run `echo third`"))
    sent = Recording.requests[n]
    on_disk = SessionManager.open(path).build_session_context().messages
    json.dump({
        "status": failed.status, "error": failed.error, "codes": [x["code"] for x in failed.notices],
        "sent": sent, "file_context": json.loads(json.dumps(convert_to_llm(on_disk))),
        "in_memory_after_failure": in_memory,
        "file_before_third": json.loads(json.dumps(list(on_disk)))[: len(in_memory)],
    }, open(out, "w"))
    """
)


@pytest.mark.parametrize("fault", ["eacces", "efbig"])
def test_after_a_failed_write_the_next_turn_sends_what_the_file_holds(tmp_path: Path, fault: str) -> None:
    if fault == "eacces" and os.geteuid() != 0:
        pytest.skip("needs root to switch the effective uid (as a user, chmod would do)")
    base = Path("/tmp") / f"pi_nb_write_fault_{os.getpid()}_{fault}"
    base.mkdir(mode=0o755, exist_ok=True)
    try:
        project = base / "proj"
        project.mkdir(mode=0o755, exist_ok=True)
        out = tmp_path / "out.json"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        args = [str(project), str(base / "sessions"), str(base / "agent"), str(out), fault]
        proc = subprocess.run(
            [sys.executable, "-c", _WRITE_FAIL_SCRIPT, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        data = json.loads(out.read_text())
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)
    assert data["status"] == "error" and "Could not write to the session file" in data["error"]
    assert data["codes"] == ["session_write_failed"]
    # the third turn sent exactly the file's context (plus its own prompt)
    sent, on_disk = data["sent"], data["file_context"]
    assert sent[: len(sent) - 1] == on_disk[: len(sent) - 1]
    assert sent[-1]["content"][0]["text"] == "run `echo third`"
    assert data["in_memory_after_failure"] == data["file_before_third"]


def test_convert_to_llm_is_what_a_request_holds() -> None:
    # the comparison above relies on requests holding convert_to_llm(context messages)
    msgs = [{"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 1}]
    assert convert_to_llm(msgs) == msgs


def test_stream_options_are_checked() -> None:
    with pytest.raises(InvalidValueError):
        StreamOptions(reasoning="off")  # off is "no reasoning": None
    with pytest.raises(InvalidValueError):
        StreamOptions(reasoning="turbo")
    with pytest.raises(InvalidValueError):
        StreamOptions(max_tokens=-1)
    assert StreamOptions(reasoning="max", max_tokens=0).max_tokens == 0  # Pi: 0 means the model's own limit
