"""The cheapest route expected to meet a deadline: each venue the provider declares, its expected time (a batch venue's
from the ledger's history, a live one's from the work's live time at its pace) and its price against the live price;
the cheapest whose work ends in time is taken, and none refused with each venue's figures, before anything is sent.

A batch route keeps room for its fallback: it is taken only if the batch is expected to end before the moment its
unanswered work must move to the fastest live venue to still make the deadline (`move_at`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from lowtide.core.run_reports import format_duration
from lowtide.errors import ConfigurationError
from lowtide.routing.deadlines import Deadline
from lowtide.routing.history import BatchHistory
from lowtide.routing.venues import Venue

__all__ = ["Leg", "Route", "choose_route"]


@dataclass(frozen=True)
class Leg:
    """One venue as the route weighed it: its expected time, and whether it meets the deadline."""

    venue: Venue
    seconds: float
    meets: bool
    source: str
    """Where the time comes from, for people."""


@dataclass(frozen=True)
class Route:
    """The venue chosen for a deadline, when it is expected to end, and what moves where if it is late."""

    deadline: Deadline
    chosen: Leg
    legs: tuple[Leg, ...]
    fallback: Leg
    """The fastest live venue: where a late batch's unanswered work goes."""
    move_at: float | None
    """A batch route: when the batch's unanswered work is canceled and moved to the fallback (None: not batched)."""
    live_cost: tuple[Decimal, Decimal] | None = None
    """The work's cost range at live prices (None: unknown), which the venues' price factors scale."""

    @property
    def venue(self) -> Venue:
        return self.chosen.venue

    def price(self, leg: Leg) -> tuple[Decimal, Decimal] | None:
        """A venue's cost range for the work: the live range times its price factor."""
        if self.live_cost is None:
            return None
        factor = Decimal(str(leg.venue.price_factor))
        return self.live_cost[0] * factor, self.live_cost[1] * factor

    def lines(self, now: float) -> list[str]:
        """What a dry run prints of the route."""
        out = [f"deadline: {self.deadline.describe(now)}"]
        for leg in self.legs:
            mark = "->" if leg is self.chosen else "  "
            verdict = "meets it" if leg.meets else "too slow"
            out.append(
                f"  {mark} {leg.venue.name}: about {format_duration(leg.seconds)} ({leg.source}); {self._priced(leg)};"
                f" {verdict}"
            )
        out.append(
            f"  route: {self.venue.name}, expected {format_duration(self.chosen.seconds)}, {self._priced(self.chosen)}"
        )
        if self.move_at is not None:
            out.append(
                f"  if late: at {format_duration(self.move_at - now)} from now its unanswered requests are canceled and"
                f" only those confirmed canceled sent by {self.fallback.venue.name} ({self._priced(self.fallback)} if"
                " all were; none is paid twice: an answer given before the cancel took is kept)"
            )
        return out

    def _priced(self, leg: Leg) -> str:
        price = self.price(leg)
        if price is None:
            return f"price x{leg.venue.price_factor:g} of live (unknown in dollars)"
        return f"${price[0]:.6f} to ${price[1]:.6f}"

    def as_json(self, now: float) -> dict[str, Any]:
        def leg_json(leg: Leg) -> dict[str, Any]:
            price = self.price(leg)
            return {
                "venue": leg.venue.name,
                "expected_seconds": leg.seconds,
                "price_factor": leg.venue.price_factor,
                "cost_low_usd": price[0] if price is not None else None,
                "cost_high_usd": price[1] if price is not None else None,
                "meets_deadline": leg.meets,
                "source": leg.source,
            }

        return {
            "deadline": self.deadline.at,
            "seconds_left": self.deadline.left(now),
            "route": self.venue.name,
            "expected_seconds": self.chosen.seconds,
            "move_after_seconds": self.move_at - now if self.move_at is not None else None,
            "fallback": self.fallback.venue.name,
            "venues": [leg_json(leg) for leg in self.legs],
        }


def choose_route(
    venues: Sequence[Venue],
    *,
    deadline: Deadline,
    now: float,
    batch: BatchHistory | None,
    live_seconds: float,
    margin: float,
    live_cost: tuple[Decimal, Decimal] | None = None,
) -> Route:
    """The cheapest of `venues` expected to meet `deadline`. `batch`: the provider's batch history (None: no batch
    backend, its batch venue left out); `live_seconds`: the work's expected time live at pace 1; `margin`: what a move
    needs besides (noticing the cancel took, a poll). Refused with every venue's figures when none meets it."""
    live = [venue for venue in venues if not venue.batched]
    if not live:
        raise ConfigurationError("A deadline needs a live venue to fall back on; this provider declares none.")
    left = deadline.left(now)
    paced = [(venue, live_seconds * (venue.pace or 1.0)) for venue in live]
    fastest_venue, fastest_seconds = min(paced, key=lambda pair: pair[1])
    fallback = Leg(fastest_venue, fastest_seconds, fastest_seconds <= left, "live calls at the configured concurrency")
    legs: list[Leg] = []
    for venue in venues:
        if venue.batched:
            if batch is None:
                continue
            meets = batch.seconds + fallback.seconds + margin <= left
            legs.append(Leg(venue, batch.seconds, meets, batch.source()))
        else:
            seconds = live_seconds * (venue.pace or 1.0)
            pace = f", x{venue.pace:g} a call" if venue.pace not in (None, 1.0) else ""
            legs.append(Leg(venue, seconds, seconds <= left, f"live calls at the configured concurrency{pace}"))
    meeting = [leg for leg in legs if leg.meets]
    if not meeting:
        figures = "; ".join(f"{leg.venue.name} about {format_duration(leg.seconds)} ({leg.source})" for leg in legs)
        raise ConfigurationError(
            f"No route can meet the deadline {deadline.given!r}, {format_duration(left)} from now: {figures}."
            " Nothing was sent; give a later deadline.",
            field="deadline",
        )
    chosen = min(meeting, key=lambda leg: (leg.venue.price_factor, leg.seconds))
    fallback = next(leg for leg in legs if leg.venue is fastest_venue)
    move_at = deadline.at - fallback.seconds - margin if chosen.venue.batched else None
    return Route(deadline, chosen, tuple(legs), fallback, move_at, live_cost)
