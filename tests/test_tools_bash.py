"""The bash tool: Pi's own bash tests (tools.test.ts, regression 5303) and process handling.

Process handling is checked on real processes: a timeout or an abort must leave no running
descendant (a ``sleep`` grandchild's pid is gone afterwards), the shell is reaped (no zombie), output
written after the shell exited is still captured, and 200 MB of output go to the full-output file
with bounded memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from pi_nb.tools import AbortController, AbortSignal, AgentToolResult, ToolContext, create_bash_tool, run_tool


def _gone(pid: int) -> bool:
    """The process does not exist any more (a zombie waiting for PID 1 counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _wait_gone(pid: int, attempts: int = 200) -> bool:
    import time

    for _ in range(attempts):
        if _gone(pid):
            return True
        time.sleep(0.01)
    return False


def run(tmp_path: Path, command: str, **params: Any) -> Any:
    return run_tool(
        "bash", str(tmp_path), {"command": command, **params}, options={"bash": {"tmpdir": str(tmp_path)}}
    )


class FakeOps:
    """Pi's mocked ``BashOperations``: emit chunks, then return a code or raise a message."""

    def __init__(
        self, chunks: list[bytes], *, code: int | None = 0, error: str | None = None, yield_every: int = 0
    ):
        self.chunks = chunks
        self.code = code
        self.error = error
        self.yield_every = yield_every

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: Mapping[str, str] | None,
    ) -> int | None:
        for i, chunk in enumerate(self.chunks):
            on_data(chunk)
            if self.yield_every and i % self.yield_every == 0:
                await asyncio.sleep(0)
        if self.error is not None:
            raise RuntimeError(self.error)
        return self.code


def run_fake(tmp_path: Path, ops: FakeOps, on_update: Callable[[AgentToolResult], None] | None = None) -> Any:
    tool = create_bash_tool(str(tmp_path), operations=ops, tmpdir=str(tmp_path))

    async def main() -> Any:
        return await tool.execute("call", {"command": "ignored"}, None, on_update)

    return asyncio.run(main())


# --- Pi's tools.test.ts -------------------------------------------------------------------------------


def test_echo_returns_output_without_details(tmp_path: Path) -> None:
    out = run(tmp_path, "echo 'test output'")
    assert not out.is_error and out.text == "test output\n" and out.details is None


def test_failing_command_reports_the_code(tmp_path: Path) -> None:
    out = run(tmp_path, "exit 1")
    assert out.is_error and re.search(r"Command failed|code 1", out.text)
    assert out.text == "(no output)\n\nCommand exited with code 1"


def test_timeout(tmp_path: Path) -> None:
    out = run(tmp_path, "sleep 5", timeout=0.5)
    assert out.is_error and out.text == "Command timed out after 0.5 seconds"


@pytest.mark.parametrize(
    ("error", "status"), [("timeout:5", "Command timed out after 5 seconds"), ("aborted", "Command aborted")]
)
def test_truncated_output_before_timeout_or_abort_keeps_the_full_output_file(
    tmp_path: Path, error: str, status: str
) -> None:
    ops = FakeOps([f"{i}\n".encode() for i in range(1, 3001)], error=error)
    with pytest.raises(Exception) as err:
        run_fake(tmp_path, ops)
    text = str(err.value)
    assert text.endswith(f"\n\n{status}")
    assert re.search(r"\[Showing lines \d+-\d+ of \d+\. Full output: ", text)
    assert "Full output: undefined" not in text
    path = re.search(r"Full output: (\S+)\]", text).group(1)  # type: ignore[union-attr]
    data = Path(path).read_text()
    assert "1\n2\n3\n" in data and "2998\n2999\n3000\n" in data


def test_missing_working_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    out = run_tool("bash", str(missing), {"command": "echo hi"})
    assert (
        out.is_error
        and out.text == f"Working directory does not exist: {missing}\nCannot execute bash commands."
    )


def test_spawn_failure_reports_enoent(tmp_path: Path) -> None:
    shell = tmp_path / "shell"
    shell.write_text("#!/nonexistent/interpreter\n")
    shell.chmod(0o755)
    out = run_tool(
        "bash", str(tmp_path), {"command": "echo hi"}, options={"bash": {"shell_path": str(shell)}}
    )
    assert out.is_error and out.text == f"spawn {shell} ENOENT"
    out = run_tool(
        "bash", str(tmp_path), {"command": "echo hi"}, options={"bash": {"shell_path": "/no/shell"}}
    )
    assert out.is_error and out.text == "Custom shell path not found: /no/shell"


@pytest.mark.parametrize(
    ("prefix", "command", "expected"),
    [
        ("export TEST_VAR=hello", "echo $TEST_VAR", "hello\n"),
        ("echo prefix-output", "echo command-output", "prefix-output\ncommand-output\n"),
    ],
)
def test_command_prefix(tmp_path: Path, prefix: str, command: str, expected: str) -> None:
    out = run_tool("bash", str(tmp_path), {"command": command}, options={"bash": {"command_prefix": prefix}})
    assert out.text == expected


