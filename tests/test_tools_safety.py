"""A tool call always ends and never fills the disk: faults injected for real.

* bash: commands that leave detached descendants holding the output pipe (``setsid``, ``nohup``, a
  double fork, a process calling ``setsid`` itself, one that stops the supervisor): the timeout and
  the abort end the call within 2 s and every process the command started is gone afterwards
  (checked in ``/proc`` from the PIDs the command wrote down); a normal exit with a writer left
  behind ends after the drain limit and kills the writer;
* the full-output file stops at its cap, survives ``RLIMIT_FSIZE``, and a session's temp files are
  removed with one call;
* read: FIFOs, sockets, devices and symlinks to them are refused at once; ``/proc`` files are read
  with a bound; the streamed read equals the in-memory one on every input (hypothesis, tiny chunks)
  and keeps memory flat on a large file;
* run_tool never raises for a tool failure, whatever the arguments (hypothesis).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_nb.errors import ToolError, UnknownToolError
from pi_nb.tools import AbortController, ToolContext, ToolOutcome, create_bash_tool, run_tool
from pi_nb.tools.base import cleanup_tool_temp_files, tool_temp_files
from pi_nb.tools.bash import supervisor_available
from pi_nb.tools.read import format_read_text, read_text_file

LINUX = sys.platform.startswith("linux")
needs_supervisor = pytest.mark.skipif(
    not supervisor_available(), reason="the subreaper supervisor needs Linux /proc"
)


def _gone(pid: int) -> bool:
    """The process does not exist any more (a zombie counts as gone: it runs nothing)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return data[data.rfind(b")") + 2 :].split()[0] in (b"Z", b"X")


def _wait_all_gone(pids: list[int], seconds: float = 2.0) -> list[int]:
    end = time.monotonic() + seconds
    while True:
        alive = [p for p in pids if not _gone(p)]
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.01)


def _pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(x) for x in path.read_text().split()]


def _kill_leftovers(pids: list[int]) -> None:
    for pid in pids:
        if not _gone(pid):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


SETSID_SELF = textwrap.dedent(
    """
    import os, sys, time
    os.setsid()
    if os.fork() == 0:
        os.setsid() if os.getpid() != os.getsid(0) else None
        with open("pids", "a") as f:
            f.write(f"{os.getpid()}\\n")
        while True:
            sys.stdout.write("x" * 1000 + "\\n")
            sys.stdout.flush()
            time.sleep(0.001)
    with open("pids", "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(60)
    """
)

# Each command writes the PIDs of what it started to ./pids, leaves at least one process that
# escaped its process group or session and still holds the output pipe, and never ends by itself.
RUNAWAY = {
    "setsid exec yes": "setsid sh -c 'echo $$ >> pids; sleep 0.1; exec yes' & echo started; sleep 60",
    "nohup yes": "nohup yes & echo $! >> pids; echo started; sleep 60",
    "double fork": "(sh -c 'yes & echo $! >> pids; sleep 60 & echo $! >> pids' &); echo started; sleep 60",
    "process calls setsid": f"{sys.executable} setsid_self.py & echo started; sleep 60",
    "setsid double fork daemon": "setsid sh -c '(sleep 60 & echo $! >> pids) & (yes & echo $! >> pids)' & echo started; sleep 60",
    "stops the supervisor": "kill -STOP $PPID; (setsid yes & echo $! >> pids); echo started; sleep 60",
}


def _prepare(tmp_path: Path) -> None:
    (tmp_path / "setsid_self.py").write_text(SETSID_SELF)


