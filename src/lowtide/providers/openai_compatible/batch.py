"""`ChatBatchProvider`: answers requests through an OpenAI-compatible Batch API (Chat Completions lines in an uploaded
JSONL file) at its batch discount, with its official SDK; and `ChatBatchCodec`, OpenAI's input file and result lines
for such an API, its requests encoded and its answers priced as its `Dialect` says.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create as the
dialect's backend finds a create again, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
batch per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from lowtide import ActorRequest, BatchProcessingMode, ProviderOptions
from lowtide.providers import BatchBackend, InputLimits, OneBatchCalls, ResultLine, Settled
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec
from lowtide.providers.openai_compatible.chat import CHAT_URL, chat_line_outcome, encode_request
from lowtide.providers.openai_compatible.checks import input_limits, preflight
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.provider_base import DialectProvider
from lowtide.providers.openai_compatible.sdk import C, build_client, check_model

__all__ = ["ChatBatchCodec", "ChatBatchProvider"]


class ChatBatchCodec(OpenAIBatchCodec):
    """A dialect's batch requests and results: a request is stored as its input line without the custom id; its
    limits, request body and prices are the dialect's."""

    def __init__(self, dialect: Dialect[BaseModel]) -> None:
        self.dialect = dialect
        self.name = dialect.name
        self.gen_ai_provider_name = dialect.gen_ai_provider_name
        self.usage_shape = dialect.usage
        self.limits = dialect.batch
        self.prompt_caching = None  # (OpenAI's `prompt_cache_key` is OpenAI's alone)

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return {"method": "POST", "url": CHAT_URL, "body": encode_request(request, self.dialect)}

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, Any] | None]:
        return chat_line_outcome(line, dialect=self.dialect, batch_id=batch_id, request_id=request_id)


class ChatBatchProvider(OneBatchCalls[BatchBackend], DialectProvider[C]):
    """A Batch API of OpenAI's shape: half the price of live calls, results within the completion window. A
    dialect's batch provider names its `dialect`, `sdk` and `codec`, and builds its backend (`make_backend`)."""

    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client = build_client(options, self.dialect, self.sdk)
        self._client, self._owns_client = client, owns_client
        self.settings = options.batch
        self._clock = options.clock
        self.backend = self.make_backend(client, owns_client, options)

    def make_backend(self, client: C, owns_client: bool, options: ProviderOptions) -> BatchBackend:
        """The dialect's `BatchBackend` over `client`, with the actor's settings (its own options in `options`)."""
        raise NotImplementedError

    def _batch_bytes(self) -> int:
        return min(self.dialect.batch.max_bytes, self.settings.max_batch_bytes)

    async def preflight(self, request: ActorRequest) -> None:
        preflight(request, self.dialect, batch_bytes=self._batch_bytes())
        await check_model(self._client, self.sdk, self.dialect, owned=self._owns_client, request=request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return input_limits(request, self.dialect, batch_bytes=self._batch_bytes())

    async def aclose(self) -> None:
        await self.backend.aclose()
