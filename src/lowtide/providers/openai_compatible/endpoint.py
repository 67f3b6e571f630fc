"""`provider: openai_compatible`: any endpoint speaking OpenAI's Chat Completions and Batch API (DeepInfra, a LiteLLM
proxy, a self-hosted gateway), configured by data in `provider_options.openai_compatible` (`EndpointOptions`): its
base URL, its key's variable, its models, its prices, and the optional parts it lacks. Light: no SDK (registering
it imports this alone); `dialect_of` makes one actor's `Dialect` from its settings, priced at its configured prices
or shown as unknown, never through genai-prices (whose OpenAI prices are not an unknown endpoint's)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from lowtide import BatchProcessingMode, ConfigurationError, Cost, Usage
from lowtide.providers import LazyProvider, Parameters, check_base_url
from lowtide.providers.model_names import did_you_mean
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

if TYPE_CHECKING:
    from lowtide import ProviderRegistry

__all__ = [
    "ENDPOINT",
    "EndpointOptions",
    "ModelPrice",
    "Part",
    "configured_price",
    "dialect_of",
    "price_of",
    "register",
]

Part = Literal["metadata", "cancel", "models"]
"""An optional part of OpenAI's API an endpoint may lack: batch metadata, batch cancel, a models list."""
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MILLION = Decimal(1_000_000)


class ModelPrice(BaseModel):
    """One model's price at the endpoint, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: Decimal = Field(ge=0)
    output: Decimal = Field(ge=0)
    cached_input: Decimal | None = Field(default=None, ge=0)
    """A cached input token's price (the input price when not given)."""
    batch_discount: Decimal = Field(default=Decimal("0.5"), ge=0, le=1)
    """The share taken off every price in batch mode (0.5: half price)."""


