"""What a run's summary says (`RunReport`): its counts, cost, usage, batches and why items did not succeed, with the
summary line and JSON `lowtide run` prints. Folded from the items one at a time (`results.ReportTally`), so that a
run whose results are written from the ledger says the same as one that holds them (`RunResult.report()`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from lowtide.errors import APIError

__all__ = ["RunReport", "no_usage", "usd"]

_USAGE = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


@dataclass
class RunReport:
    """A run's outcome, summed: what `lowtide run` and `lowtide retry` print, without the items' answers."""

    run_id: str
    items: int
    item_counts: dict[str, int]
    """Items by status (`ItemStatus` values), every status present."""
    cost_usd: Decimal | None
    """What the run's answers cost; None (unknown, never $0) when one of them has no known price."""
    live_cost_usd: Decimal | None
    unpriced: int
    """How many answers have no known cost."""
    usage: dict[str, int]
    """Tokens summed over the answers: input (without the cache), cache reads and writes, output."""
    reasons: dict[str, int] = field(default_factory=dict[str, int])
    """Why items did not succeed (their reason, else their error, else their status), each counted."""
    api_failure: APIError | None = None
    """The first error of an item that failed because the API refused or failed a call, if one did."""
    batches: int | None = None
    mode: str = "batch"
    interrupted: str | None = None
    elapsed_seconds: float = 0.0
    notes: list[str] = field(default_factory=list[str])

    def counts(self) -> dict[str, int]:
        return dict(self.item_counts)

    @property
    def ok(self) -> bool:
        return self.item_counts.get("succeeded", 0) == self.items

    @property
    def waiting(self) -> int:
        """Items in batches whose answers were not collected: the same run again collects them."""
        return self.item_counts.get("waiting", 0)

    @property
    def to_retry(self) -> int:
        """Items that `retry` sends again: failed and expired (in a live run, also those not attempted)."""
        again = self.item_counts.get("failed", 0) + self.item_counts.get("expired", 0)
        return again + (self.item_counts.get("not-run", 0) if self.mode == "live" else 0)

    def as_json(self) -> dict[str, object]:
        """The run's summary as `lowtide run --json` prints it (costs as exact numbers through `exact_json`)."""
        return {
            "run_id": self.run_id,
            "counts": self.counts(),
            "batches": self.batches,
            "cost_usd": self.cost_usd,
            "live_cost_usd": self.live_cost_usd,
            "mode": self.mode,
            "usage": dict(self.usage),
            **({"interrupted": self.interrupted} if self.interrupted is not None else {}),
        }

    def summary(self) -> str:
        counts = ", ".join(f"{n} {status}" for status, n in self.item_counts.items() if n)
        if self.mode == "live":
            used = self.usage
            stopped = f" interrupted by {self.interrupted};" if self.interrupted is not None else ""
            return (
                f"run {self.run_id}: {self.items} item(s): {counts or 'none'}; live;{stopped}"
                f" {usd(self.cost_usd)} at live prices{self._unknown()};"
                f" tokens: {used['input_tokens']:,} in, {used['cache_read_input_tokens']:,} cache read,"
                f" {used['cache_creation_input_tokens']:,} cache write, {used['output_tokens']:,} out"
            )
        batches = f" {self.batches} batch(es);" if self.batches is not None else ""
        return (
            f"run {self.run_id}: {self.items} item(s): {counts or 'none'};{batches}"
            f" {usd(self.cost_usd)} at batch prices (live: {usd(self.live_cost_usd)}){self._unknown()}"
        )

    def _unknown(self) -> str:
        return f" (no price is known for {self.unpriced} answer(s))" if self.unpriced else ""


def usd(amount: Decimal | None) -> str:
    """An amount of US dollars as summaries show it: "unknown" when it is not known, never $0."""
    return "unknown" if amount is None else f"${amount:.6f}"


def no_usage() -> dict[str, int]:
    return dict.fromkeys(_USAGE, 0)
