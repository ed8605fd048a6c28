"""Other agents' session files, read into pi_nb's session model (read-only).

Each reader maps one harness's JSONL transcript to Pi file entries (:class:`ForeignSession`):
Claude Code (:mod:`pi_nb.harness.claude_code`) and Codex CLI (:mod:`pi_nb.harness.codex`). The
format is detected from the file's first records (:func:`detect_harness`), never from its name.

Importing this package registers the readers with :mod:`pi_nb.session.source`, so every session
source (the frames, the corpus loader, the views, the what-if replay) opens these files as it
opens Pi's: a file that is not a Pi session is offered to the readers before it is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import orjson

from pi_nb.errors import InvalidSessionFileError
from pi_nb.harness import claude_code, codex
from pi_nb.harness.types import ForeignSession
from pi_nb.session.jsonl import open_session_for_read
from pi_nb.session.source import register_foreign_reader

__all__ = [
    "HARNESSES",
    "READERS",
    "ForeignSession",
    "detect_harness",
    "open_foreign",
    "read_foreign",
    "read_foreign_bytes",
]

Looks = Callable[[list[Any]], bool]
Read = Callable[[bytes, "str | None"], ForeignSession]

READERS: tuple[tuple[str, Looks, Read], ...] = (
    (claude_code.HARNESS, claude_code.looks_like, claude_code.read),
    (codex.HARNESS, codex.looks_like, codex.read),
)
"""``(harness, looks_like(first records), read(bytes, path))`` for each harness read."""

HARNESSES: tuple[str, ...] = ("pi", *(name for name, _, _ in READERS))
"""Every value of the frames' ``harness`` column."""

_PROBE_RECORDS = 25


def _first_records(data: bytes) -> list[Any]:
    """The first JSON values of a JSONL text (lines that do not parse are skipped)."""
    out: list[Any] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
        if len(out) >= _PROBE_RECORDS:
            break
    return out


def _is_pi(records: list[Any]) -> bool:
    first = records[0] if records else None
    return isinstance(first, dict) and first.get("type") == "session" and isinstance(first.get("id"), str)


def _detect(data: bytes) -> str | None:
    records = _first_records(data[: 1 << 20])
    if _is_pi(records):
        return "pi"
    for name, looks, _ in READERS:
        if looks(records):
            return name
    return None


def _read_bytes(path: str | os.PathLike[str]) -> bytes:
    with open_session_for_read(os.fspath(path)) as f:
        data: bytes = f.read()
    return data


def detect_harness(path: str | os.PathLike[str]) -> str | None:
    """``"pi"``, ``"claude-code"``, ``"codex"`` or ``None`` (none of them) for a session file,
    from its first records."""
    with open_session_for_read(os.fspath(path)) as f:
        head: bytes = f.read(1 << 20)
    return _detect(head)


def read_foreign_bytes(data: bytes, path: str | None = None) -> ForeignSession:
    """A transcript of another harness, given as bytes, mapped to Pi entries; raises
    :class:`~pi_nb.errors.InvalidSessionFileError` when no reader knows the format."""
    found = _read_known(data, path)
    if found is not None:
        return found
    where = path if path is not None else "the data"
    raise InvalidSessionFileError(
        f"{where} is neither a Pi session nor a transcript of {', '.join(n for n, _, _ in READERS)}"
    )


def read_foreign(path: str | os.PathLike[str]) -> ForeignSession:
    """A session file of another harness mapped to Pi entries (the file is only read)."""
    p = os.fspath(path)
    return read_foreign_bytes(_read_bytes(p), p)


def open_foreign(path: str | os.PathLike[str]) -> Any:
    """A session file of another harness as an in-memory
    :class:`~pi_nb.session.manager.SessionManager`."""
    return read_foreign(path).manager()


def _read_known(data: bytes, path: str | None) -> ForeignSession | None:
    """``data`` mapped by the first reader that knows its first records, or ``None``."""
    records = _first_records(data[: 1 << 20])
    for _name, looks, read in READERS:
        if looks(records):
            return read(data, path)
    return None


def _source_reader(path: str) -> ForeignSession | None:
    """The hook :mod:`pi_nb.session.source` calls for a file that is not a Pi session."""
    return _read_known(_read_bytes(path), path)


register_foreign_reader(_source_reader, "Claude Code transcript or Codex CLI rollout")
