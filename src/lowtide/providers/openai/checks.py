"""What OpenAI would refuse of a request, refused before it is recorded or sent, with a `ConfigurationError` that
names the field:

- its parameters, as `parameters.check_parameters` and the request encoder find them (asking nothing);
- its model: `GET /v1/models/{model}`, asked once per model, endpoint and credentials in a process; an unknown
  name gets "did you mean" suggestions from the endpoint's list (`GET /v1/models`). When the endpoint cannot be
  reached, or answers with something other than the model, a 404 or a 401 (the call's `AuthenticationError`), the
  check is skipped (logged once per endpoint) and the call goes on;
- its size: 50 MB a request (the most OpenAI takes of a request's files, and so of a request), and for a line of a
  batch, its input file's 200 MB;
- its input tokens against the model's context window (`models.context_window`): counted by
  `POST /v1/responses/input_tokens` (a Chat Completions request as the same conversation in the Responses API's
  terms) only when the cheap bound of `lowtide.messages.limits` does not settle it, each count kept for the process.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

import openai
from openai import AsyncOpenAI

from lowtide.errors import ConfigurationError
from lowtide.messages.limits import InputLimits, body_json, byte_size, check_input
from lowtide.providers.asked import AskedOnce, Directories
from lowtide.providers.model_names import did_you_mean
from lowtide.providers.openai.errors import translate_errors
from lowtide.providers.openai.models import context_window, undated
from lowtide.providers.openai.options import PROVIDER_NAME
from lowtide.providers.openai.requests import Encoded, encode_request, to_responses_body
from lowtide.types import ActorRequest

__all__ = [
    "MAX_REQUEST_BYTES",
    "TOOL_TOKENS",
    "Checks",
    "ModelDirectory",
    "count_input_tokens",
    "directory_for",
    "forget_models",
    "input_limits",
    "preflight",
]

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 50 * 1024 * 1024
"""The most bytes lowtide sends in one request: OpenAI takes at most 50 MB of files in a request."""
TOOL_TOKENS = 1_000
"""More than OpenAI adds to a prompt for the tools it declares, beyond their JSON."""
_LOOKUP_TIMEOUT = 30.0
_LISTED = "GET /v1/models lists the models it serves"
_COUNTED = ("model", "input", "instructions", "tools", "tool_choice", "text", "reasoning", "parallel_tool_calls")


@dataclass(frozen=True)
class _Known:
    """What the models endpoint said of a model: that it serves it (under this id), or not (None)."""

    id: str | None


_UNSAID = _Known(None)
"""The endpoint could not say (unreachable, or an error): nothing is refused on its word."""


class ModelDirectory:
    """What one OpenAI endpoint, asked with one set of credentials, said of models and counted of requests: kept
    for the life of the process, one question per model (or request) however many calls ask at once."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.reachable = True
        self.models: AskedOnce[str, _Known] = AskedOnce()
        self.counts: AskedOnce[str, int | None] = AskedOnce()
        self._names: list[str] | None = None
        self._said: set[str] = set()

    def said_once(self, why: str, *, what: str) -> None:
        """Log, once per endpoint and check (`what`), that it was skipped."""
        if what not in self._said:
            self._said.add(what)
            checked = "model names are" if what == "models endpoint" else "input tokens are"
            log.warning("The %s of %s %s: %s not checked before sending.", what, self.endpoint, why, checked)

    async def serves(self, client: AsyncOpenAI, model: str) -> _Known:
        """Whether the endpoint serves `model` (`_Known(id)`), not (`_Known(None)` kept), or cannot say (`_UNSAID`)."""
        if not self.reachable:
            return _UNSAID

        async def ask() -> _Known:
            try:
                found = await client.models.retrieve(model, timeout=_LOOKUP_TIMEOUT)
            except openai.NotFoundError:
                return _Known(None)
            except openai.APIConnectionError as exc:
                self.reachable = False
                self.said_once(f"cannot be reached ({type(exc).__name__})", what="models endpoint")
                return _UNSAID
            except openai.APIStatusError as exc:
                if exc.status_code == 401:
                    with translate_errors():
                        raise
                self.said_once(f"answered {exc.status_code}", what="models endpoint")
                return _UNSAID
            return _Known(found.id)

        return await self.models.ask(model, ask, kept=lambda known: known is not _UNSAID)

    async def names(self, client: AsyncOpenAI) -> list[str]:
        """Every model id the endpoint lists, with the undated name of each dated one; empty if it cannot list."""
        if self._names is None:
            try:
                ids = [model.id async for model in client.models.list()]
            except openai.OpenAIError:
                return []
            self._names = sorted({*ids, *(undated(model_id) for model_id in ids)})
        return self._names


_DIRECTORIES: Directories[AsyncOpenAI, ModelDirectory] = Directories(ModelDirectory)


def directory_for(client: AsyncOpenAI, *, owned: bool) -> ModelDirectory:
    """The directory of `client`'s endpoint and credentials. A client lowtide did not build (an emulator's, say) is
    an endpoint of its own, whose directory goes with it."""
    return _DIRECTORIES.of(client, str(client.base_url).rstrip("/"), owned=owned, credential=client.api_key)


def forget_models() -> None:
    """Forget what endpoints said, as a new process would (for tests)."""
    _DIRECTORIES.forget()


