"""How many batches a bulk run has used, for its progress: done, out now, and still to send; and when those of this
go were sent and ended, for the pace its ETA counts at (`bulk/progress/eta.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from lowtide.bulk.progress.eta import BatchTimes

__all__ = ["BatchTally"]


@dataclass(slots=True)
class _Out:
    waiting: int
    """The run's items in it not yet answered."""
    items: int
    sent_at: float | None
    """When it was sent, if known (a batch an earlier go sent and this one found out may not say)."""


class BatchTally:
    """The batches of a run: `done` (every item of ours in it answered), `out` (some still waiting), `planned`.

    Batches are told apart by a name: the ledger's id for a batch a resumed run found out, and one of the run's own
    for a group it sent (the ledger id of a group's batch is known only once its create has been recorded).
    """

    def __init__(self, *, done: int = 0) -> None:
        self.done = done
        self.out = 0
        self.planned = 0
        self._waiting: dict[str, _Out] = {}
        self._ended: list[BatchTimes] = []
        """The batches whose items were all answered in this go and whose sending time is known: the pace."""

    @property
    def total(self) -> int:
        return self.done + self.out + self.planned

    def out_with(self, batch: str, items: int, *, sent_at: float | None = None) -> None:
        """`batch` is out with `items` of the run's items in it, sent at `sent_at` (if known)."""
        self._waiting[batch] = _Out(items, items, sent_at)
        self.out += 1

    def settled(self, batch: str, *, at: float | None = None) -> bool:
        """One item of `batch` is answered (at `at`); True when it was the last of the batch's items to be."""
        out = self._waiting[batch]
        out.waiting -= 1
        if out.waiting > 0:
            return False
        del self._waiting[batch]
        self.out -= 1
        self.done += 1
        if out.sent_at is not None and at is not None:
            self._ended.append(BatchTimes(out.sent_at, max(at, out.sent_at), False, out.items))
        return True

    def times(self, now: float) -> list[BatchTimes]:
        """The batches as the ETA reads them: those that ended in this go (the pace), and those out, each with the
        items of ours still waiting in it (one whose sending time is not known counts as sent `now`)."""
        out = [
            BatchTimes(now if batch.sent_at is None else batch.sent_at, None, True, batch.waiting)
            for batch in self._waiting.values()
        ]
        return [*self._ended, *out]
