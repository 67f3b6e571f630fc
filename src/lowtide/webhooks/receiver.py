"""The webhook endpoint (`POST /webhooks/<provider>`, in `lowtide serve --webhooks` and `lowtide webhooks`): a body
of at most `max_body_bytes`, verified by the actor's provider (`Provider.webhook_verifier`), recorded once in the
ledger by its event id, and the batch's collection started at once: its poller woken in this process (`WAKEUPS`) and
on every host of the ledger (the store's notices), or, where no live process polls it, collected here (looked at
again until the API's status agrees). An event that says it is of another ledger's batch (the identity its batch
was created with, echoed) is ignored, unrecorded. A refused webhook (unsigned, wrongly signed, stale, replayed, too
large) is answered 401 or 400 and logged without its body; nothing is recorded or changed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lowtide.actor import Actor
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.batching.keys import owner_alive, owner_id
from lowtide.batching.wakeups import WAKEUPS
from lowtide.config.settings import BatchSettings, TimeoutPolicy
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import ConfigurationError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.records import BatchRecord
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery
from lowtide.messages.wire import Refusal
from lowtide.serve.body import read_body
from lowtide.webhooks.events import DEFAULT_TOLERANCE, BatchEvent, WebhookRefused, WebhookVerifier

__all__ = ["COLLECT_BACKOFF", "MAX_WEBHOOK_BYTES", "webhook_path", "webhook_route"]

MAX_WEBHOOK_BYTES = 65_536
"""The largest webhook body taken: a batch's event is well under a kilobyte."""

COLLECT_BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)
"""Seconds between the receiver's looks at a batch nobody polls whose webhook came before the API's status said it
ended: ten looks over eight and a half minutes, most within seconds of the webhook (OpenAI's status catches up in
seconds; the slow poll is there for the rest)."""

_log = logging.getLogger("lowtide.webhooks")


def webhook_path(actor: Actor) -> str:
    """Where the webhooks of `actor`'s provider are received."""
    return f"/webhooks/{actor.provider(BatchProcessingMode.BATCH).name}"


def webhook_route(
    actor: Actor, *, max_body_bytes: int = MAX_WEBHOOK_BYTES, tolerance: float = DEFAULT_TOLERANCE
) -> Route:
    """The route receiving the webhooks of `actor`'s batch provider for the actor's ledger. `ConfigurationError` when
    the provider sends none lowtide reads, or its secret is not set."""
    provider = actor.provider(BatchProcessingMode.BATCH)
    verifier = provider.webhook_verifier()
    if verifier is None:
        raise ConfigurationError(
            f"The provider {provider.name!r} of the actor {actor.name!r} sends no webhooks lowtide can receive.",
            field="provider",
        )
    return Route(webhook_path(actor), _Receiver(actor, provider.name, verifier, max_body_bytes, tolerance).receive,
                 methods=["POST"])  # fmt: skip


