"""What kind of file a path is, in words (one table for the tools and the session files).

A model or a user can name any path: a FIFO blocks a reader until a writer comes (forever, for a
FIFO nobody writes), ``/dev/zero`` never ends, a socket cannot be opened, and writing to a block
device as root destroys it. Every place that opens a path by name asks :func:`file_kind` first and
refuses what is not a regular file (or a directory, where one is expected), naming the kind.
"""

from __future__ import annotations

import stat

__all__ = ["file_kind", "is_special_file"]

_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """``"a regular file"``, ``"a directory"``, ``"a FIFO (named pipe)"``, ``"a socket"``,
    ``"a character device"``, ``"a block device"`` (or ``"not a regular file"``) for a ``st_mode``."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - doors, whiteouts


def is_special_file(mode: int) -> bool:
    """Neither a regular file nor a directory: a FIFO, socket or device (reading or writing it by
    name can block forever, never end, or destroy it)."""
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
