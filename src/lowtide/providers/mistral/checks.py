"""What Mistral would refuse of a request, refused before it is recorded or sent, with a `ConfigurationError` that
names the field:

- its parameters and content, as `requests.encode_request` finds them (asking nothing);
- its model: `models.retrieve`, asked once per model for each endpoint and key in a process; an unknown name (404)
  gets "did you mean" suggestions from the endpoint's list (`models.list`). A 401 is the key's fault, raised as the
  call's own error; when the endpoint cannot be reached, or answers another status, the check is skipped (logged
  once per endpoint) and the call goes on;
- its size: 10 MB a chat request (lowtide's bound; Mistral names none below its files');
- its window: the model's `max_context_length`, against the cheap bound of `lowtide.messages.limits` (Mistral has no
  token counting endpoint, so a request the bound does not settle goes on, and the API's own 400 comes back).
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass

from mistralai.client import Mistral, models

from lowtide import ActorRequest, APIConnectionError, APIError, AuthenticationError, ConfigurationError, NotFoundError
from lowtide.providers import AskedOnce, InputLimits, body_json, byte_size, check_input, first_image
from lowtide.providers.mistral.errors import translate_errors
from lowtide.providers.mistral.requests import encode_request

__all__ = ["MAX_REQUEST_BYTES", "Checks", "ModelFacts", "forget_models"]

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 10 * 1024 * 1024
"""The most bytes lowtide sends Mistral in one chat request's body (a batch line included)."""
_SUGGESTIONS = 3


@dataclass(frozen=True)
class ModelFacts:
    """What the models endpoint says of one model (None: it could not be asked now)."""

    id: str
    window: int | None
    vision: bool = True
    """Whether it reads images (its card's `capabilities.vision`; True when the card does not say)."""


_DIRECTORIES: dict[str, AskedOnce[str, ModelFacts | None]] = {}
_SKIPPED: set[str] = set()


class Checks:
    """The pre-send checks of one client (live and batch share the class): the model looked up once per endpoint
    and key, the body's size and the window's cheap bound."""

    def __init__(self, client: Mistral, *, scope: str, endpoint: str) -> None:
        self._client = client
        self._scope = scope
        self._endpoint = endpoint
        self._models = _DIRECTORIES.setdefault(scope, AskedOnce())

    async def preflight(self, request: ActorRequest) -> None:
        body = encode_request(request)
        facts = await self._facts(request.model)
        _check_vision(request, facts)
        limits = self._limits(request, facts, byte_size(body_json(body, ascii_json=False)))
        await check_input(request, size=limits.body_bytes, limits=limits, count=_uncounted)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        body = encode_request(request)
        facts = await self._facts(request.model)
        _check_vision(request, facts)
        return self._limits(request, facts, byte_size(body_json(body, ascii_json=False)))

    @staticmethod
    def _limits(request: ActorRequest, facts: ModelFacts | None, size: int) -> InputLimits:
        return InputLimits(
            max_bytes=MAX_REQUEST_BYTES,
            window=facts.window if facts is not None else None,
            body_bytes=size,
            model=request.model,
            where="Mistral",
        )

    async def _facts(self, model: str) -> ModelFacts | None:
        if self._scope in _SKIPPED:
            return None
        return await self._models.ask(model, lambda: self._lookup(model), kept=lambda facts: facts is not None)

    async def _lookup(self, model: str) -> ModelFacts | None:
        try:
            with translate_errors():
                card = await self._client.models.retrieve_async(model_id=model)
        except NotFoundError:
            raise ConfigurationError(await self._unknown(model), field="model") from None
        except AuthenticationError:
            raise
        except APIConnectionError as exc:
            self._skip(f"the models endpoint could not be reached ({exc})", for_process=True)
            return None
        except APIError as exc:
            self._skip(f"the models endpoint answered {exc.status_code}: {exc}", for_process=False)
            return None
        if not isinstance(card, models.BaseModelCard | models.FTModelCard):
            return ModelFacts(model, None)
        window = card.max_context_length
        vision = card.capabilities.vision
        return ModelFacts(card.id, window if isinstance(window, int) and window > 0 else None, vision is not False)

    async def _unknown(self, model: str) -> str:
        message = f"model: Mistral does not know the model {model!r} ({self._endpoint})."
        try:
            with translate_errors():
                listed = await self._client.models.list_async()
        except APIError:
            return message
        names: list[str] = []
        for card in listed.data or []:
            if not isinstance(card, models.BaseModelCard | models.FTModelCard):
                continue
            names.append(card.id)
            names.extend(card.aliases or [])
        close = difflib.get_close_matches(model, sorted(set(names)), n=_SUGGESTIONS)
        return f"{message} Did you mean {', '.join(repr(name) for name in close)}?" if close else message

    def _skip(self, why: str, *, for_process: bool) -> None:
        if self._scope not in _SKIPPED and for_process:
            _SKIPPED.add(self._scope)
        log.warning("Mistral's model check is skipped for %s: %s.", self._endpoint, why)


def _check_vision(request: ActorRequest, facts: ModelFacts | None) -> None:
    """An image sent to a model whose card says it does not read images, refused naming where it is."""
    if facts is None or facts.vision:
        return
    where = first_image(request.messages)
    if where is not None:
        raise ConfigurationError(
            f"{where}: Mistral's model {request.model!r} does not read images (its models endpoint says vision:"
            " false); send them to one that does, such as 'mistral-small-latest' or 'pixtral-large-latest'.",
            field=where,
        )


def forget_models() -> None:
    """Forget what endpoints said, as a new process would (for tests)."""
    _DIRECTORIES.clear()
    _SKIPPED.clear()


async def _uncounted() -> int | None:
    """Mistral has no token counting endpoint: what the bound does not settle goes on."""
    return None
