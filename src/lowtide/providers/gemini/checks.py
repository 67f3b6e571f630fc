"""What Gemini would refuse of a request, refused before it is recorded or sent, with a `ConfigurationError` that
names the field:

- its parameters and content, as `requests.encode_request` finds them (asking nothing);
- its model: `models.get`, asked once per model, endpoint and key in a process; an unknown name gets "did you mean"
  suggestions from the endpoint's list (`models.list`), and a `max_tokens` above the model's `outputTokenLimit` is
  refused. When the endpoint cannot be reached, or answers a status other than 404 (the model is unknown), 401, 403
  or a 400 `API_KEY_INVALID` (the key: raised as the call's own error), the check is skipped (logged once per
  endpoint) and the call goes on;
- its size: 20 MB a request (the most the Gemini API takes of one request's body);
- its input tokens against the model's `inputTokenLimit`: counted by `models.count_tokens` only when the cheap bound
  of `lowtide.messages.limits` does not settle it, each count kept for the process. The Gemini API counts contents
  alone, so the system prompt and the function declarations are counted as the text of a first turn.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import weakref
from dataclasses import dataclass
from typing import Protocol, cast

import httpx2
from google import genai
from google.genai import errors, types

from lowtide import ActorRequest, ConfigurationError
from lowtide.providers import AskedOnce, InputLimits, body_json, byte_size, check_input, system_text
from lowtide.providers.gemini.client import OwnedClient
from lowtide.providers.gemini.errors import translate_errors
from lowtide.providers.gemini.options import options_of
from lowtide.providers.gemini.requests import Encoded, encode_request
from lowtide.providers.gemini.rules import CONTENT
from lowtide.providers.model_names import did_you_mean

__all__ = [
    "MAX_REQUEST_BYTES",
    "Checks",
    "ModelDirectory",
    "check_request_input",
    "count_input_tokens",
    "directory_for",
    "forget_models",
    "input_limits",
    "preflight",
]

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 20 * 1024 * 1024
"""The most bytes the Gemini API takes in one request's body (inline data included)."""
_LOOKUP_TIMEOUT_MS = 30_000
_KEY_STATUSES = frozenset({401, 403})
_KEY_INVALID = "API_KEY_INVALID"
"""The reason of the 400 Gemini answers a key it does not know with."""


class _Counting(Protocol):
    """The SDK's `AsyncModels.count_tokens` as lowtide calls it (its own signature names PIL's images)."""

    async def count_tokens(
        self, *, model: str, contents: list[types.ContentDict], config: types.CountTokensConfigDict
    ) -> types.CountTokensResponse: ...


@dataclass(frozen=True)
class ModelFacts:
    """What the models endpoint says of one model."""

    id: str
    input_limit: int | None
    output_limit: int | None


@dataclass(frozen=True)
class _Known:
    """What the models endpoint said of a model: its facts, or that it has no such model (None)."""

    facts: ModelFacts | None


_UNSAID = _Known(None)
"""The endpoint could not say (unreachable, or an error): nothing is refused on its word."""


class ModelDirectory:
    """What one Gemini endpoint, asked with one key, said of models and counted of requests: kept for the life of
    the process, one question per model (or request) however many calls ask at once."""

    def __init__(self, endpoint: str | None, api: str = "the Gemini API") -> None:
        self.endpoint = endpoint
        """The base URL, for messages (None: an injected client's, which lowtide does not read)."""
        self.api = api
        """What messages call the API."""
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
            endpoint = self.endpoint or "the injected client's endpoint"
            log.warning("The %s of %s %s: %s not checked before sending.", what, endpoint, why, checked)

    def skip(self, exc: Exception, *, what: str) -> None:
        """Skip a check the endpoint could not answer; a refusal of the key is raised as the call's error."""
        if isinstance(exc, errors.APIError):
            if _key_refused(exc):
                with translate_errors():
                    raise exc
            self.said_once(f"answered {exc.code}", what=what)
        else:
            self.reachable = False
            self.said_once(f"cannot be reached ({type(exc).__name__})", what=what)

    async def facts(self, client: genai.Client, model: str) -> _Known:
        """What the endpoint says of `model`: its facts, that it has none (`_Known(None)`, kept), or `_UNSAID`."""
        if not self.reachable:
            return _UNSAID

        async def ask() -> _Known:
            try:
                found = await client.aio.models.get(model=model, config={"http_options": _QUICK})
            except errors.APIError as exc:
                if exc.code == 404:
                    return _Known(None)
                self.skip(exc, what="models endpoint")
                return _UNSAID
            except httpx2.TransportError as exc:
                self.skip(exc, what="models endpoint")
                return _UNSAID
            name = (found.name or model).removeprefix("models/")
            return _Known(ModelFacts(name, found.input_token_limit, found.output_token_limit))

        return await self.models.ask(model, ask, kept=lambda known: known is not _UNSAID)

    async def names(self, client: genai.Client) -> list[str]:
        """Every model the endpoint lists (without `models/`); empty if it cannot list."""
        if self._names is None:
            try:
                pager = await client.aio.models.list(config={"page_size": 1000, "http_options": _QUICK})
                # `models/<id>` from the Gemini API, `publishers/google/models/<id>` from Vertex AI.
                self._names = sorted([(model.name or "").rpartition("models/")[2] async for model in pager])
            except (errors.APIError, httpx2.TransportError):
                return []
        return self._names


