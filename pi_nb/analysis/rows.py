"""The rows of every frame kind of a session source, each session file read once for every kind.

:func:`session_rows` loads the sessions of a source (:mod:`pi_nb.session.source`), builds the row
contexts of each kind (:mod:`pi_nb.analysis.extract`) and reads the columns asked for
(:mod:`pi_nb.analysis.columns`). Plain Python: rows are tuples in the columns' order, ``None`` for
a missing value; :mod:`pi_nb.notebook.frames` turns them into frames.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import pi_nb.harness  # noqa: F401 - registers the other agents' readers with the session sources
from pi_nb.analysis.columns import Column, ColumnPick, check_kinds, rows_of, select_columns
from pi_nb.analysis.extract import (
    LoadedSession,
    compaction_contexts,
    entry_contexts,
    message_contexts,
    session_contexts,
    tool_result_contexts,
    usage_contexts,
)
from pi_nb.session.jsonl import gc_paused
from pi_nb.session.source import (
    Problem,
    SessionFile,
    SessionSource,
    load_session_item,
    resolve_session_source,
)

__all__ = [
    "CONTEXTS",
    "ProgressHook",
    "iter_loaded",
    "session_rows",
]

CONTEXTS: dict[str, Callable[[LoadedSession], Iterator[Any]]] = {
    "entries": entry_contexts,
    "messages": message_contexts,
    "tool_results": tool_result_contexts,
    "usage": usage_contexts,
    "compactions": compaction_contexts,
    "sessions": session_contexts,
}
"""The row contexts of each frame kind, for one session."""


class ProgressHook(Protocol):
    """What a progress bar offers the loader: one ``update`` per file read, ``close`` at the end."""

    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


def iter_loaded(
    source: SessionSource,
    strict: bool | None,
    problems: list[Problem],
    progress: Callable[[int], ProgressHook] | None = None,
    encoding: str | None = None,
    lazy: bool | None = None,
) -> Iterator[LoadedSession]:
    """Each session of ``source`` loaded one at a time (memory holds one parsed file);
    ``progress(total files)`` makes the bar updated after each file. ``lazy``: whether Pi files are
    indexed and their entries parsed as the frames ask (``None``: the large ones; see
    :func:`~pi_nb.session.source.load_session_item`)."""
    items = resolve_session_source(source)
    bar = progress(sum(1 for i in items if isinstance(i, SessionFile))) if progress else None
    try:
        for item in items:
            loaded = load_session_item(item, strict, problems, lazy=lazy)
            if bar is not None and isinstance(item, SessionFile):
                bar.update()
            if loaded is not None:
                yield LoadedSession.of(*loaded, encoding=encoding)
    finally:
        if bar is not None:
            bar.close()


def session_rows(
    source: SessionSource,
    kinds: Sequence[str],
    *,
    columns: Mapping[str, ColumnPick] | None = None,
    strict: bool | None = None,
    encoding: str | None = None,
    progress: Callable[[int], ProgressHook] | None = None,
) -> tuple[dict[str, tuple[Column, ...]], dict[str, list[tuple[Any, ...]]], list[Problem]]:
    """``(columns, rows, problems)``: for each kind of ``kinds``, the declarations of its columns
    (``columns[kind]`` names some, default all) and its rows over every session of ``source``,
    and the problems met (``strict`` as in :func:`pi_nb.session.source.load_session_item`)."""
    check_kinds(kinds)
    picked = {k: select_columns(k, (columns or {}).get(k), encoding=encoding) for k in kinds}
    problems: list[Problem] = []
    rows: dict[str, list[tuple[Any, ...]]] = {k: [] for k in kinds}
    plan = [(rows[k], CONTEXTS[k], picked[k]) for k in kinds]
    # the rows and the parsed sessions hold no reference cycles: a collector pass over the
    # growing heap would cost a fifth of the time
    # the entries and messages frames read every entry: parsed at once then (the index would
    # only add its pass); the other kinds read a few entries of each session
    lazy = False if {"entries", "messages"} & set(kinds) else None
    with gc_paused():
        for s in iter_loaded(source, strict, problems, progress, encoding, lazy):
            for out, contexts, spec in plan:
                out.extend(rows_of(contexts(s), spec))
    return picked, rows, problems
