"""Corpora of session files: the frames of :mod:`pi_nb.notebook.frames`, in parallel, at any scale.

* :func:`load_corpus` — a directory (or list) of session files into the frames, in worker
  processes with bounded memory: files go to the workers in small chunks, at most
  ``2 * workers`` chunks are being read at any time, each worker returns only the rows of its
  chunk, and the rows are put together in file order. The
  frames are *the same* as the in-memory ones (``entries_df(directory)`` ...), row for row and
  dtype for dtype: the rows are rebuilt into one frame exactly as the in-memory function does.
* :func:`corpus_dask` — past one machine: the same loader on Dask. A bag of file paths
  (``files_per_partition`` each) becomes a partitioned ``dask.dataframe``; each partition is the
  in-memory frame of its files, converted to one fixed schema (:func:`canonical`) so that every
  partition agrees on dtypes whatever its data. ``.compute()`` on a cluster (``distributed``) or
  locally gives the in-memory frame in that schema: ``canonical(kind, entries_df(directory))``
  equals ``corpus_dask(directory, "entries").compute().reset_index(drop=True)``.

Dask is optional (``pip install "pi_nb[dask]"``); without it :func:`corpus_dask` raises
:class:`~pi_nb.errors.MissingDependencyError`.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import pandas as pd

from pi_nb.errors import MissingDependencyError, NotebookError
from pi_nb.notebook import frames as _frames

__all__ = [
    "FRAME_KINDS",
    "SCHEMAS",
    "canonical",
    "corpus_dask",
    "corpus_files",
    "load_corpus",
]

FRAME_KINDS = ("entries", "messages", "tool_results", "usage", "compactions")
"""The frames a corpus loads into (``<kind>_df`` in :mod:`pi_nb.notebook.frames`)."""

_FUNCS = {
    "entries": _frames.entries_df,
    "messages": _frames.messages_df,
    "tool_results": _frames.tool_results_df,
    "usage": _frames.usage_df,
    "compactions": _frames.compactions_df,
}
_COLUMNS = {
    "entries": _frames.ENTRY_COLUMNS,
    "messages": _frames.MESSAGE_COLUMNS,
    "tool_results": _frames.TOOL_RESULT_COLUMNS,
    "usage": _frames.USAGE_COLUMNS,
    "compactions": _frames.COMPACTION_COLUMNS,
}

_TS = "datetime64[us, UTC]"
_INT = (
    "depth",
    "children",
    "estimate_tokens",
    "text_chars",
    "thinking_chars",
    "images",
    "tool_calls",
    "content_chars",
    "content_bytes",
    "total_lines",
    "total_bytes",
    "output_lines",
    "output_bytes",
    "max_lines",
    "max_bytes",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "context_tokens",
    "tokens_before",
    "summary_chars",
    "summary_estimate_tokens",
    "estimate_tokens_after",
    "usage_total_tokens",
)
_BOOL = (
    "on_active_branch",
    "in_context",
    "is_leaf",
    "is_error",
    "truncated",
    "last_line_partial",
    "first_line_exceeds_limit",
    "match_limit_reached",
    "result_limit_reached",
    "entry_limit_reached",
    "lines_truncated",
    "usable",
    "from_hook",
)
_FLOAT = ("cost_input", "cost_output", "cost_cache_read", "cost_cache_write", "cost_total")


def _dtype(column: str) -> str:
    if column == "timestamp":
        return _TS
    if column in _INT:
        return "Int64"
    if column in _BOOL:
        return "boolean"
    if column in _FLOAT:
        return "Float64"
    return "string"


SCHEMAS: dict[str, dict[str, str]] = {kind: {c: _dtype(c) for c in cols} for kind, cols in _COLUMNS.items()}
"""The fixed dtypes of each frame kind on Dask (nullable integers and booleans, ``string``,
UTC timestamps), so partitions agree whatever their data."""


def canonical(kind: str, df: Any) -> Any:
    """``df`` (a frame of ``kind``) in the fixed schema of :data:`SCHEMAS` (a new frame)."""
    schema = _schema(kind)
    out = df.copy()
    for col, dtype in schema.items():
        series = out[col]
        if dtype == _TS:
            out[col] = pd.to_datetime(series, utc=True).astype(_TS)
            continue
        cast = {"Int64": int, "boolean": bool, "Float64": float, "string": str}[dtype]
        values = [None if _is_na(v) else cast(v) for v in series.tolist()]
        out[col] = pd.Series(pd.array(values, dtype=dtype), index=out.index)
    return out.reset_index(drop=True)


def _is_na(value: Any) -> bool:
    return (
        value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value))
    )


def _schema(kind: str) -> dict[str, str]:
    if kind not in SCHEMAS:
        raise NotebookError(f"unknown frame kind {kind!r} (one of {', '.join(FRAME_KINDS)})")
    return SCHEMAS[kind]


def corpus_files(source: Any) -> list[str]:
    """The session files of a directory (recursive ``*.jsonl``, sorted as the frames read them),
    a file, or a list of those."""
    if isinstance(source, (str, os.PathLike)):
        return list(_frames._session_files(os.fspath(source)))
    if isinstance(source, Iterable) and not isinstance(source, (bytes, dict)):
        out: list[str] = []
        for item in source:
            out.extend(corpus_files(item))
        return out
    raise NotebookError(
        f"a corpus is a directory, a session file or a list of them, got {type(source).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# processes, bounded memory


def _plain(value: Any) -> Any:
    """A frame cell back as the Python value the frame function saw (NA -> None)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()  # a numpy scalar
    return value


