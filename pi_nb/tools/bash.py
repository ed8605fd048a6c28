"""The ``bash`` tool: run a command, stream its output, keep the tail (Pi's ``bash.ts``).

The command runs as ``/bin/bash -c COMMAND`` (else ``bash`` on ``PATH``, else ``sh``) in its own
process group, stdin closed, stdout and stderr merged into one
:class:`~pi_nb.truncation.OutputAccumulator` (no ANSI stripping, no CR handling). The model gets
the last 2000 lines / 50 KB; when more was printed, the whole raw output is in
``$TMPDIR/pi-bash-{16 hex}.log`` and a notice says where:

* ``[Showing lines {a}-{b} of {n}. Full output: {path}]`` (line limit),
* ``[Showing lines {a}-{b} of {n} (50.0KB limit). Full output: {path}]`` (byte limit),
* ``[Showing last {size} of line {n} (line is {size}). Full output: {path}]`` (one huge line;
  Pi's quirk: when the output ends with a newline the line size is ``0B``).

Outcomes: exit code 0 (or death by a signal, which Node reports as code ``null``) is a success,
empty output reads ``(no output)``; any other code fails with ``{text}\\n\\nCommand exited with code
{n}``; an abort fails with ``{text}\\n\\nCommand aborted`` and a timeout with ``{text}\\n\\nCommand timed
out after {t} seconds`` (for these two, empty output adds nothing before the status).

Process handling. Pi starts the shell in its own process group and, on a timeout or an abort,
kills that group with ``SIGKILL``; after the shell exits it reads on for as long as output keeps arriving
(a 100 ms grace timer re-armed by every chunk, its fix for issue 5303). A process that left the
group (``setsid``, a double fork) survives the kill, and one that keeps writing (``setsid sh -c
'exec yes' &``, ``nohup yes &``) keeps the call running for ever while the full-output file grows
by gigabytes. pi_nb keeps Pi's rules and closes both holes:

* On Linux the command runs under a small supervisor process (:mod:`pi_nb.tools._supervisor`)
  that is a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, no privilege needed): every
  process the command starts stays its descendant, whatever group or session it moved to. A
  timeout, an abort or a cancelled task kills that whole tree (``SIGKILL``, walked again until
  nothing is left, so processes forked meanwhile die too); should the supervisor not answer in
  0.5 s (the command stopped or killed it), the tool walks the tree itself. The call then ends
  within 1.5 s of the kill whatever is still holding the pipes. Elsewhere (macOS) the process
  group is killed, as in Pi, with the same bound on the call.
* After the shell exits, output is read for at most :data:`EXIT_DRAIN_LIMIT_S` (2 s, the
  ``exit_drain_limit`` option) more. If it is still arriving then, reading stops, the processes
  still holding the output pipe are killed (Linux; elsewhere they get ``SIGPIPE`` at their next
  write) and the text ends with ``[Output was still arriving 2 seconds after the shell exited:
  reading stopped there and ...]``. Background processes that went quiet or redirected their
  output (``server > log 2>&1 &``) are left running, as in Pi.
* The full-output file stops growing at ``full_output_max_bytes`` (default
  :data:`DEFAULT_FULL_OUTPUT_MAX_BYTES`, 256 MiB); the notice then reads ``Full output: {path}
  (holds the first 256.0MB only)`` and ``details`` has ``fullOutputMaxBytes``. If the file cannot
  be created or written (disk full, ``RLIMIT_FSIZE``), writing it stops, the call still answers
  and the notice says ``(incomplete: {reason})`` (``details.fullOutputError``).
* Every full-output file is recorded per session (:func:`~pi_nb.tools.base.cleanup_tool_temp_files`
  removes a closed session's files) and per tool (:meth:`BashTool.cleanup_temp_files`).

Sandbox (Linux). A key that lives only in the kernel's environment is readable by any process
that can see the kernel's ``/proc/<pid>/environ`` (or its memory), and redaction by value cannot
catch ``base64`` or ``rev`` of it. So where the machine allows it (:func:`sandbox_available`: user
namespaces, checked once by a probe) the supervisor runs the command in new user, PID and mount
namespaces with a ``/proc`` of its own and no capabilities (see :mod:`pi_nb.tools._supervisor`):
the command sees only its own processes; its uid, the file system, the cwd and temp dirs, and the
network are as before. Where no sandbox is available (macOS, user namespaces disabled, or
``sandbox=False`` / ``PI_NB_BASH_SANDBOX=0``), a :class:`BashSandboxWarning` says so once per tool (that is, per session) and
commands run as in Pi. Tool output texts are Pi's either way. In the sandbox setuid programs gain
nothing (``sudo``; ``no_new_privs``), other users' files appear owned by ``nobody`` and ``ps`` /
``kill`` reach only the command's own processes; the file system and the network stay open, so
files a command reads (``auth.json``, ``.env``) are protected only by redaction by value.

Updates (``on_update``) are sent at most every 100 ms.

Environment: the caller's environment with ``PI_SESSION_ID``, ``PI_SESSION_FILE``,
``PI_PROVIDER``, ``PI_MODEL`` and ``PI_REASONING_LEVEL`` removed, then set from the tool context
when session exposure is on (the default). Where Pi puts its own bin directory (its downloaded
``rg``/``fd``) first on ``PATH``, pi_nb *appends* the directory of the bundled ``rg`` when no ``rg``
is on ``PATH`` (appending never shadows the user's tools).

Deliberate difference from Pi: provider credentials (variables whose name ends in ``_API_KEY``,
plus :data:`CREDENTIAL_ENV_KEYS`) are removed from the command's environment, so a model that runs
``env`` cannot copy a key into the session file or a notebook (keys never reach sessions or
outputs). Pass them explicitly in the command if a tool really needs one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_mod
import math
import os
import shutil
import signal as signal_mod
import stat as stat_mod
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pi_nb._js import js_number_to_string
from pi_nb.errors import OutputAccumulatorError, ToolError
from pi_nb.tools import _supervisor
from pi_nb.tools._node import error_code
from pi_nb.tools.base import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolUpdateCallback,
    model_field,
    track_tool_temp_file,
)
from pi_nb.truncation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    AccumulatorSnapshot,
    OutputAccumulator,
    format_size,
)

__all__ = [
    "DEFAULT_FULL_OUTPUT_MAX_BYTES",
    "EXIT_DRAIN_LIMIT_S",
    "BashExecReport",
    "BashOperations",
    "BashSandboxWarning",
    "BashSpawnContext",
    "BashTool",
    "LocalBashOperations",
    "create_bash_tool",
    "get_shell_config",
    "get_shell_env",
    "kill_process_tree",
    "resolve_timeout",
    "sandbox_available",
    "sandbox_status",
    "supervisor_available",
]

MAX_TIMEOUT_MS = 2_147_483_647
MAX_TIMEOUT_SECONDS = MAX_TIMEOUT_MS / 1000
BASH_UPDATE_THROTTLE_S = 0.1
EXIT_STDIO_GRACE_S = 0.1
EXIT_DRAIN_LIMIT_S = 2.0
"""After the shell exited, output is read for at most this long (Pi: for as long as it arrives)."""
KILL_FALLBACK_S = 0.5
KILL_HARD_END_S = 1.5
HOLDERS_ANSWER_S = 1.0
SHELL_POLL_S = 0.05
DEFAULT_FULL_OUTPUT_MAX_BYTES = 256 * 1024 * 1024
"""The full-output temp file stops growing here (256 MiB); the notice then says it holds the start."""
SUPERVISOR_PATH = os.path.abspath(_supervisor.__file__)
READ_CHUNK = 1 << 16

BASH_PROMPT_SNIPPET = "Execute bash commands (ls, grep, find, etc.)"
BASH_PROMPT_GUIDELINES = (
    "You can inspect PI_* environment variables for current model and session details.",
)
BASH_DESCRIPTION = (
    "Run a bash command in the working directory and return what it printed (stdout and stderr "
    f"together). Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB are "
    "returned, whichever limit is reached first; when output is cut, the complete output is saved "
    "to a temp file whose path is given. An optional timeout is in seconds."
)
BASH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "description": "Shell command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
}
SESSION_ENV_KEYS = ("PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")


def resolve_timeout(timeout: float | None) -> float | None:
    """Pi's ``resolveTimeoutMs``, in seconds: finite, > 0, at most 2147483.647."""
    if timeout is None:
        return None
    if (
        not isinstance(timeout, (int, float))
        or isinstance(timeout, bool)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if timeout * 1000 > MAX_TIMEOUT_MS:
        raise ToolError(f"Invalid timeout: maximum is {js_number_to_string(MAX_TIMEOUT_SECONDS)} seconds")
    return float(timeout)


def get_shell_config(custom_shell_path: str | None = None) -> tuple[str, list[str]]:
    """Pi's ``getShellConfig`` on Unix: the custom shell, ``/bin/bash``, ``bash`` on PATH, or ``sh``."""
    if custom_shell_path:
        if os.path.exists(custom_shell_path):
            return custom_shell_path, ["-c"]
        raise ToolError(f"Custom shell path not found: {custom_shell_path}")
    if os.path.exists("/bin/bash"):
        return "/bin/bash", ["-c"]
    found = shutil.which("bash")
    if found:
        return found, ["-c"]
    return "sh", ["-c"]


#: Credential variables kept out of commands besides every ``*_API_KEY`` (see the module docstring).
CREDENTIAL_ENV_KEYS = frozenset({"ANTHROPIC_AUTH_TOKEN", "OPENAI_ORG_ID", "AZURE_OPENAI_AD_TOKEN"})


def is_credential_env_key(name: str) -> bool:
    return name.upper().endswith("_API_KEY") or name.upper() in CREDENTIAL_ENV_KEYS


def get_shell_env() -> dict[str, str]:
    """The environment commands run in (see the module docstring on ``PATH`` and credentials)."""
    env = {k: v for k, v in os.environ.items() if not is_credential_env_key(k)}
    if shutil.which("rg", path=env.get("PATH")) is None:
        from pi_nb.tools.grep import find_rg_binary

        rg = find_rg_binary()
        if rg:
            bin_dir = os.path.dirname(rg)
            current = env.get("PATH", "")
            env["PATH"] = os.pathsep.join(p for p in (current, bin_dir) if p)
    return env


def kill_process_tree(pid: int) -> None:
    """Pi's ``killProcessTree`` on Unix: SIGKILL the process group, else the process."""
    try:
        os.killpg(pid, signal_mod.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal_mod.SIGKILL)


@dataclass(frozen=True)
class BashSpawnContext:
    """Pi's ``BashSpawnContext``: what a ``spawn_hook`` may rewrite before the command starts."""

    command: str
    cwd: str
    env: Mapping[str, str]


class BashOperations(Protocol):
    """Pi's ``BashOperations``: how a command is executed (swap in a remote runner, or a fake).

    ``exec`` streams raw output chunks to ``on_data`` and returns the exit code (``None`` when the
    process died by a signal). It raises an exception whose message is ``"aborted"`` when
    ``signal`` fired and ``"timeout:{seconds}"`` when the timeout hit; the tool turns those into
    Pi's texts. Any other exception's message becomes the tool's error text.
    """

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: Mapping[str, str] | None,
    ) -> int | None: ...


