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

By default the session is a file in Pi's layout (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``,
``sessions/--<cwd>--/...``), so it can be reopened, analysed, or resumed in Pi itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import importlib
import os
import queue
import shlex
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypedDict
from urllib.parse import urlparse

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display
from traitlets import Bool, Enum, Int, Unicode

from pi_nb.errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    MissingDependencyError,
    PiNbError,
    SessionFileCorruptError,
    SessionLockedError,
)
from pi_nb.notebook._base import is_message_entry
from pi_nb.notebook.turn import TurnFailedError, TurnResult, TurnView
from pi_nb.redaction import redact, redact_cut, redact_url
from pi_nb.tools.base import tool_schema

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pi_nb.messages import AgentMessage
    from pi_nb.notebook._events import ViewEvent
    from pi_nb.session.types import SessionEntry

__all__ = [
    "HELP",
    "REFERENCE",
    "THINKING_LEVELS",
    "PiMagics",
    "PiText",
    "current_session",
    "help_markdown",
    "load_ipython_extension",
]

#: Pi 0.85.0's thinking levels (``VALID_THINKING_LEVELS`` of pi-coding-agent's ``cli/args.js``).
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

_COMPACTION_KEYS = ("reserveTokens", "keepRecentTokens", "enabled")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


# -- argument parsing: one parser per command, the single source of the help texts ----------------


class _HelpShown(Exception):
    """``--help`` printed a command's help: the command itself does not run."""


class _Parser(argparse.ArgumentParser):
    """argparse that answers with a one-line ``UsageError`` instead of exiting the kernel."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(
            prog=prog,
            description=description,
            allow_abbrev=False,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status:
            raise UsageError(f"{self.prog}: {message or 'invalid arguments'}")
        raise _HelpShown

    def print_help(self, file: Any = None) -> None:
        print(self.format_help())


def _whole(text: str) -> int:
    try:
        return int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _positive(text: str) -> int:
    n = _whole(text)
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of tokens, got {n}")
    return n


def _count(text: str) -> int:
    n = _whole(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


@dataclass(frozen=True)
class _Command:
    name: str
    usage: str
    meaning: str
    build: Callable[[argparse.ArgumentParser], None]

    def parser(self) -> _Parser:
        p = _Parser(self.name if self.name.startswith("%%") else f"%pi {self.name}", self.meaning)
        self.build(p)
        return p


def _build_cell(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        metavar="SPEC",
        help="offline (default) | provider/model-id, e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5",
    )
    p.add_argument("--session", metavar="PATH", help="use (open) this session file")
    p.add_argument("--thinking", metavar="LEVEL", choices=THINKING_LEVELS, help=" | ".join(THINKING_LEVELS))
    p.add_argument(
        "--context-window",
        metavar="N",
        type=_positive,
        help="override the model's context window (makes compaction visible)",
    )
    p.add_argument("--reserve", metavar="N", type=_count, help="compaction.reserveTokens for this session")
    p.add_argument(
        "--keep-recent", metavar="N", type=_count, help="compaction.keepRecentTokens for this session"
    )
    p.add_argument("--no-tools", action="store_true", help="send no tools")
    p.add_argument("--tools", metavar="a,b,c", help="choose the active tools")
    p.add_argument(
        "--cells",
        metavar="N",
        type=_count,
        default=0,
        help="include the previous N cells (source and output) as context",
    )
    p.add_argument("--vars", metavar="a,b", help="include these variables' values as context")
    p.add_argument(
        "--interpolate", action="store_true", help="expand {name} in the prompt from the notebook's variables"
    )
    p.add_argument(
        "--no-render",
        action="store_true",
        help="do not stream the turn into the cell (the result is still returned)",
    )
    p.add_argument(
        "--no-raise",
        action="store_true",
        help="a turn that ends in an error does not fail the cell (status 'error', the cell goes on)",
    )


def _build_new(p: argparse.ArgumentParser) -> None:
    p.add_argument("--in-memory", action="store_true", help="keep the session in memory (no file)")
    p.add_argument("--cwd", metavar="DIR", help="the agent's working directory (an existing folder)")


def _build_open(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="a session file (.jsonl) of Pi or pi_nb")
    p.add_argument(
        "--recent",
        nargs="?",
        const="",
        metavar="CWD",
        help="the most recent session of CWD (default: the kernel's working directory)",
    )


def _build_list(p: argparse.ArgumentParser) -> None:
    p.add_argument("cwd", nargs="?", metavar="CWD", help="a working directory (default: the kernel's)")


def _build_model(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "spec", nargs="?", metavar="SPEC", help="offline | provider/model-id (none: show the model)"
    )
    p.add_argument("--context-window", metavar="N", type=_positive, help="override the context window")
    p.add_argument("--max-tokens", metavar="N", type=_positive, help="override the max output tokens")


def _build_models(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "filter", nargs="?", metavar="PROVIDER|TEXT", help="one provider, or text in the model's id or name"
    )


def _build_settings(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "pairs",
        nargs="*",
        metavar="key=value",
        help="reserveTokens=N (0 or more, below the window), keepRecentTokens=N, enabled=true|false",
    )


def _build_nothing(p: argparse.ArgumentParser) -> None:
    return None


def _build_help(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "command",
        nargs="?",
        metavar="COMMAND",
        choices=[c.name for c in COMMANDS],
        help="one command in full (none: every command, one line each)",
    )


def _build_compact(p: argparse.ArgumentParser) -> None:
    p.add_argument("instructions", nargs="*", metavar="INSTRUCTIONS", help="what the summary should focus on")


def _build_navigate(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="ID", help="an entry id or a label (Tab completes both)")
    p.add_argument("--summarize", action="store_true", help="summarise the branch you leave")
    p.add_argument("--instructions", metavar="TEXT", help="custom instructions for the summary")
    p.add_argument("--replace", action="store_true", help="the instructions replace the default prompt")
    p.add_argument("--label", metavar="L", help="label the summary entry")


def _build_label(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="ID", help="an entry id or its current label")
    p.add_argument("text", nargs="*", metavar="TEXT", help="the new label (none: clear it)")


def _build_trust(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "answer",
        nargs="?",
        choices=("yes", "no", "parent", "once", "once-no"),
        metavar="yes|no|parent|once|once-no",
        help="answer the question (none: show it)",
    )


def _build_turns(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "count", nargs="?", metavar="N|all", help="how many recorded turns (default: the last one)"
    )


def _build_follow(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="a session file another process appends to")
    p.add_argument(
        "--recent", nargs="?", const="", metavar="CWD", help="follow the most recent session of CWD"
    )
    p.add_argument("--stop", action="store_true", help="stop following")


CELL = _Command(
    "%%pi", "[options]", "run the cell as a prompt (one agent turn, streamed into the cell)", _build_cell
)

COMMANDS: tuple[_Command, ...] = (
    _Command(
        "new",
        "[--in-memory] [--cwd DIR]",
        "start a new session (a file in Pi's layout under $PI_CODING_AGENT_DIR, or in memory)",
        _build_new,
    ),
    _Command(
        "open",
        "PATH | --recent [CWD]",
        "open a session file, pi_nb's or Pi's own (or the most recent one of a cwd)",
        _build_open,
    ),
    _Command("list", "[CWD]", "the sessions of a working directory, as a frame", _build_list),
    _Command(
        "model",
        "[SPEC] [--context-window N] [--max-tokens N]",
        "show or switch the model (its SDK and key are checked); shrink the window to watch compaction",
        _build_model,
    ),
    _Command(
        "models",
        "[PROVIDER|TEXT]",
        "the models pi_nb knows, as a frame, with whether each provider's key is set (never its value)",
        _build_models,
    ),
    _Command(
        "settings",
        "[key=value ...]",
        "show or set the compaction settings: reserveTokens, keepRecentTokens, enabled",
        _build_settings,
    ),
    _Command("tree", "", "the session tree (a widget: select an entry, navigate, summarise)", _build_nothing),
    _Command(
        "budget",
        "",
        "the token budget of the next request, by category, against the threshold",
        _build_nothing,
    ),
    _Command(
        "context",
        "",
        "the exact request the next call would send, with token counts (nothing is sent)",
        _build_nothing,
    ),
    _Command("compact", "[instructions]", "compact now (Pi's /compact)", _build_compact),
    _Command(
        "navigate",
        "ID [--summarize] [--instructions TEXT] [--replace] [--label L]",
        "move in the tree (Pi's /tree), with or without a branch summary; ID may be a label",
        _build_navigate,
    ),
    _Command("label", "ID [TEXT]", "set or clear a label", _build_label),
    _Command("entries", "", "the session's entries as a pandas frame", _build_nothing),
    _Command(
        "trust", "[yes|no|parent|once|once-no]", "show or answer the project-trust question", _build_trust
    ),
    _Command(
        "turns",
        "[N|all]",
        "show recorded turns again, without calling the model (default: the last one)",
        _build_turns,
    ),
    _Command(
        "follow",
        "PATH | --recent [CWD] | --stop",
        "follow a session file another process appends to: the tree, the budget and a turn log, live",
        _build_follow,
    ),
    _Command("status", "", "where the session is", _build_nothing),
    _Command("session", "", "the AgentSession object itself (for the Python API)", _build_nothing),
    _Command(
        "help",
        "[COMMAND]",
        "this list (%pi? the whole reference, %pi help COMMAND or %pi COMMAND --help one command)",
        _build_help,
    ),
)
_BY_NAME = {c.name: c for c in COMMANDS}
# "replay" names the what-if replay (pi_nb.replay: a recorded session under another policy); the
# command that shows recorded turns again is "turns"
_RENAMED = {"replay": "turns"}


def _option_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    rows = []
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        name = action.option_strings[-1]
        if action.nargs == 0:
            rows.append((name, action.help or ""))
        else:
            rows.append((f"{name} {action.metavar or action.dest.upper()}", action.help or ""))
    return rows


def _help_text() -> str:
    lines = [f"{'%%pi ' + CELL.usage:<26}{CELL.meaning}"]
    lines += [f"  {opt:<24}{meaning}" for opt, meaning in _option_rows(CELL.parser())]
    lines.append("")
    for c in COMMANDS:
        usage = ("%pi " + c.name + " " + c.usage).rstrip()
        lines.append(f"{usage:<40}{c.meaning}" if len(usage) < 40 else f"{usage}\n{'':<40}{c.meaning}")
    return "\n".join(lines) + "\n"


#: What ``%pi help`` prints: every command and every ``%%pi`` option, one line each.
HELP = _help_text()


def _reference_text() -> str:
    parts = [
        "pi_nb's magics: %%pi runs a cell as one agent turn; %pi COMMAND works on the session.",
        "",
        HELP,
        "Each command in full (also: %pi COMMAND --help):",
        "",
        CELL.parser().format_help(),
    ]
    for c in COMMANDS:
        parts.append(c.parser().format_help())
    parts.append(
        "Configuration (%config PiMagics.NAME = value): model, context_window, max_tokens, reserve_tokens,\n"
        "keep_recent_tokens, in_memory, cwd, thinking_level, update_interval, raise_on_error.\n"
        "Tab completes commands, options, entry ids and labels, model specs and session paths."
    )
    return "\n".join(parts)


#: The whole reference, shown by ``%pi?`` and ``%%pi?``.
REFERENCE = _reference_text()


def help_markdown() -> str:
    """The README's magic table (``command | meaning``), row for row what ``%pi help`` prints."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    opts = ", ".join(f"`{o}`" for o, _ in _option_rows(CELL.parser()))
    rows = [
        "| command | meaning |",
        "|---|---|",
        f"| `%%pi {CELL.usage}` | {cell(CELL.meaning)}. Options: {cell(opts)} |",
    ]
    rows += [
        f"| `{cell(('%pi ' + c.name + ' ' + c.usage).rstrip())}` | {cell(c.meaning)} |" for c in COMMANDS
    ]
    rows += ["", "| `%%pi` option | meaning |", "|---|---|"]
    rows += [f"| `{cell(o)}` | {cell(m)} |" for o, m in _option_rows(CELL.parser())]
    return "\n".join(rows) + "\n"