class _Receiver:
    def __init__(
        self, actor: Actor, provider: str, verifier: WebhookVerifier, max_body_bytes: int, tolerance: float
    ) -> None:
        self._actor = actor
        self._provider = provider
        self._verifier = verifier
        self._limit = max_body_bytes
        self._tolerance = tolerance
        self._collecting: dict[str, asyncio.Task[None]] = {}
        """The collections this receiver started, by batch (one at a time each; kept until done)."""

    async def _verified(self, body: bytes, headers: Mapping[str, str]) -> BatchEvent | None:
        """The verifier's reading of a request: in a thread where it says it may block on reading its keys over the
        network (a JWKS: `may_block`), never on the event loop; on the loop otherwise (a signature checked against a
        secret is microseconds of CPU, and a thread's hop would let the loop's other work go first)."""
        may_block = getattr(self._verifier, "may_block", None)
        if callable(may_block) and may_block(headers):
            return await asyncio.to_thread(self._verifier.verify, body, headers, tolerance=self._tolerance)
        return self._verifier.verify(body, headers, tolerance=self._tolerance)

    async def receive(self, request: Request) -> Response:
        client = request.client.host if request.client else "?"
        try:
            body = await read_body(request, self._limit)
            event = await self._verified(body, request.headers)
        except Refusal as refusal:
            return _refused(client, refusal.status, refusal.message)
        except WebhookRefused as refused:
            return _refused(client, refused.status, refused.reason)
        except ClientDisconnect:
            return Response(status_code=400)
        if event is None:
            return JSONResponse({"received": "ignored: not a batch's end"})
        return await self._received(client, event)

    async def _received(self, client: str, event: BatchEvent) -> Response:
        ledger = async_ledger(self._actor.ledger)
        if event.ledger is not None and event.ledger != await ledger.identity():
            # Two ledgers' jobs calling one endpoint: this one's receiver leaves the other's events alone, unrecorded.
            _log.info("Webhook %s (%s) about %s: a batch of another ledger (%s); ignored.", event.event_id,
                      event.kind, event.provider_batch_id, event.ledger)  # fmt: skip
            return JSONResponse({"received": "ignored: a batch of another ledger"})
        batch = await ledger.batch(event.provider_batch_id)
        if batch is not None and batch.provider != self._provider:
            batch = None
        delivery = WebhookDelivery(
            self._provider, event.event_id, event.delivery, event.provider_batch_id, event.kind,
            batch.id if batch is not None else None, self._actor.clock.now(),
        )  # fmt: skip
        receipt = await ledger.record_webhook(delivery)
        if receipt is Receipt.REPLAYED:
            return _refused(client, 400, f"event {event.event_id} replayed (received before in this very delivery)")
        if receipt is Receipt.REDELIVERED:
            return JSONResponse({"received": "again: acted on when first received"})
        if batch is None and event.ledger is not None:  # said to be this ledger's: its create is still being recorded
            _log.info("Webhook %s (%s) about %s: a batch of this ledger not recorded yet; kept for its poller.",
                      event.event_id, event.kind, event.provider_batch_id)  # fmt: skip
            return JSONResponse({"received": "a batch of this ledger not recorded yet: kept for its poller"})
        if batch is None:
            _log.info("Webhook %s (%s) about %s: not a batch of this ledger's; recorded, nothing else done.",
                      event.event_id, event.kind, event.provider_batch_id)  # fmt: skip
            return JSONResponse({"received": "not a batch of this ledger"})
        _log.info("Webhook %s: %s %s (%s): collecting it now.", event.event_id, event.kind, batch.provider_batch_id,
                  batch.id)  # fmt: skip
        if WAKEUPS.wake(batch.id) == 0:
            self._collect_unless_polled(batch)
        return JSONResponse({"received": "collecting"})

    def _collect_unless_polled(self, batch: BatchRecord) -> None:
        """Collect `batch` here when no live process polls it (its poller elsewhere is woken by the ledger's notice)."""
        if not batch.state.outstanding or batch.id in self._collecting:
            return
        if owner_alive(batch.owner, batch.owner_until, self._actor.clock.now()):
            return
        task = asyncio.ensure_future(self._collect(batch))
        self._collecting[batch.id] = task
        task.add_done_callback(lambda _: self._collecting.pop(batch.id, None))

    async def _collect(self, batch: BatchRecord) -> None:
        """Collect `batch` through the actor's own batch backend (its client, key and address), as `lowtide collect`
        would, looking again after each of `COLLECT_BACKOFF` while the API's status does not yet say it ended (a
        webhook may come before the status agrees), until it is collected or a live process polls it. Past the last
        look the slow poll, the next webhook or `lowtide collect` takes over."""
        clock = self._actor.clock
        ledger = async_ledger(self._actor.ledger)
        for wait in (0.0, *COLLECT_BACKOFF):
            if wait:
                await clock.sleep(wait)
                now = await ledger.batch(batch.id)
                if now is None or not now.state.outstanding:
                    return
                if owner_alive(now.owner, now.owner_until, clock.now()):  # a poller took it up: it was woken
                    return
                batch = now
            if await self._look(batch):
                return
        _log.warning("Batch %s had not ended %g s after its webhook (%d looks): left to the slow poll.",
                     batch.id, sum(COLLECT_BACKOFF), len(COLLECT_BACKOFF) + 1)  # fmt: skip

    async def _look(self, batch: BatchRecord) -> bool:
        """One look at `batch`, collecting it if the API says it ended; whether it is collected."""
        actor = self._actor
        settings = BatchSettings(max_wait=1e-9, on_timeout=TimeoutPolicy.LEAVE)
        engine = BatchEngine(actor.batch_backend("webhooks"), actor.ledger, endpoint=batch.endpoint,
                             settings=settings, clock=actor.clock, owner=owner_id())  # fmt: skip
        try:
            failures = await engine.collect_once([batch])
        finally:
            await engine.aclose()
        for failure in failures:  # looked at again after the next wait
            _log.warning("Could not collect batch %s on its webhook: %s: %s", batch.id, type(failure).__name__, failure)
        now = await async_ledger(actor.ledger).batch(batch.id)
        return now is None or not now.state.outstanding


def _refused(client: str, status: int, reason: str) -> JSONResponse:
    _log.warning("Refused a webhook from %s (%d): %s", client, status, reason)
    return JSONResponse({"error": reason}, status_code=status)
