"""The notebook layer renders and assembles; it does not read sessions.

Walks the syntax tree of the notebook modules that used to hold engine logic (frames, the
truncation view, the corpus loader, the views' base) and checks every import they make (at the
top, inside functions, through ``importlib.import_module`` or ``__import__``) and every call to
the builtin ``open``: no JSON parser, no session-file reader, no context builder, no file walker.
Those live in the engine (``pi_nb.session.source``, ``pi_nb.analysis``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIN = ["frames.py", "truncation.py", "corpus.py", "_base.py"]

FORBIDDEN = {
    # parsing JSON (session lines)
    "json": "parses JSON",
    "orjson": "parses JSON (the one orjson path is pi_nb.session.jsonl's)",
    "ujson": "parses JSON",
    "simplejson": "parses JSON",
    # reading and walking session files
    "pi_nb.session.jsonl": "reads session files (use pi_nb.session.source)",
    "pi_nb.session.paths": "walks session directories (use pi_nb.session.source)",
    "pi_nb.session.migrations": "migrates session entries",
    "pi_nb.session.context": "builds the context of a session (engine logic)",
    "pi_nb.session.tree_model": "is the tree model (use pi_nb.session.source to load)",
    "pi_nb._fs": "reads files",
    "glob": "walks directories",
    "fnmatch": "walks directories",
    "concurrent.futures.process": "runs the corpus workers (pi_nb.analysis.corpus)",
    "concurrent.futures.ProcessPoolExecutor": "runs the corpus workers (pi_nb.analysis.corpus)",
    # counting tokens is the engine's
    "pi_nb.tokens": "counts tokens (engine logic)",
}


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module a tree imports: ``import a.b``, ``from a.b import c`` (also ``a.b.c``, which
    may be a module), ``importlib.import_module("a")`` and ``__import__("a")`` with a literal."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            out.append((node.lineno, base))
            out.extend((node.lineno, f"{base}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.append((node.lineno, arg.value))
    return out


def _forbidden(module: str) -> str | None:
    for bad, why in FORBIDDEN.items():
        if module == bad or module.startswith(bad + "."):
            return why
    return None


def _opens(tree: ast.AST) -> list[int]:
    """Lines calling the builtin ``open`` (or ``io.open`` / ``os.open``)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id == "open":
                lines.append(node.lineno)
            elif isinstance(fn, ast.Attribute) and fn.attr in (
                "open",
                "read_text",
                "read_bytes",
                "walk",
                "scandir",
            ):
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("name", THIN)
def test_the_notebook_module_does_not_read_sessions(name: str) -> None:
    path = ROOT / "pi_nb" / "notebook" / name
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bad = [f"line {n}: imports {m} ({why})" for n, m in _imports(tree) if (why := _forbidden(m))]
    bad += [f"line {n}: opens or walks files" for n in _opens(tree)]
    assert not bad, f"pi_nb/notebook/{name}: " + "; ".join(bad)


def test_the_check_sees_what_it_forbids() -> None:
    # the walker finds each way of importing (at the top, in a function, by name) and opening
    src = (
        "import json\n"
        "from pi_nb.session import jsonl\n"
        "def f():\n"
        "    from pi_nb.session.jsonl import read_session_file\n"
        "    import importlib\n"
        "    importlib.import_module('orjson')\n"
        "    return open('x').read()\n"
    )
    tree = ast.parse(src)
    found = {m for _, m in _imports(tree) if _forbidden(m)}
    assert {"json", "pi_nb.session.jsonl", "pi_nb.session.jsonl.read_session_file", "orjson"} <= found
    assert _opens(tree) == [7]
    assert _forbidden("pi_nb.session.source") is None and _forbidden("jsonschema") is None


def test_the_engine_modules_import_no_pandas_or_ipython() -> None:
    # the row builders are plain Python: pandas only where the frame is made (pi_nb.notebook)
    for path in [
        *sorted((ROOT / "pi_nb" / "analysis").glob("*.py")),
        ROOT / "pi_nb" / "session" / "source.py",
    ]:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        mods = {m.split(".")[0] for _, m in _imports(tree)}
        assert not mods & {"pandas", "numpy", "IPython", "ipywidgets", "tqdm", "dask"}, path
        assert not any(m.startswith("pi_nb.notebook") for _, m in _imports(tree)), path
