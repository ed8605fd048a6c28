"""matplotlib plots of a session: context size per turn, its composition over time, truncation.

Every plot takes a session source: a :class:`~pi_nb.session.SessionManager`, an
:class:`~pi_nb.agent.AgentSession`, a session file, a directory of session files or a list of
those (the same normalisation as the frames: :func:`pi_nb.notebook.frames.iter_sessions`). Several
sessions draw one line per session (context tokens), one bar per session (composition), or are
summed (truncation).

Without ``ax=`` a plot returns a new :class:`matplotlib.figure.Figure` built without pyplot (no
global state, no backend needed: it works with Agg in tests and in nbconvert), so it can be
saved, embedded, or displayed as a static PNG that survives export; inside a kernel it is shown
as PNG even if pyplot was never imported (a formatter for ``Figure`` is registered on first
use). With ``ax=`` (``axes=`` for :func:`plot_truncation`) the plot draws into that Axes once
and returns it, like pandas and seaborn: the notebook then shows the figure once, through its
own backend.

Every axis is labelled with its unit, and axes that count (entries, tokens, results) have
integer ticks.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from pi_nb.messages import Usage

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from pi_nb.budget import (
    MESSAGE_CATEGORIES,
    PI_DEFAULT_RESERVE_TOKENS,
    format_tokens,
    message_category,
)
from pi_nb.errors import InvalidMessageError, NotebookError
from pi_nb.notebook._base import is_agent_session
from pi_nb.notebook.frames import LoadedSession, iter_sessions, tool_results_df
from pi_nb.notebook.views import COLORS
from pi_nb.session.context import session_entry_to_context_messages
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import DEFAULT_ENCODING, calculate_context_tokens, count_message_tokens

__all__ = [
    "CompositionSeries",
    "ContextSeries",
    "composition_series",
    "context_series",
    "plot_context_tokens",
    "plot_estimate_drift",
    "plot_retention",
    "plot_token_composition",
    "plot_truncation",
]


def _ensure_png_formatter() -> None:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return
    try:
        shell = ipython.get_ipython()
    except Exception:
        return
    if shell is None:
        return
    formatter = shell.display_formatter.formatters.get("image/png")
    if formatter is None:
        return
    try:
        formatter.lookup_by_type(Figure)
    except KeyError:
        from IPython.core.pylabtools import print_figure

        formatter.for_type(Figure, lambda fig: print_figure(fig, "png", bbox_inches="tight"))


def _figure(ax: Any, figsize: tuple[float, float]) -> tuple[Figure, Any]:
    if ax is not None:
        if not isinstance(ax, Axes):
            raise NotebookError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
        return cast(Figure, ax.figure), ax
    _ensure_png_formatter()
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _counts(axis: Any) -> None:
    """Integer ticks on an axis that counts (entries, tokens, results)."""
    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def _sessions(source: Any) -> list[LoadedSession]:
    return iter_sessions(source)[0]


def _one_session(source: Any, what: str) -> SessionManager:
    sessions = _sessions(source)
    if len(sessions) != 1:
        raise NotebookError(
            f"{what}() describes one session, got {len(sessions)}: call it once per session "
            "(pi_nb.notebook.frames.session_managers(source) lists them), or plot them all with the plot"
        )
    return sessions[0].manager


class ContextSeries(TypedDict):
    """What :func:`context_series` returns (see there)."""

    turns: list[tuple[int, str, int]]
    """``(position, entry_id, context_tokens)`` per response with a usable usage."""
    markers: list[tuple[int, str, str, str]]
    """``(position, kind, entry_id, text)``."""
    path_length: int
    session_id: str


class CompositionSeries(TypedDict):
    """What :func:`composition_series` returns (see there)."""

    positions: list[int]
    entry_ids: list[str]
    categories: dict[str, list[int]]
    """Per message category (``MESSAGE_CATEGORIES``), its tokens at each position."""
    encoding: str
    session_id: str


def _short_id(session_id: str) -> str:
    return session_id[-8:] if len(session_id) > 8 else session_id


def _usable_usage(message: Mapping[str, Any]) -> int | None:
    """The context tokens of a recorded message if it is a usable response (its fields are read
    tolerantly: whatever the session line holds)."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, Mapping) or not usage:
        return None
    try:
        tokens = calculate_context_tokens(cast("Usage", usage))  # checked there: InvalidMessageError
    except InvalidMessageError:
        return None
    return tokens if tokens > 0 else None


