"""Per-file serialisation of edits and writes (Pi's ``withFileMutationQueue``).

Tools run in parallel by default, so two ``edit`` calls on one file in the same assistant turn
would otherwise both read the original and the second write would drop the first change. Pi
queues mutations per file; the key is the file's real path (symlinks resolved), or the resolved
path when the file does not exist yet. A path whose real path cannot be computed for another reason
(a symlink loop) fails with Node's ``realpath`` error text.

Queues are per event loop: a notebook may run tools on a worker thread's loop while tests use
``asyncio.run``; asyncio locks must not cross loops.
"""

from __future__ import annotations

import asyncio
import errno
import os
import weakref
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pi_nb.tools._node import node_fs_error
from pi_nb.tools.paths import node_resolve

__all__ = ["with_file_mutation_queue"]

T = TypeVar("T")

_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def _queue_key(file_path: str) -> str:
    resolved = node_resolve(file_path)
    try:
        os.stat(resolved)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return resolved
        raise node_fs_error(exc, "realpath", resolved) from None
    return os.path.realpath(resolved)


async def with_file_mutation_queue(file_path: str, fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` after every earlier mutation of the same file (in this event loop) finished."""
    key = _queue_key(file_path)
    loop = asyncio.get_running_loop()
    locks = _locks.setdefault(loop, {})
    lock = locks.get(key)
    if lock is None:
        lock = locks[key] = asyncio.Lock()
    try:
        async with lock:
            return await fn()
    finally:
        if not lock.locked() and locks.get(key) is lock and not getattr(lock, "_waiters", None):
            del locks[key]
