"""Groq's official SDK bound to the OpenAI-compatible base: `AsyncGroq`, its exceptions, and its models endpoint
(`GET /openai/v1/models/{model}`, asked once per model, endpoint and key in a process; an unknown name refused with
the closest names `GET /openai/v1/models` lists). A model the list leaves out that the endpoint serves when asked by
name (a preview, one the organisation was given) goes through."""

from __future__ import annotations

import groq
from groq import AsyncGroq

from lowtide.providers.openai_compatible.sdk import Sdk
from lowtide.providers.openai_compatible.stainless import stainless_errors

__all__ = ["GROQ_SDK"]


async def _listing(client: AsyncGroq) -> list[str]:
    return [model.id for model in (await client.models.list()).data]


async def _lookup(client: AsyncGroq, name: str) -> object:
    return await client.models.retrieve(name)


GROQ_SDK = Sdk(
    client=AsyncGroq,
    errors=stainless_errors(
        client="Groq",
        api="Groq API",
        status=groq.APIStatusError,
        connection=groq.APIConnectionError,
        base=groq.GroqError,
        timeout=groq.APITimeoutError,
    ),
    listing=_listing,
    lookup=_lookup,
)
