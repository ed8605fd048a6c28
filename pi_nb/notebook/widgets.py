"""The live views, under their historical module name.

Each view object renders as static ``text/html`` + ``text/plain`` and - in a kernel with comms -
also as its live ipywidgets control. The views live in their own modules
(:mod:`pi_nb.notebook.tree`, :mod:`pi_nb.notebook.budget_bar`, :mod:`pi_nb.notebook.truncation`);
this module keeps every name it had importable.
"""

from __future__ import annotations

from pi_nb.notebook._base import ViewGroup, kernel_has_comms
from pi_nb.notebook.budget_bar import BudgetView, token_budget
from pi_nb.notebook.tree import SUMMARY_CHOICES, SessionTreeView, refresh_live_views, session_tree
from pi_nb.notebook.truncation import TruncationView, tool_result_truncation, truncation_view

__all__ = [
    "SUMMARY_CHOICES",
    "BudgetView",
    "SessionTreeView",
    "TruncationView",
    "ViewGroup",
    "kernel_has_comms",
    "refresh_live_views",
    "session_tree",
    "token_budget",
    "tool_result_truncation",
    "truncation_view",
]
