"""A third-party batch provider, as a plugin package would ship it: "tidepool", whose batch API lives in memory.

Its shapes are its own, unlike Anthropic's: custom ids `tp-<16 hex>`, batches `queued` -> `working` -> `done`,
inputs as JSON lines `{"id", "body"}`, results `{"id", "answer"}` or `{"id", "failure"}`, and metadata that echoes
lowtide's intent id (so an unknown create is found exactly). Tests reach the API through `TidepoolAPI.shared`: what
was created, and faults to arm. Its entry point is `lowtide_tidepool_plugin:register`. It imports nothing of lowtide
but `lowtide` and `lowtide.providers`, the faces a provider author has (`features/public_api.feature` checks).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar

from pydantic import BaseModel

from lowtide import (
    ActorError,
    ActorRequest,
    ActorResponse,
    APIConnectionError,
    BatchProcessingMode,
    BatchRequestErrored,
    Clock,
    Cost,
    ProviderIds,
    ProviderRegistry,
    StructuredOutputError,
    TextContent,
    Usage,
)
from lowtide.providers import (
    BatchBackend,
    BatchCodec,
    BatchLimits,
    Counts,
    CreateSteps,
    Phase,
    Provider,
    ProviderOptions,
    RemoteBatch,
    ResultLine,
)

PRICE_PER_REQUEST = Decimal("0.001")
_PHASES = {"queued": Phase.RUNNING, "working": Phase.RUNNING, "done": Phase.ENDED}


@dataclass
class _Batch:
    id: str
    lines: list[dict[str, Any]]
    created_at: float
    metadata: dict[str, str]
    ends_at: float


@dataclass
class TidepoolAPI:
    """The provider's batch API, in memory: what a real service would keep on its side."""

    clock: Clock | None = None
    processing_seconds: float = 30.0
    batches: dict[str, _Batch] = field(default_factory=dict[str, _Batch])
    created: Counter[str] = field(default_factory=Counter[str])
    """Custom ids created, with how many times each."""
    creates: int = 0
    drop_next_create_answer: int = 0
    """Creates that commit their batch and then lose the answer (a dropped connection)."""
    refuse_next_create: int = 0
    """Creates that fail with a dropped connection before reaching the API."""
    fail_custom_ids: set[str] = field(default_factory=set[str])

    shared: ClassVar[TidepoolAPI]

    def now(self) -> float:
        assert self.clock is not None, "TidepoolAPI.shared.clock is set by the test"
        return self.clock.now()

    def create(self, body: bytes, metadata: dict[str, str]) -> _Batch:
        self.creates += 1
        if self.refuse_next_create:
            self.refuse_next_create -= 1
            raise APIConnectionError("tidepool: connection reset before the request was sent")
        lines = [json.loads(line) for line in body.decode().splitlines() if line]
        now = self.now()
        batch = _Batch(f"tpb-{len(self.batches) + 1:04d}", lines, now, metadata, now + self.processing_seconds)
        self.batches[batch.id] = batch
        self.created.update(line["id"] for line in lines)
        if self.drop_next_create_answer:
            self.drop_next_create_answer -= 1
            raise APIConnectionError("tidepool: connection dropped after the batch was created")
        return batch

    def status(self, batch: _Batch) -> str:
        return "done" if self.now() >= batch.ends_at else "working"

    def results(self, batch: _Batch) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for line in batch.lines:
            prompt = str(line["body"]["prompt"])
            if line["id"] in self.fail_custom_ids:
                out.append({"id": line["id"], "failure": {"kind": "rejected", "why": "tidepool refused it"}})
            else:
                out.append({"id": line["id"], "answer": f"tidepool: {prompt}", "tokens": [len(prompt.split()), 2]})
        return out


TidepoolAPI.shared = TidepoolAPI()


def _text_of(request: ActorRequest) -> str:
    said = request.messages[-1].content
    return said if isinstance(said, str) else " ".join(str(block.get("text", "")) for block in said)


