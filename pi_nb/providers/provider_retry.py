"""pi-ai's provider retry (``utils/provider-retry``): one failed request tried again, as the
OpenAI and Anthropic JavaScript SDKs would, but with a wait that an abort ends at once.

A provider error is one with an HTTP status (or none at all: a lost connection) and the answer's
headers. It is retried when the server says so (``x-should-retry: true``), never when it says
``false``, else for no status, 408, 409, 429 and 5xx. The wait is the server's ``retry-after-ms``
or ``retry-after`` (seconds or an HTTP date), read the way JavaScript's ``Number.parseFloat`` and
``Date.parse`` read them; a server delay above the limit (60 s unless given; 0 turns the limit
off) fails at once with pi-ai's text ``Server requested Ns retry delay (max: Ms). <message>``.
Without a server delay the wait is exponential (0.5 s doubling, at most 8 s) with up to 25 %
jitter. An abort, during a request or during the wait, ends it with ``Request aborted``.

The number of retries is the caller's: Pi leaves its provider retry setting unset, so none by
default (``RemoteModel(max_retries=...)`` asks for them).
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple, TypeVar

from pi_nb._js import js_number_to_string

__all__ = [
    "DEFAULT_MAX_RETRY_DELAY_MS",
    "ProviderFailure",
    "is_retryable",
    "js_parse_float",
    "retry_delay_ms",
    "retry_provider_request",
]

DEFAULT_MAX_RETRY_DELAY_MS = 60_000

_T = TypeVar("_T")


class ProviderFailure(NamedTuple):
    """What the retry policy reads of a failed request: its status (``None`` without an answer),
    the answer's headers (lower-case names) and the error's message."""

    status: int | None
    headers: Mapping[str, str]
    message: str


_JS_FLOAT_PREFIX = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def js_parse_float(text: str) -> float:
    """JavaScript's ``Number.parseFloat``: the number at the start of ``text`` (after blanks), else NaN."""
    match = _JS_FLOAT_PREFIX.match(text.lstrip())
    return float(match.group(0).replace("Infinity", "inf")) if match else math.nan


def _js_date_parse(text: str) -> float:
    """``Date.parse`` of an HTTP date, in milliseconds (NaN when it is not one)."""
    try:
        return parsedate_to_datetime(text).timestamp() * 1000
    except (TypeError, ValueError, IndexError, OverflowError):
        return math.nan


def _ceil_seconds(ms: float) -> str:
    """``Math.ceil(ms / 1000)`` as a template literal prints it."""
    seconds = ms / 1000
    return js_number_to_string(seconds if math.isinf(seconds) or math.isnan(seconds) else math.ceil(seconds))


def is_retryable(error: ProviderFailure) -> bool:
    """pi-ai's ``isRetryableProviderError`` (the SDKs' policy)."""
    should = error.headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    status = error.status
    return status is None or status in (408, 409, 429) or status >= 500


def retry_delay_ms(error: ProviderFailure, retry_index: int, max_retry_delay_ms: float | None) -> float:
    """pi-ai's ``getRetryDelayMs``; raises ``RuntimeError`` with pi-ai's text when the server asks
    for longer than the limit."""

    def validate(delay: float) -> float:
        limit = DEFAULT_MAX_RETRY_DELAY_MS if max_retry_delay_ms is None else max_retry_delay_ms
        if limit > 0 and delay > limit:
            raise RuntimeError(
                f"Server requested {_ceil_seconds(delay)}s retry delay (max: {_ceil_seconds(limit)}s). {error.message}"
            )
        return delay

    after_ms = error.headers.get("retry-after-ms")
    if after_ms:
        value = js_parse_float(after_ms)
        if not math.isnan(value):
            return validate(value)
    after = error.headers.get("retry-after")
    if after:
        seconds = js_parse_float(after)
        delay = _js_date_parse(after) - time.time() * 1000 if math.isnan(seconds) else seconds * 1000
        return validate(delay)
    exponential = min(0.5 * 2**retry_index, 8) * 1000
    return float(exponential * (1 - random.random() * 0.25))


async def _abortable_sleep(ms: float, signal: Any) -> bool:
    """Wait ``ms`` milliseconds (NaN and negatives: no wait, as ``setTimeout``); ``False`` when
    ``signal`` was aborted before or during the wait."""
    seconds = 0.0 if math.isnan(ms) else max(0.0, ms) / 1000
    if signal is None:
        await asyncio.sleep(seconds)
        return True
    if signal.aborted:
        return False
    wait = getattr(signal, "wait", None)
    if wait is None:  # a bare ``aborted`` flag: look at it now and then
        deadline = time.monotonic() + seconds
        while not signal.aborted:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            await asyncio.sleep(min(left, 0.05))
        return False
    waiter = asyncio.ensure_future(wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=seconds)
    finally:
        if not waiter.done():
            waiter.cancel()
    return not done


async def retry_provider_request(
    request: Callable[[], Awaitable[_T]],
    provider_error: Callable[[BaseException], ProviderFailure | None],
    *,
    max_retries: int = 0,
    max_retry_delay_ms: float | None = None,
    signal: Any = None,
    fail: Callable[[str], BaseException] = RuntimeError,
) -> _T:
    """pi-ai's ``retryProviderRequest``: ``request()`` again after a retryable provider error, up to
    ``max_retries`` times. ``provider_error`` reads an exception as a provider error (``None``: not
    one, never retried). ``fail`` makes the exception for pi-ai's own texts (``Request aborted``,
    the over-long server delay)."""
    retries = max(0, int(max_retries))
    remaining = retries
    while True:
        try:
            return await request()
        except Exception as error:
            if signal is not None and signal.aborted:
                raise fail("Request aborted") from error
            read = provider_error(error)
            if remaining <= 0 or read is None or not is_retryable(read):
                raise
            retry_index = retries - remaining
            remaining -= 1
            try:
                delay = retry_delay_ms(read, retry_index, max_retry_delay_ms)
            except RuntimeError as too_long:
                raise fail(str(too_long)) from error
            if not await _abortable_sleep(delay, signal):
                raise fail("Request aborted") from error
