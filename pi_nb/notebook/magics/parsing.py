"""The grammar of the magics: argparse that answers in one line, the command record, and the one
line every mistake in a magic's input becomes."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from IPython.core.error import UsageError

from pi_nb.errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    MissingDependencyError,
    PiNbError,
    SessionFileCorruptError,
    SessionLockedError,
)
from pi_nb.notebook.turn import TurnFailedError

if TYPE_CHECKING:
    from pi_nb.notebook.magics import PiMagics

#: Pi 0.85.0's thinking levels (``VALID_THINKING_LEVELS`` of pi-coding-agent's ``cli/args.js``).
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


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


def _no_arguments(p: argparse.ArgumentParser) -> None:
    return None


#: A command's work: the magics object and the parsed arguments in, what the cell shows out.
Handler = Callable[["PiMagics", argparse.Namespace], Any]


@dataclass(frozen=True)
class Command:
    """One ``%pi`` command (or ``%%pi``): its name, usage line and meaning (the help texts), the
    function that declares its arguments on a parser, and the handler that runs it."""

    name: str
    usage: str
    meaning: str
    build: Callable[[argparse.ArgumentParser], None]
    run: Handler

    def parser(self) -> _Parser:
        p = _Parser(self.name if self.name.startswith("%%") else f"%pi {self.name}", self.meaning)
        self.build(p)
        return p


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