class _ExecError(Exception):
    """``aborted`` / ``timeout:N``: the two exec failures the tool formats itself."""


@dataclass(frozen=True)
class BashExecReport:
    """What :meth:`LocalBashOperations.exec_report` learned besides the exit code.

    ``drain_cut`` is true when output was still arriving ``exit_drain_limit`` seconds after the
    shell exited and reading stopped there; ``stopped_writers`` is how many processes still holding
    the output pipes were then killed (always 0 where the supervisor is not available).
    ``supervisor_lost`` is true when the command killed its supervisor: the exit code is then
    unknown (``None``) and processes that left the process group are out of reach.
    """

    exit_code: int | None
    drain_cut: bool = False
    stopped_writers: int = 0
    supervisor_lost: bool = False


def supervisor_available() -> bool:
    """Whether commands run under the subreaper supervisor here (Linux with ``/proc``)."""
    return (
        sys.platform.startswith("linux")
        and os.path.isdir("/proc/self/fd")
        and bool(sys.executable)
        and os.path.isfile(SUPERVISOR_PATH)
    )


class BashSandboxWarning(UserWarning):
    """Commands run without the sandbox here: they can read the kernel's environment and memory."""


_sandbox_probe: tuple[bool, str] | None = None
_sandbox_lock = threading.Lock()


