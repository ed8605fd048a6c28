"""Shared fixtures. ``shell``, for the magics tests: a real InteractiveShell with the magics registered,
in a temporary project holding ``notes.txt``, with a temporary agent directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from pi_nb.notebook.magics import PiMagics


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("first line\nsecond line\n")
    monkeypatch.chdir(project)
    sh = InteractiveShell.instance()
    magics = PiMagics(sh)
    sh.register_magics(magics)
    sh.user_ns["_pi_magics"] = magics
    yield sh
    magics.session = None
    sh.config.pop("PiMagics", None)


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """bash commands run outside the sandbox: for tests that read back the pids a command wrote
    (inside the sandbox those are the PID namespace's own pids, not this process's view)."""
    monkeypatch.setenv("PI_NB_BASH_SANDBOX", "0")
