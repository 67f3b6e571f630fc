"""The OpenAI half of the emulator's state and operations, one method per route and free of HTTP: files, batches,
and the model endpoints, on the emulator's clock, settings, faults and prompt cache. Raises `OpenAIError`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.batch_input import (
    MAX_BATCH_INPUT_BYTES,
    MAX_BATCH_REQUESTS,
    BatchInput,
    read_batch_input,
)
from lowtide.emulator.openai.batches import BATCH_WINDOW, BatchStatus, OpenAIBatch, OpenAIBatchStore, render_batch
from lowtide.emulator.openai.catalogue import (
    SNAPSHOTS,
    OpenAIModel,
    cannot_delete,
    find,
    fine_tuned_id,
    model_not_found,
    page,
    retrieve,
)
from lowtide.emulator.openai.chat import build_completion, completion_id
from lowtide.emulator.openai.chat_params import ChatCall, read_chat_call
from lowtide.emulator.openai.checks import check_keys, check_metadata, require_object, required
from lowtide.emulator.openai.embeddings import create_embeddings
from lowtide.emulator.openai.errors import OpenAIError, invalid_type, invalid_value
from lowtide.emulator.openai.files import BATCH_FILE_LIFETIME, PURPOSES, FileStore, StoredFile, render_file
from lowtide.emulator.openai.ids import new_alnum, new_hex
from lowtide.emulator.openai.model import generate, input_tokens
from lowtide.emulator.openai.responses import build_response
from lowtide.emulator.openai.responses_params import read_responses_call
from lowtide.emulator.openai.results import ENDPOINTS, Verdict, error_lines, judge, output_lines, settle, with_faults
from lowtide.emulator.openai.stored_chat import StoredCompletions
from lowtide.emulator.openai.stored_responses import StoredResponse, StoredResponses, input_items
from lowtide.emulator.openai.webhooks import openai_webhooks

__all__ = ["OpenAIBackend", "OpenAILimits", "expires_after"]

MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_REQUEST_BYTES = 50 * 1024 * 1024
"""The most bytes a live request's body may hold (as much as its files may)."""
_BATCH_KEYS = ("input_file_id", "endpoint", "completion_window", "metadata", "output_expires_after")
# The body of `POST /v1/responses/input_tokens`: what shapes the prompt, and what names it.
_COUNT_KEYS = (
    "model", "input", "instructions", "tools", "tool_choice", "text", "reasoning", "parallel_tool_calls",
    "conversation", "previous_response_id", "truncation", "personality",
)  # fmt: skip
# The model a count names when its body names none.
_COUNT_MODEL = "gpt-4o"


class _Settings(Protocol):
    @property
    def processing_seconds(self) -> float: ...

    @property
    def cancel_seconds(self) -> float: ...


@dataclass
class OpenAILimits:
    """OpenAI's limits, lower in tests that check them without building 200 MB files."""

    max_file_bytes: int = MAX_FILE_BYTES
    max_request_bytes: int = MAX_REQUEST_BYTES
    max_batch_requests: int = MAX_BATCH_REQUESTS
    max_batch_input_bytes: int = MAX_BATCH_INPUT_BYTES


