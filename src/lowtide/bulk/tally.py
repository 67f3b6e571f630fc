"""How many batches a bulk run has used, for its progress: done, out now, and still to send."""

from __future__ import annotations

__all__ = ["BatchTally"]


class BatchTally:
    """The batches of a run: `done` (every item of ours in it answered), `out` (some still waiting), `planned`.

    Batches are told apart by a name: the ledger's id for a batch a resumed run found out, and one of the run's own
    for a group it sent (the ledger id of a group's batch is known only once its create has been recorded).
    """

    def __init__(self, *, done: int = 0) -> None:
        self.done = done
        self.out = 0
        self.planned = 0
        self._waiting: dict[str, int] = {}

    @property
    def total(self) -> int:
        return self.done + self.out + self.planned

    def out_with(self, batch: str, items: int) -> None:
        """`batch` is out with `items` of the run's items in it."""
        self._waiting[batch] = items
        self.out += 1

    def settled(self, batch: str) -> bool:
        """One item of `batch` is answered; True when it was the last of the batch's items to be."""
        self._waiting[batch] -= 1
        if self._waiting[batch] > 0:
            return False
        del self._waiting[batch]
        self.out -= 1
        self.done += 1
        return True
