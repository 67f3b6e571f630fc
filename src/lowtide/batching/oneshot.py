"""One batch, outside the ledger: any provider's requests sent through its `BatchBackend` as one batch (one per group
of requests its batches must keep apart), waited for, and answered request by request. What a batch provider's
`complete_many` does when called directly, without the durable engine's keys, coalescing or exactly-once create
(`OneBatchCalls` gives a provider that and `complete`)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from lowtide.batching.backend import NO_STEPS, BatchBackend, ResultLine, UnreadableLine
from lowtide.batching.outcomes import custom_id_of, outcome_of
from lowtide.batching.polling import wait_until_ended
from lowtide.config.settings import BatchSettings
from lowtide.core.clock import Clock
from lowtide.errors import ActorError, BatchRequestError, BatchTimeoutError, ConfigurationError
from lowtide.ledger.store import stored_json
from lowtide.messages.answers import Outcome, Settled
from lowtide.messages.structured import parsed_outcome
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["OneBatchCalls", "run_batch"]

log = logging.getLogger(__name__)

B = TypeVar("B", bound=BatchBackend)


class OneBatchCalls(Generic[B]):
    """What a batch provider called directly does (placed before `Provider` among its bases): `complete_many` one
    batch per group through `run_batch`, `complete` one batch of its own, `batch_backend()` and `endpoint` its
    `backend`. The provider sets `backend`, `settings` and `_clock` in its `__init__`."""

    backend: B
    settings: BatchSettings
    _clock: Clock

    def batch_backend(self) -> B:
        return self.backend

    @property
    def endpoint(self) -> str:
        """The API's base URL: what the ledger records of where a batch lives (never the key)."""
        return self.backend.endpoint

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        """One request as one batch of its own, outside the ledger (`complete_many`); `Actor.run` records it."""
        [outcome] = await self.complete_many([request])
        if isinstance(outcome, ActorError):
            raise outcome
        return outcome

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
        """The requests as one batch per group its batches keep apart (`run_batch`: per model, per endpoint),
        outside the ledger: nothing recorded, so that calling it twice pays twice. `Actor.run_many` is the same
        through the ledger."""
        return await run_batch(self.backend, requests, settings=self.settings, clock=self._clock)


async def run_batch(
    backend: BatchBackend, requests: Sequence[ActorRequest], *, settings: BatchSettings, clock: Clock
) -> list[Outcome]:
    """Each request's outcome, in order, from batches made outside the ledger: nothing is recorded, so that calling
    this twice pays twice, and a create whose outcome is in doubt is raised, never reconciled (the durable engine,
    through `Actor.run_many`, is the path that pays once). A request's `custom_id` names it (checked unique); without
    one it is `request-<index>`. Requests whose batches must differ (`BatchCodec.batch_group`) go in batches of their
    own."""
    codec = backend.codec
    if not requests:
        raise ConfigurationError("A batch needs at least one request.", field="requests")
    named: dict[str, tuple[int, ActorRequest, dict[str, Any]]] = {}
    groups: dict[str, list[str]] = {}
    for index, request in enumerate(requests):
        name = request.custom_id or f"request-{index}"
        custom_id = codec.custom_id_for(name, None)  # outside any ledger: no other's can be taken for it
        if custom_id in named:
            raise ConfigurationError(f"custom_id {name!r} is used twice in one batch.", field="custom_id")
        params = codec.encode_request(request)
        named[custom_id] = (index, request, params)
        groups.setdefault(codec.batch_group(params, codec.model_of(params)), []).append(custom_id)
    for members in groups.values():
        if len(members) > codec.limits.max_requests:
            raise ConfigurationError(
                f"{len(members)} requests exceed the API's limit of {codec.limits.max_requests:,} per batch.",
                field="requests",
            )
    answers = await asyncio.gather(
        *(_one_batch(backend, {c: named[c][2] for c in members}, settings, clock) for members in groups.values())
    )
    outcomes: list[Outcome | None] = [None] * len(requests)
    for answered in answers:
        for custom_id, outcome in answered.items():
            index, request, _ = named[custom_id]
            outcomes[index] = parsed_outcome(outcome, request.response_model)
    return [outcome for outcome in outcomes if outcome is not None]


async def _one_batch(
    backend: BatchBackend, members: Mapping[str, dict[str, Any]], settings: BatchSettings, clock: Clock
) -> dict[str, Settled]:
    codec = backend.codec
    size = sum(codec.request_size(custom_id, stored_json(params)) for custom_id, params in members.items())
    if size > codec.limits.max_bytes:
        raise ConfigurationError(
            f"The batch is {size / 2**20:.1f} MiB, over the API's limit of {codec.limits.max_bytes / 2**20:.0f} MiB;"
            " split it.",
            field="requests",
        )
    body = codec.encode((custom_id, stored_json(params)) for custom_id, params in members.items())
    remote = await backend.create(body, len(members), intent_id=f"lt_{uuid.uuid4().hex}", steps=NO_STEPS)
    try:
        ended = await wait_until_ended(backend, remote, settings=settings, clock=clock)
    except BatchTimeoutError as exc:
        exc.custom_ids = list(members)
        raise
    outcomes: dict[str, Settled] = {}

    def handle(line: ResultLine | UnreadableLine) -> None:
        custom_id = custom_id_of(codec, line)
        if custom_id is not None and custom_id in members and custom_id not in outcomes:
            outcome, _ = outcome_of(codec, line, custom_id, batch_id=ended.id, request_id=remote.request_id)
            outcomes[custom_id] = outcome

    await backend.stream_results(ended, handle, expected=len(members))
    for custom_id in members:
        line = backend.unanswered_line(ended, custom_id) if custom_id not in outcomes else None
        if line is not None:
            handle(line)
        elif custom_id not in outcomes:
            outcomes[custom_id] = BatchRequestError(
                f"Batch {ended.id} ended without a result for request {custom_id}.",
                batch_id=ended.id,
                custom_id=custom_id,
            )
    try:
        await backend.finished(ended)
    except ActorError as exc:  # the answers are in hand; a file left behind costs nothing
        log.warning("Could not release what batch %s holds at the provider: %s", ended.id, exc)
    return outcomes
