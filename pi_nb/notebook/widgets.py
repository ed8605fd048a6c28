"""Live ipywidgets views: the session tree, the token budget, truncation boundaries.

Each view is an object with ``_repr_mimebundle_``: it always renders as static ``text/html`` +
``text/plain`` (:mod:`pi_nb.notebook.views`), and - when a kernel with comms is running - also
as the live widget (``application/vnd.jupyter.widget-view+json``), so a frontend with a widget
manager shows the controls and everything else (nbconvert, GitHub, a headless browser) shows
the same picture without JavaScript. :meth:`widget` returns the ipywidgets control itself.

ipywidgets is imported when a widget is first built, not when this module is imported.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pi_nb._js import UNDEFINED, Undefined
from pi_nb.errors import NotebookError
from pi_nb.notebook.budget import (
    PI_DEFAULT_KEEP_RECENT_TOKENS,
    PI_DEFAULT_RESERVE_TOKENS,
    BudgetInput,
    BudgetTracker,
    TokenBudget,
)
from pi_nb.notebook.views import (
    FILTER_MODES,
    MIME_WIDGET,
    SessionTreeModel,
    StaticView,
    TreeRow,
    TruncationReport,
    _mapping,
    escape,
    load_session,
    render_budget_html,
    render_budget_text,
    render_tree_html,
    render_tree_text,
    render_truncation_html,
    render_truncation_text,
    truncation_report,
    truncation_report_for_text,
)
from pi_nb.tokens import DEFAULT_ENCODING
from pi_nb.truncation import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES

if TYPE_CHECKING:
    import os

    from pi_nb.session.manager import SessionManager

__all__ = [
    "SUMMARY_CHOICES",
    "BudgetView",
    "SessionTreeView",
    "TruncationView",
    "kernel_has_comms",
    "session_tree",
    "token_budget",
    "tool_result_truncation",
    "truncation_view",
]

NavigateCallback = Callable[[str, bool, "str | None"], Any]

SUMMARY_CHOICES: tuple[str, ...] = ("No summary", "Summarize", "Summarize with custom prompt")
"""Pi's choices when leaving a branch in ``/tree`` (interactive-mode.js)."""


