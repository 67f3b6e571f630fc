"""Fireworks' official SDK (`fireworks-ai`) bound to the OpenAI-compatible base: `AsyncFireworks`, its exceptions,
and its models endpoint (`GET /v1/accounts/{account}/models/{model}`, asked once per model, endpoint and key in a
process; an unknown name refused with the closest names `GET /v1/accounts/{account}/models` lists)."""

from __future__ import annotations

import fireworks
from fireworks import AsyncFireworks

from lowtide.providers.fireworks.dialect import DEFAULT_ACCOUNT, model_account
from lowtide.providers.openai_compatible.sdk import Sdk
from lowtide.providers.openai_compatible.stainless import stainless_errors

__all__ = ["FIREWORKS_SDK"]


async def _listing(client: AsyncFireworks) -> list[str]:
    return [model.name async for model in client.models.list(account_id=DEFAULT_ACCOUNT) if model.name]


async def _lookup(client: AsyncFireworks, name: str) -> object:
    account, model = model_account(name)
    return await client.models.get(model, account_id=account)


FIREWORKS_SDK = Sdk(
    client=AsyncFireworks,
    errors=stainless_errors(
        client="Fireworks",
        api="Fireworks API",
        status=fireworks.APIStatusError,
        connection=fireworks.APIConnectionError,
        base=fireworks.FireworksError,
        timeout=fireworks.APITimeoutError,
    ),
    listing=_listing,
    lookup=_lookup,
)
