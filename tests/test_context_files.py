"""Context files (AGENTS.md / CLAUDE.md): golden parity with Pi 0.85.0 and Pi's own unit tests."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_nb.resources.context_files import (
    CONTEXT_FILE_CANDIDATES,
    ContextFile,
    find_git_paths,
    find_shadowed_context_file,
    load_context_file_from_dir,
    load_project_context_files,
)

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "context_files.json"

_spec = importlib.util.spec_from_file_location(
    "make_context_files", HERE / "golden" / "make_context_files.py"
)
assert _spec is not None and _spec.loader is not None
make_context_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_context_files)


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").split("\n") if line.strip()]


CASES = _cases()


def test_golden_file_covers_enough_trees() -> None:
    assert len(CASES) >= 60
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    assert sum(1 for n in names if n.startswith("wt-")) >= 9


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_golden_parity(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = os.path.realpath(tmp_path / "scratch")
    os.mkdir(root)
    make_context_files.build_tree(root, case["tree"])
    for key, value in case.get("env", {}).items():
        monkeypatch.setenv(key, make_context_files.sub_root(value, root))
    cwd = make_context_files.sub_root(case["cwd"], root)
    agent_dir = make_context_files.sub_root(case["agentDir"], root)

    got = [f.to_dict() for f in load_project_context_files(cwd, agent_dir)]
    # files above the scratch dir depend on the machine running the test, not on Pi
    got = [f for f in got if f["path"].startswith(root + os.sep)]
    for f in got:
        f["path"] = "{ROOT}" + f["path"][len(root) :]

    assert case["response"]["ok"] is True
    assert got == case["response"]["result"]


# --- Pi's resource-loader.test.ts cases (loadProjectContextFiles part), ported


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_override_layering(tmp_path: Path) -> None:
    agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
    nested = cwd / "service"
    nested.mkdir(parents=True)
    _write(agent_dir / "AGENTS.md", "global instructions")
    _write(agent_dir / "AGENTS.override.md", "global override")
    _write(cwd / "AGENTS.md", "project instructions")
    _write(nested / "AGENTS.md", "service instructions")
    _write(nested / "AGENTS.override.md", "service override")

    files = load_project_context_files(str(nested), str(agent_dir))
    assert files == [
        ContextFile(path=str(agent_dir / "AGENTS.override.md"), content="global override"),
        ContextFile(path=str(cwd / "AGENTS.md"), content="project instructions"),
        ContextFile(path=str(nested / "AGENTS.override.md"), content="service override"),
    ]


def test_directory_candidates_are_skipped_silently(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cwd = tmp_path / "project"
    (cwd / "AGENTS.override.md").mkdir(parents=True)
    (cwd / "AGENTS.md").mkdir()
    _write(cwd / "CLAUDE.md", "Fallback instructions")
    with caplog.at_level(logging.WARNING, logger="pi_nb.resources"):
        files = load_project_context_files(str(cwd), str(tmp_path / "agent"))
    assert ContextFile(path=str(cwd / "CLAUDE.md"), content="Fallback instructions") in files
    assert caplog.records == []


def test_no_context_files_switch(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    for name in ("AGENTS.override.md", "AGENTS.md", "CLAUDE.md"):
        _write(cwd / name, f"# {name}")
    assert load_project_context_files(str(cwd), str(tmp_path / "agent"), no_context_files=True) == []
    assert len(load_project_context_files(str(cwd), str(tmp_path / "agent"))) == 1


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_candidate_warns_and_falls_through(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cwd = tmp_path / "p"
    _write(cwd / "AGENTS.md", "secret")
    _write(cwd / "CLAUDE.md", "readable")
    os.chmod(cwd / "AGENTS.md", 0)
    try:
        with caplog.at_level(logging.WARNING, logger="pi_nb.resources"):
            found = load_context_file_from_dir(str(cwd))
    finally:
        os.chmod(cwd / "AGENTS.md", stat.S_IRUSR | stat.S_IWUSR)
    assert found == ContextFile(path=str(cwd / "CLAUDE.md"), content="readable")
    assert any("Could not read" in r.getMessage() for r in caplog.records)


def test_unreadable_candidate_via_monkeypatched_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The same fall-through, forced on any user (also root): a read error tries the next name."""
    import pi_nb.resources.context_files as cf

    cwd = tmp_path / "p"
    _write(cwd / "AGENTS.md", "secret")
    _write(cwd / "CLAUDE.md", "readable")
    real = cf.read_text_js

    def fake(path: str) -> str:
        if path.endswith("AGENTS.md"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(cf, "read_text_js", fake)
    with caplog.at_level(logging.WARNING, logger="pi_nb.resources"):
        found = load_context_file_from_dir(str(cwd))
    assert found == ContextFile(path=str(cwd / "CLAUDE.md"), content="readable")
    assert [r.getMessage() for r in caplog.records] == [
        f"Warning: Could not read {cwd / 'AGENTS.md'}: [Errno 13] Permission denied: '{cwd / 'AGENTS.md'}'"
    ]


def test_to_dict_and_frozen() -> None:
    f = ContextFile(path="/p/AGENTS.md", content="x")
    assert f.to_dict() == {"path": "/p/AGENTS.md", "content": "x"}
    with pytest.raises(AttributeError):
        f.path = "/q"  # type: ignore[misc]


def test_git_helpers(tmp_path: Path) -> None:
    main = tmp_path / "main"
    wt = main / "wt"
    wt.mkdir(parents=True)
    (main / ".git" / "worktrees" / "x").mkdir(parents=True)
    _write(main / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(main / ".git" / "worktrees" / "x" / "HEAD", "x")
    _write(main / ".git" / "worktrees" / "x" / "commondir", "../..")
    _write(wt / ".git", f"gitdir: {main / '.git' / 'worktrees' / 'x'}\n")
    gp = find_git_paths(str(wt))
    assert gp is not None
    assert gp.to_dict() == {
        "repoDir": str(wt),
        "commonGitDir": str(main / ".git"),
        "headPath": str(main / ".git" / "worktrees" / "x" / "HEAD"),
    }
    assert find_shadowed_context_file(str(wt)) is None  # the worktree root has no context file
    _write(wt / "CLAUDE.md", "w")
    assert find_shadowed_context_file(str(wt)) == os.path.realpath(main) + "/CLAUDE.md"
    assert find_git_paths(str(tmp_path)) is None or find_git_paths(str(tmp_path)).repo_dir != str(tmp_path)  # type: ignore[union-attr]


# --- properties

_names = st.sampled_from([*CONTEXT_FILE_CANDIDATES, "agents.md", "README.md"])
_dirs = st.sampled_from(["", "a", "a/b", "a/b/c"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.tuples(_dirs, _names, st.booleans()), max_size=8))
def test_one_file_per_directory_parents_first(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, str, bool]]
) -> None:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("prop")))
    cwd = root / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    for d, name, as_dir in files:
        p = root / d / name
        if p.exists():
            continue
        if as_dir:
            p.mkdir(parents=True)
        else:
            _write(p, f"{d}/{name}")
    got = [
        f for f in load_project_context_files(str(cwd), str(root / "agent")) if f.path.startswith(str(root))
    ]
    dirs = [os.path.dirname(f.path) for f in got]
    assert len(dirs) == len(set(dirs))  # at most one per directory
    assert dirs == sorted(dirs, key=len)  # parents (shorter paths) before children
    for f in got:
        d = Path(f.path).parent
        # it is the first candidate that is a regular file in its directory
        first = next(n for n in CONTEXT_FILE_CANDIDATES if (d / n).is_file())
        assert Path(f.path).name == first
        assert f.content == f"{os.path.relpath(d, root) if d != root else ''}/{first}".lstrip(".")
    # every directory with a candidate regular file is represented
    for d in [root, root / "a", root / "a" / "b", cwd]:
        if any((d / n).is_file() for n in CONTEXT_FILE_CANDIDATES):
            assert str(d) in dirs


