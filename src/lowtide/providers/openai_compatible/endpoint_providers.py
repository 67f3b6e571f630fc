"""`provider: openai_compatible`'s live and batch providers: the openai SDK pointed at the configured base URL
(`endpoint.EndpointOptions`), OpenAI's batch backend with what the endpoint lacks taken into account.

Exactly-once: where the endpoint keeps batch metadata, a create whose outcome is unknown is found by the intent id it
carries, as OpenAI's; where it does not (`lacks: [metadata]`), by its input file: uploaded once per intent as
`lowtide-<intent id>.jsonl` and recorded as the create's step before the batch is created, so the batch made from
that file (the files and batches lists read for it) is the intent's. Without a cancel, a cancel is refused before
anything is sent; without a models list, model names are not checked (unless `models` lists them)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, cast

from openai import AsyncOpenAI
from openai.types import Batch

from lowtide import BatchProcessingMode, InvalidRequestError, ProviderOptions, RateLimitError, Usage
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.providers import RemoteBatch
from lowtide.providers.openai.batch_backend import BatchEndpoint, OpenAIBatchBackend
from lowtide.providers.openai.errors import SDK_ERRORS
from lowtide.providers.openai.remote import INTENT_KEY, remote_batch
from lowtide.providers.openai_compatible.batch import ChatBatchCodec, ChatBatchProvider
from lowtide.providers.openai_compatible.chat import CHAT_URL
from lowtide.providers.openai_compatible.endpoint import ENDPOINT, EndpointOptions, dialect_of, price_of
from lowtide.providers.openai_compatible.live import ChatProvider
from lowtide.providers.openai_compatible.sdk import Sdk

__all__ = ["EndpointBatchBackend", "EndpointBatchProvider", "EndpointCodec", "EndpointProvider"]

log = logging.getLogger(__name__)

# The low end of a dry run's estimate reads input at about four bytes a token; the budget's high end at three.
_LOW_INPUT = Decimal(3) / Decimal(4)


async def _listing(client: AsyncOpenAI) -> list[str]:
    return [model.id async for model in client.models.list()]


async def _lookup(client: AsyncOpenAI, name: str) -> object:
    return await client.models.retrieve(name)


def _sdk(options: EndpointOptions) -> Sdk[AsyncOpenAI]:
    """The openai SDK for this endpoint: its models endpoint asked for a model unless `models` lists them (checked
    as the actor loads) or the endpoint has none."""
    unchecked = options.models is not None or "models" in options.lacks
    return Sdk(client=AsyncOpenAI, errors=SDK_ERRORS, listing=_listing, lookup=_lookup, unchecked=lambda _: unchecked)


def _settings(options: ProviderOptions) -> tuple[EndpointOptions, ProviderOptions]:
    """The endpoint's settings, and the provider options with its base URL (the actor's `base_url` wins)."""
    section = dict(options.provider_options.get(ENDPOINT.name) or {})
    if "base_url" not in section and options.base_url is not None:
        # A ledger's batches reached from the endpoint it recorded alone (`lowtide cancel`, `lowtide collect`).
        section["base_url"] = options.base_url
    endpoint: EndpointOptions = ENDPOINT.options_in({ENDPOINT.name: section})
    if options.base_url is None:
        options = dataclasses.replace(options, base_url=endpoint.base_url)
    return endpoint, options


class EndpointCodec(ChatBatchCodec):
    """The endpoint's batch requests and results, priced at its configured prices (unknown without one)."""

    def __init__(self, options: EndpointOptions) -> None:
        super().__init__(dialect_of(options))
        self.options = options

    def worst_case_usd(
        self, params: Mapping[str, object], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        inputs, outputs = self.token_bounds(params)
        cost = price_of(self.options, Usage(input_tokens=inputs, output_tokens=outputs), self.model_of(params), mode)
        return cost.total_usd if cost is not None else None

    def cost_range(self, params: Mapping[str, object]) -> tuple[Decimal, Decimal] | None:
        high = self.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)
        inputs, _ = self.token_bounds(params)
        low = price_of(
            self.options,
            Usage(input_tokens=max(1, int(inputs * _LOW_INPUT))),
            self.model_of(params),
            BatchProcessingMode.BATCH,
        )
        return None if high is None or low is None else (low.total_usd, high)


