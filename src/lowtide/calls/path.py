"""One path through an actor's calls (`run`, `submit`, `result`): the prompt-only batch call, a budgeted one, and the
general call (live, a provider's own `complete`, durable batch). `calls.traced` wraps it in spans, same face."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pydantic import BaseModel

from lowtide.batching.backend import BatchBackend
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.batching.keys import derive_key
from lowtide.batching.tickets import Ticket
from lowtide.calls.arguments import check_call, check_key, check_prompt, check_response_model
from lowtide.calls.checks import durable_call, refuse_over
from lowtide.calls.face import ActorFace
from lowtide.calls.owners import owned_elsewhere
from lowtide.calls.prompt_calls import DurableCall, PromptCalls
from lowtide.calls.providers import ActorProviders
from lowtide.config.actors import BatchProcessingMode
from lowtide.core.hosts import host_id
from lowtide.ledger.records import RequestRecord
from lowtide.provider import Provider
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["ActorCalls", "CallingActor", "Calls"]

Mode = BatchProcessingMode | str | None


class Calls(Protocol):
    """An actor's calls, past their public signatures (`Actor.run`, `submit`, `result`): `ActorCalls`, or, telemetry on,
    `TracedCalls` (`calls.traced`) around it, each call inside its span."""

    async def run(
        self,
        prompt: str | None,
        response_model: type[BaseModel] | None,
        mode: Mode,
        key: str | None,
        max_cost_usd: float | None,
        arguments: dict[str, Any],
    ) -> ActorResponse[object]:
        """Answer one call (`Actor.run`)."""
        ...

    async def submit(
        self, prompt: str | None, key: str | None, max_cost_usd: float | None, arguments: dict[str, Any]
    ) -> Ticket:
        """Park a batch-mode call (`Actor.submit`)."""
        ...

    async def result(
        self, key: str, response_model: type[BaseModel] | None, known: RequestRecord | None = None
    ) -> ActorResponse[object]:
        """A parked call's answer (`Actor.result`); `known`, its record as the caller just read it."""
        ...

    async def parked_trace(self, key: str) -> str | None:
        """The trace context the call `key` was parked with (W3C, JSON), if the ledger holds one."""
        ...


class CallingActor(ActorFace, Protocol):
    """What an actor's calls need of it: its face, and its batch backend (refused when it has none)."""

    def batch_backend(self, capability: str = "parking (durable batch mode)") -> BatchBackend: ...


