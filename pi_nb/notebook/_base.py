"""What every notebook view shares: the HTML palette, escaping, the static/live view base classes,
and the names of the session-source loader the views use (:mod:`pi_nb.session.source`).

Nothing here imports ipywidgets, pandas or IPython at import time.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NotRequired, TypedDict

import pi_nb.harness  # noqa: F401 - registers the other agents' readers with the session sources
from pi_nb._async import run_sync as _engine_run_sync
from pi_nb.errors import NotebookError
from pi_nb.notebook._mime import filter_bundle
from pi_nb.session.source import is_agent_session as is_agent_session
from pi_nb.session.source import open_session_source, split_session_source

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from pi_nb.session.types import FileEntry, SessionMessageEntry

MIME_WIDGET: Final = "application/vnd.jupyter.widget-view+json"


class WidgetViewData(TypedDict):
    """A widget's entry in a mime bundle: ``{version_major, version_minor, model_id}``."""

    version_major: int
    version_minor: int
    model_id: str


MimeBundle = TypedDict(
    "MimeBundle",
    {
        "text/plain": str,
        "text/html": str,
        "application/vnd.jupyter.widget-view+json": NotRequired[WidgetViewData],
    },
)
"""What a view's ``_repr_mimebundle_`` returns: its text and HTML, and the live widget inside a
kernel (:data:`MIME_WIDGET`)."""

FONT = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;line-height:1.45"
SANS = "font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:13px"

COLORS: dict[str, str] = {
    "system prompt": "#475569",
    "tool schemas": "#94a3b8",
    "context files": "#0891b2",
    "skills list": "#0d9488",
    "append": "#6366f1",
    "user": "#2563eb",
    "assistant": "#16a34a",
    "tool results": "#9333ea",
    "summaries": "#d97706",
    "free": "#f1f5f9",
    "reserve": "#fee2e2",
    "warning": "#d97706",
    "error": "#dc2626",
    "ok": "#15803d",
    "unknown": "#64748b",
    "usage": "#0f172a",
    "estimate": "#be123c",
    "keep": "#0369a1",
}
_EXTRA_PART_COLORS = ("#0e7490", "#7c3aed", "#db2777", "#65a30d", "#ea580c")


class TraitChange(TypedDict):
    """What a traitlets ``observe`` callback gets: ``{name, old, new, owner, type}`` (the old and
    new values are whatever the observed trait holds)."""

    name: str
    old: Any
    new: Any
    owner: Any
    type: str


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one (for optional object fields, read
    tolerantly: whatever JSON a session line holds there)."""
    return value if isinstance(value, Mapping) else {}


def is_message_entry(entry: FileEntry) -> TypeIs[SessionMessageEntry]:
    """``entry.type == "message"``, read with ``.get`` as the views always did (an entry of a
    corrupt session line may lack its ``type``)."""
    return entry.get("type") == "message"


def escape(text: object) -> str:
    """HTML-escape any value (quotes too: the text may end up in an attribute)."""
    return html.escape(str(text), quote=True)


_CODE_STYLE = "background:#f8fafc;padding:6px;overflow:auto;max-height:400px"
_IMAGE_LINK_STYLE = "border:1px dashed #94a3b8;border-radius:3px;padding:0 4px;color:#475569"


def _render_image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image of the text, never loaded: a link the reader may click (``[image: alt]``, the
    address in the title). An image embedded in the text itself (a ``data:`` address, which
    Markdown allows only for GIF, PNG, JPEG and WebP) loads nothing from anywhere and is shown."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if src.lower().startswith("data:image/"):
        return f'<img src="{escape(src)}" alt="{escape(alt)}" style="max-width:100%">'
    label = f"[image: {alt}]" if alt else "[image]"
    return (
        f'<a href="{escape(src)}" title="{escape(src)}" rel="noopener noreferrer nofollow" '
        f'target="_blank" style="{_IMAGE_LINK_STYLE}">{escape(label)}</a>'
    )


_MARKDOWN: list[Any] = []


def markdown_html(text: str) -> str:
    """Markdown a model (or a session file) wrote, as HTML that loads nothing by itself: the one
    Markdown renderer of the views (the turn view, the tree's detail pane; the static export shows
    their HTML). CommonMark + tables, as Pi's TUI renders it. Raw HTML in the text is escaped,
    never passed through (no markup, no scripts); a remote image is shown as a link, so opening
    the notebook or its export requests no address the model chose; links that are not web or
    mail addresses (``javascript:``, ``file:``, ``data:`` other than the images above) are not
    made links."""
    if not _MARKDOWN:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark", {"html": False}).enable("table")
        md.add_render_rule("image", _render_image)
        _MARKDOWN.append(md)
    rendered = str(_MARKDOWN[0].render(text))
    return rendered.replace("<pre>", f'<pre style="{_CODE_STYLE}">')


class StaticView:
    """Base of every view object: ``text/plain`` + ``text/html`` through ``_repr_mimebundle_``.

    Subclasses implement :meth:`to_html` and :meth:`to_text`. Widget views extend the bundle
    with the live widget when a kernel with comms is running (:mod:`pi_nb.notebook.widgets`).
    """

    def to_html(self) -> str:
        raise NotImplementedError

    def to_text(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self.to_html()

    def _bundle(self) -> MimeBundle:
        """Every representation of the view (before ``include``/``exclude``)."""
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> MimeBundle:
        return filter_bundle(self._bundle(), include, exclude)

    def __str__(self) -> str:
        return self.to_text()


load_session = open_session_source
"""ONE session as a :class:`SessionManager` for a view, never writing to disk
(:func:`pi_nb.session.source.open_session_source`)."""

session_sources = split_session_source
"""What a user passed split into single sessions (:func:`pi_nb.session.source.split_session_source`)."""


run_sync = _engine_run_sync
"""Run a coroutine to completion from a widget callback (:func:`pi_nb._async.run_sync`)."""


def kernel_has_comms() -> bool:
    """True inside a running IPython kernel (one that can talk to a widget manager).

    Looked up through ``sys.modules`` so that rendering a view never imports IPython.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _ipywidgets() -> Any:
    try:
        import ipywidgets
    except ImportError as exc:  # pragma: no cover - a dependency of pi_nb
        raise NotebookError("the live widgets need ipywidgets: pip install ipywidgets") from exc
    return ipywidgets


