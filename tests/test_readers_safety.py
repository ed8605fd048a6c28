"""Every reader of a user- or model-named file goes through the one file-kind check, with a bound,
and nothing a model writes loads anything when shown.

Real faults, no mocks of the file system: FIFOs (``os.mkfifo``), links to ``/dev/zero``, links that
loop, files that grow while they are read, settings nested 100,000 levels. Each test has a timeout,
so a reader that blocks again fails here instead of hanging the run. The session files Pi opens
with missing or repeated ids are read the way Pi reads them (goldens recorded from Pi 0.85.0 by
tests/golden/make_frames_pi_reading.py).
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pi_nb import _fs
from pi_nb._fs import FileTooLargeError, SpecialFileError, open_regular, read_regular
from pi_nb.errors import NotebookError, SessionFileTypeError, SettingsFileError, SettingsFileWarning
from pi_nb.notebook import entries_df, messages_df, session_tree, sessions_df
from pi_nb.notebook._base import markdown_html
from pi_nb.notebook.turn import TurnView
from pi_nb.resources.paths import read_text_js
from pi_nb.resources.settings import SettingsManager
from pi_nb.session.jsonl import SessionFileWarning
from pi_nb.session.paths import build_session_info
from pi_nb.session.tail import SessionTail

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)"),
]

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "pi_session.jsonl"
GOLDEN = json.loads((HERE / "golden" / "frames_pi_reading.json").read_text())
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def _line(i: int, parent: str | None) -> str:
    entry = {
        "type": "message",
        "id": f"e{i:07d}",
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": f"message {i}", "timestamp": 1},
    }
    return json.dumps(entry, separators=(",", ":")) + "\n"


def _session_text(n: int) -> str:
    lines = [json.dumps(HEADER) + "\n"]
    parent = None
    for i in range(n):
        lines.append(_line(i, parent))
        parent = f"e{i:07d}"
    return "".join(lines)


def _hostile_folder(tmp_path: Path) -> Path:
    """A folder with one good session and every kind of file that used to hang, exhaust memory
    or abort the walk: a FIFO, a link to /dev/zero, a link that loops, a link to a FIFO."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "good.jsonl").write_bytes(FIXTURE.read_bytes())
    os.mkfifo(folder / "fifo.jsonl")
    os.symlink("/dev/zero", folder / "zero.jsonl")
    os.symlink("loop.jsonl", folder / "loop.jsonl")
    os.symlink(folder / "fifo.jsonl", folder / "to-fifo.jsonl")
    return folder


# ---------------------------------------------------------------------------------------------
# the one open


