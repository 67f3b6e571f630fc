"""`GeminiBatchProvider`: answers requests through the Gemini API's batch mode (`batchGenerateContent`), at half the
live price, with the official google-genai SDK.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the job's display name, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
batch per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from lowtide import ActorRequest, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import BatchCodec, InputLimits, OneBatchCalls, Wire, credential_of
from lowtide.providers.gemini.batch_backend import GeminiBatchBackend
from lowtide.providers.gemini.batch_codec import GeminiBatchCodec
from lowtide.providers.gemini.checks import Checks
from lowtide.providers.gemini.client import BASE_URL_ENV, build_client
from lowtide.providers.gemini.options import GEN_AI_PROVIDER_NAME, options_in

if TYPE_CHECKING:
    from lowtide.providers.gemini.job_webhooks import JobTokens
    from lowtide.providers.gemini.webhooks import GeminiWebhooks
    from lowtide.webhooks.events import WebhookVerifier

__all__ = ["GOOGLE_BASE_URL", "GeminiBatchProvider"]

GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com"


class GeminiBatchProvider(OneBatchCalls[GeminiBatchBackend], Provider):
    """The Gemini API's batch mode: half the price of live calls, results within 48 hours."""

    name: ClassVar[str] = "gemini"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = GeminiBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        owned = build_client(options)
        self._checks = Checks(owned)
        self._http = owned.http
        self._clock = options.clock
        self.settings = options.batch
        base_url = options.base_url_from(BASE_URL_ENV) if options.client is None else None
        endpoint = (base_url or GOOGLE_BASE_URL).rstrip("/")
        if options.client is not None:
            endpoint = f"{endpoint}#client-{id(options.client)}"
        self.backend = GeminiBatchBackend(
            owned.client,
            endpoint=endpoint,
            credential=credential_of(owned.scope, owned=options.client is None, client=owned.client),
            clock=options.clock,
            settings=options.batch,
        )
        gemini = options_in(options.provider_options)
        if gemini.batch_inline_bytes is not None:
            self.backend.inline_bytes = gemini.batch_inline_bytes
        self.backend.webhook_url = gemini.batch_webhook_url
        self._jwks_url = gemini.webhook_jwks_url
        self._webhooks: GeminiWebhooks | None = None

    def webhook_verifier(self) -> WebhookVerifier:
        """The Gemini API's batch webhooks to a project's endpoint, verified with `$GEMINI_WEBHOOK_SECRET`, and to the
        jobs' own URL (`batch_webhook_url`), verified against the JWKS (`webhooks.py`, `job_webhooks.py`)."""
        if self._webhooks is None:
            from lowtide.providers.gemini.webhooks import GeminiWebhooks

            self._webhooks = GeminiWebhooks(jobs=self._job_tokens())
        return self._webhooks

    def _job_tokens(self) -> JobTokens | None:
        url = self.backend.webhook_url
        if url is None:
            return None
        from lowtide.providers.gemini.job_webhooks import GOOGLE_JWKS_URL, JWKS_URL_ENV, JobTokens

        jwks = self._jwks_url or os.environ.get(JWKS_URL_ENV) or GOOGLE_JWKS_URL
        return JobTokens(jwks, url)

    async def preflight(self, request: ActorRequest) -> None:
        """As in live mode: the model looked up, `max_tokens` and the input within its limits, before anything is
        recorded or sent."""
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    def serving_wires(self) -> Sequence[Wire]:
        """`lowtide serve` speaks Gemini's `generateContent` for a Gemini batch actor."""
        from lowtide.providers.gemini.serving import GEMINI_WIRES  # only a server needs it

        return GEMINI_WIRES

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self._http is not None:
            await self._http.aclose()
