"""The Anthropic API's state and operations, one method per route and free of HTTP: the routes authenticate, parse
and render; everything here works on decoded JSON and raises `ApiError` for the API's errors. Its batches, files,
models and counters are its own; the clock, settings, faults, rate limits and prompt cache are the emulator's
(`Shared`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from lowtide.emulator.anthropic.batches import (
    Batch,
    BatchSnapshot,
    BatchStore,
    ProcessingStatus,
    Settlement,
    list_limit,
    paginate,
    render_batch,
)
from lowtide.emulator.anthropic.catalogue import ModelCatalogue, minimum_cacheable_tokens
from lowtide.emulator.anthropic.file_sources import checked_params
from lowtide.emulator.anthropic.filestore import MAX_FILE_BYTES, FileStore
from lowtide.emulator.anthropic.messages import build_message
from lowtide.emulator.anthropic.settlement import result_lines, settle
from lowtide.emulator.anthropic.state import AnthropicSaved
from lowtide.emulator.anthropic.validation import validate_batch_create
from lowtide.emulator.core.emulation import Shared
from lowtide.emulator.core.errors import ApiError, invalid_request, not_found
from lowtide.emulator.core.ids import new_id
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.outcomes import find_marker
from lowtide.emulator.core.prompt import analyze_prompt
from lowtide.emulator.core.ratelimits import BucketState, QuotaStyle, RateLimits

__all__ = ["API_BATCH_BYTES", "API_REQUEST_BYTES", "QUOTAS", "AnthropicBackend", "AnthropicLimits"]

API_BATCH_BYTES = 256 * 1024 * 1024
API_REQUEST_BYTES = 32 * 1024 * 1024


def _buckets(limits: RateLimits) -> dict[str, int | None]:
    return {"requests": limits.rpm, "input-tokens": limits.input_tpm, "output-tokens": limits.output_tpm}


def _headers(bucket: BucketState) -> dict[str, str]:
    prefix = f"anthropic-ratelimit-{bucket.kind}"
    full = datetime.fromtimestamp(bucket.full_at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return {f"{prefix}-limit": str(bucket.limit), f"{prefix}-remaining": str(bucket.remaining), f"{prefix}-reset": full}


QUOTAS = QuotaStyle("anthropic", _buckets, _headers)
"""The Messages API's rate limits: requests, input tokens and output tokens per minute; every live answer carries the
`anthropic-ratelimit-*` headers (limit, remaining, and the RFC 3339 time the bucket is full again)."""


@dataclass
class AnthropicLimits:
    """The API's byte limits, lower in tests that check them (`Emulator(max_request_bytes=...)`, ...)."""

    max_request_bytes: int = API_REQUEST_BYTES
    max_batch_bytes: int = API_BATCH_BYTES
    max_file_bytes: int = MAX_FILE_BYTES


