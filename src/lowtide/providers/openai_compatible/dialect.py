"""An OpenAI-compatible API as data: what one provider speaking OpenAI's Chat Completions (and its Batch API's files)
says of itself — its names, key and URL variables, parameter rules, limits and prices — and the check of a call's
parameters that follows from it. Light: no SDK, no request encoder (`requests`), so that registering a dialect costs
nothing."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from lowtide import BatchProcessingMode, ConfigurationError, Cost, Usage
from lowtide.providers import BatchLimits, LazyProvider, Parameters, UsageShape, check_ranges, refuse_fields
from lowtide.providers.openai.chat_limits import ChatLimits
from lowtide.providers.openai.rules import CONTENT as OPENAI_CONTENT

if TYPE_CHECKING:
    from lowtide import ProviderRegistry

__all__ = ["MAX_LIVE_BYTES", "Dialect", "check_stop_sequences", "register_dialect"]

OptionsT = TypeVar("OptionsT", bound=BaseModel, covariant=True)

MAX_LIVE_BYTES = 20 * 1024 * 1024
"""The most bytes a request body is taken with, unless a dialect says otherwise (Groq refuses larger with a 413)."""
_BATCH = BatchLimits(max_requests=50_000, max_bytes=100 * 1024 * 1024)
_RANGES: Mapping[str, tuple[float, float]] = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}


@dataclass(frozen=True)
class Dialect(Generic[OptionsT]):
    """One OpenAI-compatible API: who it is, where its key and URL come from, what it refuses and how it prices.
    What differs in behaviour (its models endpoint, its batch jobs' shape) is its provider classes' few hooks."""

    name: str
    """The provider's name: the registry's, the one stored with every answer, its `provider_options` section."""
    owner: str
    """Its name for people in an error or a log line (`Groq`, `Together`)."""
    usage: UsageShape
    """How its answers report usage, for genai-prices (its provider name there, `UsageShape.genai_provider`)."""
    options: type[OptionsT]
    """Its own settings, as `provider_options.<name>` gives them (a pydantic model refusing unknown keys)."""
    body_options: tuple[str, ...] = ()
    """The settings of `options` that travel in the request body (when given)."""
    api_key_env: str = ""
    base_url_env: str = ""
    default_base_url: str | None = None
    """Its address when neither the actor nor `base_url_env` gives one; None: its SDK's own default. An API reached
    through the `openai` SDK must name its own, or its key would be sent to OpenAI's address."""
    sdk_paths: tuple[str, ...] = ()
    """Paths its SDK puts before every route itself (`/v1`): a base URL ending in one would name it twice, and is
    refused before anything is sent, saying the address to give (OpenAI's base URLs end in `/v1`; these SDKs' not)."""
    refused: Mapping[str, str] = field(default_factory=dict[str, str])
    """The neutral parameters its API has no use for, each with the reason given in the refusal."""
    takes_top_k: bool = False
    """Whether `top_k` (at least 1) is sent; else it is refused unless `refused` says otherwise."""
    max_stop_sequences: int = 16
    api_owner: str = ""
    """Its name in what its Chat Completions cannot carry (`Together AI's Chat Completions`); `owner` when empty."""
    gen_ai_provider_name: str | None = None
    """`gen_ai.provider.name` of its spans, where the OpenTelemetry GenAI conventions name one."""
    text_only_models: frozenset[str] = frozenset()
    """Models the API serves that take text only (from its documentation): an image sent to one is refused before
    anything is sent, naming where it is. A model not named here is left to the API (a list of the vision models
    would refuse every new one the day it ships)."""
    vision_example: str = ""
    """A model of its own that takes images, named in that refusal."""
    max_live_bytes: int = MAX_LIVE_BYTES
    batch: BatchLimits = _BATCH
    """What one batch's input file may hold, and the longest completion window."""
    priced_by: Callable[[Usage, str, BatchProcessingMode], Cost | None] | None = None
    """Its own prices (a configured endpoint's: usage, model, mode -> cost, None when unknown); when given,
    genai-prices is not asked (`usage` then only reads the usage object)."""

    @functools.cached_property
    def chat_limits(self) -> ChatLimits:
        """What its Chat Completions cannot carry: no document (`file`) parts, and no Responses endpoint to turn to."""
        return ChatLimits(
            api=f"{self.api_owner or self.owner}'s Chat Completions",
            remedies={
                "tool_result_media": "send images in a user message after the tool result",
                "image_file_id": "send the image inline (base64) or by URL",
                "document_url": "send the document's text instead",
                "document": "send the document's text instead",
                "reasoning_summary": "leave the reasoning summary out",
            },
            documents=False,
            content=replace(OPENAI_CONTENT, provider=self.api_owner or self.owner),
        )

    def options_in(self, provider_options: Mapping[str, Mapping[str, object]]) -> OptionsT:
        """Its section of `provider_options`, checked (`ConfigurationError` naming the first wrong one)."""
        given = provider_options.get(self.name) or {}
        try:
            return self.options.model_validate(given)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join([f"provider_options.{self.name}", *(str(part) for part in first["loc"])])
            # The value is never echoed: a misplaced key must not reach an error message or a log.
            raise ConfigurationError(f"Invalid {self.owner} setting {where}: {first['msg']}.", field=where) from None

    def check_parameters(self, parameters: Parameters) -> OptionsT:
        """Refuse what the API would refuse of `parameters` (a `ConfigurationError` naming the field); its settings
        when all is well. The registry's parameter check of the dialect."""
        options = self.options_in(parameters.provider_options)
        refuse_fields(parameters, self.refused, who=self.owner)
        check_ranges(parameters, _RANGES, who=self.owner)
        if self.takes_top_k and parameters.top_k is not None and parameters.top_k < 1:
            raise ConfigurationError(
                f"top_k: {parameters.top_k} is below 1, the least {self.owner} takes.", field="top_k"
            )
        check_stop_sequences(parameters.stop_sequences, who=self.owner, most=self.max_stop_sequences)
        return options


def check_stop_sequences(sequences: list[str], *, who: str, most: int) -> None:
    """At most `most` stop sequences, none empty, none twice (`who` names the API in the refusal)."""
    if len(sequences) > most:
        raise ConfigurationError(
            f"stop_sequences holds {len(sequences)} sequences; {who} takes at most {most}.", field="stop_sequences"
        )
    for index, sequence in enumerate(sequences):
        where = f"stop_sequences.{index}"
        if not sequence:
            raise ConfigurationError(f"{where}: the stop sequence is empty; {who} refuses it.", field=where)
        if sequence in sequences[:index]:
            raise ConfigurationError(
                f"{where}: {sequence!r} is given twice; {who} wants each stop sequence once.", field=where
            )


def register_dialect(registry: ProviderRegistry, dialect: Dialect[BaseModel], *, live: str, batch: str | None) -> None:
    """Register a dialect's parameter check, prices and provider classes (`live` and `batch`: `module:Class`, imported
    when first used; `batch` None for an API served live only): all a plugin's `register(registry)` does for an
    OpenAI-compatible API."""
    registry.register_parameters(dialect.name, dialect.check_parameters)
    registry.register_pricing(dialect.name, dialect.usage)
    for mode, where in ((BatchProcessingMode.LIVE, live), (BatchProcessingMode.BATCH, batch)):
        if where is not None:
            module, _, attribute = where.partition(":")
            registry.register(dialect.name, mode, LazyProvider(module, attribute))
