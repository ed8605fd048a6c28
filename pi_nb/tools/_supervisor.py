"""The process supervisor of the bash tool on Linux (private; also run as a script).

A command's processes can leave its process group and session (``setsid``, a double fork,
``nohup``), so killing the group does not reach them, and one that keeps the output pipe open keeps
a reader waiting for ever. The bash tool therefore does not start the shell itself: it starts this
file as a small Python process (``python -I -S _supervisor.py STATUS_FD SHELL ARGS...``) that

* marks itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, unprivileged), so every
  process the command starts stays its descendant: an orphan is re-parented to the supervisor,
  not to PID 1, whatever session or group it moved to;
* forks the shell (its own session, stdin ``/dev/null``, stdout/stderr the tool's pipes, the signal
  dispositions Python changed restored), then lets go of the pipes itself;
* reaps every child it is given and reports on ``STATUS_FD``: ``P {pid}`` (the shell started),
  ``F {errno}`` (the shell could not be executed), ``X {code}`` (the shell exited; a negative code is
  the signal that killed it), ``H {n}`` (answer to ``h``);
* obeys one-letter commands on stdin: ``k`` kills every descendant (``SIGKILL``, repeated until none
  is left, new forks included) and exits; ``h`` kills the descendants that still hold the output
  pipes open; ``q`` exits and leaves the remaining descendants alone (they move up to the next
  subreaper or PID 1). End of file on stdin without ``q`` means the tool's process went away: kill
  everything, as for ``k``.

It names itself ``pi-nb-bash`` (so ``pkill python`` does not match it) and ignores SIGINT, SIGTERM
and SIGHUP: only the tool decides when the command's processes die. A command can still
``SIGKILL`` it (``kill -9 $PPID``); the tool then waits for the shell as Pi does and says so.

The module only uses the standard library and never imports pi_nb, so it starts in about 10 ms.
:func:`descendants` and :func:`kill_tree` are also used by the tool itself when the supervisor does
not answer (it was stopped or killed by the command).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

# not typing.TYPE_CHECKING: importing typing would double the supervisor's start-up time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS_DEADLINE_S = 1.5


def _stat(pid: str) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process from ``/proc/{pid}/stat``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # the command name is in parentheses and may itself contain ")" or spaces
    fields = data[data.rfind(b")") + 2 :].split()
    if len(fields) < 2:
        return None
    try:
        return int(fields[1]), fields[0].decode("ascii", "replace")
    except ValueError:
        return None


def process_gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (it does not exist, or it is a zombie)."""
    info = _stat(str(pid))
    return info is None or info[1] in ("Z", "X")


def descendants(root: int) -> tuple[list[int], list[int]]:
    """(live, zombie) descendants of ``root`` from one walk of ``/proc`` (parent links)."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return [], []
    for name in names:
        if not name.isdigit():
            continue
        info = _stat(name)
        if info is None:
            continue
        pid = int(name)
        children.setdefault(info[0], []).append(pid)
        states[pid] = info[1]
    live: list[int] = []
    zombies: list[int] = []
    stack = list(children.get(root, ()))
    seen = {root}
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        (zombies if states.get(pid) in ("Z", "X") else live).append(pid)
        stack.extend(children.get(pid, ()))
    return live, zombies


def holds_pipe(pid: int, inodes: frozenset[str]) -> bool:
    """Whether process ``pid`` has one of the pipes ``pipe:[inode]`` among its open files."""
    base = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(base)
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"{base}/{fd}")
        except OSError:
            continue
        if target in inodes:
            return True
    return False


def _reap_all() -> list[tuple[int, int]]:
    out = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == 0:
            break
        out.append((pid, status))
    return out


def kill_tree(
    root: int,
    *,
    only_holding: frozenset[str] | None = None,
    deadline_s: float = KILL_ROUNDS_DEADLINE_S,
    reap: Callable[[], None] | None = None,
) -> int:
    """``SIGKILL`` every live descendant of ``root`` (or only those holding one of the pipes
    ``only_holding``), walking again until none is left: a process forked between two walks is
    found by the next one. Returns how many processes were signalled."""
    killed: set[int] = set()
    end = time.monotonic() + deadline_s
    while True:
        live, _ = descendants(root)
        if only_holding is not None:
            live = [p for p in live if holds_pipe(p, only_holding)]
        targets = [p for p in live if p != os.getpid()]
        if not targets:
            break
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            killed.add(pid)
        if reap is not None:
            reap()
        if time.monotonic() > end:
            break
        time.sleep(0.002)
    if reap is not None:
        reap()
    return len(killed)


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return -1


def main(argv: list[str]) -> int:  # pragma: no cover - runs in the supervisor process
    status_fd = int(argv[1])
    command = argv[2:]
    os.set_inheritable(status_fd, False)

    def report(line: str) -> None:
        try:
            os.write(status_fd, (line + "\n").encode())
        except OSError:
            pass

    subreaper = False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        # a name that ``pkill python`` / ``killall python`` do not match (it also ignores SIGTERM)
        libc.prctl(PR_SET_NAME, b"pi-nb-bash", 0, 0, 0)
    except (OSError, AttributeError):
        subreaper = False
    if not subreaper:
        report("E subreaper")
    pipes = frozenset(f"pipe:[{os.fstat(fd).st_ino}]" for fd in (1, 2))

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # only the tool decides when its processes die

    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.execvp(command[0], command)
        except OSError as exc:
            report(f"F {exc.errno or 0}")
        os._exit(127)

    # the shell has the pipes; the supervisor lets go of them so their end means the command's end
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    report(f"P {pid}")
    shell_done = False

    def reap() -> None:
        nonlocal shell_done
        for child, status in _reap_all():
            if child == pid and not shell_done:
                shell_done = True
                report(f"X {_exit_code(status)}")

    while True:
        reap()
        try:
            ready, _, _ = select.select([0, wake_r], [], [], 1.0)
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except OSError:
                pass
        if 0 not in ready:
            continue
        try:
            data = os.read(0, 64)
        except InterruptedError:
            continue
        except OSError:
            data = b""
        if b"q" in data:
            return 0
        if b"h" in data:
            n = kill_tree(os.getpid(), only_holding=pipes, reap=reap)
            report(f"H {n}")
        if b"k" in data or not data:
            kill_tree(os.getpid(), reap=reap)
            return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv))
