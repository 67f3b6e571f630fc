"""The `openai` SDK bound to xAI, as xAI documents using it: `AsyncOpenAI` at xAI's base URL, its exceptions named
for xAI, and its models endpoint (`GET /v1/models/{model}`, asked once per model, endpoint and key in a process; an
unknown name refused with the closest names `GET /v1/models` lists)."""

from __future__ import annotations

import dataclasses

from openai import AsyncOpenAI

from lowtide.providers.openai.errors import SDK_ERRORS
from lowtide.providers.openai_compatible.sdk import Sdk

__all__ = ["XAI_SDK"]


async def _listing(client: AsyncOpenAI) -> list[str]:
    return [model.id async for model in client.models.list()]


async def _lookup(client: AsyncOpenAI, name: str) -> object:
    return await client.models.retrieve(name)


XAI_SDK = Sdk(
    client=AsyncOpenAI,
    errors=dataclasses.replace(SDK_ERRORS, client="xAI", api="xAI API"),
    listing=_listing,
    lookup=_lookup,
)