def _probe_sandbox() -> tuple[bool, str]:
    global _sandbox_probe
    with _sandbox_lock:
        if _sandbox_probe is None:
            if not supervisor_available():
                _sandbox_probe = (False, f"no process supervisor on {sys.platform}")
            else:
                try:
                    code = subprocess.run(
                        [sys.executable, "-I", "-S", SUPERVISOR_PATH, "--probe"],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        timeout=10,
                        check=False,
                    ).returncode
                except (OSError, subprocess.SubprocessError) as exc:
                    _sandbox_probe = (False, f"the probe failed: {exc}")
                else:
                    reasons = {
                        2: "no libc",
                        3: "user namespaces are not allowed",
                        4: "a private /proc cannot be mounted",
                    }
                    _sandbox_probe = (
                        (True, "user + PID + mount namespaces, private /proc, no capabilities")
                        if code == 0
                        else (False, reasons.get(code, f"the probe exited with {code}"))
                    )
        return _sandbox_probe


def sandbox_available() -> bool:
    """Whether commands can run in the sandbox here (probed once per process; see the module docstring)."""
    return _probe_sandbox()[0]


def sandbox_status() -> str:
    """What the sandbox is here, or why there is none (one line)."""
    ok, why = _probe_sandbox()
    return f"sandboxed: {why}" if ok else f"not sandboxed: {why}"


