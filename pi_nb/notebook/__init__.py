"""The notebook toolkit: widgets, static views, frames, plots (and, later, the magics).

Importing this package has no side effects and imports neither pandas, matplotlib nor
ipywidgets: each name below is loaded from its module on first access.

* views / widgets: :func:`session_tree`, :func:`token_budget`, :func:`truncation_view`,
  :func:`tool_result_truncation` (objects that render as HTML + text, and as live widgets
  in a kernel);
* the budget model (from the engine's :mod:`pi_nb.budget`): :class:`BudgetInput`,
  :func:`compute_budget`, :class:`BudgetTracker`, :func:`budget_input_from_session`; the tree
  model :class:`SessionTreeModel` (from :mod:`pi_nb.session.tree_model`);
* :func:`follow` - the tree, budget and a turn log of a session file another process writes;
* :func:`export_html` / :class:`StaticHTMLExporter` - static HTML of a notebook, no CDN;
* frames (pandas): :func:`entries_df`, :func:`messages_df`, :func:`tool_results_df`,
  :func:`usage_df`, :func:`compactions_df`; research frames :func:`retention_df`,
  :func:`retention_summary_df`, :func:`estimate_drift_df`;
* plots (matplotlib): :func:`plot_context_tokens`, :func:`plot_token_composition`,
  :func:`plot_truncation`, :func:`plot_retention`, :func:`plot_estimate_drift`.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    # budget (pure)
    "BudgetCategory": "budget",
    "BudgetInput": "budget",
    "BudgetTracker": "budget",
    "ContextUsage": "budget",
    "KeepRecentWindow": "budget",
    "TokenBudget": "budget",
    "budget_input_from_session": "budget",
    "compaction_kept_messages": "budget",
    "compute_budget": "budget",
    "context_level": "budget",
    "format_tokens": "budget",
    "get_context_usage": "budget",
    "has_usage_after_latest_compaction": "budget",
    "message_category": "budget",
    # static views
    "SessionTreeModel": "views",
    "TreeRow": "views",
    "TruncationReport": "views",
    "load_session": "views",
    "render_budget_html": "views",
    "render_budget_text": "views",
    "render_tree_html": "views",
    "render_tree_text": "views",
    "render_truncation_html": "views",
    "render_truncation_text": "views",
    "truncation_report": "views",
    "truncation_report_for_text": "views",
    # static export (nbconvert)
    "StaticHTMLExporter": "export",
    "StaticViewsPreprocessor": "export",
    "export_html": "export",
    "static_widget_outputs": "export",
    # following a session file another process writes
    "SessionFollower": "following",
    "follow": "following",
    # widgets
    "ViewGroup": "widgets",
    "refresh_live_views": "widgets",
    "BudgetView": "widgets",
    "SessionTreeView": "widgets",
    "TruncationView": "widgets",
    "session_tree": "widgets",
    "token_budget": "widgets",
    "tool_result_truncation": "widgets",
    "truncation_view": "widgets",
    # magics (IPython is imported only when one of these is used)
    "PiMagics": "magics",
    "current_session": "magics",
    # frames
    "SessionLoadWarning": "frames",
    "session_frames": "frames",
    "session_list_df": "frames",
    "session_managers": "frames",
    "sessions_df": "frames",
    "compactions_df": "frames",
    "entries_df": "frames",
    "messages_df": "frames",
    "tool_results_df": "frames",
    "usage_df": "frames",
    # research frames: what compactions keep, how far the estimates drift
    "estimate_drift_df": "frames",
    "retention_df": "frames",
    "retention_summary_df": "frames",
    # corpora (a directory of sessions, one process or Dask)
    "corpus_dask": "corpus",
    "load_corpus": "corpus",
    # the turn view
    "TurnFailedError": "turn",
    # plots
    "composition_series": "plots",
    "context_series": "plots",
    "plot_context_tokens": "plots",
    "plot_token_composition": "plots",
    "plot_truncation": "plots",
    "plot_estimate_drift": "plots",
    "plot_retention": "plots",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_nb.notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pi_nb.notebook.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# --- magics (the pi_nb/notebook/magics/ package, the lead) ----------------------------------
# load_ipython_extension / unload_ipython_extension go here (``%load_ext pi_nb``).
