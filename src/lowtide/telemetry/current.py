"""The call being traced in this task, if any: what the batch engine and the live caller ask before they record a
span's link or event. No OpenTelemetry import: off, asking costs one context variable read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from lowtide.ledger.records import NewRequest

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["CALL", "RUN", "CallTrace", "LaterCall", "with_traces"]


@dataclass(slots=True)
class CallTrace:
    """One call's span, and its trace context as the ledger stores it with the request (W3C, JSON)."""

    span: Span
    carrier: str
    started: float
    """`time.monotonic()` when the call began (its `gen_ai.client.operation.duration`)."""
    attributes: dict[str, str] = field(default_factory=dict[str, str])
    """The metrics' attributes of the call (provider, operation, model)."""


class LaterCall(Protocol):
    """Calls whose spans are made when their answers arrive (`run_many`'s, a batch bulk run's items): while thousands
    wait, no span object is alive, only this, shared by the calls of one moment (`telemetry.later_calls`)."""

    @property
    def carrier(self) -> str:
        """The trace context their requests are stored with (the run's span, or the caller's)."""
        ...

    def finish(self, key: str, outcome: object) -> None:
        """The span of call `key` ("": a call outside the ledger, with no key), made and ended now: `outcome` is its
        answer or error (`Settled`), or the error that ended its wait. Called by the engine as it hands the outcome
        on, with its batch's span current."""
        ...


CALL: ContextVar[CallTrace | None] = ContextVar("lowtide_call", default=None)
"""The call whose span is current in this task (set by `telemetry.calls`)."""

RUN: ContextVar[Span | None] = ContextVar("lowtide_run", default=None)
"""The bulk run whose span is current in this task: its batches' spans are its children."""


def with_traces(
    claims: Sequence[NewRequest], traced: Mapping[str, CallTrace], later: Mapping[str, LaterCall]
) -> list[NewRequest]:
    """`claims`, each traced one with its call's context to store with it."""
    made: list[NewRequest] = []
    for claim in claims:
        call = traced.get(claim.key) or later.get(claim.key)
        made.append(replace(claim, trace=call.carrier) if call is not None and call.carrier else claim)
    return made
