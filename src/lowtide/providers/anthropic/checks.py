"""What the Messages API would refuse, refused before a request is recorded or sent, with a `ConfigurationError`
that names the field; and a warning, once per model in a process, for a deprecated model.

- Tool names match the API's `^[a-zA-Z0-9_-]{1,128}$` and are unique; a custom tool's `input_schema` is a JSON
  schema object of `"type": "object"`.
- The model is one the API serves: its models endpoint (`GET /v1/models/{model}`) is asked once per model,
  endpoint and credentials in a process. An unknown name gets "did you mean" suggestions from the endpoint's list,
  a retired one its end of life and replacement. When the endpoint cannot be reached, or answers with something
  other than the model, a 404 or a 401 (the call's `AuthenticationError`), the check is skipped (logged once per
  endpoint) and the call goes on.
- `max_tokens` is within the model's output limit: the API's `max_tokens` for it, else lowtide's own table.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import anthropic
from anthropic import AsyncAnthropic

from lowtide.errors import ConfigurationError, ModelDeprecationWarning
from lowtide.providers.anthropic.mapping import to_message_params, translate_errors
from lowtide.providers.anthropic.models import Deprecation, deprecation, max_output_tokens, undated
from lowtide.providers.asked import AskedOnce, Directories
from lowtide.providers.model_names import did_you_mean
from lowtide.types import ActorRequest, ToolSpec

__all__ = ["TOOL_NAME", "ModelDirectory", "ModelFacts", "check_tools", "directory_for", "forget_models", "preflight"]

log = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_DEPRECATIONS_PAGE = "https://docs.anthropic.com/en/docs/resources/model-deprecations"
# A look-up is a courtesy: it must not hold a call up for long.
_LOOKUP_TIMEOUT = 30.0
_LISTED = "GET /v1/models lists the models it serves"


@dataclass(frozen=True)
class ModelFacts:
    """What the models endpoint says of one model (an alias resolves to the model's id)."""

    id: str
    lifecycle: str
    max_tokens: int | None
    end_of_life: date | None
    max_input_tokens: int | None = None
    """The model's context window, when the endpoint says."""


class _Skipped:
    """The endpoint could not say: the existence check is skipped."""


SKIPPED = _Skipped()


class ModelDirectory:
    """What one endpoint, asked with one set of credentials, said of models: kept for the life of the process.

    Concurrent calls naming the same model share one question; a model the endpoint has no entry for is
    remembered as None.
    """

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.reachable = True
        self._known: dict[str, ModelFacts | None] = {}
        self._asking: dict[str, asyncio.Task[ModelFacts | _Skipped | None]] = {}
        self._names: list[str] | None = None
        self._said: set[str] = set()
        self.counts: AskedOnce[str, int | None] = AskedOnce()
        """Input tokens the endpoint counted, by a digest of what was counted."""

    async def facts(self, client: AsyncAnthropic, model: str) -> ModelFacts | _Skipped | None:
        """The endpoint's facts about `model`, None when it has no such model, `SKIPPED` when it cannot say."""
        if model in self._known:
            return self._known[model]
        if not self.reachable:
            return SKIPPED
        loop = asyncio.get_running_loop()
        task = self._asking.get(model)
        if task is None or task.done() or task.get_loop() is not loop:
            task = self._asking[model] = loop.create_task(self._ask(client, model))
        # Shielded: one caller giving up must not cancel the question the others wait on.
        return await asyncio.shield(task)

    async def _ask(self, client: AsyncAnthropic, model: str) -> ModelFacts | _Skipped | None:
        try:
            # Through the provider's own client (a copy would set itself up again, in a worker thread).
            info = await client.models.retrieve(model, timeout=_LOOKUP_TIMEOUT)
        except anthropic.NotFoundError:
            self._known[model] = None
            return None
        except anthropic.APIConnectionError as exc:
            self.reachable = False
            self._skipping(f"cannot be reached ({type(exc).__name__})")
            return SKIPPED
        except anthropic.APIStatusError as exc:
            if exc.status_code == 401:
                with translate_errors():
                    raise
            self._skipping(f"answered {exc.status_code}")
            return SKIPPED
        retires = info.retires_at.date() if info.retires_at is not None else None
        facts = self._known[model] = ModelFacts(
            info.id, info.lifecycle, info.max_tokens, retires, max_input_tokens=info.max_input_tokens
        )
        return facts

    def _skipping(self, why: str) -> None:
        self.said_once(why, what="models endpoint")

    def said_once(self, why: str, *, what: str) -> None:
        """Log, once per endpoint and check (`what`: "models endpoint", "token counting"), that it was skipped."""
        if what not in self._said:
            self._said.add(what)
            checked = "model names are" if what == "models endpoint" else "input tokens are"
            log.warning("The %s of %s %s: %s not checked before sending.", what, self.endpoint, why, checked)

    async def names(self, client: AsyncAnthropic) -> list[str]:
        """Every model id the endpoint lists, with the undated alias of each dated one; empty if it cannot list."""
        if self._names is None:
            try:
                ids = [info.id async for info in client.models.list(limit=1000)]
            except anthropic.AnthropicError:
                return []
            self._names = sorted({*ids, *(undated(model_id) for model_id in ids)})
        return self._names


_DIRECTORIES: Directories[AsyncAnthropic, ModelDirectory] = Directories(ModelDirectory)
_WARNED: set[str] = set()


def directory_for(client: AsyncAnthropic, *, owned: bool) -> ModelDirectory:
    """The directory of `client`'s endpoint and credentials. A client lowtide did not build (an emulator's, say) is
    an endpoint of its own, whose directory goes with it."""
    return _DIRECTORIES.of(
        client, str(client.base_url).rstrip("/"), owned=owned, credential=client.api_key or client.auth_token or ""
    )


def forget_models() -> None:
    """Forget what endpoints said and which deprecations were warned about, as a new process would (for tests)."""
    _DIRECTORIES.forget()
    _WARNED.clear()


async def preflight(client: AsyncAnthropic, directory: ModelDirectory, request: ActorRequest) -> dict[str, object]:
    """Refuse `request` if the API would: its parameters (encoded as they would be sent, which asks nothing), its
    tools, its model (asking the endpoint), its `max_tokens`. The Messages parameters it is sent as, when it passes
    (its size and input tokens are checked apart: `inputs.check_request_input`)."""
    params = to_message_params(request)
    check_tools(request.tools)
    model = request.model
    facts = await directory.facts(client, model)
    known = deprecation(model)
    if facts is None:
        raise await _no_such_model(client, directory, model, known)
    if isinstance(facts, ModelFacts):
        known = known or deprecation(facts.id)
        if facts.lifecycle == "retired":
            raise ConfigurationError(f"model: {model!r} {_retired(facts.end_of_life, known)}", field="model")
        if facts.lifecycle == "deprecated" or known is not None:
            _warn_deprecated(model, facts.end_of_life, known)
        limit = facts.max_tokens or max_output_tokens(facts.id) or max_output_tokens(model)
    else:
        if known is not None:
            _warn_deprecated(model, None, known)
        limit = max_output_tokens(model)
    if limit is not None and request.max_tokens > limit:
        raise ConfigurationError(
            f"max_tokens: {request.max_tokens} is more than {model!r} may write (at most {limit} output tokens).",
            field="max_tokens",
        )
    return params


def check_tools(tools: Sequence[ToolSpec]) -> None:
    """Tool names as the API wants them, unique, and a custom tool's input schema an object schema."""
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools.{index}"
        if not TOOL_NAME.fullmatch(tool.name):
            raise ConfigurationError(
                f"{where}.name: {tool.name!r} is not a tool name the API accepts: 1 to 128 letters, digits, '_' or"
                " '-' (^[a-zA-Z0-9_-]{1,128}$).",
                field=f"{where}.name",
            )
        if tool.name in seen:
            raise ConfigurationError(
                f"{where}.name: {tool.name!r} names two tools; the API wants each tool's name unique.",
                field=f"{where}.name",
            )
        seen.add(tool.name)
        if (tool.model_extra or {}).get("type") not in (None, "custom"):
            continue  # a server tool (web search, code execution, ...): the API defines its input
        schema = tool.input_schema
        if schema is None:
            raise ConfigurationError(
                f'{where}.input_schema: tool {tool.name!r} needs an input_schema, a JSON schema with "type": "object".',
                field=f"{where}.input_schema",
            )
        if schema.get("type") != "object":
            raise ConfigurationError(
                f"{where}.input_schema.type: tool {tool.name!r} has an input_schema of type {schema.get('type')!r};"
                ' the API accepts only a JSON schema with "type": "object".',
                field=f"{where}.input_schema.type",
            )


async def _no_such_model(
    client: AsyncAnthropic, directory: ModelDirectory, model: str, known: Deprecation | None
) -> ConfigurationError:
    where = f"the API at {directory.endpoint} has no model {model!r}"
    if known is not None:
        return ConfigurationError(
            f"model: {where} (end of life: {known.end_of_life}); use {known.replacement!r} instead.", field="model"
        )
    return did_you_mean(model, await directory.names(client), where=where, listed=_LISTED)


def _retired(end_of_life: date | None, known: Deprecation | None) -> str:
    day = end_of_life or (known.end_of_life if known is not None else None)
    when = f" on {day}" if day is not None else ""
    instead = f"use {known.replacement!r} instead" if known is not None else f"see {_DEPRECATIONS_PAGE}"
    return f"was retired{when} and the API no longer serves it; {instead}."


def _warn_deprecated(model: str, end_of_life: date | None, known: Deprecation | None) -> None:
    if model in _WARNED:
        return
    _WARNED.add(model)
    day = end_of_life or (known.end_of_life if known is not None else None)
    when = f"end of life: {day}" if day is not None else "end of life not yet announced"
    instead = f"use {known.replacement!r} instead" if known is not None else f"see {_DEPRECATIONS_PAGE}"
    message = f"Model {model!r} is deprecated ({when}); {instead}."
    log.warning("%s", message)
    warnings.warn(message, ModelDeprecationWarning, stacklevel=_outside_lowtide())


# lowtide's own folder, as its code objects name their files: .../lowtide/providers/anthropic/checks.py, three up.
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "")


def _outside_lowtide() -> int:
    """The `stacklevel` of the first caller outside lowtide (the program's `await actor.run(...)`, say), so that
    the warning names the program's line; awaited coroutines are on the stack of the one that awaits them."""
    level, frame = 1, inspect.currentframe()
    frame = frame.f_back if frame is not None else None  # the function that warns
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level += 1
        frame = frame.f_back
    return level