class EndpointOptions(BaseModel):
    """An OpenAI-compatible endpoint, as `provider_options.openai_compatible` gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """The address the openai SDK is pointed at, with its `/v1` (`https://api.deepinfra.com/v1/openai`)."""
    api_key_env: str = "OPENAI_COMPATIBLE_API_KEY"
    """The environment variable holding the endpoint's key."""
    models: tuple[str, ...] | None = None
    """The models it serves: a model not named is refused as the actor loads. None: asked of its models endpoint
    (unless it `lacks` one, when no model is checked)."""
    prices: Mapping[str, ModelPrice] = Field(default_factory=dict[str, ModelPrice])
    """Each model's price; a model without one has its cost shown as unknown, never $0."""
    lacks: frozenset[Part] = frozenset()
    """What the endpoint does not have: `metadata` (a batch's metadata is not kept: a lost create is found by its
    input file instead), `cancel`, `models` (no models endpoint)."""
    completion_window: str = "24h"
    """The completion window a batch is created with."""
    owner: str = "OpenAI-compatible endpoint"
    """Its name in an error or a log line (`DeepInfra`)."""

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        try:
            return check_base_url(value, source="base_url")
        except ConfigurationError as error:
            raise ValueError(str(error)) from None

    @field_validator("api_key_env")
    @classmethod
    def _variable(cls, value: str) -> str:
        if not _VARIABLE.match(value):
            raise ValueError("api_key_env names an environment variable (letters, digits and _), not a key")
        return value

    @field_validator("models")
    @classmethod
    def _models(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and (not value or not all(name.strip() for name in value)):
            raise ValueError("models lists the model names the endpoint serves (leave it out to ask the endpoint)")
        return value


_NO_PRICES = chat_usage_shape("openai_compatible", "OpenAI-compatible endpoint")
"""The shape a `Dialect` holds; never handed to genai-prices (`Dialect.priced_by` prices this provider)."""

ENDPOINT = Dialect(
    name="openai_compatible",
    owner="OpenAI-compatible endpoint",
    usage=_NO_PRICES,
    options=EndpointOptions,
    api_key_env="OPENAI_COMPATIBLE_API_KEY",
)
"""The provider as its parameter check knows it; an actor's own is `dialect_of` its settings."""


def check_parameters(parameters: Parameters) -> EndpointOptions:
    """The registry's parameter check: the dialect's, then the model against a configured list (with the closest
    names), as the actor loads."""
    options: EndpointOptions = ENDPOINT.check_parameters(parameters)
    if options.models is not None and parameters.model not in options.models:
        raise did_you_mean(
            parameters.model,
            options.models,
            where=f"the {options.owner} at {options.base_url} has no model {parameters.model!r}",
            listed="provider_options.openai_compatible.models names the models it serves",
        )
    return options


def _price_for(prices: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """The price of `model`, or of the longest configured name it is a dated version of (an answer may name the
    snapshot that served it, `gpt-4o-mini-2024-07-18` for `gpt-4o-mini`)."""
    if model in prices:
        return prices[model]
    versions = [name for name in prices if model.startswith(f"{name}-")]
    return prices[max(versions, key=len)] if versions else None


def price_of(options: EndpointOptions, usage: Usage, model: str, mode: BatchProcessingMode) -> Cost | None:
    """What `usage` of `model` cost at the configured prices and `mode`; None (unknown, never $0) for a model with
    no price."""
    price = _price_for(options.prices, model)
    return None if price is None else _cost(price, usage, mode)


def _cost(price: ModelPrice, usage: Usage, mode: BatchProcessingMode) -> Cost:
    cached = price.cached_input if price.cached_input is not None else price.input
    input_usd = (
        (usage.input_tokens + usage.cache_creation_input_tokens) * price.input + usage.cache_read_input_tokens * cached
    ) / _MILLION
    output_usd = usage.output_tokens * price.output / _MILLION
    live = input_usd + output_usd
    if mode is BatchProcessingMode.LIVE:
        return Cost(
            total_usd=live,
            input_usd=input_usd,
            output_usd=output_usd,
            pricing="live",
            live_equivalent_usd=live,
            source="configured",
        )
    kept = 1 - price.batch_discount
    return Cost(
        total_usd=live * kept,
        input_usd=input_usd * kept,
        output_usd=output_usd * kept,
        pricing="batch",
        live_equivalent_usd=live,
        source="configured",
    )


_PRICES = TypeAdapter(dict[str, ModelPrice])


def configured_price(
    provider_options: Mapping[str, Mapping[str, object]], usage: Usage, model: str, mode: BatchProcessingMode
) -> Cost | None:
    """What `usage` of `model` costs at the prices an actor's `provider_options.openai_compatible.prices` configure
    (None without one): the registry's configured prices, by which a live call's budget is checked."""
    section = provider_options.get(ENDPOINT.name) or {}
    prices = _PRICES.validate_python(section.get("prices") or {})
    price = _price_for(prices, model)
    return None if price is None else _cost(price, usage, mode)


def dialect_of(options: EndpointOptions) -> Dialect[EndpointOptions]:
    """One actor's endpoint as a `Dialect`: its owner's name and key variable, priced at its configured prices."""
    return dataclasses.replace(
        ENDPOINT,
        owner=options.owner,
        api_key_env=options.api_key_env,
        priced_by=functools.partial(price_of, options),
    )


def register(registry: ProviderRegistry) -> None:
    """The entry point of the `lowtide.providers` group: the parameter check and the two provider classes (imported
    when first used, the openai SDK with them), and the configured prices (a live call's budget). No usage shape is
    registered: genai-prices is never asked."""
    registry.register_parameters(ENDPOINT.name, check_parameters)
    registry.register_configured_prices(ENDPOINT.name, configured_price)
    for mode, attribute in (
        (BatchProcessingMode.LIVE, "EndpointProvider"),
        (BatchProcessingMode.BATCH, "EndpointBatchProvider"),
    ):
        registry.register(
            ENDPOINT.name, mode, LazyProvider("lowtide.providers.openai_compatible.endpoint_providers", attribute)
        )