def _wait_for_pids(path: Path, n: int, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while len(_pids(path)) < n and time.monotonic() < end:
        time.sleep(0.01)


_EXPECTED_PIDS = {
    "setsid exec yes": 1,
    "nohup yes": 1,
    "double fork": 2,
    "process calls setsid": 2,
    "setsid double fork daemon": 2,
    "stops the supervisor": 1,
}


@needs_supervisor
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(RUNAWAY))
@pytest.mark.usefixtures("no_sandbox")
def test_timeout_ends_the_call_and_kills_every_process(tmp_path: Path, name: str) -> None:
    _prepare(tmp_path)
    timeout = 1.0
    started = time.monotonic()
    out = run_tool(
        "bash",
        str(tmp_path),
        {"command": RUNAWAY[name], "timeout": timeout},
        options={"bash": {"tmpdir": str(tmp_path), "full_output_max_bytes": 1 << 20}},
    )
    elapsed = time.monotonic() - started
    pids = _pids(tmp_path / "pids")
    try:
        assert out.is_error and out.text.endswith(f"Command timed out after {timeout:g} seconds"), out.text[
            -300:
        ]
        assert elapsed < timeout + 2.0, elapsed
        assert len(pids) >= _EXPECTED_PIDS[name], pids
        assert _wait_all_gone(pids, 0.5) == []
    finally:
        _kill_leftovers(pids)
    for log in tmp_path.glob("pi-bash-*.log"):
        assert log.stat().st_size <= 1 << 20


@needs_supervisor
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(RUNAWAY))
@pytest.mark.usefixtures("no_sandbox")
def test_abort_ends_the_call_and_kills_every_process(tmp_path: Path, name: str) -> None:
    _prepare(tmp_path)
    controller = AbortController()
    tool = create_bash_tool(str(tmp_path), tmpdir=str(tmp_path), full_output_max_bytes=1 << 20)
    aborted_at: list[float] = []

    def abort_when_started() -> None:
        _wait_for_pids(tmp_path / "pids", _EXPECTED_PIDS[name])
        time.sleep(0.2)
        aborted_at.append(time.monotonic())
        controller.abort()

    async def main() -> Any:
        threading.Thread(target=abort_when_started, daemon=True).start()
        return await asyncio.gather(
            tool.execute("call", {"command": RUNAWAY[name]}, controller.signal), return_exceptions=True
        )

    (err,) = asyncio.run(main())
    ended = time.monotonic()
    pids = _pids(tmp_path / "pids")
    try:
        assert isinstance(err, ToolError) and str(err).endswith("Command aborted"), err
        assert ended - aborted_at[0] < 2.0, ended - aborted_at[0]
        assert len(pids) >= _EXPECTED_PIDS[name], pids
        assert _wait_all_gone(pids, 0.5) == []
    finally:
        _kill_leftovers(pids)


@needs_supervisor
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "command",
    [
        "setsid sh -c 'echo $$ >> pids; exec yes' & echo started",
        "nohup yes & echo $! >> pids; echo started",
        "(sh -c 'yes & echo $! >> pids' &); echo started",
    ],
)
@pytest.mark.usefixtures("no_sandbox")
def test_a_writer_left_after_the_shell_exits_no_longer_blocks_the_call(tmp_path: Path, command: str) -> None:
    """Pi reads on while output keeps arriving after the shell exited, so a detached ``yes`` keeps
    the call running for ever. pi_nb stops reading after ``exit_drain_limit`` seconds, kills the
    processes still holding the pipe and says so."""
    started = time.monotonic()
    out = run_tool(
        "bash",
        str(tmp_path),
        {"command": command},
        options={
            "bash": {"tmpdir": str(tmp_path), "exit_drain_limit": 0.5, "full_output_max_bytes": 1 << 20}
        },
    )
    elapsed = time.monotonic() - started
    pids = _pids(tmp_path / "pids")
    try:
        assert not out.is_error
        assert elapsed < 0.5 + 2.0, elapsed
        assert out.text.endswith(
            "[Output was still arriving 0.5 seconds after the shell exited: reading stopped there and "
            "the 1 background process(es) still holding it were killed.]"
        ), out.text[-400:]
        assert pids and _wait_all_gone(pids, 0.5) == []
    finally:
        _kill_leftovers(pids)


