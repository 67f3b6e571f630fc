"""A Batch API of a shape of its own (xAI's named batches, OpenRouter's inline ones) spoken as plain JSON through the
`openai` SDK's client at that API's base URL: `ClientBatchBackend`'s client, close and errors, with its JSON get and
post, written once for every such dialect's backend."""

from __future__ import annotations

from collections.abc import Mapping

from openai import AsyncOpenAI

from lowtide.providers import json_object
from lowtide.providers.openai_compatible.client_backend import ClientBatchBackend

__all__ = ["JsonBatchBackend"]


class JsonBatchBackend(ClientBatchBackend[AsyncOpenAI]):
    """A backend through one `openai` client at its API's base URL; a dialect's subclass names its `sdk` (whose
    errors it reads) and speaks its API's batches through `_get` and `_post`."""

    async def _get(self, path: str, params: Mapping[str, object] | None = None) -> Mapping[str, object]:
        answer = await self._client.get(path, cast_to=object, options={"params": dict(params or {})})
        return json_object(answer)

    async def _post(self, path: str, body: Mapping[str, object]) -> Mapping[str, object]:
        return json_object(await self._client.post(path, cast_to=object, body=dict(body)))
