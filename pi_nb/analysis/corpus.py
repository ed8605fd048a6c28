"""Corpora of session files: the files of a directory (or list), and their rows read in worker
processes with bounded memory.

:func:`corpus_chunks` sends the files to the workers in chunks, keeps at most ``in_flight``
chunks being read at any time, and yields each chunk's rows (plain tuples, the
:mod:`pi_nb.analysis.rows` rows) in file order. :mod:`pi_nb.notebook.corpus` makes the frames
and shows the progress bar.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from pi_nb.analysis.rows import session_rows
from pi_nb.errors import NotebookError
from pi_nb.session.source import Problem, SessionFile, session_file_items, warn_problems

__all__ = ["ChunkRows", "chunk_files", "corpus_chunks", "corpus_files"]

Rows = dict[str, list[tuple[Any, ...]]]
ChunkRows = tuple[Rows, list[Problem], int]
"""One chunk read: ``({kind: rows}, problems, files in the chunk)``."""


def corpus_files(source: Any) -> list[SessionFile]:
    """The session files of a directory (recursive ``*.jsonl``, sorted as the frames read them),
    a file, or a list of those."""
    if isinstance(source, (str, os.PathLike)) or (
        isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping))
    ):
        return session_file_items(source)
    raise NotebookError(
        f"a corpus is a directory, a session file or a list of them, got {type(source).__name__}"
    )


def chunk_files(
    files: Sequence[SessionFile], workers: int, chunk_size: int | None
) -> list[list[SessionFile]]:
    """``files`` in chunks of ``chunk_size`` (default: split in ``8 * workers`` chunks, at most
    64 files each)."""
    if chunk_size is not None and chunk_size < 1:
        raise NotebookError(f"chunk_size must be 1 or more, got {chunk_size}")
    size = chunk_size or min(64, max(1, math.ceil(len(files) / (8 * workers))))
    return [list(files[i : i + size]) for i in range(0, len(files), size)]


def _worker(
    paths: Sequence[SessionFile],
    kinds: Sequence[str],
    strict: bool | None,
    columns: Mapping[str, Any] | None,
) -> tuple[Rows, list[Problem]]:
    """Worker: the rows of a few files (every file read once) and the problems met. Warnings
    are not raised here (a worker's would be lost): the caller warns."""
    _cols, rows, problems = session_rows(
        list(paths), kinds, columns=columns, strict=True if strict else False
    )
    return rows, problems


def corpus_chunks(
    files: Sequence[SessionFile],
    kinds: Sequence[str],
    *,
    workers: int,
    chunk_size: int | None = None,
    in_flight: int | None = None,
    strict: bool | None = None,
    columns: Mapping[str, Any] | None = None,
) -> Iterator[ChunkRows]:
    """The rows of ``files`` read by ``workers`` processes, chunk by chunk in file order; at most
    ``in_flight`` chunks (default ``2 * workers``) are being read at once. ``strict`` as in
    :func:`pi_nb.session.source.load_session_item` (``None`` warns here, per file)."""
    chunks = chunk_files(files, workers, chunk_size)
    limit = max(1, in_flight or 2 * workers)
    pending: deque[tuple[Future[tuple[Rows, list[Problem]]], int]] = deque()

    def take(future: Future[tuple[Rows, list[Problem]]], n: int) -> ChunkRows:
        rows, found = future.result()
        if strict is None:
            by_file: dict[str, list[Problem]] = {}
            for p in found:
                by_file.setdefault(p[0], []).append(p)
            for path, file_problems in by_file.items():
                warn_problems(path, file_problems)
        return rows, found, n

    with ProcessPoolExecutor(max_workers=workers) as pool:
        for chunk in chunks:
            pending.append((pool.submit(_worker, chunk, list(kinds), strict, columns), len(chunk)))
            if len(pending) >= limit:
                yield take(*pending.popleft())
        while pending:
            yield take(*pending.popleft())
