"""Running a coroutine from synchronous code: the one helper behind every blocking entry point
(``AgentSession.run``, ``run_tool``, the notebook views' buttons).

Without a running event loop the coroutine runs with :func:`asyncio.run`. Inside one (a Jupyter
cell, a widget callback) a blocking call cannot wait on that loop, so the coroutine runs on a
worker thread with a loop of its own and the call blocks until it ends.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

_T = TypeVar("_T")


def run_sync(coro: Coroutine[Any, Any, _T], *, thread_name: str = "pi_nb-run") -> _T:
    """Run ``coro`` to completion and return its result (or raise its exception).

    ``thread_name`` prefixes the worker thread's name when a loop is already running.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=thread_name) as pool:
        return pool.submit(asyncio.run, coro).result()
