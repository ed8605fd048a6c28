"""The static export of a user's pi_nb notebook (pi_nb.notebook.export): views as their pictures,
no CDN script, through the Python function, the preprocessor and `jupyter nbconvert --to`."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

from pi_nb.notebook.export import (
    StaticHTMLExporter,
    StaticViewsPreprocessor,
    export_html,
    static_widget_outputs,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "pi_session.jsonl"
WIDGET = "application/vnd.jupyter.widget-view+json"
CDN_MARKERS = ("cdn.jsdelivr", "unpkg.com", "require.js", "mathjax", "embed-amd", "html-manager")


def _notebook() -> nbformat.NotebookNode:
    """A notebook as a kernel leaves it: outputs of pi_nb views carrying a widget and their picture."""
    from pi_nb.notebook import session_tree, token_budget

    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
    for view, src in ((session_tree(FIXTURE), "session_tree(f)"), (token_budget(FIXTURE), "token_budget(f)")):
        bundle = view._repr_mimebundle_()
        bundle[WIDGET] = {"model_id": "abc", "version_major": 2, "version_minor": 0}
        cell = nbformat.v4.new_code_cell(src)
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
        nb.cells.append(cell)
    only_widget = nbformat.v4.new_code_cell("w")
    only_widget.outputs = [nbformat.v4.new_output("display_data", data={WIDGET: {"model_id": "x", "version_major": 2, "version_minor": 0}})]
    nb.cells.append(only_widget)
    return nb


def _check_static(html: str) -> None:
    assert "Session tree" in html and "pi-nb-budget" in html
    lower = html.lower()
    for marker in CDN_MARKERS:
        assert marker not in lower, marker
    assert WIDGET not in html


def test_export_html_of_a_node_and_of_a_file(tmp_path: Path) -> None:
    nb = _notebook()
    _check_static(export_html(nb, title="mine"))
    assert WIDGET in nb.cells[0].outputs[0].data  # the notebook itself is not changed
    path = tmp_path / "run.ipynb"
    nbformat.write(nb, path)
    _check_static(export_html(path))


def test_static_widget_outputs_keeps_widget_only_outputs() -> None:
    static = static_widget_outputs(_notebook())
    assert "widgets" not in static.metadata
    assert WIDGET not in static.cells[0].outputs[0].data
    assert WIDGET in static.cells[2].outputs[0].data  # nothing else to show there


def test_preprocessor_in_a_plain_html_exporter() -> None:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter()
    exporter.register_preprocessor(StaticViewsPreprocessor, enabled=True)
    body, _ = exporter.from_notebook_node(_notebook())
    assert "Session tree" in body and WIDGET not in body


def test_exporter_is_registered_for_nbconvert() -> None:
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["nbconvert.exporters"]
    module, _, name = eps["pi_nb_html"].partition(":")
    import importlib

    assert getattr(importlib.import_module(module), name) is StaticHTMLExporter


@pytest.mark.timeout(300)
def test_jupyter_nbconvert_to_the_exporter(tmp_path: Path) -> None:
    path = tmp_path / "run.ipynb"
    nbformat.write(_notebook(), path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "pi_nb.notebook.export.StaticHTMLExporter", str(path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=280, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    _check_static((tmp_path / "run.html").read_text())
