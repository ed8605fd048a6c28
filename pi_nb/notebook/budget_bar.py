"""The token-budget view: the context window as one bar (static HTML/text) and as a live widget.

The numbers come from the engine's :mod:`pi_nb.budget`; this module draws them. The view follows
its session like every view (see :mod:`pi_nb.notebook.tree`): made from a session (a manager, an
``AgentSession`` or a file), it re-reads it when drawn, after each cell and after each agent
event, counting only new messages; its header names the leaf it shows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from pi_nb.budget import (
    BudgetInput,
    BudgetTracker,
    TokenBudget,
    format_tokens,
)
from pi_nb.errors import NotebookError
from pi_nb.notebook._base import (
    _EXTRA_PART_COLORS,
    COLORS,
    SANS,
    ViewGroup,
    _ipywidgets,
    _WidgetView,
    escape,
    is_agent_session,
    kernel_has_comms,
    load_session,
    session_sources,
)
from pi_nb.tokens import DEFAULT_ENCODING
from pi_nb.tools.base import tool_schema

__all__ = ["BudgetView", "render_budget_html", "render_budget_text", "token_budget"]


def _category_color(name: str, index: int) -> str:
    return COLORS.get(name) or _EXTRA_PART_COLORS[index % len(_EXTRA_PART_COLORS)]


def _pct(tokens: float, window: int) -> float:
    return max(0.0, min(100.0, tokens / window * 100)) if window else 0.0


def _level_text(budget: TokenBudget) -> tuple[str, str]:
    if budget.unknown or budget.percent is None:
        return (f"?/{format_tokens(budget.context_window)}", COLORS["unknown"])
    return (f"{budget.percent:.1f}%/{format_tokens(budget.context_window)}", COLORS[budget.level])


def render_budget_html(budget: TokenBudget, *, title: str = "Token budget", drift: str | None = None) -> str:
    """The context window as one bar: categories, free space, reserve zone, threshold marker,
    keep-recent window, and the three token sources labelled. ``drift``: one line saying how
    far the estimate has been off in this session (:func:`pi_nb.analysis.drift.drift_line`)."""
    window = budget.context_window
    segs: list[str] = []
    for i, cat in enumerate(budget.categories):
        if cat.tokens <= 0:
            continue
        w = cat.tokens / window * 100
        segs.append(
            f'<div title="{escape(cat.name)}: {cat.tokens} tokens" style="width:{w:.4f}%;'
            f'background:{_category_color(cat.name, i)};height:100%;flex:none"></div>'
        )
    threshold_pct = _pct(budget.threshold, window)
    level_str, level_color = _level_text(budget)
    markers: list[str] = [
        # reserve zone: from the threshold to the end of the window, hatched
        f'<div title="reserve: {budget.reserve_tokens} tokens kept free for the response" '
        f'style="position:absolute;left:{threshold_pct:.4f}%;right:0;top:0;bottom:0;'
        "background:repeating-linear-gradient(45deg,rgba(220,38,38,.18) 0 6px,rgba(220,38,38,.05) 6px 12px);"
        'pointer-events:none"></div>',
        f'<div title="threshold: context_window - reserve_tokens = {budget.threshold}" '
        f'style="position:absolute;left:{threshold_pct:.4f}%;top:-6px;bottom:-6px;border-left:2px dashed {COLORS["error"]}"></div>',
    ]
    if budget.usage_tokens is not None:
        markers.append(
            f'<div title="provider usage: {budget.usage_tokens}" style="position:absolute;left:{_pct(budget.usage_tokens, window):.4f}%;'
            f'top:-4px;bottom:-4px;border-left:2px solid {COLORS["usage"]}"></div>'
        )
    if budget.estimate_tokens is not None:
        markers.append(
            f'<div title="Pi\'s estimate: {budget.estimate_tokens}" style="position:absolute;'
            f'left:{_pct(budget.estimate_tokens, window):.4f}%;top:-4px;bottom:-4px;border-left:2px dotted {COLORS["estimate"]}"></div>'
        )
    bar = (
        f'<div style="position:relative;height:26px;margin:10px 0 4px 0;border:1px solid #cbd5e1;border-radius:4px;'
        f'background:{COLORS["free"]}">'
        f'<div style="display:flex;height:100%;overflow:hidden;border-radius:3px">{"".join(segs)}</div>'
        f"{''.join(markers)}</div>"
    )
    # keep-recent bracket: the newest messages, drawn at the right end of the used part
    kr = budget.keep_recent
    kept_end = _pct(budget.tokens, window)
    kept_start = _pct(max(0, budget.tokens - kr.tokens), window)
    bracket = (
        f'<div style="position:relative;height:16px">'
        f'<div title="keep-recent window: the newest {kr.message_count} messages ({kr.tokens} tiktoken, '
        f'{kr.estimate_tokens} Pi estimate) a compaction now would keep" style="position:absolute;left:{kept_start:.4f}%;'
        f'width:{max(kept_end - kept_start, 0.3):.4f}%;top:0;height:6px;border:2px solid {COLORS["keep"]};border-top:none"></div>'
        f'<div style="position:absolute;left:{threshold_pct:.4f}%;top:0;transform:translateX(-100%);'
        f'padding-right:4px;color:{COLORS["error"]};font-size:11px;white-space:nowrap">'
        f"compact above {format_tokens(budget.threshold)} ▸</div></div>"
    )
    legend_items = []
    for i, cat in enumerate(budget.categories):
        value = f"{cat.tokens:,}" if cat.known else "unknown"
        legend_items.append(
            f'<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;width:10px;height:10px;'
            f'background:{_category_color(cat.name, i)};border-radius:2px;margin-right:3px"></span>'
            f"{escape(cat.name)} <b>{value}</b></span>"
        )
    legend_items.append(
        f'<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;width:10px;height:10px;'
        f'background:{COLORS["free"]};border:1px solid #cbd5e1;border-radius:2px;margin-right:3px"></span>'
        f"free <b>{max(budget.free_tokens, 0):,}</b></span>"
    )
    legend_items.append(
        '<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;width:10px;height:10px;'
        "background:repeating-linear-gradient(45deg,rgba(220,38,38,.35) 0 3px,rgba(220,38,38,.1) 3px 6px);"
        f'border-radius:2px;margin-right:3px"></span>reserve <b>{budget.reserve_tokens:,}</b></span>'
    )
    if budget.unknown:
        pi_line = (
            f'<span style="color:{COLORS["unknown"]}"><b>Pi estimate:</b> unknown until the next response '
            f"(a compaction happened and no response has reported usage since; the stale figure would be "
            f"{budget.estimate.tokens:,})</span>"
        )
    else:
        est = budget.estimate
        if est.last_usage_index is None:
            how = f"chars/4 of all {budget.message_count} messages: no usage yet"
        else:
            after = budget.message_count - est.last_usage_index - 1
            how = f"usage {est.usage_tokens:,} + chars/4 of the {after} messages after it: {est.trailing_tokens:,}"
        pi_line = f'<span style="color:{COLORS["estimate"]}"><b>Pi estimate:</b> {budget.estimate_tokens:,}</span> ({how})'
    usage_line = (
        f'<span style="color:{COLORS["usage"]}"><b>provider usage:</b> '
        + (f"{budget.usage_tokens:,}" if budget.usage_tokens is not None else "none yet")
        + (
            "</span> (from before the compaction)"
            if budget.unknown and budget.usage_tokens is not None
            else "</span>"
        )
    )
    tik_line = (
        f"<span><b>tiktoken</b> ({escape(budget.encoding)}): {budget.tokens:,}"
        + ("" if budget.system_prompt_known else " (system prompt unknown: not counted)")
        + "</span>"
    )
    compact_line = ""
    if budget.should_compact:
        compact_line = f' · <b style="color:{COLORS["error"]}">Pi would compact now</b>'
    elif budget.should_compact is False:
        left = budget.threshold - (budget.estimate_tokens or 0)
        compact_line = f" · {left:,} tokens until Pi compacts"
    leaf_html = (
        f' <span style="color:#64748b;font-size:12px">at leaf <code>{escape(budget.leaf_id)}</code></span>'
        if budget.leaf_id
        else ""
    )
    head = (
        f'<div style="display:flex;justify-content:space-between;align-items:baseline">'
        f"<span><b>{escape(title)}</b>{leaf_html}</span>"
        f'<span style="color:{level_color};font-weight:700" title="Pi footer: warning above 70%, error above 90%">'
        f"{escape(level_str)}</span></div>"
    )
    return (
        f'<div class="pi-nb-budget" style="{SANS};border:1px solid #e2e8f0;border-radius:6px;padding:8px 10px;'
        f'background:#fff;color:#0f172a;max-width:900px">{head}{bar}{bracket}'
        f'<div style="font-size:12px;line-height:1.8">{"".join(legend_items)}</div>'
        f'<div style="font-size:12px;line-height:1.6;margin-top:4px">{pi_line}<br>{usage_line}<br>{tik_line}<br>'
        f"window {budget.context_window:,} · threshold {budget.threshold:,} (window − reserve {budget.reserve_tokens:,})"
        f"{compact_line}<br>"
        f'<span style="color:{COLORS["keep"]}">keep-recent window</span>: the newest {kr.message_count} of '
        f"{budget.message_count} messages, {kr.estimate_tokens:,} estimated / {kr.tokens:,} tiktoken tokens "
        f"(keepRecentTokens {budget.keep_recent_tokens:,}{'' if kr.reached else '; everything fits'})"
        + (f'<br><span class="pi-nb-drift" style="color:#64748b">{escape(drift)}</span>' if drift else "")
        + "</div></div>"
    )


def render_budget_text(budget: TokenBudget, *, width: int = 60, drift: str | None = None) -> str:
    """The budget as text: a character bar plus the numbers (and ``drift``, as in
    :func:`render_budget_html`)."""
    window = budget.context_window
    cells: list[str] = []
    marks = {
        "system prompt": "S",
        "tool schemas": "T",
        "user": "U",
        "assistant": "A",
        "tool results": "R",
        "summaries": "C",
    }
    for cat in budget.categories:
        n = round(cat.tokens / window * width) if window else 0
        if cat.tokens > 0 and n == 0:
            n = 1
        cells.extend(marks.get(cat.name, cat.name[:1].upper()) * n)
    cells = cells[:width]
    t = min(width - 1, max(0, round(budget.threshold / window * width)))
    bar = [cells[i] if i < len(cells) else "." for i in range(width)]
    for i in range(t, width):
        if bar[i] == ".":
            bar[i] = "/"
    bar.insert(t, "|")
    level_str, _ = _level_text(budget)
    lines = [
        f"Token budget {level_str} [{''.join(bar)}]"
        + (f" at leaf {budget.leaf_id}" if budget.leaf_id else ""),
        "  " + ", ".join(f"{c.name} {c.tokens if c.known else 'unknown'}" for c in budget.categories),
        f"  free {max(budget.free_tokens, 0)}, reserve {budget.reserve_tokens}, threshold {budget.threshold} "
        f"(window {window} - reserve)",
    ]
    if budget.unknown:
        lines.append("  Pi estimate: unknown until the next response (compacted since the last usage)")
    else:
        lines.append(f"  Pi estimate: {budget.estimate_tokens} ({budget.level})")
    lines.append(f"  provider usage: {budget.usage_tokens if budget.usage_tokens is not None else 'none'}")
    lines.append(f"  tiktoken ({budget.encoding}): {budget.tokens}")
    kr = budget.keep_recent
    lines.append(
        f"  keep-recent window: newest {kr.message_count} messages, {kr.estimate_tokens} estimated / {kr.tokens} tiktoken"
    )
    if budget.should_compact:
        lines.append("  Pi would compact now")
    if drift:
        lines.append(f"  {drift}")
    return "\n".join(lines)


# ==== the widget ====


class BudgetView(_WidgetView):
    """The token budget bar. :meth:`update` redraws it (at most every ``min_interval`` seconds;
    the last update of a burst is always drawn, by a timer or by :meth:`flush`).

    Counts are cached in a :class:`~pi_nb.budget.BudgetTracker`, so updating during a turn only
    tokenizes the new messages. A view made from a session (:meth:`from_session`,
    :func:`token_budget`) follows it: :meth:`refresh` re-reads it and redraws when it changed.
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
        self._refresh_lock = threading.RLock()
        self._pending: TokenBudget | BudgetInput | None = None
        self._timer: threading.Timer | None = None
        self._last_draw = 0.0
        self.draws = 0
        self.budget = self._resolve(budget)
        # (the session manager, the keyword arguments of BudgetTracker.session_input for it)
        self._session: tuple[Any, dict[str, Any]] | None = None
        self._seen: tuple[int, str | None] | None = None
        self.drift: str | None = None
        """How far the chars/4 estimate has been off in the session (one line; ``None`` for a
        view not made from a session, or before two responses with usage)."""

    def _resolve(self, value: TokenBudget | BudgetInput) -> TokenBudget:
        if isinstance(value, TokenBudget):
            return value
        if isinstance(value, BudgetInput):
            return self.tracker.compute(value)
        raise NotebookError(f"a budget view needs a TokenBudget or a BudgetInput, got {type(value).__name__}")

    @classmethod
    def from_session(
        cls,
        session_manager: Any,
        *,
        model_context_window: int,
        reserve_tokens: int | None = None,
        keep_recent_tokens: int | None = None,
        **kwargs: Any,
    ) -> BudgetView:
        """The budget of a session (a manager, an ``AgentSession``, a file) at its leaf (system
        prompt unknown unless given); :meth:`refresh` re-reads the session, counting only what
        is new. The reserve, keep-recent and enabled compaction values not given are the ones of
        the session's own directory (:func:`pi_nb.resources.settings.compaction_settings_for_session`)."""
        from pi_nb.resources.settings import compaction_settings_for_session

        view_kwargs = {k: kwargs.pop(k) for k in ("title", "tracker", "min_interval", "live") if k in kwargs}
        sm = (
            session_manager
            if hasattr(session_manager, "build_context_entries")
            else load_session(session_manager)
        )
        if reserve_tokens is None or keep_recent_tokens is None or "compaction_enabled" not in kwargs:
            comp = compaction_settings_for_session(sm)
            reserve_tokens = comp.reserve_tokens if reserve_tokens is None else reserve_tokens
            keep_recent_tokens = comp.keep_recent_tokens if keep_recent_tokens is None else keep_recent_tokens
            kwargs.setdefault("compaction_enabled", comp.enabled)
        tracker = view_kwargs.pop("tracker", None) or BudgetTracker(kwargs.get("encoding", DEFAULT_ENCODING))
        session_args = {
            "model_context_window": model_context_window,
            "reserve_tokens": reserve_tokens,
            "keep_recent_tokens": keep_recent_tokens,
            **kwargs,
        }
        view = cls(tracker.session_input(sm, **session_args), tracker=tracker, **view_kwargs)
        view._session = (sm, session_args)
        view._seen = view._state()
        view.drift = _drift_line(sm)
        return view

    def _state(self) -> tuple[int, str | None] | None:
        if self._session is None:
            return None
        sm = self._session[0]
        return (len(sm.get_entries()), sm.get_leaf_id())

    def refresh(self, *, force: bool = False) -> bool:
        """Re-read the session this view was made from (see :meth:`from_session`) and redraw if
        it changed (or when ``force``); ``True`` if it redrew."""
        if self._session is None:
            raise NotebookError("refresh() needs a view made with BudgetView.from_session()")
        with self._refresh_lock:
            state = self._state()
            if not force and state == self._seen:
                return False
            sm, args = self._session
            self._seen = state
            self.drift = _drift_line(sm)
            self.update(self.tracker.session_input(sm, **args), force=True)
            return True

    def to_html(self) -> str:
        if self._session is not None:
            self.refresh()
        return render_budget_html(self.budget, title=self.title, drift=self.drift)

    def to_text(self) -> str:
        if self._session is not None:
            self.refresh()
        return render_budget_text(self.budget, drift=self.drift)

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
            self._widget.value = render_budget_html(self.budget, title=self.title, drift=self.drift)

    def _build_widget(self) -> Any:
        from pi_nb.notebook.tree import _LIVE_VIEWS, _hook_post_execute

        w = _ipywidgets()
        self._widget = w.HTML(value=render_budget_html(self.budget, title=self.title, drift=self.drift))
        if self._session is not None:
            _LIVE_VIEWS.add(self)
            if kernel_has_comms():
                _hook_post_execute()
        return self._widget


