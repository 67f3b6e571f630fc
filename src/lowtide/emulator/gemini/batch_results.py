"""How the requests of a Gemini batch job come out, and the job's output: inline responses (in request order, each
with its request's `metadata`) for inline requests, or the lines of its responses file (`{"key", "response"}` or
`{"key", "error"}`, in an order unrelated to the requests', so that readers who do not join on `key` find out).

Each request is answered exactly as generateContent would answer its body (the same deterministic answer); a body
generateContent would refuse fails alone, its `error` a `google.rpc.Status`, and the job still succeeds. Markers
(`[[emulator:errored:TYPE]]`) and the faults armed by key (`Faults.outcome`, `Faults.lose`, `Faults.garble`: a
request's key is its custom id) decide the others: a lost request is counted as successful but has no answer."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import cast

from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.faults import Faults, garbled_line
from lowtide.emulator.core.jsonutil import JsonObject, compact
from lowtide.emulator.gemini.batches import BatchRequest, GeminiBatch, Row
from lowtide.emulator.gemini.catalogue import GeminiModel
from lowtide.emulator.gemini.errors import GeminiError, rpc_status, status_error
from lowtide.emulator.gemini.model import generate
from lowtide.emulator.gemini.request import read_call

__all__ = ["inline_output", "result_lines", "settle_rows"]


def settle_rows(batch: GeminiBatch, model: GeminiModel, faults: Faults) -> list[Row]:
    """Every request's outcome (a function of the requests and the faults armed by key)."""
    return [_row(batch, index, request, model, faults) for index, request in enumerate(batch.requests)]


def _row(batch: GeminiBatch, index: int, request: BatchRequest, model: GeminiModel, faults: Faults) -> Row:
    key = request.key
    if key is not None and faults.is_lost(key):
        return Row()
    outcome = faults.outcome_for(key) if key is not None else None
    try:
        if outcome is not None:
            if outcome.kind == "errored":
                raise status_error(ERROR_STATUS[outcome.error_type], outcome.message)
            raise GeminiError(499 if outcome.kind == "canceled" else 504, outcome.message)
        body = {name: value for name, value in request.body.items() if name != "model"}
        call = read_call(body, model)
        response_id = hashlib.blake2b(f"{batch.id}\x1f{index}".encode(), digest_size=12).hexdigest()
        return Row(response=cast(JsonObject, generate(call, response_id)))
    except GeminiError as error:
        return Row(error=rpc_status(error))


def inline_output(batch: GeminiBatch, rows: list[Row]) -> JsonObject:
    """The `output` of a succeeded job of inline requests: `inlinedResponses.inlinedResponses`, in order."""
    responses: list[JsonObject] = []
    for request, row in zip(batch.requests, rows, strict=True):
        item: JsonObject
        if row.response is not None:
            item = {"response": row.response}
        elif row.error is not None:
            item = {"error": dict(row.error)}
        else:
            continue
        if request.metadata is not None:
            item["metadata"] = request.metadata
        responses.append(item)
    return {"inlinedResponses": {"inlinedResponses": responses}}


def result_lines(batch: GeminiBatch, rows: list[Row], faults: Faults) -> Iterator[bytes]:
    """The responses file of a succeeded job of a file's requests, one JSON line per answered or failed request."""
    for index in _shuffled(batch):
        request, row = batch.requests[index], rows[index]
        line: JsonObject = {"key": request.key} if request.key is not None else {}
        if row.response is not None:
            line["response"] = row.response
        elif row.error is not None:
            line["error"] = dict(row.error)
        else:
            continue
        encoded = (compact(line) + "\n").encode()
        garbled = faults.garbled(request.key) if request.key is not None else None
        if garbled is not None:
            unknown = compact({"key": request.key, "outcome": "teleported"}) + "\n"
            encoded = garbled_line(encoded, garbled, unknown_shape=unknown.encode())
        yield encoded


def _shuffled(batch: GeminiBatch) -> list[int]:
    """The requests' indexes in an order unrelated to theirs, and never theirs when there are two or more: readers
    join on `key`, and a check of that must not pass by chance (a hash of the job's random id alone matched the
    requests' order one time in 120 for five requests)."""

    def order(index: int) -> bytes:
        key = batch.requests[index].key or str(index)
        return hashlib.blake2b(f"{batch.id}\x1f{key}".encode(), digest_size=8).digest()

    shuffled = sorted(range(len(batch.requests)), key=order)
    if shuffled == sorted(shuffled):
        shuffled.reverse()
    return shuffled
