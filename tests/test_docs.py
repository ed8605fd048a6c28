"""The documentation site: built strictly from the docstrings, covering every public name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import pi_nb

ROOT = Path(__file__).resolve().parents[1]


def test_api_page_is_generated_from_the_current_modules():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_api_docs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_reference_covers_every_public_name(site: Path):
    import pi_nb.notebook as notebook

    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    documented = {anchor.rsplit(".", 1)[-1] for anchor in re.findall(r'id="(pi_nb\.[A-Za-z0-9_.]+)"', html)}
    missing = sorted((set(pi_nb.__all__) | set(notebook.__all__)) - documented)
    assert not missing, f"not in the API reference: {missing}"


def test_every_page_in_the_nav_is_built(site: Path):
    for page in ("tool-output", "request", "history", "turn", "safety", "pi-mapping", "api"):
        assert (site / page / "index.html").is_file(), page


def test_pi_mapping_names_exist() -> None:
    """Every pi_nb name of the generated Pi mapping table is still exported (the page cannot drift)."""
    text = (ROOT / "docs" / "pi-mapping.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `[^`]+` \| `(\w+)` \| `(\w+)` \| `([\w.]+)` \|$", text, re.M)
    assert len(rows) > 150
    for _pi_name, name, module in rows:
        assert name in pi_nb.__all__, name
        assert hasattr(__import__(module, fromlist=["x"]), name), (module, name)


def test_no_docstring_points_outside_the_repository() -> None:
    """Docstrings and docs explain in their own words; they never send the reader to files not shipped."""
    offenders = []
    for path in [*(ROOT / "pi_nb").rglob("*.py"), *(ROOT / "docs").glob("*.md")]:
        text = path.read_text(encoding="utf-8")
        for pattern in ("spec §", "design.md", "pi-0.85-context-engineering", "000_af9e43be0653f61b"):
            if pattern in text:
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert offenders == []
