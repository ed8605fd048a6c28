"""jsdiff's Myers search, one edit length at a time with numpy (the edit tool's large diffs).

:func:`pi_nb.tools.diff.diff_lines` walks jsdiff's search one diagonal at a time in Python, which is
O((N+M)·D) interpreted steps: a 2,000-line rewrite takes seconds. Every diagonal of one edit length
depends only on the previous edit length, so this module computes a whole edit length at once with
array operations, replaying jsdiff's order-dependent rules exactly:

* the diagonals of one step are visited from low to high, and the first one whose path reaches the
  end of the old text stops the step (jsdiff shrinks ``maxDiagonalToConsider`` there);
* a path that reaches the end of the new text raises ``minDiagonalToConsider`` for later steps;
* the path taken from diagonal ``d - 1`` is dropped once diagonal ``d`` has read it.

Change components form jsdiff's linked list; here they are records in flat arrays (kind, count,
previous record), collected when too many are unreachable. The result is the same list of
components as the scalar port, which the tests check on random and adversarial inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["myers_components"]

_SNAKE, _ADD, _REMOVE = 0, 1, 2


class _Records:
    """jsdiff's change objects as arrays: ``kind``, ``count`` and the previous record (-1: none)."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        self.kind = np.zeros(capacity, np.int8)
        self.count = np.zeros(capacity, np.int64)
        self.prev = np.full(capacity, -1, np.int64)
        self.size = 0

    def add(self, kind: Any, count: Any, prev: Any) -> Any:
        m = len(count)
        if self.size + m > len(self.kind):
            cap = max(2 * len(self.kind), self.size + m)
            for name in ("kind", "count", "prev"):
                old = getattr(self, name)
                new = np.full(cap, -1, old.dtype) if name == "prev" else np.zeros(cap, old.dtype)
                new[: self.size] = old[: self.size]
                setattr(self, name, new)
        ids = np.arange(self.size, self.size + m, dtype=np.int64)
        self.kind[ids] = kind
        self.count[ids] = count
        self.prev[ids] = prev
        self.size += m
        return ids

    def collect(self, roots: Any) -> Any:
        """Keep only the records reachable from ``roots``; returns the old-to-new id map."""
        live = np.zeros(self.size, bool)
        frontier = np.unique(roots[roots >= 0])
        while frontier.size:
            live[frontier] = True
            nxt = self.prev[frontier]
            nxt = nxt[nxt >= 0]
            frontier = np.unique(nxt[~live[nxt]])
        remap = np.full(self.size + 1, -1, np.int64)  # index -1 (no record) maps to -1
        keep = np.nonzero(live)[0]
        remap[keep] = np.arange(len(keep), dtype=np.int64)
        self.kind[: len(keep)] = self.kind[keep]
        self.count[: len(keep)] = self.count[keep]
        self.prev[: len(keep)] = remap[self.prev[keep]]
        self.size = len(keep)
        return remap

    def chain(self, last: int) -> list[tuple[int, bool, bool]]:
        out: list[tuple[int, bool, bool]] = []
        while last >= 0:
            kind = int(self.kind[last])
            out.append((int(self.count[last]), kind == _ADD, kind == _REMOVE))
            last = int(self.prev[last])
        out.reverse()
        return out


