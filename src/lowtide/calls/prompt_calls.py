"""An actor's batch-mode calls that give only a prompt: the common call, which thousands make at once.

Everything but the prompt comes from the configuration, so the params are built, checked and encoded once per
backend and response model (`PromptTemplate`) and each call adds only its prompt's JSON. The provider's pre-send
checks run once, for the first call the ledger does not know; the calls that arrive meanwhile wait for them and are
claimed together when they pass. Each call's params are measured against what the provider takes of one request
(`Provider.input_limits`, found with the checks): one that may not fit (a prompt near the model's context window,
or over the API's size) is checked whole before it is claimed (`Provider.preflight`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel

from lowtide.batching.backend import BatchBackend, Settled
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.batching.keys import derive_key
from lowtide.batching.policy import key_twice, other_params, other_request
from lowtide.batching.tickets import Ticket
from lowtide.calls.face import ActorFace
from lowtide.calls.templates import Claim, PromptTemplate
from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.ledger.store import stored_json
from lowtide.messages.limits import bounded_by_bytes
from lowtide.provider import Provider
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["DurableCall", "PromptCalls", "PromptPath"]


@dataclass(frozen=True)
class DurableCall:
    """A batch-mode call past its checks: its engine, params, key and worst case."""

    engine: BatchEngine
    params: dict[str, Any]
    key: str
    estimate: Decimal | None
    owned: bool = False
    """Its worst case reserved against its owner's caps (`calls.owners`): let go should it fail before its claim."""


class PromptPath(NamedTuple):
    """How an actor's calls that give only a prompt go in durable batch mode (`PromptCalls.path`): their batch backend
    and params template, and whether each is claimed straight from its params' JSON."""

    backend: BatchBackend
    template: PromptTemplate
    direct: bool
    """Claimed as it comes, its params the template's JSON around the prompt's, with no budget to check first: the
    template nests the prompt as JSON (`PromptTemplate.around`) and the actor has no `max_cost_usd`. A call that brings
    a budget of its own is checked against it first (`PromptCalls.budgeted`)."""

    @property
    def checked(self) -> bool:
        """The template passed the provider's pre-send checks: its calls need not wait for them."""
        return self.template.checked


class Durable(Protocol):
    """The actor's checks of a batch-mode call with `params` (pre-send checks, budgets), giving the call to wait on."""

    def __call__(
        self,
        backend: BatchBackend,
        params: dict[str, Any],
        *,
        key: str | None,
        max_cost_usd: float | None,
        checked: tuple[Provider, ActorRequest] | None,
    ) -> Awaitable[DurableCall]: ...


Wait = Callable[[DurableCall, type[BaseModel] | None], Awaitable[ActorResponse[object]]]
"""The actor's wait for a checked call's answer."""


