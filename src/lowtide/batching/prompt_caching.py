"""The prompt-cache capability a batch codec may offer: the cacheable prefix a request shares with others, how to mark
it for the longest lifetime the API gives, and its usage as the API would report it (so that a saving is priced).

A provider's rules (what its prefix is, each model's minimum cacheable length, how a marker is written) stay in its
own folder behind `PromptCaching`; the planning that primes a cache before the rest of a run is sent is generic
(`lowtide.bulk.planning.primers`). A third-party codec offers it by setting `BatchCodec.prompt_caching`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CachePrefix", "PromptCaching"]


@dataclass(frozen=True)
class CachePrefix:
    """A request's cacheable prefix: `key` is the same for every request that shares it (the model included),
    `tokens` its estimated length."""

    key: str
    tokens: int
    model: str


class PromptCaching(ABC):
    """One API's prompt caching, as pure functions of request bodies (the codec's `encode_request` shape). Requests
    processed side by side in one batch do not see each other's cache writes: a primer answered first does."""

    lifetime_seconds: float
    """How long a prefix stays cached once written with the marker `mark` writes (the longest the API offers)."""

    primes: bool = True
    """Whether one request is sent and answered first, to write the prefix the others then read; False where the
    marker alone shares the cache (a routing key), every request of a shared prefix marked and sent together."""

    @abstractmethod
    def prefix(self, params: Mapping[str, Any]) -> CachePrefix | None:
        """The prefix `params` would cache once marked; None when it has none long enough for its model's minimum,
        or when the caller marked its own (left as written)."""

    @abstractmethod
    def mark(self, params: Mapping[str, Any], prefix: CachePrefix) -> dict[str, Any]:
        """`params` with `prefix` marked to be cached for `lifetime_seconds` (a copy: `params` is not changed)."""

    @abstractmethod
    def usage(self, *, read: int, written: int) -> dict[str, object]:
        """The usage the API reports for a request whose prefix read `read` tokens from the cache or wrote `written`
        tokens to it (the rest of the request left out), in the shape its `UsageShape` prices."""

    @abstractmethod
    def uncached_usage(self, tokens: int) -> dict[str, object]:
        """The usage of `tokens` of input that no cache read or wrote, in the same shape."""