class OpenAIBackend:
    """Files, batches and exactly-once counters of the emulated OpenAI account.

    `created_custom_ids` counts, for every batch created whose input file passed validation, one per custom id in
    it (a request sent in two batches counts 2); `created_batches` counts every batch created."""

    batch_endpoints: Mapping[str, str] = {endpoint: endpoint for endpoint in ENDPOINTS}
    """The endpoints a batch may name, as the API names them, each with the endpoint that answers its requests (an
    API of OpenAI's shapes, Azure's, names `/chat/completions`)."""

    batch_expiry: float | None = BATCH_WINDOW
    """Seconds after which a batch still processing expires (None: never, as Azure's run on)."""

    snapshots: Mapping[str, str] = SNAPSHOTS
    """The dated snapshot each model alias stands for, which answers name (`catalogue.SNAPSHOTS`)."""

    def __init__(self, clock: Clock, settings: _Settings, faults: Faults, cache: PromptCache) -> None:
        self.clock = clock
        self.settings = settings
        self.faults = faults
        self.cache = cache
        self.limits = OpenAILimits()
        self.files = FileStore()
        self.batches = OpenAIBatchStore()
        self.webhooks = openai_webhooks(clock, self.batches.find)
        self.created_custom_ids: Counter[str] = Counter()
        self.created_batches = 0
        self.responses = StoredResponses()
        self.completions = StoredCompletions()
        self.fine_tuned: dict[str, OpenAIModel] = {}
        # What each batch's requests decide by themselves, judged once; a function of the requests alone.
        self._verdicts: dict[str, list[Verdict]] = {}

    def reset(self) -> None:
        self.responses.clear()
        self.completions.clear()
        self.fine_tuned.clear()
        self.files.clear()
        self.batches.clear()
        self.webhooks.reset()
        self.created_custom_ids.clear()
        self.created_batches = 0
        self._verdicts.clear()

    def lookup(self, file_id: str) -> bytes | None:
        """A live file's bytes, for requests that name a file by id."""
        stored = self.files.get(file_id, self.clock.now())
        return b"".join(stored.pieces()) if stored is not None else None

    # -- files ---------------------------------------------------------------------------------------------------

    def upload(self, filename: str, content: bytes, purpose: object, expires_after: int | None) -> JsonObject:
        if purpose is None:
            raise OpenAIError(
                400, "Missing required parameter: 'purpose'.", param="purpose", code="missing_required_parameter"
            )
        if purpose not in PURPOSES:
            raise invalid_value("purpose", purpose, PURPOSES)
        if purpose == "batch" and not filename.endswith(".jsonl"):
            raise OpenAIError(400, "Invalid file format for Batch API. Must be .jsonl", param="file")
        if len(content) > self.limits.max_file_bytes:
            raise OpenAIError(
                413,
                f"File is too large: {len(content)} bytes. Files can be at most {self.limits.max_file_bytes} bytes.",
                param="file",
            )
        now = self.clock.now()
        lifetime = float(expires_after) if expires_after is not None else None
        stored = StoredFile(
            id=new_alnum("file-"),
            filename=filename,
            purpose=str(purpose),
            created_at=now,
            expires_at=now + lifetime if lifetime is not None else None,
            content=content,
        )
        self.files.add(stored)
        return render_file(stored)

    def retrieve_file(self, file_id: str) -> JsonObject:
        self._settle_ended()
        return render_file(self.files.find(file_id, self.clock.now()))

    def list_files(self, *, after: str | None, limit: str | None, order: str | None, purpose: str | None) -> JsonObject:
        self._settle_ended()
        return self.files.page(self.clock.now(), after=after, limit=limit, order=order, purpose=purpose)

    def delete_file(self, file_id: str) -> JsonObject:
        self._settle_ended()
        stored = self.files.find(file_id, self.clock.now())
        self.files.delete(file_id)
        for batch in self.batches.oldest_first():
            if file_id in (batch.file_id("output"), batch.file_id("error")):
                batch.deleted_files.add(file_id)
        return {"id": stored.id, "object": "file", "deleted": True}

    def file_content(self, file_id: str) -> Iterator[bytes]:
        self._settle_ended()
        stored = self.files.find(file_id, self.clock.now())
        if stored.purpose == "assistants":
            raise OpenAIError(400, "Not allowed to download files of purpose: assistants")
        return stored.pieces()

    # -- batches -------------------------------------------------------------------------------------------------

    def create_batch(self, body: object) -> JsonObject:
        params = require_object(body)
        check_keys(params, _BATCH_KEYS)
        input_file_id = required(params, "input_file_id")
        endpoint = required(params, "endpoint")
        window = required(params, "completion_window")
        served = self.batch_endpoints.get(str(endpoint))
        if served is None:
            raise invalid_value("endpoint", endpoint, tuple(self.batch_endpoints))
        if window != "24h":
            raise invalid_value("completion_window", window, ("24h",))
        metadata = check_metadata(params.get("metadata"))
        lifetime = _output_lifetime(params.get("output_expires_after"))
        if not isinstance(input_file_id, str):
            raise invalid_type("input_file_id", "a string", input_file_id)
        stored = self.files.get(input_file_id, self.clock.now())
        if stored is None:
            raise OpenAIError(404, f"No such File object: {input_file_id}", param="input_file_id")
        if stored.purpose != "batch":
            raise OpenAIError(
                400,
                f"The input file {input_file_id} was uploaded with purpose '{stored.purpose}'; a batch's input file "
                "must be uploaded with purpose 'batch'.",
                param="input_file_id",
            )
        found = read_batch_input(
            b"".join(stored.pieces()),
            str(endpoint),
            max_requests=self.limits.max_batch_requests,
            max_bytes=self.limits.max_batch_input_bytes,
        )
        self.prepare_requests(found)
        batch = OpenAIBatch(
            id=new_hex("batch_"),
            created_at=self.clock.now(),
            input_file_id=input_file_id,
            endpoint=served,
            completion_window="24h",
            metadata=metadata,
            requests=found.requests,
            model=found.model,
            errors=found.errors,
            processing_seconds=self.settings.processing_seconds,
            cancel_seconds=self.settings.cancel_seconds,
            output_lifetime=lifetime,
            expire_after=self.batch_expiry,
        )
        self.batches.add(batch)
        self.created_batches += 1
        self.created_custom_ids.update(custom_id for custom_id, _ in batch.requests)
        # The create response shows the batch validating even when it is due to end at once.
        return self._render(batch, status="validating")

    def prepare_requests(self, found: BatchInput) -> None:
        """What the API does to a batch's requests once its input file passed validation: nothing here (Azure's
        reads the deployment each names)."""
        return

    def retrieve_batch(self, batch_id: str) -> JsonObject:
        return self._render(self.batches.find(batch_id))

    def list_batches(self, *, after: str | None, limit: str | None) -> JsonObject:
        page, has_more = self.batches.page(after=after, limit=limit)
        return {
            "object": "list",
            "data": [self._render(batch) for batch in page],
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
            "has_more": has_more,
        }

    def cancel_batch(self, batch_id: str) -> JsonObject:
        """Start cancelling a batch that is validating or in progress; cancelling one already cancelling is
        harmless, any other status is refused."""
        batch = self.batches.find(batch_id)
        now = self.clock.now()
        status = batch.status(now)
        if status in ("validating", "in_progress"):
            batch.cancel_initiated_at = now
            batch.cancel_seconds = self.settings.cancel_seconds
        elif status != "cancelling":
            raise OpenAIError(400, f"Cannot cancel a batch with status '{status}'.")
        # With cancel_seconds=0 the batch is cancelled at once, but this answer still shows the cancel under way.
        return self._render(batch, status="cancelling")

    # -- the model -----------------------------------------------------------------------------------------------

    def create_response(self, body: object) -> tuple[JsonObject, bool]:
        """The `Response` to `body` (kept unless it asks `store: false`; a background one as it is at first), and
        whether it is to be streamed."""
        call = read_responses_call(body, self.lookup, conversations=self.responses.conversation)
        response_id = new_hex("resp_", 48)
        now = self.clock.now()
        generated = generate(call.request, response_id, cache=self.cache, now=now)
        model = self.snapshots.get(call.request.model)
        response = build_response(call, generated, response_id=response_id, created_at=now, model=model)
        response["service_tier"] = served_tier(body)
        if call.echo["store"] is not True:
            return response, call.stream
        params = require_object(body)
        previous = params.get("previous_response_id")
        before = self.responses.conversation(previous) if isinstance(previous, str) else None
        items = input_items(response_id, params.get("input"))
        output = response["output"]
        stored = StoredResponse(
            response=response,
            items=items,
            conversation=[*(before or []), *items, *(output if isinstance(output, list) else [])],
            background=call.echo["background"] is True and not call.stream,
            created_at=now,
            ends_at=now + self.settings.processing_seconds,
        )
        self.responses.keep(stored)
        return stored.shown(now), call.stream

    def retrieve_response(self, response_id: str) -> JsonObject:
        return self.responses.find(response_id).shown(self.clock.now())

    def cancel_response(self, response_id: str) -> JsonObject:
        return self.responses.cancel(response_id, self.clock.now())

    def count_input_tokens(self, body: object) -> JsonObject:
        """What the same Responses request would report as its input tokens (`InputTokenCountResponse`); a prompt
        over its model's window is counted, not refused."""
        params = require_object(body)
        check_keys(params, _COUNT_KEYS)
        asked = {
            key: value for key, value in params.items() if key not in ("conversation", "personality", "truncation")
        }
        asked.setdefault("model", _COUNT_MODEL)
        asked.setdefault("input", "")
        call = read_responses_call(asked, self.lookup, counting=True, conversations=self.responses.conversation)
        return {"object": "response.input_tokens", "input_tokens": input_tokens(call.request)}

    def list_models(self) -> JsonObject:
        return page(self.fine_tuned.values())

    def retrieve_model(self, model_id: str) -> JsonObject:
        own = self.fine_tuned.get(model_id)
        return own.render() if own is not None else retrieve(model_id)

    def add_fine_tuned_model(self, base: str, *, suffix: str = "custom", organization: str = "lowtide") -> str:
        """A fine-tuned model of `base` (a text model of the catalogue) on the account, as if a fine-tuning job had
        made it: listed, described and deletable (not answering requests); its id."""
        model = find(base)
        if model is None:
            raise model_not_found(base)
        model_id = fine_tuned_id(base, organization, suffix, new_alnum("", 8))
        self.fine_tuned[model_id] = OpenAIModel(model_id, int(self.clock.now()), model.window, owned_by=organization)
        return model_id

    def delete_model(self, model_id: str) -> JsonObject:
        """`DELETE /v1/models/{model}`: only the account's fine-tuned models can be deleted."""
        if model_id in self.fine_tuned:
            del self.fine_tuned[model_id]
            return {"id": model_id, "object": "model", "deleted": True}
        retrieve(model_id)  # the 404 of a model that does not exist
        raise cannot_delete(model_id)

    def create_chat_completion(self, body: object) -> tuple[JsonObject, ChatCall]:
        """The completion answering `body`, kept if it asks `store: true`."""
        call = read_chat_call(body, self.lookup)
        answer_id = new_hex("chatcmpl-", 29)
        now = self.clock.now()
        generated = generate(call.request, answer_id, cache=self.cache, now=now)
        model = self.snapshots.get(call.request.model)
        completion = build_completion(
            call, generated, completion_id=completion_id(answer_id), created_at=now, model=model
        )
        completion["service_tier"] = served_tier(body)
        params = require_object(body)
        if params.get("store") is True:
            self.completions.keep(completion, params)
        return completion, call

    def create_embeddings(self, body: object) -> JsonObject:
        return create_embeddings(body)

    # -- internals -----------------------------------------------------------------------------------------------

    def verdicts(self, batch: OpenAIBatch) -> list[Verdict]:
        found = self._verdicts.get(batch.id)
        if found is None:
            found = self._verdicts[batch.id] = [judge(batch.endpoint, body, self.lookup) for _, body in batch.requests]
        return found

    def _settle_ended(self) -> None:
        """Settle every batch whose end has passed, so that its output files exist for the Files routes."""
        now = self.clock.now()
        for batch in self.batches.oldest_first():
            if batch.settlement is None and now >= batch.ended_at:
                self._settle(batch)

    def _settle(self, batch: OpenAIBatch) -> None:
        settlement = settle(batch, self.verdicts(batch), self.faults)
        batch.settlement = settlement
        self.add_batch_files(batch)

    def add_batch_files(self, batch: OpenAIBatch) -> None:
        """The output and error files of a settled batch, those it has lines for and not deleted since."""
        settlement = batch.settlement
        assert settlement is not None
        lifetime = batch.output_lifetime if batch.output_lifetime is not None else BATCH_FILE_LIFETIME
        faults = self.faults
        wanted: tuple[tuple[Literal["output", "error"], bool, Callable[[], Iterable[bytes]]], ...] = (
            (
                "output",
                settlement.has("succeeded"),
                lambda: output_lines(batch, settlement, self.lookup, faults, self.snapshots),
            ),
            ("error", settlement.has("errored", "expired", "canceled"), lambda: error_lines(batch, settlement, faults)),
        )
        for which, present, lines in wanted:
            file_id = batch.file_id(which)
            if present and file_id not in batch.deleted_files and self.files.get(file_id, batch.ended_at) is None:
                self.files.add(
                    StoredFile(
                        id=file_id,
                        filename=f"{batch.id}_{which}.jsonl",
                        purpose="batch_output",
                        created_at=batch.ended_at,
                        expires_at=batch.ended_at + lifetime,
                        lines=lines,
                    )
                )

    def _render(self, batch: OpenAIBatch, *, status: BatchStatus | None = None) -> JsonObject:
        now = self.clock.now()
        shown = status if status is not None else batch.status(now)
        files: tuple[str | None, str | None] = (None, None)
        if shown in ("completed", "expired", "cancelled"):
            if batch.settlement is None:
                self._settle(batch)
            settlement = batch.settlement
            assert settlement is not None
            output = batch.file_id("output") if settlement.has("succeeded") else None
            error = batch.file_id("error") if settlement.has("errored", "expired", "canceled") else None
            files = (output, error)
            return render_batch(batch, status=shown, now=now, counts=settlement.counts, files=files)
        return render_batch(batch, status=shown, now=now, counts=lambda: self._counts_so_far(batch, now))

    def _counts_so_far(self, batch: OpenAIBatch, now: float) -> tuple[int, int]:
        verdicts = self.verdicts(batch)
        failed = 0
        processed = batch.processed_count(now)
        for index in range(processed):
            kind = with_faults(verdicts[index], batch.requests[index][0], self.faults).kind
            failed += kind in ("errored", "expired", "canceled")
        return processed - failed, failed


