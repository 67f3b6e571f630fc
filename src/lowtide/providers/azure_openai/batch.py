"""`AzureOpenAIBatchProvider`: answers requests through Azure OpenAI's global batch deployments (the actor's `model`
names one), at half the price of a global standard deployment.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the batch's metadata, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
batch per deployment, outside the ledger: nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from typing import ClassVar

from lowtide.batching.backend import BatchCodec
from lowtide.batching.oneshot import OneBatchCalls
from lowtide.core.modes import BatchProcessingMode
from lowtide.messages.limits import InputLimits, body_json, byte_size
from lowtide.provider import Provider, ProviderOptions
from lowtide.providers.azure_openai.batch_backend import AzureBatchBackend
from lowtide.providers.azure_openai.batch_codec import MAX_BATCH_BYTES, MAX_FILES, AzureBatchCodec
from lowtide.providers.azure_openai.checks import MAX_REQUEST_BYTES, check_request, limits_of
from lowtide.providers.azure_openai.client import build_client
from lowtide.providers.azure_openai.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.azure_openai.requests import encode_request
from lowtide.types import ActorRequest

__all__ = ["AzureOpenAIBatchProvider"]

_LINE_ROOM = 256
"""The bytes a request's custom id, method and url add to it as a line of a batch's input file."""


class AzureOpenAIBatchProvider(OneBatchCalls[AzureBatchBackend], Provider):
    """Azure OpenAI's Batch API: half the price of global standard, a 24-hour target (jobs may run longer)."""

    name: ClassVar[str] = PROVIDER_NAME
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = AzureBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client = build_client(options)
        self.settings = options.batch
        self._clock = options.clock
        self.backend = AzureBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, max_files=MAX_FILES
        )

    async def preflight(self, request: ActorRequest) -> None:
        most, where = self._most()
        await check_request(request, max_bytes=most, where=where, ascii_json=True)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        most, where = self._most()
        body = body_json(encode_request(request).body, ascii_json=True)
        return limits_of(request, body_bytes=byte_size(body), max_bytes=most, where=where)

    def _most(self) -> tuple[int, str]:
        # A line of a batch is a request as Azure takes one, within its input file (less its custom id and url).
        configured = self.settings.max_batch_bytes
        most = min(MAX_REQUEST_BYTES, MAX_BATCH_BYTES, configured) - _LINE_ROOM
        return most, "Azure OpenAI" if configured >= MAX_REQUEST_BYTES else "a batch (batch.max_batch_bytes)"

    async def aclose(self) -> None:
        await self.backend.aclose()
