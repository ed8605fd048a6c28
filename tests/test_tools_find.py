"""The find tool: Pi's find tests on the Python walk, fd's rules, and the fd backend's plumbing.

The oracle cannot run Pi's find (it needs fd >= 8.7), so the expectations come from Pi's source and
test suite (tools.test.ts: hidden files, .gitignore, ``[`` is a glob error, ``--help`` finds nothing)
and from fd's documented behaviour. The fd backend is exercised with a stand-in ``fd`` executable
that records its arguments and prints canned output, so the argument building, relativising,
limits and error paths are tested without fd installed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_nb.tools import AbortSignal, run_tool
from pi_nb.tools.find import relativize_find_result_path


def find(root: Path, params: dict[str, Any], **options: Any) -> Any:
    return run_tool("find", str(root), params, options={"find": {"backend": "python", **options}})


def lines(out: Any) -> list[str]:
    return out.text.split("\n\n[")[0].split("\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "visible.txt": "v",
        ".secret/hidden.txt": "h",
        ".gitignore": "ignored.txt\nbuild/\n",
        "ignored.txt": "i",
        "build/out.txt": "o",
        "src/a.ts": "a",
        "src/b.spec.ts": "b",
        "src/nested/c.spec.ts": "c",
        "src/README.MD": "r",
        "docs/guide.md": "g",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_hidden_files_are_found_and_gitignore_respected(tree: Path) -> None:
    for pattern in ("**/*.txt", "*.txt"):
        out = find(tree, {"pattern": pattern})
        assert not out.is_error
        assert lines(out) == [".secret/hidden.txt", "visible.txt"]
        assert out.details is None


def test_path_patterns_use_the_full_path(tree: Path) -> None:
    assert lines(find(tree, {"pattern": "src/**/*.spec.ts"})) == ["src/b.spec.ts", "src/nested/c.spec.ts"]
    assert lines(find(tree, {"pattern": "*.ts"})) == ["src/a.ts", "src/b.spec.ts", "src/nested/c.spec.ts"]
    assert lines(find(tree, {"pattern": "src/*.ts"})) == ["src/a.ts", "src/b.spec.ts"]
    assert lines(find(tree, {"pattern": f"{tree}/docs/*"})) == ["docs/guide.md"]


def test_smart_case(tree: Path) -> None:
    assert lines(find(tree, {"pattern": "readme.md"})) == ["src/README.MD"]
    assert find(tree, {"pattern": "README.md"}).text == "No files found matching pattern"


def test_directories_end_with_a_slash(tree: Path) -> None:
    assert lines(find(tree, {"pattern": "nested"})) == ["src/nested/"]
    assert lines(
        find(
            tree,
            {"pattern": "*"},
        )
    ) == [
        ".gitignore",
        ".secret/",
        ".secret/hidden.txt",
        "docs/",
        "docs/guide.md",
        "src/",
        "src/README.MD",  # byte order, as fd sorts
        "src/a.ts",
        "src/b.spec.ts",
        "src/nested/",
        "src/nested/c.spec.ts",
        "visible.txt",
    ]


def test_bad_glob_is_an_error(tree: Path) -> None:
    out = find(tree, {"pattern": "["})
    assert out.is_error
    assert out.text == "[fd error]: error parsing glob '[': unclosed character class; missing ']'"


def test_option_like_pattern_finds_nothing(tree: Path) -> None:
    assert find(tree, {"pattern": "--help"}).text == "No files found matching pattern"


def test_result_limit_notice(tree: Path) -> None:
    out = find(tree, {"pattern": "*", "limit": 3})
    assert out.text.endswith("\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]")
    assert len(lines(out)) == 3
    assert out.details == {"resultLimitReached": 3}


def test_byte_limit_notice(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / (f"{i:03d}" + "n" * 200)).write_text("")
    out = find(tmp_path, {"pattern": "*"})
    assert out.text.endswith("\n\n[50.0KB limit reached]")
    assert out.details["truncation"]["truncated"] and out.details["truncation"]["truncatedBy"] == "bytes"
    out = find(tmp_path, {"pattern": "*", "limit": 300})
    assert out.text.endswith(
        "\n\n[300 results limit reached. Use limit=600 for more, or refine pattern. 50.0KB limit reached]"
    )


def test_missing_search_path(tree: Path) -> None:
    out = find(tree, {"pattern": "*", "path": "nope"})
    assert out.is_error and out.text == f"[fd error]: Search path '{tree}/nope' is not a directory."


def test_git_repository_boundaries(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "a.log").write_text("")
    # no repository anywhere: parent ignore files apply (--no-require-git)
    assert find(inner, {"pattern": "*.log"}).text == "No files found matching pattern"
    # inner is a repository: rules above its root stop applying
    (inner / ".git").mkdir()
    (inner / ".git" / "config").write_text("")
    assert lines(find(inner, {"pattern": "*.log"})) == ["a.log"]
    # .git itself is never listed
    assert ".git/" not in lines(find(inner, {"pattern": "*"}))
    # .git/info/exclude applies inside the repository
    (inner / ".git" / "info").mkdir()
    (inner / ".git" / "info" / "exclude").write_text("a.log\n")
    assert find(inner, {"pattern": "*.log"}).text == "No files found matching pattern"


def test_nested_ignore_files_and_negation(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("!keep.tmp\n")
    for name in ("sub/keep.tmp", "sub/drop.tmp", "top.tmp", "x.md", "y.md", "z.md"):
        (tmp_path / name).write_text("")
    (tmp_path / ".ignore").write_text("x.md\n")
    (tmp_path / ".fdignore").write_text("y.md\n")
    assert lines(find(tmp_path, {"pattern": "*.tmp"})) == ["sub/keep.tmp"]
    assert lines(find(tmp_path, {"pattern": "*.md"})) == ["z.md"]


def test_symlinks_are_listed_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("")
    os.symlink("real", tmp_path / "link")
    os.symlink("missing", tmp_path / "dangling")
    assert lines(find(tmp_path, {"pattern": "*"})) == ["dangling", "link", "real/", "real/f.txt"]


def test_abort_before_start(tree: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    out = run_tool(
        "find", str(tree), {"pattern": "*"}, signal=signal, options={"find": {"backend": "python"}}
    )
    assert out.is_error and out.text == "Operation aborted"


def test_limit_zero_lists_everything_and_says_so(tree: Path) -> None:
    out = find(tree, {"pattern": "*.md", "limit": 0})  # smart case: *.md also matches README.MD
    assert (
        out.text
        == "docs/guide.md\nsrc/README.MD\n\n[0 results limit reached. Use limit=0 for more, or refine pattern]"
    )


def test_relativize() -> None:
    assert relativize_find_result_path("/a/b/c.txt", "/a") == "b/c.txt"
    assert relativize_find_result_path("/a/b/", "/a") == "b/"
    assert relativize_find_result_path("rel/x", "/a") == "rel/x"


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("*.{ts,js}", "a.js", True),
        ("*.{ts,js}", "a.py", False),
        ("[!a]*", "b", True),
        ("[!a]*", "a", False),
        ("[a-c]x", "bx", True),
        ("?x", "xx", True),
        ("?x", "x", False),
        (r"\*", "*", True),
        ("**", "anything", True),
        ("", "anything", True),
    ],
)
def test_glob_semantics(tmp_path: Path, pattern: str, name: str, matches: bool) -> None:
    (tmp_path / name).write_text("")
    out = find(tmp_path, {"pattern": pattern})
    assert (name in lines(out)) is matches


# --- the fd backend, with a stand-in fd --------------------------------------------------------------


@pytest.fixture
def fake_fd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    script = tmp_path / "fake-fd"
    record = tmp_path / "fd-args.json"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "if sys.argv[1:] == ['--version']:\n"
        "    print('fd 10.2.0'); sys.exit(0)\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        "sys.stdout.write(os.environ.get('FAKE_FD_OUT', '').replace('@ROOT@', sys.argv[-1]))\n"
        "sys.stderr.write(os.environ.get('FAKE_FD_ERR', ''))\n"
        "sys.exit(int(os.environ.get('FAKE_FD_CODE', '0')))\n"
    )
    script.chmod(0o755)
    return script, record


def fd_find(root: Path, fd: Path, params: dict[str, Any]) -> Any:
    return run_tool("find", str(root), params, options={"find": {"backend": "fd", "fd_path": str(fd)}})


def test_fd_arguments_outside_a_repository(
    tmp_path: Path, fake_fd: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fd, record = fake_fd
    monkeypatch.setenv("FAKE_FD_OUT", "@ROOT@/b.txt\n@ROOT@/dir/\n\n@ROOT@/a.txt\r\n")
    out = fd_find(tmp_path, fd, {"pattern": "*.txt"})
    assert json.loads(record.read_text()) == [
        "--glob",
        "--color=never",
        "--hidden",
        "--no-require-git",
        "--max-results",
        "1000",
        "--",
        "*.txt",
        str(tmp_path),
    ]
    assert out.text == "b.txt\ndir/\na.txt"  # fd's order is kept


def test_fd_arguments_inside_a_repository_with_a_path_pattern(
    tmp_path: Path, fake_fd: tuple[Path, Path]
) -> None:
    fd, record = fake_fd
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    fd_find(tmp_path, fd, {"pattern": "src/**/*.ts", "path": "src", "limit": 5})
    assert json.loads(record.read_text()) == [
        "--glob",
        "--color=never",
        "--hidden",
        "--max-results",
        "5",
        "--full-path",
        "--",
        "**/src/**/*.ts",
        str(tmp_path / "src"),
    ]
    fd_find(tmp_path, fd, {"pattern": "/abs/*.ts"})
    assert json.loads(record.read_text())[-3:] == ["--", "/abs/*.ts", str(tmp_path)]
    fd_find(tmp_path, fd, {"pattern": "**/x"})
    assert json.loads(record.read_text())[-2] == "**/x"


def test_fd_limit_and_errors(
    tmp_path: Path, fake_fd: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fd, _ = fake_fd
    monkeypatch.setenv("FAKE_FD_OUT", "@ROOT@/1\n@ROOT@/2\n")
    out = fd_find(tmp_path, fd, {"pattern": "*", "limit": 2})
    assert out.text == "1\n2\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    monkeypatch.setenv("FAKE_FD_OUT", "")
    monkeypatch.setenv("FAKE_FD_CODE", "1")
    monkeypatch.setenv(
        "FAKE_FD_ERR", "[fd error]: error parsing glob '[': unclosed character class; missing ']'\n"
    )
    out = fd_find(tmp_path, fd, {"pattern": "["})
    assert (
        out.is_error
        and out.text == "[fd error]: error parsing glob '[': unclosed character class; missing ']'"
    )
    monkeypatch.setenv("FAKE_FD_ERR", "")
    out = fd_find(tmp_path, fd, {"pattern": "x"})
    assert out.is_error and out.text == "fd exited with code 1"
    monkeypatch.setenv("FAKE_FD_OUT", "@ROOT@/partial\n")
    out = fd_find(tmp_path, fd, {"pattern": "x"})
    assert not out.is_error and out.text == "partial"  # output wins over a failure code, as in Pi


def test_fd_backend_required_but_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    out = run_tool("find", str(tmp_path), {"pattern": "*"}, options={"find": {"backend": "fd"}})
    assert out.is_error and out.text == "fd is not available and could not be downloaded"
    (tmp_path / "f.txt").write_text("")
    assert run_tool("find", str(tmp_path), {"pattern": "*"}).text == "f.txt"  # auto: falls back to Python


def test_backend_from_the_environment(
    tmp_path: Path, fake_fd: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fd, record = fake_fd
    monkeypatch.setenv("PATH", f"{fd.parent}:{os.environ['PATH']}")
    os.rename(fd, fd.parent / "fd")
    monkeypatch.setenv("FAKE_FD_OUT", "@ROOT@/from-fd\n")
    assert run_tool("find", str(tmp_path), {"pattern": "*"}).text == "from-fd"
    monkeypatch.setenv("PI_NB_FIND_BACKEND", "python")
    assert "from-fd" not in run_tool("find", str(tmp_path), {"pattern": "*"}).text