def _drift_line(sm: Any) -> str | None:
    """The engine's one line on the estimate's drift over the session's active branch (never
    raises: a view must draw whatever the session holds)."""
    from pi_nb.analysis.drift import drift_line

    try:
        return drift_line(sm.get_branch())
    except Exception:
        return None


def _session_model(sm: Any) -> tuple[str | None, str | None]:
    """``(provider, model id)`` of the newest model on the session's branch, if it names one."""
    provider = model_id = None
    for entry in sm.get_branch():
        if entry.get("type") == "model_change":
            provider, model_id = entry.get("provider"), entry.get("modelId")
        elif entry.get("type") == "message":
            msg = entry.get("message")
            if isinstance(msg, Mapping) and msg.get("role") == "assistant" and msg.get("model"):
                provider, model_id = msg.get("provider"), msg.get("model")
    return (provider if isinstance(provider, str) else None, model_id if isinstance(model_id, str) else None)


def _session_window(sm: Any) -> int:
    """The context window of the model a session last used, from the model catalog.

    Looks the model up in ``pi_nb.providers.catalog`` (Pi's model catalog) when pi_nb has it, else
    in ``pi_nb.providers.registry.KNOWN_MODELS``. Raises :class:`NotebookError` naming the model
    (or saying there is none) when the window is not known: pass ``model_context_window=``.
    """
    import importlib

    provider, model_id = _session_model(sm)
    if model_id is None:
        raise NotebookError("the session names no model: pass model_context_window=")
    spec = f"{provider}/{model_id}" if provider else model_id
    try:
        catalog: Any = importlib.import_module("pi_nb.providers.catalog")
    except ImportError:
        catalog = None
    lookup = getattr(catalog, "context_window_for", None)
    if callable(lookup) and provider:
        window = lookup(provider, model_id)
        if isinstance(window, int) and window > 0:
            return window
    registry: Any = importlib.import_module("pi_nb.providers.registry")
    known = getattr(registry, "KNOWN_MODELS", {}).get(spec)
    if known is not None:
        return int(known.context_window)
    raise NotebookError(
        f"the context window of {spec} is not in the model catalog: pass model_context_window="
    )


