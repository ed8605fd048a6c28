"""The session-tree view: Pi's ``/tree`` selector as static HTML/text and as a live widget.

The model (:class:`pi_nb.session.tree_model.SessionTreeModel`) lives in the engine; this module
renders it and wires the widget's controls to it.

One rule for every view of a live session: the view follows the session. It refreshes (cheaply:
only new entries are indexed) whenever it is drawn, after every cell, after every agent event when
it was made from an ``AgentSession``, and before every action. Its header names the leaf it
shows. An action (navigate, fold) acts on the session as it is *now*: when the session moved since
the view was drawn, the view redraws and the action is refused with a one-line reason instead of
doing something the user did not see.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from pi_nb._async import run_sync
from pi_nb._js import UNDEFINED, Undefined
from pi_nb.errors import InvalidMessageError, NotebookError
from pi_nb.notebook._base import (
    FONT,
    SANS,
    TraitChange,
    ViewGroup,
    _ipywidgets,
    _mapping,
    _WidgetView,
    escape,
    is_agent_session,
    kernel_has_comms,
    load_session,
    markdown_html,
    session_sources,
)
from pi_nb.session.tree_model import FILTER_MODES, SessionTreeModel, TreeRow
from pi_nb.tokens import DEFAULT_ENCODING

__all__ = [
    "SUMMARY_CHOICES",
    "SessionTreeView",
    "refresh_live_views",
    "render_tree_html",
    "render_tree_text",
    "session_tree",
    "watch_live_view",
]

NavigateCallback = Callable[[str, bool, "str | None"], Any]

SUMMARY_CHOICES: tuple[str, ...] = ("No summary", "Summarize", "Summarize with custom prompt")
"""Pi's choices when leaving a branch in ``/tree`` (interactive-mode.js)."""


_KIND_COLORS = {
    "user": "#2563eb",
    "assistant": "#16a34a",
    "toolResult": "#7e22ce",
    "bashExecution": "#475569",
    "custom": "#a21caf",
    "compaction": "#0369a1",
    "branch_summary": "#b45309",
    "meta": "#64748b",
    "run": "#64748b",
}


def _tree_row_html(model: SessionTreeModel, row: TreeRow, *, show_tokens: bool) -> str:
    pad = 6 + row.indent * 16
    border = "#f59e0b" if row.on_active_path else "transparent"
    bg = (
        "#fef3c7"
        if row.is_leaf
        else ("#eff6ff" if row.entry_id == model.selected_id and not row.run_length else "transparent")
    )
    color = _KIND_COLORS.get(row.kind, "#334155")
    if row.run_length:
        return (
            f'<div title="{escape(row.text)}" style="padding:1px 6px 1px {pad}px;border-left:3px solid {border};'
            f'color:#64748b;font-style:italic">{escape(row.title)} ({escape(row.text)}) folded into one row</div>'
        )
    glyph = "⊞" if row.folded else ("⊟" if row.child_count > 1 else "─")
    parts = [
        f'<div data-entry-id="{escape(row.entry_id)}" style="padding:1px 6px 1px {pad}px;border-left:3px solid {border};'
        f'background:{bg};white-space:pre-wrap;overflow-wrap:anywhere">',
        f'<span style="color:#94a3b8">{glyph} </span>',
        f'<span style="color:#94a3b8">{escape(row.entry_id)} </span>',
        f'<span style="color:{color};font-weight:600">{escape(row.title)}</span> ',
        f'<span style="color:{"#0f172a" if row.on_active_path else "#475569"}">{escape(row.text)}</span>',
    ]
    if row.detail:
        parts.append(f' <span style="color:#94a3b8">{escape(row.detail)}</span>')
    if row.folded:
        parts.append(
            f' <span style="color:#0369a1;background:#e0f2fe;border-radius:3px;padding:0 4px">'
            f"+{row.hidden_descendants} folded</span>"
        )
    if row.label:
        parts.append(
            f' <span style="color:#fff;background:#7c3aed;border-radius:3px;padding:0 4px">🏷 {escape(row.label)}</span>'
        )
    if row.is_leaf:
        parts.append(
            ' <span style="color:#fff;background:#d97706;border-radius:3px;padding:0 4px">● leaf</span>'
        )
    if show_tokens:
        try:
            est, tik = model.tokens(row.entry_id)
        except InvalidMessageError:  # a message Pi opens but cannot count: the row still shows
            est, tik = 0, 0
        if est or tik:
            parts.append(
                f' <span title="Pi estimate {est} · tiktoken {tik} ({escape(model.encoding)})" '
                f'style="color:#64748b;float:right">{tik} tok{"" if row.in_context else " (not in context)"}</span>'
            )
    parts.append("</div>")
    return "".join(parts)


