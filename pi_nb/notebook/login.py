"""Signing in from a notebook: ``%pi login PROVIDER`` / ``%pi logout PROVIDER`` (the magics call
:func:`login_command` / :func:`logout_command`) and the credential-source column of
``%pi models`` (:func:`credential_source_column`).

The sign-in runs :func:`pi_nb.auth.login` on a background thread while the cell's output shows
what the user has to do, updated as the flow goes: a device code as a link and the code to enter
(GitHub Copilot, OpenAI Codex's headless login, xAI), or the sign-in link of a browser flow
(Anthropic, OpenAI Codex) with a box to paste the redirect URL when the browser runs on another
machine. The credential goes to the agent dir's ``auth.json``, shared with Pi; no token is ever
shown. Without ipywidgets the steps are printed.
"""

from __future__ import annotations

import html
import queue
import shlex
import threading
from collections.abc import Iterable
from typing import Any

from pi_nb.notebook._base import _WidgetView

__all__ = ["LoginView", "credential_source_column", "login_command", "logout_command"]

_USAGE = (
    "usage: %pi login PROVIDER [--method browser|device_code] [--enterprise DOMAIN] [--wait]\n"
    "       %pi logout PROVIDER"
)


class LoginView(_WidgetView):
    """One sign-in as shown in a cell: its steps (:attr:`events`), its state (``"running"``,
    ``"done"``, ``"failed"``, ``"cancelled"``) and a live HTML view. :meth:`wait` blocks until it
    ends; :meth:`cancel` stops it; :meth:`paste` hands over a redirect URL or code."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.events: list[dict[str, Any]] = []
        self.state = "running"
        self.message = ""
        self.source: str | None = None
        self._pasted: queue.Queue[str] = queue.Queue()
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._html: Any = None
        self._box: Any = None
        self._needs_paste = False
        # the cell's display handle, updated with each step while the cell waits (so the static
        # HTML of a saved notebook shows the code and the outcome, not just "waiting")
        self.handle: Any = None
        self._version = 0

    # what the flow calls

    def notify(self, event: dict[str, Any]) -> None:
        self.events.append(dict(event))
        if event.get("type") == "auth_url":
            self._needs_paste = True
        self.refresh()

    def prompt(self, prompt: dict[str, Any]) -> str:
        if prompt["type"] == "manual_code":
            stop = prompt.get("signal")
            while not self._cancel.is_set() and not (stop is not None and stop.is_set()):
                try:
                    return self._pasted.get(timeout=0.1)
                except queue.Empty:
                    continue
            from pi_nb.auth import LoginCancelled

            raise LoginCancelled("no code pasted")
        if prompt["type"] == "select":
            return str(prompt["options"][0]["id"])
        return ""

    # what the user calls

    def paste(self, text: str) -> None:
        """Hand the flow a pasted redirect URL or ``code#state`` (a browser on another machine)."""
        self._pasted.put(text)

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> str:
        """Block until the sign-in ends; its state. The cell's display is updated with each step
        meanwhile (from this thread: a front end takes a cell's output only from its own)."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        shown = -1
        while True:
            if self.handle is not None and shown != self._version:
                shown = self._version
                try:
                    self.handle.update(self)
                except Exception:  # a closed front end: the widget still shows the steps
                    self.handle = None
            if self._done.is_set() and shown == self._version:
                break
            if self._done.wait(0.1) and self.handle is None:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
        return self.state

    # the view

    def to_html(self) -> str:
        """The steps so far as HTML (links, the code, the state; never a token)."""
        esc = html.escape
        parts = [f"<div class='pi-login'><b>Sign in to {esc(self.provider)}</b>"]
        for event in self.events:
            kind = event.get("type")
            if kind == "device_code":
                uri = str(event.get("verificationUri", ""))
                parts.append(
                    f"<div>Open <a href='{esc(uri, quote=True)}' target='_blank' rel='noopener'>{esc(uri)}</a>"
                    f" and enter the code <code style='font-size:1.3em;padding:2px 6px;border:1px solid #888'>"
                    f"{esc(str(event.get('userCode', '')))}</code></div>"
                )
            elif kind == "auth_url":
                url = str(event.get("url", ""))
                parts.append(
                    f"<div><a href='{esc(url, quote=True)}' target='_blank' rel='noopener'>Open the sign-in page</a>"
                    f"<br><small>{esc(str(event.get('instructions', '')))}</small></div>"
                )
            elif kind in ("progress", "info"):
                parts.append(f"<div><i>{esc(str(event.get('message', '')))}</i></div>")
        if self.state == "running":
            parts.append("<div>waiting…</div>")
        elif self.state == "done":
            parts.append(f"<div>✔ signed in: {esc(self.source or 'auth.json')}</div>")
        else:
            parts.append(f"<div style='color:#b00'>✘ {esc(self.message)}</div>")
        parts.append("</div>")
        return "".join(parts)

    def to_text(self) -> str:
        lines = [f"Sign in to {self.provider}"]
        for event in self.events:
            if event.get("type") == "device_code":
                lines.append(
                    f"Open {event.get('verificationUri')} and enter the code {event.get('userCode')}"
                )
            elif event.get("type") == "auth_url":
                lines.append(f"Open {event.get('url')}")
            elif event.get("message"):
                lines.append(str(event["message"]))
        lines.append(
            {"running": "waiting…", "done": f"signed in: {self.source}"}.get(self.state, self.message)
        )
        return "\n".join(lines)

    def widget(self) -> Any:
        """The live ipywidgets view (HTML, plus a paste box for browser flows); the shared
        :class:`~pi_nb.notebook._base._WidgetView` mime bundle adds it inside a kernel."""
        if self._box is None:
            import ipywidgets

            self._html = ipywidgets.HTML(self.to_html())
            text = ipywidgets.Text(
                placeholder="or paste the redirect URL / code here", layout={"width": "60%"}
            )
            button = ipywidgets.Button(description="Submit")
            cancel = ipywidgets.Button(description="Cancel")

            def submit(_: Any = None) -> None:
                if text.value.strip():
                    self.paste(text.value.strip())
                    text.value = ""

            button.on_click(submit)
            cancel.on_click(lambda _b: self.cancel())
            self._paste_row = ipywidgets.HBox([text, button, cancel])
            self._paste_row.layout.display = "flex" if self._needs_paste else "none"
            self._box = ipywidgets.VBox([self._html, self._paste_row])
        return self._box

    def refresh(self) -> None:
        self._version += 1
        if self._html is not None:
            self._html.value = self.to_html()
            self._paste_row.layout.display = (
                "flex" if self._needs_paste and self.state == "running" else "none"
            )

    def __repr__(self) -> str:
        return self.to_text()

    # running

    def run(self, **kwargs: Any) -> None:
        from pi_nb.auth import LoginCancelled, credential_source, login

        try:
            login(self.provider, notify=self.notify, prompt=self.prompt, cancel=self._cancel, **kwargs)
            self.state = "done"
            self.source = credential_source(self.provider, ())
        except LoginCancelled as exc:
            self.state, self.message = "cancelled", str(exc) or "cancelled"
        except Exception as exc:  # shown in the cell, never raised from the thread
            from pi_nb.redaction import redact

            self.state, self.message = "failed", redact(str(exc))
        finally:
            self._done.set()
            self.refresh()


def _display(view: LoginView, wait: bool) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - outside IPython
        return
    if get_ipython() is None:
        return
    handle = display(view, display_id=True)
    if wait:
        view.handle = handle


def login_command(line: str) -> LoginView:
    """``%pi login PROVIDER [--method browser|device_code] [--enterprise DOMAIN] [--wait]``: sign
    in (in the background) and show the steps live in the cell; the view it returns can
    :meth:`~LoginView.wait`, :meth:`~LoginView.cancel` and :meth:`~LoginView.paste`."""
    from pi_nb.auth import login_providers

    args = shlex.split(line)
    if not args or args[0] in ("-h", "--help"):
        providers = ", ".join(login_providers())
        raise ValueError(f"{_USAGE}\nproviders: {providers}")
    provider, rest = args[0], args[1:]
    kwargs: dict[str, Any] = {}
    wait = False
    while rest:
        flag = rest.pop(0)
        if flag in ("--method", "--enterprise") and rest:
            kwargs["method" if flag == "--method" else "enterprise_domain"] = rest.pop(0)
        elif flag == "--wait":
            wait = True
        else:
            raise ValueError(f"unknown option {flag!r}\n{_USAGE}")
    if provider not in login_providers():
        raise ValueError(f"pi_nb signs in to {', '.join(login_providers())}, not {provider!r}")
    view = LoginView(provider)
    _display(view, wait)
    thread = threading.Thread(target=view.run, kwargs=kwargs, name=f"pi_nb login {provider}", daemon=True)
    thread.start()
    if wait:
        view.wait()
        view.handle = None
    return view


def logout_command(line: str) -> str:
    """``%pi logout PROVIDER``: remove its credential from ``auth.json``; what was done."""
    from pi_nb.auth import logout

    args = shlex.split(line)
    if len(args) != 1:
        raise ValueError(_USAGE)
    return (
        f"signed out of {args[0]} (removed from auth.json)"
        if logout(args[0])
        else f"no credential for {args[0]} in auth.json"
    )


def credential_source_column(providers: Iterable[str]) -> list[str]:
    """Where each provider's credential comes from (``%pi models``' column): ``"auth.json (OAuth,
    expires …)"``, ``"auth.json (api key)"``, ``"environment: NAME"`` or ``""``; never a value."""
    from pi_nb.auth import credential_source

    cache: dict[str, str] = {}
    out = []
    for provider in providers:
        if provider not in cache:
            cache[provider] = credential_source(provider) or ""
        out.append(cache[provider])
    return out
