"""`VertexBatchProvider`: answers requests from Gemini models through Vertex AI's batch prediction jobs, at half the
live price, with google-genai (`vertexai=True`) and the actor's Cloud Storage bucket.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the job's display name, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
job per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from lowtide import ActorRequest, BatchProcessingMode, ConfigurationError, Provider, ProviderOptions
from lowtide.providers import BatchCodec, InputLimits, OneBatchCalls, credential_of
from lowtide.providers.gemini.checks import Checks
from lowtide.providers.gemini.client import OwnedClient
from lowtide.providers.vertex.batch_backend import VertexBatchBackend
from lowtide.providers.vertex.batch_codec import VertexBatchCodec
from lowtide.providers.vertex.client import Place, build_client
from lowtide.providers.vertex.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.vertex.storage import BatchFiles

__all__ = ["VertexBatchProvider", "job_backend"]

B = TypeVar("B", bound=VertexBatchBackend)


def job_backend(backend: type[B], owned: OwnedClient, place: Place, options: ProviderOptions, name: str) -> B:
    """A batch backend of `backend`'s kind for the actor of provider `name` at `place`: its jobs' files in the actor's
    bucket (a `ConfigurationError` naming `provider_options.<name>.bucket` when none is given), its jobs under the
    place's project and location."""
    bucket = place.options.bucket
    if bucket is None:
        raise ConfigurationError(
            f"provider_options.{name}.bucket is required in batch mode: a Vertex AI batch job reads its requests "
            "from Cloud Storage and writes its answers there.",
            field=f"provider_options.{name}.bucket",
        )
    return backend(
        owned.client,
        BatchFiles(place, anonymous=place.anonymous, timeout=options.timeout),
        folder=f"gs://{bucket}/{place.options.key_prefix.strip('/')}",
        endpoint=f"{owned.endpoint}/projects/{place.project}/locations/{place.location}",
        credential=credential_of(owned.scope, owned=True, client=owned.client),
        clock=options.clock,
        settings=options.batch,
    )


class VertexBatchProvider(OneBatchCalls[VertexBatchBackend], Provider):
    """Vertex AI's batch prediction for Gemini models: half the price of live calls."""

    name: ClassVar[str] = PROVIDER_NAME
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = VertexBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        owned, place = build_client(options)
        if place is None:
            raise ConfigurationError(
                "provider vertex in batch mode builds its own clients (google-genai and google-cloud-storage): give "
                "no client, and the project, location and bucket in provider_options.vertex.",
                field="client",
            )
        self.backend = job_backend(VertexBatchBackend, owned, place, options, PROVIDER_NAME)
        self._checks = Checks(owned)
        self._http = owned.http
        self._clock = options.clock
        self.settings = options.batch

    async def preflight(self, request: ActorRequest) -> None:
        """As in live mode: the model looked up, the input within its limits, before anything is recorded or sent."""
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self._http is not None:
            await self._http.aclose()
