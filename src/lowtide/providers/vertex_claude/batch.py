"""`VertexClaudeBatchProvider`: answers requests from Claude models through Vertex AI's batch prediction jobs, at
Vertex AI's Claude batch price, with google-genai (`vertexai=True`, its job routes) and the actor's Cloud Storage
bucket; the pre-send checks are the live provider's, through the anthropic SDK's `AsyncAnthropicVertex`.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the job's display name, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
job per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from typing import ClassVar

from lowtide import ActorRequest, BatchProcessingMode, ConfigurationError, Provider, ProviderOptions
from lowtide.messages.limits import body_json, byte_size
from lowtide.providers import BatchCodec, InputLimits, OneBatchCalls
from lowtide.providers.anthropic.mapping import to_message_params
from lowtide.providers.vertex.batch import job_backend
from lowtide.providers.vertex.client import build_client as build_genai_client
from lowtide.providers.vertex_claude.batch_backend import VertexClaudeBatchBackend
from lowtide.providers.vertex_claude.batch_codec import VertexClaudeBatchCodec
from lowtide.providers.vertex_claude.checks import MAX_REQUEST_BYTES, VertexClaudeChecks
from lowtide.providers.vertex_claude.client import build_client
from lowtide.providers.vertex_claude.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME

__all__ = ["VertexClaudeBatchProvider"]


class VertexClaudeBatchProvider(OneBatchCalls[VertexClaudeBatchBackend], Provider):
    """Vertex AI's batch prediction for Claude models."""

    name: ClassVar[str] = PROVIDER_NAME
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = VertexClaudeBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        if options.client is not None:
            raise ConfigurationError(
                f"provider {PROVIDER_NAME} in batch mode builds its own clients (anthropic's AsyncAnthropicVertex, "
                "google-genai and google-cloud-storage): give no client, and the project, location and bucket in "
                f"provider_options.{PROVIDER_NAME}.",
                field="client",
            )
        owned, place = build_genai_client(options, PROVIDER_NAME)
        assert place is not None  # no client was given: one was built, for the place read
        self.backend = job_backend(VertexClaudeBatchBackend, owned, place, options, PROVIDER_NAME)
        self._claude, self._owns_claude, _ = build_client(options)
        self._checks = VertexClaudeChecks(self._claude, max_bytes=MAX_REQUEST_BYTES, where="a Vertex AI batch job")
        self._http = owned.http
        self._clock = options.clock
        self.settings = options.batch

    async def preflight(self, request: ActorRequest) -> None:
        """As in live mode: the model looked up, the input within its limits, before anything is recorded or sent."""
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return self._checks.limits_of(request, byte_size(body_json(to_message_params(request), ascii_json=True)))

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self._owns_claude:
            await self._claude.close()
        if self._http is not None:
            await self._http.aclose()
