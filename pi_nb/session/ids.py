"""Session ids, entry ids and entry timestamps, as Pi 0.85 makes them.

* A session id is a UUIDv7 (``uuid6.uuid7``; Pi uses its own monotonic UUIDv7 generator, the
  format is the same). A caller may choose its own id; it must match Pi's rule
  ``^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`` because it becomes part of a file name.
* An entry id is the first 8 characters of a random UUIDv4 (8 lowercase hex digits), drawn again
  when it collides with an id already in the session; after 100 collisions Pi falls back to a
  whole UUIDv4 (36 characters). Short ids keep the files small and readable; collisions are rare
  (1 in 4 billion per pair) but a long session makes them possible, hence the re-draw.
* A timestamp is ``new Date().toISOString()``: UTC, milliseconds, ``Z`` suffix.

The three random/clock sources are module-level functions (:func:`_random_uuid`,
:func:`_new_session_uuid`, :func:`now_iso`) so the golden tests can pin them to the same sequence
the real Pi was given and compare files byte for byte.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Container
from datetime import UTC, datetime

import uuid6

from pi_nb.errors import InvalidSessionIdError

__all__ = [
    "assert_valid_session_id",
    "create_session_id",
    "generate_id",
]

_SESSION_ID_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")

SESSION_ID_ERROR = (
    "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
    "and start and end with an alphanumeric character"
)
"""Pi's error text for a custom session id that breaks the rule."""


def _random_uuid() -> str:
    """``crypto.randomUUID()``: a random UUIDv4 string (the seam tests pin)."""
    return str(uuid.uuid4())


def _new_session_uuid() -> str:
    """A fresh UUIDv7 string (the seam tests pin)."""
    return str(uuid6.uuid7())


def _utc_now() -> datetime:
    return datetime.now(UTC)


def now_iso() -> str:
    """``new Date().toISOString()``: e.g. ``2026-12-02T08:24:02.711Z`` (UTC, milliseconds)."""
    now = _utc_now()
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def create_session_id() -> str:
    """A new session id: a UUIDv7, so ids sort by creation time."""
    return _new_session_uuid()


def assert_valid_session_id(session_id: str) -> None:
    """Raise :class:`~pi_nb.errors.InvalidSessionIdError` (Pi's text) unless the id is allowed.

    Allowed: non-empty, only ``[A-Za-z0-9._-]``, starting and ending with an alphanumeric
    character (``abc-123_def.456``); rejected e.g. ``-abc``, ``abc.``, ``abc/def``, ``abc def``.
    """
    if not isinstance(session_id, str) or _SESSION_ID_RE.fullmatch(session_id) is None:
        raise InvalidSessionIdError(SESSION_ID_ERROR)
    # `$` in JS (no m flag) matches only at the very end, like fullmatch; a trailing "\n" is rejected.


def generate_id(by_id: Container[str]) -> str:
    """A short entry id (8 hex chars) that is not in ``by_id``; Pi's ``generateId``.

    Up to 100 draws; if every one collides, a whole UUIDv4 is returned (Pi does the same and does
    not check that one).
    """
    for _ in range(100):
        candidate = _random_uuid()[:8]
        if candidate not in by_id:
            return candidate
    return _random_uuid()
