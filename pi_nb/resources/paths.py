"""Path handling the way Pi does it (``utils/paths.ts``, ``node:path``), plus the lock and JSON
helpers the resource stores share.

Why not plain :mod:`os.path`? Pi's results are strings that other code compares *as strings*
(context-file dedupe, trust-store keys, "is this under that root"), so the small differences
matter:

* Node's ``path.resolve`` collapses a leading ``//`` to ``/``; :func:`os.path.normpath` keeps
  exactly two leading slashes (POSIX allows it). :func:`node_resolve` follows Node.
* Pi's ``resolvePath`` expands ``~`` / ``~/...`` and ``file://`` URLs before resolving, and
  optionally trims with JavaScript's ``String.prototype.trim`` -- which also strips U+FEFF and
  the Unicode space separators that :meth:`str.strip` treats differently (:func:`js_trim`).
* ``canonicalizePath`` is ``realpath`` that falls back to the raw path when the target does not
  exist (:func:`canonicalize_path`).

The locking helper (:func:`pi_file_lock`) keeps Pi's lock *file names* (``trust.json.lock``,
``settings.json.lock``) and retry policy (10 attempts, 20 ms apart). Pi takes those locks with
``proper-lockfile``, which creates the lock path as a *directory* and treats its existence as
"locked". We use :class:`filelock.SoftFileLock` for the same reason filelock is in the
dependencies at all: it is cross-platform and well kept, and a *soft* (existence-based) lock is the
one kind that also excludes a Pi process working on the same ``~/.pi/agent`` at the same time (a
directory at the lock path means "Pi holds it"), and that leaves nothing behind on release (a
left-over lock *file* would make Pi's ``rmdir``-based stale-lock recovery fail forever).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import filelock

from pi_nb._fs import MAX_RESOURCE_BYTES as MAX_RESOURCE_BYTES
from pi_nb._fs import read_regular as read_regular
from pi_nb._fs import read_text_js as read_text_js
from pi_nb._fs import strip_bom as strip_bom
from pi_nb._js import js_json_parse, js_trim
from pi_nb._js import js_sort_key as _js_sort_key
from pi_nb.config import APP_NAME, CONFIG_DIR_NAME, home_dir
from pi_nb.config import node_join as node_join
from pi_nb.config import node_resolve as node_resolve
from pi_nb.config import normalize_path as normalize_path
from pi_nb.config import resolve_path as resolve_path

# APP_NAME, CONFIG_DIR_NAME, node_join, node_resolve, normalize_path, resolve_path and the home
# directory are defined in pi_nb.config (Pi's config.ts) and importable from here too.
__all__ = [
    "APP_NAME",
    "CONFIG_DIR_NAME",
    "canonicalize_path",
    "is_local_path",
]

#: Node's ``os.homedir()`` as Pi reads it (:data:`pi_nb.config.home_dir`).
os_homedir = home_dir


def canonicalize_path(path: str) -> str:
    """Pi's ``canonicalizePath``: ``realpath`` of *path*, or *path* itself when that fails."""
    if not path:
        return path
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return path


def is_local_path(value: str) -> bool:
    """Pi's ``isLocalPath``: not an ``npm:``/``git:``/``github:``/``http(s):``/``ssh:`` source."""
    trimmed = js_trim(value)
    return not trimmed.startswith(("npm:", "git:", "github:", "http:", "https:", "ssh:"))


def is_under_path(target: str, root: str) -> bool:
    """Pi's ``isUnderPath``: *target* equals *root* or lies below it (string comparison)."""
    normalized_root = node_resolve(root)
    if target == normalized_root:
        return True
    prefix = normalized_root if normalized_root.endswith(os.sep) else normalized_root + os.sep
    return target.startswith(prefix)


# ---------------------------------------------------------------------------------------------
# JSON helpers


def js_sorted_keys(keys: Any) -> list[str]:
    """Keys sorted the way ``Object.keys(x).sort()`` sorts them (UTF-16 code unit order)."""
    return sorted(keys, key=_js_sort_key)


json_parse = js_json_parse

#: How deep a settings or trust file's JSON may nest: far beyond any real one, shallow enough for
#: every recursive step after the parse (copies, merges) to stay inside Python's recursion limit.
MAX_JSON_DEPTH = 100


def json_depth_over(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether parsed JSON nests objects or arrays more than ``limit`` levels deep (walked
    without recursion, stopping at the first value past the limit)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def write_file_atomic(path: str, text: str) -> None:
    """Write UTF-8 *text* to *path* through a temp file in the same directory and ``os.replace``.

    Readers (Pi or another pi_nb) never see a half-written file.
    """
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8", errors="surrogatepass"))
        if os.path.exists(path):
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            with contextlib.suppress(OSError):
                os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------------------------
# Locks

LOCK_MAX_ATTEMPTS = 10
LOCK_RETRY_DELAY_S = 0.020
#: proper-lockfile's default ``stale`` (ms): a lock directory older than this is abandoned.
PI_LOCK_STALE_S = 10.0


class LockContendedError(Exception):
    """Internal: the lock stayed held for all attempts (callers turn it into their own error)."""


def _break_stale_pi_lock(lock_path: str) -> None:
    # A *directory* at the lock path is a proper-lockfile lock held by Pi. proper-lockfile keeps
    # its mtime fresh while held and treats one older than 10 s as abandoned; do the same.
    with contextlib.suppress(OSError):
        st = os.stat(lock_path)
        if os.path.isdir(lock_path) and time.time() - st.st_mtime > PI_LOCK_STALE_S:
            os.rmdir(lock_path)


@contextlib.contextmanager
def pi_file_lock(
    lock_path: str,
    *,
    max_attempts: int = LOCK_MAX_ATTEMPTS,
    delay_s: float = LOCK_RETRY_DELAY_S,
) -> Iterator[None]:
    """Hold *lock_path* (Pi's ``<file>.lock``) for the duration of the block.

    Retries ``max_attempts`` times ``delay_s`` apart when another holder (pi_nb or Pi) has it,
    then raises :class:`LockContendedError`. Other failures (no permission to create the lock,
    a missing directory) propagate as :class:`OSError` at once, as in Pi.
    """
    lock = filelock.SoftFileLock(lock_path, timeout=0)
    for attempt in range(1, max_attempts + 1):
        try:
            lock.acquire(timeout=0)
            break
        except filelock.Timeout:
            pass
        except IsADirectoryError:
            _break_stale_pi_lock(lock_path)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.EISDIR):
                raise
        if attempt == max_attempts:
            raise LockContendedError(f"Lock file is already being held: {lock_path}")
        time.sleep(delay_s)
    try:
        yield
    finally:
        lock.release()


def is_existing_file(path: str) -> bool:
    """``existsSync(p) && statSync(p).isFile()`` without raising."""
    try:
        return os.path.isfile(path)
    except (OSError, ValueError):
        return False


def path_exists(path: str) -> bool:
    """``existsSync``: follows symlinks, never raises (a NUL byte or bad name is "missing")."""
    try:
        return os.path.exists(path)
    except (OSError, ValueError):
        return False


def posix_rel(root: str, path: str) -> str:
    """``toPosixPath(relative(root, path))``."""
    rel = os.path.relpath(path, root)
    if rel == ".":
        return ""
    return rel.replace(os.sep, "/") if os.sep != "/" else rel
