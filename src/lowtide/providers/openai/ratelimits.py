"""OpenAI's rate-limit headers (`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset as a duration such
as `6m0s` or `20ms`, and `retry-after`) as lowtide's neutral `QuotaReport`: OpenAI counts input and output tokens
together, so its tokens are `tokens`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from lowtide.live.reports import Budget, QuotaReport, header_int, header_number

__all__ = ["quota_report"]

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def quota_report(headers: Mapping[str, str], *, now: float) -> QuotaReport:
    """What the headers of one answer (or 429) say; `now` turns the reset durations into instants."""
    return QuotaReport(
        requests=_budget(headers, "requests", now),
        tokens=_budget(headers, "tokens", now),
        retry_after=header_number(headers.get("retry-after")),
    )


def _budget(headers: Mapping[str, str], kind: str, now: float) -> Budget | None:
    limit = header_int(headers.get(f"x-ratelimit-limit-{kind}"))
    remaining = header_int(headers.get(f"x-ratelimit-remaining-{kind}"))
    if limit is None or remaining is None:
        return None
    reset = _duration(headers.get(f"x-ratelimit-reset-{kind}"))
    return Budget(limit=limit, remaining=remaining, reset_at=now + reset if reset is not None else None)


def _duration(value: str | None) -> float | None:
    """`1m30.5s`, `20ms`, `2s` in seconds; None for anything else."""
    if not value:
        return None
    parts = _PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(number) * _UNIT[unit] for number, unit in parts)