def test_open_regular_refuses_every_special_kind_and_names_it(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    for name, kind in [
        ("fifo.jsonl", "a FIFO (named pipe)"),
        ("zero.jsonl", "a character device"),
        ("to-fifo.jsonl", "a FIFO (named pipe)"),
        (".", "a directory"),
    ]:
        with pytest.raises(SpecialFileError) as info:
            open_regular(folder / name)
        assert info.value.kind == kind and isinstance(info.value, OSError)
        assert str(folder / name) in str(info.value)
    with pytest.raises(OSError) as loop:
        open_regular(folder / "loop.jsonl")
    assert "Too many levels of symbolic links" in str(loop.value)
    with pytest.raises(FileNotFoundError):
        open_regular(folder / "missing.jsonl")
    with open_regular(folder / "good.jsonl") as f:
        assert f.read(1) == b"{"


def test_a_file_swapped_for_a_fifo_after_the_check_does_not_block(tmp_path: Path) -> None:
    """The kind is checked again on the open descriptor, and the open does not wait for a
    writer: a path swapped between the stat and the open is refused, not read."""
    path = tmp_path / "f"
    path.write_text("x")
    real_stat = os.stat
    swapped: list[bool] = []

    def stat_then_swap(p: Any, *a: Any, **k: Any) -> os.stat_result:
        st = real_stat(p, *a, **k)
        if os.fspath(p) == str(path) and not swapped:
            swapped.append(True)
            os.unlink(path)
            os.mkfifo(path)
        return st

    os.stat = stat_then_swap  # type: ignore[assignment]
    try:
        with pytest.raises(SpecialFileError, match="FIFO"):
            open_regular(path)
    finally:
        os.stat = real_stat


def test_read_regular_bounds_what_it_reads(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.json"
    with open(sparse, "wb") as f:  # 65 MiB that take no disk: refused from its size, unread
        f.truncate(_fs.MAX_RESOURCE_BYTES + 1024 * 1024)
    with pytest.raises(FileTooLargeError, match=r"huge\.json") as info:
        read_regular(sparse)
    assert info.value.limit == _fs.MAX_RESOURCE_BYTES
    small = tmp_path / "small"
    small.write_bytes(b"abcdef")
    assert read_regular(small, 6) == b"abcdef"
    with pytest.raises(FileTooLargeError):
        read_regular(small, 5)
    # a regular file that reports size 0 (procfs) is read up to the bound, no further
    environ = Path(f"/proc/{os.getpid()}/environ")
    if environ.exists():
        assert read_regular(environ, 1 << 20) == environ.read_bytes()
        with pytest.raises(FileTooLargeError):
            read_regular(environ, 1)


# ---------------------------------------------------------------------------------------------
# frames, corpora, listings


@pytest.mark.timeout(30)
def test_frames_of_a_hostile_folder_skip_each_bad_file_and_read_the_rest(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sessions = sessions_df(folder)
        entries = entries_df(folder)
    assert list(sessions["session_file"]) == [str(folder / "good.jsonl")]
    assert len(entries) == len(entries_df(folder / "good.jsonl"))
    said = " ".join(str(w.message) for w in caught)
    for name in ("fifo.jsonl", "zero.jsonl", "loop.jsonl", "to-fifo.jsonl"):
        assert str(folder / name) in said
    assert "FIFO" in said and "character device" in said and "symbolic links" in said
    frames, errors = sessions_df(folder, strict=False), None
    got, errors = entries_df(folder, strict=False)
    assert len(got) == len(entries) and len(errors) == 4 and frames is not None


@pytest.mark.timeout(30)
def test_load_corpus_of_a_hostile_folder_in_worker_processes(tmp_path: Path) -> None:
    from pi_nb.notebook import load_corpus

    folder = _hostile_folder(tmp_path)
    (folder / "good2.jsonl").write_bytes(FIXTURE.read_bytes())
    frames, errors = load_corpus(folder, ["sessions"], workers=2, chunk_size=1, strict=False)
    assert sorted(frames["sessions"]["session_file"]) == [
        str(folder / "good.jsonl"),
        str(folder / "good2.jsonl"),
    ]
    assert sorted(Path(f).name for f in errors["file"]) == [
        "fifo.jsonl",
        "loop.jsonl",
        "to-fifo.jsonl",
        "zero.jsonl",
    ]


@pytest.mark.timeout(30)
def test_a_named_special_file_raises_at_once(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    for name in ("fifo.jsonl", "zero.jsonl"):
        with pytest.raises(SessionFileTypeError):
            entries_df(folder / name)
    with pytest.raises(OSError):
        sessions_df(folder / "loop.jsonl")


class _GrowingFile:
    """An open session file that another writer appends to (a real append, through another
    file descriptor) the moment the reader first reads from it: what a writer does while a
    listing or a frame reads."""

    def __init__(self, f: Any, path: Path, lines: int) -> None:
        self._f, self._path, self._lines, self._grown = f, path, lines, False

    def _grow(self) -> None:
        if not self._grown:
            self._grown = True
            with open(self._path, "a") as w:
                w.write("".join(_line(100_000 + i, None) for i in range(self._lines)))

    def read(self, *a: Any) -> bytes:
        self._grow()
        return bytes(self._f.read(*a))

    def readline(self, *a: Any) -> bytes:
        self._grow()
        return bytes(self._f.readline(*a))

    def __iter__(self) -> Any:
        self._grow()
        return iter(self._f)

    def __enter__(self) -> _GrowingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def _growing(opener: Any, path: Path, lines: int) -> Any:
    def open_(p: str) -> Any:
        f = opener(p)
        return _GrowingFile(f, path, lines) if p == str(path) else f

    return open_


def _lines_in(path: Path) -> int:
    return path.read_bytes().count(b"\n")


@pytest.mark.timeout(30)
def test_a_listing_and_a_frame_read_a_growing_file_up_to_its_size_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pi_nb.session.jsonl as jsonl_mod  # the one reader of session files (the frames' too)
    import pi_nb.session.paths as paths_mod

    path = tmp_path / "growing.jsonl"
    path.write_text(_session_text(1000))
    monkeypatch.setattr(
        paths_mod, "open_session_for_read", _growing(paths_mod.open_session_for_read, path, 5000)
    )
    info = build_session_info(str(path))
    assert info is not None and info.message_count == 1000
    assert _lines_in(path) == 1 + 6000  # it did grow meanwhile
    monkeypatch.setattr(
        jsonl_mod, "open_session_for_read", _growing(jsonl_mod.open_session_for_read, path, 5000)
    )
    assert len(entries_df(path)) == 6000  # what the file held at this call
    assert _lines_in(path) == 1 + 11000


@pytest.mark.timeout(60)
def test_a_listing_races_a_writer_thread(tmp_path: Path) -> None:
    """A writer thread appends all along; every listing counts at most what the file held when
    the listing returned, and at least what it held when the listing was called."""
    path = tmp_path / "racing.jsonl"
    path.write_text(_session_text(20_000))
    stop = threading.Event()

    def writer() -> None:
        i = 0
        with open(path, "a") as w:
            while not stop.is_set():
                w.write("".join(_line(200_000 + i + k, None) for k in range(100)))
                w.flush()
                i += 100
                stop.wait(0.001)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        for _ in range(3):
            before = _lines_in(path) - 1
            info = build_session_info(str(path))
            after = _lines_in(path) - 1
            assert info is not None
            assert before - 1 <= info.message_count <= after, (before, info.message_count, after)
    finally:
        stop.set()
        t.join(5)


def test_a_listing_skips_special_files_with_a_warning(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    with pytest.warns(SessionFileWarning, match="FIFO"):
        assert build_session_info(str(folder / "fifo.jsonl")) is None
    assert build_session_info(str(folder / "loop.jsonl")) is None


# ---------------------------------------------------------------------------------------------
# follow


@pytest.mark.timeout(20)
def test_following_a_fifo_raises_instead_of_blocking(tmp_path: Path) -> None:
    from pi_nb.notebook import follow

    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NotebookError, match="FIFO"):
        follow(fifo, start=False)
    with pytest.raises(NotebookError, match="FIFO"):
        SessionTail(fifo)
    os.symlink("/dev/zero", tmp_path / "z.jsonl")
    with pytest.raises(NotebookError, match="character device"):
        SessionTail(tmp_path / "z.jsonl")


@pytest.mark.timeout(20)
def test_a_followed_file_swapped_for_a_fifo_does_not_block_the_poll(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_session_text(3))
    tail = SessionTail(path)
    assert len(tail.poll()) == 3
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(NotebookError, match="FIFO"):
        tail.poll()
    # the lock is free again: another thread (the kernel's main thread) is not stuck behind it
    done = threading.Event()

    def other() -> None:
        with pytest.raises(NotebookError):
            tail.poll()
        done.set()

    threading.Thread(target=other, daemon=True).start()
    assert done.wait(5)


@pytest.mark.timeout(20)
def test_a_follower_thread_reports_the_fifo_and_keeps_the_kernel_free(tmp_path: Path) -> None:
    from pi_nb.notebook import follow

    path = tmp_path / "s.jsonl"
    path.write_text(_session_text(3))
    follower = follow(path, interval=0.05, start=False)
    follower.start()
    try:
        path.unlink()
        os.mkfifo(path)
        for _ in range(100):
            if "FIFO" in follower.to_text():
                break
            threading.Event().wait(0.05)
        assert "FIFO" in follower.to_text()
        with pytest.raises(NotebookError, match="FIFO"):  # the main thread's poll: refused, not stuck
            follower.poll_once()
    finally:
        follower.stop(timeout=5)
    assert not follower.running


# ---------------------------------------------------------------------------------------------
# resources: settings, SYSTEM.md, trust.json, a skills .gitignore


def _agent_session(tmp_path: Path, agent: Path, cwd: Path) -> Any:
    from pi_nb.agent.session import AgentSession
    from pi_nb.providers import ScriptedModel
    from pi_nb.session import SessionManager

    return AgentSession(
        SessionManager.in_memory(str(cwd)),
        ScriptedModel(["ok"]),
        agent_dir=str(agent),
        project_trusted=True,
    )


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "name",
    [
        "settings.json",
        "SYSTEM.md",
        "APPEND_SYSTEM.md",
        "AGENTS.md",
        "trust.json",
        "skills/.gitignore",
        "skills/t/SKILL.md",
        "prompts/p.md",
    ],
)
@pytest.mark.parametrize("fault", ["fifo", "dev-zero"])
def test_a_session_starts_whatever_its_resource_files_are(tmp_path: Path, name: str, fault: str) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    (agent / "skills" / "s").mkdir(parents=True)
    (agent / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: a skill\n---\nbody\n")
    (agent / "skills" / "t").mkdir()
    (agent / "prompts").mkdir()
    cwd.mkdir()
    target = agent / name
    if fault == "fifo":
        os.mkfifo(target)
    else:
        os.symlink("/dev/zero", target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = _agent_session(tmp_path, agent, cwd)
    assert session.settings is not None
    skills = [skill.name for skill in session.resource_loader.get_skills().skills]
    assert skills == ["s"]  # the good skill still loads
    if name == "settings.json":
        said = [str(w.message) for w in caught if issubclass(w.category, SettingsFileWarning)]
        assert len(said) == 1 and said[0].startswith(f"Invalid settings file {target}:"), said


@pytest.mark.timeout(30)
@pytest.mark.parametrize("fault", ["fifo", "dev-zero"])
def test_a_trust_store_that_is_not_a_file_is_an_error_at_once(tmp_path: Path, fault: str) -> None:
    from pi_nb.agent.session import AgentSession
    from pi_nb.errors import TrustStoreError
    from pi_nb.providers import ScriptedModel
    from pi_nb.session import SessionManager

    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (cwd / ".pi").mkdir(parents=True)
    (cwd / ".pi" / "settings.json").write_text("{}")  # project resources: the trust is asked
    if fault == "fifo":
        os.mkfifo(agent / "trust.json")
    else:
        os.symlink("/dev/zero", agent / "trust.json")
    with pytest.raises(
        TrustStoreError, match=f"Failed to read trust store {agent / 'trust.json'}: .*not a regular file"
    ):
        AgentSession(SessionManager.in_memory(str(cwd)), ScriptedModel(["ok"]), agent_dir=str(agent))


@pytest.mark.timeout(30)
def test_project_resources_as_fifos(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (cwd / ".pi").mkdir(parents=True)
    for name in ("settings.json", "SYSTEM.md"):
        os.mkfifo(cwd / ".pi" / name)
    os.mkfifo(cwd / "AGENTS.md")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _agent_session(tmp_path, agent, cwd)
    said = [str(w.message) for w in caught if issubclass(w.category, SettingsFileWarning)]
    path = cwd / ".pi" / "settings.json"
    assert len(said) == 1 and said[0].startswith(f"Invalid settings file {path}: ") and "FIFO" in said[0], (
        said
    )


def test_settings_nested_100000_levels_is_a_named_error_not_a_recursion_error(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    manager = SettingsManager.create(str(tmp_path), str(agent))
    errors = manager.drain_errors()
    assert len(errors) == 1 and isinstance(errors[0].error, SettingsFileError)
    assert str(agent / "settings.json") in str(errors[0].error) and "nested too deeply" in str(
        errors[0].error
    )
    assert manager.get_global_settings() == {}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("depth", [101, 500, 990, 5000, 100_000])
@pytest.mark.parametrize("scope", ["global", "project"])
def test_deep_settings_in_either_scope_warn_and_the_session_starts(
    tmp_path: Path, depth: int, scope: str
) -> None:
    """Deep enough to parse but not to copy or merge (500 levels), or too deep to parse: one
    named warning, the scope reads as ``{}``; 100 levels still load."""
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    (cwd / ".pi").mkdir(parents=True)
    agent.mkdir()
    path = agent / "settings.json" if scope == "global" else cwd / ".pi" / "settings.json"
    path.write_text('{"a":' * depth + "1" + "}" * depth)
    with pytest.warns(SettingsFileWarning, match=f"^Invalid settings file {re.escape(str(path))}: .*nested"):
        session = _agent_session(tmp_path, agent, cwd)
    read = (
        session.settings.get_global_settings()
        if scope == "global"
        else session.settings.get_project_settings()
    )
    assert read == {}
    path.write_text('{"a":' * 99 + "1" + "}" * 99)
    assert SettingsManager.create(str(cwd), str(agent)).drain_errors() == []


@pytest.mark.parametrize(
    "text",
    ['{"compaction": {"enabled": false}', "[1, 2]", "\x00\x01", '{"a": NaN}'],
    ids=["torn", "array", "binary", "nan"],
)
def test_invalid_settings_warn_naming_the_file_when_a_session_starts(tmp_path: Path, text: str) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    cwd.mkdir()
    (agent / "settings.json").write_text(text)
    with pytest.warns(SettingsFileWarning, match=f"^Invalid settings file {agent / 'settings.json'}: "):
        session = _agent_session(tmp_path, agent, cwd)
    assert session.settings.get_global_settings() == {}
    assert (agent / "settings.json").read_text() == text  # never written over


def test_valid_settings_start_without_a_warning(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    cwd.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"enabled": false}}')
    with warnings.catch_warnings():
        warnings.simplefilter("error", SettingsFileWarning)
        _agent_session(tmp_path, agent, cwd)


def test_read_text_js_refuses_and_bounds(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f")
    with pytest.raises(SpecialFileError, match="FIFO"):
        read_text_js(str(tmp_path / "f"))
    with open(tmp_path / "big", "wb") as f:
        f.truncate(_fs.MAX_RESOURCE_BYTES + 1)
    with pytest.raises(FileTooLargeError):
        read_text_js(str(tmp_path / "big"))
    (tmp_path / "ok").write_bytes(b"\xef\xbb\xbfhi \xff")
    assert read_text_js(str(tmp_path / "ok")) == "\ufeffhi \ufffd"


# ---------------------------------------------------------------------------------------------
# the tools' side reads


@pytest.mark.timeout(30)
def test_find_with_an_ignore_file_that_is_a_fifo(tmp_path: Path) -> None:
    import asyncio

    from pi_nb.tools.find import create_find_tool

    (tmp_path / "a.txt").write_text("x")
    os.mkfifo(tmp_path / ".gitignore")
    tool = create_find_tool(str(tmp_path))
    result = asyncio.run(tool.execute("c1", {"pattern": "*.txt"}))
    assert "a.txt" in result.content[0]["text"]


@pytest.mark.timeout(30)
def test_the_truncation_view_does_not_read_a_fifo_the_session_names(tmp_path: Path) -> None:
    from pi_nb.notebook.truncation import _read_full_output, _read_tool_text

    os.mkfifo(tmp_path / "out.log")
    assert _read_full_output(str(tmp_path / "out.log")) is None
    assert _read_tool_text({"path": "out.log"}, str(tmp_path)) is None


# ---------------------------------------------------------------------------------------------
# nothing a model writes loads anything

HOSTILE_MARKDOWN = """Here you go ![tracker](https://evil.example/pixel.png?u=1) and
![ref image][r] <img src="https://evil.example/raw.png"> <script>alert(1)</script>
<iframe src="https://evil.example/"></iframe> [click](javascript:alert(1))
![inline](data:image/png;base64,iVBORw0KGgo=)

[r]: http://evil.example/ref.png
"""


def _assert_loads_nothing(html: str) -> None:
    lowered = html.lower()
    assert "<script" not in lowered and "<iframe" not in lowered
    for tag in re.findall(r"<img\b[^>]*>", lowered):
        src = re.search(r'\bsrc="([^"]*)"', tag)
        assert src is not None and src.group(1).startswith("data:image/"), tag[:120]
    assert 'href="javascript:' not in lowered


def test_markdown_html_shows_remote_images_as_links_and_escapes_raw_html() -> None:
    html = markdown_html(HOSTILE_MARKDOWN)
    _assert_loads_nothing(html)
    assert 'href="https://evil.example/pixel.png?u=1"' in html and "[image: tracker]" in html
    assert 'href="http://evil.example/ref.png"' in html and "[image: ref image]" in html
    assert "&lt;img src=&quot;https://evil.example/raw.png&quot;&gt;" in html
    assert "&lt;script&gt;" in html
    assert '<img src="data:image/png;base64,iVBORw0KGgo="' in html  # embedded: loads nothing


def _answer_entry_file(tmp_path: Path, text: str) -> Path:
    entries = [
        HEADER,
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "show me", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "api": "openai-completions",
                "provider": "openai",
                "model": "gpt-4o-mini",
                "usage": GOLDEN_USAGE,
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


GOLDEN_USAGE = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def test_the_turn_view_loads_nothing_the_model_wrote() -> None:
    view = TurnView(prompt="<img src=https://evil.example/prompt.png>")
    view.feed(
        {
            "type": "message_end",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": HOSTILE_MARKDOWN}],
                "timestamp": 1,
            },
        }
    )
    _assert_loads_nothing(view.bundle()["text/html"])


def test_the_tree_views_load_nothing_the_model_wrote(tmp_path: Path) -> None:
    pytest.importorskip("ipywidgets")
    path = _answer_entry_file(tmp_path, HOSTILE_MARKDOWN)
    view = session_tree(path, live=False)
    _assert_loads_nothing(view.to_html())
    view.widget()
    view.select("b")
    outputs = view.detail_text.outputs
    assert outputs and set(outputs[0]["data"]) == {"text/html", "text/plain"}
    _assert_loads_nothing(outputs[0]["data"]["text/html"])
    _assert_loads_nothing(view.detail.value)


def test_the_static_export_of_a_turn_loads_nothing(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbconvert")
    from pi_nb.notebook.export import export_html

    view = TurnView(prompt="hi")
    view.feed(
        {
            "type": "message_end",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": HOSTILE_MARKDOWN}],
                "timestamp": 1,
            },
        }
    )
    bundle = view.bundle()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%pi\nhi")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={k: bundle[k] for k in ("text/html", "text/plain")})
    ]
    nb.cells = [cell]
    page = export_html(nb)
    body = page[page.index("<body") :]
    assert "evil.example/pixel.png" in body  # shown, as a link
    _assert_loads_nothing(body)


# ---------------------------------------------------------------------------------------------
# session files Pi opens: frames and views read them as Pi does


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["name"] for c in GOLDEN["cases"]])
def test_frames_read_missing_and_repeated_ids_as_pi_does(tmp_path: Path, case: dict[str, Any]) -> None:
    path = tmp_path / f"{case['name']}.jsonl"
    path.write_text(case["text"])
    pi = case["pi"]
    df = entries_df(path)
    assert len(df) == len(pi["entries"])
    for row, want in zip(df.itertuples(index=False), pi["entries"], strict=True):
        assert (None if pd.isna(row.entry_id) else row.entry_id) == want["id"]
        assert bool(row.on_active_branch) == want["onBranch"], (row.entry_id, want)
        assert bool(row.in_context) == want["inContext"], (row.entry_id, want)
        assert bool(row.is_leaf) == want["isLeaf"], (row.entry_id, want)
        if want["estimate"] is not None:
            assert int(row.estimate_tokens) == want["estimate"]
    assert "None" not in set(df["entry_id"].dropna())
    s = sessions_df(path).iloc[0]
    assert int(s["leaves"]) == pi["treeLeaves"]
    assert int(s["active_branch_entries"]) == pi["branchLength"]
    assert (None if pd.isna(s["leaf_id"]) else s["leaf_id"]) == pi["leafId"]
    m = messages_df(path)
    assert len(m) == len(pi["entries"])
    # every view of the file renders (an assistant's string content used to raise)
    view = session_tree(path, live=False)
    view.to_text()
    view.to_html()
    view._repr_mimebundle_()
    for e in pi["entries"]:
        if e["id"] is not None:
            est, _tik = view.model.tokens(e["id"])
            assert est >= 0


@pytest.mark.timeout(30)
def test_exporting_a_notebook_path_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("nbconvert")
    from pi_nb.notebook.export import export_html

    os.mkfifo(tmp_path / "run.ipynb")
    with pytest.raises(SpecialFileError, match="FIFO"):
        export_html(tmp_path / "run.ipynb")


def test_entries_pi_opens_but_cannot_count_are_na_not_a_failed_frame(tmp_path: Path) -> None:
    """A ``null`` content block (Pi's estimate throws on it), a text block without text, a tool
    call without arguments, a number as a block: each such entry's counts are ``<NA>``, the
    other entries are counted, and the tree renders."""
    lines: list[dict[str, Any]] = [
        HEADER,
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
    ]
    for i, block in enumerate([None, {"type": "text"}, {"type": "toolCall", "name": "x"}]):
        lines.append(
            {
                "type": "message",
                "id": f"b{i}",
                "parentId": "a",
                "timestamp": "2026-01-01T00:00:02.000Z",
                "message": {
                    "role": "assistant",
                    "content": [block],
                    "api": "openai-completions",
                    "provider": "openai",
                    "model": "gpt-4o-mini",
                    "usage": GOLDEN_USAGE,
                    "stopReason": "stop",
                    "timestamp": 2,
                },
            }
        )
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    for frame in (entries_df(path, encoding="o200k_base"), messages_df(path, encoding="o200k_base")):
        assert len(frame) == 4
        assert (
            frame["estimate_tokens"].tolist()[0] == 1
            and frame["estimate_tokens"].isna().tolist()[1:] == [True] * 3
        )
        assert frame["tokens"].tolist()[0] == 1 and frame["tokens"].isna().tolist()[1:] == [True] * 3
    view = session_tree(path, live=False)
    view.to_text()
    view.to_html()
    view._repr_mimebundle_()


@pytest.mark.timeout(20)
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_path_swapped_for_a_fifo_after_the_check_is_not_written(
    tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write/edit check the kind, then open: a FIFO swapped in between neither blocks nor gets the text."""
    import asyncio

    from pi_nb.tools import edit as edit_module
    from pi_nb.tools import write as write_module
    from pi_nb.tools.registry import create_tool

    target = tmp_path / "notes.txt"
    target.write_text("old text\n")
    module = write_module if tool == "write" else edit_module
    real = module.open_regular_for_write

    def swapped(path: str):  # type: ignore[no-untyped-def]
        os.unlink(path)
        os.mkfifo(path)
        return real(path)

    monkeypatch.setattr(module, "open_regular_for_write", swapped)
    t = create_tool(tool, str(tmp_path))
    args = {"path": "notes.txt", "content": "new"} if tool == "write" else {"path": "notes.txt", "edits": [{"oldText": "old", "newText": "new"}]}

    async def run() -> str:
        try:
            result = await t.execute("call-1", args, None, None)
        except Exception as exc:  # the tool error Pi shows the model
            return str(exc)
        return str(result)

    text = asyncio.run(run())
    assert "not a regular file" in text, text
    assert stat.S_ISFIFO(os.stat(target).st_mode)
