"""What the ledger keeps of the providers' webhooks it received: each verified event once, by its id, so that a replay
changes nothing and a redelivery is known as one (`roles.Webhooks`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Receipt", "WebhookDelivery", "webhook_notice"]


class Receipt(StrEnum):
    """What a verified event's arrival was, by what the ledger held of its id before it."""

    NEW = "new"
    """First seen: recorded now, and acted on."""
    REDELIVERED = "redelivered"
    """Seen before, delivered again (another attempt, signed at another moment): acknowledged, nothing done again."""
    REPLAYED = "replayed"
    """Seen before in this very delivery (the same id, signed at the same moment): a copy sent again, refused."""


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    """One verified delivery of a provider's event about a batch."""

    provider: str
    event_id: str
    """The provider's id of the event, the same on each of its deliveries."""
    delivery: str
    """What tells one delivery of the event from another (the moment it was signed)."""
    provider_batch_id: str
    kind: str
    """The provider's name of what happened (`batch.completed`)."""
    batch_id: str | None
    """The ledger's batch the event is about, if it holds one."""
    received_at: float


def webhook_notice(batch_id: str) -> str:
    """What a store announces (`BatchNotices`) when a webhook says the batch `batch_id` ended: a name of its own, so
    that the poller's own writes (each a notice of the batch) never wake it."""
    return f"webhook:{batch_id}"
