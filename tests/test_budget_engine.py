"""The budget and tree models are engine modules: importable and usable with no notebook stack,
and the old notebook names are the same objects."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_engine_models_need_no_notebook_stack() -> None:
    code = (
        "import sys\n"
        "import pi_nb.budget, pi_nb.session.tree_model, pi_nb.session.tail\n"
        "from pi_nb.session import SessionManager\n"
        "from pi_nb.session.tree_model import SessionTreeModel\n"
        "from pi_nb.budget import BudgetTracker, budget_input_from_session\n"
        "sm = SessionManager.in_memory('/tmp')\n"
        "sm.append_message({'role': 'user', 'content': 'hi', 'timestamp': 1})\n"
        "assert SessionTreeModel(sm).entry_count == 1\n"
        "b = BudgetTracker().compute(budget_input_from_session(sm, model_context_window=1000))\n"
        "assert b.leaf_id == sm.get_leaf_id()\n"
        "heavy = [m for m in ('ipywidgets', 'IPython', 'pandas', 'matplotlib', 'pi_nb.notebook') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr


def test_old_names_are_the_engine_objects() -> None:
    import pi_nb.budget
    import pi_nb.notebook.budget
    from pi_nb.notebook import SessionTreeModel, TreeRow, compute_budget
    from pi_nb.session import tree_model

    assert pi_nb.notebook.budget is pi_nb.budget and compute_budget is pi_nb.budget.compute_budget
    assert SessionTreeModel is tree_model.SessionTreeModel and TreeRow is tree_model.TreeRow
