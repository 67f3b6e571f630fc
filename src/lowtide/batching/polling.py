"""Waiting for a batch to end: a status check every `poll_interval` seconds (`webhook_poll_interval` where webhooks
wake the wait), up to `max_wait`, then the timeout policy. Any provider's batches, through its `BatchBackend`; time
through the injected clock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from tenacity import AsyncRetrying, RetryCallState, retry_if_result

from lowtide.batching.adaptive import Schedule
from lowtide.batching.backend import BatchBackend, BatchLimits, Phase, RemoteBatch
from lowtide.batching.wakeups import sleep_or_woken
from lowtide.config.settings import BatchSettings, TimeoutPolicy
from lowtide.core.cancelling import cancel_requests, stop_if_cancelled
from lowtide.core.clock import Clock
from lowtide.errors import APIError, BatchTimeoutError

__all__ = ["max_wait_of", "wait_until_ended"]

_WINDOW_MARGIN = 600.0
"""Seconds beyond a provider's window a batch is still waited for, as the default `max_wait` is beyond a day."""

log = logging.getLogger(__name__)


async def wait_until_ended(
    backend: BatchBackend,
    batch: RemoteBatch | str,
    *,
    settings: BatchSettings,
    clock: Clock,
    started_at: float | None = None,
    on_status: Callable[[RemoteBatch], Awaitable[None] | None] | None = None,
    wakes: Sequence[asyncio.Event] = (),
    schedule: Schedule | None = None,
) -> RemoteBatch:
    """Poll until the batch ends and return it; past `max_wait`, cancel it or leave it (`on_timeout`) and raise
    `BatchTimeoutError`.

    A batch record in hand counts as the first look (one call fewer). The last sleep is shortened so that the final
    look happens exactly at `max_wait`. `started_at` (clock time) lets a caller that parked the batch count the wait
    from its submission. `on_status` sees every look (awaited, when it gives an awaitable: a ledger write). Any of
    `wakes` set (a webhook said the batch ended) ends the sleep at once: the next look is made then. With
    `webhook_poll_interval` set, the looks between are that far apart; with a `schedule` (adaptive polling), as far
    apart as it says at each look.
    """
    start = clock.now() if started_at is None else started_at
    max_wait = max_wait_of(settings, backend.codec.limits)
    deadline = start + max_wait
    known: list[RemoteBatch] = [batch] if isinstance(batch, RemoteBatch) else []
    batch_id = batch.id if isinstance(batch, RemoteBatch) else batch

    asked = cancel_requests()

    async def look() -> RemoteBatch:
        stop_if_cancelled(asked)  # a task asked to stop does not look again, even when a library lost the request
        seen = known.pop() if known else await backend.retrieve(batch_id)
        if on_status is not None:
            recorded = on_status(seen)
            if recorded is not None:
                await recorded
        return seen

    interval = settings.poll_interval if settings.webhook_poll_interval is None else settings.webhook_poll_interval

    def remaining(_: RetryCallState) -> float:
        now = clock.now()
        return max(0.0, min(interval if schedule is None else schedule(now), deadline - now))

    async def sleep(seconds: float) -> None:
        await sleep_or_woken(asyncio.ensure_future(clock.sleep(seconds)), wakes)

    def out_of_time(_: RetryCallState) -> bool:
        return clock.now() >= deadline

    def last_seen(state: RetryCallState) -> RemoteBatch:
        assert state.outcome is not None
        return state.outcome.result()

    polling: AsyncRetrying = AsyncRetrying(
        sleep=sleep if wakes else clock.sleep,
        wait=remaining,
        stop=out_of_time,
        retry=retry_if_result(lambda seen: seen.phase is not Phase.ENDED),
        retry_error_callback=last_seen,
    )
    latest: RemoteBatch = await polling(look)
    if latest.phase is Phase.ENDED:
        return latest
    canceled = False
    if settings.on_timeout is TimeoutPolicy.CANCEL:
        try:
            await backend.cancel(batch_id)
            canceled = True
        except APIError as exc:
            log.warning("Could not cancel batch %s after its maximum wait: %s", batch_id, exc)
    raise BatchTimeoutError(batch_id=batch_id, elapsed=clock.now() - start, max_wait=max_wait, canceled=canceled)


def max_wait_of(settings: BatchSettings, limits: BatchLimits) -> float:
    """How long a batch is waited for: the actor's `batch.max_wait` when it sets one; else the default, or the
    provider's own window and ten minutes more when that is longer (a provider whose batches run on past a day)."""
    if "max_wait" in settings.model_fields_set:
        return settings.max_wait
    return max(settings.max_wait, limits.max_hours * 3600 + _WINDOW_MARGIN)
