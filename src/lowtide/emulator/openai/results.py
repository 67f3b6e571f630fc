"""What the requests of an OpenAI batch come out as, and the batch's output and error files, line by line.

Each request is answered exactly as the live endpoint would answer its body (`answer_body`); a body the endpoint
would refuse fails alone, its error in the error file with the status the endpoint would have answered. Markers
in the user text (`[[emulator:errored:TYPE]]`, `[[emulator:expired]]`, `[[emulator:missing]]`) and the outcomes
and losses armed by custom id through `Faults` decide the others. Lines come in an order unrelated to the
requests', so that callers who do not join on `custom_id` find out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.faults import Faults, garbled_line
from lowtide.emulator.core.jsonutil import JsonObject, compact
from lowtide.emulator.core.order import unrelated_order
from lowtide.emulator.openai.batches import OpenAIBatch, RequestKind, Settlement
from lowtide.emulator.openai.chat import build_completion, completion_id
from lowtide.emulator.openai.chat_params import read_chat_call
from lowtide.emulator.openai.content import FileLookup
from lowtide.emulator.openai.embeddings import create_embeddings
from lowtide.emulator.openai.errors import OpenAIError, status_error
from lowtide.emulator.openai.ids import derived_hex
from lowtide.emulator.openai.model import ModelRequest, generate, is_missing, outcome_marker
from lowtide.emulator.openai.responses import build_response
from lowtide.emulator.openai.responses_params import read_responses_call

__all__ = ["ENDPOINTS", "Verdict", "answer_body", "error_lines", "judge", "output_lines", "settle"]

ENDPOINTS = ("/v1/responses", "/v1/chat/completions", "/v1/embeddings")
_EXPIRED = {
    "code": "batch_expired",
    "message": "This request could not be executed before the completion window expired.",
}
_CANCELED = {"code": "batch_cancelled", "message": "This request was not executed because it was cancelled."}


@dataclass(frozen=True)
class Verdict:
    """What a request's own body decides, before any fault armed by custom id: its kind, and for `errored` the
    HTTP status and error body."""

    kind: RequestKind
    error: tuple[int, JsonObject] | None = None


def answer_body(
    endpoint: str,
    body: JsonObject,
    answer_id: str,
    created_at: float,
    files: FileLookup,
    snapshots: Mapping[str, str] | None = None,
) -> JsonObject:
    """The body the live endpoint answers `body` with (no prompt cache, as batches are not cached), naming the dated
    snapshot (`snapshots`) of the model asked for; `OpenAIError` when it would refuse it."""
    named = snapshots or {}
    if endpoint == "/v1/embeddings":
        return create_embeddings(body)
    if endpoint == "/v1/chat/completions":
        chat = read_chat_call(body, files, in_batch=True)
        model = named.get(chat.request.model)
        generated = generate(chat.request, answer_id)
        return build_completion(
            chat, generated, completion_id=completion_id(answer_id), created_at=created_at, model=model
        )
    call = read_responses_call(body, files, in_batch=True)
    response_id = derived_hex("resp_", answer_id, length=48)
    model = named.get(call.request.model)
    generated = generate(call.request, answer_id)
    return build_response(call, generated, response_id=response_id, created_at=created_at, model=model)


def judge(endpoint: str, body: JsonObject, files: FileLookup) -> Verdict:
    """The verdict of `body` alone: refused as the endpoint would refuse it, or as its markers ask."""
    request: ModelRequest | None = None
    try:
        if endpoint == "/v1/embeddings":
            create_embeddings(body)
        elif endpoint == "/v1/chat/completions":
            request = read_chat_call(body, files, in_batch=True).request
        else:
            request = read_responses_call(body, files, in_batch=True).request
    except OpenAIError as error:
        return Verdict("errored", (error.status, error.body()))
    if request is None:
        return Verdict("succeeded")
    if is_missing(request):
        return Verdict("missing")
    marker = outcome_marker(request)
    if marker is None:
        return Verdict("succeeded")
    if marker.kind == "errored":
        error = status_error(ERROR_STATUS[marker.error_type], marker.error_message)
        return Verdict("errored", (error.status, error.body()))
    return Verdict(marker.kind)


def with_faults(verdict: Verdict, custom_id: str, faults: Faults) -> Verdict:
    """`verdict`, overridden by an outcome or a loss armed for `custom_id`."""
    if faults.is_lost(custom_id):
        return Verdict("missing")
    outcome = faults.outcome_for(custom_id)
    if outcome is None:
        return verdict
    if outcome.kind == "errored":
        error = status_error(ERROR_STATUS[outcome.error_type], outcome.message)
        return Verdict("errored", (error.status, error.body()))
    return Verdict(outcome.kind)


def settle(batch: OpenAIBatch, verdicts: list[Verdict], faults: Faults) -> Settlement:
    """Each request's kind once `batch` has ended: those past a cancel never ran, those past the expiry expired."""
    processed = batch.processed_count(batch.ended_at)
    cut_off: RequestKind = "unprocessed" if batch.cancel_initiated_at is not None else "expired"
    settlement = Settlement(kinds=[])
    for index, (custom_id, _) in enumerate(batch.requests):
        if index >= processed:
            settlement.kinds.append(cut_off)
            continue
        verdict = with_faults(verdicts[index], custom_id, faults)
        settlement.kinds.append(verdict.kind)
        if verdict.error is not None:
            settlement.errors[index] = verdict.error
    return settlement