def test_chatty_output_is_throttled(tmp_path: Path) -> None:
    updates: list[AgentToolResult] = []
    ops = FakeOps([f"line {i}\n".encode() for i in range(5000)], yield_every=100)
    result = run_fake(tmp_path, ops, updates.append)
    assert len(updates) < 25
    assert updates[0].content == [] and updates[0].details is None
    assert "line 4999" in result.content[0]["text"]


def test_4000_lines_keep_the_last_2000(tmp_path: Path) -> None:
    ops = FakeOps([f"line-{i:04d}\n".encode() for i in range(1, 4001)])
    result = run_fake(tmp_path, ops)
    t = result.details["truncation"]
    assert (t["totalLines"], t["outputLines"], t["truncatedBy"]) == (4000, 2000, "lines")
    text = result.content[0]["text"]
    assert "line-2001" in text and "line-4000" in text and "line-2000\n" not in text
    assert "[Showing lines 2001-4000 of 4000. Full output: " in text and "4001" not in text


def test_euro_sign_split_across_chunks(tmp_path: Path) -> None:
    result = run_fake(tmp_path, FakeOps([b"\xe2\x82", b"\xac\n"]))
    assert result.content[0]["text"] == "\u20ac\n"


def test_seq_3000_full_output_file_has_every_line(tmp_path: Path) -> None:
    out = run(tmp_path, "seq 3000")
    assert out.details["truncation"]["truncatedBy"] == "lines"
    assert Path(out.details["fullOutputPath"]).read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert out.text.startswith("1001\n") and out.text.endswith(
        f"3000\n\n[Showing lines 1001-3000 of 3000. Full output: {out.details['fullOutputPath']}]"
    )


def test_updates_carry_the_temp_file_once_truncated(tmp_path: Path) -> None:
    updates: list[AgentToolResult] = []
    result = run_fake(tmp_path, FakeOps([b"x" * 60000 + b"\n"]), updates.append)
    assert updates[0].details is None
    last = updates[-1].details
    assert (
        last is not None
        and last["truncation"]["truncated"]
        and last["fullOutputPath"] == result.details["fullOutputPath"]
    )


def test_invalid_utf8_never_crashes(tmp_path: Path) -> None:
    out = run(tmp_path, r"printf '\xff\xfe\x80 ok \xc3'")
    assert not out.is_error and out.text == "\ufffd\ufffd\ufffd ok \ufffd"


# --- process handling -----------------------------------------------------------------------------


@pytest.mark.usefixtures("no_sandbox")
def test_timeout_kills_grandchildren(tmp_path: Path) -> None:
    out = run(
        tmp_path, "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; echo started; wait", timeout=0.5
    )
    assert out.is_error and out.text == "started\n\n\nCommand timed out after 0.5 seconds"
    assert _wait_gone(int((tmp_path / "child.pid").read_text()))
    assert _wait_gone(int((tmp_path / "shell.pid").read_text()))


@pytest.mark.usefixtures("no_sandbox")
def test_abort_kills_grandchildren(tmp_path: Path) -> None:
    controller = AbortController()
    tool = create_bash_tool(str(tmp_path), tmpdir=str(tmp_path))

    async def main() -> Any:
        task = asyncio.ensure_future(
            tool.execute(
                "call", {"command": "sleep 30 & echo $! > child.pid; echo started; wait"}, controller.signal
            )
        )
        while not (tmp_path / "child.pid").exists() or not (tmp_path / "child.pid").read_text().strip():
            await asyncio.sleep(0.01)
        controller.abort()
        return await asyncio.gather(task, return_exceptions=True)

    (err,) = asyncio.run(main())
    assert str(err) == "started\n\n\nCommand aborted"
    assert _wait_gone(int((tmp_path / "child.pid").read_text()))


