"""Anthropic's rate-limit headers (`anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`
and `retry-after`) as lowtide's neutral `QuotaReport`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from lowtide.live.reports import Budget, QuotaReport, header_int, header_number

__all__ = ["quota_report"]


def quota_report(headers: Mapping[str, str]) -> QuotaReport:
    """What the headers of one answer (or 429) say; fields the API left out are None."""
    return QuotaReport(
        requests=_budget(headers, "requests"),
        input_tokens=_budget(headers, "input-tokens"),
        output_tokens=_budget(headers, "output-tokens"),
        retry_after=header_number(headers.get("retry-after")),
    )


def _budget(headers: Mapping[str, str], kind: str) -> Budget | None:
    prefix = f"anthropic-ratelimit-{kind}"
    limit, remaining = header_int(headers.get(f"{prefix}-limit")), header_int(headers.get(f"{prefix}-remaining"))
    if limit is None or remaining is None:
        return None
    return Budget(limit=limit, remaining=remaining, reset_at=_instant(headers.get(f"{prefix}-reset")))


def _instant(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