class ActorCalls:
    """The one path of an actor's calls, untraced: each call's steps, in order, with nothing around them."""

    def __init__(
        self, actor: CallingActor, providers: ActorProviders, engine: Callable[[BatchBackend], BatchEngine]
    ) -> None:
        self._actor = actor
        self._providers = providers
        self._engine = engine
        self.prompts = PromptCalls(actor, engine, self._durable, self._wait)

    async def run(
        self,
        prompt: str | None,
        response_model: type[BaseModel] | None,
        mode: Mode,
        key: str | None,
        max_cost_usd: float | None,
        arguments: dict[str, Any],
    ) -> ActorResponse[object]:
        if not self._providers.built(mode):  # the first call: its provider's SDK loaded off the event loop
            await self._actor.ready(mode)
        if key is not None or max_cost_usd is not None:
            check_call(key, max_cost_usd)
        if response_model is not None:
            check_response_model(response_model)
        if not arguments and isinstance(prompt, str):
            check_prompt(prompt)
            path = self.prompts.path(response_model, mode)
            if path is not None:
                if path.direct and max_cost_usd is None and not owned_elsewhere():
                    # The common batch call (a prompt, nothing to budget): thousands may wait at once, so this
                    # coroutine, the only frame a waiting call keeps, waits on the engine's future itself, with as
                    # few locals as it can.
                    engine, outcome = (
                        self.prompts.claim_checked(path, prompt, key)
                        if path.checked
                        else await self.prompts.claim(path, prompt, key, mode)
                    )
                    del path
                    return engine.deliver(await outcome, response_model)
                if not path.checked:
                    await self.prompts.check(path, prompt, key, mode)
                return await self.prompts.budgeted(path, prompt, response_model, key, max_cost_usd)
        return await self._request(prompt, response_model, mode, key, max_cost_usd, arguments)

    async def _request(
        self,
        prompt: str | None,
        response_model: type[BaseModel] | None,
        mode: Mode,
        key: str | None,
        max_cost_usd: float | None,
        arguments: dict[str, Any],
    ) -> ActorResponse[object]:
        """Any other call: its request built, then answered in its provider's way."""
        request = self._actor.request(prompt, response_model=response_model, **arguments)
        provider = self._actor.provider(mode)
        backend = provider.batch_backend()
        if backend is None:
            await provider.preflight(request)
            if max_cost_usd is not None:
                # Calls outside the ledger: only the call's own budget applies, at the mode's prices.
                refuse_over(self._actor.configuration, request, max_cost_usd, mode=provider.mode)
            if provider.mode is BatchProcessingMode.LIVE:
                return await self._providers.live(provider).call(request)
            return await provider.complete(request)
        params = backend.codec.encode_request(request)
        call = await self._durable(
            backend,
            params,
            key=key or request.custom_id,
            max_cost_usd=max_cost_usd,
            checked=(provider, request),
        )
        waiting = self._wait(call, response_model)
        del request, params  # only the engine holds the params now, and only until they are queued
        return await waiting

    async def submit(
        self, prompt: str | None, key: str | None, max_cost_usd: float | None, arguments: dict[str, Any]
    ) -> Ticket:
        check_call(key, max_cost_usd)
        if not self._providers.built(BatchProcessingMode.BATCH):  # the first call: its SDK loaded off the event loop
            await self._actor.ready(BatchProcessingMode.BATCH)
        if not arguments and isinstance(prompt, str) and max_cost_usd is None and not owned_elsewhere():
            check_prompt(prompt)
            path = self.prompts.path(None, BatchProcessingMode.BATCH)
            if path is not None and path.direct:  # a prompt alone, nothing to budget: from the actor's template
                return await self.prompts.submit(path, prompt, key)
        request = self._actor.request(prompt, **arguments)
        backend = self._actor.batch_backend()
        call = await self._durable(
            backend,
            backend.codec.encode_request(request),
            key=key or request.custom_id,
            max_cost_usd=max_cost_usd,
            checked=(self._actor.provider(BatchProcessingMode.BATCH), request),
        )
        return await call.engine.submit(call.params, key=call.key, actor=self._actor.name, worst_case_usd=call.estimate)

    async def result(
        self, key: str, response_model: type[BaseModel] | None, known: RequestRecord | None = None
    ) -> ActorResponse[object]:
        check_response_model(response_model)
        return await (await self._parked()).attach(check_key(key), response_model, known=known)

    async def parked_trace(self, key: str) -> str | None:
        return (await (await self._parked()).ledger.traces_of([check_key(key)])).get(key)

    async def _parked(self) -> BatchEngine:
        """The engine of parked calls: the batch provider's (loaded off the event loop the first time)."""
        await self._actor.ready(BatchProcessingMode.BATCH)
        return self._engine(self._actor.batch_backend())

    async def _durable(
        self,
        backend: BatchBackend,
        params: dict[str, object],
        *,
        key: str | None,
        max_cost_usd: float | None,
        checked: tuple[Provider, ActorRequest] | None,
    ) -> DurableCall:
        """The engine, key and worst-case cost of a batch-mode call with `params`, after its checks (`call_checks`)."""
        key = key or derive_key(backend.name, params)
        return await durable_call(
            self._actor.configuration,
            self._engine(backend),
            params,
            key=key,
            max_cost_usd=max_cost_usd,
            checked=checked,
            now=self._actor.clock.now,
        )

    def _wait(self, call: DurableCall, response_model: type[BaseModel] | None) -> Awaitable[ActorResponse[object]]:
        waiting = call.engine.run(
            call.params,
            key=call.key,
            actor=self._actor.name,
            response_model=response_model,
            worst_case_usd=call.estimate,
        )
        return self._releasing(call, waiting) if call.owned else waiting

    async def _releasing(self, call: DurableCall, waiting: Awaitable[ActorResponse[object]]) -> ActorResponse[object]:
        """An owned call's answer; should it fail before the ledger recorded its request (its claim not written),
        its reservation is let go, since nothing of it can be billed."""
        try:
            return await waiting
        except BaseException:
            if not await call.engine.knows(call.key):
                await call.engine.ledger.spending.release(call.key, at=self._actor.clock.now(), host=host_id())
            raise