class _WidgetView(StaticView):
    """A static view that can also be a live widget."""

    live: bool | None = None
    """``None``: add the widget to the mime bundle only inside a kernel; ``True``/``False``: force."""

    _widget: Any = None

    def widget(self) -> Any:
        """The live ipywidgets control (built once)."""
        if self._widget is None:
            self._widget = self._build_widget()
        return self._widget

    def _build_widget(self) -> Any:
        raise NotImplementedError

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> MimeBundle:
        bundle = self._bundle()
        live = kernel_has_comms() if self.live is None else self.live
        wanted = filter_bundle({MIME_WIDGET: None}, include, exclude)  # build the widget only if asked
        if live and wanted:
            w = self.widget()
            data = w._repr_mimebundle_()
            if isinstance(data, tuple):  # (data, metadata) in some ipywidgets versions
                data = data[0]
            if data and MIME_WIDGET in data:
                bundle[MIME_WIDGET] = data[MIME_WIDGET]
        return filter_bundle(bundle, include, exclude)


class ViewGroup(StaticView):
    """Several views shown one after the other (a directory or a list of sessions)."""

    def __init__(self, views: Sequence[StaticView], *, title: str = "") -> None:
        self.views = list(views)
        self.title = title
        self.live: bool | None = None

    def __len__(self) -> int:
        return len(self.views)

    def __getitem__(self, i: int) -> StaticView:
        return self.views[i]

    def to_html(self) -> str:
        head = f'<div style="{SANS};font-weight:600">{escape(self.title)}</div>' if self.title else ""
        return head + "".join(v.to_html() for v in self.views)

    def to_text(self) -> str:
        return "\n\n".join(([self.title] if self.title else []) + [v.to_text() for v in self.views])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> MimeBundle:
        bundle = self._bundle()
        wanted = filter_bundle({MIME_WIDGET: None}, include, exclude)
        if wanted and kernel_has_comms() and all(isinstance(v, _WidgetView) for v in self.views):
            box = _ipywidgets().VBox([v.widget() for v in self.views])  # type: ignore[attr-defined]
            data = box._repr_mimebundle_()
            if isinstance(data, tuple):
                data = data[0]
            if data and MIME_WIDGET in data:
                bundle[MIME_WIDGET] = data[MIME_WIDGET]
        return filter_bundle(bundle, include, exclude)


Callback = Callable[..., Any]
