"""Frames and plots of what-if replays and policy sweeps (:mod:`pi_nb.what_if` in pandas/matplotlib).

* :func:`decisions_df` — one row per checkpoint a replay passed (what Pi's rules decided there);
* :func:`compactions_compare_df` — the simulated compactions beside the recorded ones;
* :func:`steps_df` / :func:`plot_replay` — the context size along the session, simulated against
  recorded, with both runs' compactions and the threshold;
* :func:`sweep_df` / :func:`plot_sweep` — a grid of policies over many sessions as one tidy frame
  (one row per session and policy: compactions, tokens summarised, peak context...), optionally
  in several processes, and its plot.

Plots are built without pyplot (see :mod:`pi_nb.notebook.plots`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypedDict

import pandas as pd

from pi_nb.budget import format_tokens
from pi_nb.compaction.settings import DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS
from pi_nb.errors import NotebookError
from pi_nb.notebook.plots import _figure
from pi_nb.session.paths import session_files_under
from pi_nb.what_if import ReplayResult, SweepOutcome, sweep

__all__ = [
    "DECISION_COLUMNS",
    "SWEEP_COLUMNS",
    "compactions_compare_df",
    "decisions_df",
    "plot_replay",
    "plot_sweep",
    "steps_df",
    "sweep_df",
]

DECISION_COLUMNS = (
    "session_id",
    "session_file",
    "index",
    "checkpoint",
    "position",
    "after_entry_id",
    "message_entry_id",
    "context_window",
    "threshold",
    "tokens",
    "tokens_source",
    "reason",
    "outcome",
    "will_retry",
    "compacted",
    "compaction_id",
    "first_kept_entry_id",
    "tokens_before",
    "tokens_after",
    "is_split_turn",
    "messages_summarized",
    "tokens_summarized",
    "summary_source",
    "matches_recorded",
)


class DecisionRow(TypedDict):
    """A row of :func:`decisions_df` (``DECISION_COLUMNS``) before it becomes a frame row."""

    session_id: str | None
    session_file: str | None
    index: int
    checkpoint: str
    position: int
    after_entry_id: str | None
    message_entry_id: str | None
    context_window: int
    threshold: int
    tokens: int | None
    tokens_source: str | None
    reason: str | None
    outcome: str
    will_retry: bool
    compacted: bool
    compaction_id: str | None
    first_kept_entry_id: str | None
    tokens_before: int | None
    tokens_after: int | None
    is_split_turn: bool | None
    messages_summarized: int | None
    tokens_summarized: int | None
    summary_source: str | None
    matches_recorded: bool


SWEEP_COLUMNS = (
    "session_id",
    "session_file",
    "context_window",
    "reserve_tokens",
    "keep_recent_tokens",
    "threshold",
    "compactions",
    "threshold_compactions",
    "overflow_compactions",
    "split_turns",
    "skipped_nothing_to_compact",
    "tokens_summarized",
    "peak_context_tokens",
    "final_context_tokens",
    "recorded_compactions",
    "recorded_peak_context_tokens",
)

_INT_COLUMNS = ("tokens", "tokens_before", "tokens_after", "messages_summarized", "tokens_summarized")


def _results(results: ReplayResult | Iterable[ReplayResult]) -> list[ReplayResult]:
    if isinstance(results, ReplayResult):
        return [results]
    out = list(results)
    if not all(isinstance(r, ReplayResult) for r in out):
        raise NotebookError("expected a ReplayResult (from pi_nb.what_if.replay) or a list of them")
    return out


def decisions_df(results: ReplayResult | Iterable[ReplayResult]) -> Any:
    """One row per checkpoint of one or more replays (walk order).

    ``compacted`` says whether a compaction was made there; its columns (``compaction_id``,
    ``first_kept_entry_id``, ``tokens_before``, ``tokens_after``...) are ``<NA>`` otherwise.
    ``matches_recorded``: the recording has a compaction at the same place with the same
    ``firstKeptEntryId`` and ``tokensBefore``.
    """
    rows: list[DecisionRow] = []
    for result in _results(results):
        recorded = {(c.position, c.first_kept_entry_id, c.tokens_before) for c in result.recorded_compactions}
        for d in result.decisions:
            c = d.compaction
            rows.append(
                {
                    "session_id": result.session_id,
                    "session_file": result.session_file,
                    "index": d.index,
                    "checkpoint": d.checkpoint,
                    "position": d.position,
                    "after_entry_id": d.after_entry_id,
                    "message_entry_id": d.message_entry_id,
                    "context_window": d.context_window,
                    "threshold": d.threshold,
                    "tokens": d.tokens,
                    "tokens_source": d.tokens_source,
                    "reason": d.reason,
                    "outcome": d.outcome,
                    "will_retry": d.will_retry,
                    "compacted": c is not None,
                    "compaction_id": c.id if c else None,
                    "first_kept_entry_id": c.first_kept_entry_id if c else None,
                    "tokens_before": c.tokens_before if c else None,
                    "tokens_after": c.tokens_after if c else None,
                    "is_split_turn": c.is_split_turn if c else None,
                    "messages_summarized": c.messages_summarized if c else None,
                    "tokens_summarized": c.tokens_summarized if c else None,
                    "summary_source": c.summary_source if c else None,
                    "matches_recorded": (
                        (c.position, c.first_kept_entry_id, c.tokens_before) in recorded if c else False
                    ),
                }
            )
    df = pd.DataFrame(rows, columns=list(DECISION_COLUMNS))
    for col in _INT_COLUMNS:
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    df["is_split_turn"] = df["is_split_turn"].astype("boolean")
    return df


def compactions_compare_df(result: ReplayResult) -> Any:
    """The simulated and the recorded compactions side by side, by place in the session.

    One row per place (``position``: recorded entries walked before it) where either run
    compacted; ``sim_*`` and ``rec_*`` columns, ``same`` when both cut at the same entry with the
    same ``tokensBefore``.
    """
    # a frame row per place: "position", then the sim_* and/or rec_* columns of who compacted there
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    counts: dict[tuple[str, int], int] = {}

    def slot(kind: str, position: int) -> dict[str, Any]:
        n = counts.get((kind, position), 0)
        counts[(kind, position)] = n + 1
        return rows.setdefault((position, n), {"position": position})

    for c in result.compactions:
        slot("sim", c.position).update(
            sim_id=c.id,
            sim_checkpoint=c.checkpoint,
            sim_reason=c.reason,
            sim_first_kept_entry_id=c.first_kept_entry_id,
            sim_tokens_before=c.tokens_before,
            sim_tokens_after=c.tokens_after,
            sim_split_turn=c.is_split_turn,
        )
    for r in result.recorded_compactions:
        slot("rec", r.position).update(
            rec_id=r.id,
            rec_checkpoint=r.checkpoint,
            rec_reason=r.reason,
            rec_first_kept_entry_id=r.first_kept_entry_id,
            rec_tokens_before=r.tokens_before,
            rec_tokens_after=r.tokens_after,
        )
    columns = [
        "position",
        "sim_id",
        "sim_checkpoint",
        "sim_reason",
        "sim_first_kept_entry_id",
        "sim_tokens_before",
        "sim_tokens_after",
        "sim_split_turn",
        "rec_id",
        "rec_checkpoint",
        "rec_reason",
        "rec_first_kept_entry_id",
        "rec_tokens_before",
        "rec_tokens_after",
    ]
    df = pd.DataFrame([rows[k] for k in sorted(rows)], columns=columns)
    for col in ("sim_tokens_before", "sim_tokens_after", "rec_tokens_before", "rec_tokens_after"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    df["same"] = (
        df["sim_first_kept_entry_id"].notna()
        & (df["sim_first_kept_entry_id"] == df["rec_first_kept_entry_id"])
        & (df["sim_tokens_before"] == df["rec_tokens_before"]).fillna(False)
    ).astype(bool)
    return df


def steps_df(result: ReplayResult) -> Any:
    """The context size after each walked entry and compaction, simulated and recorded
    (Pi's ``estimateContextTokens`` of each agent state; see :class:`pi_nb.what_if.ReplayStep`)."""
    df = pd.DataFrame(
        [
            {
                "position": s.position,
                "entry_id": s.entry_id,
                "kind": s.kind,
                "simulated_tokens": s.simulated_tokens,
                "recorded_tokens": s.recorded_tokens,
                "usage_tokens": s.usage_tokens,
                "simulated_usage_tokens": s.simulated_usage_tokens,
            }
            for s in result.steps
        ],
        columns=[
            "position",
            "entry_id",
            "kind",
            "simulated_tokens",
            "recorded_tokens",
            "usage_tokens",
            "simulated_usage_tokens",
        ],
    )
    for col in ("usage_tokens", "simulated_usage_tokens"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    return df


def plot_replay(result: ReplayResult, *, ax: Any = None, title: str | None = None) -> Any:
    """Context tokens along the session: the replayed policy against the recorded run.

    Solid: the simulated agent's context (Pi's estimate: last usage + estimates after it, the
    usage rebased after a divergence); dashed: the recorded agent's. Triangles mark the replay's
    compactions (at ``tokens_before``), crosses the recorded ones; the horizontal line is the
    replayed threshold ``context_window - reserve_tokens``. Given ``ax``, draws there once and
    returns that Axes (like every plot of pi_nb); else a new Figure.
    """
    given = ax is not None
    fig, ax = _figure(ax, (9, 4))
    xs = list(range(len(result.steps)))
    ax.plot(
        xs,
        [s.recorded_tokens for s in result.steps],
        color="#94a3b8",
        linestyle="--",
        linewidth=1.3,
        label="recorded run",
    )
    ax.plot(
        xs,
        [s.simulated_tokens for s in result.steps],
        color="#2563eb",
        linewidth=1.6,
        label="replayed policy",
    )
    sim_x = [i for i, s in enumerate(result.steps) if s.kind == "compaction"]
    by_id = {c.id: c for c in result.compactions}
    sim_y = [by_id[str(result.steps[i].entry_id)].tokens_before for i in sim_x]
    if sim_x:
        ax.scatter(
            sim_x,
            sim_y,
            marker="v",
            s=60,
            color="#dc2626",
            zorder=3,
            label=f"replayed compactions ({len(sim_x)})",
        )
    rec_x = [i for i, s in enumerate(result.steps) if s.kind == "recorded_compaction"]
    rec_by_id = {c.id: c for c in result.recorded_compactions}
    rec_y = [rec_by_id[str(result.steps[i].entry_id)].tokens_before or 0 for i in rec_x]
    if rec_x:
        ax.scatter(
            rec_x,
            rec_y,
            marker="x",
            s=60,
            color="#475569",
            zorder=3,
            label=f"recorded compactions ({len(rec_x)})",
        )
    window = result.context_window
    if window:
        threshold = window - result.settings.reserve_tokens
        ax.axhline(
            threshold,
            color="#dc2626",
            linestyle=":",
            linewidth=1.2,
            label=f"threshold {format_tokens(threshold)} (window {format_tokens(window)})",
        )
    ax.set_xlabel("step along the session (entries and compactions)")
    ax.set_ylabel("context tokens (Pi's estimate)")
    ax.set_ylim(bottom=0)
    s = result.settings
    ax.set_title(
        title
        or f"What if: window {format_tokens(window) if window else 'per model'}, reserve "
        f"{format_tokens(s.reserve_tokens)}, keep {format_tokens(s.keep_recent_tokens)}"
    )
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    return ax if given else fig


# ---------------------------------------------------------------------------------------------
# sweeps


def _sweep_files(files: Sequence[str], grid: Mapping[str, Any]) -> list[SweepOutcome]:
    """``sweep(files, **grid)`` in a worker (``grid``: sweep's keyword arguments)."""
    return sweep(files, **grid)


def _session_sources(sources: Any) -> list[Any]:
    if isinstance(sources, (str, os.PathLike)):
        return list(session_files_under(os.fspath(sources)))
    out: list[Any] = []
    for item in sources:
        if isinstance(item, (str, os.PathLike)):
            out.extend(session_files_under(os.fspath(item)))
        else:
            out.append(item)
    return out


def sweep_df(
    sources: Any,
    *,
    context_window: Sequence[int],
    reserve_tokens: Sequence[int] = (DEFAULT_RESERVE_TOKENS,),
    keep_recent_tokens: Sequence[int] = (DEFAULT_KEEP_RECENT_TOKENS,),
    summary_tokens: int | None = None,
    usage: str = "rebase",
    workers: int = 1,
) -> Any:
    """Replay every session of ``sources`` (files, directories, managers) under every policy of
    the grid; one row per (session, policy) with the columns :data:`SWEEP_COLUMNS`.

    With ``workers > 1`` the session files are replayed in that many processes (chunks of files;
    the row order does not change).
    """
    grid = {
        "context_window": list(context_window),
        "reserve_tokens": list(reserve_tokens),
        "keep_recent_tokens": list(keep_recent_tokens),
        "summary_tokens": summary_tokens,
        "usage": usage,
    }
    items = _session_sources(sources)
    if workers > 1 and all(isinstance(i, str) for i in items) and len(items) > 1:
        size = max(1, len(items) // (workers * 4))
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        outcomes: list[SweepOutcome] = []
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(_sweep_files, chunks, [grid] * len(chunks)):
                outcomes.extend(part)
    else:
        outcomes = sweep(items, **grid)  # type: ignore[call-overload]
    rows = []
    for o in outcomes:
        row: dict[str, object] = {**o.to_dict(), "threshold": o.context_window - o.reserve_tokens}
        rows.append(row)
    return pd.DataFrame(rows, columns=list(SWEEP_COLUMNS))


def plot_sweep(
    df: Any,
    *,
    x: str = "context_window",
    y: str = "compactions",
    hue: str | None = "reserve_tokens",
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """The mean of ``y`` over sessions for each policy: ``x`` on the axis, one line per ``hue``
    value (the remaining grid column, if any, is averaged too); the shaded band is the range
    (min-max) over sessions. Given ``ax``, draws there once and returns that Axes; else a Figure."""
    for col in (x, y, *([hue] if hue else [])):
        if col not in df.columns:
            raise NotebookError(f"the sweep frame has no column {col!r}")
    given = ax is not None
    fig, ax = _figure(ax, (8, 4))
    groups = [(None, df)] if hue is None else list(df.groupby(hue, sort=True))
    for key, part in groups:
        stats = part.groupby(x, sort=True)[y].agg(["mean", "min", "max"])
        label = y if key is None else f"{hue} = {format_tokens(key) if isinstance(key, int) else key}"
        ax.plot(stats.index, stats["mean"], marker="o", label=label)
        ax.fill_between(stats.index, stats["min"], stats["max"], alpha=0.12)
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(f"{y.replace('_', ' ')} (mean over {df['session_id'].nunique()} sessions)")
    ax.set_title(title or f"Policy sweep: {y.replace('_', ' ')}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax if given else fig