class EndpointBatchBackend(OpenAIBatchBackend):
    """OpenAI's Batch API at the endpoint, without the parts it `lacks`."""

    endpoints = (CHAT_URL,)

    def __init__(
        self, client: AsyncOpenAI, *, owns_client: bool, clock: Clock, settings: BatchSettings, options: EndpointOptions
    ) -> None:
        super().__init__(client, owns_client=owns_client, clock=clock, settings=settings)
        self.codec = EndpointCodec(options)
        self.owner = options.owner
        self.options = options
        self._uploaded: dict[str, str] = {}
        """The input file each intent of this process uploaded, by intent id."""

    async def _upload(self, body: bytes, intent_id: str, count: int) -> str:
        file_id = await super()._upload(body, intent_id, count)
        self._uploaded[intent_id] = file_id
        return file_id

    async def _create_at(self, file_id: str, url: str, count: int, *, intent_id: str) -> RemoteBatch:
        kept = "metadata" not in self.options.lacks

        async def create() -> Batch:
            return await self._client.batches.create(
                input_file_id=file_id,
                endpoint=cast("BatchEndpoint", url),
                completion_window=cast("Any", self.options.completion_window),
                metadata={INTENT_KEY: intent_id} if kept else None,
            )

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        batch = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted %s with %d request(s).", self._named(batch.id), count)
        return remote_batch(batch)

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """By the intent id in its metadata; where the endpoint keeps none, the batch made from the intent's input
        file (found by its name, or as this process uploaded it)."""
        if "metadata" not in self.options.lacks:
            return await super().find_by_intent(intent_id, created_after=created_after)
        name = f"lowtide-{intent_id}.jsonl"
        files = await self._retrying(lambda: self._client.files.list(purpose="batch"))
        ids = {stored.id for stored in files.data if stored.filename == name}
        if intent_id in self._uploaded:
            ids.add(self._uploaded[intent_id])
        for batch in await self.recent(created_after=created_after):
            handle = batch.handle
            if isinstance(handle, Batch) and handle.input_file_id in ids:
                return dataclasses.replace(batch, intent_id=intent_id)
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        if "cancel" in self.options.lacks:
            raise InvalidRequestError(
                f"The {self.owner} at {self.options.base_url} cannot cancel a batch (provider_options."
                f"openai_compatible.lacks names cancel): {self._named(batch_id)} runs until it ends."
            )
        return await super().cancel(batch_id)

    def _named(self, batch_id: str) -> str:
        return f"{self.owner} batch {batch_id}"


class EndpointProvider(ChatProvider[AsyncOpenAI]):
    """The endpoint's live Chat Completions through the openai SDK."""

    dialect = ENDPOINT

    def __init__(self, options: ProviderOptions) -> None:
        endpoint, options = _settings(options)
        self.dialect = dialect_of(endpoint)
        self.sdk = _sdk(endpoint)
        super().__init__(options)


class EndpointBatchProvider(ChatBatchProvider[AsyncOpenAI]):
    """The endpoint's Batch API through the openai SDK, at its configured batch prices."""

    dialect = ENDPOINT

    def __init__(self, options: ProviderOptions) -> None:
        endpoint, options = _settings(options)
        self.endpoint_options = endpoint
        self.dialect = dialect_of(endpoint)
        self.sdk = _sdk(endpoint)
        super().__init__(options)

    def make_backend(self, client: AsyncOpenAI, owns_client: bool, options: ProviderOptions) -> EndpointBatchBackend:
        return EndpointBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, options=self.endpoint_options
        )
