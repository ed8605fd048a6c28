"""Add names to pi_nb/__init__.py's import blocks and __all__ (a maintainer's helper, kept sorted)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

INIT = Path(__file__).resolve().parents[1] / "pi_nb" / "__init__.py"


def add(module: str, names: list[str]) -> None:
    text = INIT.read_text(encoding="utf-8")
    block = re.search(rf"from {re.escape(module)} import \(\n(.*?)\)\n", text, re.S)
    if block:
        have = re.findall(r"^\s+(\w+),$", block.group(1), re.M)
        merged = sorted(set(have) | set(names), key=lambda n: (n.lower(), n))
        body = "".join(f"    {n},\n" for n in sorted(set(merged)))
        text = text[: block.start()] + f"from {module} import (\n{body})\n" + text[block.end() :]
    else:
        anchor = text.index("\n__version__")
        body = "".join(f"    {n},\n" for n in sorted(names))
        text = text[:anchor] + f"from {module} import (\n{body})\n" + text[anchor:]
    m = re.search(r"__all__ = \[(  # noqa[^\n]*)?\n(.*?)\]\n", text, re.S)
    assert m is not None
    current = re.findall(r'"([^"]+)"', m.group(2))
    all_names = sorted(set(current) | set(names))
    head = text[: m.start()] + "__all__ = [" + (m.group(1) or "") + "\n"
    text = head + "".join(f'    "{n}",\n' for n in all_names) + "]\n" + text[m.end() :]
    INIT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    add(sys.argv[1], sys.argv[2:])
