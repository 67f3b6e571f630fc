"""Splitting a run into provider batches, and the plan a dry run prints.

Items go into batches in input order, a batch closing when the next item would cross the request count or the
byte size allowed (the API's 100,000 requests and 256 MB, or smaller configured caps). A request's size is its
JSON in the create body: its params, its `custom_id` and the envelope around them.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lowtide.bulk.planning.converted import ConvertedFile, converted_json, converted_lines
from lowtide.bulk.planning.primers import CachePlan, plan_run
from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError
from lowtide.routing.routes import Route

if TYPE_CHECKING:
    from lowtide.bulk.running.definition import Prepared, RunDefinition

__all__ = [
    "API_MAX_BATCH_BYTES",
    "API_MAX_BATCH_REQUESTS",
    "PlannedBatch",
    "RunPlan",
    "Splitter",
    "batch_plan",
    "batches_from",
    "request_size",
    "split",
]

API_MAX_BATCH_REQUESTS = 100_000
API_MAX_BATCH_BYTES = 256_000_000
# `{"custom_id": "...", "params": ...}` and the comma between requests, beyond the custom id and params themselves.
T = TypeVar("T")

_ENVELOPE_BYTES = len('{"custom_id":"","params":},')


def request_size(custom_id: str, params: Mapping[str, Any]) -> int:
    """The bytes one request adds to a batch's create body."""
    encoded = json.dumps(params, separators=(",", ":"), ensure_ascii=False, default=str).encode()
    return len(encoded) + len(custom_id.encode()) + _ENVELOPE_BYTES


def split(sized: Iterable[tuple[T, int]], *, max_requests: int, max_bytes: int) -> Iterator[list[T]]:
    """Group `(item, size)` pairs, in order, into batches of at most `max_requests` items and `max_bytes` bytes.

    Lazy: a group is yielded as soon as it is closed, so items can be built as they are sent. An item larger than
    a whole batch may be is a `ConfigurationError`, raised when it is reached.
    """
    splitter = Splitter(sized, max_requests=max_requests, max_bytes=max_bytes)
    while group := splitter.take():
        yield [item for item, _ in group]


class Splitter(Generic[T]):
    """`split` one group at a time, where a group may be cut short: its tail, given back, leads the next group.

    A run under a cost limit sends the part of a group that fits and keeps the rest for its next batch.
    """

    def __init__(self, sized: Iterable[tuple[T, int]], *, max_requests: int, max_bytes: int) -> None:
        if max_requests < 1 or max_requests > API_MAX_BATCH_REQUESTS:
            raise ConfigurationError(
                f"{argument('items_per_batch')} must be between 1 and {API_MAX_BATCH_REQUESTS:,}, not {max_requests}.",
                field="items_per_batch",
            )
        if max_bytes < 1 or max_bytes > API_MAX_BATCH_BYTES:
            raise ConfigurationError(
                f"A batch may hold at most {API_MAX_BATCH_BYTES:,} bytes, not {max_bytes:,}.", field="max_batch_bytes"
            )
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self._sized = iter(sized)
        self._ahead: deque[tuple[T, int]] = deque()

    def take(self) -> list[tuple[T, int]]:
        """The next group of `(item, size)` pairs, in order; empty when there are no more."""
        group: list[tuple[T, int]] = []
        used = 0
        while pair := self._next():
            item, size = pair
            if size > self.max_bytes:
                most = self.max_bytes
                raise ConfigurationError(
                    f"Item {item} is {size:,} bytes as a batch request, more than a batch may hold ({most:,}).",
                    field="input",
                )
            if group and (len(group) >= self.max_requests or used + size > self.max_bytes):
                self._ahead.appendleft(pair)
                break
            group.append(pair)
            used += size
        return group

    def give_back(self, pairs: Sequence[tuple[T, int]]) -> None:
        """Put the tail of a group taken back in front, in its order, to lead the next group."""
        self._ahead.extendleft(reversed(pairs))

    def _next(self) -> tuple[T, int] | None:
        if self._ahead:
            return self._ahead.popleft()
        return next(self._sized, None)


def batches_from(sizes: Sequence[int], *, max_requests: int, max_bytes: int) -> list[int]:
    """For each place in `sizes`, how many batches `split` makes of the items from there on (and 0 after the last).

    In one pass, so that a run can say how many batches are still to come after each one it sends.
    """
    count = len(sizes)
    ends = [0] * count  # where the group that starts at each place ends
    end = used = 0
    for start in range(count):
        if end <= start:
            end, used = start, 0
        while end < count and end - start < max_requests and (end == start or used + sizes[end] <= max_bytes):
            used += sizes[end]
            end += 1
        ends[start] = end
        used -= sizes[start]
    after = [0] * (count + 1)
    for start in range(count - 1, -1, -1):
        after[start] = 1 + after[ends[start]]
    return after


@dataclass
class PlannedBatch:
    requests: int = 0
    bytes: int = 0
    cost_low_usd: Decimal = Decimal(0)
    cost_high_usd: Decimal = Decimal(0)
    priced: bool = True
    """False when a request in it names a model with no known price: its cost is unknown (never $0)."""

    def cost_text(self) -> str:
        if not self.priced:
            return "cost unknown"
        return f"${self.cost_low_usd:.4f} to ${self.cost_high_usd:.4f}"


