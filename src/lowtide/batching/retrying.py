"""Retrying a batch API call that failed for a reason that may pass: backoff with jitter, the wait the API asked for
(`retry-after`), time through the injected clock. Every backend's non-create calls go through here; a create only
when the API refused it outright, never on doubt. A connection that could not be made at all (`APIUnreachableError`:
refused, unknown host) is almost always the configuration: it is tried again only a few times, within seconds
(`endpoints.UNREACHABLE_WAITS`), not for the half minute a transient failure gets."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception
from tenacity.wait import wait_exponential_jitter

from lowtide.config.endpoints import UNREACHABLE_WAITS
from lowtide.core.clock import Clock
from lowtide.errors import APIError, APIUnreachableError, RateLimitError

__all__ = ["retrying"]

T = TypeVar("T")


async def retrying(
    call: Callable[[], Awaitable[T]],
    *,
    translate: Callable[[], AbstractContextManager[None]],
    clock: Clock,
    retries: int,
    retry_on: tuple[type[APIError], ...] | None = None,
) -> T:
    """Run `call` with the provider's errors translated (`translate`), retrying transient failures up to `retries`
    times with backoff and jitter.

    `retry_on` narrows what is retried; by default every error that says it is retryable is. A wait the API asked
    for (`retry-after`) is honoured. A connection that could not be made is retried at most
    `len(UNREACHABLE_WAITS)` times (and never more than `retries`), after those short waits, whatever `retry_on`
    says: nothing was sent.
    """
    backoff = wait_exponential_jitter(initial=1, max=60)
    unreachable = 0

    def should_retry(exc: BaseException) -> bool:
        nonlocal unreachable
        if isinstance(exc, APIUnreachableError):
            unreachable += 1
            return unreachable <= min(retries, len(UNREACHABLE_WAITS))
        if retry_on is not None:
            return isinstance(exc, retry_on)
        return isinstance(exc, APIError) and exc.retryable

    def wait(state: RetryCallState) -> float:
        exc = _error(state)
        if isinstance(exc, APIUnreachableError):
            return UNREACHABLE_WAITS[unreachable - 1]
        if isinstance(exc, RateLimitError) and exc.retry_after is not None:
            return exc.retry_after
        return backoff(state)

    def stop(state: RetryCallState) -> bool:
        # Past `retries` attempts; an unreachable API has its own, smaller count (`should_retry`).
        return state.attempt_number > retries and not isinstance(_error(state), APIUnreachableError)

    async def translated() -> T:
        with translate():
            return await call()

    attempts: AsyncRetrying = AsyncRetrying(
        sleep=clock.sleep,
        stop=stop,
        wait=wait,
        retry=retry_if_exception(should_retry),
        reraise=True,
    )
    return await attempts(translated)


def _error(state: RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome is not None else None
