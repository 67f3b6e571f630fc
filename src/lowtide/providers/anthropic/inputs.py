"""A Messages request's size and input tokens against what Anthropic takes: 32 MB a request on the Messages API (as
on token counting), a batch's 256 MB for a request in a batch, and the model's context window (`max_input_tokens`
from the models endpoint, else lowtide's table). Tokens are counted by `POST /v1/messages/count_tokens` only when the
cheap bound of `lowtide.messages.limits` does not settle it; each count is kept for the process, per endpoint and
credentials.
"""

from __future__ import annotations

import hashlib
from typing import Any

import anthropic
from anthropic import AsyncAnthropic
from anthropic.lib.vertex import AsyncAnthropicVertex

from lowtide.messages.limits import InputLimits, byte_size, check_input
from lowtide.providers.anthropic.checks import ModelDirectory, ModelFacts
from lowtide.providers.anthropic.mapping import translate_errors
from lowtide.providers.anthropic.models import context_window
from lowtide.types import ActorRequest

__all__ = ["MAX_REQUEST_BYTES", "TOOL_USE_TOKENS", "check_request_input", "count_input_tokens", "input_limits"]

MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""The most bytes the Messages API (and token counting) takes in one request."""
TOOL_USE_TOKENS = 1_000
"""More than the system prompt the API adds when a request has tools (a few hundred tokens, by model)."""
_COUNTED_PARAMS = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "thinking", "output_config", "cache_control", "speed"}
)
_LOOKUP_TIMEOUT = 30.0


async def input_limits(
    client: AsyncAnthropic,
    directory: ModelDirectory,
    request: ActorRequest,
    *,
    body_bytes: int,
    max_bytes: int,
    where: str,
) -> InputLimits:
    """The limits of requests like `request` (its model and tools; its body `body_bytes` long), in a mode taking
    `max_bytes` a request."""
    facts = await directory.facts(client, request.model)
    window = facts.max_input_tokens if isinstance(facts, ModelFacts) else None
    if window is None:
        window = context_window(facts.id if isinstance(facts, ModelFacts) else request.model)
    return InputLimits(
        max_bytes=max_bytes,
        window=window,
        fixed_tokens=TOOL_USE_TOKENS if request.tools else 0,
        body_bytes=body_bytes,
        model=request.model,
        where=where,
    )


async def check_request_input(
    client: AsyncAnthropic,
    directory: ModelDirectory,
    request: ActorRequest,
    params: dict[str, object],
    body: str,
    *,
    limits: InputLimits,
) -> None:
    """Refuse `request` (sent as `params`, whose JSON is `body`) over the byte limit or its model's context window."""
    await check_input(
        request, size=byte_size(body), limits=limits, count=lambda: count_input_tokens(client, directory, params, body)
    )


async def count_input_tokens(
    client: AsyncAnthropic | AsyncAnthropicVertex, directory: ModelDirectory, params: dict[str, Any], body: str
) -> int | None:
    """The input tokens of `params` (whose JSON is `body`) by the API's token counting, asked once per request in a
    process; None when the endpoint cannot say (logged once per endpoint: the request goes on, and the API has the
    last word)."""
    counted = {name: value for name, value in params.items() if name in _COUNTED_PARAMS}
    key = hashlib.sha256(body.encode()).hexdigest()

    async def ask() -> int | None:
        try:
            answer = await client.messages.count_tokens(**counted, timeout=_LOOKUP_TIMEOUT)
        except anthropic.APIConnectionError as exc:
            directory.said_once(f"cannot be reached ({type(exc).__name__})", what="token counting")
            return None
        except anthropic.APIStatusError as exc:
            if exc.status_code == 401:
                with translate_errors():
                    raise
            directory.said_once(f"answered {exc.status_code}", what="token counting")
            return None
        return answer.input_tokens

    return await directory.counts.ask(key, ask, kept=lambda tokens: tokens is not None)