# --- differential check against the live oracle (optional; the golden file is the coverage)

ORACLE_DIR = HERE.parent.parent / "shared" / "pi-oracle"


def _oracle_available() -> bool:
    if not (ORACLE_DIR / "oracle_client.py").exists():
        return False
    sys.path.insert(0, str(ORACLE_DIR))
    try:
        from oracle_client import oracle_available  # type: ignore[import-not-found]
    except ImportError:
        return False
    return bool(oracle_available())


def _random_tree(rng: Any) -> list[list[str]]:
    """A random tree: candidates (files, dirs, BOMs) at random depths, sometimes a worktree."""
    tree: list[list[str]] = [["d", "outer/main/wt/src/deep"], ["d", "agent"]]
    levels = [
        "",
        "outer",
        "outer/main",
        "outer/main/wt",
        "outer/main/wt/src",
        "outer/main/wt/src/deep",
        "agent",
    ]
    for _ in range(rng.randint(0, 9)):
        d = rng.choice(levels)
        name = rng.choice([*CONTEXT_FILE_CANDIDATES, "agents.md"])
        rel = f"{d}/{name}".lstrip("/")
        if any(e[1] == rel for e in tree):
            continue
        kind = rng.random()
        if kind < 0.15:
            tree.append(["d", rel])
        elif kind < 0.3:
            tree.append(["b", rel, make_context_files.b64(b"\xef\xbb\xbf" + rel.encode())])
        else:
            tree.append(["f", rel, f"{rel}\n"])
    layout = rng.choice(["none", "worktree", "repo", "sibling"])
    if layout == "worktree":
        tree += make_context_files.worktree_link("outer/main", "outer/main/wt", "wt")
    elif layout == "repo":
        tree.append(["f", "outer/main/.git/HEAD", "x"])
    elif layout == "sibling":
        tree += make_context_files.worktree_link("outer/elsewhere", "outer/main/wt", "wt")
    return tree


@pytest.mark.oracle
@pytest.mark.skipif(not _oracle_available(), reason="pi-oracle not installed")
def test_random_trees_against_live_oracle(tmp_path: Path) -> None:
    import random

    from oracle_client import Oracle

    rng = random.Random(4242)
    with Oracle() as o:
        for n in range(40):
            root = os.path.realpath(tmp_path / f"t{n}")
            os.mkdir(root)
            make_context_files.build_tree(root, _random_tree(rng))
            cwd = os.path.join(
                root, rng.choice(["outer/main/wt/src/deep", "outer/main/wt", "outer/main", "agent"])
            )
            agent = os.path.join(root, "agent")
            expected = [
                f
                for f in o.call("loadProjectContextFiles", cwd=cwd, agentDir=agent)
                if f["path"].startswith(root)
            ]
            got = [f.to_dict() for f in load_project_context_files(cwd, agent) if f.path.startswith(root)]
            assert got == expected, n


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
