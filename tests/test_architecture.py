"""The package's layering, read from the source with :mod:`ast` (nothing is imported).

Every ``import`` of every module counts, at module level and inside functions (a function-level
import is still a dependency; it only hides a cycle). Imports under ``if TYPE_CHECKING:`` are left
out: they never run.

* (a) No import cycle between the packages: ``pi_nb.session``, ``pi_nb.resources``,
  ``pi_nb.tools``, ``pi_nb.agent``, ``pi_nb.compaction``, ``pi_nb.providers``, ``pi_nb.notebook``,
  and each top-level module (``pi_nb.budget``, ``pi_nb.tokens``...) as a node of its own.
* (b) No private name (``_x``) imported from another package, and no private module of another
  package (``pi_nb.compaction._types``) imported from outside it. The top-level private modules
  (``pi_nb._js``, ``pi_nb._fs``...) are pi_nb's shared internals and may be imported anywhere; the
  names taken from them must still be public.
* (c) The engine (everything outside ``pi_nb.notebook``) never imports ``pi_nb.notebook``,
  IPython, ipywidgets, pandas or matplotlib at module level.

A known violation in a file another branch is changing right now is listed below with its reason;
an entry that no longer matches anything fails the test, so the lists only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pi_nb"
PACKAGES = ("session", "resources", "tools", "agent", "compaction", "providers", "notebook")
NOTEBOOK_ONLY = ("pi_nb.notebook", "IPython", "ipywidgets", "pandas", "matplotlib")

# (a) import edges (importing module, imported node) left out of the cycle check
CYCLE_ALLOWED: dict[tuple[str, str], str] = {}

# (b) private imports across packages: (importing module, "from-module:name")
PRIVATE_ALLOWED: dict[tuple[str, str], str] = {}

# (c) notebook-only imports at the engine's module level: (importing module, imported module)
ENGINE_ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported module (``from x import y``: ``x``, or ``x.y`` when that is a module)
    names: tuple[str, ...]  # ``from x import a, b``: ("a", "b"); ``import x``: ()
    from_module: str | None
    top_level: bool
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, top_level: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        yield from _visit(child, top_level)


def _visit(child: ast.AST, top_level: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    if isinstance(child, ast.If) and _is_type_checking(child.test):
        for sub in child.orelse:  # only the ``else`` branch runs
            yield from _visit(sub, top_level)
        return
    if isinstance(child, (ast.Import, ast.ImportFrom)):
        yield child, top_level
    inner = top_level and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    yield from _walk(child, inner)


def imports_of(path: Path) -> list[Import]:
    module = module_name(path)
    is_package = path.name == "__init__.py"
    out: list[Import] = []
    for node, top in _walk(ast.parse(path.read_text(encoding="utf-8")), True):
        if isinstance(node, ast.Import):
            out.extend(Import(module, a.name, (), None, top, node.lineno) for a in node.names)
            continue
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        names = tuple(a.name for a in node.names)
        out.append(Import(module, source, names, source, top, node.lineno))
    return out


ALL_IMPORTS = [imp for path in sorted(PACKAGE.rglob("*.py")) for imp in imports_of(path)]


def node_of(module: str) -> str | None:
    """The layering node of a pi_nb module: its package, or a top-level module itself."""
    parts = module.split(".")
    if parts[0] != "pi_nb":
        return None
    if len(parts) == 1:
        return "pi_nb"
    return f"pi_nb.{parts[1]}"


def package_edges() -> dict[str, dict[str, list[Import]]]:
    edges: dict[str, dict[str, list[Import]]] = {}
    for imp in ALL_IMPORTS:
        src, dst = node_of(imp.module), node_of(imp.target)
        # the package's own __init__ (its public surface, a lazy map) is the one module above all
        if src is None or dst is None or src == dst or "pi_nb" in (src, dst):
            continue
        if (imp.module, dst) in CYCLE_ALLOWED:
            continue
        edges.setdefault(src, {}).setdefault(dst, []).append(imp)
    return edges


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the components with more than one node (the import cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walker_sees_function_level_and_skips_type_checking_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import os\n"
        "if TYPE_CHECKING:\n    import pandas\nelse:\n    import csv\n"
        "def f():\n    from pi_nb.agent import Agent\n"
        "class C:\n    import json\n"
    )
    found = {
        (node.names[0].name if isinstance(node, ast.Import) else node.module, top)
        for node, top in _walk(ast.parse(source), True)
    }
    assert not any(name == "pandas" for name, _ in found)
    assert ("pi_nb.agent", False) in found
    assert {("os", True), ("csv", True), ("json", True)} <= found


def test_cycle_detection_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_packages() -> None:
    edges = package_edges()
    cycles = strongly_connected({src: set(dsts) for src, dsts in edges.items()})
    report = []
    for component in cycles:
        members = set(component)
        for src in component:
            for dst, imps in sorted(edges.get(src, {}).items()):
                if dst in members:
                    report.extend(f"{i.module}:{i.line} -> {i.target}" for i in imps)
    assert cycles == [], "import cycles between packages:\n" + "\n".join(report)


def _private_imports() -> list[tuple[Import, str]]:
    found = []
    for imp in ALL_IMPORTS:
        src, dst = node_of(imp.module), node_of(imp.target)
        if src is None or dst is None or src == dst or imp.from_module is None:
            continue
        parts = imp.from_module.split(".")
        private_module = len(parts) > 2 and parts[1] in PACKAGES and any(p.startswith("_") for p in parts[2:])
        for name in imp.names:
            if (name.startswith("_") and not name.startswith("__")) or private_module:
                found.append((imp, f"{imp.from_module}:{name}"))
    return found


def test_no_private_name_is_imported_across_packages() -> None:
    bad = [
        f"{imp.module}:{imp.line}: from {what.replace(':', ' import ')}"
        for imp, what in _private_imports()
        if (imp.module, what) not in PRIVATE_ALLOWED
    ]
    assert bad == []


def _engine_notebook_imports() -> list[Import]:
    return [
        imp
        for imp in ALL_IMPORTS
        if imp.top_level
        and not imp.module.startswith("pi_nb.notebook")
        and any(imp.target == m or imp.target.startswith(m + ".") for m in NOTEBOOK_ONLY)
    ]


def test_the_engine_never_imports_the_notebook_stack_at_module_level() -> None:
    bad = [
        f"{imp.module}:{imp.line}: {imp.target}"
        for imp in _engine_notebook_imports()
        if (imp.module, imp.target) not in ENGINE_ALLOWED
    ]
    assert bad == []


@pytest.mark.parametrize("allowed", ["cycle", "private", "engine"])
def test_every_allow_list_entry_still_matches_something(allowed: str) -> None:
    """A fixed violation must leave its list (the lists only shrink)."""
    if allowed == "cycle":
        present = {(i.module, node_of(i.target)) for i in ALL_IMPORTS}
        stale = [k for k in CYCLE_ALLOWED if k not in present]
    elif allowed == "private":
        present_p = {(imp.module, what) for imp, what in _private_imports()}
        stale = [k for k in PRIVATE_ALLOWED if k not in present_p]
    else:
        present_e = {(i.module, i.target) for i in _engine_notebook_imports()}
        stale = [k for k in ENGINE_ALLOWED if k not in present_e]
    assert stale == []
