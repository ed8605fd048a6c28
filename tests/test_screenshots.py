"""The exported notebook, looked at in a real browser (issue 7).

``notebooks/99_every_magic.ipynb`` is executed by a real kernel, exported to static HTML by
``tools/run_notebooks.py``, and opened in headless Chromium (Debian's ``chromium``). For the
session tree, the token budget and a truncation view, the page is reduced to that one output (a
stylesheet hides every other cell), screenshotted, and the PNG is checked by pixel analysis: the
view is drawn (not blank) in its own colours (the budget's category colours, the tree's active
branch bar and role colours, the truncation view's kept/dropped bars). The DOM Chromium builds
(``--dump-dom``) must contain each view's text.

Without a ``chromium`` binary the tests skip with the reason, except where ``CI`` is set: there
they fail, because CI installs it (``.ci/run``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import run_notebooks  # noqa: E402

NOTEBOOK = ROOT / "notebooks" / "99_every_magic.ipynb"
WIDTH = 1280


def _browser() -> str:
    path = run_notebooks.find_chromium()
    if path:
        return path
    message = "headless Chromium is not installed (Debian: apt-get install chromium)"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must have it")
    pytest.skip(message)


def screenshot(browser: str, page: Path, png: Path, height: int) -> Any:
    """Chromium's screenshot of ``page`` as an RGB numpy array."""
    import numpy as np
    from PIL import Image

    run_notebooks.screenshot(browser, page, png, width=WIDTH, height=height)
    return np.asarray(Image.open(png).convert("RGB")).astype(int)


def hex_rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return (int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16))


def pixels_of(image: Any, color: str, tolerance: int = 10) -> int:
    """How many pixels are within ``tolerance`` (per channel) of ``color``."""
    import numpy as np

    target = np.array(hex_rgb(color))
    return int((np.abs(image - target) <= tolerance).all(axis=2).sum())


def ink(image: Any) -> float:
    """The share of pixels that are not (near) white."""
    return float((image.min(axis=2) < 235).mean())


def ink_rows(image: Any) -> int:
    """How many pixel rows have something drawn in them."""
    return int((image.min(axis=2) < 200).any(axis=1).sum())


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str, Path, str]]:
    browser = _browser()
    for module in ("nbclient", "nbconvert"):
        try:
            __import__(module)
        except ImportError:
            if os.environ.get("CI"):
                pytest.fail(f"{module} is not installed; CI must have it (the [test] extra)")
            pytest.skip(f"{module} is not installed")
    nb = run_notebooks.execute_notebook(NOTEBOOK)
    html = run_notebooks.export_html(nb, title=NOTEBOOK.stem)
    out = tmp_path_factory.mktemp("screens")
    page = out / f"{NOTEBOOK.stem}.html"
    page.write_text(html, encoding="utf-8")
    yield nb, html, out, browser


def _cell_id(nb: Any, predicate: Any) -> str:
    cells = [c for c in nb.cells if c.cell_type == "code" and predicate(c.source)]
    assert len(cells) == 1, [c.source for c in cells]
    return str(cells[0].id)


def _view(exported: tuple[Any, str, Path, str], name: str, predicate: Any, height: int) -> tuple[Any, str]:
    """A screenshot of one cell's output, and that cell's text in the DOM Chromium built."""
    nb, html, out, browser = exported
    cell_id = _cell_id(nb, predicate)
    page = out / f"{name}.html"
    page.write_text(run_notebooks.only_cells(html, [cell_id]), encoding="utf-8")
    image = screenshot(browser, page, out / f"{name}.png", height)
    return image, cell_text(_dom(exported), cell_id)


_DOM: dict[str, str] = {}


def _dom(exported: tuple[Any, str, Path, str]) -> str:
    """The DOM of the whole exported page (dumped once)."""
    _nb, _html, out, browser = exported
    if "page" not in _DOM:
        _DOM["page"] = run_notebooks.dump_dom(browser, out / f"{NOTEBOOK.stem}.html")
    return _DOM["page"]


class _CellText(HTMLParser):
    """The text inside the element with ``id="cell-id=..."``."""

    def __init__(self, cell_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.target = f"cell-id={cell_id}"
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth:
            if tag not in _VOID:
                self.depth += 1
        elif dict(attrs).get("id") == self.target:
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in _VOID:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.parts.append(data)


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def cell_text(dom: str, cell_id: str) -> str:
    parser = _CellText(cell_id)
    parser.feed(dom)
    text = "".join(parser.parts)
    assert text.strip(), f"cell {cell_id} not found in the DOM"
    return text


def test_the_whole_notebook_page_renders(exported: tuple[Any, str, Path, str]) -> None:
    _nb, _html, out, browser = exported
    image = screenshot(browser, out / f"{NOTEBOOK.stem}.html", out / "page.png", 4000)
    assert ink(image) > 0.02, "the page looks blank"
    assert ink_rows(image) > 2000, "the first 4,000 pixels of the page should be mostly content"
    dom = _dom(exported)
    for text in (
        "99 · Every magic, every widget",
        "%pi help",
        "Session tree",
        "Token budget",
        "Truncation boundary",
    ):
        assert text in dom


def test_session_tree_is_drawn(exported: tuple[Any, str, Path, str]) -> None:
    image, text = _view(exported, "tree", lambda s: s.strip() == "%pi tree", 1400)
    assert "Session tree" in text and "active branch" in text and "● leaf" in text
    assert "read notes.txt and run `seq 3000`" in text
    assert ink(image) > 0.02
    assert ink_rows(image) > 300, "one row per entry: the tree should be tall"
    assert pixels_of(image, "#f59e0b", 20) > 300, "the active-branch bar (amber)"
    assert pixels_of(image, "#fef3c7", 6) > 2000, "the highlighted leaf row"
    assert pixels_of(image, "#2563eb", 40) > 20 and pixels_of(image, "#16a34a", 40) > 20, (
        "user / assistant labels"
    )


def test_budget_bar_is_drawn_in_its_colours(exported: tuple[Any, str, Path, str]) -> None:
    from pi_nb.notebook.views import COLORS

    image, text = _view(exported, "budget", lambda s: s.strip() == "%pi budget", 700)
    assert "Token budget" in text and "compact above 28k" in text and "tool results" in text
    assert ink(image) > 0.01
    # the bar's segments: each category with tokens is a filled block of its colour
    for category in ("system prompt", "tool schemas", "tool results", "assistant"):
        assert pixels_of(image, COLORS[category], 6) > 150, f"no {category} segment in the bar"
    assert pixels_of(image, COLORS["error"], 30) > 20, "the threshold line"


def test_truncation_view_is_drawn(exported: tuple[Any, str, Path, str]) -> None:
    image, text = _view(
        exported, "truncation", lambda s: "tool_result_truncation(bash_results[0])" in s, 1000
    )
    assert "Truncation boundary" in text and "the model saw" in text and "dropped" in text
    assert "[Showing lines 1001-3000 of 3000. Full output:" in text
    assert ink(image) > 0.02
    assert pixels_of(image, "#86efac", 6) > 1000, "the kept part of the bytes/lines bars (green)"
    assert pixels_of(image, "#fee2e2", 6) > 1000, "the dropped part (red)"
    assert pixels_of(image, "#f0fdf4", 4) > 3000 and pixels_of(image, "#fef2f2", 4) > 3000, (
        "kept / dropped lines"
    )
