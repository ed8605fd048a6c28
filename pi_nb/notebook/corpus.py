"""Corpora of session files: the frames of :mod:`pi_nb.notebook.frames`, in parallel, at any scale.

* :func:`load_corpus` — a directory (or list) of session files into several frames at once, each
  file read once for all of them (:func:`~pi_nb.notebook.frames.session_frames`), in this process
  or in worker processes with bounded memory: files go to the workers in chunks, at most
  ``in_flight`` chunks are being read at any time, each worker returns the frames of its chunk
  (already in their fixed dtypes), and they are put together in file order. The frames are *the
  same* as the in-memory ones (``entries_df(directory)`` ...), row for row and dtype for dtype.
  A progress bar (tqdm's notebook-aware bar) shows when loading takes more than a second.
* :func:`corpus_dask` — past one machine: the same frames on Dask. A bag of file paths
  (``files_per_partition`` each) becomes a partitioned ``dask.dataframe`` per frame kind; each
  partition is the in-memory frame of its files, in the fixed schema of every frame
  (:data:`SCHEMAS`), so partitions agree on dtypes whatever their data. Several kinds asked at
  once share their partitions' reads: ``dask.compute(*corpus_dask(d, ["messages", "usage"]).values())``
  reads every file once. ``.compute()`` gives the in-memory frame with a per-partition index.

When Dask pays off: a LocalCluster takes one to a few seconds to start and its workers as long
again to import pi_nb; after that, Dask spends more CPU than the work itself on small files
(scheduling, shipping each partition's frames back, concatenating them: about 0.7 ms per session
file of a few KB, measured by ``benchmarks/corpus.py``). On one machine :func:`load_corpus` is as
fast or faster; Dask pays off with many idle cores or several machines (``distributed``), large
sessions (more work per file), and results kept on the cluster
(``.persist()``) rather than brought back whole.

The file walking and the worker processes are the engine's (:mod:`pi_nb.analysis.corpus`);
this module makes the frames, shows the progress bar and builds the Dask graph.

Dask is optional (``pip install "pi_nb[dask]"``); without it :func:`corpus_dask` raises
:class:`~pi_nb.errors.MissingDependencyError`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pandas as pd

from pi_nb.analysis import corpus as _engine
from pi_nb.analysis.columns import ColumnPick, select_columns
from pi_nb.errors import MissingDependencyError, NotebookError
from pi_nb.notebook import frames as _frames
from pi_nb.session.source import Problem

__all__ = [
    "FRAME_KINDS",
    "SCHEMAS",
    "canonical",
    "corpus_dask",
    "corpus_files",
    "load_corpus",
]

FRAME_KINDS = ("entries", "messages", "tool_results", "usage", "compactions")
"""The frames :func:`load_corpus` loads by default (``sessions`` can be asked for too)."""

SCHEMAS: dict[str, dict[str, str]] = _frames.FRAME_DTYPES
"""The fixed dtypes of each frame kind (nullable integers and booleans, ``string``, UTC
timestamps): the same in memory, in worker processes and on Dask."""

Columns = Mapping[str, ColumnPick]


def _schema(kind: str) -> dict[str, str]:
    if kind not in SCHEMAS:
        raise NotebookError(f"unknown frame kind {kind!r} (one of {', '.join(_frames.FRAME_KINDS)})")
    return SCHEMAS[kind]


def canonical(kind: str, df: Any) -> Any:
    """``df`` (a frame of ``kind``) with the columns of :data:`SCHEMAS` in their dtypes and a
    fresh ``RangeIndex`` (a new frame). The frames already have these dtypes; this is for frames
    that went through a format that loses them (CSV, an older pi_nb's pickles)."""
    schema = _schema(kind)
    out = pd.DataFrame(index=range(len(df)))
    for col, dtype in schema.items():
        values = [None if _is_na(v) else v for v in df[col].tolist()]
        if dtype == _frames.TIMESTAMP_DTYPE:
            values = [v.isoformat() if isinstance(v, pd.Timestamp) else v for v in values]
        out[col] = _frames._typed(values, dtype)
    return out


def _is_na(value: Any) -> bool:
    return (
        value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value))
    )


def corpus_files(source: Any) -> list[str]:
    """The session files of a directory (recursive ``*.jsonl``, sorted as the frames read them),
    a file, or a list of those."""
    return [f.path for f in _engine.corpus_files(source)]


Frames = dict[str, pd.DataFrame]
"""``{kind: frame}`` (pandas has no type information here: a frame is ``Any`` to mypy)."""


