"""Packaging promises: one version source, the licence shipped, the toolchain pinned."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pi_nb

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_one_version_source():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "pi_nb/__init__.py"
    assert importlib.metadata.version("pi_nb") == pi_nb.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|a\d+|b\d+|rc\d+)?", pi_nb.__version__)


def test_licence_and_changelog_shipped():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert PYPROJECT["project"]["license"] == "MIT"
    for name in PYPROJECT["project"]["license-files"]:
        assert (ROOT / name).is_file(), name
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{pi_nb.__version__}]" in changelog or "## [Unreleased]" in changelog


def test_classifiers_cover_supported_pythons():
    classifiers = PYPROJECT["project"]["classifiers"]
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert "Framework :: Jupyter" in classifiers and "Framework :: IPython" in classifiers
    assert set(PYPROJECT["project"]["urls"]) >= {"Homepage", "Source", "Issues", "Changelog"}


def test_toolchain_pinned_exactly():
    extras = PYPROJECT["project"]["optional-dependencies"]
    pinned = {re.split(r"[=<>!~\[]", dep, maxsplit=1)[0]: dep for dep in [*extras["test"], *extras["lint"]]}
    for tool in ("pytest", "hypothesis", "ruff", "mypy"):
        assert re.fullmatch(rf"{tool}==[\d.]+", pinned[tool]), pinned[tool]


def test_the_dev_extra_installs_every_other_extra_and_the_test_commands_use_it():
    """The extras are split by purpose (test, lint, docs, browser, dask, the SDKs); ``dev`` holds
    them all, and every command that runs the tests installs ``dev``, so none misses a tool."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"test", "lint", "docs", "browser", "dask"} <= set(extras)
    (dev,) = extras["dev"]
    m = re.fullmatch(r"pi_nb\[([a-z0-9_,-]+)\]", dev)
    assert m is not None, dev
    assert set(m.group(1).split(",")) == set(extras) - {"dev"}
    root = Path(__file__).resolve().parent.parent
    for path in ("README.md", "CONTRIBUTING.md", ".ci/run"):
        text = (root / path).read_text(encoding="utf-8")
        installs = re.findall(r"pip install -q -e '\.\[([a-z0-9_,-]+)\]'", text)
        test_installs = [i for i in installs if "dask" != i]
        assert test_installs and all(i == "dev" for i in test_installs), (path, installs)


def test_numpy_is_declared():
    deps = {re.split(r"[=<>!~\[ ]", d, maxsplit=1)[0] for d in PYPROJECT["project"]["dependencies"]}
    assert {"numpy", "pandas", "ipython", "ipywidgets", "matplotlib"} <= deps


def test_sdist_takes_only_the_package_and_top_level_documents():
    only = PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["only-include"]
    assert "pi_nb" in only and all("/" not in item for item in only)
