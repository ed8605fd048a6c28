"""The static views, under their historical module name.

Each view has its own module now: :mod:`pi_nb.notebook.tree` (the session tree),
:mod:`pi_nb.notebook.budget_bar` (the token budget), :mod:`pi_nb.notebook.truncation`
(truncation boundaries); the tree model is in the engine (:mod:`pi_nb.session.tree_model`) and
what they share in :mod:`pi_nb.notebook._base`. Every name this module had stays importable here.

Each view renders as ``text/html`` + ``text/plain`` (inline styles only, no ``<style>`` block,
no CDN, every user text escaped, bounded size), so a notebook reads the same in nbconvert HTML,
on GitHub, in VS Code and in a headless browser.
"""

from __future__ import annotations

from pi_nb.notebook._base import (
    COLORS,
    FONT,
    MIME_WIDGET,
    SANS,
    StaticView,
    _mapping,
    escape,
    load_session,
)
from pi_nb.notebook.budget_bar import render_budget_html, render_budget_text
from pi_nb.notebook.tree import render_tree_html, render_tree_text
from pi_nb.notebook.truncation import (
    TruncationReport,
    render_truncation_html,
    render_truncation_text,
    truncation_report,
    truncation_report_for_text,
)
from pi_nb.session.tree_model import FILTER_MODES, SessionTreeModel, TreeRow, format_tool_call

__all__ = [
    "COLORS",
    "FILTER_MODES",
    "FONT",
    "MIME_WIDGET",
    "SANS",
    "SessionTreeModel",
    "StaticView",
    "TreeRow",
    "TruncationReport",
    "_mapping",
    "escape",
    "format_tool_call",
    "load_session",
    "render_budget_html",
    "render_budget_text",
    "render_tree_html",
    "render_tree_text",
    "render_truncation_html",
    "render_truncation_text",
    "truncation_report",
    "truncation_report_for_text",
]
