"""`PriceCache`: a usage priced once, whatever the number of answers that report it.

A batch's results come by the thousand, and most of them report one of a few usages (the same prompt shape, the same
answer length): pricing each (genai-prices' rates, two pydantic models and their JSON) costs more than reading the
line. A provider's codec asks its cache for `priced(usage, model, mode, ...)`: the first answer reporting a usage
builds its `Priced` (through the `make` it gives), and the others share it (its models and their JSON are never
changed once built). The key is the usage as received, its JSON (orjson; its `repr` where orjson refuses a value, an
integer beyond 64 bits), so that any field a price may depend on is part of it, and whatever else the caller names.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

import orjson

from lowtide.core.json_types import JSONObject
from lowtide.types import Cost, Usage

__all__ = ["PriceCache", "Priced"]


@dataclass(frozen=True)
class Priced:
    """A usage in lowtide's terms and its cost (None: unpriced), each with its JSON as the ledger stores it."""

    usage: Usage
    usage_json: JSONObject
    cost: Cost | None
    cost_json: JSONObject | None

    @classmethod
    def of(cls, usage: Usage, cost: Cost | None) -> Priced:
        return cls(usage, usage.model_dump(mode="json"), cost, cost.model_dump(mode="json") if cost else None)


class PriceCache:
    """The usages a provider's answers reported, priced; at most `most` of them (then it starts again)."""

    def __init__(self, most: int = 4096) -> None:
        self.most = most
        self._priced: dict[tuple[object, ...], Priced] = {}

    def get(self, usage: Mapping[str, object], *key: Hashable) -> Priced | None:
        """The price of `usage` under `key` if it was made before (`priced`): asked first by a codec reading answers
        by the thousand, which then makes its `make` (a closure) only for a usage it has not seen."""
        return self._priced.get((*key, _seen(usage)))

    def priced(self, usage: Mapping[str, object], *key: Hashable, make: Callable[[], Priced]) -> Priced:
        """The price of `usage` under `key` (model, mode, tier...), made by `make` the first time."""
        whole = (*key, _seen(usage))
        found = self._priced.get(whole)
        if found is None:
            if len(self._priced) >= self.most:  # a bound on memory, not behaviour
                self._priced.clear()
            found = self._priced[whole] = make()
        return found


def _seen(usage: Mapping[str, object]) -> bytes | str:
    """A usage as a cache's key: its JSON (orjson), or its `repr` where orjson refuses a value."""
    try:
        return orjson.dumps(usage)
    except TypeError:
        return repr(usage)
