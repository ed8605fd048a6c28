"""``%%pi`` and ``%pi``: agent turns in cells, and the session at your fingertips.

``%load_ext pi_nb`` registers :class:`PiMagics`. Every magic is one call of the Python API:

* ``%%pi [options]`` — the cell body is the prompt; :meth:`AgentSession.prompt` runs on a worker
  thread with its own event loop while this cell renders its events (throttled to ~10 updates a
  second, always into the cell that started the turn, as HTML and as plain text). A kernel
  interrupt aborts the run through the session's abort signal and waits for it to wind down, so
  the session file stays valid. The cell returns a :class:`~pi_nb.notebook.turn.TurnResult`
  (``Out[n]``) and stores the session id, entry ids, model and usage in the output's metadata.
  A turn that ends in an error (the provider unreachable, a bad key, an overflow compaction could
  not fix) fails its cell with one line (:class:`~pi_nb.notebook.turn.TurnFailedError`), so "Run
  All", ``nbconvert --execute`` and papermill stop there; ``%%pi --no-raise`` or
  ``%config PiMagics.raise_on_error = False`` keep going.
* ``%pi <command>`` — see :data:`HELP` (``%pi help``), ``%pi?`` for the whole reference and
  ``%pi COMMAND --help`` for one command. Tab completes commands, options, entry ids and
  labels, model specs and session paths.

Every mistake in a magic's input (an unknown id, a file that is not a session, a value out of
range, an unknown option) is one ``UsageError`` line that says what is wrong and what to do; the
session is left as it was.

Configuration through traitlets: ``%config PiMagics.model = "openai/gpt-4o"``,
``PiMagics.context_window``, ``PiMagics.reserve_tokens``, ``PiMagics.keep_recent_tokens``,
``PiMagics.in_memory``, ``PiMagics.cwd``, ``PiMagics.thinking_level``, ``PiMagics.raise_on_error``.

The package: :mod:`~pi_nb.notebook.magics.commands` (every ``%pi`` command, its arguments beside
its handler, in the table the dispatcher reads), :mod:`~pi_nb.notebook.magics.cell` (``%%pi``),
:mod:`~pi_nb.notebook.magics.runner` (the agent's event-loop thread),
:mod:`~pi_nb.notebook.magics.completion` (Tab), :mod:`~pi_nb.notebook.magics.checks` and
:mod:`~pi_nb.notebook.magics.parsing`. The session itself is built by the engine
(:meth:`AgentSession.create <pi_nb.agent.session.AgentSession.create>`).

By default the session is a file in Pi's layout (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``,
``sessions/--<cwd>--/...``), so it can be reopened, analysed, or resumed in Pi itself.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from traitlets import Bool, Enum, Int, Unicode

from pi_nb.notebook.magics.cell import CELL
from pi_nb.notebook.magics.cell import _failure_line as _failure_line
from pi_nb.notebook.magics.cell import _run_turn as _run_turn
from pi_nb.notebook.magics.cell import _turn_failure as _turn_failure
from pi_nb.notebook.magics.checks import _FIX_CONFIG, _check_model, _check_room, _known_providers
from pi_nb.notebook.magics.commands import (
    _BY_NAME,
    _RENAMED,
    COMMANDS,
    HELP,
    REFERENCE,
    CompactionSettingsReport,
    SettingsReport,
    budget_input,
    help_markdown,
)
from pi_nb.notebook.magics.completion import _register_completer, completions
from pi_nb.notebook.magics.parsing import THINKING_LEVELS, Command, _guarded, _HelpShown
from pi_nb.notebook.magics.runner import _LoopThread
from pi_nb.notebook.magics.runner import _wind_down as _wind_down
from pi_nb.notebook.turn import TurnResult

if TYPE_CHECKING:
    from pi_nb.resources.trust import TrustPrompt

__all__ = [
    "CELL",
    "COMMANDS",
    "HELP",
    "REFERENCE",
    "THINKING_LEVELS",
    "Command",
    "CompactionSettingsReport",
    "PiMagics",
    "PiText",
    "SettingsReport",
    "completions",
    "current_session",
    "help_markdown",
    "load_ipython_extension",
    "unload_ipython_extension",
]


@magics_class
class PiMagics(Magics):
    """The ``%%pi`` / ``%pi`` magics (see the module docstring)."""

    model = Unicode(
        "",
        help="Model spec: 'offline' or 'provider/model-id'; empty: Pi's defaultProvider/defaultModel "
        "settings when that model's key is set, else 'offline'.",
    ).tag(config=True)
    context_window = Int(None, allow_none=True, help="Override the model's context window.").tag(config=True)
    max_tokens = Int(None, allow_none=True, help="Override the model's max output tokens.").tag(config=True)
    reserve_tokens = Int(None, allow_none=True, help="compaction.reserveTokens for new sessions.").tag(
        config=True
    )
    keep_recent_tokens = Int(None, allow_none=True, help="compaction.keepRecentTokens for new sessions.").tag(
        config=True
    )
    in_memory = Bool(False, help="Keep sessions in memory instead of Pi's session files.").tag(config=True)
    cwd = Unicode("", help="Working directory of the agent (default: the kernel's cwd).").tag(config=True)
    thinking_level = Enum(
        THINKING_LEVELS,
        None,
        allow_none=True,
        help="Thinking level for new sessions; None: as Pi chooses it (settings, else 'medium', "
        "clamped to the model).",
    ).tag(config=True)
    update_interval = Int(100, help="Minimum milliseconds between live updates of a turn.").tag(config=True)
    raise_on_error = Bool(
        True, help="A turn that ends in an error fails its cell (Run All and nbconvert stop there)."
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.session: Any = None
        self._loop: _LoopThread | None = None
        self._trust_override: bool | None = None
        self._trust_prompt: TrustPrompt | None = None
        self._budget_tracker: Any = None
        self._follower: Any = None
        self._follow_path: str | None = None
        if shell is not None:
            _register_completer(shell)

    # -- plumbing ------------------------------------------------------------------------------
    @property
    def loop(self) -> _LoopThread:
        if self._loop is None:
            self._loop = _LoopThread()
        return self._loop

    def _cwd(self) -> str:
        if self.cwd:
            path = os.path.abspath(os.path.expanduser(self.cwd))
            if not os.path.isdir(path):
                raise UsageError(
                    f"PiMagics.cwd: no such folder: {path} — create it, or %config PiMagics.cwd = '/an/existing/folder'"
                )
            return path
        try:
            return os.getcwd()
        except FileNotFoundError:  # the kernel's directory was deleted: say so, not "[Errno 2]"
            raise UsageError(
                "The kernel's working directory no longer exists: %cd to one that does, "
                "or set %config PiMagics.cwd = '/path/to/project'"
            ) from None

    def _make_model(
        self,
        spec: str | None = None,
        context_window: int | None = None,
        max_tokens: int | None = None,
        *,
        where: str = "%pi model",
    ) -> Any:
        """A model for ``spec`` (default: ``PiMagics.model``), checked: a known provider, positive
        limits, its SDK installed and its key set."""
        from pi_nb.providers import get_model

        spec = spec or self.model or self._settings_model_spec()
        window = context_window if context_window is not None else self.context_window
        limit = max_tokens if max_tokens is not None else self.max_tokens
        for name, value in (("context window", window), ("max tokens", limit)):
            if value is not None and value <= 0:
                raise UsageError(f"{where}: the {name} must be a positive number of tokens, got {value}")
        if "/" in spec and spec != "pi_nb/offline":
            provider = spec.split("/", 1)[0]
            known = _known_providers()
            if provider not in known:
                raise UsageError(
                    f"{where}: unknown provider {provider!r} in {spec!r} — use one of {', '.join(known)} "
                    "(%pi models lists their models), or 'offline'"
                )
        overrides: dict[str, int] = {}  # get_model's keyword overrides
        if window is not None:
            overrides["context_window"] = window
        if limit is not None:
            overrides["max_tokens"] = limit
        model = _guarded(where, lambda: get_model(spec, **overrides))
        _check_model(model, spec, where)
        return model

    def _settings_model_spec(self) -> str:
        """Pi's default model from its settings (the engine decides), else ``"offline"``."""
        from pi_nb.agent.factory import default_model_spec
        from pi_nb.resources.settings import SettingsManager

        cwd = self._cwd()
        return default_model_spec(SettingsManager.create(cwd, project_trusted=self._project_trusted(cwd)))

    def _defer_trust(self, prompt: TrustPrompt) -> None:
        """The engine's ``ask``: a cell cannot wait for an answer, so the question is kept for
        ``%pi trust`` and answered ``None`` (untrusted for now, nothing saved)."""
        self._trust_prompt = prompt

    def _project_trusted(self, cwd: str) -> bool:
        """Pi's resolution without blocking: an "ask" becomes a pending question that
        ``%pi trust`` shows and answers; until then the project is untrusted."""
        from pi_nb.agent.factory import resolve_trust

        self._trust_prompt = None
        return resolve_trust(cwd, trust_override=self._trust_override, ask=self._defer_trust)

    def _new_session(
        self,
        *,
        path: str | None = None,
        in_memory: bool | None = None,
        cwd: str | None = None,
        model: Any = None,
        where: str = "%pi new",
    ) -> Any:
        """A new (or opened) session, built by the engine; it replaces the current one only once
        it is complete."""
        from pi_nb.agent import AgentSession

        if cwd:
            cwd = os.path.abspath(os.path.expanduser(cwd))
            if not os.path.isdir(cwd):
                raise UsageError(
                    f"{where}: no such folder: {cwd} — create it first, or give an existing folder"
                )
        else:
            cwd = self._cwd()
        model = model or self._make_model(where=where)
        if path is not None and not os.path.lexists(path):
            raise UsageError(f"{where}: no such session file: {path} — check the path (Tab completes it)")
        for name in ("reserve_tokens", "keep_recent_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise UsageError(f"PiMagics.{name} must be 0 or more, got {value}")
        compaction: dict[str, int] = {}  # Pi's compaction settings (camelCase), the numeric ones
        if self.reserve_tokens is not None:
            compaction["reserveTokens"] = self.reserve_tokens
        if self.keep_recent_tokens is not None:
            compaction["keepRecentTokens"] = self.keep_recent_tokens

        def check(model: Any, settings: Any) -> None:
            # the fix goes through PiMagics: there is no session yet to run %pi settings on
            reserve = settings.get_compaction_settings().reserve_tokens
            _check_room(model.context_window, reserve, where, _FIX_CONFIG)

        self._trust_prompt = None
        self.session = _guarded(
            where,
            lambda: AgentSession.create(
                cwd=cwd,
                model=model,
                thinking_level=self.thinking_level if path is None else None,
                settings_overrides={"compaction": compaction} if compaction else {},
                project_trusted=self._trust_override,
                ask=self._defer_trust,
                session_file=path,
                in_memory=bool(in_memory if in_memory is not None else self.in_memory) and path is None,
                check=check,
            ),
        )
        return self.session

    def _ensure_session(self, where: str = "%pi") -> Any:
        return self.session if self.session is not None else self._new_session(where=where)

    def budget_input(self) -> Any:
        """The current session as a :class:`~pi_nb.notebook.budget.BudgetInput` (what the next request
        holds). Incremental: one :class:`~pi_nb.notebook.budget.BudgetTracker` per kernel extends the
        previous path when the leaf only moved forward, so a refresh costs the new entries only."""
        return budget_input(self)

    def close(self) -> None:
        """Stop what this object started: a followed file and the agent's loop thread."""
        if self._follower is not None:
            with contextlib.suppress(Exception):
                self._follower.stop()
            self._follower = self._follow_path = None
        if self._loop is not None:
            self._loop.loop.call_soon_threadsafe(self._loop.loop.stop)
            self._loop = None

    # -- %%pi ------------------------------------------------------------------------------------
    @cell_magic("pi")  # type: ignore[arg-type]  # IPython types the decorator's argument as Never
    def pi(self, line: str, cell: str) -> TurnResult | None:
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(f"%%pi: {error}") from error
        parser = CELL.parser()
        try:
            args = parser.parse_args(words)
        except _HelpShown:
            return None
        args.body = cell
        return _guarded("%%pi", lambda: CELL.run(self, args))  # type: ignore[no-any-return]

    # -- %pi ---------------------------------------------------------------------------------------
    @line_magic("pi")  # type: ignore[arg-type]
    def pi_line(self, line: str) -> Any:
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(f"%pi: {error} — close the quote") from error
        if not words or words in (["-h"], ["--help"]):
            print(HELP)
            return None
        command, rest = words[0], words[1:]
        if command in _RENAMED:  # an old name: works for one release, and says the new one
            print(f"(%pi {command} is now %pi {_RENAMED[command]})")
            command = _RENAMED[command]
        spec = _BY_NAME.get(command)
        if spec is None:
            close = [c for c in _BY_NAME if c.startswith(command[:2])]
            raise UsageError(
                f"%pi: unknown command {command!r}"
                + (f" (did you mean {' or '.join(close)}?)" if close else "")
                + " — %pi help lists the commands"
            )
        try:
            args = spec.parser().parse_args(rest)
        except _HelpShown:
            return None
        run = spec.run
        result = _guarded(f"%pi {command}", lambda: run(self, args))
        return PiText(result) if isinstance(result, str) else result


class PiText(str):
    """A command's answer: shows as plain text (not a quoted string) in a cell's output."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        return f'<pre style="white-space:pre-wrap;margin:0">{html.escape(str(self))}</pre>'


def current_session() -> Any:
    """The :class:`~pi_nb.agent.AgentSession` the ``%%pi`` magics of this kernel use (created on first use)."""
    from IPython import get_ipython

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("PiMagics") if shell is not None else None
    if magics is None:
        raise UsageError("pi_nb's magics are not loaded: run %load_ext pi_nb first")
    return magics._ensure_session()


# What a turn imports lazily (the tokenizer and its plugin registry, the Markdown renderer). They are
# imported when the extension loads, so a turn never imports: a kernel whose working directory was
# deleted cannot import new modules on some Pythons (CPython 3.13.0's path finder raises
# "SystemError: error return without exception set" for the '' entry of sys.path), and the turn would
# fail for a reason the user cannot see.
_TURN_MODULES = ("pkgutil", "tiktoken", "tiktoken_ext", "tiktoken.load", "markdown_it")


def _preload_turn_modules() -> None:
    for name in _TURN_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext pi_nb``."""
    _preload_turn_modules()
    ipython.register_magics(PiMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext pi_nb``: the magics are removed and what they started is stopped (the session
    files stay as they are)."""
    manager = ipython.magics_manager
    magics = manager.registry.pop("PiMagics", None)
    for kind in ("line", "cell"):
        manager.magics[kind].pop("pi", None)
    if magics is not None:
        magics.close()


def _set_reference(functions: Sequence[Callable[..., Any]]) -> None:
    for fn in functions:
        fn.__doc__ = REFERENCE


_set_reference([PiMagics.pi, PiMagics.pi_line])