def render_tree_html(model: SessionTreeModel, *, page: int | None = None, show_tokens: bool = True) -> str:
    """One page of the tree (default: the page that shows the selected entry or the leaf)."""
    if page is None:
        page = model.page_of(model.selected_id or model.leaf_id)
    stats = model.stats()
    rows = model.page_rows(page)
    name = model.session.get_session_name() if hasattr(model.session, "get_session_name") else None
    head = (
        f'<div style="{SANS};margin-bottom:4px"><b>Session tree</b>'
        f"{' · ' + escape(name) if name else ''} · {stats['entries']} entries · "
        f"{stats['branchPoints']} branch points · {stats['leaves']} leaves · {stats['compactions']} compactions · "
        f"{stats['branchSummaries']} branch summaries · {stats['labels']} labels · "
        f"leaf <code>{escape(stats['leafId'])}</code> · filter <code>{escape(model.filter_mode)}</code> · "
        f"page {page + 1}/{model.page_count}</div>"
    )
    legend = (
        f'<div style="{SANS};color:#64748b;font-size:11px;margin-bottom:4px">'
        '<span style="border-left:3px solid #f59e0b;padding-left:4px">active branch</span> · '
        '<span style="background:#fef3c7;padding:0 3px">leaf</span> · ⊟ branch point · ⊞ folded · '
        "tokens: tiktoken of what the entry puts in context (hover for Pi's estimate)</div>"
    )
    body = "".join(_tree_row_html(model, r, show_tokens=show_tokens) for r in rows)
    more = ""
    if model.page_count > 1:
        more = (
            f'<div style="{SANS};color:#64748b;font-size:11px;margin-top:4px">showing rows '
            f"{page * model.page_size + 1}-{page * model.page_size + len(rows)} of {model.row_count} "
            "(use the widget or <code>render_tree_html(model, page=n)</code> for other pages)</div>"
        )
    return (
        f'<div class="pi-nb-tree" style="border:1px solid #e2e8f0;border-radius:6px;padding:8px;background:#fff;color:#0f172a">'
        f'{head}{legend}<div style="{FONT}">{body}</div>{more}</div>'
    )


def render_tree_text(model: SessionTreeModel, *, page: int | None = None) -> str:
    """The same page as plain text (one line per row, Pi-like)."""
    if page is None:
        page = model.page_of(model.selected_id or model.leaf_id)
    stats = model.stats()
    lines = [
        f"Session tree: {stats['entries']} entries, {stats['branchPoints']} branch points, "
        f"{stats['compactions']} compactions, leaf {stats['leafId']} "
        f"(filter {model.filter_mode}, page {page + 1}/{model.page_count})"
    ]
    for r in model.page_rows(page):
        mark = "*" if r.on_active_path else " "
        if r.run_length:
            lines.append(f"{mark} {'  ' * r.indent}{r.title} ({r.text})")
            continue
        glyph = "⊞" if r.folded else ("⊟" if r.child_count > 1 else "─")
        text = f"{mark} {'  ' * r.indent}{glyph} {r.entry_id} {r.title} {r.text}".rstrip()
        if r.detail:
            text += f"  ({r.detail})"
        if r.folded:
            text += f"  [+{r.hidden_descendants} folded]"
        if r.label:
            text += f"  [label: {r.label}]"
        if r.is_leaf:
            text += "  <- leaf"
        lines.append(text)
    return "\n".join(lines)


# ==== the widget ====