def token_budget(
    source: Any,
    *,
    model_context_window: int | None = None,
    **kwargs: Any,
) -> BudgetView | ViewGroup:
    """A :class:`BudgetView` of a budget, a budget input, or a session: a manager, an
    ``AgentSession`` (its model's window, reserve and keep-recent settings), a session file (the
    window of the model it used, from the catalog, unless ``model_context_window`` is given), or
    several (a directory of session files, a list: one view each)."""
    if isinstance(source, (TokenBudget, BudgetInput)):
        return BudgetView(source, **kwargs)
    if is_agent_session(source):
        c = source.settings.get_compaction_settings()
        kwargs.setdefault("reserve_tokens", c.reserve_tokens)
        kwargs.setdefault("keep_recent_tokens", c.keep_recent_tokens)
        kwargs.setdefault("compaction_enabled", c.enabled)
        kwargs.setdefault("system_prompt", source.system_prompt)
        kwargs.setdefault("system_prompt_parts", source.system_prompt_parts())
        kwargs.setdefault(
            "tools",
            [tool_schema(t) for t in source.agent.state.tools],
        )
        window = model_context_window or source.model.context_window
        view = BudgetView.from_session(source.session_manager, model_context_window=window, **kwargs)

        def on_event(event: Mapping[str, object]) -> None:
            # any session event: only its type is read
            if event.get("type") in ("message_end", "compaction_end", "session_tree", "agent_end"):
                try:
                    view.refresh()
                except Exception:  # a view must never break a turn
                    pass

        source.subscribe(on_event)
        return view
    sources = session_sources(source)
    views: list[BudgetView] = []
    for s in sources:
        sm = s if hasattr(s, "build_context_entries") else load_session(s)
        window = model_context_window if model_context_window is not None else _session_window(sm)
        views.append(BudgetView.from_session(sm, model_context_window=window, **kwargs))
    if len(views) == 1:
        return views[0]
    return ViewGroup(views, title=f"{len(views)} sessions")