@dataclass
class RunPlan:
    """What a run would send: its batches, their sizes and the cost range, before anything is sent."""

    run_id: str
    items_total: int
    already_final: int
    batches: list[PlannedBatch] = field(default_factory=list[PlannedBatch])
    cost_limit_usd: Decimal | None = None
    not_run: int = 0
    """Items past the cost limit: a run would not send them (judged on worst cases, the most pessimistic view)."""
    unpriced_model: str | None = None
    """A model of the run with no known price: the run's cost is then unknown."""
    converted: list[ConvertedFile] = field(default_factory=list[ConvertedFile])
    """The files the run sends as the text they convert to."""
    unchecked: list[str] = field(default_factory=list[str])
    """What a dry run could not check without asking the API (`dry_checks`)."""
    cache: CachePlan = field(default_factory=CachePlan)
    """The prompt cache's primers, and the saving they are expected to bring."""
    route: Route | None = None
    """A deadline's route: the venue chosen, its price and expected time, and what moves if it is late."""
    planned_at: float = 0.0
    """When the plan was made (the actor's clock): what the route's times are counted from."""

    @property
    def requests(self) -> int:
        return sum(batch.requests for batch in self.batches)

    @property
    def cost_low_usd(self) -> Decimal:
        return sum((batch.cost_low_usd for batch in self.batches), Decimal(0))

    @property
    def cost_high_usd(self) -> Decimal:
        return sum((batch.cost_high_usd for batch in self.batches), Decimal(0))

    def lines(self) -> list[str]:
        """The plan as a user reads it."""
        out = [
            f"run {self.run_id}: {self.items_total} item(s), {self.already_final} already answered,"
            f" {self.requests} to send in {len(self.batches)} batch(es)"
        ]
        for number, batch in enumerate(self.batches, 1):
            out.append(f"  batch {number}: {batch.requests} request(s), {batch.bytes:,} bytes, {batch.cost_text()}")
        if self.unpriced_model is not None:
            out.append(f"estimated cost: unknown (no price for model {self.unpriced_model!r})")
        else:
            out.append(f"estimated cost: ${self.cost_low_usd:.4f} to ${self.cost_high_usd:.4f} at batch prices")
        if self.cost_limit_usd is not None:
            out.append(f"cost limit: ${self.cost_limit_usd:.4f}")
        if self.not_run:
            out.append(f"{self.not_run} item(s) would not run: their worst case crosses the cost limit")
        out += self.cache.lines()
        out += converted_lines(self.converted)
        if self.route is not None:
            out += self.route.lines(self.planned_at)
        out += self.unchecked
        out.append("dry run: nothing was sent")
        return out

    def as_json(self) -> dict[str, Any]:
        """The plan as JSON; an unknown cost is null, never 0."""
        priced = self.unpriced_model is None
        return {
            "route": self.route.as_json(self.planned_at) if self.route is not None else None,
            "run_id": self.run_id,
            "items_total": self.items_total,
            "already_final": self.already_final,
            "requests": self.requests,
            "batches": [
                {
                    "requests": b.requests,
                    "bytes": b.bytes,
                    "cost_low_usd": str(b.cost_low_usd) if b.priced else None,
                    "cost_high_usd": str(b.cost_high_usd) if b.priced else None,
                }
                for b in self.batches
            ],
            "cost_low_usd": str(self.cost_low_usd) if priced else None,
            "cost_high_usd": str(self.cost_high_usd) if priced else None,
            "unpriced_model": self.unpriced_model,
            "cost_limit_usd": str(self.cost_limit_usd) if self.cost_limit_usd is not None else None,
            "not_run": self.not_run,
            "converted_files": converted_json(self.converted),
            "prompt_cache": self.cache.as_json(),
            "not_checked": self.unchecked,
        }


def batch_plan(run: RunDefinition, prepared: Prepared) -> RunPlan:
    """The plan of `run`'s items still to send: their batches, sizes and cost range at batch prices."""
    plan = RunPlan(
        run_id=prepared.run_id,
        items_total=len(run.jobs),
        already_final=len(run.jobs) - len(prepared.to_send),
        cost_limit_usd=run.max_cost_usd,
    )
    plan.cache = plan_run(run, prepared)
    spent = prepared.spent
    over_limit = False
    built = run.built(prepared, prepared.to_send)
    for group in split(
        ((entry, entry[2]) for entry in built), max_requests=run.max_requests(), max_bytes=run.max_bytes()
    ):
        batch = PlannedBatch()
        for _, built_params, size in group:
            params = built_params if isinstance(built_params, dict) else json.loads(built_params)
            estimate = run.codec.cost_range(params)
            if estimate is None:
                plan.unpriced_model = run.codec.model_of(params)
                batch.priced = False
                estimate = (Decimal(0), Decimal(0))
            if over_limit or (run.max_cost_usd is not None and spent + estimate[1] > run.max_cost_usd):
                over_limit = True
                plan.not_run += 1
                continue
            spent += estimate[1]
            batch.requests += 1
            batch.bytes += size
            batch.cost_low_usd += estimate[0]
            batch.cost_high_usd += estimate[1]
        if batch.requests:
            plan.batches.append(batch)
    return plan
