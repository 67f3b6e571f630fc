"""Retrying a batch API call that failed for a reason that may pass: backoff with jitter, the wait the API asked for
(`retry-after`), time through the injected clock. Every backend's non-create calls go through here; a create only
when the API refused it outright, never on doubt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from lowtide.clock import Clock
from lowtide.errors import APIError, RateLimitError

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
    for (`retry-after`) is honoured.
    """
    backoff = wait_exponential_jitter(initial=1, max=60)

    def should_retry(exc: BaseException) -> bool:
        if retry_on is not None:
            return isinstance(exc, retry_on)
        return isinstance(exc, APIError) and exc.retryable

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, RateLimitError) and exc.retry_after is not None:
            return exc.retry_after
        return backoff(state)

    async def translated() -> T:
        with translate():
            return await call()

    attempts: AsyncRetrying = AsyncRetrying(
        sleep=clock.sleep,
        stop=stop_after_attempt(retries + 1),
        wait=wait,
        retry=retry_if_exception(should_retry),
        reraise=True,
    )
    return await attempts(translated)
