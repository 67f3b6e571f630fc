"""The emulator's state and operations, one method per API route and free of HTTP: the web layer authenticates,
parses and renders; everything here works on decoded JSON and raises `ApiError` for the API's errors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from lowtide.clock import Clock
from lowtide.emulator.batches import (
    Batch,
    BatchSnapshot,
    BatchStore,
    ProcessingStatus,
    Settlement,
    list_limit,
    paginate,
    render_batch,
)
from lowtide.emulator.cache import PromptCache
from lowtide.emulator.catalogue import ModelCatalogue
from lowtide.emulator.errors import ApiError, invalid_request, not_found
from lowtide.emulator.faults import Faults
from lowtide.emulator.file_sources import checked_params
from lowtide.emulator.filestore import MAX_FILE_BYTES, FileStore
from lowtide.emulator.ids import new_id
from lowtide.emulator.jsonutil import JsonObject, as_object
from lowtide.emulator.messages import build_message
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.openai.state import OpenAIStateCodec
from lowtide.emulator.openai.state import restore as restore_openai
from lowtide.emulator.outcomes import find_marker
from lowtide.emulator.prompt import analyze_prompt
from lowtide.emulator.ratelimits import Latency, Quotas, RateLimits
from lowtide.emulator.settlement import result_lines, settle
from lowtide.emulator.state import SavedState, StateFile
from lowtide.emulator.validation import validate_batch_create

__all__ = ["API_BATCH_BYTES", "API_REQUEST_BYTES", "Backend", "Settings"]

API_BATCH_BYTES = 256 * 1024 * 1024
API_REQUEST_BYTES = 32 * 1024 * 1024


@dataclass
class Settings:
    """Tunable behaviour. Batches keep the timings in force when they were created (or, for cancel, canceled)."""

    processing_seconds: float = 0.0
    cancel_seconds: float = 0.0
    api_keys: frozenset[str] | None = None
    max_batch_bytes: int = API_BATCH_BYTES
    max_request_bytes: int = API_REQUEST_BYTES
    max_file_bytes: int = MAX_FILE_BYTES
    extra_models: tuple[str, ...] = ()
    rate_limits: RateLimits = field(default_factory=RateLimits)
    latency: Latency = field(default_factory=Latency)


class Backend:
    """All of one emulator's state. With a `state_file`, it starts from what the file holds (if it exists) and
    `save()` writes it back; the web layer saves after every call, the rest after every change it makes."""

    def __init__(self, clock: Clock, settings: Settings, state_file: StateFile | None = None) -> None:
        self.clock = clock
        self.settings = settings
        self.state_file = state_file
        self.faults = Faults(on_outcomes=self.save)
        self.quotas = Quotas(settings.rate_limits)
        self.calls: Counter[str] = Counter()
        # Exactly-once evidence: for every committed batch, one count per custom_id it holds. Deleting a batch
        # does not take its counts back.
        self.created_custom_ids: Counter[str] = Counter()
        self.created_batches = 0
        # Live answers delivered, one count per distinct request body (an item of a bulk run: its prompt), and
        # those whose caller had gone (disconnected) by the time the answer was ready.
        self.live_answers: Counter[str] = Counter()
        self.abandoned_answers = 0
        self.cache = PromptCache()
        self.batches = BatchStore()
        self.files = FileStore()
        self.openai = OpenAIBackend(clock, settings, self.faults, self.cache)
        self._openai_state = OpenAIStateCodec()
        self.models = ModelCatalogue(settings.extra_models)
        if state_file is not None:
            saved = state_file.read()
            if saved is not None:
                self._restore(saved)
            # At once, so that a file that cannot be written fails the start rather than the first call.
            self.save()

    def reset(self) -> None:
        # In place, so that tests holding `calls`, `created_custom_ids` or `faults` keep seeing the live objects.
        self.faults.clear()
        self.calls.clear()
        self.created_custom_ids.clear()
        self.created_batches = 0
        self.live_answers.clear()
        self.abandoned_answers = 0
        self.cache.clear()
        self.batches.clear()
        self.files.clear()
        self.openai.reset()
        self.save()

    def save(self) -> None:
        """Write the state file, if there is one."""
        if self.state_file is not None:
            self.state_file.write(
                SavedState(
                    batches=self.batches.oldest_first(),
                    calls=dict(self.calls),
                    created_batches=self.created_batches,
                    created_custom_ids=dict(self.created_custom_ids),
                    outcomes=self.faults.outcomes(),
                    cache=self.cache.entries(),
                    files=self.files.oldest_first(),
                    openai=self._openai_state.encode(self.openai),
                )
            )

    def _restore(self, saved: SavedState) -> None:
        self.batches.restore(saved.batches)
        self.calls.update(saved.calls)
        self.created_batches = saved.created_batches
        self.created_custom_ids.update(saved.created_custom_ids)
        self.faults.restore_outcomes(saved.outcomes)
        self.cache.restore(saved.cache)
        self.files.restore(saved.files)
        if saved.openai is not None:
            restore_openai(self.openai, saved.openai)

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
                api_key, input_tokens=prompt.tokens, max_tokens=params["max_tokens"], now=self.clock.now()
            )
            if self.settings.rate_limits.any
            else None
        )
        usage = self.cache.use(prompt.breakpoints, self.clock.now(), model=params["model"])
        message = build_message(
            params, message_id=new_id("msg"), prompt_tokens=prompt.tokens, cache=usage, service_tier="standard"
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
        status = batch.status(self.clock.now())
        if status != "ended":
            raise invalid_request(
                f"Message Batch {batch_id} is {status.replace('_', ' ')} and cannot be deleted; "
                "cancel it first and delete it once it has ended."
            )
        self.batches.delete(batch_id)
        return {"id": batch_id, "type": "message_batch_deleted"}

    def batch_results(self, batch_id: str) -> Iterator[bytes]:
        batch = self._find(batch_id)
        status = batch.status(self.clock.now())
        if status != "ended":
            raise invalid_request(
                f"Message Batch {batch_id} is {status.replace('_', ' ')}; its results are available once it has ended."
            )
        return result_lines(batch, self._settle(batch), self.faults)

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