def kernel_has_comms() -> bool:
    """True inside a running IPython kernel (one that can talk to a widget manager).

    Looked up through ``sys.modules`` so that rendering a view never imports IPython.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _ipywidgets() -> Any:
    try:
        import ipywidgets
    except ImportError as exc:  # pragma: no cover - a dependency of pi_nb
        raise NotebookError("the live widgets need ipywidgets: pip install ipywidgets") from exc
    return ipywidgets


class _WidgetView(StaticView):
    """A static view that can also be a live widget."""

    live: bool | None = None
    """``None``: add the widget to the mime bundle only inside a kernel; ``True``/``False``: force."""

    _widget: Any = None

    def widget(self) -> Any:
        """The live ipywidgets control (built once)."""
        if self._widget is None:
            self._widget = self._build_widget()
        return self._widget

    def _build_widget(self) -> Any:
        raise NotImplementedError

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(include, exclude)
        live = kernel_has_comms() if self.live is None else self.live
        if live:
            w = self.widget()
            data = w._repr_mimebundle_()
            if isinstance(data, tuple):  # (data, metadata) in some ipywidgets versions
                data = data[0]
            if data and MIME_WIDGET in data:
                bundle[MIME_WIDGET] = data[MIME_WIDGET]
        return bundle


# =============================================================================================
# session tree
# =============================================================================================


def _row_label(row: TreeRow, width: int = 170) -> str:
    mark = "▌" if row.on_active_path else " "
    if row.run_length:
        text = f"{mark}{'  ' * row.indent}{row.title} ({row.text}) - select and press Expand"
    else:
        glyph = "⊞" if row.folded else ("⊟" if row.child_count > 1 else "─")
        text = f"{mark}{'  ' * row.indent}{glyph} {row.title} {row.text}".rstrip()
        if row.folded:
            text += f" [+{row.hidden_descendants}]"
        if row.label:
            text += f" 🏷{row.label}"
        if row.is_leaf:
            text += "  ● leaf"
    return text if len(text) <= width else text[: width - 1] + "…"


def _row_key(row: TreeRow) -> str:
    return f"run:{row.entry_id}" if row.run_length else row.entry_id


class SessionTreeView(_WidgetView):
    """The session tree: every entry a node, the active branch marked, fold/unfold, paging, and
    navigation to a selected entry with or without a summary.

    Args:
        source: a :class:`~pi_nb.session.SessionManager`, a session file or a list of entries.
        on_navigate: ``on_navigate(target_id, summarize, custom_instructions)``, e.g. an
            AgentSession's ``navigate_tree``; without it the view is read-only.
        Other arguments: see :class:`~pi_nb.notebook.views.SessionTreeModel`.

    The static HTML shows one page (the one with the leaf); the widget pages through all.
    """

    def __init__(
        self,
        source: SessionManager | str | os.PathLike[str] | Sequence[Mapping[str, Any]],
        *,
        on_navigate: NavigateCallback | None = None,
        leaf_id: str | Undefined | None = UNDEFINED,
        filter_mode: str = "all",
        page_size: int = 100,
        run_threshold: int = 40,
        show_tokens: bool = True,
        encoding: str = DEFAULT_ENCODING,
        live: bool | None = None,
    ) -> None:
        self.model = SessionTreeModel(
            source,
            leaf_id=leaf_id,
            filter_mode=filter_mode,
            page_size=page_size,
            run_threshold=run_threshold,
            encoding=encoding,
        )
        self.on_navigate = on_navigate
        self.show_tokens = show_tokens
        self.live = live
        self.page = self.model.page_of(self.model.leaf_id)
        self.last_error: BaseException | None = None
        self._syncing = False

    # -- static -----------------------------------------------------------------------------

    def to_html(self) -> str:
        return render_tree_html(self.model, page=self.page, show_tokens=self.show_tokens)

    def to_text(self) -> str:
        return render_tree_text(self.model, page=self.page)

    # -- actions (also usable without a widget) ---------------------------------------------

    def refresh(self) -> None:
        """Re-read the session (new entries, a moved leaf) and redraw."""
        self.model.refresh()
        self.page = min(self.page, self.model.page_count - 1)
        self._sync()

    def select(self, entry_id: str) -> None:
        self.model.select(entry_id)
        self.page = self.model.page_of(entry_id)
        self._sync()

    def toggle_fold(self, entry_id: str | None = None) -> None:
        """Fold/unfold the selected entry (or expand a collapsed run)."""
        target = entry_id or self.model.selected_id
        if target is None:
            raise NotebookError("no entry selected")
        self.model.toggle_fold(target)
        self._sync()

    def expand_run(self, entry_id: str) -> None:
        self.model.expand_run(entry_id)
        self._sync()

    def set_page(self, page: int) -> None:
        if not 0 <= page < self.model.page_count:
            raise NotebookError(f"page {page} is out of range (0..{self.model.page_count - 1})")
        self.page = page
        self._sync()

    def set_filter(self, mode: str) -> None:
        self.model.set_filter(mode)
        self.page = self.model.page_of(self.model.selected_id or self.model.leaf_id)
        self._sync()

    def navigate(
        self, target_id: str | None = None, *, summarize: bool = False, custom_instructions: str | None = None
    ) -> Any:
        """Call ``on_navigate(target_id, summarize, custom_instructions)`` and redraw.

        Raises :class:`~pi_nb.errors.NotebookError` without a callback or a target; whatever
        the callback raises propagates (the widget's button shows it instead).
        """
        if self.on_navigate is None:
            raise NotebookError("this tree view has no on_navigate callback (it is read-only)")
        target = target_id or self.model.selected_id
        if target is None:
            raise NotebookError("no entry selected to navigate to")
        self.model.entry(target)  # NotebookError for an unknown id
        if custom_instructions is not None and not summarize:
            raise NotebookError("custom instructions only apply when summarizing")
        result = self.on_navigate(target, summarize, custom_instructions)
        self.model.refresh()
        self.page = self.model.page_of(self.model.leaf_id)
        self._sync()
        return result

    # -- widget -----------------------------------------------------------------------------

    def _detail_html(self) -> str:
        sel = self.model.selected_id
        if sel is None:
            return "<i>select an entry</i>"
        entry = self.model.entry(sel)
        title, text, _kind, detail = self.model.display(entry)
        est, tik = self.model.tokens(sel)
        rows = [
            ("id", sel),
            ("parent", entry.get("parentId")),
            ("type", entry.get("type")),
            ("timestamp", entry.get("timestamp")),
            ("tokens", f"tiktoken {tik} ({self.model.encoding}) · Pi estimate {est}"),
        ]
        if detail:
            rows.append(("detail", detail))
        label = self.model.session.get_label(sel) if hasattr(self.model.session, "get_label") else None
        if label:
            rows.append(("label", label))
        if entry.get("type") == "compaction":
            details = _mapping(entry.get("details"))
            rows.append(("read files", ", ".join(map(str, details.get("readFiles", []) or []))))
            rows.append(("modified files", ", ".join(map(str, details.get("modifiedFiles", []) or []))))
        body = "".join(
            f'<tr><td style="color:#64748b;padding-right:8px;vertical-align:top">{escape(k)}</td><td>{escape(v)}</td></tr>'
            for k, v in rows
        )
        return (
            f'<div style="font-size:12px"><b>{escape(title)}</b> {escape(text[:300])}'
            f'<table style="font-size:12px;margin-top:4px">{body}</table></div>'
        )

    def _build_widget(self) -> Any:
        w = _ipywidgets()
        self.header = w.HTML()
        self.filter = w.Dropdown(
            options=list(FILTER_MODES), value=self.model.filter_mode, description="filter"
        )
        self.prev_button = w.Button(description="◀ prev", layout=w.Layout(width="80px"))
        self.next_button = w.Button(description="next ▶", layout=w.Layout(width="80px"))
        self.page_label = w.HTML()
        self.leaf_button = w.Button(description="go to leaf", layout=w.Layout(width="100px"))
        self.fold_button = w.Button(description="fold / unfold", layout=w.Layout(width="120px"))
        self.rows = w.Select(options=[], rows=18, layout=w.Layout(width="100%"))
        self.detail = w.HTML()
        self.summary_choice = w.Dropdown(
            options=list(SUMMARY_CHOICES), value=SUMMARY_CHOICES[0], description="leave with"
        )
        self.instructions = w.Textarea(
            placeholder="custom summary instructions", disabled=True, layout=w.Layout(width="100%")
        )
        self.navigate_button = w.Button(
            description="navigate here", button_style="warning", disabled=self.on_navigate is None
        )
        self.status = w.HTML()

        self.filter.observe(self._on_filter, names="value")
        self.rows.observe(self._on_select, names="value")
        self.summary_choice.observe(self._on_summary_choice, names="value")
        self.prev_button.on_click(lambda _b: self._guard(lambda: self.set_page(self.page - 1)))
        self.next_button.on_click(lambda _b: self._guard(lambda: self.set_page(self.page + 1)))
        self.leaf_button.on_click(lambda _b: self._guard(self._go_to_leaf))
        self.fold_button.on_click(lambda _b: self._guard(self._fold_or_expand))
        self.navigate_button.on_click(lambda _b: self._guard(self._navigate_clicked))

        box = w.VBox(
            [
                self.header,
                w.HBox(
                    [
                        self.filter,
                        self.prev_button,
                        self.page_label,
                        self.next_button,
                        self.leaf_button,
                        self.fold_button,
                    ]
                ),
                self.rows,
                self.detail,
                w.HBox([self.summary_choice, self.navigate_button]),
                self.instructions,
                self.status,
            ]
        )
        self._widget = box
        self._sync()
        return box

    def _guard(self, action: Callable[[], Any]) -> None:
        try:
            action()
        except Exception as exc:  # shown to the user, kept for inspection; never swallowed silently
            self.last_error = exc
            if self._widget is not None:
                self.status.value = (
                    f'<span style="color:#dc2626"><b>{escape(type(exc).__name__)}</b>: {escape(exc)}</span>'
                )
            raise

    def _go_to_leaf(self) -> None:
        leaf = self.model.leaf_id
        if leaf is not None:
            self.select(leaf)

    def _fold_or_expand(self) -> None:
        value = self.rows.value if self._widget is not None else None
        if isinstance(value, str) and value.startswith("run:"):
            self.expand_run(value[4:])
        else:
            self.toggle_fold()

    def _navigate_clicked(self) -> None:
        choice = self.summary_choice.value
        summarize = choice != SUMMARY_CHOICES[0]
        custom = (
            self.instructions.value
            if choice == SUMMARY_CHOICES[2] and self.instructions.value.strip()
            else None
        )
        target = self.model.selected_id
        self.navigate(target, summarize=summarize, custom_instructions=custom)
        self.status.value = (
            f'<span style="color:#15803d">navigated to <code>{escape(target)}</code>'
            f"{' with a summary' if summarize else ''}; leaf is now <code>{escape(self.model.leaf_id)}</code></span>"
        )

    def _on_filter(self, change: Mapping[str, Any]) -> None:
        if not self._syncing:
            self._guard(lambda: self.set_filter(change["new"]))

    def _on_select(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        value = change["new"]
        if isinstance(value, str) and not value.startswith("run:"):
            self.model.select(value)
            self._sync(rows=False)

    def _on_summary_choice(self, change: Mapping[str, Any]) -> None:
        self.instructions.disabled = change["new"] != SUMMARY_CHOICES[2]

    def _sync(self, *, rows: bool = True) -> None:
        if self._widget is None:
            return
        self._syncing = True
        try:
            stats = self.model.stats()
            self.header.value = (
                f"<b>Session tree</b> · {stats['entries']} entries · {stats['branchPoints']} branch points · "
                f"{stats['compactions']} compactions · {stats['labels']} labels · leaf "
                f"<code>{escape(stats['leafId'])}</code>"
            )
            self.page_label.value = f"page {self.page + 1}/{self.model.page_count}"
            self.prev_button.disabled = self.page <= 0
            self.next_button.disabled = self.page >= self.model.page_count - 1
            self.filter.value = self.model.filter_mode
            if rows:
                page_rows = self.model.page_rows(self.page)
                self.rows.options = [(_row_label(r), _row_key(r)) for r in page_rows]
                keys = {_row_key(r) for r in page_rows}
                sel = self.model.selected_id
                self.rows.value = sel if sel in keys else None
            self.detail.value = self._detail_html()
        finally:
            self._syncing = False


def session_tree(
    source: SessionManager | str | os.PathLike[str] | Sequence[Mapping[str, Any]],
    *,
    on_navigate: NavigateCallback | None = None,
    **kwargs: Any,
) -> SessionTreeView:
    """A :class:`SessionTreeView` of a session (manager, file or entries)."""
    return SessionTreeView(source, on_navigate=on_navigate, **kwargs)


# =============================================================================================
# token budget
# =============================================================================================


class BudgetView(_WidgetView):
    """The token budget bar. :meth:`update` redraws it (at most every ``min_interval`` seconds;
    the last update of a burst is always drawn, by a timer or by :meth:`flush`).

    Counts are cached in a :class:`~pi_nb.notebook.budget.BudgetTracker`, so updating during a
    turn only tokenizes the new messages.
    """

    def __init__(
        self,
        budget: TokenBudget | BudgetInput,
        *,
        title: str = "Token budget",
        tracker: BudgetTracker | None = None,
        min_interval: float = 0.1,
        live: bool | None = None,
    ) -> None:
        if not isinstance(budget, (TokenBudget, BudgetInput)):
            raise NotebookError(
                f"a budget view needs a TokenBudget or a BudgetInput, got {type(budget).__name__}"
            )
        self.title = title
        self.tracker = tracker or BudgetTracker(budget.encoding)
        self.min_interval = min_interval
        self.live = live
        self._lock = threading.Lock()
        self._pending: TokenBudget | BudgetInput | None = None
        self._timer: threading.Timer | None = None
        self._last_draw = 0.0
        self.draws = 0
        self.budget = self._resolve(budget)

    def _resolve(self, value: TokenBudget | BudgetInput) -> TokenBudget:
        if isinstance(value, TokenBudget):
            return value
        if isinstance(value, BudgetInput):
            return self.tracker.compute(value)
        raise NotebookError(f"a budget view needs a TokenBudget or a BudgetInput, got {type(value).__name__}")

    @classmethod
    def from_session(
        cls,
        session_manager: SessionManager | str | os.PathLike[str],
        *,
        model_context_window: int,
        reserve_tokens: int = PI_DEFAULT_RESERVE_TOKENS,
        keep_recent_tokens: int = PI_DEFAULT_KEEP_RECENT_TOKENS,
        **kwargs: Any,
    ) -> BudgetView:
        """The budget of a session file or manager at its leaf (system prompt unknown unless
        given); :meth:`refresh` re-reads the session, counting only what is new."""
        view_kwargs = {k: kwargs.pop(k) for k in ("title", "tracker", "min_interval", "live") if k in kwargs}
        sm = load_session(session_manager)
        tracker = view_kwargs.pop("tracker", None) or BudgetTracker(kwargs.get("encoding", DEFAULT_ENCODING))
        session_args = {
            "model_context_window": model_context_window,
            "reserve_tokens": reserve_tokens,
            "keep_recent_tokens": keep_recent_tokens,
            **kwargs,
        }
        view = cls(tracker.session_input(sm, **session_args), tracker=tracker, **view_kwargs)
        view._session = (sm, session_args)
        return view

    _session: tuple[Any, dict[str, Any]] | None = None

    def refresh(self, *, force: bool = False) -> bool:
        """Re-read the session this view was made from (see :meth:`from_session`) and redraw."""
        if self._session is None:
            raise NotebookError("refresh() needs a view made with BudgetView.from_session()")
        sm, args = self._session
        return self.update(self.tracker.session_input(sm, **args), force=force)

    def to_html(self) -> str:
        return render_budget_html(self.budget, title=self.title)

    def to_text(self) -> str:
        return render_budget_text(self.budget)

    def update(self, value: TokenBudget | BudgetInput, *, force: bool = False) -> bool:
        """Show a new budget; returns ``True`` if it was drawn now, ``False`` if deferred."""
        with self._lock:
            now = time.monotonic()
            wait = self.min_interval - (now - self._last_draw)
            if force or wait <= 0:
                self._pending = None
                self._draw(self._resolve(value))
                return True
            self._pending = value
            if self._timer is None:
                self._timer = threading.Timer(wait, self.flush)
                self._timer.daemon = True
                self._timer.start()
            return False

    def flush(self) -> None:
        """Draw the pending update, if any."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._pending is not None:
                pending, self._pending = self._pending, None
                self._draw(self._resolve(pending))

    def _draw(self, budget: TokenBudget) -> None:
        self.budget = budget
        self._last_draw = time.monotonic()
        self.draws += 1
        if self._widget is not None:
            self._widget.value = self.to_html()

    def _build_widget(self) -> Any:
        w = _ipywidgets()
        self._widget = w.HTML(value=self.to_html())
        return self._widget


def token_budget(
    source: TokenBudget | BudgetInput | SessionManager | str | os.PathLike[str],
    *,
    model_context_window: int | None = None,
    **kwargs: Any,
) -> BudgetView:
    """A :class:`BudgetView` of a budget, a budget input, or a session (then pass the window)."""
    if isinstance(source, (TokenBudget, BudgetInput)):
        return BudgetView(source, **kwargs)
    if model_context_window is None:
        raise NotebookError("token_budget() of a session needs model_context_window")
    return BudgetView.from_session(source, model_context_window=model_context_window, **kwargs)


# =============================================================================================
# truncation
# =============================================================================================


class TruncationView(_WidgetView):
    """A truncation boundary: what the model saw against the full output."""

    def __init__(self, report: TruncationReport, *, context_lines: int = 6, live: bool | None = None) -> None:
        if context_lines < 0:
            raise NotebookError(f"context_lines must be >= 0, got {context_lines}")
        self.report = report
        self.context_lines = context_lines
        self.live = live

    def to_html(self) -> str:
        return render_truncation_html(self.report, context_lines=self.context_lines)

    def to_text(self) -> str:
        return render_truncation_text(self.report, context_lines=min(self.context_lines, 3))

    def _build_widget(self) -> Any:
        w = _ipywidgets()
        self.html = w.HTML(value=self.to_html())
        self.lines_slider = w.IntSlider(value=self.context_lines, min=0, max=60, description="context lines")

        def on_lines(change: Mapping[str, Any]) -> None:
            self.context_lines = int(change["new"])
            self.html.value = self.to_html()

        self.lines_slider.observe(on_lines, names="value")
        self._widget = w.VBox([self.lines_slider, self.html])
        return self._widget


def truncation_view(
    full_text: str | bytes,
    mode: Literal["head", "tail"] = "head",
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    context_lines: int = 6,
) -> TruncationView:
    """Truncate a text with :mod:`pi_nb.truncation` (head or tail, Pi's limits) and show the cut."""
    return TruncationView(
        truncation_report_for_text(full_text, mode, max_lines=max_lines, max_bytes=max_bytes),
        context_lines=context_lines,
    )


def tool_result_truncation(
    tool_result: Mapping[str, Any],
    *,
    full_text: str | bytes | None = None,
    tool_call: Mapping[str, Any] | None = None,
    cwd: str | None = None,
    base_dir: str | None = None,
    context_lines: int = 6,
) -> TruncationView:
    """The truncation boundary of a stored tool result (see
    :func:`~pi_nb.notebook.views.truncation_report`)."""
    return TruncationView(
        truncation_report(tool_result, full_text=full_text, tool_call=tool_call, cwd=cwd, base_dir=base_dir),
        context_lines=context_lines,
    )
