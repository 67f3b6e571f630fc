"""A batch run's primers at work: each request of a primed prefix marked to be cached (the codec's marker), and the
primers sent in a batch of their own and answered before the rest of the run is sent."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from lowtide.batching.prompt_caching import PromptCaching
from lowtide.bulk.planning.checks import params_text
from lowtide.bulk.planning.primers import CachePlan, cache_saving, plan_run, write_premium
from lowtide.bulk.running.definition import Prepared, RunDefinition
from lowtide.ledger.records import stored_json

__all__ = ["Priming"]

Built = tuple[int, dict[str, Any] | str, int]


class Priming:
    """The plan of one go at a run, and the marking of its requests as they are built."""

    def __init__(self, run: RunDefinition) -> None:
        self.run = run
        self.caching: PromptCaching | None = run.codec.prompt_caching
        self.provider = run.codec.name
        self.model = str(run.defaults.get("model") or run.actor.configuration.model)
        self.plan = CachePlan()
        self._premiums: dict[str, Decimal] = {}

    def plan_for(self, prepared: Prepared) -> None:
        """Plan the priming of the items `prepared` has still to send."""
        caching = self.caching
        if caching is None:
            return
        self.plan = plan_run(self.run, prepared)
        self._premiums = {
            group.prefix.key: write_premium(caching, group.prefix, provider=self.provider) for group in self.plan.primed
        }

    @property
    def primers(self) -> list[int]:
        return self.plan.primers

    def worst_case(self, index: int, worst_case: Decimal | None) -> Decimal | None:
        """Item `index`'s worst case once marked: its request may write the prefix, dearer than sending it."""
        prefix = self.plan.prefix_of.get(index)
        if worst_case is None or prefix is None:
            return worst_case
        return worst_case + self._premiums[prefix.key]

    def saving(self) -> Callable[[Mapping[str, int]], Decimal | None] | None:
        """How the run's summary prices what its cache reads and writes saved (None: the codec caches nothing)."""
        if self.caching is None:
            return None
        return cache_saving(self.caching, self.model, provider=self.provider)

    def marked(self, built: Iterator[Built]) -> Iterator[Built]:
        """`built`, each request of a primed prefix with its marker, its size grown by the marker's bytes."""
        prefix_of, caching = self.plan.prefix_of, self.caching
        for index, params, size in built:
            prefix = prefix_of.get(index)
            if prefix is None or caching is None:
                yield index, params, size
                continue
            if isinstance(params, str):
                text = stored_json(caching.mark(json.loads(params), prefix))  # as the ledger keeps params' JSON
                yield index, text, size + len(text.encode()) - len(params.encode())
            else:
                marked = caching.mark(params, prefix)
                yield index, marked, size + len(params_text(marked).encode()) - len(params_text(params).encode())
