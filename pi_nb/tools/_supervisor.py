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

With ``--sandbox`` (the first argument) the command cannot see the kernel's process: before
forking, the supervisor moves into a new *user* namespace (its uid and gid mapped to themselves,
so files keep their owners) and makes the next child the first process of a new *PID* namespace.
That child (the namespace's ``init``) takes a private mount namespace, mounts a fresh ``/proc`` of
the new PID namespace, forks the shell and reaps every orphan; it reports the shell's start and
exit through a pipe, and stays as long as a background process of the command lives. Inside,
``/proc`` only lists the command's own processes: ``/proc/<kernel pid>/environ`` does not exist and
``/proc/$PPID`` is that ``init``, whose environment is the command's own. The network, the file
system and the uid are unchanged. ``--probe`` checks that all of this works here (exit code 0) and
is run once by the tool before it uses the sandbox. The supervisor itself stays in the outer PID
namespace, so the pids it reports and kills are the tool's.

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
    from typing import Any

PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS_DEADLINE_S = 1.5
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38


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


def children_of(pid: int) -> list[int]:
    """The direct children of ``pid`` (``/proc/{pid}/task/{pid}/children``, else a walk of ``/proc``)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pass
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if name.isdigit():
            info = _stat(name)
            if info is not None and info[0] == pid:
                out.append(int(name))
    return out


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def enter_user_and_pid_namespaces(libc: Any) -> str | None:
    """unshare(user + PID) with the uid and gid mapped to themselves; the reason when it fails."""
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return f"unshare: {os.strerror(_errno())}"
    try:
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")
    except OSError as exc:
        return f"id maps: {exc.strerror}"
    return None


def mount_private_proc(libc: Any) -> str | None:
    """In the namespace's first process: a private mount namespace with its own ``/proc``."""
    if libc.unshare(CLONE_NEWNS) != 0:
        return f"unshare mount: {os.strerror(_errno())}"
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"mount private: {os.strerror(_errno())}"
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
        return f"mount proc: {os.strerror(_errno())}"
    # no capability survives into the command (not even for uid 0): it cannot unmount this /proc
    # to find the outer one beneath, nor mount anything else; a nested namespace it makes copies
    # these mounts locked
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs: {os.strerror(_errno())}"
    return None


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return -1


def _probe() -> int:  # pragma: no cover - runs in a probe process
    """Exit 0 when the sandbox works here: namespaces, the id maps, a private ``/proc``."""
    try:
        libc = _libc()
    except OSError:
        return 2
    if enter_user_and_pid_namespaces(libc) is not None:
        return 3
    pid = os.fork()
    if pid == 0:
        ok = mount_private_proc(libc) is None and os.getpid() == 1 and os.listdir("/proc").count("1") == 1
        ok = ok and not any(n.isdigit() and n not in ("1",) for n in os.listdir("/proc"))
        os._exit(0 if ok else 4)
    _, status = os.waitpid(pid, 0)
    return _exit_code(status)


def _init(libc: Any, status_fd: int, command: list[str], report_w: int) -> None:  # pragma: no cover
    """The first process of the command's PID namespace (see the module docstring); never returns."""

    def say(line: str) -> None:
        try:
            os.write(report_w, (line + "\n").encode())
        except OSError:
            pass

    try:
        os.close(status_fd)
        problem = mount_private_proc(libc)
        if problem is not None:
            say(f"F {errno_of(problem)}")
            os._exit(127)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        shell = os.fork()
        if shell == 0:
            try:
                os.setsid()  # report_w is close-on-exec: it stays open only to report a failed exec
                for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.execvp(command[0], command)
            except OSError as exc:
                say(f"F {exc.errno or 0}")
            os._exit(127)
        # init lets go of the command's pipes and of the supervisor's stdin
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        say("S")
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if pid == shell:
                say(f"X {_exit_code(status)}")
    finally:
        os._exit(0)


def errno_of(problem: str) -> int:
    import errno

    return errno.EPERM if "ermission" in problem else errno.EINVAL


def main(argv: list[str]) -> int:  # pragma: no cover - runs in the supervisor process
    if argv[1:2] == ["--probe"]:
        return _probe()
    sandbox = argv[1:2] == ["--sandbox"]
    if sandbox:
        argv = argv[:1] + argv[2:]
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

    if sandbox:
        return _sandboxed(status_fd, command, report, pipes, wake_r)

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
        if _command(pipes, reap, report):
            return 0


def _command(  # pragma: no cover - runs in the supervisor process
    pipes: frozenset[str], reap: Callable[[], None] | None, report: Callable[[str], None]
) -> bool:
    """Read and carry out the parent's command on stdin: ``q`` quit, ``h`` kill the processes
    holding the output pipes, ``k`` (or the parent gone) kill the whole tree. True: exit now."""
    try:
        data = os.read(0, 64)
    except InterruptedError:
        return False
    except OSError:
        data = b""
    if b"q" in data:
        return True
    if b"h" in data:
        n = kill_tree(os.getpid(), only_holding=pipes, reap=reap)
        report(f"H {n}")
    if b"k" in data or not data:
        kill_tree(os.getpid(), reap=reap)
        return True
    return False


def _sandboxed(  # pragma: no cover - runs in the supervisor process
    status_fd: int, command: list[str], report: Callable[[str], None], pipes: frozenset[str], wake_r: int
) -> int:
    """:func:`main` with the command in its own namespaces; the same reports and commands."""
    libc = _libc()
    problem = enter_user_and_pid_namespaces(libc)
    if problem is not None:
        report(f"F {errno_of(problem)}")
        return 127
    init_r, init_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(init_r)
        _init(libc, status_fd, command, init_w)
    os.close(init_w)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    shell_done = False
    init_done = False
    buf = b""

    def reap() -> None:
        nonlocal shell_done, init_done
        for child, status in _reap_all():
            if child == init:
                init_done = True
                if not shell_done:  # init ended without a word (cannot happen but by a kill)
                    shell_done = True
                    report(f"X {_exit_code(status)}")

    readers = [0, wake_r, init_r]
    while True:
        reap()
        try:
            ready, _, _ = select.select(readers, [], [], 1.0)
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except OSError:
                pass
        if init_r in ready:
            try:
                data = os.read(init_r, 4096)
            except OSError:
                data = b""
            if not data:
                readers.remove(init_r)
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                kind, _, value = line.decode("ascii", "replace").partition(" ")
                if kind == "S":
                    kids = children_of(init)
                    report(f"P {kids[0] if kids else init}")
                elif kind == "F":
                    report(f"F {value}")
                elif kind == "X" and not shell_done:
                    shell_done = True
                    report(f"X {value}")
        if 0 not in ready:
            continue
        if _command(pipes, reap, report):
            return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv))