class AnthropicBackend:
    """The Anthropic account: its batches, files, models and counters, on the emulator's shared state."""

    def __init__(self, shared: Shared) -> None:
        settings = shared.settings
        self.shared = shared
        self.clock = shared.clock
        self.settings = settings
        self.faults = shared.faults
        self.quotas = shared.quotas
        self.cache = shared.cache
        self.limits = AnthropicLimits()
        if settings.max_request_bytes is not None:
            self.limits.max_request_bytes = settings.max_request_bytes
        if settings.max_batch_bytes is not None:
            self.limits.max_batch_bytes = settings.max_batch_bytes
        if settings.max_file_bytes is not None:
            self.limits.max_file_bytes = settings.max_file_bytes
        # Exactly-once evidence: for every committed batch, one count per custom_id it holds. Deleting a batch
        # does not take its counts back.
        self.created_custom_ids: Counter[str] = Counter()
        self.created_batches = 0
        # Live answers delivered, one count per distinct request body (an item of a bulk run: its prompt), and
        # those whose caller had gone (disconnected) by the time the answer was ready.
        self.live_answers: Counter[str] = Counter()
        self.abandoned_answers = 0
        self.batches = BatchStore()
        self.files = FileStore()
        self.models = ModelCatalogue(settings.extra_models)

    def reset(self) -> None:
        # In place, so that tests holding `created_custom_ids` keep seeing the live objects.
        self.created_custom_ids.clear()
        self.created_batches = 0
        self.live_answers.clear()
        self.abandoned_answers = 0
        self.batches.clear()
        self.files.clear()

    def save(self) -> None:
        """Write the state file, if there is one."""
        self.shared.save()

    def restore(self, saved: AnthropicSaved) -> None:
        self.batches.restore(saved.batches)
        self.created_batches = saved.created_batches
        self.created_custom_ids.update(saved.created_custom_ids)
        self.files.restore(saved.files)

    def create_message(
        self, body: object, betas: frozenset[str] = frozenset(), *, api_key: str = ""
    ) -> tuple[JsonObject, dict[str, str]]:
        """A live answer, and the rate-limit headers it carries (none without limits); a 429 `ApiError` when the
        key's rate limits leave no room for it."""
        params, _ = checked_params(body, self.files.get, models=self.models, now=self.clock.now(), betas=betas)
        marker = find_marker(params)
        if marker is not None and marker.kind == "errored":
            raise ApiError(marker.error_type, marker.error_message)
        prompt = analyze_prompt(params)
        self.models.check_window(params["model"], prompt.tokens)
        admitted = (
            self.quotas.admit(
                QUOTAS, api_key, input_tokens=prompt.tokens, max_tokens=params["max_tokens"], now=self.clock.now()
            )
            if self.settings.rate_limits.any
            else None
        )
        minimum = minimum_cacheable_tokens(params["model"])
        usage = self.cache.use(prompt.breakpoints, self.clock.now(), minimum=minimum)
        message = build_message(
            params,
            model=self.models.resolved(params["model"]),
            message_id=new_id("msg"),
            prompt_tokens=prompt.tokens,
            cache=usage,
            service_tier="standard",
        )
        if admitted is None:
            return message, {}
        used = as_object(message.get("usage")) or {}
        output = used.get("output_tokens")
        return message, self.quotas.settle(
            admitted, output_tokens=output if isinstance(output, int) else 0, now=self.clock.now()
        )

    def count_tokens(self, body: object, betas: frozenset[str] = frozenset()) -> JsonObject:
        """What the same request would report as its input, cached or not: the sum of its usage's input fields."""
        params, _ = checked_params(
            body, self.files.get, models=self.models, now=self.clock.now(), betas=betas, count_tokens=True
        )
        tokens = analyze_prompt(params).tokens
        counted: JsonObject = {"input_tokens": tokens}
        if params.get("context_management") is not None:
            counted["context_management"] = {"original_input_tokens": tokens}
        return counted

    def create_batch(self, body: object, base_url: str, betas: frozenset[str] = frozenset()) -> JsonObject:
        requests = validate_batch_create(body)
        batch = Batch(
            id=new_id("msgbatch"),
            created_at=self.clock.now(),
            requests=requests,
            processing_seconds=self.settings.processing_seconds,
            cancel_seconds=self.settings.cancel_seconds,
            betas=betas,
        )
        self.batches.add(batch)
        self.created_batches += 1
        self.created_custom_ids.update(custom_id for custom_id, _ in requests)
        # The create response shows the batch in progress even when it is due to end at once.
        return self._render(batch, base_url, status="in_progress")

    def list_models(
        self, *, limit: str | None, after_id: str | None, before_id: str | None, lifecycle: list[str]
    ) -> JsonObject:
        return self.models.page(limit=list_limit(limit), after_id=after_id, before_id=before_id, lifecycle=lifecycle)

    def retrieve_model(self, model_id: str) -> JsonObject:
        return self.models.retrieve(model_id)

    def retrieve_batch(self, batch_id: str, base_url: str) -> JsonObject:
        return self._render(self._find(batch_id), base_url)

    def list_batches(
        self, *, limit: str | None, after_id: str | None, before_id: str | None, base_url: str
    ) -> JsonObject:
        size = list_limit(limit)
        if after_id is not None and before_id is not None:
            raise invalid_request("Only one of after_id and before_id may be given.")
        ids = self.batches.newest_first()
        for name, cursor in (("after_id", after_id), ("before_id", before_id)):
            if cursor is not None and cursor not in ids:
                raise invalid_request(f"{name}: no Message Batch with id {cursor}")
        page = paginate(ids, limit=size, after_id=after_id, before_id=before_id)
        return {
            "data": [self._render(self._find(batch_id), base_url) for batch_id in page.ids],
            "has_more": page.has_more,
            "first_id": page.ids[0] if page.ids else None,
            "last_id": page.ids[-1] if page.ids else None,
        }

    def cancel_batch(self, batch_id: str, base_url: str) -> JsonObject:
        """Start canceling. Canceling twice is harmless; canceling an ended batch is an error, as it can no
        longer be stopped (the API documents cancel as possible "any time before processing ends")."""
        batch = self._find(batch_id)
        now = self.clock.now()
        status = batch.status(now)
        if status == "ended":
            raise invalid_request(f"Message Batch {batch_id} has already ended and can no longer be canceled.")
        if status == "in_progress":
            batch.cancel_initiated_at = now
            batch.cancel_seconds = self.settings.cancel_seconds
        # With cancel_seconds=0 the batch ends at once, but this response still shows the cancel under way.
        return self._render(batch, base_url, status="canceling")

    def delete_batch(self, batch_id: str) -> JsonObject:
        batch = self._find(batch_id)
        if batch.status(self.clock.now()) != "ended":
            raise invalid_request("In progress batches cannot be deleted. Consider canceling the batch instead.")
        self.batches.delete(batch_id)
        return {"id": batch_id, "type": "message_batch_deleted"}

    def batch_results(self, batch_id: str) -> Iterator[bytes]:
        batch = self._find(batch_id)
        if batch.status(self.clock.now()) != "ended":
            raise not_found(f"Message Batch {batch_id} has no available results.")
        return result_lines(batch, self._settle(batch), self.faults, self.models)

    def snapshot(self, batch_id: str) -> BatchSnapshot:
        batch = self.batches.get(batch_id)
        if batch is None:
            raise KeyError(batch_id)
        status = batch.status(self.clock.now())
        settlement = self._settle(batch) if status == "ended" else None
        rendered = render_batch(batch, status=status, counts=settlement.counts() if settlement else None, base_url="")
        # Settling fixes outcomes, which the state file keeps.
        self.save()
        return BatchSnapshot(
            id=batch.id,
            processing_status=status,
            created_at=batch.created_at,
            expires_at=batch.expires_at,
            ended_at=batch.ended_at if settlement else None,
            cancel_initiated_at=batch.cancel_initiated_at,
            requests=tuple(batch.requests),
            request_counts=rendered["request_counts"],
            outcomes={custom_id: kind for (custom_id, _), kind in zip(batch.requests, settlement.kinds, strict=True)}
            if settlement
            else None,
        )

    def _find(self, batch_id: str) -> Batch:
        batch = self.batches.get(batch_id)
        if batch is None:
            raise not_found(f"Message Batch {batch_id} not found.")
        return batch

    def _settle(self, batch: Batch) -> Settlement:
        if batch.settlement is None:
            batch.settlement = settle(batch, self.faults, self.cache, self.files.get, self.models)
        return batch.settlement

    def _render(self, batch: Batch, base_url: str, *, status: ProcessingStatus | None = None) -> JsonObject:
        shown = status if status is not None else batch.status(self.clock.now())
        counts = self._settle(batch).counts() if shown == "ended" else None
        return render_batch(batch, status=shown, counts=counts, base_url=base_url)