def _output_lifetime(value: object) -> float | None:
    if value is None:
        return None
    policy = require_object(value, "output_expires_after")
    if policy.get("anchor") != "created_at":
        raise invalid_value("output_expires_after.anchor", policy.get("anchor"), ("created_at",))
    seconds = policy.get("seconds")
    if not isinstance(seconds, int) or isinstance(seconds, bool) or not 3600 <= seconds <= 2_592_000:
        raise OpenAIError(
            400,
            "Invalid 'output_expires_after.seconds': expected an integer between 3600 and 2592000.",
            param="output_expires_after.seconds",
            code="invalid_value",
        )
    return float(seconds)


def expires_after(fields: dict[str, str]) -> int | None:
    """`expires_after` of a multipart upload (`expires_after[anchor]`, `expires_after[seconds]`), checked."""
    anchor, seconds = fields.get("expires_after[anchor]"), fields.get("expires_after[seconds]")
    if anchor is None and seconds is None:
        return None
    if anchor != "created_at":
        raise invalid_value("expires_after.anchor", anchor, ("created_at",))
    if seconds is None or not seconds.isdigit() or not 3600 <= int(seconds) <= 2_592_000:
        raise OpenAIError(
            400,
            "Invalid 'expires_after.seconds': expected an integer between 3600 and 2592000.",
            param="expires_after.seconds",
            code="invalid_value",
        )
    return int(seconds)


def served_tier(body: object) -> str:
    """The tier a live answer says it was processed in, as OpenAI's does: `flex` or `priority` when asked for, else
    `default` (what `auto` comes to on an account without Scale Tier)."""
    asked = require_object(body).get("service_tier")
    return asked if asked == "flex" or asked == "priority" else "default"
