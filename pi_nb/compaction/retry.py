"""Bounded retry of one assistant call on transient provider errors (pi-ai ``utils/retry.ts``).

Summary requests (compaction, turn prefix, branch summary) go through :func:`retry_assistant_call`
with the session's ``retry`` settings, so one dropped stream does not fail a whole compaction.
Only errors that look transient are retried (overload, 429/5xx, network and stream drops,
``terminated``...); quota and billing exhaustion, overflow and other deterministic errors come back
at once. Aborts are never retried, and an abort during the back-off wait returns an aborted
message (the error text removed), so callers do not need to care when cancellation happened.

The wait is injectable (``sleep``), so tests never really wait.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pi_nb.compaction._jsre import compile_js_regex
from pi_nb.compaction.settings import RetrySettings
from pi_nb.messages import AssistantMessage
from pi_nb.providers.base import SupportsAbort

__all__ = [
    "RetryCallbacks",
    "is_retryable_assistant_error",
    "retry_assistant_call",
]

SleepFn = Callable[[int], Awaitable[None]]
"""``await sleep(delay_ms)``: the back-off wait (milliseconds, as Pi counts them)."""

_NON_RETRYABLE = compile_js_regex(
    "|".join(
        (
            "GoUsageLimitError",
            "FreeUsageLimitError",
            "Monthly usage limit reached",
            "available balance",
            "insufficient_quota",
            "out of budget",
            "quota exceeded",
            "billing",
        )
    )
)

_RETRYABLE = compile_js_regex(
    "|".join(
        (
            "overloaded",
            "rate.?limit",
            "too many requests",
            "429",
            "500",
            "502",
            "503",
            "504",
            "524",
            "service.?unavailable",
            "server.?error",
            "internal.?error",
            "provider.?returned.?error",
            "exceeded request buffer limit while retrying upstream",
            "network.?error",
            "connection.?error",
            "connection.?refused",
            "connection.?lost",
            "other side closed",
            "fetch failed",
            "getaddrinfo",
            "ENOTFOUND",
            "EAI_AGAIN",
            "upstream.?connect",
            "reset before headers",
            "socket hang up",
            "socket connection was closed",
            "timed? out",
            "timeout",
            "terminated",
            "websocket.?closed",
            "websocket.?error",
            "ended without",
            "stream ended before message_stop",
            "stream ended before a terminal response event",
            "http2 request did not get a response",
            "retry delay",
            "you can retry your request",
            "try your request again",
            "please retry your request",
            "ResourceExhausted",
        )
    )
)


def is_retryable_assistant_error(message: AssistantMessage) -> bool:
    """Pi's ``isRetryableAssistantError``: an ``error`` stop whose text looks transient."""
    if message.get("stopReason") != "error":
        return False
    text = message.get("errorMessage")
    if not isinstance(text, str) or not text:
        return False
    if _NON_RETRYABLE.search(text):
        return False
    return _RETRYABLE.search(text) is not None


@dataclass(frozen=True)
class RetryCallbacks:
    """Pi's ``RetryCallbacks``; each may be a plain function or a coroutine function.

    ``on_retry_scheduled(attempt, max_attempts, delay_ms, error_message)`` before each wait,
    ``on_retry_attempt_start()`` after the wait, ``on_retry_finished(success, attempt,
    error_message=None)`` once at the end when at least one retry was scheduled.
    """

    on_retry_scheduled: Callable[[int, int, int, str], Any] | None = None
    on_retry_attempt_start: Callable[[], Any] | None = None
    on_retry_finished: Callable[..., Any] | None = None


async def _call(fn: Callable[..., Any] | None, *args: Any) -> None:
    if fn is None:
        return
    result = fn(*args)
    if inspect.isawaitable(result):
        await result


async def _abortable_sleep(delay_ms: int, signal: SupportsAbort | None) -> None:
    """Wait ``delay_ms``, returning early (within 20 ms) once ``signal`` is aborted."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + delay_ms / 1000
    while True:
        if signal is not None and signal.aborted:
            return
        left = deadline - loop.time()
        if left <= 0:
            return
        await asyncio.sleep(min(left, 0.02) if signal is not None else left)


async def retry_assistant_call(
    produce: Callable[[], Awaitable[AssistantMessage]],
    # (the session's settings object, or Pi's camelCase settings dict: read with checks)
    policy: RetrySettings | Mapping[str, Any] | None = None,
    signal: SupportsAbort | None = None,
    callbacks: RetryCallbacks | None = None,
    *,
    sleep: SleepFn | None = None,
) -> AssistantMessage:
    """Pi's ``retryAssistantCall``: call ``produce()`` and retry transient errors with back-off.

    ``policy`` ``None`` or disabled returns the first response unchanged. Retry ``n`` waits
    ``base_delay_ms * 2**(n-1)``. The final error response is returned (never raised) when the
    error is not transient or the retries are used up.
    """
    settings = None if policy is None else RetrySettings.coerce(policy)
    max_attempts = settings.max_retries if settings is not None and settings.enabled else 0
    attempt = 0
    last_retry: tuple[int, str] | None = None
    cb = callbacks or RetryCallbacks()
    while True:
        response = await produce()
        stop_reason = response.get("stopReason")
        if stop_reason == "aborted":
            if last_retry is not None:
                await _call(cb.on_retry_finished, False, last_retry[0])
            return response
        if stop_reason != "error":
            if last_retry is not None:
                await _call(cb.on_retry_finished, True, last_retry[0])
            return response
        if attempt >= max_attempts or not is_retryable_assistant_error(response):
            if last_retry is not None:
                await _call(cb.on_retry_finished, False, last_retry[0], response.get("errorMessage"))
            return response
        assert settings is not None  # max_attempts > 0 implies a policy
        attempt += 1
        last_retry = (attempt, response.get("errorMessage") or "Unknown error")
        delay_ms = settings.base_delay_ms * 2 ** (attempt - 1)
        await _call(cb.on_retry_scheduled, attempt, max_attempts, delay_ms, last_retry[1])
        if signal is not None and signal.aborted:
            aborted_during_wait = True
        else:
            await (sleep(delay_ms) if sleep is not None else _abortable_sleep(delay_ms, signal))
            aborted_during_wait = signal is not None and signal.aborted
        if aborted_during_wait:
            await _call(cb.on_retry_finished, False, attempt, last_retry[1])
            # the same message without its errorMessage (an optional key), stopped as aborted
            rest = cast(AssistantMessage, {k: v for k, v in response.items() if k != "errorMessage"})
            rest["stopReason"] = "aborted"
            return rest
        await _call(cb.on_retry_attempt_start)
