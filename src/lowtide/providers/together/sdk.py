"""Together's official SDK (v3) bound to the OpenAI-compatible base: `AsyncTogether`, its exceptions, and its models
endpoint. Together has no question for one model: `GET /v1/models` (a bare list) is read once per endpoint and key
in a process, a name it does not list refused with the closest names it does; its list leaves out a fine-tune's or a
dedicated endpoint's name, which `provider_options: {together: {unlisted_model: true}}` sends unchecked."""

from __future__ import annotations

import together
from together import AsyncTogether

from lowtide import ActorRequest
from lowtide.providers import json_objects
from lowtide.providers.openai_compatible.sdk import Sdk
from lowtide.providers.openai_compatible.stainless import stainless_errors
from lowtide.providers.together.dialect import TOGETHER

__all__ = ["TOGETHER_SDK"]


async def _listing(client: AsyncTogether) -> list[str]:
    listed = await client.get("/v1/models", cast_to=object)
    return [name for model in json_objects(listed) if isinstance(name := model.get("id"), str)]


def _unchecked(request: ActorRequest) -> bool:
    return TOGETHER.options_in(request.provider_options).unlisted_model


TOGETHER_SDK = Sdk(
    client=AsyncTogether,
    errors=stainless_errors(
        client="Together",
        api="Together API",
        status=together.APIStatusError,
        connection=together.APIConnectionError,
        base=together.TogetherError,
        timeout=together.APITimeoutError,
    ),
    listing=_listing,
    unchecked=_unchecked,
    insist="(A model the list leaves out, a fine-tune's or a dedicated endpoint's, is sent with provider_options: "
    "{together: {unlisted_model: true}}.)",
)