def load_corpus(
    source: Any,
    kinds: Sequence[str] = FRAME_KINDS,
    *,
    workers: int | None = None,
    chunk_size: int | None = None,
    in_flight: int | None = None,
    strict: bool | None = None,
    progress: bool | None = None,
    columns: Columns | None = None,
) -> Any:
    """Every session file of ``source`` into the frames ``kinds``: ``{kind: frame}``.

    ``workers`` processes (default: the CPU count; ``1`` reads in this process) each read
    ``chunk_size`` files at a time (default: the files split in ``8 * workers`` chunks, at most
    64 files each); at most ``in_flight`` chunks (default ``2 * workers``) are being read at once,
    so memory holds a bounded number of parsed sessions plus the rows. Every file is read once
    for all ``kinds``; ``columns={kind: [names]}`` reads only those columns of a kind (a
    :class:`~pi_nb.analysis.columns.Column` of one's own, with ``workers > 1``, needs a value
    function the worker processes can unpickle: a module-level function). The frames
    equal the in-memory ones (``entries_df(source)`` ...). ``strict`` and ``progress`` as in
    :mod:`pi_nb.notebook.frames` (``strict=False`` returns ``({kind: frame}, errors)``).
    """
    for kind in kinds:
        _schema(kind)
    picked = {k: select_columns(k, (columns or {}).get(k)) for k in kinds}
    files = _engine.corpus_files(source)
    workers = workers or os.cpu_count() or 1
    if chunk_size is not None and chunk_size < 1:
        raise NotebookError(f"chunk_size must be 1 or more, got {chunk_size}")
    if workers <= 1 or len(files) <= 1:
        return _frames.session_frames(files, kinds, strict=strict, progress=progress, columns=columns)
    rows: dict[str, list[tuple[Any, ...]]] = {k: [] for k in kinds}
    problems: list[Problem] = []
    bar = _frames.Progress(len(files), progress, "session files")
    try:
        for got, found, n in _engine.corpus_chunks(
            files,
            kinds,
            workers=workers,
            chunk_size=chunk_size,
            in_flight=in_flight,
            strict=strict,
            columns=columns,
        ):
            for kind in kinds:
                rows[kind].extend(got[kind])
            problems.extend(found)
            bar.update(n)
    finally:
        bar.close()
    frames = {kind: _frames._frame(picked[kind], rows[kind]) for kind in kinds}
    return frames if strict is not False else (frames, _frames.errors_frame(problems))


# ---------------------------------------------------------------------------------------------
# Dask


def _partition(
    paths: Sequence[Any], kinds: Sequence[str], strict: bool | None, columns: Any = None
) -> Frames:
    got = _frames.session_frames(list(paths), kinds, strict=strict, columns=columns)
    return cast(Frames, got[0] if strict is False else got)


def _pick(parts: Frames, kind: str) -> Any:
    return parts[kind]


def corpus_dask(
    source: Any,
    kind: str | Sequence[str],
    *,
    files_per_partition: int = 64,
    strict: bool | None = None,
    columns: Columns | None = None,
) -> Any:
    """The frame ``kind`` of every session file of ``source`` as a ``dask.dataframe`` (or, for a
    list of kinds, ``{kind: dask.dataframe}`` whose partitions share one read of each file).

    A ``dask.bag`` of the file paths (``files_per_partition`` per partition, file order kept)
    maps each partition to the in-memory frames of its files, in the :data:`SCHEMAS` dtypes.
    Runs wherever Dask runs the graph: the threaded scheduler, processes, or a ``distributed``
    cluster (the current ``Client``). Each partition has its own ``RangeIndex``; use
    ``.compute().reset_index(drop=True)`` for one frame. A progress bar: ``dask.diagnostics``'
    ``ProgressBar`` for the local schedulers, ``distributed.progress`` on a cluster. ``strict``
    as in :mod:`pi_nb.notebook.frames` (``False`` drops the problems; the warnings of
    ``None`` go to the workers' logs); ``columns={kind: [names]}`` reads only those columns.
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
    kinds = [kind] if isinstance(kind, str) else list(kind)
    for k in kinds:
        _schema(k)
    if files_per_partition < 1:
        raise NotebookError(f"files_per_partition must be 1 or more, got {files_per_partition}")
    files = _engine.corpus_files(source)
    metas = {k: _frames.frame_of_rows(k, [], columns=(columns or {}).get(k)) for k in kinds}
    out: dict[str, Any] = {}  # {kind: dask.dataframe} (Dask has no type information here)
    with dask.config.set({"dataframe.convert-string": False}):
        if not files:
            out = {k: dd.from_pandas(metas[k], npartitions=1) for k in kinds}
        else:
            bag = db.from_sequence(files, partition_size=files_per_partition)
            parts = [delayed(_partition)(part, kinds, strict, columns) for part in bag.to_delayed()]
            for k in kinds:
                pieces = [delayed(_pick)(p, k) for p in parts]
                out[k] = dd.from_delayed(pieces, meta=metas[k], verify_meta=False)
    return out[kind] if isinstance(kind, str) else out
