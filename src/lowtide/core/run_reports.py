"""What a bulk run says of itself: where it stands as it goes (`RunProgress`) and what it came to (`RunReport`).

They sit below bulk/, which makes them, so that live/'s events and telemetry/'s run span can carry them without
importing bulk/ (`lowtide.bulk` and its modules still give the same names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from lowtide.errors import APIError

__all__ = ["PROGRESS_SEPARATOR", "RunProgress", "RunReport", "format_duration", "no_usage", "usd"]

PROGRESS_SEPARATOR = " · "
"""What parts a progress line (`RunProgress.line`); a terminal that cannot encode it gets " | "."""

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
    cache_saved_usd: Decimal | None = None
    """What the prompt cache's reads and writes saved against the same tokens sent uncached (None: not priced)."""

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
            **({"cache_saved_usd": self.cache_saved_usd} if self.cache_saved_usd is not None else {}),
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
            f" {usd(self.cost_usd)} at batch prices (live: {usd(self.live_cost_usd)}){self._unknown()}{self._cache()}"
        )

    def _cache(self) -> str:
        """The prompt cache's part of a batch run's summary: tokens read and written per answer, and the saving."""
        read, written = self.usage["cache_read_input_tokens"], self.usage["cache_creation_input_tokens"]
        answers = self.item_counts.get("succeeded", 0)
        if not (read or written) or not answers:
            return ""
        saved = f", saving {usd(self.cache_saved_usd)}" if self.cache_saved_usd is not None else ""
        per = f"{read / answers:,.0f} token(s) read and {written / answers:,.0f} written per answer"
        return f"; prompt cache: {per}{saved}"

    def _unknown(self) -> str:
        return f" (no price is known for {self.unpriced} answer(s))" if self.unpriced else ""


def usd(amount: Decimal | None) -> str:
    """An amount of US dollars as summaries show it: "unknown" when it is not known, never $0."""
    return "unknown" if amount is None else f"${amount:.6f}"


def no_usage() -> dict[str, int]:
    return dict.fromkeys(_USAGE, 0)


@dataclass(frozen=True)
class RunProgress:
    """A snapshot of a bulk run: items and batches so far, money spent, time taken.

    `items_done` counts items that reached an end (succeeded, failed, expired, canceled or not run).
    """

    run_id: str
    items_total: int
    items_done: int
    succeeded: int
    failed: int
    canceled: int
    not_run: int
    batches_total: int
    """Batches the run has used (in earlier goes too), and those its items still to send should take."""
    batches_done: int
    batches_in_flight: int
    cost_usd: Decimal
    cost_limit_usd: Decimal | None
    elapsed_seconds: float
    expired: int = 0
    """Items whose request expired in its batch (24 hours) on its last attempt; `retry` sends them again."""
    calls_in_flight: int | None = None
    """A live run's calls in flight (None for a batch run, which counts batches instead)."""
    done_before: int = 0
    """Items already done when this go at the run began (a live run resumed): the ETA counts the pace of this go."""
    paced_eta_seconds: float | None = None
    """With `paced`, the seconds left as the run reckons them from its batches' pace (`bulk/progress/eta.py`)."""
    paced: bool = False
    """Whether the ETA is `paced_eta_seconds` (a batch run: its items end a whole batch at a time, so the rate of
    the items done so far says nothing of the batches still to end) rather than the items' rate (a live run)."""

    @property
    def finished(self) -> bool:
        """Whether every item has reached an end."""
        return self.items_done >= self.items_total

    @property
    def eta_seconds(self) -> float | None:
        """Seconds until every item is done: a batch run's reckoning from its batches' pace (`paced`), else at the
        rate items have finished so far; None while neither can tell (no batch ended, no item done)."""
        remaining = max(self.items_total - self.items_done, 0)
        if self.paced:
            return 0.0 if remaining == 0 else self.paced_eta_seconds
        done = self.items_done - self.done_before
        if done <= 0:
            return None
        if remaining == 0:
            return 0.0
        if self.elapsed_seconds <= 0:
            return None
        return remaining * self.elapsed_seconds / done

    def line(self, separator: str = PROGRESS_SEPARATOR) -> str:
        """The progress as one line of text, as `PlainReporter` prints it."""
        head = f"run {self.run_id}: {self.items_text()} ({self.counts_text()})"
        return separator.join([head, self.batches_text(), self.cost_text(), self.eta_text()])

    def items_text(self) -> str:
        return f"{self.items_done}/{self.items_total} items"

    def counts_text(self) -> str:
        return (
            f"{self.succeeded} ok, {self.failed} failed, {self.expired} expired, {self.canceled} canceled,"
            f" {self.not_run} not run"
        )

    def batches_text(self) -> str:
        if self.calls_in_flight is not None:
            return f"live, {self.calls_in_flight} call(s) in flight"
        return f"batches {self.batches_done}/{self.batches_total} done, {self.batches_in_flight} in flight"

    def cost_text(self) -> str:
        if self.cost_limit_usd is None:
            return f"{_usd(self.cost_usd)} spent"
        return f"{_usd(self.cost_usd)} of {_usd(self.cost_limit_usd)}"

    def eta_text(self) -> str:
        if self.finished:
            return f"done in {format_duration(self.elapsed_seconds)}"
        eta = self.eta_seconds
        return "ETA unknown" if eta is None else f"ETA {format_duration(eta)}"


def _usd(amount: Decimal) -> str:
    """Dollars to the cent, or to a hundredth of a cent under one cent, where small runs' costs live."""
    places = Decimal("0.01") if amount == 0 or abs(amount) >= Decimal("0.01") else Decimal("0.0001")
    return f"${amount.quantize(places, rounding=ROUND_HALF_UP)}"


def format_duration(seconds: float) -> str:
    """A duration as a person reads it: `45s`, `4m10s`, `2h05m`."""
    whole = max(round(seconds), 0)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
