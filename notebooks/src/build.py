"""Write ``notebooks/NN_name.ipynb`` from ``notebooks/src/NN_name.py`` (clean: no outputs).

The sources are in Jupytext's "percent" format (``# %%`` starts a code cell, ``# %% [markdown]``
a markdown cell whose lines carry a leading ``# ``), so they diff and review like code. The
committed ``.ipynb`` files are what Jupyter, Binder and CI open; ``tests/test_notebooks.py``
checks that they are exactly what this script writes.

    python notebooks/src/build.py            # rewrite every notebook
    python notebooks/src/build.py --check    # exit 1 if a notebook differs from its source
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent
NOTEBOOKS = SRC.parent
_MARKER = re.compile(r"^# %%(?P<kind> \[markdown\])?\s*$")

METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "pygments_lexer": "ipython3"},
}


def parse_cells(text: str) -> list[tuple[str, str]]:
    """``[(cell_type, source)]`` of a percent-format file (text before the first marker is ignored)."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = _MARKER.match(line)
        if m:
            cells.append(("markdown" if m["kind"] else "code", []))
            continue
        if not cells:
            continue
        kind, lines = cells[-1]
        if kind == "markdown":
            if line.startswith("# "):
                line = line[2:]
            elif line in ("#", ""):
                line = ""
            else:
                raise ValueError(f"markdown line without '# ': {line!r}")
        lines.append(line)
    out = []
    for kind, lines in cells:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        out.append((kind, "\n".join(lines)))
    return out


def notebook_json(src: Path) -> str:
    """The ``.ipynb`` text for one source file (nbformat 4.5, stable cell ids, no outputs)."""
    cells = []
    for i, (kind, source) in enumerate(parse_cells(src.read_text(encoding="utf-8"))):
        cell: dict[str, object] = {"cell_type": kind, "id": f"{src.stem[:2]}-{i:02d}", "metadata": {}}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cell["source"] = source.splitlines(keepends=True)
        cells.append(cell)
    nb = {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def sources() -> list[Path]:
    return sorted(p for p in SRC.glob("[0-9][0-9]_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="only check that the notebooks are up to date")
    args = parser.parse_args(argv)
    stale = []
    for src in sources():
        target = NOTEBOOKS / f"{src.stem}.ipynb"
        text = notebook_json(src)
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        stale.append(target.name)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    if args.check and stale:
        print("out of date (run python notebooks/src/build.py):", ", ".join(stale))
        return 1
    if stale and not args.check:
        print("wrote", ", ".join(stale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