# -- one line for every mistake ------------------------------------------------------------------


def _hint(error: BaseException) -> str:
    if isinstance(error, EntryNotFoundError):
        return "see the ids with %pi entries or %pi tree (Tab completes ids and labels)"
    if isinstance(error, InvalidSessionFileError):
        return "give a .jsonl session file written by Pi or pi_nb (%pi list shows the sessions of a folder)"
    if isinstance(error, SessionFileCorruptError):
        return "repair or remove those lines, or open a copy of the file"
    if isinstance(error, SessionLockedError):
        return "another process is writing it: wait for it to finish, or open a copy"
    if isinstance(error, MissingDependencyError):
        return "then restart the kernel"
    if isinstance(error, IsADirectoryError):
        return "give a file, not a folder (%pi list DIR shows the sessions of a working directory)"
    if isinstance(error, NotADirectoryError):
        return "a part of the path is a file, not a folder: check the path"
    if isinstance(error, FileNotFoundError):
        return "check the path (Tab completes it)"
    if isinstance(error, PermissionError):
        return "check the permissions of the file and its folder"
    return ""


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror + (f": {error.filename}" if error.filename else "")
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


def _one_line(what: str, error: BaseException, limit: int = 600) -> str:
    text = _describe(error)
    if len(text) > limit:
        text = text[:limit] + "…"
    hint = _hint(error)
    return f"{what}: {text}" + (f" — {hint}" if hint and hint not in text else "")


