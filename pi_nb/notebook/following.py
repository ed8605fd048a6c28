"""Follow a session file that another process writes: the tree, the budget and a turn log, live.

``follow(path)`` (and ``%pi follow PATH``) returns a :class:`SessionFollower` that displays
itself. A background thread polls the file (:class:`pi_nb.session.tail.SessionTail`: only the new
bytes are read, a torn last line waits for its newline); each poll extends the tree's index with
the new entries, recounts only the new messages of the budget, and appends them to the turn log.
It stops on :meth:`SessionFollower.stop`; :meth:`SessionFollower.wait` (or ``follow(path,
block=True)``) blocks the cell until then and stops cleanly on a kernel interrupt.

The writer can be the real Pi CLI in a terminal, another kernel, or a script; nothing here writes
to the file or takes its lock.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from pi_nb.errors import NotebookError
from pi_nb.notebook._base import (
    MIME_WIDGET,
    SANS,
    MimeBundle,
    StaticView,
    _ipywidgets,
    escape,
    kernel_has_comms,
)
from pi_nb.notebook._mime import filter_bundle
from pi_nb.session.tail import SessionTail

__all__ = ["SessionFollower", "follow"]


class SessionFollower(StaticView):
    """The live views of a session file another process appends to (see the module docstring).

    Attributes:
        tail: the :class:`~pi_nb.session.tail.SessionTail` reading the file.
        tree: a read-only :class:`~pi_nb.notebook.tree.SessionTreeView` of it.
        budget: a :class:`~pi_nb.notebook.budget_bar.BudgetView` once the context window is
            known (given, or the window of the model the session names), else ``None``.
        log: the newest turn-log lines (one per entry: the tree's display text).
        polls: how many polls ran; ``entries_seen``: entries read so far.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        interval: float = 0.5,
        model_context_window: int | None = None,
        log_lines: int = 200,
        live: bool | None = None,
    ) -> None:
        from pi_nb.notebook.tree import SessionTreeView

        if interval <= 0:
            raise NotebookError(f"interval must be positive, got {interval}")
        if model_context_window is not None and model_context_window <= 0:
            raise NotebookError(f"model_context_window must be positive, got {model_context_window}")
        self.path = os.fspath(path)
        self.interval = interval
        self.model_context_window = model_context_window
        self.live = live
        self.tail = SessionTail(self.path)
        self.log: deque[str] = deque(maxlen=log_lines)
        self.polls = 0
        self.last_error: BaseException | None = None
        self._budget_note = ""
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._widget: Any = None
        self.tail.poll()
        self.tree = SessionTreeView(self.tail, live=False)
        self.budget: Any = None
        self._log_entries(self._last_of(self.tail.get_entries()))
        self._ensure_budget()

    # -- polling ------------------------------------------------------------------------------

    @property
    def entries_seen(self) -> int:
        return len(self.tail.get_entries())

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def poll_once(self) -> int:
        """Read what was appended and update every view; returns the number of new entries."""
        with self._lock:
            self.polls += 1
            resets = self.tail.resets
            new = self.tail.poll()
            if self.tail.resets != resets:
                self.log.clear()
                new = self.tail.get_entries()
            if new or self.tail.resets != resets:
                self.tree.refresh()
                self._log_entries(self._last_of(new))
                self._ensure_budget()
                if self.budget is not None:
                    self.budget.refresh()
            self._draw()
            return len(new)

    def _ensure_budget(self) -> None:
        if self.budget is not None or not self.tail.get_entries():
            return
        from pi_nb.notebook.budget_bar import BudgetView, _session_window

        window = self.model_context_window
        if window is None:
            try:
                window = _session_window(self.tail)
            except NotebookError as exc:
                self._budget_note = str(exc)
                return
        self._budget_note = ""
        self.budget = BudgetView.from_session(self.tail, model_context_window=window, live=False)

    def _last_of(self, entries: Sequence[Any]) -> Sequence[Any]:
        """The entries the turn log can still show (it keeps its last ``maxlen`` lines): the
        others are not read (the tail parses an entry only when asked)."""
        keep = self.log.maxlen
        if keep is None or len(entries) <= keep:
            return entries
        return entries[len(entries) - keep :]

    def _log_entries(self, entries: Sequence[Any]) -> None:
        model = self.tree.model
        for entry in entries:
            title, text, _kind, detail = model.display(entry)
            line = f"{entry.get('id')} {title} {text}".rstrip()
            if detail:
                line += f" ({detail})"
            self.log.append(line[:300])

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
                self.last_error = None
            except Exception as exc:  # shown in the header; the follower keeps going
                self.last_error = exc
            self._stop.wait(self.interval)

    def start(self) -> SessionFollower:
        """Poll in a background thread every ``interval`` seconds (idempotent)."""
        if not self.running:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=f"pi_nb-follow {self.path}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop polling and wait for the thread to end (idempotent)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None
        self._draw()

    def wait(self, timeout: float | None = None) -> None:
        """Block until :meth:`stop` (from another thread) or ``timeout``; a kernel interrupt
        (``KeyboardInterrupt``) stops the follower and returns normally."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while self.running:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                self._stop.wait(0.1 if left is None else min(0.1, left))
        except KeyboardInterrupt:
            self.stop()

    def __enter__(self) -> SessionFollower:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- views --------------------------------------------------------------------------------

    def _status(self) -> str:
        state = "following" if self.running else "stopped"
        torn = " · waiting for the end of a line" if self.tail.torn else ""
        err = f" · error: {type(self.last_error).__name__}: {self.last_error}" if self.last_error else ""
        return (
            f"{state} {self.path} · {self.entries_seen} entries · leaf {self.tail.get_leaf_id()} · "
            f"{self.tail.bytes_read:,} bytes read{torn}{err}"
        )

    def to_text(self) -> str:
        parts = [f"Session follow: {self._status()}", self.tree.to_text()]
        parts.append(self.budget.to_text() if self.budget is not None else f"budget: {self._budget_note}")
        parts.append("Turn log:\n" + "\n".join(list(self.log)[-20:]))
        return "\n\n".join(parts)

    def _log_html(self) -> str:
        lines = "\n".join(escape(line) for line in list(self.log)[-40:])
        return (
            f'<div style="{SANS};font-weight:600;margin-top:6px">Turn log</div>'
            f'<pre style="max-height:240px;overflow:auto;white-space:pre-wrap;font-size:12px;'
            f'background:#f8fafc;border:1px solid #e2e8f0;padding:6px">{lines}</pre>'
        )

    def to_html(self) -> str:
        budget = (
            self.budget.to_html()
            if self.budget is not None
            else f'<div style="{SANS};color:#64748b">budget: {escape(self._budget_note)}</div>'
        )
        return (
            f'<div style="{SANS};margin-bottom:4px"><b>Session follow</b> · {escape(self._status())}</div>'
            f"{self.tree.to_html()}{budget}{self._log_html()}"
        )

    def _draw(self) -> None:
        if self._widget is None:
            return
        self.header.value = f"<b>Session follow</b> · {escape(self._status())}"
        self.log_html.value = self._log_html()
        if self.budget is not None and self.budget_box.children == ():
            self.budget_box.children = (self.budget.widget(),)
        self.stop_button.disabled = not self.running

    def widget(self) -> Any:
        if self._widget is None:
            w = _ipywidgets()
            self.header = w.HTML()
            self.stop_button = w.Button(description="stop following", layout=w.Layout(width="140px"))
            self.stop_button.on_click(lambda _b: self.stop())
            self.budget_box = w.Box()
            self.log_html = w.HTML()
            self._widget = w.VBox(
                [w.HBox([self.header, self.stop_button]), self.tree.widget(), self.budget_box, self.log_html]
            )
            self._draw()
        return self._widget

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> MimeBundle:
        bundle = super()._repr_mimebundle_(include, exclude)
        live = kernel_has_comms() if self.live is None else self.live
        if live:
            data = self.widget()._repr_mimebundle_()
            if isinstance(data, tuple):
                data = data[0]
            if data and MIME_WIDGET in data:
                bundle[MIME_WIDGET] = data[MIME_WIDGET]
        return filter_bundle(bundle, include, exclude)


def follow(
    path: str | os.PathLike[str],
    *,
    interval: float = 0.5,
    model_context_window: int | None = None,
    block: bool = False,
    start: bool = True,
    live: bool | None = None,
) -> SessionFollower:
    """Follow a session file (see the module docstring). Returns the :class:`SessionFollower`
    (display it, or let the cell show it); call ``.stop()`` to end. ``block=True`` waits in the
    cell until stopped or interrupted; ``start=False`` leaves polling to :meth:`poll_once`."""
    if os.path.isdir(os.fspath(path)):
        raise NotebookError(f"{os.fspath(path)} is a directory: follow one session file")
    follower = SessionFollower(path, interval=interval, model_context_window=model_context_window, live=live)
    if start:
        follower.start()
    if block:
        if kernel_has_comms():
            from IPython.display import display

            display(follower)
        follower.wait()
    return follower
