"""What one go at a bulk run is given: its actor (`RunActor`), its run (`RunDefinition` for batch runs,
`LiveRunDefinition` for live ones, both a `RunOutputs`), and the run as `BulkRun` found it in the ledger (`Prepared`).

Protocols, so that the executions need nothing of `lowtide.Actor` or `BulkRun` but what they use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TextIO

from pydantic import BaseModel

from lowtide.batching.backend import BatchBackend, BatchCodec
from lowtide.bulk.inputs.jobs import Jobs
from lowtide.bulk.progress.reporters import ProgressCallback, ReporterMode
from lowtide.bulk.running.live_options import AbortMode, PostProcess
from lowtide.calls.face import ActorFace
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.runs import ItemRow
from lowtide.live.caller import LiveCaller
from lowtide.routing.routes import Route
from lowtide.types import ActorRequest

__all__ = ["LiveRunDefinition", "Prepared", "RunActor", "RunDefinition", "RunOutputs"]


class RunActor(ActorFace, Protocol):
    """What a bulk run needs of its actor (`lowtide.Actor` is one): besides what every part of its calls needs
    (`ActorFace`: its settings and clock, requests built from its defaults, its provider for the pre-send checks),
    its ledger, its batch codec and backend, and its live caller."""

    @property
    def ledger(self) -> LedgerStore: ...

    def existing_ledger(self) -> LedgerStore | None:
        """`ledger` when there is one to open; None when its location holds none yet (none made)."""
        ...

    def batch_codec(self, capability: str = ...) -> BatchCodec: ...

    def batch_backend(self, capability: str = ...) -> BatchBackend: ...

    def live_caller(self) -> LiveCaller: ...


class RunOutputs(Protocol):
    """What every go at a run needs of it, batch or live (`BulkRun` is one): its actor and jobs, its cost limit,
    what it writes (results directory, `out`) and how it reports progress."""

    actor: RunActor
    jobs: Jobs
    response_model: type[BaseModel] | None
    max_cost_usd: Decimal | None
    time_limit: float | None
    results_dir: Path | None
    out: Path | None
    on_progress: ProgressCallback | None
    progress: ReporterMode
    progress_stream: TextIO | None
    progress_interval: float


class RunDefinition(RunOutputs, Protocol):
    """What a batch execution (and its dry run, `batch_plan`) needs of its run besides: how many batches at once,
    the time limit's grace, its batch codec, and how requests are built, sized and priced."""

    max_parallel_batches: int
    cancel_grace: float
    defaults: dict[str, Any]
    """Messages parameters for every job (a job's own win): what its items' call spans say they ask."""
    route: Route | None
    """A deadline's route (None: no deadline): what is sent by which venue, and when a late batch's work moves."""

    @property
    def codec(self) -> BatchCodec: ...

    def built(self, prepared: Prepared, indexes: Sequence[int]) -> Iterator[tuple[int, dict[str, Any] | str, int]]: ...

    def model_of(self, params: Mapping[str, Any] | str) -> str: ...

    def max_requests(self) -> int: ...

    def max_bytes(self) -> int: ...

    def worst_case(self, params: Mapping[str, Any] | str) -> Decimal | None: ...

    def live_request(self, index: int, key: str) -> ActorRequest: ...

    def live_worst_case(self, request: ActorRequest) -> Decimal | None: ...


class LiveRunDefinition(RunOutputs, Protocol):
    """What a live execution needs of its run besides: what stops it, its post-processor, and its live requests."""

    abort_on: frozenset[str]
    abort_mode: AbortMode
    post_process: PostProcess | None
    post_process_timeout: float | None

    def live_request(self, index: int, key: str) -> ActorRequest: ...

    def live_worst_case(self, request: ActorRequest) -> Decimal | None: ...


@dataclass
class Prepared:
    """A run as `BulkRun._prepare` found it: its keys, and which items are final, out in a batch, or to send."""

    run_id: str
    store: RunLedger
    backend: BatchBackend | None
    keys: Sequence[str]
    rows: list[ItemRow]
    finished: list[int]
    attach: list[int]
    to_send: Sequence[int]
    """In input order (ascending)."""
    spent: Decimal
    sizes: Sequence[int]
    """Each job's size as a batch request, estimated before its file is read: how many batches are still to come."""
    identity: str
    """The ledger's identity, which its custom ids carry (`BatchCodec.custom_id_for`)."""
    stored: Sequence[int] = ()
    """Final items answered with nothing decided by the run, kept as their index alone, in input order (a go not
    holding its results: `sorting.sort_items`); their rows are not in `rows`, nor they in `finished`."""

    @cached_property
    def row_of(self) -> dict[int, ItemRow]:
        """The rows read back, by item index."""
        return {row.index: row for row in self.rows}

    def sorted_out(self) -> None:
        """The go has sorted its items out (results found, batches attached): the rows read back are not kept for
        the rest of the run (a resumed run of 1,000,000 items would hold a million of them to its end)."""
        self.rows = []
        self.__dict__.pop("row_of", None)
