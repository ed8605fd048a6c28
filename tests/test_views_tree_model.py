"""The engine's tree model (pi_nb.session.tree_model), no notebook needed: the index extended by
appended entries gives exactly the rows of a model built from scratch, whatever the session does
(appends, branches, labels, compactions, folds, filters, selection)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pi_nb.errors import NotebookError
from pi_nb.session import SessionManager
from pi_nb.session.tree_model import FILTER_MODES, SessionTreeModel, TreeSource


def snapshot(model: SessionTreeModel) -> dict[str, Any]:
    return {
        "rows": model.rows(),
        "stats": model.stats(),
        "pages": model.page_count,
        "leaf_page": model.page_of(model.leaf_id),
        "page0": model.page_rows(0),
    }


def fresh_like(model: SessionTreeModel) -> SessionTreeModel:
    other = SessionTreeModel(model.session, filter_mode=model.filter_mode, page_size=model.page_size,
                             run_threshold=model.run_threshold, run_keep=model.run_keep)
    other.folded = set(model.folded)
    other.expanded_runs = set(model.expanded_runs)
    if model.selected_id is not None:
        other.selected_id = model.selected_id
    other._invalidate()
    return other


def grow(sm: SessionManager, rng: random.Random, steps: int) -> None:
    for i in range(steps):
        r = rng.random()
        entries = sm.get_entries()
        if r < 0.06 and len(entries) > 3:
            sm.branch(rng.choice(entries)["id"])
        elif r < 0.1 and entries:
            sm.append_label_change(rng.choice(entries)["id"], rng.choice(["a", "b", None]))
        elif r < 0.13 and entries:
            sm.append_compaction("summary", rng.choice(entries)["id"], 1234)
        elif r < 0.16:
            sm.append_model_change("anthropic", "claude-sonnet-4-5")
        else:
            role = rng.choice(["user", "assistant"])
            content: Any = f"m{i}" if role == "user" else [{"type": "text", "text": f"a{i}"}]
            sm.append_message({"role": role, "content": content, "timestamp": i + 1})


@pytest.mark.parametrize("seed", range(12))
def test_extended_index_matches_a_fresh_build(seed: int) -> None:
    rng = random.Random(seed)
    sm = SessionManager.in_memory("/tmp")
    grow(sm, rng, 5)
    model = SessionTreeModel(sm, page_size=rng.choice([3, 10, 100]), run_threshold=7, run_keep=2)
    for _round in range(25):
        grow(sm, rng, rng.randint(1, 6))
        model.refresh()
        assert snapshot(model) == snapshot(fresh_like(model))
        action = rng.random()
        if action < 0.1:
            model.set_filter(rng.choice(FILTER_MODES))
        elif action < 0.2 and model.entry_count:
            eid = rng.choice(sm.get_entries())["id"]
            if model.can_fold(eid):
                model.toggle_fold(eid)
        elif action < 0.3:
            model.select(rng.choice(sm.get_entries())["id"])
        model.refresh()
        assert snapshot(model) == snapshot(fresh_like(model))
    assert model.rebuilds == 1  # an append-only session is never rebuilt


def test_appends_at_the_leaf_extend_without_rebuilding() -> None:
    sm = SessionManager.in_memory("/tmp")
    for i in range(200):
        sm.append_message({"role": "user", "content": f"q{i}", "timestamp": i})
    model = SessionTreeModel(sm, run_threshold=40)
    before = model.version
    sm.append_message({"role": "user", "content": "new", "timestamp": 999})
    assert model.refresh() is True and model.refresh() is False
    assert model.rebuilds == 1 and model.version == before + 1
    assert model.leaf_id == sm.get_leaf_id() and model.selected_id == model.leaf_id  # the selection follows
    assert model.is_current()


def test_a_rewritten_session_is_rebuilt() -> None:
    class Source:
        def __init__(self, entries: list[dict[str, Any]]) -> None:
            self.entries = entries

        def get_entries(self) -> list[dict[str, Any]]:
            return list(self.entries)

        def get_leaf_id(self) -> str | None:
            return self.entries[-1]["id"] if self.entries else None

        def get_label(self, entry_id: str) -> str | None:
            return None

        def get_session_name(self) -> str | None:
            return None

    def e(i: int, parent: str | None) -> dict[str, Any]:
        return {"type": "message", "id": f"x{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": f"m{i}", "timestamp": i}}

    src = Source([e(0, None), e(1, "x0")])
    assert isinstance(src, TreeSource)
    model = SessionTreeModel(src)
    src.entries = [e(5, None)]  # replaced, shorter
    model.refresh()
    assert model.rebuilds == 2 and model.entry_count == 1 and model.leaf_id == "x5"
    src.entries = [e(6, None), e(7, "x6")]  # same length class, other objects
    model.refresh()
    assert model.rebuilds == 3 and model.leaf_id == "x7"


def test_fold_rules_and_full_text() -> None:
    sm = SessionManager.in_memory("/tmp")
    a = sm.append_message({"role": "user", "content": "hello\nworld " + "x" * 400, "timestamp": 1})
    b = sm.append_message({"role": "user", "content": "leaf", "timestamp": 2})
    model = SessionTreeModel(sm)
    assert model.can_fold(a) and not model.can_fold(b)
    with pytest.raises(NotebookError, match="no children"):
        model.fold(b)
    assert model.full_text(model.entry(a)).startswith("hello\nworld") and len(model.full_text(model.entry(a))) > 400
    assert len(model.display(model.entry(a))[1]) == 200  # Pi's row text stays Pi's
    row = next(r for r in model.rows() if r.entry_id == b)
    assert not row.can_fold
