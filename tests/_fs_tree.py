"""File trees for the resource golden tests: written from a JSON spec, paths masked as ``<ROOT>``.

A spec is a list of ``[kind, relative path, payload]``: ``["d", "a/b", null]`` a directory,
``["f", "a/SKILL.md", "text"]`` a UTF-8 file, ``["l", "a/link", "../target"]`` a symlink (the
payload is the link text, relative to the link's directory).
Used by tests/golden/make_*.py (which record Pi's answers) and by the tests that replay them.
"""

from __future__ import annotations

import json
import os
from typing import Any

ROOT = "<ROOT>"


def materialize(root: str, spec: list[list[Any]]) -> None:
    for kind, rel, payload in spec:
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "d":
            os.makedirs(path, exist_ok=True)
        elif kind == "f":
            with open(path, "wb") as f:
                f.write(payload.encode("utf-8"))
        elif kind == "l":
            os.symlink(payload, path)
        else:
            raise ValueError(f"unknown tree entry kind {kind!r}")


def mask(value: Any, root: str) -> Any:
    """``value`` with every occurrence of the absolute ``root`` replaced by ``<ROOT>``."""
    text = json.dumps(value, ensure_ascii=False)
    esc = json.dumps(root, ensure_ascii=False)[1:-1]
    return json.loads(text.replace(esc, ROOT))


def unmask(value: Any, root: str) -> Any:
    """The inverse of :func:`mask` (for recorded request arguments)."""
    text = json.dumps(value, ensure_ascii=False)
    esc = json.dumps(root, ensure_ascii=False)[1:-1]
    return json.loads(text.replace(ROOT, esc))
