"""``_repr_mimebundle_(include, exclude)`` as IPython asks for it: the one filter every view applies
to the bundle it returns.

IPython's display formatter passes ``include`` / ``exclude`` (collections of MIME types) when a
caller wants only some representations (``display(obj, include=["text/plain"])``, a front end
that cannot show a widget). As rich's ``JupyterMixin`` does, the bundle keeps only the ``include``
types when ``include`` is given and not empty, then drops the ``exclude`` types; ``None`` (the
usual call) keeps everything.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, TypeVar, cast

__all__ = ["filter_bundle"]

_B = TypeVar("_B", bound=Mapping[str, Any])


def filter_bundle(
    bundle: _B, include: Collection[str] | None = None, exclude: Collection[str] | None = None
) -> _B:
    """``bundle`` with only the MIME types ``include`` names (when given) and none that ``exclude``
    names; the same object when neither removes anything."""
    keys = [k for k in bundle if (not include or k in include) and not (exclude and k in exclude)]
    if len(keys) == len(bundle):
        return bundle
    return cast(_B, {k: bundle[k] for k in keys})  # the same TypedDict, some optional keys left out
