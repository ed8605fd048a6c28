"""The README's promises: the Python example runs and prints what its comments say; the test command
in the README is the one .ci/run executes."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_python_example_runs_and_matches_its_comments() -> None:
    code = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
    expected = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", code, re.M)]
    assert expected, "the example should document its output"
    for want in expected:
        assert want in printed, f"README says {want!r}; printed {printed[:6]}"
    assert "`echo hello` printed 1 line" in out.getvalue()


def test_ci_runs_the_readme_test_command() -> None:
    section = README.split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    command = next(line for line in section.splitlines() if line.startswith("python3.11 -m venv"))
    assert "pytest" in command and "ruff check" in command and "mypy" in command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "## Run the tests" in ci and "python3.11 -m venv" in ci


def test_readme_magic_tables_are_the_help() -> None:
    """The README's tables of commands and `%%pi` options are exactly what `%pi help` prints."""
    from pi_nb.notebook.magics import help_markdown

    assert help_markdown().strip() in README


def test_readme_small_window_example_lowers_the_reserve() -> None:
    """A window below Pi's 16,384-token reserve never compacts: every example that shrinks it lowers both."""
    for window in re.findall(r"PiMagics\.context_window = (\d+)", README):
        assert int(window) >= 16384 or "PiMagics.reserve_tokens" in README
    for match in re.finditer(r"--context-window (\d+)", README):
        line = README[README.rfind("\n", 0, match.start()) : README.find("\n", match.end())]
        if int(match.group(1)) < 16384 and "%%pi" in line:
            assert "--reserve" in line, line
