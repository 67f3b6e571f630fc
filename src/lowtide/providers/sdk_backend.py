"""`SdkBatchBackend`: what every batch backend that calls its API through one SDK client does alike. It holds its
endpoint, credential, clock and settings, runs each call through `retrying` with its provider's errors translated,
and, when its create uploads the input first, says from the create's steps whether the batch can be created again
from that upload (`resume`) and deletes the upload of a create given up. Each provider's backend names its steps, its
translation and how an upload is deleted; every shape and status name stays in its own folder."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, aclosing
from typing import ClassVar, Literal, TypeVar

from lowtide.batching.backend import BatchBackend, Counts, RemoteBatch
from lowtide.batching.retrying import retrying
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.errors import APIError

__all__ = ["EndedAs", "SdkBatchBackend", "ended_counts"]

T = TypeVar("T")
EndedAs = Literal["succeeded", "failed", "canceled", "expired"]
"""How a batch ended, as its provider's status names say it (each provider maps its own)."""


def ended_counts(ended_as: EndedAs, *, succeeded: int, errored: int, rest: int) -> Counts:
    """The counts of an ended batch that answered `succeeded` requests and refused `errored`: the `rest` it did not
    finish counted as it ended them (canceled, expired, errored when it failed as a whole, and succeeded when it
    says it succeeded: their lines are read with the rest)."""
    if ended_as == "expired":
        return Counts(succeeded=succeeded, errored=errored, expired=rest)
    if ended_as == "canceled":
        return Counts(succeeded=succeeded, errored=errored, canceled=rest)
    if ended_as == "failed":
        return Counts(succeeded=succeeded, errored=errored + rest)
    return Counts(succeeded=succeeded + rest, errored=errored)


class SdkBatchBackend(BatchBackend):
    """A `BatchBackend` through one client (whose own retries are off: lowtide decides what is retried)."""

    input_step: ClassVar[str | None] = None
    """The create's step that records its uploaded input (a file's id, an object's URI); None for a create that
    uploads nothing."""
    model_step: ClassVar[str | None] = None
    """The create's step that records the batch's model, when a create from the upload must name it again."""

    def __init__(self, *, endpoint: str, credential: str, clock: Clock, settings: BatchSettings) -> None:
        self._endpoint = endpoint
        self._credential = credential
        self._clock = clock
        self.settings = settings

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def credential(self) -> str:
        return self._credential

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """The batch listed since `created_after` whose record names `intent_id` (as the backend's API echoes it)."""
        return next(
            (batch for batch in await self.recent(created_after=created_after) if batch.intent_id == intent_id), None
        )

    async def _newest_since(
        self, listing: Callable[[], AsyncGenerator[RemoteBatch, None]], created_after: float
    ) -> list[RemoteBatch]:
        """The batches `listing` gives newest first, up to the first created before `created_after`; a listing broken
        off is retried from its start."""
        found: list[RemoteBatch] = []

        async def read() -> None:
            found.clear()
            async with aclosing(listing()) as batches:
                async for batch in batches:
                    if batch.created_at < created_after:
                        break
                    found.append(batch)

        await self._retrying(read)
        return found

    def resumable(self, steps: Mapping[str, str]) -> bool:
        """Whether the create uploaded its input (and recorded its model, where it must), so that `resume` can
        create the batch from that upload."""
        if self.input_step is None or self.input_step not in steps:
            return False
        return self.model_step is None or bool(steps.get(self.model_step))

    async def abandon(self, steps: Mapping[str, str]) -> None:
        """The create was given up: its uploaded input is deleted (unless `batch.keep_uploads`)."""
        uploaded = steps.get(self.input_step) if self.input_step is not None else None
        if uploaded is not None and not self.settings.keep_uploads:
            await self._delete_input(uploaded)

    async def _delete_input(self, uploaded: str) -> None:
        """Delete an uploaded input (as `input_step` recorded it); one already gone is not an error."""
        raise NotImplementedError

    def _translate(self) -> AbstractContextManager[None]:
        """The SDK's exceptions re-raised as `ActorError`s."""
        raise NotImplementedError

    async def _retrying(
        self, call: Callable[[], Awaitable[T]], *, retry_on: tuple[type[APIError], ...] | None = None
    ) -> T:
        return await retrying(
            call, translate=self._translate, clock=self._clock, retries=self.settings.api_retries, retry_on=retry_on
        )
