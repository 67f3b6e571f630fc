"""What a rebuild reads from a provider's API (`lowtide ledger rebuild`), in neutral words: the accounts it reads
(`Source`), whose each listed batch is (`Owner`), and what a batch of the lost ledger's holds (`FoundBatch`, `Seen`).
Nothing here knows a provider: the backend lists and reads, the codec reads its own custom ids."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from lowtide.batching.backend import BatchBackend, Phase, RemoteBatch
from lowtide.config.settings import BatchSettings
from lowtide.ledger.records import OutcomeRow

__all__ = ["UNATTRIBUTED", "FoundBatch", "Owner", "Seen", "Source", "sources_of"]

UNATTRIBUTED = "(rebuilt)"
"""The actor a rebuilt request is recorded under when no actor given can be told to be its own."""


@dataclass(frozen=True)
class Source:
    """One account whose batches a rebuild reads: a provider's backend (its endpoint and credentials), the actors
    given that use it (name and model: a rebuilt request is its actor's when the model tells), how many attempts
    their requests are allowed, and how often a batch still running is looked at (`--wait`)."""

    backend: BatchBackend
    actors: tuple[tuple[str, str], ...] = ()
    max_attempts: int = 1
    poll_interval: float = 30.0

    @property
    def provider(self) -> str:
        return self.backend.name

    @property
    def endpoint(self) -> str:
        return self.backend.endpoint

    def actor_for(self, model: str) -> str:
        """The actor a request of `model` is recorded under: the one actor of the account, else the one of that
        model, else `UNATTRIBUTED`."""
        names = {name for name, _ in self.actors}
        if len(names) == 1:
            return next(iter(names))
        of_model = {name for name, actor_model in self.actors if actor_model == model}
        return next(iter(of_model)) if len(of_model) == 1 else UNATTRIBUTED


class Owner(StrEnum):
    """Whose a listed batch is, as far as its custom ids say, when no ledger's identity can be read from them."""

    HASHED = "hashed"
    """lowtide's, but every custom id a digest: whose ledger it is cannot be read."""
    FOREIGN = "foreign"
    """Not made by lowtide in a ledger (another program's, a user's own ids)."""
    UNSEEN = "unseen"
    """Still running, and the API shows its requests only in its results: nothing can be read of it until it ends."""
    GONE = "gone"
    """Ended, and neither its input nor its results can be read any more (past the API's retention)."""


@dataclass(slots=True)
class Seen:
    """One request of a batch, as the API still shows it."""

    custom_id: str
    key: str
    """Its key, or (its custom id hashed) `records.UNKEYED` and its custom id."""
    params: str | None = None
    """Its body as the ledger stores it (JSON), when the batch's input still shows it."""
    row: OutcomeRow | None = None
    """Its result from this batch (an ended batch's), as the ledger stores it when it is final."""
    retryable: bool = False
    """Whether that result is an error a later attempt may not meet (expired, a server's error): sent again while
    attempts are left."""
    model: str = ""


@dataclass
class FoundBatch:
    """A batch of the lost ledger's, with the requests it still shows."""

    source: Source
    remote: RemoteBatch
    owner: str | Owner
    """The identity its custom ids carry, or `Owner.HASHED`."""
    requests: dict[str, Seen] = field(default_factory=dict[str, Seen])
    """By custom id."""
    results_gone: bool = False
    """Ended, and its results no longer held by the API (past its retention): its requests cannot be recovered."""

    @property
    def ended(self) -> bool:
        return self.remote.phase is Phase.ENDED


def sources_of(given: Sequence[tuple[BatchBackend, str, str, BatchSettings]]) -> list[Source]:
    """The accounts the backends of `given` (each with its actor's name, model and batch settings; "" for a provider
    given without an actor) reach, each once: actors on one endpoint with one key read the same batches."""
    accounts: dict[tuple[str, str, str], Source] = {}
    for backend, actor, model, settings in given:
        account = (backend.name, backend.endpoint, backend.credential)
        known = accounts.get(account)
        actors = ((actor, model),) if actor else ()
        if known is None:
            accounts[account] = Source(backend, actors, settings.max_attempts, settings.poll_interval)
        else:
            accounts[account] = Source(
                known.backend,
                (*known.actors, *actors),
                max(known.max_attempts, settings.max_attempts),
                min(known.poll_interval, settings.poll_interval),
            )
    return list(accounts.values())
