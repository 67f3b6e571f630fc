"""`BedrockBatchProvider`: answers requests through Amazon Bedrock batch inference (records in S3, a
`ModelInvocationJob`, the output read back from S3), at half the on-demand price, with boto3.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
job's `clientRequestToken`, park and resume, budgets, bulk runs). Called directly, `complete_many` is one job per
model, outside the ledger: nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from typing import ClassVar

from lowtide import (
    ActorRequest,
    BatchProcessingMode,
    ConfigurationError,
    Provider,
    ProviderOptions,
)
from lowtide.providers import BatchCodec, OneBatchCalls
from lowtide.providers.bedrock.batch_backend import BedrockBatchBackend
from lowtide.providers.bedrock.batch_codec import BedrockBatchCodec
from lowtide.providers.bedrock.client import build_clients
from lowtide.providers.bedrock.models import check_images, check_model
from lowtide.providers.bedrock.options import GEN_AI_PROVIDER_NAME, options_in, options_of
from lowtide.providers.bedrock.requests import converse_body

__all__ = ["BedrockBatchProvider"]


class BedrockBatchProvider(OneBatchCalls[BedrockBatchBackend], Provider):
    """Amazon Bedrock batch inference: half the on-demand price, results within the job's timeout (24 hours)."""

    name: ClassVar[str] = "bedrock"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = BedrockBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        self._clock = options.clock
        self.settings = options.batch
        self._options = options_in(options.provider_options)
        self._clients = build_clients(options)
        self.backend = BedrockBatchBackend(self._clients, self._options, clock=options.clock, settings=options.batch)

    async def preflight(self, request: ActorRequest) -> None:
        """The actor's bucket and role, the request's Bedrock settings and its Converse body, checked before anything
        is recorded or sent. (`lowtide collect` and `cancel` build this provider without them: they create nothing.)"""
        for name, value in (("s3_bucket", self._options.s3_bucket), ("role_arn", self._options.role_arn)):
            if not value:
                what = (
                    "the S3 bucket its records and outputs go to."
                    if name == "s3_bucket"
                    else "the service role (arn:aws:iam::<account>:role/<name>) Bedrock reads and writes them with."
                )
                raise ConfigurationError(
                    f"Bedrock batch inference needs provider_options.bedrock.{name}: {what}",
                    field=f"provider_options.bedrock.{name}",
                )
        options_of(request)
        converse_body(request)
        await check_model(self._clients, request.model)
        await check_images(self._clients, request)

    async def aclose(self) -> None:
        await self.backend.aclose()
