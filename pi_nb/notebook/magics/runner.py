"""The event loop of the agent: one loop on a daemon thread, and running coroutines on it from the
kernel's (synchronous) cells, with a kernel interrupt stopping the work they started."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any


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