def _rows_of_files(paths: Sequence[str], kinds: Sequence[str]) -> dict[str, list[tuple[Any, ...]]]:
    """Worker: the rows of each frame kind for a few files (one frame per kind for all of them:
    a pandas frame costs milliseconds to build, whatever its size)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for kind in kinds:
        df = _FUNCS[kind](list(paths))
        out[kind] = [tuple(_plain(v) for v in row) for row in df.itertuples(index=False, name=None)]
    return out


def _frame_from_rows(kind: str, rows: list[tuple[Any, ...]]) -> Any:
    """What ``<kind>_df`` builds from these rows (its own final step, on all rows at once)."""
    columns = list(_COLUMNS[kind])
    df = _frames._finish([dict(zip(columns, r, strict=True)) for r in rows], columns, [], True)
    if kind == "usage":  # usage_df's own last step
        for col in ("input", "output", "cache_read", "cache_write", "total_tokens", "context_tokens"):
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df


def load_corpus(
    source: Any,
    kinds: Sequence[str] = FRAME_KINDS,
    *,
    workers: int | None = None,
    chunk_size: int | None = None,
    in_flight: int | None = None,
) -> dict[str, Any]:
    """Every session file of ``source`` into the frames ``kinds``: ``{kind: frame}``.

    ``workers`` processes (default: the CPU count; ``1`` reads in this process) each read
    ``chunk_size`` files at a time (default: the files split in ``8 * workers`` chunks, at most
    64 files each); at most ``in_flight`` chunks (default ``2 * workers``) are being read at once,
    so memory holds a bounded number of parsed sessions plus the rows. The frames equal the
    in-memory ones (``entries_df(source)`` ...). A file that cannot be read raises, as the
    in-memory frames do with ``strict=True``.
    """
    for kind in kinds:
        _schema(kind)
    files = corpus_files(source)
    workers = workers or os.cpu_count() or 1
    size = chunk_size or min(64, max(1, math.ceil(len(files) / (8 * workers))))
    if size < 1:
        raise NotebookError(f"chunk_size must be 1 or more, got {chunk_size}")
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    rows: dict[str, list[tuple[Any, ...]]] = {k: [] for k in kinds}
    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            for kind, part in _rows_of_files(chunk, kinds).items():
                rows[kind].extend(part)
    else:
        limit = max(1, in_flight or 2 * workers)
        pending: deque[Future[dict[str, list[tuple[Any, ...]]]]] = deque()
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for chunk in chunks:
                pending.append(pool.submit(_rows_of_files, chunk, list(kinds)))
                if len(pending) >= limit:
                    for kind, part in pending.popleft().result().items():
                        rows[kind].extend(part)
            while pending:
                for kind, part in pending.popleft().result().items():
                    rows[kind].extend(part)
    return {kind: _frame_from_rows(kind, rows[kind]) for kind in kinds}


# ---------------------------------------------------------------------------------------------
# Dask


def _partition(paths: Sequence[str], kind: str) -> Any:
    frame = _FUNCS[kind](list(paths)) if paths else _frame_from_rows(kind, [])
    return canonical(kind, frame)


def corpus_dask(source: Any, kind: str, *, files_per_partition: int = 64) -> Any:
    """The frame ``kind`` of every session file of ``source`` as a ``dask.dataframe``.

    A ``dask.bag`` of the file paths (``files_per_partition`` per partition, file order kept)
    maps each partition to the in-memory frame of its files in the :data:`SCHEMAS` schema. Runs
    wherever Dask runs the graph: the threaded scheduler, processes, or a ``distributed`` cluster
    (the current ``Client``). Each partition has its own ``RangeIndex``; use
    ``.compute().reset_index(drop=True)`` for one frame.
    """
    try:
        import dask
        import dask.bag as db
        import dask.dataframe as dd
        from dask.delayed import delayed
    except ImportError as exc:  # pragma: no cover - dask is in the test extra
        raise MissingDependencyError(
            'the corpus loader on Dask needs dask: pip install "pi_nb[dask]" '
            '(or "dask[dataframe,distributed]")'
        ) from exc
    schema = _schema(kind)
    if files_per_partition < 1:
        raise NotebookError(f"files_per_partition must be 1 or more, got {files_per_partition}")
    files = corpus_files(source)
    meta = canonical(kind, _frame_from_rows(kind, []))
    assert list(meta.columns) == list(schema)
    if not files:
        return dd.from_pandas(meta, npartitions=1)
    bag = db.from_sequence(files, partition_size=files_per_partition)
    parts = [delayed(_partition)(part, kind) for part in bag.to_delayed()]
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_delayed(parts, meta=meta, verify_meta=False)
