"""A deadline as a user gives it (a clock time `06:00`, a duration `2h`, an ISO time, a `datetime` or `timedelta`),
read into a moment on the actor's clock and checked: one in the past is refused before anything is sent."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from lowtide.core.run_reports import format_duration
from lowtide.errors import ConfigurationError

__all__ = ["Deadline", "DeadlineInput", "parse_deadline"]

DeadlineInput = str | datetime | timedelta

_CLOCK = re.compile(r"^(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::(?P<s>[0-5]\d))?$")
_DURATION = re.compile(r"^(?:(?P<d>\d+(?:\.\d+)?)d)?(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?"
                       r"(?:(?P<s>\d+(?:\.\d+)?)s)?$")  # fmt: skip
_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_FORMS = "a clock time (06:00), a duration (90m, 2h, 1h30m, 1d) or an ISO 8601 time (2026-11-29T06:00:00+00:00)"


@dataclass(frozen=True)
class Deadline:
    """A moment (seconds since the epoch, on the actor's clock) by which the work is to be answered."""

    at: float
    given: str
    """What the user gave, for messages."""

    def left(self, now: float) -> float:
        """Seconds left at `now` (negative once it has passed)."""
        return self.at - now

    def describe(self, now: float) -> str:
        """The deadline as a person reads it: its UTC time and how far off it is."""
        when = datetime.fromtimestamp(self.at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"{when} (in {format_duration(self.left(now))})"


def parse_deadline(value: DeadlineInput | Deadline, *, now: float, tz: tzinfo | None = None) -> Deadline:
    """`value` as a `Deadline` after `now`, or a `ConfigurationError` naming what was wrong. A clock time is its next
    occurrence in `tz` (by default the local time zone): `06:00` given at 07:00 is tomorrow's; a time without an
    offset is in `tz` too."""
    if isinstance(value, Deadline):
        deadline = value
    elif isinstance(value, timedelta):
        deadline = Deadline(now + value.total_seconds(), f"{value.total_seconds():g}s")
    elif isinstance(value, datetime):
        deadline = Deadline(_aware(value, tz).timestamp(), value.isoformat())
    else:  # a string, or whatever a user passed: what is not one of the forms is refused by `_parsed`
        text = str(value)
        deadline = Deadline(_parsed(text.strip(), now, tz), text)
    if deadline.at <= now:
        when = datetime.fromtimestamp(deadline.at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        raise ConfigurationError(
            f"deadline {deadline.given!r} is in the past ({when}, {format_duration(now - deadline.at)} ago):"
            " nothing was sent.",
            field="deadline",
        )
    return deadline


def _parsed(text: str, now: float, tz: tzinfo | None) -> float:
    clock = _CLOCK.fullmatch(text)
    if clock is not None:
        zone = tz if tz is not None else datetime.fromtimestamp(now).astimezone().tzinfo
        today = datetime.fromtimestamp(now, zone)
        hours, minutes, seconds = int(clock["h"]), int(clock["m"]), int(clock["s"] or 0)
        at = today.replace(hour=hours, minute=minutes, second=seconds, microsecond=0)
        if at.timestamp() <= now:
            at += timedelta(days=1)
        return at.timestamp()
    duration = _DURATION.fullmatch(text)
    if text and duration is not None and any(duration.groupdict().values()):
        return now + sum(float(part) * _UNITS[unit] for unit, part in duration.groupdict().items() if part)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigurationError(f"deadline must be {_FORMS}, not {text!r}.", field="deadline") from None
    return _aware(moment, tz).timestamp()


def _aware(moment: datetime, tz: tzinfo | None) -> datetime:
    if moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()