def myers_components(
    o: list[int],
    n: list[int],
    best_pos: list[int | None],
    best_comp: list[Any],
    min_diag: int,
    max_diag: int,
    first_edit_length: int,
) -> list[tuple[int, bool, bool]]:
    """The components ``(count, added, removed)`` of jsdiff's edit script for token ids ``o`` -> ``n``.

    Continues the scalar search of :func:`pi_nb.tools.diff.diff_lines` from its state before
    ``first_edit_length``: ``best_pos`` / ``best_comp`` indexed by diagonal + offset (a component is the
    tuple ``(count, added, removed, previous)``), and the diagonal bounds.
    """
    old_len, new_len = len(o), len(n)
    old_ids = np.asarray(o, dtype=np.int64)
    new_ids = np.asarray(n, dtype=np.int64)
    rec = _Records()
    size = len(best_pos)
    offset = (size - 1) // 2
    max_edit = offset - 1
    pos = np.zeros(size, np.int64)
    valid = np.zeros(size, bool)
    comp = np.full(size, -1, np.int64)
    ids: dict[int, int] = {}  # id() of a scalar component -> its record

    def record(c: Any) -> int:
        chain = []
        while c is not None and id(c) not in ids:
            chain.append(c)
            c = c[3]
        prev = -1 if c is None else ids[id(c)]
        for item in reversed(chain):
            kind = _ADD if item[1] else _REMOVE if item[2] else _SNAKE
            prev = int(rec.add(kind, np.array([item[0]]), prev)[0])
            ids[id(item)] = prev
        return prev

    for i, p in enumerate(best_pos):
        if p is not None:
            pos[i] = p
            valid[i] = True
            comp[i] = record(best_comp[i])
    collect_at = 1 << 20

    for edit_length in range(first_edit_length, max_edit + 1):
        start = max(min_diag, -edit_length)
        stop = min(max_diag, edit_length)
        if start > stop:
            continue
        diag = np.arange(start, stop + 1, 2, dtype=np.int64)
        idx = diag + offset
        remove_pos = pos[idx - 1]
        remove_ok = valid[idx - 1]
        add_pos = pos[idx + 1]
        add_ok = valid[idx + 1]
        add_new = add_pos - diag
        can_add = add_ok & (add_new >= 0) & (add_new < new_len)
        can_remove = remove_ok & (remove_pos + 1 < old_len)
        writes = can_add | can_remove
        take_add = ~can_remove | (can_add & (remove_pos < add_pos))
        op = np.where(take_add, add_pos, remove_pos + 1)
        np_ = op - diag
        common_run = np.zeros(len(diag), np.int64)

        # follow each diagonal's snake (equal tokens) as far as it goes
        live = np.nonzero(writes & (np_ + 1 < new_len) & (op + 1 < old_len))[0]
        while live.size > 8:
            same = old_ids[op[live] + 1] == new_ids[np_[live] + 1]
            live = live[same]
            op[live] += 1
            np_[live] += 1
            common_run[live] += 1
            live = live[(np_[live] + 1 < new_len) & (op[live] + 1 < old_len)]
        for j in live.tolist():
            a, b, c = int(op[j]), int(np_[j]), int(common_run[j])
            while b + 1 < new_len and a + 1 < old_len and o[a + 1] == n[b + 1]:
                a += 1
                b += 1
                c += 1
            op[j], np_[j], common_run[j] = a, b, c

        # jsdiff stops this step at the first diagonal whose path reaches the end of the old text
        at_old_end = np.nonzero(writes & (op + 1 >= old_len))[0]
        cut = int(at_old_end[0]) if at_old_end.size else len(diag) - 1
        done = at_old_end.size and np_[cut] + 1 >= new_len
        processed = slice(0, cut + 1)

        # the change objects of every path written in this step
        w = np.nonzero(writes[processed])[0]
        kind = np.where(take_add[w], _ADD, _REMOVE).astype(np.int8)
        last = np.where(take_add[w], comp[idx[w] + 1], comp[idx[w] - 1])
        last_kind = np.where(last >= 0, rec.kind[np.maximum(last, 0)], -1)
        extend = last_kind == kind
        count = np.where(extend, rec.count[np.maximum(last, 0)] + 1, 1)
        prev = np.where(extend, rec.prev[np.maximum(last, 0)], last)
        edit_ids = rec.add(kind, count, prev)
        heads = edit_ids.copy()
        snaked = np.nonzero(common_run[w] > 0)[0]
        if snaked.size:
            heads[snaked] = rec.add(_SNAKE, common_run[w][snaked], edit_ids[snaked])
        if done:
            return rec.chain(int(heads[np.searchsorted(w, cut)]))

        pidx = idx[processed]
        valid[(pidx - 1)[remove_ok[processed]]] = False
        valid[pidx[~writes[processed]]] = False
        widx = idx[w]
        pos[widx] = op[w]
        valid[widx] = True
        comp[widx] = heads

        new_end = w[np_[w] + 1 >= new_len]
        if new_end.size:
            min_diag = max(min_diag, int(diag[new_end[-1]]) + 1)
        if at_old_end.size:
            max_diag = min(max_diag, int(diag[cut]) - 1)

        if rec.size > collect_at:
            remap = rec.collect(comp[valid])
            comp = np.where(comp >= 0, remap[comp], -1)
            collect_at = max(1 << 20, 4 * rec.size)
    raise AssertionError("unreachable: jsdiff always finds an edit script")  # pragma: no cover