@pytest.mark.timeout(30)
def test_the_drain_limit_also_holds_without_the_supervisor(tmp_path: Path) -> None:
    """Where there is no supervisor (macOS), the call still ends: reading stops at the limit and
    the pipe is closed (the writer then dies of SIGPIPE)."""
    from pi_nb.tools.bash import LocalBashOperations

    ops = LocalBashOperations(exit_drain_limit=0.3, supervise=False)
    tool = create_bash_tool(
        str(tmp_path), operations=ops, tmpdir=str(tmp_path), full_output_max_bytes=1 << 16
    )
    started = time.monotonic()
    out = asyncio.run(tool.execute("c", {"command": "setsid sh -c 'echo $$ > pid; exec yes' & echo started"}))
    assert time.monotonic() - started < 2.3
    assert out.content[0]["text"].endswith(
        "[Output was still arriving 0.3 seconds after the shell exited: reading stopped there and "
        "background processes still writing were cut off.]"
    )
    pids = _pids(tmp_path / "pid")
    try:
        assert _wait_all_gone(pids, 2.0) == []  # SIGPIPE
    finally:
        _kill_leftovers(pids)


def test_output_after_exit_within_the_drain_limit_is_kept(tmp_path: Path) -> None:
    """Pi's rule (regression 5303) still holds inside the limit: late output is not lost."""
    out = run_tool(
        "bash",
        str(tmp_path),
        {"command": "(for i in 1 2 3; do sleep 0.03; echo late$i; done) & echo early"},
        options={"bash": {"tmpdir": str(tmp_path)}},
    )
    assert out.text == "early\nlate1\nlate2\nlate3\n"


@needs_supervisor
def test_quiet_background_processes_with_their_own_output_survive_a_normal_exit(tmp_path: Path) -> None:
    """A server started in the background (output redirected) keeps running, as in Pi."""
    out = run_tool(
        "bash", str(tmp_path), {"command": "setsid sleep 30 > /dev/null 2>&1 & echo $! > pid; echo ok"}
    )
    pid = _pids(tmp_path / "pid")[0]
    try:
        assert out.text == "ok\n"
        time.sleep(0.2)
        assert not _gone(pid)
    finally:
        _kill_leftovers([pid])


# --- the full-output file ------------------------------------------------------------------------------


def test_the_full_output_file_stops_at_its_cap(tmp_path: Path) -> None:
    out = run_tool(
        "bash",
        str(tmp_path),
        {"command": "seq 1 100000"},
        options={"bash": {"tmpdir": str(tmp_path), "full_output_max_bytes": 10_000}},
    )
    assert not out.is_error
    path = Path(out.details["fullOutputPath"])
    expected = "".join(f"{i}\n" for i in range(1, 100001)).encode()
    assert path.read_bytes() == expected[:10_000]
    assert out.details["fullOutputMaxBytes"] == 10_000
    assert out.text.endswith(
        f"[Showing lines 98001-100000 of 100000. Full output: {path} (holds the first 9.8KB only)]"
    )
    # the shown tail is still the true tail of the output
    assert out.text.startswith("98001\n")


def test_the_default_cap_is_256_mib() -> None:
    from pi_nb.tools.bash import DEFAULT_FULL_OUTPUT_MAX_BYTES

    assert create_bash_tool(".").full_output_max_bytes == DEFAULT_FULL_OUTPUT_MAX_BYTES == 256 * 1024 * 1024
    with pytest.raises(ToolError, match="full_output_max_bytes"):
        create_bash_tool(".", full_output_max_bytes=-1)


