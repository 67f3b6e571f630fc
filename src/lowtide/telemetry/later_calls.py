"""The call spans of many calls claimed at once (`run_many` in batch mode, the items of a batch bulk run), made when
each call's outcome is handed on rather than while it waits: a 100,000-item run keeps no 100,000 open spans (an open
SDK span is about 3 KB), only one `LaterCalls` per moment and model, shared by its calls. Each span starts when its
call was claimed (`start_time`), is a child of the span current then (the bulk run's, or the caller's), carries the
attributes a single call's span would, and links both ways with the batch that answered it (current while its
answers are handed on). Imported only when telemetry is on."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import cast

from opentelemetry import context as otel_context
from opentelemetry.trace import Link, SpanKind

from lowtide.config.actors import ActorConfiguration
from lowtide.messages.answers import Answer, TextAnswer, response_of
from lowtide.telemetry.actor_calls import call_attributes
from lowtide.telemetry.attributes import (
    Attributes,
    content_attributes,
    metric_attributes,
    request_attributes,
    span_name,
)
from lowtide.telemetry.batches import current_batch, link_back
from lowtide.telemetry.calls import finish_call
from lowtide.telemetry.current import CallTrace, LaterCall
from lowtide.telemetry.propagation import carrier_of_current
from lowtide.telemetry.scope import tracer
from lowtide.telemetry.switch import capture_content
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["LaterCalls", "for_requests", "for_run"]


class LaterCalls:
    """Calls of one model claimed in one moment: their spans' shared attributes, parent and start."""

    __slots__ = ("_attributes", "_model", "_parent", "_started", "_started_ns", "carrier")

    def __init__(self, model: str, attributes: Attributes) -> None:
        self._model = model
        self._attributes = attributes
        self._parent = otel_context.get_current()
        self._started_ns = time.time_ns()
        self._started = time.monotonic()
        self.carrier = carrier_of_current()

    def finish(self, key: str, outcome: object) -> None:
        batch = current_batch()
        attributes: Attributes = {**self._attributes, "lowtide.key": key} if key else dict(self._attributes)
        links: list[Link] = []
        if batch is not None:
            attributes["lowtide.batch.id"] = batch[0]
            links.append(Link(batch[1].get_span_context()))
        span = tracer().start_span(
            span_name(self._model),
            context=self._parent,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            links=links,
            start_time=self._started_ns,
        )
        if batch is not None:
            link_back(batch[0], span)
        call = CallTrace(span, self.carrier, self._started, metric_attributes(attributes))
        if isinstance(outcome, ActorResponse | TextAnswer):
            finish_call(call, response_of(cast("Answer", outcome)), None)
        else:
            finish_call(call, None, outcome if isinstance(outcome, BaseException) else None)


def for_requests(
    *,
    provider: str,
    gen_ai_provider: str,
    actor: str,
    requests: Mapping[str, ActorRequest],
    mode: str = "batch",
) -> dict[str, LaterCall]:
    """The `LaterCalls` of each of `run_many`'s requests (by key): one per distinct model and parameters."""
    shared: dict[tuple[object, ...], LaterCalls] = {}
    made: dict[str, LaterCall] = {}
    content = capture_content()
    for key, request in requests.items():
        parameters = request.model_dump(include={"max_tokens", "temperature", "top_p", "top_k", "stop_sequences"})
        attributes = request_attributes(
            provider=provider, gen_ai_provider=gen_ai_provider, model=request.model, mode=mode, parameters=parameters
        )
        attributes["lowtide.actor"] = actor
        attributes["lowtide.call"] = "run_many"
        if content:
            attributes.update(content_attributes(request.messages, request.system, None))
        same = tuple(sorted((name, str(value)) for name, value in attributes.items()))
        calls = shared.get(same)
        if calls is None:
            calls = shared[same] = LaterCalls(request.model, attributes)
        made[key] = calls
    return made


def for_run(
    configuration: ActorConfiguration,
    *,
    gen_ai_provider: str,
    run_id: str,
    defaults: Mapping[str, object],
    models: list[str],
) -> list[LaterCall]:
    """The `LaterCalls` of a bulk run's group of items (their models, in order): one per model. Their attributes
    are the configuration's and the run's `defaults` (a job's own parameters are not read: that would build each
    item's request again)."""
    shared: dict[str, LaterCalls] = {}
    made: list[LaterCall] = []
    for model in models:
        calls = shared.get(model)
        if calls is None:
            _, attributes = call_attributes(
                configuration,
                gen_ai_provider=gen_ai_provider,
                mode="batch",
                key=None,
                prompt=None,
                arguments={**defaults, "model": model},
            )
            attributes["lowtide.call"] = "bulk"
            attributes["lowtide.run.id"] = run_id
            calls = shared[model] = LaterCalls(model, attributes)
        made.append(calls)
    return made