def _key_refused(exc: errors.APIError) -> bool:
    """Whether Gemini refused the key (the call would fail alike), not the question."""
    details: object = getattr(exc, "details", None)
    return exc.code in _KEY_STATUSES or (exc.code == 400 and _KEY_INVALID in json.dumps(details, default=str))


_QUICK: types.HttpOptionsDict = {"timeout": _LOOKUP_TIMEOUT_MS}
"""A look-up is a courtesy: it must not hold a call up for long."""
_SHARED: dict[str, ModelDirectory] = {}
_INJECTED: weakref.WeakKeyDictionary[genai.Client, ModelDirectory] = weakref.WeakKeyDictionary()


def directory_for(owned: OwnedClient) -> ModelDirectory:
    """The directory of the endpoint and key a client lowtide built calls (its quota scope names both, the key as a
    digest); a client lowtide did not build is an endpoint of its own, whose directory goes with it."""
    if owned.endpoint is None:
        directory = _INJECTED.get(owned.client)
        if directory is None:
            directory = _INJECTED[owned.client] = ModelDirectory(None, owned.api)
        return directory
    return _SHARED.setdefault(owned.scope, ModelDirectory(owned.endpoint, owned.api))


def forget_models() -> None:
    """Forget what endpoints said, as a new process would (for tests)."""
    _SHARED.clear()


async def preflight(client: genai.Client, directory: ModelDirectory, request: ActorRequest) -> Encoded:
    """Refuse `request` if Gemini would: its parameters and content (encoded as they would be sent, which asks
    nothing), its model and its `max_tokens` (asking the endpoint). What it is sent as, when it passes (its size and
    input tokens are checked apart: `check_request_input`)."""
    encoded = encode_request(request)
    known = await directory.facts(client, request.model)
    if known is _UNSAID:
        return encoded
    if known.facts is None:
        raise await _no_such_model(client, directory, request.model)
    limit = known.facts.output_limit
    if limit is not None and request.max_tokens > limit:
        raise ConfigurationError(
            f"max_tokens: {request.max_tokens} is more than {request.model!r} may write (at most {limit} output "
            "tokens).",
            field="max_tokens",
        )
    return encoded


async def input_limits(
    client: genai.Client, directory: ModelDirectory, request: ActorRequest, *, body_bytes: int
) -> InputLimits:
    """The limits of requests like `request` (its model; its body `body_bytes` long). Gemini adds nothing to a
    prompt that its body does not show."""
    known = await directory.facts(client, request.model)
    window = known.facts.input_limit if known.facts is not None else None
    return InputLimits(
        max_bytes=MAX_REQUEST_BYTES, window=window, body_bytes=body_bytes, model=request.model, where="the Gemini API"
    )


async def check_request_input(
    client: genai.Client,
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


class Checks:
    """The checks a Gemini provider (live or batch) makes before anything is sent: `Provider.preflight` and
    `Provider.input_limits` over one client and the directory of its endpoint."""

    def __init__(self, owned: OwnedClient) -> None:
        self._owned = owned

    @functools.cached_property
    def _directory(self) -> ModelDirectory:
        return directory_for(self._owned)

    async def preflight(self, request: ActorRequest) -> None:
        client, directory = self._owned.client, self._directory
        encoded = await preflight(client, directory, request)
        body = body_json(encoded.body(), ascii_json=False)
        limits = await input_limits(client, directory, request, body_bytes=byte_size(body))
        await check_request_input(client, directory, request, encoded, body, limits=limits)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        body = body_json(encode_request(request).body(), ascii_json=False)
        return await input_limits(self._owned.client, self._directory, request, body_bytes=byte_size(body))


async def count_input_tokens(
    client: genai.Client, directory: ModelDirectory, request: ActorRequest, encoded: Encoded, body: str
) -> int | None:
    """The input tokens of a request (sent as `encoded`, whose JSON is `body`) by Gemini's token counting, asked once
    per request in a process; None when the endpoint cannot say (logged once per endpoint: the request goes on, and
    the API has the last word)."""
    key = hashlib.sha256(body.encode()).hexdigest()

    async def ask() -> int | None:
        version = options_of(request).api_version
        http: types.HttpOptionsDict = {**_QUICK, "api_version": version} if version is not None else _QUICK
        try:
            counting = cast("_Counting", client.aio.models)
            contents = _counted(request, encoded)
            answer = await counting.count_tokens(model=encoded.model, contents=contents, config={"http_options": http})
        except (errors.APIError, httpx2.TransportError) as exc:
            directory.skip(exc, what="token counting")
            return None
        return answer.total_tokens

    return await directory.counts.ask(key, ask, kept=lambda tokens: tokens is not None)


def _counted(request: ActorRequest, encoded: Encoded) -> list[types.ContentDict]:
    """What is counted of a request: its contents, after a first turn holding the system prompt's text and the
    tools' JSON (the Gemini API counts contents alone)."""
    parts: list[types.PartDict] = []
    if request.system is not None:
        parts.append({"text": system_text(request.system, rules=CONTENT)})
    if request.tools:
        declared = [tool.model_dump(mode="json", exclude_none=True) for tool in request.tools]
        parts.append({"text": json.dumps(declared, ensure_ascii=False)})
    return [{"role": "user", "parts": parts}, *encoded.contents] if parts else encoded.contents


async def _no_such_model(client: genai.Client, directory: ModelDirectory, model: str) -> ConfigurationError:
    at = f" at {directory.endpoint}" if directory.endpoint is not None else ""
    where = f"{directory.api}{at} has no model {model!r}"
    return did_you_mean(model.removeprefix("models/"), await directory.names(client), where=where)