def context_series(source: Any) -> ContextSeries:
    """The data behind :func:`plot_context_tokens` for the active branch of a session.

    Returns ``{"turns": [(position, entry_id, context_tokens)], "markers": [(position, kind,
    entry_id, text)]}``; ``position`` is the entry's index on the root -> leaf path, ``kind`` is
    ``compaction``, ``branch_summary``, ``branch_point`` or ``model_change``.
    """
    return _context_series_of(_one_session(source, "context_series"))


def _context_series_of(sm: SessionManager) -> ContextSeries:
    path = list(sm.get_branch())
    children: dict[str, int] = {}
    for entry in sm.get_entries():
        p = entry.get("parentId")
        if p is not None:
            children[str(p)] = children.get(str(p), 0) + 1
    turns: list[tuple[int, str, int]] = []
    markers: list[tuple[int, str, str, str]] = []
    for i, e in enumerate(path):
        eid = str(e.get("id"))
        etype = e.get("type")
        msg = e.get("message")
        if etype == "message" and isinstance(msg, Mapping):
            tokens = _usable_usage(msg)
            if tokens is not None:
                turns.append((i, eid, tokens))
        elif etype == "compaction":
            before = e.get("tokensBefore")
            size = format_tokens(before) if isinstance(before, (int, float)) else "?"
            markers.append((i, "compaction", eid, f"compaction ({size} before)"))
        elif etype == "branch_summary":
            markers.append((i, "branch_summary", eid, f"branch summary (from {e.get('fromId')})"))
        elif etype == "model_change":
            markers.append((i, "model_change", eid, f"model {e.get('modelId')}"))
        if children.get(eid, 0) > 1:
            markers.append((i, "branch_point", eid, f"branch point ({children[eid]} children)"))
    return {"turns": turns, "markers": markers, "path_length": len(path), "session_id": sm.get_session_id()}


_MARKER_STYLE = {
    "compaction": ("#0369a1", "-", 1.6),
    "branch_summary": ("#b45309", "--", 1.2),
    "branch_point": ("#b45309", ":", 1.0),
    "model_change": ("#7c3aed", "-.", 1.0),
}


