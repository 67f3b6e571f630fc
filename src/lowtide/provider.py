"""The interface every provider implements.

A provider answers `ActorRequest`s with `ActorResponse`s in one mode (live or batch). `complete_many` is the
batch-native entry: it returns one outcome per request, in order, where a failed request is its own `ActorError`
and never fails its neighbours. What a provider can do is said where it is checked: the modes it is registered for,
the parameters its check accepts (`ProviderRegistry.register_parameters`), and what its `preflight` refuses.
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from lowtide.config.endpoints import check_api_key, check_base_url
from lowtide.config.settings import BatchSettings
from lowtide.core.clock import Clock, SystemClock
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import ActorError
from lowtide.live.reports import LimitListener
from lowtide.messages.answers import Outcome
from lowtide.messages.limits import NO_LIMITS, InputLimits
from lowtide.routing.venues import DEFAULT_VENUES, Venue
from lowtide.types import ActorRequest, ActorResponse

if TYPE_CHECKING:
    from lowtide.batching.backend import BatchBackend, BatchCodec
    from lowtide.messages.wire import Wire
    from lowtide.streaming import StreamEvent
    from lowtide.webhooks.events import WebhookVerifier

__all__ = ["Outcome", "Provider", "ProviderOptions"]


@dataclass(frozen=True)
class ProviderOptions:
    """What a provider factory needs to build a provider; everything at the edges is injectable.

    `client` is a ready SDK client (tests pass the emulator's); otherwise the provider builds one from
    `api_key` (or the environment variable `api_key_env` names), `base_url` and `http_client`.
    """

    api_key: str | None = None
    api_key_env: str | None = None
    """The environment variable holding the key; None: the provider's own (`ANTHROPIC_API_KEY`, ...)."""
    base_url: str | None = None
    http_client: object = None
    client: object = None
    clock: Clock = field(default_factory=SystemClock)
    batch: BatchSettings = field(default_factory=BatchSettings)
    timeout: float = 600.0
    max_retries: int = 2
    provider_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict[str, Mapping[str, object]])
    """The actor's `provider_options`: a provider reads its own section for settings of the provider itself (how a
    batch is sent, say), besides the per-call ones each request carries."""

    def api_key_from(self, default_env: str) -> tuple[str | None, str]:
        """The key given, or else read from `api_key_env` (by default the provider's `default_env`), and the
        variable it was looked for in, for an error that says which to set. A key that could not travel in a header
        as it is (whitespace, a control character) is a `ConfigurationError` naming where it came from."""
        variable = self.api_key_env or default_env
        if self.api_key:
            return check_api_key(self.api_key, source="the api_key argument"), variable
        key = os.environ.get(variable)
        return (check_api_key(key, source=f"${variable}") if key else key), variable

    def base_url_from(self, default_env: str) -> str | None:
        """The base URL given, or else the one in `default_env` (the provider's own variable, which its SDK would
        read), checked: a malformed one is a `ConfigurationError` now, not a connection error after retries. None:
        neither is set, and the SDK's default address applies."""
        if self.base_url is not None:
            return check_base_url(self.base_url)
        from_env = os.environ.get(default_env)
        return None if from_env is None else check_base_url(from_env, source=f"${default_env}")

    def sdk_settings(self, api_key: str, base_url: str | None) -> dict[str, object]:
        """The arguments every official SDK client takes alike: key, base URL, HTTP client, timeout, retries."""
        return {
            "api_key": api_key,
            "base_url": base_url,
            "http_client": self.http_client,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
        }


