"""Node.js behaviour the tools' error texts and arithmetic depend on (private).

Pi's tools let Node's filesystem errors through unchanged, so the model reads e.g.
``ENOENT: no such file or directory, access '/p/missing.txt'``. :func:`node_fs_error` rebuilds that
text from a Python ``OSError``: ``{CODE}: {libuv description}, {syscall} '{path}'``.
"""

from __future__ import annotations

import errno
import math
from collections.abc import Sequence
from typing import TypeVar

from pi_nb.errors import ToolError

T = TypeVar("T")

# libuv's uv_strerror texts for the codes a file tool can meet
_DESCRIPTIONS = {
    "ENOENT": "no such file or directory",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "EISDIR": "illegal operation on a directory",
    "ENOTDIR": "not a directory",
    "ELOOP": "too many symbolic links encountered",
    "ENAMETOOLONG": "name too long",
    "EEXIST": "file already exists",
    "EROFS": "read-only file system",
    "ENOSPC": "no space left on device",
    "EMFILE": "too many open files",
    "ENFILE": "file table overflow",
    "EBUSY": "resource busy or locked",
    "EINVAL": "invalid argument",
    "EIO": "i/o error",
    "ENOTEMPTY": "directory not empty",
    "EXDEV": "cross-device link not permitted",
    "ETXTBSY": "text file is busy",
    "EFBIG": "file too large",
    "EAGAIN": "resource temporarily unavailable",
}

# JavaScript WhiteSpace + LineTerminator (what String.prototype.trim/trimEnd remove)


def error_code(exc: OSError) -> str:
    """The Node-style code (``ENOENT``) of an OSError."""
    if exc.errno is not None and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno]
    return "EIO"


def node_fs_message(exc: OSError, syscall: str, path: str | None = None) -> str:
    code = error_code(exc)
    description = _DESCRIPTIONS.get(code) or (exc.strerror or code).lower()
    text = f"{code}: {description}, {syscall}"
    if path is not None:
        text += f" '{path}'"
    return text


def node_fs_error(exc: OSError, syscall: str, path: str | None = None) -> ToolError:
    """A :class:`ToolError` carrying Node's text for this filesystem error."""
    return ToolError(node_fs_message(exc, syscall, path))


def _to_int(x: float) -> float:
    """ToIntegerOrInfinity."""
    if isinstance(x, float) and math.isnan(x):
        return 0
    if isinstance(x, float) and math.isinf(x):
        return x
    return math.trunc(x)


def js_slice(seq: Sequence[T], start: float = 0, end: float | None = None) -> list[T]:
    """``Array.prototype.slice(start, end)``: fractional bounds truncate, negatives count from the end."""
    n = len(seq)
    s = _to_int(start)
    s = max(n + s, 0) if s < 0 else min(s, n)
    e: float = n if end is None else _to_int(end)
    e = max(n + e, 0) if e < 0 else min(e, n)
    return list(seq[int(s) : int(e)]) if e > s else []