RLIMIT_SCRIPT = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    from pi_nb.tools import run_tool
    out = run_tool("bash", sys.argv[1], {"command": "seq 1 100000"}, options={"bash": {"tmpdir": sys.argv[1]}})
    print(json.dumps({"error": out.is_error, "text": out.text[-1000:], "details": out.details}))
    """
)


@pytest.mark.skipif(not LINUX, reason="RLIMIT_FSIZE semantics")
def test_a_full_disk_stops_the_file_not_the_call(tmp_path: Path) -> None:
    """``RLIMIT_FSIZE`` makes every write past 100 KB fail (EFBIG), as a full disk would: the
    call still answers with the tail, and the notice says the file is incomplete."""
    proc = subprocess.run(
        [sys.executable, "-c", RLIMIT_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=60,
    )
    report = json.loads(proc.stdout)
    assert not report["error"]
    path = report["details"]["fullOutputPath"]
    assert report["details"]["fullOutputError"] == "File too large"
    assert report["text"].endswith(
        f"100000\n\n[Showing lines 98001-100000 of 100000. Full output: {path} (incomplete: File too large)]"
    )
    assert os.path.getsize(report["details"]["fullOutputPath"]) <= 100_000


def test_a_session_s_temp_files_are_removed_with_one_call(tmp_path: Path) -> None:
    ctx = ToolContext(session_id="session-cleanup-test")
    paths = []
    for _ in range(2):
        out = run_tool(
            "bash",
            str(tmp_path),
            {"command": "seq 1 3000"},
            ctx=ctx,
            options={"bash": {"tmpdir": str(tmp_path)}},
        )
        paths.append(out.details["fullOutputPath"])
    other = run_tool(
        "bash",
        str(tmp_path),
        {"command": "seq 1 3000"},
        ctx=ToolContext(session_id="another-session"),
        options={"bash": {"tmpdir": str(tmp_path)}},
    ).details["fullOutputPath"]
    assert tool_temp_files("session-cleanup-test") == paths
    # a tracked path replaced by a symlink is not followed: its target stays
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.unlink(paths[1])
    os.symlink(victim, paths[1])
    assert cleanup_tool_temp_files("session-cleanup-test") == [paths[0]]
    assert not os.path.exists(paths[0]) and victim.read_text() == "keep me"
    assert tool_temp_files("session-cleanup-test") == []
    assert cleanup_tool_temp_files("session-cleanup-test") == []
    assert os.path.exists(other)
    assert cleanup_tool_temp_files("another-session") == [other]


def test_a_tool_cleans_its_own_temp_files(tmp_path: Path) -> None:
    tool = create_bash_tool(str(tmp_path), tmpdir=str(tmp_path))
    result = asyncio.run(tool.execute("c", {"command": "seq 1 3000"}))
    path = result.details["fullOutputPath"]  # type: ignore[index]
    assert tool.temp_files == [path]
    assert tool.cleanup_temp_files() == [path] and not os.path.exists(path)
    assert tool.temp_files == []


# --- read: special files -------------------------------------------------------------------------------


def _read(tmp_path: Path, path: str, **params: Any) -> ToolOutcome:
    return run_tool("read", str(tmp_path), {"path": path, **params})


def _special_paths(tmp_path: Path) -> dict[str, tuple[str, str]]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    (tmp_path / "to_zero").symlink_to("/dev/zero")
    (tmp_path / "to_fifo").symlink_to(fifo)
    found = {
        "fifo": (str(fifo), "a FIFO (named pipe)"),
        "socket": (str(sock_path), "a socket"),
        "/dev/zero": ("/dev/zero", "a character device"),
        "/dev/urandom": ("/dev/urandom", "a character device"),
        "/dev/null": ("/dev/null", "a character device"),
        "symlink to /dev/zero": (str(tmp_path / "to_zero"), "a character device"),
        "symlink to a fifo": (str(tmp_path / "to_fifo"), "a FIFO (named pipe)"),
    }
    for entry in sorted(os.scandir("/dev"), key=lambda e: e.name):
        try:
            if stat.S_ISBLK(os.stat(entry.path).st_mode):
                found["block device"] = (entry.path, "a block device")
                break
        except OSError:
            continue
    return found


@pytest.mark.timeout(30)
def test_special_files_are_refused_at_once(tmp_path: Path) -> None:
    for label, (path, kind) in _special_paths(tmp_path).items():
        started = time.monotonic()
        out = _read(tmp_path, path)
        assert time.monotonic() - started < 1.0, label
        assert out.is_error, label
        # a symlink is named as given (the model knows that path), with the kind of its target
        assert out.text.startswith(f"Cannot read {path}: it is {kind}, not a regular file."), (
            label,
            out.text,
        )


def test_a_directory_keeps_pi_s_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert _read(tmp_path, "d").text == "EISDIR: illegal operation on a directory, read"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_proc_files_are_read_with_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pi_nb.tools.read as read_module

    out = _read(tmp_path, "/proc/self/status")
    assert not out.is_error and out.text.startswith("Name:")
    assert os.stat("/proc/self/status").st_size == 0
    monkeypatch.setattr(read_module, "PSEUDO_FILE_MAX_BYTES", 64)
    out = _read(tmp_path, "/proc/self/status")
    assert out.text.endswith(
        "\n\n[/proc/self/status reports a size of 0 (a /proc or /sys file, or similar): only its first 64B were read.]"
    )
    assert len(out.text.split("\n\n[")[0].encode()) <= 64


def test_a_file_over_2_gib_is_refused_without_reading(tmp_path: Path) -> None:
    big = tmp_path / "sparse.bin"
    with open(big, "wb") as f:
        f.truncate(2 * 1024**3 + 10)
    started = time.monotonic()
    out = _read(tmp_path, "sparse.bin")
    assert time.monotonic() - started < 1.0
    assert out.is_error and out.text.startswith(f"File size ({2 * 1024**3 + 10}) is greater than 2 GiB.")


# --- read: streaming equals the in-memory answer --------------------------------------------------------

_piece = st.sampled_from(["a", "bc", "\n", "\n", "\u00e9", "\u20ac", "\U0001f600", "\r\n", "x" * 30])
_raw_piece = st.one_of(
    _piece.map(lambda s: s.encode()),
    st.sampled_from([b"\xff", b"\xe2\x82", b"\xc3", b"\xf0\x9f\x98", b"\x00", b"\x80"]),
)


def _in_memory(data: bytes, offset: Any, limit: Any) -> tuple[str, Any]:
    try:
        return format_read_text(data.decode("utf-8", errors="replace"), "f", offset, limit)
    except ToolError as exc:
        return "error", str(exc)


def _streamed(data: bytes, offset: Any, limit: Any, chunk: int) -> tuple[str, Any]:
    try:
        return read_text_file(io.BytesIO(data), "f", offset, limit, max_read=len(data), chunk_size=chunk)
    except ToolError as exc:
        return "error", str(exc)


_number = st.one_of(
    st.none(),
    st.integers(-5, 40),
    st.floats(-5, 40).map(lambda x: round(x, 1)),
    st.sampled_from([float("inf"), float("-inf"), 10**9]),
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_raw_piece, max_size=60).map(b"".join), _number, _number, st.integers(1, 9))
def test_streamed_read_equals_in_memory_read(data: bytes, offset: Any, limit: Any, chunk: int) -> None:
    assert _streamed(data, offset, limit, chunk) == _in_memory(data, offset, limit)


@pytest.mark.parametrize(
    ("lines", "width", "offset", "limit"),
    [
        (3000, 10, None, None),  # line limit
        (2000, 10, None, None),
        (2001, 10, None, None),
        (600, 105, 10, None),  # byte limit
        (600, 105, 10, 100),
        (5, 60_000, None, None),  # first line over 50 KB
        (5, 60_000, 2, None),
        (3000, 10, 2999, None),
        (3000, 10, 1500, -20),  # negative limit: counted from the end
    ],
)
def test_streamed_read_equals_in_memory_read_at_the_limits(
    lines: int, width: int, offset: Any, limit: Any
) -> None:
    data = "".join(f"{i:0{width}d}\u00e9\n" for i in range(lines)).encode()
    for chunk in (7, 4096, 1 << 20):
        assert _streamed(data, offset, limit, chunk) == _in_memory(data, offset, limit)


READ_MEMORY_SCRIPT = textwrap.dedent(
    """
    import json, sys
    def hwm():
        with open("/proc/self/status") as f:
            return int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) * 1024
    from pi_nb.tools import run_tool
    path = sys.argv[1]
    with open(path, "wb") as f:
        line = b"0123456789abcdefghi\\n"
        block = line * ((1 << 20) // len(line))
        for _ in range(int(sys.argv[2])):
            f.write(block)
    base = hwm()
    out = run_tool("read", "/", {"path": path})
    print(json.dumps({"above": hwm() - base, "tail": out.text[-200:]}))
    """
)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc VmHWM")
def test_reading_a_large_file_keeps_memory_flat(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", READ_MEMORY_SCRIPT, str(tmp_path / "big.txt"), "150"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=120,
    )
    report = json.loads(proc.stdout)
    assert re.search(r"\[Showing lines 1-2000 of \d+\. Use offset=2001 to continue\.\]$", report["tail"])
    assert report["above"] < 32 * 1024 * 1024, report  # the file is about 150 MB


# --- run_tool never raises -----------------------------------------------------------------------------

_hostile = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from(["\x00", "\udcff", "\udcff.txt", "a\x00b", "-rf", "*", "**/*", "(", "[", "\\"]),
)


def _targets(root: Path) -> list[str]:
    """Paths inside ``root`` of every kind a tool can meet (created once)."""
    if not (root / "dir").exists():
        (root / "dir").mkdir()
        (root / "file.txt").write_text("one\ntwo\n")
        (root / "bad.txt").write_bytes(b"\xff\xfe\x00bad\n")
        os.mkfifo(root / "fifo")
        (root / "to_zero").symlink_to("/dev/zero")
        (root / "loop").symlink_to("loop")
        locked = root / "locked.txt"
        locked.write_text("secret\n")
        locked.chmod(0)
    return [*_MUTABLE, "fifo", "to_zero"]


_MUTABLE = ["dir", "file.txt", "bad.txt", "loop", "locked.txt", "missing.txt", "dir/../file.txt", ""]


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    _targets(root)
    return root


_read_only_tools = {
    "read": ["path", "offset", "limit"],
    "ls": ["path", "limit"],
    "grep": ["pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"],
    "find": ["pattern", "path", "limit"],
}


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.sampled_from(sorted(_read_only_tools)),
    st.data(),
    st.booleans(),
)
@pytest.mark.timeout(300)
def test_run_tool_never_raises_for_hostile_arguments(
    fuzz_root: Path, name: str, data: st.DataObject, validate: bool
) -> None:
    _targets(fuzz_root)
    # grep hands an explicit path to ripgrep, which reads a FIFO or /dev/zero for ever (as Pi's grep
    # does): those two stay out of grep's paths until grep checks them (reported separately)
    paths = st.sampled_from(_MUTABLE if name == "grep" else _targets(fuzz_root))
    params: dict[str, Any] = {}
    for key in _read_only_tools[name]:
        if data.draw(st.booleans()):
            params[key] = data.draw(paths if key == "path" and data.draw(st.booleans()) else _hostile)
    args: Any = params if data.draw(st.integers(0, 9)) else data.draw(_hostile)
    started = time.monotonic()
    out = run_tool(name, str(fuzz_root), args, validate=validate)
    assert isinstance(out, ToolOutcome)
    assert time.monotonic() - started < 20
    if out.is_error:
        assert out.text and out.details == {}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.data(), st.booleans())
@pytest.mark.timeout(300)
def test_run_tool_never_raises_for_hostile_mutations(
    fuzz_root: Path, data: st.DataObject, validate: bool
) -> None:
    """write/edit and bash with hostile values where it is safe to let them run: paths stay inside
    the fuzz directory and bash only ever runs ``true``-like commands or gets non-strings."""
    _targets(fuzz_root)
    # not the FIFO or /dev/zero: write and edit would block on them, as Pi's do (reported separately)
    safe_paths = st.sampled_from([*_MUTABLE, "new.txt", "dir/new.txt"])
    name = data.draw(st.sampled_from(["write", "edit", "bash"]))
    if name == "write":
        params = {
            "path": data.draw(st.one_of(safe_paths, _hostile.filter(lambda v: not isinstance(v, str)))),
            "content": data.draw(_hostile),
        }
    elif name == "edit":
        params = {
            "path": data.draw(st.one_of(safe_paths, _hostile.filter(lambda v: not isinstance(v, str)))),
            "edits": data.draw(
                st.one_of(
                    _hostile,
                    st.lists(st.dictionaries(st.sampled_from(["oldText", "newText"]), _hostile), max_size=2),
                )
            ),
        }
    else:
        params = {
            "command": data.draw(
                st.one_of(
                    st.sampled_from(["true", "echo ok", "printf '\\377'", "a\x00b"]),
                    _hostile.filter(lambda v: not isinstance(v, str)),
                )
            ),
            "timeout": data.draw(_hostile),
        }
    out = run_tool(name, str(fuzz_root), params, validate=validate)
    assert isinstance(out, ToolOutcome)
    if out.is_error:
        assert out.text and out.details == {}


def test_the_caller_s_own_setup_errors_still_raise(tmp_path: Path) -> None:
    with pytest.raises(UnknownToolError):
        run_tool("nope", str(tmp_path), {})
    with pytest.raises(ToolError, match="Invalid options for the bash tool"):
        run_tool("bash", str(tmp_path), {"command": "true"}, options={"bash": {"no_such_option": 1}})


def test_a_tool_bug_becomes_an_error_result(tmp_path: Path) -> None:
    from pi_nb.tools import AgentTool, execute_tool_call

    class Broken(AgentTool):
        async def execute(self, *args: Any, **kwargs: Any) -> Any:
            raise ZeroDivisionError("division by zero")

    class Wrong(AgentTool):
        async def execute(self, *args: Any, **kwargs: Any) -> Any:
            return "not a result"

    schema = {"type": "object", "properties": {}}
    out = asyncio.run(execute_tool_call(Broken("b", "b", "d", schema), "c", {}))
    assert out.is_error and out.text == "division by zero" and out.stage == "execute"
    out = asyncio.run(execute_tool_call(Wrong("w", "w", "d", schema), "c", {}))
    assert out.is_error and out.text == "Tool w returned str, not a tool result"


@needs_supervisor
def test_the_supervisor_is_not_named_python_and_ignores_sigterm(tmp_path: Path) -> None:
    """``pkill python`` / ``killall python`` (a model stopping its own server) match the process name
    and send SIGTERM: neither reaches the supervisor."""
    out = run_tool(
        "bash", str(tmp_path), {"command": "cat /proc/$PPID/comm; kill -TERM $PPID; sleep 0.2; echo alive"}
    )
    assert out.text == "pi-nb-bash\nalive\n" and not out.is_error


@needs_supervisor
@pytest.mark.timeout(30)
@pytest.mark.usefixtures("no_sandbox")
def test_a_command_that_kills_its_supervisor_still_ends(tmp_path: Path) -> None:
    out = run_tool("bash", str(tmp_path), {"command": "kill -9 $PPID; sleep 0.2; echo after"})
    assert not out.is_error
    assert out.text == (
        "after\n\n\n[The command killed the bash tool's supervisor process: its exit code is unknown, "
        "and processes that left its process group can no longer be stopped.]"
    )
    started = time.monotonic()
    out = run_tool(
        "bash", str(tmp_path), {"command": "kill -9 $PPID; sleep 30 & echo $! > pid; wait", "timeout": 0.5}
    )
    assert out.is_error and out.text.endswith("Command timed out after 0.5 seconds")
    assert time.monotonic() - started < 2.5
    assert _wait_all_gone(_pids(tmp_path / "pid"), 1.0) == []


# --- the siblings of read: grep, edit and write refuse special files too --------------------------


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("tool", "make_params"),
    [
        ("grep", lambda p: {"pattern": "x", "path": p}),
        ("edit", lambda p: {"path": p, "edits": [{"oldText": "a", "newText": "b"}]}),
        ("write", lambda p: {"path": p, "content": "hello"}),
    ],
)
def test_grep_edit_and_write_refuse_a_fifo_at_once(tmp_path: Path, tool: str, make_params: Any) -> None:
    """A FIFO with no peer would block each of them forever (Pi's do block)."""
    import time as _time

    from pi_nb.tools import run_tool

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    start = _time.monotonic()
    outcome = run_tool(tool, str(tmp_path), make_params(str(fifo)))
    assert outcome.is_error and "FIFO" in outcome.text, outcome.text
    assert _time.monotonic() - start < 5


@pytest.mark.timeout(20)
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_grep_refuses_a_device_and_write_never_writes_one(tmp_path: Path) -> None:
    from pi_nb.tools import run_tool

    outcome = run_tool("grep", str(tmp_path), {"pattern": "x", "path": "/dev/zero"})
    assert outcome.is_error and "character device" in outcome.text
    link = tmp_path / "looks-like-a-file.txt"
    link.symlink_to("/dev/null")
    outcome = run_tool("write", str(tmp_path), {"path": str(link), "content": "data"})
    assert outcome.is_error and "character device" in outcome.text
    assert link.is_symlink()