class LocalBashOperations:
    """Runs commands locally (Pi's ``createLocalBashOperations``), under the supervisor on Linux.

    ``exit_drain_limit``: how long output is still read after the shell exited (see the module
    docstring). ``supervise``: run under the subreaper supervisor (default: where available);
    ``False`` gives Pi's plain process-group handling. ``sandbox``: run the command where it cannot
    see the kernel's processes (default: where available, see :func:`sandbox_available`; needs the
    supervisor). Without it a :class:`BashSandboxWarning` is given once, at the first command.
    """

    def __init__(
        self,
        shell_path: str | None = None,
        shell_name: str = "bash",
        *,
        exit_drain_limit: float = EXIT_DRAIN_LIMIT_S,
        supervise: bool | None = None,
        sandbox: bool | None = None,
    ) -> None:
        if (
            isinstance(exit_drain_limit, bool)
            or not isinstance(exit_drain_limit, (int, float))
            or not math.isfinite(exit_drain_limit)
            or exit_drain_limit < 0
        ):
            raise ToolError(
                f"exit_drain_limit must be a finite number of seconds >= 0, got {exit_drain_limit!r}"
            )
        self.shell_path = shell_path
        self.shell_name = shell_name
        self.exit_drain_limit = float(exit_drain_limit)
        self.supervise = (
            supervisor_available() if supervise is None else bool(supervise and supervisor_available())
        )
        self._sandbox_wanted = sandbox
        self._sandbox: bool | None = None
        self._warned = False

    @property
    def sandbox(self) -> bool:
        """Whether this runner's commands run in the sandbox (decided at the first use)."""
        if self._sandbox is None:
            if self._sandbox_wanted is None and os.environ.get("PI_NB_BASH_SANDBOX") == "0":
                self._sandbox_wanted = False
            self._sandbox = bool(self.supervise and self._sandbox_wanted is not False and sandbox_available())
        return self._sandbox

    def _warn_unsandboxed(self) -> None:
        if self._warned:
            return
        self._warned = True
        if self._sandbox_wanted is False:
            why = "turned off: sandbox=False or PI_NB_BASH_SANDBOX=0"
        elif not self.supervise:
            why = "it needs the process supervisor, which is off"
        else:
            why = sandbox_status().split(": ", 1)[1]
        warnings.warn(
            BashSandboxWarning(
                f"bash commands run without a sandbox ({why}): a command can read this process's "
                "environment and memory through /proc, so keys kept only in the environment are "
                "not protected from it"
            ),
            stacklevel=4,
        )

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
        report = await self.exec_report(
            command, cwd, on_data=on_data, signal=signal, timeout=timeout, env=env
        )
        return report.exit_code

    async def exec_report(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: Mapping[str, str] | None,
    ) -> BashExecReport:
        """:meth:`exec` with what happened after the shell exited (see :class:`BashExecReport`)."""
        timeout_s = resolve_timeout(timeout)
        if signal is not None and signal.aborted:
            raise _ExecError("aborted")
        shell, shell_args = get_shell_config(self.shell_path)
        if not os.path.exists(cwd):
            raise ToolError(
                f"Working directory does not exist: {cwd}\nCannot execute {self.shell_name} commands."
            )
        argv = [shell, *shell_args, command]
        full_env = dict(env) if env is not None else get_shell_env()
        sandboxed = self.sandbox
        if not sandboxed:
            self._warn_unsandboxed()
        status_r: int | None = None
        try:
            if self.supervise:
                status_r, status_w = os.pipe()
                try:
                    proc = subprocess.Popen(
                        [
                            sys.executable,
                            "-I",
                            "-S",
                            SUPERVISOR_PATH,
                            *(["--sandbox"] if sandboxed else []),
                            str(status_w),
                            *argv,
                        ],
                        cwd=cwd,
                        env=full_env,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        pass_fds=(status_w,),
                        start_new_session=True,
                    )
                finally:
                    os.close(status_w)
            else:
                proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=full_env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
        except OSError as exc:
            if status_r is not None:
                os.close(status_r)
            raise ToolError(f"spawn {shell} {error_code(exc)}") from None
        waiter = _ChildWaiter(proc, status_r, on_data, signal, timeout_s, timeout, self.exit_drain_limit)
        code = await waiter.run()
        if waiter.spawn_errno is not None:
            raise ToolError(f"spawn {shell} {error_code(OSError(waiter.spawn_errno, ''))}")
        return BashExecReport(
            code,
            drain_cut=waiter.drain_cut,
            stopped_writers=waiter.stopped_writers,
            supervisor_lost=waiter.supervisor_lost,
        )


