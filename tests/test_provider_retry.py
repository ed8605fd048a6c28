"""The shared provider retry (pi-ai's utils/provider-retry): policy, server delays, abort in the wait."""

from __future__ import annotations

import asyncio
import time

import pytest

from pi_nb.providers.provider_retry import (
    ProviderFailure,
    is_retryable,
    js_parse_float,
    retry_delay_ms,
    retry_provider_request,
)
from pi_nb.tools.base import AbortController


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (None, {}, True),
        (408, {}, True),
        (409, {}, True),
        (429, {}, True),
        (500, {}, True),
        (503, {"x-should-retry": "false"}, False),
        (400, {"x-should-retry": "true"}, True),
        (400, {}, False),
        (404, {"x-should-retry": "maybe"}, False),
    ],
)
def test_policy(status: int | None, headers: dict[str, str], expected: bool) -> None:
    assert is_retryable(ProviderFailure(status, headers, "m")) is expected


def test_parse_float_reads_a_prefix_as_javascript() -> None:
    assert js_parse_float(" 2.5s") == 2.5
    assert js_parse_float("1e3x") == 1000
    assert js_parse_float("-Infinity") == float("-inf")
    assert js_parse_float("abc") != js_parse_float("abc")  # NaN


def test_server_delays() -> None:
    assert retry_delay_ms(ProviderFailure(429, {"retry-after-ms": "1500.5"}, "m"), 0, None) == 1500.5
    assert retry_delay_ms(ProviderFailure(429, {"retry-after": "2s"}, "m"), 0, None) == 2000
    # an unreadable retry-after-ms falls through to retry-after
    assert (
        retry_delay_ms(ProviderFailure(429, {"retry-after-ms": "x", "retry-after": "3"}, "m"), 0, None)
        == 3000
    )
    with pytest.raises(RuntimeError, match=r"^Server requested 61s retry delay \(max: 60s\)\. boom$"):
        retry_delay_ms(ProviderFailure(429, {"retry-after": "60.5"}, "boom"), 0, None)
    with pytest.raises(RuntimeError, match=r"^Server requested Infinitys retry delay \(max: 2s\)\. m$"):
        retry_delay_ms(ProviderFailure(429, {"retry-after-ms": "Infinity"}, "m"), 0, 1500)
    assert retry_delay_ms(ProviderFailure(429, {"retry-after": "600"}, "m"), 0, 0) == 600_000  # 0: no limit


def test_backoff_with_jitter() -> None:
    for index, base in ((0, 500), (1, 1000), (3, 4000), (5, 8000), (9, 8000)):
        for _ in range(50):
            delay = retry_delay_ms(ProviderFailure(500, {}, "m"), index, None)
            assert base * 0.75 <= delay <= base


class _Failure(Exception):
    pass


def _read(error: BaseException) -> ProviderFailure | None:
    return (
        ProviderFailure(getattr(error, "status", None), {}, str(error))
        if isinstance(error, _Failure)
        else None
    )


def test_retries_then_succeeds_and_counts() -> None:
    calls = 0

    async def request() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            error = _Failure("busy")
            error.status = 503  # type: ignore[attr-defined]
            raise error
        return "ok"

    async def run() -> str:
        return await retry_provider_request(request, _read, max_retries=2, max_retry_delay_ms=None)

    started = time.monotonic()
    assert asyncio.run(run()) == "ok"
    assert calls == 3
    assert time.monotonic() - started >= 0.375 + 0.75 - 0.01  # two backoff waits


def test_no_retries_by_default_and_unknown_errors_pass() -> None:
    calls = 0

    async def request() -> str:
        nonlocal calls
        calls += 1
        raise _Failure("busy")

    with pytest.raises(_Failure):
        asyncio.run(retry_provider_request(request, _read))
    assert calls == 1

    async def other() -> str:
        raise KeyError("x")

    with pytest.raises(KeyError):
        asyncio.run(retry_provider_request(other, _read, max_retries=5))


def test_abort_during_the_wait_ends_it_at_once() -> None:
    controller = AbortController()

    async def request() -> str:
        asyncio.get_running_loop().call_later(0.05, controller.abort)
        raise _Failure("busy")

    async def run() -> str:
        return await retry_provider_request(
            request, _read, max_retries=3, signal=controller.signal, fail=_Failure
        )

    started = time.monotonic()
    with pytest.raises(_Failure, match=r"^Request aborted$"):
        asyncio.run(run())
    assert time.monotonic() - started < 0.3  # the first backoff would be at least 0.375 s