async def preflight(client: AsyncOpenAI, directory: ModelDirectory, request: ActorRequest) -> Encoded:
    """Refuse `request` if OpenAI would: its parameters (encoded as they would be sent, which asks nothing), and its
    model (asking the endpoint). What it is sent as, when it passes (its size and input tokens are checked apart:
    `check_request_input`)."""
    encoded = encode_request(request)
    model = request.model
    known = await directory.serves(client, model)
    if known is not _UNSAID and known.id is None:
        raise await _no_such_model(client, directory, model)
    return encoded


async def input_limits(
    client: AsyncOpenAI,
    directory: ModelDirectory,
    request: ActorRequest,
    *,
    body_bytes: int,
    max_bytes: int,
    where: str,
) -> InputLimits:
    """The limits of requests like `request` (its model and tools; its body `body_bytes` long), in a mode taking
    `max_bytes` a request."""
    known = await directory.serves(client, request.model)
    window = context_window(request.model) or (context_window(known.id) if known.id is not None else None)
    return InputLimits(
        max_bytes=max_bytes,
        window=window,
        fixed_tokens=TOOL_TOKENS if request.tools else 0,
        body_bytes=body_bytes,
        model=request.model,
        where=where,
    )


async def check_request_input(
    client: AsyncOpenAI,
    directory: ModelDirectory,
    request: ActorRequest,
    encoded: Encoded,
    body: str,
    *,
    limits: InputLimits,
) -> None:
    """Refuse `request` (sent as `encoded`, whose JSON is `body`) over the byte limit or its model's context
    window."""
    await check_input(
        request,
        size=byte_size(body),
        limits=limits,
        count=lambda: count_input_tokens(client, directory, request, encoded, body),
    )


async def count_input_tokens(
    client: AsyncOpenAI, directory: ModelDirectory, request: ActorRequest, encoded: Encoded, body: str
) -> int | None:
    """The input tokens of `request` (sent as `encoded`, whose JSON is `body`) by OpenAI's token counting, asked
    once per request in a process; None when the endpoint cannot say (logged once per endpoint: the request goes on,
    and the API has the last word)."""
    sent = encoded.body if encoded.endpoint == "responses" else _as_responses(request)
    counted = {name: sent[name] for name in _COUNTED if name in sent}
    key = hashlib.sha256(body.encode()).hexdigest()

    async def ask() -> int | None:
        try:
            answer = await client.responses.input_tokens.count(**counted, timeout=_LOOKUP_TIMEOUT)
        except openai.APIConnectionError as exc:
            directory.said_once(f"cannot be reached ({type(exc).__name__})", what="token counting")
            return None
        except openai.APIStatusError as exc:
            if exc.status_code == 401:
                with translate_errors():
                    raise
            directory.said_once(f"answered {exc.status_code}", what="token counting")
            return None
        return answer.input_tokens

    return await directory.counts.ask(key, ask, kept=lambda tokens: tokens is not None)


def _as_responses(request: ActorRequest) -> dict[str, Any]:
    """A Chat Completions request's conversation in the Responses API's terms, which OpenAI counts tokens in: what
    only Chat has (stop sequences, its system role) shapes no input."""
    options = {**request.provider_options.get(PROVIDER_NAME, {}), "endpoint": "responses"}
    options.pop("system_role", None)
    counted = request.model_copy(
        update={
            "stop_sequences": [],
            "max_tokens": max(request.max_tokens, 16),
            "provider_options": {**request.provider_options, PROVIDER_NAME: options},
        }
    )
    return to_responses_body(counted)


async def _no_such_model(client: AsyncOpenAI, directory: ModelDirectory, model: str) -> ConfigurationError:
    where = f"the API at {directory.endpoint} has no model {model!r}"
    return did_you_mean(model, await directory.names(client), where=where, listed=_LISTED)


class Checks:
    """The checks an OpenAI provider (live or batch) makes before anything is sent: `Provider.preflight` and
    `Provider.input_limits`, asking through `checking`, against the directory of `client`'s endpoint (the client as
    given or built, which is what names it), with its bodies' JSON as they are sent (ASCII only in a batch's file) and
    at most `max_bytes` a request (`where` says whose limit that is)."""

    def __init__(
        self, client: AsyncOpenAI, *, owned: bool, checking: AsyncOpenAI, ascii_json: bool, max_bytes: int, where: str
    ) -> None:
        self._client, self._owned, self._checking = client, owned, checking
        self._ascii_json, self._max_bytes, self._where = ascii_json, max_bytes, where

    @functools.cached_property
    def _models(self) -> ModelDirectory:
        return directory_for(self._client, owned=self._owned)

    async def preflight(self, request: ActorRequest) -> None:
        encoded = await preflight(self._checking, self._models, request)
        body = body_json(encoded.body, ascii_json=self._ascii_json)
        limits = await self._limits(request, byte_size(body))
        await check_request_input(self._checking, self._models, request, encoded, body, limits=limits)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        body = body_json(encode_request(request).body, ascii_json=self._ascii_json)
        return await self._limits(request, byte_size(body))

    async def _limits(self, request: ActorRequest, body_bytes: int) -> InputLimits:
        return await input_limits(
            self._checking, self._models, request, body_bytes=body_bytes, max_bytes=self._max_bytes, where=self._where
        )
