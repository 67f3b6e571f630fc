"""What one request of a batch run comes to, as an item's result: the answer, parsed, or the reason it has none."""

from __future__ import annotations

from collections.abc import Callable

from lowtide.batching.backend import BatchCodec, Settled
from lowtide.batching.policy import settled_of
from lowtide.bulk.outputs.results import ItemResult, ItemStatus
from lowtide.bulk.running.definition import RunDefinition
from lowtide.bulk.running.state import RunState
from lowtide.errors import ActorError, BatchRequestCanceled, BatchRequestExpired, StructuredOutputError
from lowtide.ledger.runs import ItemOutcome, ItemRow
from lowtide.messages.answers import TextAnswer, response_of

__all__ = ["BatchOutcomes", "cut_reason", "late_reason"]


def late_reason(time_limit: float | None) -> str:
    """Why an item not sent yet failed: the run's time limit passed first."""
    return f"time limit of {time_limit:g}s passed before it was sent"


def cut_reason(time_limit: float | None) -> str:
    """Why a sent item failed: the run's time limit passed and its batch was canceled before it was answered."""
    return f"time limit of {time_limit:g}s passed: its batch was canceled before it was answered"


class BatchOutcomes:
    """Turns a request's outcome (an answer, or the error that is its alone) into the item's result."""

    def __init__(self, run: RunDefinition, state: RunState, codec: BatchCodec, *, time_up: Callable[[], bool]) -> None:
        self.run = run
        self.state = state
        self.codec = codec
        self.time_up = time_up
        """Whether the run's time limit has passed (a canceled request is then failed, not canceled)."""

    def result(self, index: int, outcome: Settled, row: ItemRow | None) -> ItemResult:
        """Item `index`'s result for `outcome`; `row`, its ledger row from an earlier go (its reason kept), if any."""
        item = self.state.item
        if isinstance(outcome, TextAnswer) and self.run.response_model is None:
            # Text alone has no citations: the answer is kept as it came, its response built only when read.
            return item(index, ItemStatus.SUCCEEDED, answer=outcome)
        if not isinstance(outcome, ActorError):
            response = response_of(outcome)
            if self.run.response_model is not None:
                try:
                    response = self.codec.parse(response, self.run.response_model)
                except StructuredOutputError as exc:
                    return item(index, ItemStatus.FAILED, answer=outcome, error=exc)
            return self.state.succeeded(index, response)
        reason = row.reason if row is not None else None
        if isinstance(outcome, BatchRequestCanceled):
            if self.time_up() or (row is not None and row.status == ItemStatus.FAILED.value):
                return item(index, ItemStatus.FAILED, error=outcome, reason=reason or cut_reason(self.run.time_limit))
            return item(index, ItemStatus.CANCELED, error=outcome)
        status = ItemStatus.EXPIRED if isinstance(outcome, BatchRequestExpired) else ItemStatus.FAILED
        return item(index, status, error=outcome, reason=reason)

    def rebuilt(self, outcome: ItemOutcome) -> ItemResult:
        """A succeeded item's result made again from the answer the ledger stored (a run not holding its results)."""
        settled = settled_of(outcome.key, outcome.state, outcome.response, outcome.error)
        return self.result(outcome.index, settled, None)
