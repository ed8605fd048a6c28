"""Plots in a real kernel (nbclient, matplotlib's inline backend): each cell shows its figure
once, with ``ax=`` into a pyplot figure and without it."""

from __future__ import annotations

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "pi_session.jsonl"
DEMO = ROOT / "tests" / "fixtures" / "sessions" / "--tmp-demo--"

CELLS = {
    "context, ax= of a pyplot figure": (
        "fig, ax = plt.subplots()\nplots.plot_context_tokens(FIXTURE, ax=ax, context_window=8000)"
    ),
    "context, no ax": "plots.plot_context_tokens(FIXTURE)",
    "composition, ax=": "fig, ax = plt.subplots()\nplots.plot_token_composition(FIXTURE, ax=ax)",
    "composition of a directory": "plots.plot_token_composition(DEMO)",
    "truncation, axes=": "fig, axes = plt.subplots(1, 2)\nplots.plot_truncation(DEMO, axes=list(axes))",
    "truncation, no axes": "plots.plot_truncation(DEMO)",
}


def test_each_plot_is_shown_once_in_a_kernel() -> None:
    setup = "\n".join(
        [
            "import sys",
            f"sys.path.insert(0, {str(ROOT)!r})",
            "%matplotlib inline",
            "import matplotlib.pyplot as plt",
            "from pi_nb.notebook import plots",
            f"FIXTURE, DEMO = {str(FIXTURE)!r}, {str(DEMO)!r}",
        ]
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(setup), *(nbformat.v4.new_code_cell(c) for c in CELLS.values())]
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=False)
    client.execute()
    for name, cell in zip(CELLS, nb.cells[1:], strict=True):
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1, (name, [(o.output_type, list(o.get("data", {}))) for o in cell.outputs])
