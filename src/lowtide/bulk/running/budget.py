"""A bulk run's cost limit: what the run has really spent, plus the worst case of every request still out.

A request is reserved at its worst case (input estimated high, output at `max_tokens`) when it is sent, or found
out in a batch when a run resumes; when its answer arrives the reservation is released and its real cost spent. A
batch is sent only when what it holds fits beside both.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

__all__ = ["RunBudget"]


class RunBudget:
    """The money side of a run: `spent` (real costs of the answers in), `reserved` (worst cases of requests out)."""

    def __init__(self, limit: Decimal | None, spent: Decimal = Decimal(0)) -> None:
        self.limit = limit
        self.spent = spent
        self.reserved = Decimal(0)
        self._worst: dict[int, Decimal] = {}

    def reserve(self, index: int, worst_case: Decimal | None) -> None:
        """Count item `index`'s worst case against the limit until its answer arrives (with no limit, nothing is
        kept: a run of 100,000 items needs no dict of zeros)."""
        if self.limit is None:
            return
        self.release(index)
        self._worst[index] = worst_case or Decimal(0)
        self.reserved += self._worst[index]

    def release(self, index: int) -> None:
        if self._worst:
            self.reserved -= self._worst.pop(index, Decimal(0))

    def settle(self, index: int, cost: Decimal | None) -> None:
        """Item `index` is answered: its worst case is released and its real cost (if any) spent."""
        self.release(index)
        self.spent += cost or Decimal(0)

    def fits(self, worst_cases: Sequence[Decimal | None]) -> bool:
        return self.fitting(worst_cases) == len(worst_cases)

    def fitting(self, worst_cases: Sequence[Decimal | None]) -> int:
        """How many of these requests, in order, fit beside what is spent and what is out."""
        if self.limit is None:
            return len(worst_cases)
        total = self.spent + self.reserved
        for count, worst_case in enumerate(worst_cases):
            total += worst_case or Decimal(0)
            if total > self.limit:
                return count
        return len(worst_cases)

    def refusal(self, worst_case: Decimal | None) -> str:
        """Why a request is not sent: the limit, the true spend so far, and the request's worst case."""
        return (
            f"cost limit ${self.limit}: the run has spent ${self.spent:.6f}, and the worst case of this request"
            f" (${worst_case or 0:.6f}) would cross the limit"
        )