def test_abort_before_start(tmp_path: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    out = run_tool("bash", str(tmp_path), {"command": "touch ran"}, signal=signal)
    assert out.is_error and out.text == "Command aborted"
    assert not (tmp_path / "ran").exists()


@pytest.mark.usefixtures("no_sandbox")
def test_cancelling_the_task_kills_the_process(tmp_path: Path) -> None:
    tool = create_bash_tool(str(tmp_path), tmpdir=str(tmp_path))

    async def main() -> None:
        task = asyncio.ensure_future(tool.execute("call", {"command": "echo $$ > shell.pid; sleep 30"}))
        while not (tmp_path / "shell.pid").exists() or not (tmp_path / "shell.pid").read_text().strip():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert _wait_gone(int((tmp_path / "shell.pid").read_text()))


@pytest.mark.usefixtures("no_sandbox")
def test_the_shell_is_reaped(tmp_path: Path) -> None:
    out = run(tmp_path, "echo $$")
    pid = int(out.text)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert _gone(pid)


def test_output_written_after_the_shell_exits_is_kept(tmp_path: Path) -> None:
    """Regression 5303: a descendant keeps writing after the shell exited; the 100 ms grace timer is
    re-armed by every chunk, so nothing is lost."""
    out = run(tmp_path, "(for i in 1 2 3 4 5 6; do sleep 0.02; echo late$i; done) & echo early")
    assert out.text == "early\n" + "".join(f"late{i}\n" for i in range(1, 7))


@pytest.mark.timeout(20)
def test_a_quiet_background_process_does_not_block_the_result(tmp_path: Path) -> None:
    out = run(tmp_path, "sleep 30 & echo $! > bg.pid; echo done")
    pid = int((tmp_path / "bg.pid").read_text())
    try:
        assert out.text == "done\n" and not out.is_error
    finally:
        os.kill(pid, 9)


def test_session_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_MODEL", "leaked-from-parent")
    monkeypatch.setenv("PI_SESSION_ID", "leaked")
    show = 'echo "[${PI_SESSION_ID-unset}][${PI_SESSION_FILE-unset}][${PI_PROVIDER-unset}][${PI_MODEL-unset}][${PI_REASONING_LEVEL-unset}]"'
    assert run(tmp_path, show).text == "[unset][unset][unset][unset][unset]\n"
    ctx = ToolContext(
        session_id="s1", session_file="/f.jsonl", model={"provider": "p", "id": "m"}, thinking_level="low"
    )
    out = run_tool("bash", str(tmp_path), {"command": show}, ctx=ctx)
    assert out.text == "[s1][/f.jsonl][p][m][low]\n"

    class Model:
        provider = "obj-provider"
        id = "obj-model"

    out = run_tool("bash", str(tmp_path), {"command": show}, ctx=ToolContext(model=Model()))
    assert out.text == "[unset][unset][obj-provider][obj-model][unset]\n"


def test_spawn_hook_can_rewrite_command_and_env(tmp_path: Path) -> None:
    from dataclasses import replace

    def hook(ctx: Any) -> Any:
        return replace(ctx, command=ctx.command + "; echo hooked", env={**ctx.env, "EXTRA": "yes"})

    out = run_tool("bash", str(tmp_path), {"command": "echo $EXTRA"}, options={"bash": {"spawn_hook": hook}})
    assert out.text == "yes\nhooked\n"


def test_signal_death_counts_as_success(tmp_path: Path) -> None:
    out = run(tmp_path, "kill -9 $$")
    assert not out.is_error and out.text == "(no output)"


BIG_SCRIPT = textwrap.dedent(
    """
    import json, os, resource, sys

    def peak_kb():
        # VmHWM: this process's own peak. ru_maxrss would also count the parent's memory at
        # spawn time (Linux keeps the pre-exec high-water mark), i.e. pytest's or the benchmark's.
        try:
            with open("/proc/self/status") as f:
                return int(next(l for l in f if l.startswith("VmHWM:")).split()[1])
        except (OSError, StopIteration):
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    from pi_nb.tools import run_tool
    out = run_tool("bash", sys.argv[1], {"command": "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000"},
                   options={"bash": {"tmpdir": sys.argv[1]}})
    path = out.details["fullOutputPath"]
    print(json.dumps({"rss_kb": peak_kb(), "size": os.path.getsize(path),
                      "text": out.text[-200:], "error": out.is_error, "truncation": out.details["truncation"]}))
    os.remove(path)
    """
)


def test_200mb_of_output_with_bounded_memory(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BIG_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    report = json.loads(proc.stdout)
    assert report["size"] == 200_000_000
    assert report["rss_kb"] < 100 * 1024, report["rss_kb"]  # the whole interpreter, pi_nb imported
    assert not report["error"]
    assert report["truncation"]["totalBytes"] == 200_000_000
    assert report["truncation"]["totalLines"] == 200_000_000 // 37 + 1
    assert re.search(
        r"\[Showing lines \d+-\d+ of 5405406 \(50\.0KB limit\)\. Full output: .*pi-bash-[0-9a-f]{16}\.log\]$",
        report["text"],
    )


def test_provider_keys_never_reach_commands(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """design.md: keys come from the environment and are never written to sessions or outputs,
    so a model running ``env`` must not see them (a deliberate difference from Pi)."""
    from pi_nb.tools import run_tool

    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("MY_SERVICE_API_KEY", "also-secret")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    out = run_tool("bash", str(tmp_path), {"command": "env"})
    text = out.text
    assert "sk-should-not-leak" not in text and "also-secret" not in text
    assert "HARMLESS_SETTING=visible" in text
