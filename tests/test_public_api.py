"""The top-level package: a curated, sorted __all__, and an import that stays light."""

from __future__ import annotations

import subprocess
import sys

import pi_nb


def test_all_is_sorted_and_unique() -> None:
    assert list(pi_nb.__all__) == sorted(set(pi_nb.__all__))


def test_every_exported_name_exists() -> None:
    missing = [name for name in pi_nb.__all__ if not hasattr(pi_nb, name)]
    assert missing == []


def test_import_pulls_in_no_notebook_or_provider_library() -> None:
    code = (
        "import sys, pi_nb\n"
        "heavy = {'IPython', 'ipywidgets', 'pandas', 'matplotlib', 'openai', 'anthropic', 'dask'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