class PromptCalls:
    """The batch path of one actor's calls that give only a prompt (`Actor.run(prompt)` in durable batch mode)."""

    def __init__(
        self,
        actor: ActorFace,
        engine: Callable[[BatchBackend], BatchEngine],
        durable: Durable,
        wait: Wait,
    ) -> None:
        self._actor = actor
        self._engine = engine
        self._durable = durable
        self._wait = wait
        self._templates: dict[tuple[BatchBackend, type[BaseModel] | None], PromptTemplate] = {}
        self._paths: dict[tuple[BatchProcessingMode | str | None, type[BaseModel] | None], PromptPath | None] = {}
        self._looked_up_for: tuple[ActorConfiguration, asyncio.AbstractEventLoop] | None = None
        """The configuration and event loop the two caches above were filled for (a loop has providers of its own):
        another one (or None) empties them."""
        self._alone: set[asyncio.Task[None]] = set()
        """Calls being checked whole before they are claimed."""

    def path(self, response_model: type[BaseModel] | None, mode: BatchProcessingMode | str | None) -> PromptPath | None:
        """The path of a call that gives only a prompt; None when not in durable batch mode. Looked up once per mode
        and response model, while the actor's configuration stays the same object (frozen: its budget too) and the
        event loop the same."""
        configuration = self._actor.configuration
        loop = asyncio.get_running_loop()
        looked_up_for = self._looked_up_for
        if looked_up_for is None or looked_up_for[0] is not configuration or looked_up_for[1] is not loop:
            self._looked_up_for, self._paths, self._templates = (configuration, loop), {}, {}
        looked_up = (mode, response_model)
        if looked_up in self._paths:
            return self._paths[looked_up]
        backend = self._actor.provider(mode).batch_backend()
        found = None
        if backend is not None:
            template = self._template(backend, response_model)
            unowned = configuration.team is None and configuration.project is None and not configuration.tags
            direct = template.around is not None and configuration.max_cost_usd is None and unowned
            found = PromptPath(backend, template, direct)
        self._paths[looked_up] = found
        return found

    def forget(self) -> None:
        """Forget the backends and templates looked up: the actor's providers were closed."""
        self._looked_up_for = None

    def claim_checked(
        self, path: PromptPath, prompt: str, key: str | None
    ) -> tuple[BatchEngine, asyncio.Future[Settled]]:
        """Claim a direct call of a checked template."""
        engine, params_json, key = self._prompt_call(path, prompt, key)
        return engine, self._claim(engine, path.template, params_json, key)

    def _claim(
        self,
        engine: BatchEngine,
        template: PromptTemplate,
        params_json: str,
        key: str,
        *,
        future: asyncio.Future[Settled] | None = None,
        arrived: float | None = None,
    ) -> asyncio.Future[Settled]:
        """Claim a call whose template passed its checks: at once when its params fit the provider's limits, else
        once it passed them whole (its outcome their error, if it does not)."""
        actor = self._actor.name
        if template.fits(params_json):
            return engine.claim(params_json, model=template.model, key=key, actor=actor, future=future, arrived=arrived)
        outcome = future if future is not None else asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(self._claim_alone(engine, template, params_json, key, outcome, arrived))
        self._alone.add(task)
        task.add_done_callback(self._alone.discard)
        return outcome

    async def _claim_alone(
        self,
        engine: BatchEngine,
        template: PromptTemplate,
        params_json: str,
        key: str,
        outcome: asyncio.Future[Settled],
        arrived: float | None,
    ) -> None:
        provider = template.provider
        assert provider is not None
        try:
            await provider.preflight(template.request_of(params_json))
        except Exception as exc:
            if not outcome.done():
                outcome.set_exception(exc)
            return
        if not outcome.done():
            engine.claim(
                params_json, model=template.model, key=key, actor=self._actor.name, future=outcome, arrived=arrived
            )

    def _prompt_call(self, path: PromptPath, prompt: str, key: str | None) -> tuple[BatchEngine, str, str]:
        """The engine, params JSON and key of a direct call: its params made as JSON straight from the template (the
        configuration's part was checked once; only the prompt is new)."""
        backend, around = path.backend, path.template.around
        assert around is not None
        params_json = around[0] + stored_json(prompt) + around[1]
        return self._engine(backend), params_json, key or derive_key(backend.name, params_json)

    async def claim(
        self, path: PromptPath, prompt: str, key: str | None, mode: BatchProcessingMode | str | None
    ) -> tuple[BatchEngine, asyncio.Future[Settled]]:
        """`claim_checked` of a template not checked yet: at once when the ledger knows the call already, else once
        the checks pass (`PromptTemplate.after_check`)."""
        backend, template = path.backend, path.template
        engine, params_json, key = self._prompt_call(path, prompt, key)
        if template.check_under_way():
            # The checks an earlier call started are under way: this call waits for them, with no read of its own.
            return engine, template.after_check(engine, params_json, key)
        arrival = engine.arrive()  # a window open now waits for this call while the ledger is read
        try:
            known = await engine.knows(key)
            if known:
                # A call the ledger already knows attaches to it unchecked (it was checked when it was first made).
                came = engine.arrival_of(arrival)
                actor = self._actor.name
                return engine, engine.claim(params_json, model=template.model, key=key, actor=actor, arrived=came)
            if template.checked:
                return engine, self._claim(engine, template, params_json, key, arrived=engine.arrival_of(arrival))
        finally:
            engine.arrived(arrival)
        if not template.check_under_way():
            self._start_check(backend, template, mode)
        return engine, template.after_check(engine, params_json, key)

    def _start_check(
        self, backend: BatchBackend, template: PromptTemplate, mode: BatchProcessingMode | str | None
    ) -> None:
        provider = template.provider = self._actor.provider(mode)
        template.start_check(self._checks(provider, template), self._claimer(backend, template))

    @staticmethod
    async def _checks(provider: Provider, template: PromptTemplate) -> None:
        """The provider's pre-send checks of the template, and its limits, which each call is measured against (a
        template whose content its bytes do not bound has none: each call is checked whole)."""
        await provider.preflight(template.request)
        template.limits = await provider.input_limits(template.request) if bounded_by_bytes(template.request) else None

    def _claimer(self, backend: BatchBackend, template: PromptTemplate) -> Claim:
        """How the calls that waited for a template's checks are claimed once they pass: the coalescing window they
        open counts from the first one's arrival (now), so that it runs while the checks do."""
        arrived = self._actor.clock.now()

        def claim(engine: BatchEngine, params_json: str, key: str, outcome: asyncio.Future[Settled]) -> None:
            self._claim(engine, template, params_json, key, future=outcome, arrived=arrived)

        return claim

    async def submit(self, path: PromptPath, prompt: str, key: str | None) -> Ticket:
        """`Actor.submit` of a prompt alone, nothing to budget (`path.direct`): its params made from the template as
        `run`'s are, the provider's pre-send checks made once for the template, not for each call (nor the ledger read
        to decide: a template that passed them and a call that fits its limits need neither). A key the ledger knows
        attaches unchecked (checked when it was first made). Returns once its batch exists, as `BatchEngine.submit`."""
        backend, template = path.backend, path.template
        engine, params_json, key = self._prompt_call(path, prompt, key)
        if not (template.checked and template.fits(params_json)) and not await engine.knows(key):
            await self._checked(backend, template, BatchProcessingMode.BATCH)
            if not template.fits(params_json):
                provider = template.provider
                assert provider is not None
                await provider.preflight(template.request_of(params_json))
        return await engine.submit(params_json, key=key, actor=self._actor.name, model=template.model)

    async def many(
        self,
        path: PromptPath,
        prompts: Sequence[str],
        named: Sequence[str | None],
        mode: BatchProcessingMode | str | None,
    ) -> tuple[BatchEngine, list[str], dict[str, asyncio.Future[Settled]]]:
        """`run_many` of prompts alone (checked), nothing to budget: each call's params made from the template as
        `run`'s are, the keys the ledger knows read together, the template's checks made once (and a call whose
        params may not fit checked whole), then all claimed in one moment. The engine, each prompt's key, and the
        future of each distinct key's outcome. Refused before anything is claimed: a key given to two different
        prompts, a key the ledger holds for another request, the provider's pre-send checks."""
        backend, template = path.backend, path.template
        assert path.direct
        assert template.around is not None
        before, after = template.around
        engine = self._engine(backend)
        params = [before + stored_json(prompt) + after for prompt in prompts]
        keys = [given or derive_key(backend.name, sent) for given, sent in zip(named, params, strict=True)]
        first: dict[str, int] = {}  # each key's first prompt: a key given twice for the same prompt travels once
        for index, key in enumerate(keys):
            seen = first.setdefault(key, index)
            if seen != index and params[seen] != params[index]:
                raise key_twice(seen, index, key)
        arrival = engine.arrive()  # a window open now waits for these calls while they are checked
        try:
            known = await engine.known(list(first))
            for key, record in known.items():
                sent = params[first[key]]
                if other_params(record.params, sent):
                    raise other_request(key)
            fresh = [index for key, index in first.items() if key not in known]
            if fresh:
                await self._checked(backend, template, mode)
                provider = template.provider
                assert provider is not None
                for index in fresh:
                    if not template.fits(params[index]):
                        await provider.preflight(template.request_of(params[index]))
            came, actor, model = engine.arrival_of(arrival), self._actor.name, template.model
            claimed = {
                key: engine.claim(params[index], model=model, key=key, actor=actor, arrived=came)
                for key, index in first.items()
            }
        finally:
            engine.arrived(arrival)
        return engine, keys, claimed

    async def _checked(
        self, backend: BatchBackend, template: PromptTemplate, mode: BatchProcessingMode | str | None
    ) -> None:
        """The template's pre-send checks passed: made now (or joined, when under way) if they have not yet."""
        if template.checked:
            return
        if not template.check_under_way():
            self._start_check(backend, template, mode)
        assert template.checking is not None
        await asyncio.shield(template.checking)  # a caller that gives up must not cancel what others wait on

    async def check(
        self, path: PromptPath, prompt: str, key: str | None, mode: BatchProcessingMode | str | None
    ) -> None:
        """The provider's pre-send checks of calls with a budget, made once: only the prompt varies between them. A
        call the ledger already knows attaches to it unchecked (it was checked when first made)."""
        backend, template = path.backend, path.template
        engine = self._engine(backend)
        if not template.check_under_way() and await engine.knows(
            key or derive_key(backend.name, template.with_prompt(prompt))
        ):
            return
        if not template.check_under_way():  # (looked again: another call may have started it meanwhile)
            self._start_check(backend, template, mode)
        assert template.checking is not None
        # Shielded: a caller that gives up must not cancel the checks the others wait on.
        await asyncio.shield(template.checking)

    async def budgeted(
        self,
        path: PromptPath,
        prompt: str,
        response_model: type[BaseModel] | None,
        key: str | None,
        max_cost_usd: float | None,
    ) -> ActorResponse[object]:
        """A call checked against the budgets before it is claimed (and checked whole first, when its params may not
        fit the provider's limits); or one whose params are not the template's JSON around the prompt's."""
        backend, template = path.backend, path.template
        params = template.with_prompt(prompt)
        checked = None
        limits, provider = template.limits, template.provider
        if limits is None or not limits.fits(template.size_with(prompt)):
            assert provider is not None
            checked = (provider, template.request_with(prompt))
        call = await self._durable(backend, params, key=key, max_cost_usd=max_cost_usd, checked=checked)
        waiting = self._wait(call, response_model)
        del params  # only the engine holds the params now, and only until they are queued
        return await waiting

    def _template(self, backend: BatchBackend, response_model: type[BaseModel] | None) -> PromptTemplate:
        """The params of a call that gives only a prompt: built (and checked) once per backend and response model,
        and anew when the actor's configuration changes (`path`)."""
        template = self._templates.get((backend, response_model))
        if template is None:
            encode_request, request = backend.codec.encode_request, self._actor.request

            def encode(prompt: str) -> dict[str, Any]:
                return encode_request(request(prompt, response_model=response_model))

            # Any prompt will do for the checks: the template holds everything but the prompt.
            template = self._templates[backend, response_model] = PromptTemplate.of(
                encode, request("-", response_model=response_model)
            )
        return template
