"""Write docs/api.md: one mkdocstrings block per public module, grouped by boundary.

    python tools/make_api_docs.py          # rewrite docs/api.md
    python tools/make_api_docs.py --check  # exit 1 if docs/api.md is out of date (tests/test_docs.py)

Every public module of ``pi_nb`` (not starting with ``_``) that declares ``__all__`` gets a block,
so each name of ``pi_nb.__all__`` and ``pi_nb.notebook.__all__`` is documented under the module
that defines it; ``tests/test_docs.py`` builds the site strictly and checks that coverage.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GROUPS = [
    ("Tool output", ("pi_nb.truncation", "pi_nb.tools")),
    ("Tokens and messages", ("pi_nb.tokens", "pi_nb.messages")),
    ("The request", ("pi_nb.resources", "pi_nb.system_prompt")),
    ("History: the session tree", ("pi_nb.session",)),
    ("History: compaction and branch summaries", ("pi_nb.compaction",)),
    ("Analysis: session frames and reports", ("pi_nb.analysis",)),
    ("Export: Inspect AI eval logs", ("pi_nb.export",)),
    ("Models", ("pi_nb.providers",)),
    ("The agent", ("pi_nb.agent",)),
    ("Budgets, views and what-if replays", ("pi_nb.budget", "pi_nb.tree", "pi_nb.what_if")),
    ("Safety", ("pi_nb.redaction",)),
    ("Errors", ("pi_nb.errors",)),
    ("JavaScript values", ("pi_nb.undefined",)),
    ("Notebook toolkit", ("pi_nb.notebook",)),
]


# old module names kept importable for one release (they re-export a renamed module)
DEPRECATED_ALIASES = {"pi_nb.notebook.whatif"}

# packages documented as one block: their own names (not re-exports of documented modules) are
# defined in the package itself, beside submodules without an ``__all__``
DOCUMENTED_PACKAGES = {"pi_nb.notebook.magics", "pi_nb.what_if"}


def public_modules() -> list[str]:
    import pi_nb

    names = ["pi_nb"]
    for info in pkgutil.walk_packages(pi_nb.__path__, "pi_nb."):
        if any(part.startswith("_") for part in info.name.split(".")) or info.name in DEPRECATED_ALIASES:
            continue
        names.append(info.name)
    out = []
    for name in sorted(names):
        module = importlib.import_module(name)
        if getattr(module, "__all__", None) and (
            not hasattr(module, "__path__") or name in DOCUMENTED_PACKAGES
        ):
            out.append(name)
    return out


def render() -> str:
    modules = public_modules()
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings by `tools/make_api_docs.py`. The top-level `pi_nb` package",
        "re-exports the names users reach for; each is documented below under the module that",
        "defines it. `pi_nb.notebook` is the notebook toolkit (`%load_ext pi_nb` loads it).",
        "",
    ]
    seen: set[str] = set()
    for title, prefixes in GROUPS:
        members = [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]
        if not members:
            continue
        lines += [f"## {title}", ""]
        for m in members:
            seen.add(m)
            lines += [f"::: {m}", "    options:", "      heading_level: 3", ""]
    rest = [m for m in modules if m not in seen]
    if rest:
        lines += ["## Other modules", ""]
        for m in rest:
            lines += [f"::: {m}", "    options:", "      heading_level: 3", ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    target = ROOT / "docs" / "api.md"
    text = render()
    if "--check" in sys.argv:
        if target.read_text(encoding="utf-8") != text:
            print("docs/api.md is out of date: run python tools/make_api_docs.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