def _guarded(what: str, run: Callable[[], Any]) -> Any:
    """Run a magic's work; a mistake in its input becomes one ``UsageError`` line."""
    try:
        return run()
    except (UsageError, TurnFailedError, _HelpShown, KeyboardInterrupt):
        raise
    except (PiNbError, ValueError, OSError) as error:
        raise UsageError(_one_line(what, error)) from error


# -- the event loop of the agent -------------------------------------------------------------------


class _LoopThread:
    """One event loop on a daemon thread: where every agent turn of this kernel runs."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="pi_nb-agent", daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(
        self,
        coro: Coroutine[Any, Any, Any],
        timeout: float | None = None,
        abort: Callable[[], None] | None = None,
    ) -> Any:
        """Run ``coro`` on the loop and wait for it. On a kernel interrupt the work is stopped too
        (``abort()``, else the task is cancelled) and given a moment to wind down before the
        ``KeyboardInterrupt`` goes on: otherwise it would finish behind the user's back (a
        compaction appending its entry seconds after the cell was interrupted)."""
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except KeyboardInterrupt:
            _wind_down(future, abort)
            raise


def _wind_down(future: Future[Any], abort: Callable[[], None] | None, timeout: float = 30.0) -> None:
    """After a kernel interrupt: stop the work running on the loop and wait (bounded) until it has.

    ``abort()`` is repeated until the work ends, because a run passes through phases that each
    start with a fresh abort signal (a compaction before the turn ends by being aborted, then the
    turn itself would start); without ``abort`` the task is cancelled. Its own outcome (aborted,
    cancelled) is not reported: the interrupt is.
    """
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        if abort is None:
            future.cancel()
        else:
            abort()
        try:
            future.result(0.05)
        except Exception:
            pass
    if not future.done():
        future.cancel()


# -- models: the catalog, the SDK and the key ----------------------------------------------------

# the package each API's provider imports, and the extra that installs it (Anthropic and Mistral
# send over plain httpx, with no vendor SDK)
_SDK_OF_API = {
    "openai-completions": ("openai", "openai"),
    "openai-responses": ("openai", "openai"),
    "anthropic-messages": ("httpx", "anthropic"),
    "mistral-conversations": ("httpx", "mistral"),
}
_BUILTIN_PROVIDERS = ("openai", "anthropic", "ollama")


def _field(spec: Any, name: str, default: Any = None) -> Any:
    if isinstance(spec, dict):
        return spec.get(name, default)
    return getattr(spec, name, default)


def _model_specs() -> tuple[list[Any], str]:
    """(specs, where they come from): pi-ai 0.85.0's catalog, shipped with pi_nb."""
    from pi_nb.providers.catalog import list_models

    return list(list_models()), "catalog"


def _known_providers() -> list[str]:
    specs, _ = _model_specs()
    names = {str(_field(s, "provider")) for s in specs} | set(_BUILTIN_PROVIDERS)
    return sorted(names)


def _needs_key(model: Any) -> bool:
    env = getattr(model, "api_key_env", "")
    if not env or getattr(model, "provider", "") == "ollama":
        return False
    base_env = getattr(model, "base_url_env", "")
    if base_env and os.environ.get(base_env):  # a server of the user's own choosing
        return False
    base = getattr(model, "base_url", None)
    return not (base and urlparse(str(base)).hostname in ("localhost", "127.0.0.1", "::1"))


def _check_model(model: Any, spec: str, where: str) -> None:
    """Refuse, at once, a model whose SDK is missing or whose key is not set (the first turn would fail)."""
    sdk = _SDK_OF_API.get(str(getattr(model, "api", "")))
    if sdk is not None:
        try:
            importlib.import_module(sdk[0])
        except ImportError:
            raise UsageError(
                f"{where}: {spec} needs the {sdk[0]} package, which is not installed — "
                f"pip install 'pi_nb[{sdk[1]}]', then restart the kernel"
            ) from None
    if _needs_key(model) and not os.environ.get(model.api_key_env, "").strip():
        env = model.api_key_env
        raise UsageError(
            f"{where}: {spec} needs an API key in ${env}, which is not set — "
            f"set it (%env {env}=... or os.environ['{env}'] = ...), then choose the model again"
        )


