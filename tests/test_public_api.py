"""The top-level package: a curated surface declared once (a lazy map, `__all__` derived from it), and an import that stays light."""

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


def test_all_is_curated_not_every_submodule_name() -> None:
    """Internals stay in their subpackages; a moved name still resolves, with a warning naming its home."""
    import warnings

    assert len(pi_nb.__all__) < 350  # 363 before the curation; grow it deliberately (+9: readiness, auth, create; +12: policies)
    for internal in ("now_ms", "generate_id", "OrderedStrSet", "is_cut_point_message", "make_usage"):
        assert internal not in pi_nb.__all__
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = getattr(pi_nb, internal)
        assert value is not None
        assert any(issubclass(w.category, DeprecationWarning) and "pi_nb." in str(w.message) for w in caught)
    for mirrored in (
        "truncate_head",
        "truncate_tail",
        "build_session_context",
        "find_valid_cut_points",
        "find_cut_point",
        "prepare_compaction",
        "load_project_context_files",
        "load_skills",
        "build_system_prompt",
    ):
        assert mirrored in pi_nb.__all__


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pi_nb.no_such_name  # noqa: B018


def test_exported_members_are_exactly_all_and_each_resolves() -> None:
    """``__all__`` is what the top level exposes (httpx's ``test_exported_members``), each name is
    the object of the module the map names, and ``from pi_nb import *`` gives exactly ``__all__``."""
    import importlib
    import types

    exports = pi_nb._EXPORTS
    assert pi_nb.__all__ == sorted(exports)
    exposed = {
        name
        for name in dir(pi_nb)
        if not name.startswith("_")
        and name not in ("load_ipython_extension", "unload_ipython_extension")
        and not isinstance(getattr(pi_nb, name), types.ModuleType)
    }
    assert exposed == set(pi_nb.__all__)
    for name, module in exports.items():
        assert getattr(pi_nb, name) is getattr(importlib.import_module(f"pi_nb.{module}"), name), name
    code = "from pi_nb import *\nprint(sorted(k for k in dir() if not k.startswith('_')))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == repr(sorted(pi_nb.__all__))


def test_import_loads_no_submodule_until_a_name_is_used() -> None:
    code = (
        "import sys, pi_nb\n"
        "print(sorted(m for m in sys.modules if m.startswith('pi_nb.')))\n"
        "pi_nb.truncate_head\n"
        "print('pi_nb.truncation' in sys.modules, 'pi_nb.agent' in sys.modules)\n"
        "import pi_nb.session\n"
        "print(pi_nb.session.SessionManager is pi_nb.SessionManager)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:3] == ["[]", "True False", "True"]


def test_a_submodule_is_an_attribute_even_before_it_is_imported() -> None:
    code = "import pi_nb\nprint(pi_nb.compaction.__name__, hasattr(pi_nb, 'no_such_module'))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "pi_nb.compaction False"
