"""`ClientBatchBackend`: a `SdkBatchBackend` through one SDK client of OpenAI's make, its own retries off (lowtide
decides what is retried): the client kept and closed when owned, the ledger's endpoint and credential read off it, the
SDK's exceptions translated by the dialect's `sdk`. The base of both the file-shaped Batch APIs (`FileBatchBackend`)
and those of a shape of their own spoken as JSON (`JsonBatchBackend`)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Generic, Protocol, TypeVar

from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.providers import SdkBatchBackend, credential_of
from lowtide.providers.openai_compatible.sdk import SdkClient

__all__ = ["ClientBatchBackend", "Translates"]

K = TypeVar("K", bound=SdkClient)


class Translates(Protocol):
    """What the backend needs of a dialect's `Sdk`: its exceptions re-raised as `ActorError`s."""

    def translate(self) -> AbstractContextManager[None]: ...


class ClientBatchBackend(SdkBatchBackend, Generic[K]):
    """A backend through one client `K`; a dialect's subclass names its `sdk`."""

    sdk: Translates
    """The dialect's `Sdk` (or anything that translates its SDK's exceptions)."""

    def __init__(self, client: K, *, owns_client: bool, clock: Clock, settings: BatchSettings) -> None:
        self._client = client.with_options(max_retries=0)
        super().__init__(
            endpoint=str(self._client.base_url).rstrip("/"),
            credential=credential_of(self._client.api_key, owned=owns_client, client=client),
            clock=clock,
            settings=settings,
        )
        self._closable = client
        self._owns_client = owns_client

    async def aclose(self) -> None:
        if self._owns_client:
            await self._closable.close()

    def _translate(self) -> AbstractContextManager[None]:
        """The SDK's exceptions re-raised as `ActorError`s."""
        return self.sdk.translate()