def output_lines(
    batch: OpenAIBatch,
    settlement: Settlement,
    files: FileLookup,
    faults: Faults,
    snapshots: Mapping[str, str] | None = None,
) -> Iterator[bytes]:
    """The output file: one line per answered request (garbled where `Faults.garble` says), each body naming the
    dated snapshot (`snapshots`) of the model asked for."""
    for index in _shuffled(batch):
        if settlement.kinds[index] != "succeeded":
            continue
        custom_id, body = batch.requests[index]
        answer_id = f"{batch.id}\x1f{custom_id}"
        try:
            answered = answer_body(batch.endpoint, body, answer_id, batch.finished_at(index), files, snapshots)
            line = _line(batch, custom_id, 200, answered)
        except OpenAIError as error:  # pragma: no cover - only when a file a request names was deleted since
            line = _line(batch, custom_id, error.status, error.body())
        yield _encoded(batch, custom_id, line, faults)


def error_lines(batch: OpenAIBatch, settlement: Settlement, faults: Faults) -> Iterator[bytes]:
    """The error file: one line per request that failed, expired or was canceled (garbled where `Faults.garble`
    says)."""
    for index in _shuffled(batch):
        kind = settlement.kinds[index]
        custom_id = batch.requests[index][0]
        if kind == "errored":
            status, body = settlement.errors[index]
            line = _line(batch, custom_id, status, body)
        elif kind in ("expired", "canceled"):
            line = {
                "id": derived_hex("batch_req_", batch.id, custom_id),
                "custom_id": custom_id,
                "response": None,
                "error": _EXPIRED if kind == "expired" else _CANCELED,
            }
        else:
            continue
        yield _encoded(batch, custom_id, line, faults)


def _encoded(batch: OpenAIBatch, custom_id: str, line: JsonObject, faults: Faults) -> bytes:
    encoded = (compact(line) + "\n").encode()
    garbled = faults.garbled(custom_id)
    if garbled is None:
        return encoded
    unknown = {"id": derived_hex("batch_req_", batch.id, custom_id), "custom_id": custom_id, "outcome": "teleported"}
    return garbled_line(encoded, garbled, unknown_shape=(compact(unknown) + "\n").encode())


def _line(batch: OpenAIBatch, custom_id: str, status: int, body: JsonObject) -> JsonObject:
    return {
        "id": derived_hex("batch_req_", batch.id, custom_id),
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": derived_hex("", batch.id, custom_id, "req"), "body": body},
        "error": None,
    }


def _shuffled(batch: OpenAIBatch) -> list[int]:
    return unrelated_order(range(len(batch.requests)), lambda index: batch.requests[index][0])