def _row_label(row: TreeRow, width: int = 2000) -> str:
    mark = "▌" if row.on_active_path else " "
    if row.run_length:
        text = f"{mark}{'  ' * row.indent}{row.title} ({row.text}) - select and press Expand"
    else:
        glyph = "⊞" if row.folded else ("⊟" if row.child_count > 1 else "─")
        text = f"{mark}{'  ' * row.indent}{glyph} {row.title} {row.text}".rstrip()
        if row.detail:
            text += f" ({row.detail})"
        if row.folded:
            text += f" [+{row.hidden_descendants}]"
        if row.label:
            text += f" 🏷{row.label}"
        if row.is_leaf:
            text += "  ● leaf"
    return text if len(text) <= width else text[: width - 1] + "…"


def _row_key(row: TreeRow) -> str:
    return f"run:{row.entry_id}" if row.run_length else row.entry_id


_LIVE_VIEWS: weakref.WeakSet[Any] = weakref.WeakSet()
_HOOKED: list[Any] = []


def refresh_live_views() -> int:
    """Redraw every live view whose session changed (called after each cell in a kernel).
    Returns how many redrew."""
    n = 0
    for view in list(_LIVE_VIEWS):
        try:
            if view.refresh():
                n += 1
        except Exception:  # a view must never break the kernel; the error shows in its status
            pass
    return n


def watch_live_view(view: Any) -> None:
    """Keep ``view`` redrawn after each cell (:func:`refresh_live_views`; held weakly), hooking the
    kernel's ``post_execute`` event once when there is a kernel that can talk to widgets."""
    _LIVE_VIEWS.add(view)
    if kernel_has_comms():
        _hook_post_execute()


def _hook_post_execute() -> None:
    """Register :func:`refresh_live_views` on the kernel's ``post_execute`` event, once."""
    if _HOOKED:
        return
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return

    def hook(*_args: Any) -> None:
        refresh_live_views()

    shell.events.register("post_execute", hook)
    _HOOKED.append((shell, hook))


