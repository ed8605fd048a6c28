"""``_repr_mimebundle_(include=None, exclude=None)``: every object that defines it honours both, as
IPython's formatter asks (rich's ``JupyterMixin`` is the model: the returned bundle's keys are
filtered)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from pi_nb.notebook._base import MIME_WIDGET
from pi_nb.notebook._mime import filter_bundle
from pi_nb.notebook.context_view import ContextView
from pi_nb.notebook.following import follow
from pi_nb.notebook.tree import session_tree
from pi_nb.notebook.turn import TurnResult, TurnView
from pi_nb.providers import Context

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "pi_session.jsonl"

# files whose _repr_mimebundle_ does not filter yet, and why (the list only shrinks)
NOT_YET: dict[str, str] = {}


def test_filter_bundle_keeps_included_and_drops_excluded_types() -> None:
    bundle = {"text/plain": "p", "text/html": "<b>h</b>", "application/json": {}}
    assert filter_bundle(bundle) is bundle
    assert filter_bundle(bundle, include=set(), exclude=()) is bundle  # empty: no filter, as in rich
    assert filter_bundle(bundle, include={"text/plain"}) == {"text/plain": "p"}
    assert filter_bundle(bundle, exclude={"text/html"}) == {"text/plain": "p", "application/json": {}}
    assert filter_bundle(bundle, include={"text/plain", "text/html"}, exclude=["text/html"]) == {
        "text/plain": "p"
    }
    assert filter_bundle(bundle, include={"image/png"}) == {}
    assert list(bundle) == ["text/plain", "text/html", "application/json"]  # never changed in place


def _definitions() -> list[tuple[str, str, ast.FunctionDef]]:
    found = []
    for path in sorted((ROOT / "pi_nb").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "_repr_mimebundle_":
                    found.append((str(path.relative_to(ROOT)), cls.name, fn))
    return found


def _forwards_include_and_exclude(fn: ast.FunctionDef) -> bool:
    """The body passes both parameters on (to filter_bundle, or to a super() call that does)."""
    params = [a.arg for a in fn.args.args[1:]]
    if params[:2] != ["include", "exclude"]:
        return False
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    for call in calls:
        names = [a.id for a in call.args if isinstance(a, ast.Name)]
        func = call.func
        is_filter = isinstance(func, ast.Name) and func.id == "filter_bundle"
        if is_filter and "include" in names and "exclude" in names:
            return True
    return False


def test_every_repr_mimebundle_in_the_package_filters_its_bundle() -> None:
    definitions = _definitions()
    assert len(definitions) >= 5
    bad = [
        f"{path}: {cls}._repr_mimebundle_"
        for path, cls, fn in definitions
        if path not in NOT_YET and not _forwards_include_and_exclude(fn)
    ]
    assert bad == []
    # an entry for a file that now filters everywhere must leave NOT_YET
    for path in NOT_YET:
        fns = [fn for p, _, fn in definitions if p == path]
        assert fns and not all(_forwards_include_and_exclude(fn) for fn in fns), path


def _objects() -> list[tuple[str, Any]]:
    context = Context("You are helpful.", [{"role": "user", "content": "hello", "timestamp": 1}], [])
    turn = TurnResult(
        session_id="0123456789",
        session_file=None,
        model="offline/model",
        messages=[],
        entry_ids=[],
        usage={"input": 1, "output": 2},
    )
    return [
        ("TurnView", TurnView(prompt="hi")),
        ("TurnResult", turn),
        ("ContextView", ContextView(context)),
        ("SessionFollower", follow(FIXTURE, start=False, live=False)),
    ]


@pytest.mark.parametrize(("name", "obj"), _objects(), ids=lambda v: v if isinstance(v, str) else "")
def test_include_and_exclude_are_honoured(name: str, obj: Any) -> None:
    def data(got: Any) -> dict[str, Any]:
        return dict(got[0] if isinstance(got, tuple) else got)

    full = data(obj._repr_mimebundle_())
    assert {"text/plain", "text/html"} <= set(full), name
    assert set(data(obj._repr_mimebundle_(include={"text/plain"}))) == {"text/plain"}
    assert set(data(obj._repr_mimebundle_(exclude={"text/html"}))) == set(full) - {"text/html"}
    assert data(obj._repr_mimebundle_(include={"text/html"}, exclude={"text/html"})) == {}


def test_the_static_views_honour_include() -> None:
    view = session_tree(str(FIXTURE))
    assert set(view._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
    assert set(view._repr_mimebundle_(exclude={"text/html"})) == {"text/plain"}
    # a widget that is excluded is never built
    view.live = True
    assert MIME_WIDGET not in view._repr_mimebundle_(exclude={MIME_WIDGET})
    assert view._widget is None
    assert MIME_WIDGET in view._repr_mimebundle_()
