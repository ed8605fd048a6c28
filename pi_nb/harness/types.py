"""The shape every reader of another agent's session file returns.

A reader turns one file of another harness (Claude Code, Codex CLI) into **Pi file entries**: a
session header first (with ``harness`` set), then entries linked by ``parentId`` exactly as Pi
writes them, so that every part of pi_nb that takes a session (frames, plots, tree, budget, the
what-if replay) takes it unchanged. Nothing is dropped in silence:

* a source field with no Pi counterpart is kept in the entry's ``raw`` mapping (the frames'
  ``raw`` column shows it as JSON);
* a source record that maps to no Pi message (a file-history snapshot, a turn context, an event
  the harness logs for itself) becomes a Pi ``custom`` entry (``customType`` =
  ``"<harness>/<record type>"``, ``data`` = the record as read): in the tree, never in the context;
* a line that is not JSON, or a record of the wrong shape, is a problem ``(line, reason)``, as Pi
  reports a corrupt line of its own files.

This module imports nothing from the rest of pi_nb but the session manager.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pi_nb.session.types import FileEntry, SessionHeader

__all__ = ["ForeignSession"]


@dataclass(frozen=True)
class ForeignSession:
    """One session file of another harness, mapped to Pi file entries (header first)."""

    harness: str
    """``"claude-code"`` or ``"codex"`` (the header's ``harness`` field says the same)."""
    path: str | None
    """The file read (``None`` when the bytes came from elsewhere)."""
    entries: list[FileEntry]
    """Pi file entries, the header first: ``{"type": "session", "version": 3, "id", "timestamp",
    "cwd", "harness", ...}``, then message / compaction / model_change / custom entries."""
    problems: list[tuple[int, str]] = field(default_factory=list)
    """``(1-based line, reason)`` for each line that could not be used."""

    @property
    def header(self) -> SessionHeader:
        """The session header (``entries[0]``)."""
        return cast("SessionHeader", self.entries[0])

    def manager(self) -> Any:
        """The session as an in-memory :class:`~pi_nb.session.manager.SessionManager` (nothing is
        written)."""
        from pi_nb.session.manager import SessionManager

        cwd = self.header.get("cwd")
        return SessionManager.in_memory(cwd if isinstance(cwd, str) else None, entries=self.entries)