class _ChildWaiter:
    """Reads both pipes on the event loop and waits for the shell (Pi's ``waitForChildProcess``),
    with the supervisor's reports when there is one (``status_fd``), and the bounds pi_nb adds:
    the post-exit drain limit, and a hard end shortly after a kill."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        status_fd: int | None,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout_s: float | None,
        timeout_raw: float | None,
        drain_limit: float,
    ) -> None:
        self.proc = proc
        self.status_fd = status_fd
        self.supervised = status_fd is not None
        self.on_data = on_data
        self.signal = signal
        self.timeout_s = timeout_s
        self.timeout_raw = timeout_raw
        self.drain_limit = drain_limit
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = self.loop.create_future()
        self.open_fds: set[int] = set()
        self.status_buf = b""
        self.shell_pid: int | None = None if self.supervised else proc.pid
        self.exited = False
        self.proc_gone = False
        self.exit_code: int | None = None
        self.spawn_errno: int | None = None
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.timed_out = False
        self.killing = False
        self.drain_cut = False
        self.stopped_writers = 0
        self.awaiting_holders = False
        self.released = False
        self.proc_exited = threading.Event()
        self.supervisor_lost = False

    # -- timers ---------------------------------------------------------------------------------

    def _set_timer(self, name: str, delay: float, callback: Callable[[], None]) -> None:
        self._cancel_timer(name)
        self.timers[name] = self.loop.call_later(delay, callback)

    def _cancel_timer(self, name: str) -> None:
        timer = self.timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    # -- control of the processes ---------------------------------------------------------------

    def _send(self, command: bytes) -> None:
        """Write a one-letter command to the supervisor (nothing when it is gone)."""
        stdin = self.proc.stdin
        if stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):
            os.write(stdin.fileno(), command)
        with contextlib.suppress(OSError):
            os.kill(self.proc.pid, signal_mod.SIGCONT)  # a supervisor stopped by the command resumes

    def _release(self) -> None:
        """Let the supervisor go: ``q`` (leave what is left alone) unless a kill was asked."""
        if self.released:
            return
        self.released = True
        if self.supervised and not self.killing:
            self._send(b"q")
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def _kill(self) -> None:
        """Timeout, abort or cancellation: every process of the command dies, the call ends soon."""
        if self.killing:
            return
        self.killing = True
        if self.supervised:
            self._send(b"k")
            pid, gone = self.proc.pid, self.proc_exited

            def fallback() -> None:
                # the supervisor did not finish the kill in time (stopped or killed by the command):
                # walk its descendants from here, then kill it (it is not reaped before ``gone``
                # is set, so its pid cannot have been reused)
                if gone.wait(KILL_FALLBACK_S):
                    return
                with contextlib.suppress(Exception):
                    _supervisor.kill_tree(pid, deadline_s=0.5)
                if not gone.is_set():
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal_mod.SIGKILL)

            threading.Thread(target=fallback, name=f"pi-bash-kill-{pid}", daemon=True).start()
        if self.shell_pid is not None:
            kill_process_tree(self.shell_pid)
        if not self.supervised:
            kill_process_tree(self.proc.pid)
        self._set_timer("hard-end", KILL_HARD_END_S, self._finalize)

    # -- ending -----------------------------------------------------------------------------------

    def _finalize(self) -> None:
        if self.done.done():
            return
        for name in list(self.timers):
            self._cancel_timer(name)
        for fd in list(self.open_fds):
            self._close_fd(fd)
        self._close_status()
        self._release()
        self.done.set_result(None)

    def _close_fd(self, fd: int) -> None:
        with contextlib.suppress(Exception):
            self.loop.remove_reader(fd)
        self.open_fds.discard(fd)

    def _close_status(self) -> None:
        if self.status_fd is None:
            return
        fd, self.status_fd = self.status_fd, None
        with contextlib.suppress(Exception):
            self.loop.remove_reader(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _ended(self) -> bool:
        """The shell's end is known (or, after a kill, the supervisor's)."""
        return self.exited or (self.proc_gone and (not self.supervised or self.killing))

    def _maybe_finalize(self) -> None:
        if self._ended() and not self.open_fds and not self.awaiting_holders:
            self._finalize()

    def _arm_grace(self) -> None:
        if not self.awaiting_holders:
            self._set_timer("grace", EXIT_STDIO_GRACE_S, self._finalize)

    def _on_drain_limit(self) -> None:
        """Output still arriving ``drain_limit`` s after the shell exited: stop reading there."""
        if self.done.done() or self.killing:
            return
        self.drain_cut = True
        self._cancel_timer("grace")
        if self.supervised and self.status_fd is not None and not self.proc_gone:
            self.awaiting_holders = True  # the supervisor kills the pipe holders and answers H n
            self._send(b"h")
            self._set_timer("holders", HOLDERS_ANSWER_S, self._finalize)
        else:
            self._finalize()

    # -- events -----------------------------------------------------------------------------------

    def _on_readable(self, fd: int) -> None:
        while True:
            try:
                data = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._close_fd(fd)
                self._maybe_finalize()
                return
            if self.done.done():
                return
            if not self.awaiting_holders:
                self.on_data(data)
            if self._ended():
                self._arm_grace()  # output still arriving after exit: keep reading
            if len(data) < READ_CHUNK:
                return

    def _on_status(self) -> None:
        fd = self.status_fd
        if fd is None:
            return
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close_status()
            return
        self.status_buf += data
        while b"\n" in self.status_buf:
            line, self.status_buf = self.status_buf.split(b"\n", 1)
            kind, _, value = line.decode("ascii", "replace").partition(" ")
            with contextlib.suppress(ValueError):
                if kind == "P":
                    self.shell_pid = int(value)
                elif kind == "F":
                    self.spawn_errno = int(value) or errno_mod.ENOENT
                elif kind == "X":
                    self._on_exit(int(value))
                elif kind == "H":
                    self.stopped_writers = int(value)
                    self.awaiting_holders = False
                    self._finalize()

    def _on_exit(self, code: int) -> None:
        if self.exited:
            return
        self.exited = True
        self.exit_code = code if code >= 0 else None  # killed by a signal: Node says null
        if self.done.done():
            return
        if not self.open_fds:
            self._finalize()
            return
        self._arm_grace()
        if not self.killing:
            self._set_timer("drain", self.drain_limit, self._on_drain_limit)

    def _on_proc_exit(self, code: int) -> None:
        self.proc_gone = True
        if not self.supervised:
            self._on_exit(code)
            return
        if self.done.done() or self.exited:
            return
        if self.status_fd is not None:
            self._on_status()  # a last report may be waiting
        if self.exited or self.done.done():
            return
        if self.awaiting_holders:
            self._finalize()
            return
        if self.killing:
            # the supervisor exits once everything it could reach is dead
            self._maybe_finalize()
            if not self.done.done():
                self._arm_grace()
            return
        # the command killed its supervisor (``kill -9 $PPID``, ``pkill -9 -f python``): carry on
        # as Pi would, waiting for the shell itself (its exit code is lost)
        self.supervisor_lost = True
        self._poll_shell()

    def _poll_shell(self) -> None:
        if self.done.done() or self.exited:
            return
        if self.shell_pid is None or _supervisor.process_gone(self.shell_pid):
            self._on_exit(-1)
            return
        self._set_timer("poll-shell", SHELL_POLL_S, self._poll_shell)

    def _wait_thread(self) -> None:
        code = self.proc.wait()
        self.proc_exited.set()
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            self.loop.call_soon_threadsafe(self._on_proc_exit, code)

    def _on_timeout(self) -> None:
        self.timed_out = True
        self._kill()

    async def run(self) -> int | None:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        pipes = [self.proc.stdout, self.proc.stderr]
        for pipe in pipes:
            fd = pipe.fileno()
            os.set_blocking(fd, False)
            self.open_fds.add(fd)
            self.loop.add_reader(fd, self._on_readable, fd)
        if self.status_fd is not None:
            os.set_blocking(self.status_fd, False)
            self.loop.add_reader(self.status_fd, self._on_status)
        if self.timeout_s is not None:
            self._set_timer("timeout", self.timeout_s, self._on_timeout)

        def on_abort() -> None:
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self._kill)

        remove = self.signal.add_listener(on_abort) if self.signal is not None else None
        threading.Thread(target=self._wait_thread, name=f"pi-bash-wait-{self.proc.pid}", daemon=True).start()
        try:
            await asyncio.shield(self.done)
        except asyncio.CancelledError:
            self._kill()
            raise
        finally:
            if remove is not None:
                remove()
            for name in list(self.timers):
                self._cancel_timer(name)
            for fd in list(self.open_fds):
                self._close_fd(fd)
            self._close_status()
            self._release()
            for pipe in pipes:
                with contextlib.suppress(OSError):
                    pipe.close()
        if self.signal is not None and self.signal.aborted:
            raise _ExecError("aborted")
        if self.timed_out:
            raise _ExecError(
                f"timeout:{js_number_to_string(self.timeout_raw if self.timeout_raw is not None else 0)}"
            )
        return self.exit_code


class _CappedOutputAccumulator(OutputAccumulator):
    """The bash tool's accumulator: the full-output temp file stops at ``max_file_bytes``, and a
    file that cannot be created or written (disk full, ``RLIMIT_FSIZE``, a read-only temp dir)
    stops being written instead of failing the call; ``file_error`` then says why."""

    def __init__(self, *, max_file_bytes: int, temp_file_prefix: str, tmpdir: str | None) -> None:
        super().__init__(temp_file_prefix=temp_file_prefix, tmpdir=tmpdir)
        self.max_file_bytes = max_file_bytes
        self.file_bytes = 0
        self.file_capped = False
        self.file_error: str | None = None

    def _failed(self, exc: OutputAccumulatorError) -> None:
        if self.file_error is None:
            cause = exc.__cause__
            self.file_error = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()

    def _ensure_temp_file(self) -> None:
        if self.file_error is not None:
            return
        try:
            super()._ensure_temp_file()
        except OutputAccumulatorError as exc:
            self._failed(exc)

    def _write(self, data: bytes) -> None:
        if self.file_error is not None:
            return
        room = self.max_file_bytes - self.file_bytes
        if len(data) > room:
            self.file_capped = True
            data = data[: max(room, 0)]
        if not data:
            return
        try:
            super()._write(data)
        except OutputAccumulatorError as exc:
            self._failed(exc)
            return
        self.file_bytes += len(data)

    def _flush(self) -> None:
        try:
            super()._flush()
        except OutputAccumulatorError as exc:
            self._failed(exc)

    def close(self) -> None:
        try:
            super().close()
        except OutputAccumulatorError as exc:
            self._failed(exc)


SpawnHook = Callable[[BashSpawnContext], BashSpawnContext]


class BashTool(AgentTool):
    """Pi's ``bash`` tool and its options (``commandPrefix``, ``shellPath``,
    ``exposeSessionEnvironment``, ``spawnHook``, custom ``operations``); ``tmpdir`` sets where the
    full-output files go (default: the system temp dir)."""

    def __init__(
        self,
        cwd: str,
        *,
        command_prefix: str | None = None,
        shell_path: str | None = None,
        expose_session_environment: bool = True,
        spawn_hook: SpawnHook | None = None,
        operations: BashOperations | None = None,
        tmpdir: str | None = None,
        full_output_max_bytes: int = DEFAULT_FULL_OUTPUT_MAX_BYTES,
        exit_drain_limit: float = EXIT_DRAIN_LIMIT_S,
        sandbox: bool | None = None,
    ) -> None:
        if (
            isinstance(full_output_max_bytes, bool)
            or not isinstance(full_output_max_bytes, int)
            or full_output_max_bytes < 0
        ):
            raise ToolError(f"full_output_max_bytes must be an int >= 0, got {full_output_max_bytes!r}")
        super().__init__(
            name="bash",
            label="bash",
            description=BASH_DESCRIPTION,
            parameters=BASH_PARAMETERS,
            prompt_snippet=BASH_PROMPT_SNIPPET,
            prompt_guidelines=BASH_PROMPT_GUIDELINES if expose_session_environment else None,
            cwd=cwd,
        )
        self.command_prefix = command_prefix
        self.expose_session_environment = expose_session_environment
        self.spawn_hook = spawn_hook
        self.operations: BashOperations = operations or LocalBashOperations(
            shell_path, exit_drain_limit=exit_drain_limit, sandbox=sandbox
        )
        self.tmpdir = tmpdir
        self.full_output_max_bytes = full_output_max_bytes
        self.temp_files: list[str] = []
        """Full-output files this tool wrote (see :meth:`cleanup_temp_files`)."""

    def cleanup_temp_files(self) -> list[str]:
        """Delete the full-output files this tool's calls wrote (regular files only); returns them."""
        removed: list[str] = []
        for path in list(self.temp_files):
            try:
                if stat_mod.S_ISREG(os.lstat(path).st_mode):
                    os.unlink(path)
                    removed.append(path)
            except FileNotFoundError:
                pass
            self.temp_files.remove(path)
        return removed

    def _spawn_context(self, command: str, cwd: str, ctx: ToolContext | None) -> BashSpawnContext:
        env = get_shell_env()
        for key in SESSION_ENV_KEYS:
            env.pop(key, None)
        if self.expose_session_environment and ctx is not None:
            if ctx.session_id:
                env["PI_SESSION_ID"] = ctx.session_id
            if ctx.session_file:
                env["PI_SESSION_FILE"] = ctx.session_file
            if ctx.model is not None:
                provider, model_id = model_field(ctx.model, "provider"), model_field(ctx.model, "id")
                if provider is not None:
                    env["PI_PROVIDER"] = str(provider)
                if model_id is not None:
                    env["PI_MODEL"] = str(model_id)
            if ctx.thinking_level:
                env["PI_REASONING_LEVEL"] = ctx.thinking_level
        context = BashSpawnContext(command=command, cwd=cwd, env=env)
        return self.spawn_hook(context) if self.spawn_hook is not None else context

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
        ctx: ToolContext | None = None,
    ) -> AgentToolResult:
        command = params.get("command")
        if not isinstance(command, str):
            raise ToolError(f"command must be a string, got {type(command).__name__}")
        if "\x00" in command:
            raise ToolError("command must not contain NUL characters")
        timeout = params.get("timeout")
        resolved = f"{self.command_prefix}\n{command}" if self.command_prefix else command
        spawn = self._spawn_context(resolved, self.effective_cwd(ctx), ctx)
        output = _CappedOutputAccumulator(
            max_file_bytes=self.full_output_max_bytes, temp_file_prefix="pi-bash", tmpdir=self.tmpdir
        )
        session_id = ctx.session_id if ctx is not None else None
        state = {"accepting": True, "dirty": False, "last": 0.0}
        timer: list[asyncio.TimerHandle] = []
        loop = asyncio.get_running_loop()

        def emit_update() -> None:
            if on_update is None or not state["dirty"]:
                return
            state["dirty"] = False
            state["last"] = time.monotonic()
            snap = output.snapshot(persist_if_truncated=True)
            details: dict[str, Any] = {}
            if snap.truncation.truncated:
                details["truncation"] = snap.truncation.to_dict()
            if snap.full_output_path is not None:
                details["fullOutputPath"] = snap.full_output_path
            on_update(
                AgentToolResult(content=[{"type": "text", "text": snap.content or ""}], details=details)
            )

        def clear_timer() -> None:
            while timer:
                timer.pop().cancel()

        def schedule_update() -> None:
            if on_update is None:
                return
            state["dirty"] = True
            delay = BASH_UPDATE_THROTTLE_S - (time.monotonic() - float(state["last"]))
            if delay <= 0:
                clear_timer()
                emit_update()
                return
            if not timer:

                def fire() -> None:
                    timer.clear()
                    emit_update()

                timer.append(loop.call_later(delay, fire))

        if on_update is not None:
            on_update(AgentToolResult(content=[], details=None))

        def handle_data(data: bytes) -> None:
            if not state["accepting"]:
                return
            output.append(data)
            schedule_update()

        def finish_output() -> AccumulatorSnapshot:
            state["accepting"] = False
            output.finish()
            clear_timer()
            emit_update()
            snap = output.snapshot(persist_if_truncated=True)
            output.close()
            return snap

        def format_output(
            snap: AccumulatorSnapshot, empty_text: str = "(no output)"
        ) -> tuple[str, dict[str, Any] | None]:
            t = snap.truncation
            text = snap.content or empty_text
            if not t.truncated:
                return text, None
            details: dict[str, Any] = {"truncation": t.to_dict()}
            if snap.full_output_path is not None:
                details["fullOutputPath"] = snap.full_output_path
            start_line = t.total_lines - t.output_lines + 1
            end_line = t.total_lines
            path = snap.full_output_path if snap.full_output_path is not None else "undefined"
            if output.file_error is not None:
                details["fullOutputError"] = output.file_error
                path = (
                    f"{snap.full_output_path} (incomplete: {output.file_error})"
                    if snap.full_output_path is not None
                    else f"not saved ({output.file_error})"
                )
            elif output.file_capped:
                details["fullOutputMaxBytes"] = output.max_file_bytes
                path += f" (holds the first {format_size(output.max_file_bytes)} only)"
            if t.last_line_partial:
                text += (
                    f"\n\n[Showing last {format_size(t.output_bytes)} of line {end_line} "
                    f"(line is {format_size(output.get_last_line_bytes())}). Full output: {path}]"
                )
            elif t.truncated_by == "lines":
                text += f"\n\n[Showing lines {start_line}-{end_line} of {t.total_lines}. Full output: {path}]"
            else:
                text += (
                    f"\n\n[Showing lines {start_line}-{end_line} of {t.total_lines} "
                    f"({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {path}]"
                )
            return text, details

        def append_status(text: str, status: str) -> str:
            return f"{text}\n\n{status}" if text else status

        def drain_notice(text: str, report: BashExecReport) -> str:
            if report.supervisor_lost:
                text += (
                    "\n\n[The command killed the bash tool's supervisor process: its exit code is unknown, "
                    "and processes that left its process group can no longer be stopped.]"
                )
            if not report.drain_cut:
                return text
            limit = js_number_to_string(getattr(self.operations, "exit_drain_limit", EXIT_DRAIN_LIMIT_S))
            if report.stopped_writers:
                what = f"the {report.stopped_writers} background process(es) still holding it were killed"
            else:
                what = "background processes still writing were cut off"
            return f"{text}\n\n[Output was still arriving {limit} seconds after the shell exited: reading stopped there and {what}.]"

        try:
            try:
                if isinstance(self.operations, LocalBashOperations):
                    report = await self.operations.exec_report(
                        spawn.command,
                        spawn.cwd,
                        on_data=handle_data,
                        signal=signal,
                        timeout=timeout,
                        env=spawn.env,
                    )
                else:
                    report = BashExecReport(
                        await self.operations.exec(
                            spawn.command,
                            spawn.cwd,
                            on_data=handle_data,
                            signal=signal,
                            timeout=timeout,
                            env=spawn.env,
                        )
                    )
                exit_code = report.exit_code
            except Exception as err:
                snap = finish_output()
                text, _ = format_output(snap, "")
                message = str(err)
                if message == "aborted":
                    raise ToolError(append_status(text, "Command aborted")) from None
                if message.startswith("timeout:"):
                    raise ToolError(
                        append_status(text, f"Command timed out after {message.split(':')[1]} seconds")
                    ) from None
                if isinstance(err, ToolError):
                    raise
                raise ToolError(message) from err
            snap = finish_output()
            text, details = format_output(snap)
            text = drain_notice(text, report)
            if exit_code != 0 and exit_code is not None:
                raise ToolError(append_status(text, f"Command exited with code {exit_code}"))
            return AgentToolResult(content=[{"type": "text", "text": text}], details=details)
        finally:
            clear_timer()
            if not output.closed:
                output.close()
            if output.full_output_path is not None:
                self.temp_files.append(output.full_output_path)
                track_tool_temp_file(output.full_output_path, session_id)


def create_bash_tool(
    cwd: str,
    *,
    command_prefix: str | None = None,
    shell_path: str | None = None,
    expose_session_environment: bool = True,
    spawn_hook: SpawnHook | None = None,
    operations: BashOperations | None = None,
    tmpdir: str | None = None,
    full_output_max_bytes: int = DEFAULT_FULL_OUTPUT_MAX_BYTES,
    exit_drain_limit: float = EXIT_DRAIN_LIMIT_S,
    sandbox: bool | None = None,
) -> BashTool:
    """Pi's ``createBashTool(cwd, options)``, plus pi_nb's ``full_output_max_bytes`` (the cap of the
    full-output file), ``exit_drain_limit`` (how long output is read after the shell exited) and
    ``sandbox`` (run commands where they cannot see the kernel; default: where available)."""
    return BashTool(
        cwd,
        command_prefix=command_prefix,
        shell_path=shell_path,
        expose_session_environment=expose_session_environment,
        spawn_hook=spawn_hook,
        operations=operations,
        tmpdir=tmpdir,
        full_output_max_bytes=full_output_max_bytes,
        exit_drain_limit=exit_drain_limit,
        sandbox=sandbox,
    )
