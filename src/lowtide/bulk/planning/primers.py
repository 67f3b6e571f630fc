"""Which items of a batch run prime the prompt cache: the requests still to send grouped by the cacheable prefix they
share (the codec's `PromptCaching` says what that is), and, for each group whose primer pays for itself at batch
prices, its first item, sent and answered before the others so that they read what it wrote.

Provider-neutral: a prefix is the codec's, a saving is priced with genai-prices from the usage the codec says its API
would report. Requests side by side in one batch do not see each other's cache writes, so without a primer a batch of
requests sharing a prompt pays for it whole, or writes it many times."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from lowtide.batching.prompt_caching import CachePrefix, PromptCaching
from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.pricing import cost_of

if TYPE_CHECKING:
    from lowtide.bulk.running.definition import Prepared, RunDefinition

__all__ = ["CachePlan", "PrimedPrefix", "cache_saving", "plan_cache", "plan_run", "rest_of", "write_premium"]


@dataclass
class PrimedPrefix:
    """A prefix the run primes: the items sharing it (input order; the first is its primer) and what priming saves."""

    prefix: CachePrefix
    items: list[int]
    saving_usd: Decimal
    primes: bool = True
    """False: its requests are only marked (the caching's `primes`), all sent together."""

    @property
    def primer(self) -> int:
        return self.items[0]


@dataclass
class CachePlan:
    """A run's priming: the prefixes it primes, and why the other items are sent as they are."""

    primed: list[PrimedPrefix] = field(default_factory=list[PrimedPrefix])
    off: bool = False
    """Priming turned off by the actor's `batch.cache_primers: false`."""
    short: int = 0
    """Items whose prefix is too short to cache for their model (or that marked their own breakpoints)."""
    unpaid: int = 0
    """Items whose prefix is shared by too few requests for a primer to pay (or has no known price)."""
    prefix_of: dict[int, CachePrefix] = field(default_factory=dict[int, CachePrefix])
    """The prefix each item of a primed group is marked with."""

    @property
    def primers(self) -> list[int]:
        return sorted(group.primer for group in self.primed if group.primes)

    @property
    def saving_usd(self) -> Decimal:
        return sum((group.saving_usd for group in self.primed), Decimal(0))

    def lines(self) -> list[str]:
        """What a dry run says of the prompt cache."""
        if self.off:
            return ["prompt cache: no primer (turned off: batch.cache_primers is false)"]
        out: list[str] = []
        for group in self.primed:
            if not group.primes:
                out.append(f"prompt cache: {len(group.items)} request(s) sharing a {group.prefix.tokens:,}-token"
                           " prefix, sent under one cache key")  # fmt: skip
                continue
            out.append(
                f"prompt cache: 1 primer, then {len(group.items) - 1} request(s) reading its"
                f" {group.prefix.tokens:,}-token prefix; expected saving ${group.saving_usd:.4f} at batch prices"
            )
        if self.short:
            out.append(f"prompt cache: {self.short} request(s) with no prefix long enough to cache, sent as they are")
        if self.unpaid:
            out.append(f"prompt cache: {self.unpaid} request(s) share too little for a primer to pay, sent as they are")
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "off": self.off,
            "primers": len(self.primed),
            "prefixes": [
                {"tokens": g.prefix.tokens, "requests": len(g.items), "saving_usd": str(g.saving_usd)}
                for g in self.primed
            ],
            "saving_usd": str(self.saving_usd),
            "too_short": self.short,
            "not_worth_it": self.unpaid,
        }


def plan_run(run: RunDefinition, prepared: Prepared) -> CachePlan:
    """The priming of the items `prepared` has still to send, by the run's codec and its actor's settings (their
    requests built once more to see what they share)."""
    codec = run.codec
    return plan_cache(
        codec.prompt_caching,
        run.built(prepared, prepared.to_send) if codec.prompt_caching is not None else (),
        provider=codec.name,
        enabled=run.actor.configuration.batch.cache_primers,
    )


def plan_cache(
    caching: PromptCaching | None,
    built: Iterable[tuple[int, dict[str, Any] | str, int]],
    *,
    provider: str,
    enabled: bool = True,
) -> CachePlan:
    """The priming of the requests `built` gives (index, params, size), for a codec whose caching is `caching`."""
    if caching is None:
        return CachePlan()
    if not enabled:
        return CachePlan(off=True)
    plan = CachePlan()
    groups: dict[str, list[int]] = {}
    prefixes: dict[str, CachePrefix] = {}
    for index, params, _ in built:
        prefix = caching.prefix(params if isinstance(params, dict) else json.loads(params))
        if prefix is None:
            plan.short += 1
            continue
        prefixes.setdefault(prefix.key, prefix)
        groups.setdefault(prefix.key, []).append(index)
    for key, items in groups.items():
        prefix = prefixes[key]
        if not caching.primes and len(items) > 1:  # a key shares the cache: nothing to price, nothing to wait for
            plan.primed.append(PrimedPrefix(prefix, items, Decimal(0), primes=False))
            plan.prefix_of.update(dict.fromkeys(items, prefix))
            continue
        saving = _saving(caching, prefix, len(items), provider=provider) if caching.primes else None
        if saving is None or saving <= 0:
            plan.unpaid += len(items)
            continue
        plan.primed.append(PrimedPrefix(prefix, items, saving))
        plan.prefix_of.update(dict.fromkeys(items, prefix))
    return plan


def _saving(caching: PromptCaching, prefix: CachePrefix, requests: int, *, provider: str) -> Decimal | None:
    """What `requests` sharing `prefix` save with a primer (one write, then reads) against none (each pays it whole),
    at batch prices; None when the model has no known price."""
    return cache_saving(caching, prefix.model, provider=provider)(
        {"cache_read_input_tokens": (requests - 1) * prefix.tokens, "cache_creation_input_tokens": prefix.tokens}
    )


def cache_saving(caching: PromptCaching, model: str, *, provider: str) -> Callable[[Mapping[str, int]], Decimal | None]:
    """What the cache reads and writes of a run's summed usage saved against the same tokens sent uncached, at batch
    prices (the writes at the lifetime `caching` marks); None when `model` has no known price."""

    def price(usage: Mapping[str, object]) -> Decimal | None:
        cost = cost_of(usage, model, mode=BatchProcessingMode.BATCH, provider=provider)
        return None if cost is None else cost.total_usd

    def saved(usage: Mapping[str, int]) -> Decimal | None:
        read, written = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
        whole, cached = price(caching.uncached_usage(read + written)), price(caching.usage(read=read, written=written))
        return None if whole is None or cached is None else whole - cached

    return saved


def write_premium(caching: PromptCaching, prefix: CachePrefix, *, provider: str) -> Decimal:
    """What writing `prefix` to the cache costs beyond sending it uncached, at batch prices (0 when unpriced): a
    marked request's worst case grows by it, so that a cost limit holds whichever request writes."""
    whole = cost_of(caching.uncached_usage(prefix.tokens), prefix.model, mode=BatchProcessingMode.BATCH,
                    provider=provider)  # fmt: skip
    written = cost_of(caching.usage(read=0, written=prefix.tokens), prefix.model, mode=BatchProcessingMode.BATCH,
                      provider=provider)  # fmt: skip
    if whole is None or written is None:
        return Decimal(0)
    return max(Decimal(0), written.total_usd - whole.total_usd)


def rest_of(indexes: Sequence[int], primers: Sequence[int]) -> list[int]:
    """`indexes` without the primers (both ascending)."""
    skip = set(primers)
    return [index for index in indexes if index not in skip]