def _check_room(window: int, reserve: int, where: str, fix: str) -> None:
    """Refuse a context window that is not above the compaction reserve (the threshold would be
    zero or negative: compaction never runs and every turn overflows)."""
    if reserve >= window:
        r, k = max(1, window // 4), max(1, window // 4)
        raise UsageError(
            f"{where}: a context window of {window:,} tokens is not above the compaction reserve "
            f"({reserve:,} tokens), so compaction could never make room — lower the reserve with it, "
            + fix.format(reserve=r, keep=k)
        )


_FIX_SESSION = "e.g. %pi settings reserveTokens={reserve} keepRecentTokens={keep}"
_FIX_CELL = "e.g. --reserve {reserve} --keep-recent {keep} on the same line"
_FIX_CONFIG = (
    "e.g. %config PiMagics.reserve_tokens = {reserve} and %config PiMagics.keep_recent_tokens = {keep}"
)


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
        self._trust_prompt: Any = None
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
        from pi_nb.providers.registry import default_model_spec_from_settings
        from pi_nb.resources.settings import SettingsManager

        cwd = self._cwd()
        settings = SettingsManager.create(cwd, project_trusted=self._project_trusted(cwd))
        return default_model_spec_from_settings(settings) or "offline"

    def _settings(self, cwd: str, trusted: bool) -> Any:
        from pi_nb.resources.settings import SettingsManager

        for name in ("reserve_tokens", "keep_recent_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise UsageError(f"PiMagics.{name} must be 0 or more, got {value}")
        settings = SettingsManager.create(cwd, project_trusted=trusted)
        overrides: dict[str, int] = {}  # Pi's compaction settings (camelCase), the numeric ones
        if self.reserve_tokens is not None:
            overrides["reserveTokens"] = self.reserve_tokens
        if self.keep_recent_tokens is not None:
            overrides["keepRecentTokens"] = self.keep_recent_tokens
        if overrides:
            settings.apply_overrides({"compaction": overrides})
        return settings

    def _project_trusted(self, cwd: str) -> bool:
        """Pi's resolution without blocking: an "ask" becomes a pending question that
        ``%pi trust`` shows and answers; until then the project is untrusted."""
        from pi_nb.resources.settings import SettingsManager
        from pi_nb.resources.trust import ProjectTrustStore, TrustPrompt, decide_project_trust
        from pi_nb.session.paths import get_agent_dir

        agent_dir = get_agent_dir()
        decision = decide_project_trust(
            cwd,
            ProjectTrustStore(agent_dir),
            trust_override=self._trust_override,
            default_project_trust=SettingsManager.create(
                cwd, agent_dir, project_trusted=False
            ).get_default_project_trust(),
        )
        if isinstance(decision, TrustPrompt):
            self._trust_prompt = decision
            return False
        self._trust_prompt = None
        return decision

    def _new_session(
        self,
        *,
        path: str | None = None,
        in_memory: bool | None = None,
        cwd: str | None = None,
        model: Any = None,
        where: str = "%pi new",
    ) -> Any:
        """A new (or opened) session; it replaces the current one only once it is complete."""
        from pi_nb.agent import AgentSession
        from pi_nb.session import SessionManager

        if cwd:
            cwd = os.path.abspath(os.path.expanduser(cwd))
            if not os.path.isdir(cwd):
                raise UsageError(
                    f"{where}: no such folder: {cwd} — create it first, or give an existing folder"
                )
        else:
            cwd = self._cwd()
        model = model or self._make_model(where=where)
        if path is not None:
            if not os.path.lexists(path):
                raise UsageError(f"{where}: no such session file: {path} — check the path (Tab completes it)")
            manager = _guarded(where, lambda: SessionManager.open(path))
            cwd = manager.get_cwd()
        elif in_memory if in_memory is not None else self.in_memory:
            manager = SessionManager.in_memory(cwd)
        else:
            manager = _guarded(where, lambda: SessionManager.create(cwd))
        trusted = self._project_trusted(cwd)
        settings = _guarded(where, lambda: self._settings(cwd, trusted))
        comp = settings.get_compaction_settings()
        # the fix goes through PiMagics: there is no session yet to run %pi settings on
        _check_room(model.context_window, comp.reserve_tokens, where, _FIX_CONFIG)
        self.session = _guarded(
            where,
            lambda: AgentSession(
                manager,
                model,
                settings=settings,
                thinking_level=self.thinking_level if path is None else None,
                project_trusted=trusted,
            ),
        )
        return self.session

    def _ensure_session(self, where: str = "%pi") -> Any:
        return self.session if self.session is not None else self._new_session(where=where)

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
        return _guarded("%%pi", lambda: self._cell(args, cell))  # type: ignore[no-any-return]

    def _cell(self, args: argparse.Namespace, cell: str) -> TurnResult:
        prompt = cell.strip("\n")
        if not prompt.strip():
            raise UsageError("%%pi needs a prompt in the cell body")
        if args.interpolate:
            prompt = self._interpolate(prompt)
        context_block, notes = self._notebook_context(args.cells, args.vars)
        if context_block:
            prompt = context_block + "\n\n" + prompt
        # everything is checked before anything changes: a refused option leaves the session as it was
        model = None
        if args.model:
            model = self._make_model(args.model, args.context_window, where="%%pi --model")
        if args.session:
            self._new_session(path=os.path.abspath(os.path.expanduser(args.session)), where="%%pi --session")
        session = self._ensure_session("%%pi")
        if model is None and args.context_window is not None:
            model = session.model.with_overrides(context_window=args.context_window)
        comp_now = session.settings.get_compaction_settings()
        reserve = args.reserve if args.reserve is not None else comp_now.reserve_tokens
        window = model.context_window if model is not None else session.model.context_window
        if model is not None or args.reserve is not None:
            _check_room(window, reserve, "%%pi", _FIX_CELL)
        tools: list[str] | None = None
        if args.no_tools:
            tools = []
        elif args.tools:
            tools = [t.strip() for t in args.tools.split(",") if t.strip()]
            registry = getattr(session, "_tool_registry", None)
            unknown = [t for t in tools if registry is not None and t not in registry]
            if unknown:
                raise UsageError(
                    f"%%pi --tools: unknown tool(s) {', '.join(unknown)} — "
                    f"choose from {', '.join(sorted(registry or ()))}"
                )
        if model is not None:
            session.set_model(model)
        if args.thinking:
            session.set_thinking_level(args.thinking)
        if args.reserve is not None or args.keep_recent is not None:
            comp: dict[str, int] = {}  # Pi's compaction settings (camelCase), the numeric ones
            if args.reserve is not None:
                comp["reserveTokens"] = args.reserve
            if args.keep_recent is not None:
                comp["keepRecentTokens"] = args.keep_recent
            session.settings.apply_overrides({"compaction": comp})
        if tools is not None:
            session.set_active_tools(tools)
        raise_on_error = self.raise_on_error and not args.no_raise
        return self._run_turn(
            session, prompt, notes=notes, render=not args.no_render, raise_on_error=raise_on_error
        )

    def _interpolate(self, text: str) -> str:
        import string

        ns = self.shell.user_ns if self.shell is not None else {}
        try:
            return string.Formatter().vformat(text, (), _Namespace(ns))
        except (KeyError, IndexError, ValueError) as error:
            raise UsageError(
                f"%%pi --interpolate: {_describe(error)} — define it, or write {{{{ and }}}} for braces"
            ) from error

    def _notebook_context(self, cells: int, names: str | None) -> tuple[str, list[str]]:
        from pi_nb.tokens import count_tokens
        from pi_nb.truncation import truncate_head

        if not cells and not names:
            return "", []
        ns = self.shell.user_ns if self.shell is not None else {}
        parts: list[str] = []
        notes: list[str] = []
        if cells:
            inputs = list(ns.get("In", []))
            outputs = ns.get("Out", {})
            current = len(inputs) - 1
            chosen = list(range(max(1, current - cells), current))
            for n in chosen:
                src = inputs[n]
                block = f'<cell n="{n}">\n{src}\n'
                if n in outputs:
                    out = truncate_head(repr(outputs[n]), max_lines=200, max_bytes=8000).content
                    block += f"<output>\n{out}\n</output>\n"
                parts.append(block + "</cell>")
            text = "\n".join(parts)
            notes.append(f"included {len(chosen)} previous cell(s): {count_tokens(text):,} tokens")
        var_parts = []
        for name in [n.strip() for n in (names or "").split(",") if n.strip()]:
            if name not in ns:
                raise UsageError(
                    f"%%pi --vars: no variable named {name!r} — define it first, or fix the name"
                )
            value = truncate_head(repr(ns[name]), max_lines=200, max_bytes=8000).content
            var_parts.append(f'<variable name="{name}">\n{value}\n</variable>')
        if var_parts:
            text = "\n".join(var_parts)
            notes.append(f"included {len(var_parts)} variable(s): {count_tokens(text):,} tokens")
            parts.extend(var_parts)
        block = "<notebook_context>\n" + "\n".join(parts) + "\n</notebook_context>"
        return block, notes

    def _run_turn(
        self,
        session: Any,
        prompt: str,
        *,
        notes: list[str] | None = None,
        render: bool = True,
        raise_on_error: bool = True,
    ) -> TurnResult:
        # the view shows (and the .ipynb and the export keep) the prompt as the session stores it:
        # redacted, --vars / --interpolate values included; the session is sent the prompt as written
        view = TurnView(
            prompt=redact(prompt), model=session.model.id, context_window=session.model.context_window
        )
        view.notes.extend(notes or [])
        events: queue.Queue[ViewEvent] = queue.Queue()
        unsubscribe = session.subscribe(events.put)
        handle = display(view.bundle(), raw=True, display_id=True) if render else None
        future = self.loop.submit(session.prompt(prompt))
        # wake the wait below as soon as the run ends (else each cell idles up to one poll interval)
        future.add_done_callback(lambda _: events.put({"type": "pi_nb_run_done"}))
        interrupted = False
        last = 0.0
        try:
            while True:
                try:
                    view.feed(events.get(timeout=0.05))
                    while True:
                        view.feed(events.get_nowait())
                except queue.Empty:
                    pass
                now = time.monotonic()
                if handle is not None and view.dirty and now - last >= self.update_interval / 1000:
                    handle.update(view.bundle(), raw=True)
                    last = now
                if future.done() and events.empty():
                    break
        except KeyboardInterrupt:
            interrupted = True
            _wind_down(future, session.abort)
            view.notes.append("interrupted: the run was aborted; the session file is intact")
        finally:
            unsubscribe()
            while not events.empty():
                view.feed(events.get_nowait())
        error = None if interrupted else future.exception()
        result = future.result() if (not interrupted and error is None) else None
        failure = _turn_failure(result) if result is not None else None
        if interrupted:
            view.status = "interrupted"
        elif error is not None or failure is not None:
            view.status = "error"
        else:
            view.status = "done"
        if error is not None:
            view.notes.append(f"{type(error).__name__}: {_describe(error)}")
        turn = TurnResult(
            session_id=session.session_id,
            session_file=session.session_file,
            model=f"{session.model.provider}/{session.model.id}",
            messages=list(result.messages) if result else [],
            entry_ids=list(result.entry_ids) if result else [],
            usage=dict(result.usage)
            if result
            else {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            compactions=list(result.compactions) if result else [],
            interrupted=interrupted,
            error=failure if failure is not None else (_describe(error) if error is not None else None),
        )
        if failure is not None:
            view.notes.append(
                "the turn ended with an error"
                + ("; the cell fails (%%pi --no-raise keeps going)" if raise_on_error else "")
            )
        if handle is not None:
            handle.update(view.bundle(), raw=True, metadata=turn.metadata())
        if error is not None:
            if isinstance(error, (PiNbError, ValueError, OSError)):
                raise TurnFailedError(_one_line("%%pi", error), turn=turn) from error
            raise error
        if failure is not None and raise_on_error:
            raise TurnFailedError(_failure_line(failure, session), turn=turn)
        return turn

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
        handler: Callable[[argparse.Namespace], Any] = getattr(self, f"_cmd_{command}")
        result = _guarded(f"%pi {command}", lambda: handler(args))
        return PiText(result) if isinstance(result, str) else result

    def _cmd_help(self, a: argparse.Namespace) -> None:
        print(HELP if a.command is None else _BY_NAME[a.command].parser().format_help())

    def _cmd_new(self, a: argparse.Namespace) -> str:
        s = self._new_session(in_memory=a.in_memory or None, cwd=a.cwd, where="%pi new")
        return f"new session {s.session_id} ({'in memory' if not s.session_file else s.session_file})"

    def _recent(self, cwd_arg: str, where: str) -> str:
        from pi_nb.session.paths import find_most_recent_session, get_default_session_dir

        cwd = os.path.abspath(os.path.expanduser(cwd_arg)) if cwd_arg else self._cwd()
        path = find_most_recent_session(get_default_session_dir(cwd), cwd)
        if path is None:
            raise UsageError(
                f"{where} --recent: no session for {cwd} — run a %%pi cell there first, or give a PATH"
            )
        return str(path)

    def _cmd_open(self, a: argparse.Namespace) -> str:
        if a.recent is not None:
            path = self._recent(a.recent, "%pi open")
        elif a.path:
            path = os.path.abspath(os.path.expanduser(a.path))
        else:
            raise UsageError("%pi open: give a session file or --recent [CWD] (Tab completes paths)")
        if os.path.isdir(path):
            raise UsageError(
                f"%pi open: {path} is a folder, not a session file — "
                "give a .jsonl file (%pi list DIR shows the sessions of a working directory)"
            )
        s = self._new_session(path=path, where="%pi open")
        return f"opened {path} ({len(s.session_manager.get_entries())} entries, leaf {s.session_manager.get_leaf_id()})"

    def _cmd_list(self, a: argparse.Namespace) -> Any:
        from pi_nb.session.paths import list_sessions

        cwd = os.path.abspath(os.path.expanduser(a.cwd)) if a.cwd else self._cwd()
        if not os.path.isdir(cwd):
            raise UsageError(f"%pi list: no such folder: {cwd} — give the working directory of the sessions")
        from pi_nb.notebook.frames import session_list_df

        return session_list_df(list_sessions(cwd))

    def _cmd_model(self, a: argparse.Namespace) -> str:
        s = self._ensure_session("%pi model")
        if a.spec is None and a.context_window is None and a.max_tokens is None:
            return repr(s.model)
        if a.spec:
            model = self._make_model(a.spec, a.context_window, a.max_tokens, where="%pi model")
        else:
            changes = {
                k: v
                for k, v in (("context_window", a.context_window), ("max_tokens", a.max_tokens))
                if v is not None
            }
            model = s.model.with_overrides(**changes)
        _check_room(
            model.context_window,
            s.settings.get_compaction_settings().reserve_tokens,
            "%pi model",
            _FIX_SESSION,
        )
        s.set_model(model)
        return f"model: {model!r}"

    def _cmd_models(self, a: argparse.Namespace) -> Any:
        import pandas as pd

        specs, source = _model_specs()
        if a.filter:
            wanted = a.filter.lower()
            providers = {str(_field(s, "provider")).lower() for s in specs}
            if wanted in providers:
                specs = [s for s in specs if str(_field(s, "provider")).lower() == wanted]
            else:
                specs = [
                    s
                    for s in specs
                    if wanted
                    in f"{_field(s, 'provider')}/{_field(s, 'id')} {_field(s, 'name') or ''}".lower()
                ]
            if not specs:
                raise UsageError(
                    f"%pi models: no model matches {a.filter!r} — %pi models lists them all "
                    f"(providers: {', '.join(_known_providers())})"
                )
        key_envs = _provider_key_envs(specs)
        rows = []
        for s in specs:
            provider = str(_field(s, "provider"))
            cost = _field(s, "cost") or {}
            env = key_envs.get(provider)
            rows.append(
                {
                    "model": f"{provider}/{_field(s, 'id')}",
                    "provider": provider,
                    "name": _field(s, "name") or _field(s, "id"),
                    "api": _field(s, "api"),
                    "context_window": _field(s, "context_window"),
                    "max_tokens": _field(s, "max_tokens"),
                    "reasoning": bool(_field(s, "reasoning")),
                    "input": ",".join(_field(s, "input") or ()),
                    "cost_input": _field(cost, "input") if cost else None,
                    "cost_output": _field(cost, "output") if cost else None,
                    "key_env": env,
                    "key_set": bool(env and os.environ.get(env, "").strip()) if env else None,
                }
            )
        frame = pd.DataFrame(rows)
        frame = frame.astype(
            {
                "model": "string",
                "provider": "string",
                "name": "string",
                "api": "string",
                "context_window": "Int64",
                "max_tokens": "Int64",
                "reasoning": "boolean",
                "input": "string",
                "cost_input": "Float64",
                "cost_output": "Float64",
                "key_env": "string",
                "key_set": "boolean",
            }
        )
        frame.attrs["source"] = source
        return frame

    def _cmd_settings(self, a: argparse.Namespace) -> SettingsReport:
        s = self._ensure_session("%pi settings")
        comp: dict[str, int | bool] = {}  # Pi's compaction settings by name (_COMPACTION_KEYS)
        for pair in a.pairs:
            if "=" not in pair:
                raise UsageError(f"%pi settings: expected key=value, got {pair!r} — e.g. reserveTokens=2000")
            key, value = pair.split("=", 1)
            if key not in _COMPACTION_KEYS:
                raise UsageError(f"%pi settings: unknown key {key!r} — use {', '.join(_COMPACTION_KEYS)}")
            if key == "enabled":
                if value.lower() not in _TRUE + _FALSE:
                    raise UsageError(f"%pi settings: enabled must be true or false, got {value!r}")
                comp[key] = value.lower() in _TRUE
                continue
            try:
                number = _whole(value)
            except argparse.ArgumentTypeError:
                raise UsageError(
                    f"%pi settings: {key} must be a whole number of tokens, got {value!r} — e.g. {key}=2000"
                ) from None
            if number < 0:
                raise UsageError(f"%pi settings: {key} must be 0 or more, got {number}")
            comp[key] = number
        if "reserveTokens" in comp:
            _check_room(
                s.model.context_window,
                comp["reserveTokens"],
                "%pi settings",
                "e.g. reserveTokens={reserve} keepRecentTokens={keep}, or a bigger window (%pi model --context-window N)",
            )
        if comp:
            s.settings.apply_overrides({"compaction": comp})
        c = s.settings.get_compaction_settings()
        return {
            "compaction": {
                "enabled": c.enabled,
                "reserveTokens": c.reserve_tokens,
                "keepRecentTokens": c.keep_recent_tokens,
            },
            "contextWindow": s.model.context_window,
            "threshold": s.model.context_window - c.reserve_tokens,
        }

    def _cmd_session(self, a: argparse.Namespace) -> Any:
        """The :class:`~pi_nb.agent.AgentSession` behind the magics (for the Python API)."""
        return self._ensure_session("%pi session")

    def _cmd_status(self, a: argparse.Namespace) -> str:
        s = self._ensure_session("%pi status")
        usage = s.get_context_usage()
        return (
            f"session {s.session_id} · {s.session_file or 'in memory'}\n"
            f"model {s.model.provider}/{s.model.id} · window {s.model.context_window:,} · thinking {s.thinking_level}\n"
            f"entries {len(s.session_manager.get_entries())} · leaf {s.session_manager.get_leaf_id()} · "
            f"context ~{usage['tokens']:,} tokens ({usage['percent'] or 0:.1f}% of window; threshold {usage['threshold']:,})\n"
            f"tools {', '.join(s.get_active_tool_names()) or '(none)'}"
        )

    def _navigate_callback(self) -> Callable[..., Any]:
        def navigate(target_id: str, summarize: bool = False, custom_instructions: str | None = None) -> Any:
            s = self._ensure_session()
            return self.loop.run(
                s.navigate_tree(
                    target_id, summarize=summarize, custom_instructions=custom_instructions or None
                )
            )

        return navigate

    def _cmd_tree(self, a: argparse.Namespace) -> Any:
        from pi_nb.notebook.widgets import session_tree

        s = self._ensure_session("%pi tree")
        return session_tree(s.session_manager, on_navigate=self._navigate_callback())

    def budget_input(self) -> Any:
        """The current session as a :class:`~pi_nb.notebook.budget.BudgetInput` (what the next request
        holds). Incremental: one :class:`~pi_nb.notebook.budget.BudgetTracker` per kernel extends the
        previous path when the leaf only moved forward, so a refresh costs the new entries only."""
        from pi_nb.budget import BudgetTracker

        s = self._ensure_session()
        c = s.settings.get_compaction_settings()
        if self._budget_tracker is None:
            self._budget_tracker = BudgetTracker()
        return self._budget_tracker.session_input(
            s.session_manager,
            model_context_window=s.model.context_window,
            reserve_tokens=c.reserve_tokens,
            keep_recent_tokens=c.keep_recent_tokens,
            compaction_enabled=c.enabled,
            system_prompt=s.system_prompt,
            system_prompt_parts=s.system_prompt_parts(),
            tools=[tool_schema(t) for t in s.agent.state.tools],
        )

    def _cmd_budget(self, a: argparse.Namespace) -> Any:
        """The token budget of the next request; the view follows the session live (at most ~10 redraws a
        second, counting only new messages) until the session is replaced."""
        from pi_nb.notebook.widgets import BudgetView

        session = self._ensure_session("%pi budget")
        inp = self.budget_input()
        view = BudgetView(inp, tracker=self._budget_tracker)

        def follow(event: Mapping[str, object]) -> None:
            # any session event: only its type is read
            if (
                event.get("type") in ("message_end", "compaction_end", "session_tree")
                and self.session is session
            ):
                try:
                    view.update(self.budget_input())
                except Exception:  # a view must never break a turn
                    pass
            if event.get("type") == "agent_end" and hasattr(view, "flush"):
                view.flush()

        session.subscribe(follow)
        return view

    def _cmd_context(self, a: argparse.Namespace) -> Any:
        from pi_nb.notebook.context_view import ContextView

        s = self._ensure_session("%pi context")
        return ContextView.from_session(s, run=self.loop.run)

    def _cmd_compact(self, a: argparse.Namespace) -> Any:
        s = self._ensure_session("%pi compact")
        instructions = " ".join(a.instructions) or None
        outcome = self.loop.run(s.compact(instructions), abort=s.abort)
        return outcome.result.to_dict() if outcome.result is not None else outcome.to_dict()

    def _resolve_entry(self, s: Any, target: str, where: str) -> str:
        """An entry id, or the id of the one entry whose label is ``target``."""
        sm = s.session_manager
        if sm.get_entry(target) is not None:
            return target
        labelled = [e["id"] for e in sm.get_entries() if e.get("id") and sm.get_label(e["id"]) == target]
        if len(labelled) == 1:
            return str(labelled[0])
        if len(labelled) > 1:
            raise UsageError(f"{where}: the label {target!r} is on {len(labelled)} entries — give the id")
        raise UsageError(
            f"{where}: no entry {target!r} in this session (neither an id nor a label) — "
            "see the ids with %pi entries or %pi tree (Tab completes ids and labels)"
        )

    def _cmd_navigate(self, a: argparse.Namespace) -> Any:
        s = self._ensure_session("%pi navigate")
        target = self._resolve_entry(s, a.target, "%pi navigate")
        result = self.loop.run(
            s.navigate_tree(
                target,
                summarize=a.summarize,
                custom_instructions=a.instructions,
                replace_instructions=a.replace or None,
                label=a.label,
            ),
            abort=s.abort,
        )
        return result.to_dict()

    def _cmd_label(self, a: argparse.Namespace) -> str:
        s = self._ensure_session("%pi label")
        target = self._resolve_entry(s, a.target, "%pi label")
        text = " ".join(a.text) or None
        s.session_manager.append_label_change(target, text)
        return f"label of {target}: {text!r}"

    def _cmd_entries(self, a: argparse.Namespace) -> Any:
        from pi_nb.notebook.frames import entries_df

        return entries_df(self._ensure_session("%pi entries").session_manager)

    _TRUST_ANSWERS: ClassVar[dict[str, str]] = {
        "yes": "Trust",
        "parent": "Trust parent folder",
        "once": "Trust (this session only)",
        "no": "Do not trust",
        "once-no": "Do not trust (this session only)",
    }

    def _cmd_trust(self, a: argparse.Namespace) -> str:
        from pi_nb.resources.trust import ProjectTrustStore, TrustPrompt, answer_trust_prompt
        from pi_nb.session.paths import get_agent_dir

        cwd = self.session.cwd if self.session is not None else self._cwd()
        trusted_now = self._project_trusted(cwd)
        prompt = self._trust_prompt
        if a.answer is None:
            if prompt is None:
                return f"{cwd}: {'trusted' if trusted_now else 'not trusted'} (decided without asking)"
            options = "\n".join(f"  %pi trust {key:<8} {label}" for key, label in self._TRUST_ANSWERS.items())
            return f"{prompt.message}\n\nNot trusted until you answer:\n{options}"
        key = a.answer
        prompt = prompt or TrustPrompt.for_cwd(cwd)
        label = self._TRUST_ANSWERS[key]
        option = next(
            (o for o in prompt.options if o.label.startswith(label) and (key != "yes" or o.label == label)),
            None,
        )
        if option is None:
            raise UsageError(
                f"%pi trust {key}: that answer is not offered for {cwd} — %pi trust shows the answers"
            )
        trusted = answer_trust_prompt(prompt, option, ProjectTrustStore(get_agent_dir()))
        self._trust_override = trusted if key.startswith("once") else None
        self._trust_prompt = None
        if self.session is not None:
            self.session.settings.set_project_trusted(trusted)
            self.session.reload_resources()
        return f"{cwd}: {'trusted' if trusted else 'not trusted'}" + (
            " (this kernel only)" if key.startswith("once") else " (saved)"
        )

    def _cmd_turns(self, a: argparse.Namespace) -> None:
        s = self._ensure_session("%pi turns")
        turns = _turns(s.session_manager.get_branch())
        if a.count is None:
            turns = turns[-1:]
        elif a.count != "all":
            try:
                n = _positive(a.count)
            except argparse.ArgumentTypeError as error:
                raise UsageError(f"%pi turns: N {error} — e.g. %pi turns 3, or %pi turns all") from None
            turns = turns[-n:]
        for messages in turns:
            model = next((m.get("model", "") for m in messages if m.get("role") == "assistant"), "")
            view = TurnView.from_messages(messages, model=str(model))
            display(view.bundle(), raw=True, metadata={"pi_nb": {"turns": True, "sessionId": s.session_id}})
        return None

    def _cmd_follow(self, a: argparse.Namespace) -> Any:
        if a.stop:
            if a.path or a.recent is not None:
                raise UsageError("%pi follow --stop takes no PATH")
            if self._follower is None:
                raise UsageError("%pi follow --stop: nothing is being followed — %pi follow PATH starts")
            follower, path = self._follower, self._follow_path
            self._follower = self._follow_path = None
            follower.stop()
            return f"stopped following {path}"
        if a.recent is not None:
            path = self._recent(a.recent, "%pi follow")
        elif a.path:
            path = os.path.abspath(os.path.expanduser(a.path))
        else:
            raise UsageError("%pi follow: give a session file, --recent [CWD] or --stop")
        if os.path.isdir(path):
            raise UsageError(f"%pi follow: {path} is a folder, not a session file — give a .jsonl file")
        try:
            follow = importlib.import_module("pi_nb.notebook.following").follow
        except ImportError:
            raise UsageError(
                "%pi follow: this install has no pi_nb.notebook.following — update pi_nb"
            ) from None
        follower = follow(path)
        if self._follower is not None:  # one followed file at a time: the previous one stops
            try:
                self._follower.stop()
            except Exception:
                pass
        self._follower, self._follow_path = follower, path
        return follower


class PiText(str):
    """A command's answer: shows as plain text (not a quoted string) in a cell's output."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        return f'<pre style="white-space:pre-wrap;margin:0">{html.escape(str(self))}</pre>'


class CompactionSettingsReport(TypedDict):
    """The compaction settings in force, as ``%pi settings`` shows them (Pi's camelCase keys)."""

    enabled: bool
    reserveTokens: int
    keepRecentTokens: int


class SettingsReport(TypedDict):
    """What ``%pi settings`` returns: the compaction settings, the model's context window and the
    compaction threshold (``contextWindow - reserveTokens``)."""

    compaction: CompactionSettingsReport
    contextWindow: int
    threshold: int


class _Namespace(dict[str, Any]):  # the user's namespace for --interpolate: any Python values
    def __missing__(self, key: str) -> Any:
        raise KeyError(f"no variable named {key!r} for {{{key}}}")


def _turns(branch: Sequence[SessionEntry]) -> list[list[AgentMessage]]:
    """The branch's messages grouped into turns (a user message and what followed it)."""
    turns: list[list[AgentMessage]] = []
    for entry in branch:
        if not is_message_entry(entry):
            continue
        msg = entry["message"]
        if msg.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(msg)
    return turns


#: ``%pi list``'s columns and their dtypes (the frames' conventions: snake_case, nullable dtypes, datetimes)
def _turn_failure(result: Any) -> str | None:
    """Why a finished prompt failed, or ``None``: the result's own ``error`` where it has one, else
    the last assistant message stopping with ``stopReason == "error"``."""
    err = getattr(result, "error", None)
    if err:
        if isinstance(err, dict):
            return str(err.get("errorMessage") or err.get("message") or err)
        return _describe(err) if isinstance(err, BaseException) else " ".join(str(err).split())
    last = getattr(result, "last_assistant", None)
    if isinstance(last, dict) and last.get("stopReason") == "error":
        return " ".join(str(last.get("errorMessage") or "the model stopped with an error").split())
    return None


def _failure_line(message: str, session: Any) -> str:
    """One line for a failed turn: what the provider or the agent said, and what to do."""
    low = message.lower()
    model = session.model
    if any(k in low for k in ("too long", "context length", "context window", "overflow", "maximum context")):
        hint = (
            "make room: a bigger window (%pi model --context-window N), a lower keepRecentTokens "
            "(%pi settings keepRecentTokens=N), or a narrower read"
        )
    elif any(
        k in low for k in ("401", "403", "api key", "api_key", "authentication", "unauthorized", "permission")
    ):
        env = getattr(model, "api_key_env", "") or "the provider's key variable"
        hint = f"check the key in ${env} (or choose another model with %pi model)"
    elif any(
        k in low for k in ("connect", "unreachable", "timed out", "timeout", "name or service", "refused")
    ):
        base_url = getattr(model, "base_url", None)
        where = redact_url(base_url) if isinstance(base_url, str) and base_url else f"{model.provider}'s API"
        hint = f"check that {where} is reachable, then run the cell again"
    else:
        hint = "the session keeps the turn: fix the cause and run the cell again"
    if len(message) > 400:
        message = redact_cut(message, 400) + "…"
    else:
        message = redact(message)
    return f"the turn ended with an error: {message} — {hint} (%%pi --no-raise keeps going)"


def _provider_key_envs(specs: Iterable[Any]) -> dict[str, str | None]:
    """The environment variable that holds each provider's key (``None``: no key, or not a model pi_nb runs)."""
    from pi_nb.providers import get_model

    out: dict[str, str | None] = {}
    for s in specs:
        provider = str(_field(s, "provider"))
        if provider in out:
            continue
        env = _field(s, "api_key_env")
        if env is None:
            try:
                env = getattr(get_model(f"{provider}/{_field(s, 'id')}"), "api_key_env", None)
            except Exception:
                env = None
        out[provider] = env or None
    return out


# -- tab completion ------------------------------------------------------------------------------


def _register_completer(shell: Any) -> None:
    if getattr(shell, "_pi_nb_completer", False):
        return
    shell.set_hook("complete_command", _complete, str_key="%pi")
    shell.set_hook("complete_command", _complete, str_key="%%pi")
    shell._pi_nb_completer = True


def _complete(shell: Any, event: Any) -> list[str]:
    """IPython's ``complete_command`` hook for ``%pi`` and ``%%pi`` (see :func:`completions`)."""
    magics = shell.magics_manager.registry.get("PiMagics") if shell is not None else None
    try:
        return completions(str(getattr(event, "text_until_cursor", event.line)), magics)
    except Exception:  # completion must never raise into the front end
        return []


def completions(text_until_cursor: str, magics: Any = None) -> list[str]:
    """What Tab offers after ``text_until_cursor`` (a ``%pi`` or ``%%pi`` line up to the cursor)."""
    line = text_until_cursor.lstrip()
    if "\n" in line:  # the first line of a %%pi cell
        line = line.split("\n", 1)[0]
    words = line.split()
    if not words:
        return []
    if line.endswith((" ", "\t")):
        words.append("")
    head, args = words[0], words[1:]
    if not args:
        return []
    current, prev = args[-1], (args[-2] if len(args) >= 2 else None)
    if head == "%%pi":
        return _complete_cell(prev, current, magics)
    if len(args) == 1:
        return [c.name for c in COMMANDS]
    command = args[0]
    spec = _BY_NAME.get(command)
    if spec is None:
        return []
    if prev in ("--model",) or (command == "model" and len(args) == 2 and not current.startswith("-")):
        return _model_completions()
    if prev in ("--cwd", "--recent") or (
        command == "list" and len(args) == 2 and not current.startswith("-")
    ):
        return _path_completions(current, dirs_only=True)
    if current.startswith("-"):
        return [o for o, _ in ((r.split()[0], m) for r, m in _option_rows(spec.parser()))]
    if command in ("navigate", "label") and len(args) == 2:
        return _entry_completions(magics)
    if command in ("open", "follow") and len(args) == 2:
        return _path_completions(current) + _session_completions(magics, current)
    if command == "trust" and len(args) == 2:
        return ["yes", "no", "parent", "once", "once-no"]
    if command == "settings":
        return [f"{k}=" for k in _COMPACTION_KEYS]
    if command == "models" and len(args) == 2:
        return _known_providers()
    return []


def _complete_cell(prev: str | None, current: str, magics: Any) -> list[str]:
    if prev == "--model":
        return _model_completions()
    if prev == "--session":
        return _path_completions(current) + _session_completions(magics, current)
    if prev == "--thinking":
        return list(THINKING_LEVELS)
    if prev == "--tools" and magics is not None and magics.session is not None:
        return [",".join(magics.session.get_active_tool_names())]
    return [r.split()[0] for r, _ in _option_rows(CELL.parser())]


def _model_completions() -> list[str]:
    specs, _ = _model_specs()
    return ["offline", *sorted({f"{_field(s, 'provider')}/{_field(s, 'id')}" for s in specs})]


def _entry_completions(magics: Any) -> list[str]:
    if magics is None or magics.session is None:
        return []
    sm = magics.session.session_manager
    ids: list[str] = []
    labels: list[str] = []
    for entry in reversed(sm.get_entries()):  # the newest first
        entry_id = entry.get("id")
        if not entry_id or entry.get("type") == "label":
            continue
        ids.append(str(entry_id))
        label = sm.get_label(entry_id)
        if label:
            labels.append(shlex.quote(label))
    return labels + ids


def _path_completions(current: str, *, dirs_only: bool = False) -> list[str]:
    expanded = os.path.expanduser(current) if current else ""
    folder, stem = os.path.split(expanded)
    out = []
    for name in sorted(os.listdir(folder or ".")) if os.path.isdir(folder or ".") else []:
        if not name.startswith(stem) or (name.startswith(".") and not stem.startswith(".")):
            continue
        full = os.path.join(folder, name)
        shown = os.path.join(os.path.split(current)[0], name) if current else name
        if os.path.isdir(full):
            out.append(shown + "/")
        elif not dirs_only and name.endswith(".jsonl"):
            out.append(shown)
    return out


def _session_completions(magics: Any, current: str) -> list[str]:
    """Session files of the kernel's working directory (Pi's layout), newest first."""
    from pi_nb.session.paths import _default_session_dir_path

    try:
        cwd = magics._cwd() if magics is not None else os.getcwd()
        folder = _default_session_dir_path(cwd)
    except Exception:
        return []
    files = sorted(glob.glob(os.path.join(glob.escape(folder), "*.jsonl")), reverse=True)
    return [f for f in files if f.startswith(os.path.expanduser(current))] if current else files


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


def _set_reference(functions: Sequence[Callable[..., Any]]) -> None:
    for fn in functions:
        fn.__doc__ = REFERENCE


_set_reference([PiMagics.pi, PiMagics.pi_line])
