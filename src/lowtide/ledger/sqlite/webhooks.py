"""`WebhookRows`: the webhook events a SQLite ledger received (`roles.Webhooks`), in its `webhook_events` table."""

from __future__ import annotations

from lowtide.ledger.sqlite.connection import SqliteFile
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

__all__ = ["WebhookRows"]


class WebhookRows(SqliteFile):
    def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        d = delivery
        with self.transaction() as db:
            row = db.execute(
                "SELECT delivery FROM webhook_events WHERE provider = ? AND event_id = ?", (d.provider, d.event_id)
            ).fetchone()
            if row is not None:
                return Receipt.REPLAYED if row[0] == d.delivery else Receipt.REDELIVERED
            db.execute(
                "INSERT INTO webhook_events (provider, event_id, delivery, provider_batch_id, kind, batch_id,"
                " received_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (d.provider, d.event_id, d.delivery, d.provider_batch_id, d.kind, d.batch_id, d.received_at),
            )
        return Receipt.NEW

    def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        with self._reading() as db:
            row = db.execute(
                "SELECT 1 FROM webhook_events WHERE provider = ? AND provider_batch_id = ? LIMIT 1",
                (provider, provider_batch_id),
            ).fetchone()
        return row is not None
