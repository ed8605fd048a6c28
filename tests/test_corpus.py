"""Corpora: the frames of a directory of sessions in parallel (bounded memory) and on Dask.

* A generated corpus of 2,000 sessions: the in-memory frames (pandas), :func:`load_corpus`
  (two worker processes) and :func:`corpus_dask` on Dask's ``distributed`` LocalCluster give the
  same frames, row for row (``assert_frame_equal`` after sorting by the stable ids; Dask's in the
  fixed schema of :data:`SCHEMAS`, to which the in-memory frame is converted).
* Every frame kind on the committed sample sessions (the real Pi's and pi_nb's), in one process
  and in several, equals the in-memory frames exactly (no conversion at all).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from pi_nb.errors import NotebookError, SessionFileCorruptError
from pi_nb.notebook import frames
from pi_nb.notebook.corpus import FRAME_KINDS, SCHEMAS, canonical, corpus_dask, corpus_files, load_corpus

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from corpus import write_corpus  # noqa: E402

SAMPLES = [
    str(ROOT / "notebooks" / "data" / "real-pi"),
    str(ROOT / "tests" / "fixtures" / "e2e"),
    str(ROOT / "tests" / "fixtures" / "sessions" / "--tmp-demo--"),
]
SORT = ["session_id", "entry_id"]


def in_memory(kind: str, source: Any) -> Any:
    return getattr(frames, f"{kind}_df")(source)


def sort(df: Any) -> Any:
    return df.sort_values(SORT, kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "sessions"
    files = write_corpus(root, 2000)
    assert len(files) == 2000
    return root


def test_two_thousand_sessions_pandas_parallel_and_dask_agree(corpus: Path) -> None:
    from dask.distributed import Client, LocalCluster

    kinds = ["messages", "usage"]
    want = {k: in_memory(k, str(corpus)) for k in kinds}
    assert want["messages"]["session_id"].nunique() == 2000
    assert len(want["usage"]) > 2000 * 4
    got = load_corpus(corpus, kinds, workers=2, in_flight=4)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster,
        Client(cluster),
    ):
        on_dask = {k: corpus_dask(corpus, k, files_per_partition=250) for k in kinds}
        assert on_dask["messages"].npartitions == 8
        computed = {k: on_dask[k].compute() for k in kinds}
    for kind in kinds:
        assert_frame_equal(sort(got[kind]), sort(want[kind]), check_exact=True)
        assert_frame_equal(got[kind], want[kind], check_exact=True)  # even in the same order
        assert_frame_equal(sort(computed[kind]), sort(canonical(kind, want[kind])), check_exact=True)
        assert dict(computed[kind].dtypes.astype(str)) == {
            c: str(pd.Series(dtype=d).dtype) for c, d in SCHEMAS[kind].items()
        }


@pytest.mark.parametrize("workers", [1, 2])
def test_every_frame_of_the_samples_equals_the_in_memory_frames(workers: int) -> None:
    got = load_corpus(SAMPLES, workers=workers, chunk_size=1, in_flight=1)
    assert set(got) == set(FRAME_KINDS)
    for kind in FRAME_KINDS:
        assert_frame_equal(got[kind], in_memory(kind, SAMPLES), check_exact=True)


def test_every_frame_on_dask_with_the_local_scheduler() -> None:
    for kind in FRAME_KINDS:
        ddf = corpus_dask(SAMPLES, kind, files_per_partition=2)
        got = ddf.compute(scheduler="sync").reset_index(drop=True)
        assert_frame_equal(got, canonical(kind, in_memory(kind, SAMPLES)), check_exact=True)


def test_small_and_bad_corpora(tmp_path: Path) -> None:
    assert corpus_files(tmp_path) == []
    empty = load_corpus(tmp_path, ["messages"], workers=2)
    assert_frame_equal(empty["messages"], in_memory("messages", str(tmp_path)))
    assert len(corpus_dask(tmp_path, "usage").compute()) == 0
    with pytest.raises(NotebookError, match="unknown frame kind"):
        load_corpus(tmp_path, ["nope"])
    with pytest.raises(NotebookError, match="unknown frame kind"):
        corpus_dask(tmp_path, "nope")
    with pytest.raises(NotebookError, match="files_per_partition"):
        corpus_dask(tmp_path, "usage", files_per_partition=0)
    with pytest.raises(NotebookError, match="a corpus is"):
        corpus_files(3)
    broken = str(ROOT / "tests" / "fixtures" / "sessions" / "broken")
    for workers in (1, 2):
        with pytest.raises(SessionFileCorruptError):
            load_corpus(broken, ["entries"], workers=workers, strict=True)
        with pytest.warns(frames.SessionLoadWarning, match="line 4"):
            lenient = load_corpus(broken, ["entries"], workers=workers)
        got, errors = load_corpus(broken, ["entries"], workers=workers, strict=False)
        assert_frame_equal(lenient["entries"], got["entries"])
        want, want_errors = frames.entries_df(broken, strict=False)
        assert_frame_equal(got["entries"], want)
        assert_frame_equal(errors, want_errors)


def test_several_kinds_on_dask_share_one_read_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import dask

    from pi_nb.notebook import corpus

    calls: list[int] = []
    real = corpus._partition

    def counting(paths: Any, kinds: Any, strict: Any, *rest: Any) -> Any:
        calls.append(len(paths))
        return real(paths, kinds, strict, *rest)

    monkeypatch.setattr(corpus, "_partition", counting)
    lazy = corpus_dask(SAMPLES, list(FRAME_KINDS), files_per_partition=2)
    assert set(lazy) == set(FRAME_KINDS)
    computed = dask.compute(*lazy.values(), scheduler="sync")
    files = corpus_files(SAMPLES)
    assert sum(calls) == len(files)  # every file read once, for all five frames
    for kind, df in zip(lazy, computed, strict=True):
        assert_frame_equal(df.reset_index(drop=True), in_memory(kind, SAMPLES), check_exact=True)


def test_load_corpus_progress_bar_counts_the_files(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    made: list[Any] = []

    class Bar:
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs, self.n, self.closed = kwargs, 0, False
            made.append(self)

        def update(self, n: int) -> None:
            self.n += n

        def close(self) -> None:
            self.closed = True

    module = types.ModuleType("tqdm.auto")
    module.tqdm = Bar  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    files = corpus_files(SAMPLES)
    for workers in (1, 2):
        load_corpus(SAMPLES, ["usage"], workers=workers, chunk_size=2)
        bar = made[-1]
        assert bar.kwargs["total"] == len(files) and bar.n == len(files) and bar.closed
        assert bar.kwargs["delay"] == 1.0  # shown only past a second
    load_corpus(SAMPLES, ["usage"], workers=2, progress=False)
    assert len(made) == 2
