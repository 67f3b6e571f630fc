"""What the ledger keeps of the notices lowtide sends the user's server (`batch.notify`): each once by its event id,
until it is delivered or given up, so that a notice outlives the process that made it (`roles.Outbox`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Notice"]


@dataclass(frozen=True, slots=True)
class Notice:
    """One notice to send: the message every try of it POSTs, and where it stands."""

    event_id: str
    """The notice's `webhook-id`, the same on every try and from every process: derived from what it tells."""
    kind: str
    """What it tells (`batch.ended`, `run.ended`)."""
    url: str
    secret_env: str
    """The environment variable holding the secret it is signed with: the name, never the secret."""
    body: bytes
    """The JSON POSTed, as made once: ids, states and counts, never a key, prompt or answer."""
    made_at: float
    give_up_at: float
    """After this moment (`batch.notify.deliver_for` after it was made) no process tries it again."""
    tries: int = 0
    """The tries made of it so far, by every process."""
    next_at: float = 0.0
    """When it is next due: a process that claims due notices takes it from then on."""