class Provider(ABC):
    """A way to get model calls answered: one provider name, one mode."""

    name: ClassVar[str]
    mode: ClassVar[BatchProcessingMode]
    codec: ClassVar[BatchCodec | None] = None
    """A batch provider's requests and results as pure functions (no client, no key): what a dry run needs."""
    gen_ai_provider_name: ClassVar[str | None] = None
    """Its `gen_ai.provider.name` on spans and metrics: the OpenTelemetry GenAI conventions' well-known value for
    its API (`gcp.gemini`, `aws.bedrock`, ...), where they name one. None: its `name` (`telemetry_name`)."""

    def telemetry_name(self) -> str:
        """`gen_ai.provider.name` of this provider's calls: its `gen_ai_provider_name`, else its `name`."""
        return self.gen_ai_provider_name or self.name

    async def preflight(self, request: ActorRequest) -> None:
        """Refuse `request`, with a `ConfigurationError` naming the field, if this provider's API would refuse it
        (an unknown model, a `max_tokens` beyond the model's limit, a tool it would not take, a body over its size
        limit, more input tokens than the model's context window), before anything is recorded or sent. It may ask
        the API, as long as it remembers the answer; the default checks nothing."""
        return

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        """The limits of requests like `request` (its model, settings and tools; any text): the bytes one request's
        body may hold in this mode, and the model's context window. Asked once per distinct model, settings and
        tools by the paths that send many requests (bulk runs, prompt-only calls), after `preflight` passed for
        one of them; each request is then measured against them without asking the API, and only one that may not
        fit is given to `preflight` whole. The default knows no limits."""
        return NO_LIMITS

    @abstractmethod
    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        """Answer one request, raising its `ActorError` if it fails."""

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """Answer one request as its API streams it: `TextDelta`s and `ToolCallDelta`s as they arrive, then the
        finished `ActorResponse` (the one `complete` would return), last; its `ActorError` if it fails. A stream that
        ends before its answer is whole raises (`StreamInterruptedError` once pieces were given), never a short
        answer. The default, for a provider without a streaming API: `complete`'s answer, as the one event."""
        yield await self.complete(request)

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
        """Answer several requests; each outcome is a response or that request's own error."""

        async def one(request: ActorRequest) -> Outcome:
            try:
                return await self.complete(request)
            except ActorError as exc:
                return exc

        return list(await asyncio.gather(*(one(r) for r in requests)))

    def quota_scope(self) -> str:
        """Which live rate limits this provider's calls count against: every provider with the same scope in a
        process shares one quota. A provider that can tell its credentials and endpoint apart names them (as a
        digest, never the key); by default each provider instance is a scope of its own."""
        return f"{self.name}:instance-{id(self)}"

    def watch_limits(self, listener: LimitListener) -> None:
        """Have `listener` told what the API's rate-limit headers say after every live call (and 429); a provider
        that reads no headers never tells, and the live limiter keeps to the configured limits."""
        return

    def batch_backend(self) -> BatchBackend | None:
        """The provider's batch API as lowtide's durable engine drives it, if it has one.

        A batch provider that returns one gets the ledger, keys, coalescing, exactly-once create, park and resume,
        budgets and bulk runs; one that returns None is called through `complete_many`, one batch per call, with
        none of those.
        """
        return None

    def venues(self) -> Sequence[Venue]:
        """The ways this provider's calls can be sent, with their price against the live price and their pace, for a
        deadline's route (`lowtide.routing`): by default its batch API (where it has a backend) and its live API. A
        provider with a cheaper, slower live tier declares it here (OpenAI: `service_tier="flex"`)."""
        return DEFAULT_VENUES

    def serving_wires(self) -> Sequence[Wire]:
        """The APIs `lowtide serve` speaks for an actor of this provider, each on its own path (the Messages API for
        Anthropic; Chat Completions and Responses for OpenAI). None by default: such an actor cannot be served."""
        return ()

    def webhook_verifier(self) -> WebhookVerifier | None:
        """How this provider's webhooks about its batches are verified and read (`lowtide webhooks`, `lowtide serve
        --webhooks`), if it sends any: its own signatures, secret and event shapes. None by default. A provider that
        sends them but whose secret is not configured raises `ConfigurationError` saying what to set."""
        return None

    async def aclose(self) -> None:
        """Release connections the provider opened itself."""
        return
