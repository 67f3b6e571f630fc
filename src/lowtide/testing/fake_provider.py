"""`FakeBatchProvider`: a complete minimal batch provider over a `FakeBatchAPI`, written against `lowtide.providers`
alone: a codec (requests to the fake API's bodies, its result lines to outcomes) and a backend (its batches), so that
an actor of it gets everything a real batch provider gets from lowtide's durable engine.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, ClassVar, cast

from pydantic import BaseModel

from lowtide import (
    ActorRequest,
    ActorResponse,
    BatchProcessingMode,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchRequestUnreadable,
    ChatMessage,
    ConfigurationError,
    Cost,
    NotFoundError,
    ProviderRegistry,
    Usage,
)
from lowtide.providers import (
    BatchBackend,
    BatchCodec,
    BatchLimits,
    ContentRules,
    Counts,
    CreateSteps,
    Outcome,
    Phase,
    Provider,
    ProviderOptions,
    RemoteBatch,
    ResultLine,
    Settled,
    TextPart,
    UnreadableLine,
    answer_of,
    json_object,
    parse_response,
    pieces_of,
    run_batch,
    system_text,
)
from lowtide.testing.fake_api import Failure, FakeBatch, FakeBatchAPI, Reply

__all__ = ["FakeBatchBackend", "FakeBatchCodec", "FakeBatchProvider"]

_PHASES = {
    "validating": Phase.RUNNING,
    "in_progress": Phase.RUNNING,
    "canceling": Phase.CANCELING,
    "ended": Phase.ENDED,
}
_SETTINGS = frozenset({"temperature", "top_p", "top_k", "stop_sequences", "metadata"})
"""The settings a fake request carries (so that two calls differing only in them have different keys)."""


class FakeBatchCodec(BatchCodec):
    """The fake API's requests and result lines, as pure functions. A request is its conversation's text and its
    settings; anything but text (an image, a document, a tool) is refused before anything is sent."""

    limits = BatchLimits(max_requests=10_000, max_bytes=50_000_000)

    def __init__(self, name: str, *, price_per_request: Decimal) -> None:
        self.name = name
        self.price_per_request = price_per_request
        self._content = ContentRules(provider=f"The fake provider {name!r}")

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        if request.tools:
            raise ConfigurationError(f"tools: the fake provider {self.name!r} calls no tools.", field="tools")
        messages = [
            {"role": message.role, "text": self._text(message, index)} for index, message in enumerate(request.messages)
        ]
        body: dict[str, object] = {"model": request.model, "max_tokens": request.max_tokens, "messages": messages}
        if request.system is not None:
            body["system"] = system_text(request.system, rules=self._content)
        body.update(request.model_dump(mode="json", include=set(_SETTINGS), exclude_defaults=True))
        return body

    def _text(self, message: ChatMessage, index: int) -> str:
        if isinstance(message.content, str):
            return message.content
        texts: list[str] = []
        for piece in pieces_of(message.role, message.content, index, rules=self._content):
            if not isinstance(piece, TextPart):
                field = f"messages[{index}].content"
                raise ConfigurationError(f"{field}: the fake provider {self.name!r} takes text alone.", field=field)
            texts.append(piece.text)
        return "".join(texts)

    def custom_id_for(self, key: str, ledger: str | None) -> str:
        return f"{key}@{ledger or ''}"

    def request_size(self, custom_id: str, params_json: str) -> int:
        return len(params_json.encode()) + len(custom_id.encode()) + 32

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        return "".join(
            f'{{"custom_id":{json.dumps(custom_id)},"body":{body}}}\n' for custom_id, body in entries
        ).encode()

    def worst_case_usd(
        self, params: Mapping[str, object], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        return self.price_per_request * (2 if mode is BatchProcessingMode.LIVE else 1)

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        custom_id = str(line.get("custom_id"))
        reply = line.get("reply")
        if reply is not None:
            return self._answer(json_object(reply), batch_id=batch_id, custom_id=custom_id, request_id=request_id)
        failure = line.get("failure")
        if failure is not None:
            failure = json_object(failure)
            error = BatchRequestErrored(
                batch_id=batch_id,
                custom_id=custom_id,
                error_type=str(failure.get("type")),
                api_message=str(failure.get("message")),
                retryable=failure.get("retryable") is True,
            )
            return error, None
        ended = line.get("ended")
        if ended == "expired":
            return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id), None
        if ended == "canceled":
            return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id), None
        raw = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        unreadable = BatchRequestUnreadable(
            batch_id=batch_id, custom_id=custom_id, raw_line=raw, reason="a line of no shape the fake API writes"
        )
        return unreadable, None

    def _answer(
        self, reply: Mapping[str, Any], *, batch_id: str, custom_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, Any]]:
        text = str(reply["text"])
        usage = Usage(input_tokens=int(reply["input"]), output_tokens=int(reply["output"]))
        price = self.price_per_request
        cost = Cost(
            total_usd=price,
            input_usd=Decimal(0),
            output_usd=price,
            pricing="batch",
            live_equivalent_usd=price * 2,
            source=self.name,
        )
        mode = BatchProcessingMode.BATCH
        stored: dict[str, Any] = {
            "text": text,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "model": str(reply["model"]),
            "provider": self.name,
            "ids": {"message_id": None, "batch_id": batch_id, "custom_id": custom_id, "request_id": request_id},
            "usage": usage.model_dump(mode="json"),
            "cost": cost.model_dump(mode="json"),
            "mode": mode.value,
        }
        return answer_of(stored, text_alone=True, usage=usage, cost=cost, mode=mode), stored

    def parse(self, response: ActorResponse[object], response_model: type[BaseModel]) -> ActorResponse[object]:
        return parse_response(response, response_model)


class FakeBatchBackend(BatchBackend):
    """The fake API's batches, as lowtide's durable engine drives them."""

    def __init__(self, api: FakeBatchAPI, codec: FakeBatchCodec) -> None:
        self.api = api
        self.codec = codec
        self.finds_by_intent = api.echoes_intent

    @property
    def endpoint(self) -> str:
        return f"memory://{self.codec.name}"

    @property
    def credential(self) -> str:
        return f"fake-api-{id(self.api)}"

    def _remote(self, batch: FakeBatch) -> RemoteBatch:
        status = self.api.status(batch)
        counts = Counts(processing=len(batch.requests))
        if status == "ended":
            kinds = Counter(_kind(self.api.outcome(batch, request)) for request in batch.requests)
            counts = Counts(**kinds)
        return RemoteBatch(
            id=batch.id,
            phase=_PHASES[status],
            status=status,
            created_at=batch.created_at,
            counts=counts,
            ended_at=batch.ends_at if status == "ended" else None,
            cancel_requested=batch.canceled_at is not None,
            intent_id=batch.intent_id,
            handle=batch,
        )

    def _batch(self, batch_id: str) -> FakeBatch:
        batch = self.api.batches.get(batch_id)
        if batch is None:
            raise NotFoundError(f"No batch {batch_id!r} at the fake API.", status_code=404)
        return batch

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        return self._remote(self.api.create(body, intent_id=intent_id))

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        return [self._remote(batch) for batch in self.api.batches.values() if batch.created_at >= created_after]

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        found = [batch for batch in self.api.batches.values() if batch.intent_id == intent_id]
        return self._remote(found[0]) if found else None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return self._remote(self._batch(batch_id))

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        for line in self.api.results(self._batch(batch.id)):
            handle(line)

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        lines = self.api.results(self._batch(batch.id))
        return str(lines[0]["custom_id"]) if lines else None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        batch = self._batch(batch_id)
        self.api.cancel(batch)
        return self._remote(batch)


def _kind(outcome: object) -> str:
    if isinstance(outcome, Reply):
        return "succeeded"
    if isinstance(outcome, Failure):
        return "errored"
    return str(outcome)


class FakeBatchProvider(Provider):
    """A batch provider whose batch API is a `FakeBatchAPI` in the test's memory, for testing programs that use
    lowtide the way pydantic-ai's `TestModel` tests agents: no network, no key, virtual time.

    Register it under a name of the test's choice, then make actors of that provider with the same registry::

        api = FakeBatchAPI(clock)
        registry = ProviderRegistry()
        FakeBatchProvider.register(registry, api, name="fake")
        actor = Actor({"name": "t", "provider": "fake", "model": "fake-1", "batch_processing": "batch"},
                      registry=registry, clock=clock, ledger=MemoryLedger())

    Such an actor gets the ledger, keys, coalescing, exactly-once create, park and resume, budgets (at the API's
    `price_per_request`) and bulk runs, as any batch provider's does; the API shows what was sent and lets the test
    script each request's outcome and what goes wrong.
    """

    name: ClassVar[str] = "fake"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    fake_api: ClassVar[FakeBatchAPI | None] = None
    """The API of the provider class `register` made."""

    def __init__(self, options: ProviderOptions) -> None:
        api, codec = type(self).fake_api, type(self).codec
        if api is None or not isinstance(codec, FakeBatchCodec):
            raise ConfigurationError(
                "A FakeBatchProvider is made by the registry it was registered with: call"
                " FakeBatchProvider.register(registry, api, name=...) and give the actor that registry.",
                field="provider",
            )
        self.options = options
        self.backend = FakeBatchBackend(api, codec)

    @classmethod
    def register(
        cls, registry: ProviderRegistry, api: FakeBatchAPI, *, name: str = "fake", replace: bool = False
    ) -> type[FakeBatchProvider]:
        """Register a fake batch provider named `name` over `api` with `registry` (for batch mode), and return its
        class. `replace=True` takes the place of a provider registered under that name before."""
        codec = FakeBatchCodec(name, price_per_request=api.price_per_request)
        attributes = {"name": name, "codec": codec, "fake_api": api, "__doc__": f"The fake batch provider {name!r}."}
        provider = cast("type[FakeBatchProvider]", type(f"FakeBatchProvider[{name}]", (cls,), attributes))
        registry.register(name, BatchProcessingMode.BATCH, provider, replace=replace)
        return provider

    def batch_backend(self) -> FakeBatchBackend:
        return self.backend

    async def preflight(self, request: ActorRequest) -> None:
        """What the fake API would refuse (tools, anything but text) is refused before anything is recorded."""
        self.backend.codec.encode_request(request)

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        """One request as a batch of its own, outside the ledger (the actor's calls go through the durable engine)."""
        outcome = (await self.complete_many([request]))[0]
        if isinstance(outcome, ActorResponse):
            return outcome
        raise outcome

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
        return await run_batch(self.backend, requests, settings=self.options.batch, clock=self.options.clock)
