"""How an ended batch's requests come out, and its results file, produced line by line. Settling only decides
result types; answers are generated while the results stream, which keeps 100,000-request batches fast."""

from __future__ import annotations

from collections.abc import Iterator

from lowtide.emulator.anthropic.batches import Batch, Settlement
from lowtide.emulator.anthropic.catalogue import ModelCatalogue, minimum_cacheable_tokens
from lowtide.emulator.anthropic.file_sources import checked_params, resolve_file_sources
from lowtide.emulator.anthropic.messages import build_message
from lowtide.emulator.anthropic.stored_file import FileLookup
from lowtide.emulator.core.cache import NO_CACHE, PromptCache
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.faults import Faults, garbled_line
from lowtide.emulator.core.ids import derived_id
from lowtide.emulator.core.jsonutil import JsonObject, compact
from lowtide.emulator.core.order import unrelated_order
from lowtide.emulator.core.outcomes import Outcome, find_marker
from lowtide.emulator.core.prompt import Breakpoint, analyze_prompt

__all__ = ["result_lines", "settle"]


def settle(batch: Batch, faults: Faults, cache: PromptCache, files: FileLookup, models: ModelCatalogue) -> Settlement:
    """Each request's result type. Requests of a batch are processed side by side: each reads the cache as it
    stood before the batch was settled, never another's write (each may write the same prefix again). File sources
    are read from `files` as the batch ends."""
    processed = batch.processed_count()
    before = cache.entries()
    cut_off = "canceled" if batch.cancel_initiated_at is not None else "expired"
    settlement = Settlement(kinds=[])
    for index, (custom_id, params) in enumerate(batch.requests):
        if index >= processed:
            settlement.kinds.append(cut_off)
            continue
        outcome = faults.outcome_for(custom_id) or find_marker(params)
        breakpoints: tuple[Breakpoint, ...] = ()
        if outcome is None:
            # The batch endpoint validates params asynchronously: a bad request errors alone, with the error the
            # Messages API would have answered it with.
            try:
                params, used = checked_params(
                    params, files, models=models, now=batch.ended_at, betas=batch.betas, in_batch=True
                )
                prompt = analyze_prompt(params)
                models.check_window(params["model"], prompt.tokens)
            except ApiError as error:
                outcome = Outcome("errored", error.error_type, error.message, refused=True)
            else:
                settlement.files.update(used)
                breakpoints = prompt.breakpoints
                settlement.prompt_tokens[index] = prompt.tokens
        if outcome is not None:
            settlement.kinds.append(outcome.kind)
            if outcome.kind == "errored":
                settlement.errors[index] = outcome
            continue
        settlement.kinds.append("succeeded")
        if breakpoints:
            settlement.cache[index] = cache.use(
                breakpoints, batch.ended_at, minimum=minimum_cacheable_tokens(params["model"]), seen=before
            )
    return settlement


def result_lines(batch: Batch, settlement: Settlement, faults: Faults, models: ModelCatalogue) -> Iterator[bytes]:
    """The JSONL results, one `MessageBatchIndividualResponse` per line, in an order unrelated to the requests' (by
    a hash of custom_id, never theirs: `unrelated_order`), so that callers who do not join on custom_id find out; each
    message names the dated model its request's model resolves to (`models`). A request whose line a fault garbles
    (`Faults.garble`) gets that line instead."""
    order = unrelated_order(range(len(batch.requests)), lambda index: batch.requests[index][0])
    for index in order:
        custom_id, params = batch.requests[index]
        line = {"custom_id": custom_id, "result": _result(batch, settlement, index, custom_id, params, models)}
        encoded = (compact(line) + "\n").encode()
        garbled = faults.garbled(custom_id)
        if garbled is not None:
            unknown = {"custom_id": custom_id, "result": {"type": "teleported", "destination": "elsewhere"}}
            encoded = garbled_line(encoded, garbled, unknown_shape=(compact(unknown) + "\n").encode())
        yield encoded


def _result(
    batch: Batch, settlement: Settlement, index: int, custom_id: str, params: JsonObject, models: ModelCatalogue
) -> JsonObject:
    kind = settlement.kinds[index]
    if kind == "succeeded":
        if settlement.files:
            params, _ = resolve_file_sources(params, settlement.files.get, now=None)
        message = build_message(
            params,
            model=models.resolved(params["model"]),
            # Derived, so that downloading the results twice gives the same file.
            message_id=derived_id("msg", batch.id, custom_id),
            prompt_tokens=settlement.prompt_tokens.get(index) or analyze_prompt(params).tokens,
            cache=settlement.cache.get(index, NO_CACHE),
            service_tier="batch",
        )
        return {"type": "succeeded", "message": message}
    if kind == "errored":
        outcome = settlement.errors[index]
        # The API's `ErrorResponse`, as recorded: `details` on the inner error, and a request id only for a request
        # that ran (derived, so that the file is the same on every download); one its validation refused has none.
        error = {
            "details": {"error_visibility": "user_facing"},
            "type": outcome.error_type,
            "message": outcome.error_message,
        }
        request_id = None if outcome.refused else derived_id("workerreq", batch.id, custom_id)
        return {"type": "errored", "error": {"type": "error", "error": error, "request_id": request_id}}
    return {"type": kind}