def plot_context_tokens(
    source: Any,
    *,
    context_window: int | None = None,
    reserve_tokens: int | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Context tokens per response (provider usage) along the active branch, against the window
    and Pi's threshold ``context_window - reserve_tokens``, with compaction, branch and
    model-change markers. Several sessions: one line each (markers without their text).
    ``reserve_tokens`` defaults to the ``compaction.reserveTokens`` of the (first) session's own
    directory (:func:`pi_nb.resources.settings.compaction_settings_for_session`).

    Returns the new Figure, or ``ax`` when given."""
    if context_window is not None and context_window <= 0:
        raise NotebookError(f"context_window must be positive, got {context_window}")
    sessions = list(_sessions(source))
    series = [_context_series_of(s.manager) for s in sessions]
    if reserve_tokens is None:
        from pi_nb.resources.settings import compaction_settings_for_session

        reserve_tokens = (
            compaction_settings_for_session(
                source if is_agent_session(source) else sessions[0].manager
            ).reserve_tokens
            if sessions
            else PI_DEFAULT_RESERVE_TOKENS
        )
    fig, axes = _figure(ax, (9, 4))
    several = len(series) > 1
    for data in series:
        xs = [t[0] for t in data["turns"]]
        ys = [t[2] for t in data["turns"]]
        label: str | None = (
            f"session {_short_id(data['session_id'])}" if several else "context tokens (provider usage)"
        )
        axes.plot(
            xs,
            ys,
            marker="o",
            markersize=3,
            color=None if several else COLORS["usage"],
            label=label if len(series) <= 12 else None,
        )
    if context_window is not None:
        threshold = context_window - reserve_tokens
        axes.axhline(
            context_window,
            color="#64748b",
            linewidth=1.2,
            label=f"context window {format_tokens(context_window)}",
        )
        axes.axhline(
            threshold,
            color=COLORS["error"],
            linestyle="--",
            linewidth=1.2,
            label=f"threshold {format_tokens(threshold)}",
        )
        axes.axhspan(threshold, context_window, color=COLORS["error"], alpha=0.08, label="reserve")
        axes.axhline(
            context_window * 0.7,
            color=COLORS["warning"],
            linestyle=":",
            linewidth=0.8,
            label="70% (Pi warning)",
        )
        axes.axhline(
            context_window * 0.9, color=COLORS["error"], linestyle=":", linewidth=0.8, label="90% (Pi error)"
        )
        axes.set_ylim(0, context_window * 1.05)
    seen: set[str] = set()
    for data in series:
        for pos, kind, _eid, text in data["markers"]:
            color, style, width = _MARKER_STYLE[kind]
            label = kind.replace("_", " ") if kind not in seen else None
            seen.add(kind)
            axes.axvline(
                pos, color=color, linestyle=style, linewidth=width, label=label, alpha=0.5 if several else 1
            )
            if not several:
                axes.annotate(
                    text,
                    (pos, 1),
                    xycoords=("data", "axes fraction"),
                    rotation=90,
                    fontsize=7,
                    va="top",
                    ha="right",
                    color=color,
                )
    longest = max((d["path_length"] for d in series), default=0)
    axes.set_xlabel("position on the active branch (entry index)")
    axes.set_ylabel("context size (tokens)")
    _counts(axes.xaxis)
    _counts(axes.yaxis)
    axes.set_xlim(-0.5, max(longest - 0.5, 0.5))
    default = "Context tokens per response" + (f" ({len(series)} sessions)" if several else "")
    axes.set_title(title or default)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    axes.grid(alpha=0.3)
    return fig if ax is None else ax


def composition_series(source: Any, *, encoding: str = DEFAULT_ENCODING) -> CompositionSeries:
    """The data behind :func:`plot_token_composition`: for each assistant response on the
    active branch, the tiktoken size of its context by message category.

    The context is followed the way Pi builds it: entries add their messages; a compaction
    replaces everything with its summary plus the kept entries (from ``firstKeptEntryId``).
    Each entry is counted once. Returns ``{"positions": [...], "entry_ids": [...],
    "categories": {name: [...]}}``.
    """
    return _composition_of(_one_session(source, "composition_series"), encoding)


def _composition_of(sm: SessionManager, encoding: str) -> CompositionSeries:
    path = sm.get_branch()
    cats = MESSAGE_CATEGORIES
    per_entry: list[dict[str, int]] = []
    for e in path:
        counts = dict.fromkeys(cats, 0)
        for m in session_entry_to_context_messages(e):
            cat = message_category(m)
            if cat is not None:
                counts[cat] += count_message_tokens(m, encoding)
        per_entry.append(counts)
    prefix: list[dict[str, int]] = [dict.fromkeys(cats, 0)]
    for counts in per_entry:
        prefix.append({c: prefix[-1][c] + counts[c] for c in cats})
    running = dict.fromkeys(cats, 0)
    positions: list[int] = []
    ids: list[str] = []
    series: dict[str, list[int]] = {c: [] for c in cats}
    index_of = {str(e.get("id")): i for i, e in enumerate(path)}
    for i, e in enumerate(path):
        etype = e.get("type")
        msg = e.get("message") if etype == "message" else None
        if isinstance(msg, Mapping) and msg.get("role") == "assistant":
            positions.append(i)
            ids.append(str(e.get("id")))
            for c in cats:
                series[c].append(running[c])
        if etype == "compaction":
            first = index_of.get(str(e.get("firstKeptEntryId")))
            running = dict(per_entry[i])
            if first is not None and first < i:
                for c in cats:
                    running[c] += prefix[i][c] - prefix[first][c]
        else:
            for c in cats:
                running[c] += per_entry[i][c]
    return {
        "positions": positions,
        "entry_ids": ids,
        "categories": series,
        "encoding": encoding,
        "session_id": sm.get_session_id(),
    }


def plot_token_composition(
    source: Any, *, encoding: str = DEFAULT_ENCODING, ax: Any = None, title: str | None = None
) -> Any:
    """Stacked areas: what the context held, by category (tiktoken), at each response. Several
    sessions: one stacked bar per session, what its context held at its last response.

    Returns the new Figure, or ``ax`` when given."""
    series = [_composition_of(s.manager, encoding) for s in _sessions(source)]
    fig, axes = _figure(ax, (9, 4))
    ylabel = f"context size (tokens, {encoding})"
    if len(series) > 1:
        names = [_short_id(d["session_id"]) for d in series]
        bottom = [0] * len(series)
        for c in MESSAGE_CATEGORIES:
            heights = [d["categories"][c][-1] if d["positions"] else 0 for d in series]
            axes.bar(names, heights, bottom=bottom, color=COLORS[c], label=c, alpha=0.85)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        axes.set_xlabel("session (last 8 characters of its id)")
        axes.set_ylabel(ylabel)
        _counts(axes.yaxis)
        if len(series) > 8:
            axes.tick_params(axis="x", labelrotation=90)
        axes.set_title(title or f"Context composition at the last response ({len(series)} sessions)")
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
        axes.grid(alpha=0.3, axis="y")
        return fig if ax is None else ax
    empty: CompositionSeries = {
        "positions": [],
        "entry_ids": [],
        "categories": {},
        "encoding": encoding,
        "session_id": "",
    }
    data = series[0] if series else empty
    xs = data["positions"]
    if xs:
        axes.stackplot(
            xs,
            *[data["categories"][c] for c in MESSAGE_CATEGORIES],
            labels=list(MESSAGE_CATEGORIES),
            colors=[COLORS[c] for c in MESSAGE_CATEGORIES],
            alpha=0.85,
            step="post",
        )
    else:
        axes.text(
            0.5,
            0.5,
            "no assistant responses on the active branch",
            ha="center",
            va="center",
            transform=axes.transAxes,
        )
    axes.set_xlabel("position on the active branch (entry index)")
    axes.set_ylabel(ylabel)
    _counts(axes.xaxis)
    _counts(axes.yaxis)
    axes.set_title(title or "Context composition at each response (system prompt and tools not recorded)")
    if xs:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    axes.grid(alpha=0.3)
    return fig if ax is None else ax


def plot_truncation(source: Any, *, axes: Sequence[Any] | None = None, title: str | None = None) -> Any:
    """Per tool (over every session of ``source``): how many results were cut (by lines / by
    bytes) and how many bytes the model saw against the full outputs.

    Returns the new Figure, or ``axes`` (as a list) when given."""
    if axes is not None and (len(axes) != 2 or not all(isinstance(a, Axes) for a in axes)):
        raise NotebookError("plot_truncation() draws into two matplotlib Axes: axes=[ax1, ax2]")
    df = tool_results_df(source)
    if axes is None:
        _ensure_png_formatter()
        fig = Figure(figsize=(10, 4), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
    else:
        ax1, ax2 = axes
        fig = ax1.figure
    result = fig if axes is None else [ax1, ax2]
    for ax in (ax1, ax2):
        ax.set_xlabel("tool")
    ax1.set_ylabel("tool results (count)")
    ax2.set_ylabel("output size (bytes)")
    _counts(ax1.yaxis)
    if df.empty:
        for ax in (ax1, ax2):
            ax.text(0.5, 0.5, "no tool results", ha="center", va="center", transform=ax.transAxes)
        return result
    tools = sorted(df["tool_name"].dropna().astype(str).unique())
    by = df["truncated_by"].where(df["truncated"].fillna(False).astype(bool), "none").fillna("none")
    counts = {
        k: [int(((df["tool_name"] == t) & (by == k)).sum()) for t in tools]
        for k in ("none", "lines", "bytes")
    }
    bottom = [0] * len(tools)
    for key, color, label in (
        ("none", "#86efac", "complete"),
        ("lines", COLORS["warning"], "cut by lines"),
        ("bytes", COLORS["error"], "cut by bytes"),
    ):
        ax1.bar(tools, counts[key], bottom=bottom, color=color, label=label)
        bottom = [b + c for b, c in zip(bottom, counts[key], strict=True)]
    ax1.set_title("results per tool")
    ax1.legend(fontsize=7)
    total = df["total_bytes"].astype("Float64").fillna(df["content_bytes"].astype("Float64"))
    seen = df["output_bytes"].astype("Float64").fillna(df["content_bytes"].astype("Float64"))
    tot = [float(total[df["tool_name"] == t].sum()) for t in tools]
    kept = [float(seen[df["tool_name"] == t].sum()) for t in tools]
    x = list(range(len(tools)))
    ax2.bar([i - 0.2 for i in x], tot, width=0.4, color="#fca5a5", label="full output bytes")
    ax2.bar([i + 0.2 for i in x], kept, width=0.4, color="#16a34a", label="bytes the model saw")
    ax2.set_xticks(x, tools)
    if any(v > 0 for v in tot):
        ax2.set_yscale("log")
        ax2.set_ylabel("output size (bytes, log scale)")
    else:
        _counts(ax2.yaxis)
    ax2.set_title("bytes kept vs. full output")
    ax2.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return result


# ---------------------------------------------------------------------------------------------
# research plots: what compactions keep, how far the estimates drift

_SURVIVAL = (
    ("kept", "#16a34a", "still in the kept messages"),
    ("summary", COLORS["warning"], "only in the summary"),
    ("none", COLORS["error"], "lost"),
)
_HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")


def _group_label(policy: Any, session_id: Any) -> str:
    if isinstance(policy, str):
        return policy
    return f"recorded {_short_id(str(session_id))}" if isinstance(session_id, str) else "recorded"


def plot_retention(
    source: Any,
    *,
    by: str = "kind",
    share: bool = True,
    kinds: Sequence[str] | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Where the artifacts of the summarised spans survive, as stacked bars (green: still in the
    kept messages, amber: only in the summary, red: lost).

    ``source`` as in :func:`pi_nb.notebook.frames.retention_df`: a session source (its recorded
    compactions), a replay, a list of replays or ``{policy label: replay}``. ``by="kind"``: one
    group of bars per artifact kind, one bar per policy (or recorded session; told apart by
    hatching) summed over its compactions; ``by="compaction"``: one bar per compaction
    (``"policy #i"``), every kind of ``kinds`` together. ``share``: heights in % of the artifacts
    (else counts). Only the dropped span is counted."""
    from pi_nb.analysis.retention import ARTIFACT_KINDS
    from pi_nb.notebook.frames import retention_summary_df

    if by not in ("kind", "compaction"):
        raise NotebookError(f"by must be 'kind' or 'compaction', got {by!r}")
    wanted = list(kinds) if kinds is not None else list(ARTIFACT_KINDS)
    unknown = [k for k in wanted if k not in ARTIFACT_KINDS]
    if unknown:
        raise NotebookError(f"unknown artifact kind(s) {unknown}; the kinds are {', '.join(ARTIFACT_KINDS)}")
    df = retention_summary_df(source)
    df = df[df["kind"].isin(wanted)]
    given = ax
    fig, ax = _figure(ax, (9, 4))
    result = fig if given is None else ax
    unit = "share of artifacts (%)" if share else "artifacts (count)"
    ax.set_ylabel(unit)
    if not share:
        _counts(ax.yaxis)
    if df.empty or int(df["artifacts"].sum()) == 0:
        ax.text(0.5, 0.5, "no compactions with artifacts", ha="center", va="center", transform=ax.transAxes)
        return result
    labels = [_group_label(p, sid) for p, sid in zip(df["policy"], df["session_id"], strict=True)]
    df = df.assign(group=labels)
    groups = list(dict.fromkeys(labels))
    cols = {"kept": "in_kept", "summary": "in_summary", "none": "lost"}
    if by == "kind":
        present = [k for k in wanted if int(df.loc[df["kind"] == k, "artifacts"].sum()) > 0]
        width = 0.8 / len(groups)
        for gi, g in enumerate(groups):
            sub = df[df["group"] == g]
            totals = [int(sub.loc[sub["kind"] == k, "artifacts"].sum()) for k in present]
            bottom = [0.0] * len(present)
            xs = [i - 0.4 + width * (gi + 0.5) for i in range(len(present))]
            for key, color, _label in _SURVIVAL:
                vals = [float(sub.loc[sub["kind"] == k, cols[key]].sum()) for k in present]
                if share:
                    vals = [v / t * 100 if t else 0.0 for v, t in zip(vals, totals, strict=True)]
                ax.bar(
                    xs,
                    vals,
                    width=width * 0.95,
                    bottom=bottom,
                    color=color,
                    hatch=_HATCHES[gi % len(_HATCHES)],
                    edgecolor="white",
                    linewidth=0.5,
                )
                bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.set_xticks(range(len(present)), present)
        ax.set_xlabel("artifact kind")
    else:
        keys = list(dict.fromkeys(zip(df["group"], df["compaction_index"], strict=True)))
        names = [f"{g} #{int(i)}" for g, i in keys]
        per = [df[(df["group"] == g) & (df["compaction_index"] == i)] for g, i in keys]
        totals = [int(p["artifacts"].sum()) for p in per]
        bottom = [0.0] * len(keys)
        for key, color, _label in _SURVIVAL:
            vals = [float(p[cols[key]].sum()) for p in per]
            if share:
                vals = [v / t * 100 if t else 0.0 for v, t in zip(vals, totals, strict=True)]
            ax.bar(range(len(keys)), vals, bottom=bottom, color=color)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.set_xticks(
            range(len(keys)),
            names,
            rotation=30 if len(keys) > 4 else 0,
            ha="right" if len(keys) > 4 else "center",
        )
        ax.set_xlabel("compaction (policy #index)")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, label=lab) for _k, c, lab in _SURVIVAL]
    if by == "kind" and len(groups) > 1:
        handles += [
            Patch(facecolor="#9ca3af", hatch=_HATCHES[i % len(_HATCHES)], edgecolor="white", label=g)
            for i, g in enumerate(groups)
        ]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(title or "where the summarised artifacts survive")
    return result


