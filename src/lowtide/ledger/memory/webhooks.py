"""`MemoryWebhooks`: the webhook events a `MemoryLedger` received (`roles.Webhooks`), under the ledger's one lock,
with the meaning the SQLite store's `webhook_events` table gives them."""

from __future__ import annotations

import threading

from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

__all__ = ["MemoryWebhooks"]


class MemoryWebhooks:
    """Each event's first delivery, by provider and event id."""

    lock: threading.RLock

    def __init__(self) -> None:
        self._webhooks: dict[tuple[str, str], WebhookDelivery] = {}
        self._webhook_batches: set[tuple[str, str]] = set()

    def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        with self.lock:
            first = self._webhooks.get((delivery.provider, delivery.event_id))
            if first is not None:
                return Receipt.REPLAYED if first.delivery == delivery.delivery else Receipt.REDELIVERED
            self._webhooks[delivery.provider, delivery.event_id] = delivery
            self._webhook_batches.add((delivery.provider, delivery.provider_batch_id))
            return Receipt.NEW

    def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        with self.lock:
            return (provider, provider_batch_id) in self._webhook_batches
