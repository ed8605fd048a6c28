"""What kind of file a path is, in words (one table for the tools and the session files), and
the one way pi_nb opens a file someone named for reading.

A model or a user can name any path: a FIFO blocks a reader until a writer comes (forever, for a
FIFO nobody writes), ``/dev/zero`` never ends, a socket cannot be opened, and writing to a block
device as root destroys it. Every place that opens a path by name asks :func:`file_kind` first and
refuses what is not a regular file (or a directory, where one is expected), naming the kind.

Readers go through :func:`open_regular` (the check on the path and on the open descriptor, a
non-blocking open) and, where they read a whole file, :func:`read_regular` (bounded: the size at the
open, and a byte limit for resource files) or :func:`lines_upto`: session files, frames, listings,
``follow``, settings and the other resource files, the tools' side reads, the static export.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from typing import BinaryIO

__all__ = [
    "MAX_RESOURCE_BYTES",
    "FileTooLargeError",
    "SpecialFileError",
    "file_kind",
    "is_special_file",
    "lines_upto",
    "open_regular",
    "open_regular_for_write",
    "read_regular",
    "read_text_js",
    "strip_bom",
]

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


class SpecialFileError(OSError):
    """A path that was to be read is not a regular file (a FIFO, a socket, a device, a directory,
    directly or through a symlink): refused before a byte is read. ``path`` is the path given,
    ``kind`` what it is (in the words of :func:`file_kind`)."""

    def __init__(self, message: str, path: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.errno = errno.EINVAL
        self.filename = path
        self.path = path
        self.kind = kind

    def __str__(self) -> str:
        return str(self.args[0])


class FileTooLargeError(OSError):
    """A file read whole is larger than the bound its reader allows (``limit`` bytes)."""

    def __init__(self, message: str, path: str = "", size: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.errno = errno.EFBIG
        self.filename = path
        self.path = path
        self.size = size
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])


#: The most a resource file (settings, context files, skills, prompt templates, trust decisions,
#: ignore files) may hold: far above any real one, far below what would exhaust memory.
MAX_RESOURCE_BYTES = 64 * 1024 * 1024

_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
)

Refusal = Callable[[str, str], BaseException]


def _refused(path: str, kind: str) -> SpecialFileError:
    via = ""
    if os.path.islink(path):
        with contextlib.suppress(OSError, ValueError):
            via = f" (a symlink to {os.path.realpath(path)})"
    return SpecialFileError(f"{path} is {kind}, not a regular file{via}: not read", path, kind)


def open_regular(path: str | os.PathLike[str], *, refuse: Refusal | None = None) -> BinaryIO:
    """Open ``path`` for reading in binary mode, refusing anything that is not a regular file.

    The one way pi_nb opens a file a user or a model named (session files, resources, followed
    files). The kind is checked on the path before opening (a socket cannot be opened) and again on
    the open descriptor (the path may have been swapped in between); the open itself is
    non-blocking (a FIFO swapped in does not wait for a writer) and the descriptor is made blocking
    again once it is known to be a regular file. A refusal raises what ``refuse(path, kind)``
    returns (default :class:`SpecialFileError`, an :class:`OSError`); a missing path raises
    :class:`FileNotFoundError`, a self-looping link :class:`OSError` (``ELOOP``).
    """
    p = os.fspath(path)
    make = refuse or _refused
    st = os.stat(p)
    if not stat.S_ISREG(st.st_mode):
        raise make(p, file_kind(st.st_mode))
    try:
        fd = os.open(p, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # swapped for a socket since the stat
            raise make(p, "a socket") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise make(p, file_kind(st.st_mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_WRITE_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def open_regular_for_write(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for writing (created if missing, emptied once known to be a regular file),
    refusing anything else with :class:`SpecialFileError`: a FIFO swapped in after the caller's
    check neither blocks (the open is non-blocking: no reader gives ``ENXIO``) nor receives the
    text, and a device is never written."""
    p = os.fspath(path)
    try:
        fd = os.open(p, _WRITE_FLAGS, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO without a reader, or a socket
            raise SpecialFileError(
                f"{p} is a FIFO or socket, not a regular file: not written", p, "a FIFO"
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = file_kind(st.st_mode)
            raise SpecialFileError(f"{p} is {kind}, not a regular file: not written", p, kind)
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], max_bytes: int | None = MAX_RESOURCE_BYTES) -> bytes:
    """The bytes of the regular file ``path`` as it was when opened (:func:`open_regular`).

    A file another process is appending to is read up to its size at the open, never up to its
    growing end. With ``max_bytes``, a file larger than that raises :class:`FileTooLargeError`
    naming it; ``None`` means the size at the open is the only bound. A regular file that reports
    size 0 (``/proc`` files) is read up to ``max_bytes`` (or :data:`MAX_RESOURCE_BYTES`)."""
    p = os.fspath(path)
    with open_regular(p) as f:
        size = os.fstat(f.fileno()).st_size
        if max_bytes is not None and size > max_bytes:
            raise _too_large(p, size, max_bytes)
        cap = MAX_RESOURCE_BYTES if max_bytes is None else max_bytes
        data = f.read(size if size > 0 else cap + 1)
    if size == 0 and len(data) > cap:
        raise _too_large(p, len(data), cap)
    return data


def _too_large(path: str, size: int, limit: int) -> FileTooLargeError:
    return FileTooLargeError(
        f"{path} is {size:,} bytes, more than the {limit:,} bytes pi_nb reads of such a file: not read",
        path,
        size,
        limit,
    )


def lines_upto(f: BinaryIO, limit: int) -> Iterator[bytes]:
    """The lines (each with its ``\\n``, the last maybe without) of the first ``limit`` bytes of
    the open file ``f`` from where it stands: a reader that iterates a file that is still being
    written stops at the size it had at the open instead of following its growing end."""
    remaining = limit
    while remaining > 0:
        line = f.readline(remaining)
        if not line:
            return
        remaining -= len(line)
        yield line


def strip_bom(content: str) -> str:
    """Pi's ``stripBom``: drop one leading U+FEFF from decoded text."""
    return content[1:] if content.startswith("\ufeff") else content


def read_text_js(path: str) -> str:
    """``readFileSync(path, "utf-8")``: UTF-8 with invalid bytes replaced by U+FFFD, BOM kept.

    Raises :class:`OSError` like Node raises its fs errors. Unlike Node, a path that is not a
    regular file (a FIFO would hang, ``/dev/zero`` never ends) raises :class:`SpecialFileError`,
    and a file of more than :data:`MAX_RESOURCE_BYTES` raises :class:`FileTooLargeError`, both
    :class:`OSError` naming the file (:func:`read_regular`).
    """
    return read_regular(path, MAX_RESOURCE_BYTES).decode("utf-8", errors="replace")
