"""The webhook events a PostgreSQL ledger received (`roles.Webhooks`), as operations (`steps.Op`) its sync and async
faces both run: each event once, and a new one about a batch announced to every host in the transaction that records
it (`webhook_records.webhook_notice`), so that the host polling the batch looks at once."""

from __future__ import annotations

from lowtide.ledger.postgres.steps import NOTIFY, Op, Sql
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery, webhook_notice

__all__ = ["record_webhook", "webhook_seen"]


def record_webhook(delivery: WebhookDelivery, mark: str) -> Op[Receipt]:
    """`mark`: this operation's own, made once per call, so that the operation made again after a commit whose answer
    was lost finds its own row and answers what it did the first time."""
    d = delivery
    reply = yield Sql(
        "INSERT INTO webhook_events (provider, event_id, delivery, provider_batch_id, kind, batch_id, received_at,"
        " recorded_by) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (provider, event_id) DO NOTHING"
        " RETURNING 1",
        (d.provider, d.event_id, d.delivery, d.provider_batch_id, d.kind, d.batch_id, d.received_at, mark),
    )
    if reply.one() is None:
        first = (
            yield Sql(
                "SELECT delivery, recorded_by FROM webhook_events WHERE provider = %s AND event_id = %s",
                (d.provider, d.event_id),
            )
        ).one()
        assert first is not None  # (rows are never deleted)
        if first[1] != mark:
            return Receipt.REPLAYED if first[0] == d.delivery else Receipt.REDELIVERED
    if d.batch_id is not None:
        yield Sql(NOTIFY, (webhook_notice(d.batch_id),))
    return Receipt.NEW


def webhook_seen(provider: str, provider_batch_id: str) -> Op[bool]:
    reply = yield Sql(
        "SELECT 1 FROM webhook_events WHERE provider = %s AND provider_batch_id = %s LIMIT 1",
        (provider, provider_batch_id),
    )
    return reply.one() is not None
