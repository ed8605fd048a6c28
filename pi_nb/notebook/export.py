"""Static HTML of a pi_nb notebook: the views as their pictures, no JavaScript, no CDN.

pi_nb's views put a live widget *and* a static ``text/html`` picture into each output. A plain
``jupyter nbconvert --to html`` prefers the widget, which draws only once a widget manager has
been fetched from a CDN; offline (CI, an archive, a mail attachment) the page shows nothing there.
Here the widget part is dropped from outputs that carry a static picture, the notebook's widget
state is removed, and the page is rendered without require.js, MathJax, Mermaid or the widget
manager.

Three ways to use it:

* ``pi_nb.notebook.export_html("run.ipynb")`` (or a notebook node) returns the page;
* ``jupyter nbconvert --to pi_nb_html run.ipynb`` once pi_nb is installed (the exporter is
  registered under nbconvert's ``nbconvert.exporters`` entry point), or
  ``--to pi_nb.notebook.export.StaticHTMLExporter`` without the entry point;
* :class:`StaticViewsPreprocessor` in any nbconvert pipeline
  (``--HTMLExporter.preprocessors=pi_nb.notebook.export.StaticViewsPreprocessor``).
"""

from __future__ import annotations

import copy
import os
from typing import Any

from pi_nb._fs import read_regular

__all__ = [
    "STATIC_TEMPLATE",
    "StaticHTMLExporter",
    "StaticViewsPreprocessor",
    "export_html",
    "static_widget_outputs",
]

MIME_WIDGET = "application/vnd.jupyter.widget-view+json"
STATIC_FALLBACKS = ("text/html", "image/png", "image/svg+xml", "text/plain")

STATIC_TEMPLATE = """\
{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
"""The lab template without the blocks that load scripts from CDNs."""


def _strip_widgets(nb: Any) -> Any:
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and MIME_WIDGET in data and any(m in data for m in STATIC_FALLBACKS):
                del data[MIME_WIDGET]
    return nb


def static_widget_outputs(nb: Any) -> Any:
    """A copy of ``nb`` whose outputs show static views instead of live widgets.

    An output that carries a widget view *and* a static representation keeps only the static
    one; the notebook-level widget state goes. Outputs that are nothing but a widget are kept
    (they have no static picture to show).
    """
    return _strip_widgets(copy.deepcopy(nb))


try:  # nbconvert is optional: the classes exist only where it is installed
    from nbconvert.exporters import HTMLExporter as _HTMLExporter
    from nbconvert.preprocessors import Preprocessor as _Preprocessor
except ImportError:  # pragma: no cover - nbconvert is part of any Jupyter install
    _HTMLExporter = object  # type: ignore[assignment,misc]
    _Preprocessor = object  # type: ignore[assignment,misc]


class StaticViewsPreprocessor(_Preprocessor):
    """nbconvert preprocessor: outputs with a static picture lose their widget part."""

    def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        return _strip_widgets(nb), resources


class StaticHTMLExporter(_HTMLExporter):
    """nbconvert's HTML exporter (lab template) showing pi_nb's static views, with no CDN script."""

    export_from_notebook = "pi_nb static HTML"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from jinja2 import DictLoader

        kwargs.setdefault("extra_loaders", [DictLoader({"pi_nb_static.html.j2": STATIC_TEMPLATE})])
        super().__init__(*args, **kwargs)
        self.template_name = "lab"
        self.template_file = "pi_nb_static.html.j2"
        self.register_preprocessor(StaticViewsPreprocessor, enabled=True)


def export_html(nb: Any, *, title: str | None = None) -> str:
    """The static HTML page of an executed notebook: a notebook node, or the path of an
    ``.ipynb`` file (see the module docstring). The notebook itself is not changed."""
    import nbformat

    if isinstance(nb, (str, os.PathLike)):
        # the one open of a named file: a FIFO or a device is refused, not read for ever
        nb = nbformat.reads(read_regular(os.fspath(nb), None).decode("utf-8"), as_version=4)
    else:
        nb = copy.deepcopy(nb)
    if title:
        nb.metadata["title"] = title
    body, _ = StaticHTMLExporter().from_notebook_node(nb)
    return str(body)
