"""One span per call, live or batch (`chat {model}`, the GenAI conventions' inference span, kind CLIENT), current
while the call runs so that the provider SDK's own HTTP spans are its children; its events (retries, rate-limit
pauses, budget refusals); the conventions' metrics when it ends. Imported only when telemetry is on."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar, cast

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from lowtide.errors import BudgetExceededError
from lowtide.telemetry.attributes import (
    Attributes,
    error_type,
    metric_attributes,
    output_attributes,
    response_attributes,
    savings,
    span_name,
)
from lowtide.telemetry.current import CALL, CallTrace
from lowtide.telemetry.metrics import instruments
from lowtide.telemetry.propagation import carrier_of_current
from lowtide.telemetry.scope import tracer
from lowtide.telemetry.switch import capture_content, metering
from lowtide.types import ActorResponse

__all__ = ["call_event", "finish_call", "start_call", "traced_call"]

R = TypeVar("R")


def start_call(model: str, attributes: Attributes, *, context: Context | None = None) -> CallTrace:
    """Start a call's span (a child of the current span, or of `context`) and make it current."""
    span = tracer().start_span(span_name(model), context=context, kind=SpanKind.CLIENT, attributes=attributes)
    with trace.use_span(span, end_on_exit=False):
        carrier = carrier_of_current()
    return CallTrace(span, carrier, time.monotonic(), metric_attributes(attributes))


def finish_call(
    call: CallTrace,
    response: ActorResponse[object] | None,
    error: BaseException | None,
) -> None:
    """End a call's span with its answer's attributes (or its error), and record the conventions' metrics."""
    span = call.span
    labels: dict[str, str] = dict(call.attributes)
    if response is not None:
        answered = response_attributes(response)
        span.set_attributes(answered)
        if capture_content():
            span.set_attributes(output_attributes(response))
        labels["gen_ai.response.model"] = response.model
    if error is not None:
        kind = error_type(error)
        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        labels["error.type"] = kind
    span.end()
    if metering():
        _measure(call, labels, response)


def _measure(call: CallTrace, labels: dict[str, str], response: ActorResponse[object] | None) -> None:
    made = instruments()
    made.operation_duration.record(time.monotonic() - call.started, labels)
    if response is None:
        return
    usage = response.usage
    inputs = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    made.token_usage.record(inputs, {**labels, "gen_ai.token.type": "input"})
    made.token_usage.record(usage.output_tokens, {**labels, "gen_ai.token.type": "output"})
    cost = response.cost
    if cost is not None:
        priced = {**labels, "lowtide.cost.pricing": cost.pricing}
        made.cost.add(float(cost.total_usd), priced)
        made.savings.add(float(savings(cost.total_usd, cost.live_equivalent_usd)), priced)


async def traced_call(
    model: str,
    attributes: Attributes,
    answer: Callable[[], Awaitable[R]],
    *,
    context: Context | None = None,
) -> R:
    """`answer()` inside a call's span (current, and `CALL` for the engine and the live caller to find)."""
    call = start_call(model, attributes, context=context)
    token = CALL.set(call)
    try:
        with trace.use_span(call.span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            response = await answer()
    except BaseException as exc:
        if isinstance(exc, BudgetExceededError):
            call.span.add_event("budget.refused", {"lowtide.reason": str(exc)[:500]})
        finish_call(call, None, exc)
        raise
    finally:
        CALL.reset(token)
    finish_call(call, _answer(response), None)
    return response


def _answer(value: object) -> ActorResponse[object] | None:
    """An actor's answer (a parked call's `submit` gives a ticket instead: no answer's attributes)."""
    return cast("ActorResponse[object]", value) if isinstance(value, ActorResponse) else None


def call_event(name: str, attributes: Mapping[str, str | int | float | bool] | None = None) -> None:
    """An event on the call being traced in this task (a retry, a rate-limit pause, a budget refusal)."""
    call = CALL.get()
    if call is not None:
        call.span.add_event(name, dict(attributes or {}))