class TidepoolCodec(BatchCodec):
    name = "tidepool"
    limits = BatchLimits(max_requests=1000, max_bytes=1_000_000, max_hours=1.0)

    def encode_request(self, request: ActorRequest) -> dict[str, Any]:
        params = {"model": request.model, "prompt": _text_of(request), "limit": request.max_tokens}
        if request.model.endswith("-echo"):  # a model whose requests carry their prompt twice (a cache key of it)
            params["echo"] = _text_of(request)
        return params

    def custom_id_for(self, key: str, ledger: str | None) -> str:
        return "tp-" + hashlib.sha256(f"{ledger}\n{key}".encode()).hexdigest()[:16]

    def request_size(self, custom_id: str, params_json: str) -> int:
        return len(params_json) + len(custom_id) + 16

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        return "".join(f'{{"id":"{custom_id}","body":{body}}}\n' for custom_id, body in entries).encode()

    def worst_case_usd(
        self, params: Mapping[str, Any], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        return PRICE_PER_REQUEST

    def custom_id_of(self, line: ResultLine) -> str | None:
        return str(line["id"])

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[ActorResponse[Any] | ActorError, dict[str, Any] | None]:
        custom_id = str(line["id"])
        if "failure" in line:
            failure = line["failure"]
            error = BatchRequestErrored(
                batch_id=batch_id, custom_id=custom_id, error_type=str(failure["kind"]), api_message=str(failure["why"])
            )
            return error, None
        tokens = line["tokens"]
        response = ActorResponse[Any](
            text=str(line["answer"]),
            content=[TextContent(text=str(line["answer"]))],
            stop_reason="end_turn",
            usage=Usage(input_tokens=int(tokens[0]), output_tokens=int(tokens[1])),
            cost=Cost(
                total_usd=PRICE_PER_REQUEST,
                input_usd=Decimal(0),
                output_usd=PRICE_PER_REQUEST,
                pricing="batch",
                live_equivalent_usd=PRICE_PER_REQUEST * 2,
                source="tidepool",
            ),
            model="tide-1",
            provider=self.name,
            mode=BatchProcessingMode.BATCH,
            ids=ProviderIds(batch_id=batch_id, custom_id=custom_id, request_id=request_id),
        )
        return response, response.model_dump(mode="json", exclude={"parsed"})

    def parse(self, response: ActorResponse[Any], response_model: type[BaseModel]) -> ActorResponse[Any]:
        try:
            return response.model_copy(update={"parsed": response_model.model_validate_json(response.text)})
        except ValueError as exc:
            raise StructuredOutputError(str(exc), text=response.text, model_name=response_model.__name__) from None


class TidepoolBackend(BatchBackend):
    codec: BatchCodec = TidepoolCodec()
    finds_by_intent = True

    def __init__(self, api: TidepoolAPI) -> None:
        self.api = api

    @property
    def endpoint(self) -> str:
        return "memory://tidepool"

    @property
    def credential(self) -> str:
        return "tidepool"

    def _remote(self, batch: _Batch) -> RemoteBatch:
        status = self.api.status(batch)
        done = status == "done"
        return RemoteBatch(
            id=batch.id,
            phase=_PHASES[status],
            status=status,
            created_at=batch.created_at,
            counts=Counts(processing=0 if done else len(batch.lines), succeeded=len(batch.lines) if done else 0),
            ended_at=batch.ends_at if done else None,
            intent_id=batch.metadata.get("lowtide_intent"),
            handle=batch,
        )

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        return self._remote(self.api.create(body, {"lowtide_intent": intent_id}))

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        return [self._remote(b) for b in self.api.batches.values() if b.created_at >= created_after]

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        found = [b for b in self.api.batches.values() if b.metadata.get("lowtide_intent") == intent_id]
        return self._remote(found[0]) if found else None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return self._remote(self.api.batches[batch_id])

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine], None], *, expected: int | None = None
    ) -> None:
        for line in self.api.results(self.api.batches[batch.id]):
            handle(line)

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        return self.api.results(self.api.batches[batch.id])[0]["id"]

    async def cancel(self, batch_id: str) -> RemoteBatch:
        batch = self.api.batches[batch_id]
        batch.ends_at = min(batch.ends_at, self.api.now())
        return self._remote(batch)


class TidepoolProvider(Provider):
    name: ClassVar[str] = "tidepool"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = TidepoolBackend.codec

    def __init__(self, options: ProviderOptions) -> None:
        self.backend = TidepoolBackend(TidepoolAPI.shared)

    def batch_backend(self) -> TidepoolBackend:
        return self.backend

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:  # pragma: no cover - the engine is used
        raise NotImplementedError


def register(registry: ProviderRegistry) -> None:
    registry.register("tidepool", BatchProcessingMode.BATCH, TidepoolProvider)