class SessionTreeView(_WidgetView):
    """The session tree: every entry a node, the active branch marked, fold/unfold, paging, and
    navigation to a selected entry with or without a summary.

    Args:
        source: a :class:`~pi_nb.session.SessionManager`, an ``AgentSession`` (then navigation
            goes through it), a session file or a list of entries.
        on_navigate: ``on_navigate(target_id, summarize, custom_instructions)``, e.g. an
            AgentSession's ``navigate_tree``; without it (and without an ``AgentSession``) the
            view is read-only.
        Other arguments: see :class:`~pi_nb.session.tree_model.SessionTreeModel`.

    The view follows its session live (see the module docstring). The static HTML shows one page
    (the one with the selected entry or the leaf); the widget pages through all.
    """

    def __init__(
        self,
        source: Any,
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
        self.agent_session = source if is_agent_session(source) else None
        tree_source = source if hasattr(source, "get_entries") else load_session(source)
        self.model = SessionTreeModel(
            tree_source,
            leaf_id=leaf_id,
            filter_mode=filter_mode,
            page_size=page_size,
            run_threshold=run_threshold,
            encoding=encoding,
        )
        if on_navigate is None and self.agent_session is not None:
            agent = self.agent_session

            def navigate(target: str, summarize: bool, custom: str | None) -> Any:
                return run_sync(agent.navigate_tree(target, summarize=summarize, custom_instructions=custom))

            on_navigate = navigate
        self.on_navigate = on_navigate
        self.show_tokens = show_tokens
        self.live = live
        self.page = self.model.page_of(self.model.selected_id or self.model.leaf_id)
        self.last_error: BaseException | None = None
        self.last_status = ""
        self._syncing = False
        self._drawn_version = -1
        self._refresh_lock = threading.RLock()
        self._drawn_page = -1
        self._row_keys: set[str] = set()
        if self.agent_session is not None:
            self._unsubscribe = self.agent_session.subscribe(self._on_agent_event)

    def _on_agent_event(self, event: Mapping[str, object]) -> None:
        # any session event: only its type is read
        if event.get("type") in ("message_end", "session_tree", "compaction_end", "agent_end"):
            try:
                self.refresh()
            except Exception:  # a view must never break a turn
                pass

    # -- static -----------------------------------------------------------------------------

    def to_html(self) -> str:
        with self._refresh_lock:
            self.refresh()
            return render_tree_html(self.model, page=self.page, show_tokens=self.show_tokens)

    def to_text(self) -> str:
        with self._refresh_lock:
            self.refresh()
            return render_tree_text(self.model, page=self.page)

    # -- actions (also usable without a widget) ---------------------------------------------

    def refresh(self) -> bool:
        """Catch up with the session (new entries, a moved leaf) and redraw; ``True`` if it changed.
        Safe to call from another thread (an agent's events, a follower's poll)."""
        with self._refresh_lock:
            followed = self.model.selected_id == self.model.leaf_id
            changed = self.model.refresh()
            if changed:
                if followed:
                    self.page = self.model.page_of(self.model.leaf_id)
                self.page = min(self.page, self.model.page_count - 1)
                self._sync()
            return changed

    def _check_current(self) -> None:
        """Refuse an action when the session moved since this view was last drawn."""
        shown = self.model.leaf_id
        if self.refresh() and self.model.leaf_id != shown:
            raise NotebookError(
                f"the session moved since this view was drawn (leaf {shown} -> {self.model.leaf_id}); "
                "the view now shows it: check the selection and try again"
            )

    def select(self, entry_id: str) -> None:
        self.model.refresh()
        self.model.select(entry_id)
        self.page = self.model.page_of(entry_id)
        self._sync()

    def toggle_fold(self, entry_id: str | None = None) -> None:
        """Fold/unfold the selected entry (refused for an entry with nothing to fold)."""
        self._check_current()
        target = entry_id or self.model.selected_id
        if target is None:
            raise NotebookError("no entry selected")
        if not self.model.can_fold(target):
            raise NotebookError(f"entry {target} has no children: nothing to fold")
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
        """Call ``on_navigate(target_id, summarize, custom_instructions)`` on the session as it is
        now, and redraw. Returns the callback's result, or ``None`` when nothing would change.

        Raises :class:`~pi_nb.errors.NotebookError` (one line) without a callback or a target,
        for an unknown id, for custom instructions without a summary, and when the session moved
        since the view was drawn (the view redraws: look again and retry). Whatever the callback
        raises propagates (the widget's status line shows it instead).
        """
        if self.on_navigate is None:
            raise NotebookError("this tree view has no on_navigate callback (it is read-only)")
        self._check_current()
        target = target_id or self.model.selected_id
        if target is None:
            raise NotebookError("no entry selected to navigate to")
        self.model.entry(target)  # NotebookError for an unknown id
        if custom_instructions is not None and not summarize:
            raise NotebookError("custom instructions only apply when summarizing")
        if target == self.model.leaf_id:
            # Pi's /tree: "Selecting the current leaf is a no-op (already there)"
            self.last_status = f"Already at this point: {target} is the leaf, nothing changed"
            self._sync()
            return None
        result = self.on_navigate(target, summarize, custom_instructions)
        self.model.refresh()
        self.model.selected_id = self.model.leaf_id
        self.page = self.model.page_of(self.model.leaf_id)
        if (isinstance(result, Mapping) and result.get("cancelled")) or getattr(result, "cancelled", False):
            self.last_status = "navigation cancelled: nothing changed"
        else:
            self.last_status = f"navigated to {target}{' with a summary' if summarize else ''}; leaf is now {self.model.leaf_id}"
        self._sync()
        return result

    # -- widget -----------------------------------------------------------------------------

    def _detail_rows(self, sel: str) -> list[tuple[str, Any]]:
        entry = self.model.entry(sel)
        _title, _text, _kind, detail = self.model.display(entry)
        try:
            est, tik = self.model.tokens(sel)
            tokens = f"tiktoken {tik} ({self.model.encoding}) · Pi estimate {est}"
        except InvalidMessageError as exc:  # a message Pi opens but cannot count
            tokens = f"not countable: {exc}"
        rows: list[tuple[str, Any]] = [
            ("id", sel),
            ("parent", entry.get("parentId")),
            ("type", entry.get("type")),
            ("timestamp", entry.get("timestamp")),
            ("tokens", tokens),
        ]
        if detail:
            rows.append(("detail", detail))
        label = self.model.session.get_label(sel)
        if label:
            rows.append(("label", label))
        if entry.get("type") == "compaction":
            details = _mapping(entry.get("details"))
            rows.append(("read files", ", ".join(map(str, details.get("readFiles", []) or []))))
            rows.append(("modified files", ", ".join(map(str, details.get("modifiedFiles", []) or []))))
        return rows

    def _detail_html(self) -> str:
        sel = self.model.selected_id
        if sel is None:
            return "<i>select an entry</i>"
        title, _text, _kind, _detail = self.model.display(self.model.entry(sel))
        body = "".join(
            f'<tr><td style="color:#64748b;padding-right:8px;vertical-align:top">{escape(k)}</td>'
            f'<td style="overflow-wrap:anywhere">{escape(v)}</td></tr>'
            for k, v in self._detail_rows(sel)
        )
        return f'<div style="font-size:12px"><b>{escape(title)}</b><table style="font-size:12px;margin-top:4px">{body}</table></div>'

    def detail_markdown(self) -> str | None:
        """The whole text of the selected entry as Markdown (an assistant's answer renders its
        Markdown; other text is shown as it is, in a fenced block)."""
        sel = self.model.selected_id
        if sel is None:
            return None
        entry = self.model.entry(sel)
        text = self.model.full_text(entry)
        if not text:
            return None
        msg = _mapping(entry.get("message"))
        if entry.get("type") in ("compaction", "branch_summary") or msg.get("role") in ("assistant", "user"):
            return text
        fence = "~~~~" if "```" in text else "```"
        return f"{fence}text\n{text}\n{fence}"

    def _build_widget(self) -> Any:
        w = _ipywidgets()
        self.header = w.HTML()
        self.filter = w.Dropdown(
            options=list(FILTER_MODES),
            value=self.model.filter_mode,
            description="filter",
            style={"description_width": "initial"},
        )
        self.prev_button = w.Button(description="◀ prev", layout=w.Layout(width="80px"))
        self.next_button = w.Button(description="next ▶", layout=w.Layout(width="80px"))
        self.page_label = w.HTML()
        self.leaf_button = w.Button(description="go to leaf", layout=w.Layout(width="100px"))
        self.fold_button = w.Button(description="fold / unfold", layout=w.Layout(width="120px"))
        # the list grows to its longest row and scrolls sideways: no row is cut
        self.rows = w.Select(options=[], rows=18, layout=w.Layout(width="max-content", min_width="100%"))
        self.rows_box = w.Box([self.rows], layout=w.Layout(width="100%", overflow="auto"))
        self.detail = w.HTML()
        self.detail_text = w.Output(layout=w.Layout(max_height="360px", overflow="auto"))
        self.summary_choice = w.Dropdown(
            options=list(SUMMARY_CHOICES),
            value=SUMMARY_CHOICES[0],
            description="leave with",
            style={"description_width": "initial"},
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
                self.rows_box,
                self.detail,
                self.detail_text,
                w.HBox([self.summary_choice, self.navigate_button]),
                self.instructions,
                self.status,
            ]
        )
        self._widget = box
        self._sync()
        watch_live_view(self)
        return box

    def _guard(self, action: Callable[[], Any]) -> None:
        """Run a widget action; a refusal or a failure becomes one line in the status (kept in
        ``last_error``), never a traceback in the kernel log."""
        self.last_error = None
        try:
            action()
        except Exception as exc:
            self.last_error = exc
            self.last_status = f"{type(exc).__name__}: {exc}".splitlines()[0]
            if self._widget is not None:
                self.status.value = f'<span style="color:#dc2626">{escape(self.last_status)}</span>'

    def _go_to_leaf(self) -> None:
        self.model.refresh()
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
        self.navigate(self.model.selected_id, summarize=summarize, custom_instructions=custom)

    def _on_filter(self, change: TraitChange) -> None:
        if not self._syncing:
            self._guard(lambda: self.set_filter(change["new"]))

    def _on_select(self, change: TraitChange) -> None:
        if self._syncing:
            return
        value = change["new"]
        if isinstance(value, str) and not value.startswith("run:"):
            self._guard(lambda: self._select_row(value))
        elif isinstance(value, str):
            self._sync_buttons(value)

    def _select_row(self, entry_id: str) -> None:
        self.model.select(entry_id)
        self._sync(rows=False)

    def _on_summary_choice(self, change: TraitChange) -> None:
        self.instructions.disabled = change["new"] != SUMMARY_CHOICES[2]

    def _sync_buttons(self, key: str | None) -> None:
        sel = self.model.selected_id
        if isinstance(key, str) and key.startswith("run:"):
            self.fold_button.description = "expand run"
            self.fold_button.disabled = False
            self.fold_button.tooltip = "show every entry of this run"
        else:
            can = sel is not None and self.model.can_fold(sel)
            self.fold_button.description = "unfold" if sel in self.model.folded else "fold"
            self.fold_button.disabled = not can
            self.fold_button.tooltip = "" if can else "this entry has no children: nothing to fold"
        at_leaf = sel is not None and sel == self.model.leaf_id
        self.navigate_button.disabled = self.on_navigate is None or sel is None or at_leaf
        self.navigate_button.tooltip = (
            "read-only view"
            if self.on_navigate is None
            else ("already the leaf: navigating here changes nothing" if at_leaf else "")
        )

    def _sync(self, *, rows: bool = True) -> None:
        if self._widget is None:
            return
        self._syncing = True
        try:
            stats = self.model.stats()
            self.header.value = (
                f"<b>Session tree</b> · {stats['entries']} entries · {stats['branchPoints']} branch points · "
                f"{stats['compactions']} compactions · {stats['labels']} labels · showing leaf "
                f"<code>{escape(stats['leafId'])}</code> (follows the session)"
            )
            self.page_label.value = f"page {self.page + 1}/{self.model.page_count}"
            self.prev_button.disabled = self.page <= 0
            self.next_button.disabled = self.page >= self.model.page_count - 1
            self.filter.value = self.model.filter_mode
            if (rows and self._drawn_version != self.model.version) or (
                rows and self._drawn_page != self.page
            ):
                page_rows = self.model.page_rows(self.page)
                self.rows.options = [(_row_label(r), _row_key(r)) for r in page_rows]
                self._row_keys = {_row_key(r) for r in page_rows}
                self._drawn_version, self._drawn_page = self.model.version, self.page
            sel = self.model.selected_id
            self.rows.value = sel if sel in self._row_keys else None
            self.detail.value = self._detail_html()
            self.detail_text.outputs = ()
            md = self.detail_markdown()
            if md is not None:
                from IPython.display import HTML

                # rendered here, not by the front end: raw HTML escaped, remote images as links
                self.detail_text.append_display_data(HTML(markdown_html(md)))
            self._sync_buttons(self.rows.value)
            if self.last_status:
                color = "#dc2626" if self.last_error is not None else "#15803d"
                self.status.value = f'<span style="color:{color}">{escape(self.last_status)}</span>'
        finally:
            self._syncing = False


def session_tree(
    source: Any,
    *,
    on_navigate: NavigateCallback | None = None,
    **kwargs: Any,
) -> SessionTreeView | ViewGroup:
    """A :class:`SessionTreeView` of a session: a manager, an ``AgentSession``, a session file,
    a list of entries, or several (a directory of session files, a list of those: one view each,
    in a :class:`~pi_nb.notebook._base.ViewGroup`)."""
    sources = session_sources(source)
    if len(sources) == 1:
        return SessionTreeView(sources[0], on_navigate=on_navigate, **kwargs)
    if on_navigate is not None:
        raise NotebookError("on_navigate applies to one session, not to a list of them")
    return ViewGroup([SessionTreeView(s, **kwargs) for s in sources], title=f"{len(sources)} sessions")
