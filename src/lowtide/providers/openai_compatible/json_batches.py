"""A Batch API of a shape of its own (xAI's named batches, OpenRouter's inline ones) spoken as plain JSON through the
`openai` SDK's client at that API's base URL: the client (its own retries off), its close, its JSON get and post and
its errors, written once for every such dialect's backend."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import ClassVar

from openai import AsyncOpenAI

from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.providers import SdkBatchBackend, credential_of, json_object
from lowtide.providers.openai_compatible.sdk import Sdk

__all__ = ["JsonBatchBackend"]


class JsonBatchBackend(SdkBatchBackend):
    """A backend through one `openai` client at its API's base URL; a dialect's subclass names its `sdk` (whose
    errors it reads) and speaks its API's batches through `_get` and `_post`."""

    sdk: ClassVar[Sdk[AsyncOpenAI]]

    def __init__(self, client: AsyncOpenAI, *, owns_client: bool, clock: Clock, settings: BatchSettings) -> None:
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

    async def _get(self, path: str, params: Mapping[str, object] | None = None) -> Mapping[str, object]:
        answer = await self._client.get(path, cast_to=object, options={"params": dict(params or {})})
        return json_object(answer)

    async def _post(self, path: str, body: Mapping[str, object]) -> Mapping[str, object]:
        return json_object(await self._client.post(path, cast_to=object, body=dict(body)))

    def _translate(self) -> AbstractContextManager[None]:
        return self.sdk.translate()
