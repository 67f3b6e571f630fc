"""Tickets: where a parked request stands, as its caller sees it, read from the ledger alone."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel

from lowtide.errors import (
    ConfigurationError,
)
from lowtide.ledger.store import (
    BatchRecord,
    BatchState,
    LedgerStore,
    RequestRecord,
    RequestState,
)

__all__ = ["Ticket", "ticket_for", "ticket_of", "ticket_state"]


def ticket_for(ledger: LedgerStore, key: str) -> Ticket:
    """Where the request `key` stands, from the ledger alone (no API call, no event loop needed)."""
    record = ledger.request(key)
    return ticket_of(key, record, ledger.batch(record.batch_id) if record is not None and record.batch_id else None)


def ticket_of(key: str, record: RequestRecord | None, batch: BatchRecord | None) -> Ticket:
    """The ticket of `key` from its record and its batch's, as the ledger gave them (None: no such key)."""
    if record is None:
        raise ConfigurationError(f"The ledger has no request with key {key!r}.", field="key")
    return Ticket.of(record, batch)


class Ticket(BaseModel):
    """The handle of a parked request."""

    key: str
    actor: str
    state: str
    batch_id: str | None
    """The API's batch id, once the batch exists."""
    ledger_batch_id: str | None
    attempts: int
    cost_usd: Decimal | None = None

    @classmethod
    def of(cls, record: RequestRecord, batch: BatchRecord | None) -> Ticket:
        return cls(
            key=record.key,
            actor=record.actor,
            state=ticket_state(record, batch),
            batch_id=batch.provider_batch_id if batch is not None else None,
            ledger_batch_id=record.batch_id,
            attempts=record.attempts,
            cost_usd=record.cost_usd,
        )


def ticket_state(record: RequestRecord, batch: BatchRecord | None) -> str:
    """The state a user sees: `waiting-on-batch`, `ended`, `collected`, `canceled`, `expired` or `failed`."""
    match record.state:
        case RequestState.SUCCEEDED:
            return "collected"
        case RequestState.FAILED | RequestState.CANCELED | RequestState.EXPIRED:
            return record.state.value
        case RequestState.WAITING if batch is not None and batch.state is BatchState.ENDED:
            return "ended"
        case _:
            return record.state.value
