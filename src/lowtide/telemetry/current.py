"""The call being traced in this task, if any: what the batch engine and the live caller ask before they record a
span's link or event. No OpenTelemetry import: off, asking costs one context variable read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lowtide.ledger.records import NewRequest

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["CALL", "RUN", "CallTrace", "with_traces"]


@dataclass(slots=True)
class CallTrace:
    """One call's span, and its trace context as the ledger stores it with the request (W3C, JSON)."""

    span: Span
    carrier: str
    started: float
    """`time.monotonic()` when the call began (its `gen_ai.client.operation.duration`)."""
    attributes: dict[str, str] = field(default_factory=dict[str, str])
    """The metrics' attributes of the call (provider, operation, model)."""


CALL: ContextVar[CallTrace | None] = ContextVar("lowtide_call", default=None)
"""The call whose span is current in this task (set by `telemetry.calls`)."""

RUN: ContextVar[Span | None] = ContextVar("lowtide_run", default=None)
"""The bulk run whose span is current in this task: its batches' spans are its children."""


def with_traces(claims: Sequence[NewRequest], traced: Mapping[str, CallTrace]) -> list[NewRequest]:
    """`claims`, each traced one with its call's context to store with it."""
    return [replace(claim, trace=traced[claim.key].carrier) if claim.key in traced else claim for claim in claims]
