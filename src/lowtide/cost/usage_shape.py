"""How one provider reports usage, as pricing reads it: a `UsageShape`, which a provider registers with the registry
(`ProviderRegistry.register_pricing`) and `lowtide.cost.pricing` prices with genai-prices. Its own module so that the
registry, which keeps the shapes, and pricing, which finds them through the registry, do not import each other."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lowtide.types import Usage

__all__ = ["PROBE_TOKENS", "UsageShape", "neutral_probes"]

PROBE_TOKENS = 1000
"""The tokens of each kind in a `UsageShape`'s probes."""

_NEUTRAL = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cached_tokens": "cache_read_input_tokens",
    "cache_write_tokens": "cache_creation_input_tokens",
}
"""The token kinds `neutral_probes` makes, and the `Usage` field each stands for."""


def neutral_probes(
    from_neutral: Callable[[Usage], dict[str, object]], *kinds: str
) -> tuple[tuple[str, dict[str, object]], ...]:
    """A `UsageShape`'s probes where a neutral `Usage` can stand for every kind it prices apart: for each of `kinds`
    (of `input_tokens`, `output_tokens`, `cached_tokens`, `cache_write_tokens`), `from_neutral` of a usage with
    `PROBE_TOKENS` of that kind alone."""
    return tuple((kind, from_neutral(Usage(**{_NEUTRAL[kind]: PROBE_TOKENS}))) for kind in kinds)


@dataclass(frozen=True, eq=False)
class UsageShape:
    """How one provider reports usage, for genai-prices: its name there (`genai_provider`), the token kinds priced
    apart (`fields`), a usage of that shape with `PROBE_TOKENS` of each kind (`probes`), and the usage a neutral
    `Usage` stands for (`from_neutral`). A provider registers its own (`ProviderRegistry.register_pricing`)."""

    genai_provider: str
    """The provider's id in genai-prices."""
    owner: str
    """The provider's name as its users write it, for the batch discount's note."""
    fields: Callable[[Mapping[str, object]], dict[str, int]]
    """A usage as the API reported it -> the count of each token kind priced apart (input tokens without the cached
    ones, say), named as in `probes`."""
    probes: tuple[tuple[str, dict[str, object]], ...]
    """For each token kind of `fields`: a usage of the API's shape with `PROBE_TOKENS` of that kind alone."""
    from_neutral: Callable[[Usage], dict[str, object]]
    """The usage of the API's shape a neutral `Usage` stands for."""
    flavor: Callable[[Mapping[str, object]], str] = lambda _: "default"
    """genai-prices' `api_flavor` of a usage (one provider's APIs may report usage in shapes of their own)."""
    priced_tiers: frozenset[str] = frozenset()
    """Service tiers genai-prices prices apart from the standard one (`service_tier` in its price context)."""
    extracted_as: str | None = None
    """The genai-prices provider whose usage extractor reads this shape, when the provider's own has none (an
    OpenAI-compatible API reporting OpenAI's usage object, say); its prices stay `genai_provider`'s."""