def plot_estimate_drift(
    source: Any,
    *,
    tiktoken: bool = True,
    min_recorded: float = 0.0,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Per kind of content: how far Pi's chars/4 estimate (and tiktoken) is from the provider's
    recorded usage, in % (``estimate / recorded - 1``; below 0: the estimate is too low), over
    every session of ``source`` (:func:`pi_nb.notebook.frames.estimate_drift_df`; a frame it
    returned with ``by="kind"`` is drawn as it is). Each kind's label shows the recorded tokens
    attributed to it; kinds with fewer than ``min_recorded`` are left out."""
    from pi_nb.notebook.frames import estimate_drift_df

    if hasattr(source, "columns") and "estimate_drift" in getattr(source, "columns", ()):
        df = source
    else:
        df = estimate_drift_df(source, tiktoken=tiktoken)
    df = df[df["recorded_tokens"].fillna(0) > min_recorded] if len(df) else df
    given = ax
    fig, ax = _figure(ax, (9, 4))
    result = fig if given is None else ax
    ax.set_ylabel("drift vs recorded usage (%)")
    ax.set_xlabel("content kind (recorded tokens attributed)")
    if df.empty:
        ax.text(0.5, 0.5, "no usable intervals", ha="center", va="center", transform=ax.transAxes)
        return result
    df = df.sort_values("recorded_tokens", ascending=False)
    x = list(range(len(df)))
    est = [float(v) * 100 if v is not None and v == v else 0.0 for v in df["estimate_drift"].astype(object)]
    show_tk = tiktoken and df["tiktoken_drift"].notna().any()
    width = 0.4 if show_tk else 0.8
    ax.bar(
        [i - width / 2 if show_tk else i for i in x],
        est,
        width=width,
        color="#2563eb",
        label="chars/4 (Pi's estimate)",
    )
    if show_tk:
        tk = [
            float(v) * 100 if v is not None and v == v else 0.0 for v in df["tiktoken_drift"].astype(object)
        ]
        ax.bar([i + width / 2 for i in x], tk, width=width, color="#f59e0b", label="tiktoken")
    ax.axhline(0, color="#374151", linewidth=0.8)
    names = [
        f"{k}\n({format_tokens(round(float(r)))})"
        for k, r in zip(df["kind"], df["recorded_tokens"], strict=True)
    ]
    ax.set_xticks(
        x, names, rotation=30 if len(x) > 5 else 0, ha="right" if len(x) > 5 else "center", fontsize=8
    )
    ax.legend(fontsize=7)
    ax.set_title(title or "token estimates against recorded usage, per kind")
    return result
