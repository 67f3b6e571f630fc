"""`Actor.run_many`: several calls at once, each answered as `run` would answer it, in input order.

In batch mode they go through the durable engine, as `run`'s do: a key each (given, the request's `custom_id`, or
derived from what it sends), recorded in the ledger before anything is sent, coalesced with the engine's concurrent
calls (`run`, other `run_many`s) into as few batches as the windows and limits allow, each answered once however often
it is asked. Live, each is one call through the actor's live caller (its quota, retries, middleware, spending cap). A
provider without a batch backend (a plugin with `complete`/`complete_many` alone) answers them with `complete_many`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from lowtide.batching.backend import BatchBackend, Settled
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.batching.gc_tuning import MANY, freeze_survivors, thaw
from lowtide.batching.keys import derive_key, params_json
from lowtide.batching.policy import key_twice, other_params, other_request
from lowtide.calls.arguments import check_budget, check_key, check_messages, check_prompt, check_requests
from lowtide.calls.face import ActorFace
from lowtide.calls.owners import owned_elsewhere, owner_of, reserve_all_for
from lowtide.calls.prompt_calls import PromptCalls, PromptPath
from lowtide.core.hosts import host_id
from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.budget import Limit, within_limits, worst_case_of
from lowtide.errors import ActorError, ConfigurationError, StructuredOutputError
from lowtide.ledger.spend_records import SpendEntry
from lowtide.live.caller import LiveCaller
from lowtide.messages.answers import TextAnswer
from lowtide.messages.media import check_media
from lowtide.messages.unicode import check_request_text
from lowtide.provider import Outcome, Provider
from lowtide.telemetry.current import LaterCall
from lowtide.telemetry.switch import tracing
from lowtide.types import ActorRequest

__all__ = ["ManyCalls"]


class ManyCalls:
    """The `run_many` of one actor."""

    def __init__(
        self,
        actor: ActorFace,
        engine: Callable[[BatchBackend], BatchEngine],
        live: Callable[[Provider], LiveCaller],
        prompts: PromptCalls,
    ) -> None:
        self._actor = actor
        self._engine = engine
        self._live = live
        self._prompts = prompts

    async def run(
        self,
        requests: Sequence[ActorRequest | str],
        *,
        mode: BatchProcessingMode | str | None,
        keys: Sequence[str | None] | None,
        max_cost_usd: float | None,
    ) -> list[Outcome]:
        """Each request's outcome, in input order (see `Actor.run_many`)."""
        check_requests(requests)
        named = _named(keys, len(requests))
        if max_cost_usd is not None:
            check_budget(max_cost_usd)
        prompts = self._plain_prompts(requests, mode, max_cost_usd)
        if prompts is not None:
            engine, keyed, claimed = await self._prompts.many(*prompts, named, mode)
            return await _answers(engine, keyed, claimed, None)
        built: list[ActorRequest] = []
        for given in requests:
            if isinstance(given, ActorRequest):
                check_messages(given.messages)
                check_request_text(given)  # one built by `Actor.request` was checked there
                check_media(given)
                built.append(given)
            else:
                built.append(self._actor.request(given))
        if not built:
            return []
        provider = self._actor.provider(mode)
        backend = provider.batch_backend()
        if backend is None:
            return await self._outside_ledger(provider, built, max_cost_usd)
        return await self._durable(provider, backend, built, named, max_cost_usd)

    def _plain_prompts(
        self,
        requests: Sequence[ActorRequest | str],
        mode: BatchProcessingMode | str | None,
        max_cost_usd: float | None,
    ) -> tuple[PromptPath, list[str]] | None:
        """Prompts alone (each checked), in durable batch mode with nothing to budget and telemetry off: answered as
        `run`'s prompts are, from the actor's template (`PromptCalls.many`), with no request built for each; else
        None (the general path)."""
        if not requests or max_cost_usd is not None or tracing():
            return None
        prompts: list[str] = []
        for given in requests:
            if not isinstance(given, str):
                return None
            prompts.append(given)
        path = self._prompts.path(None, mode)
        if path is None or not path.direct or owned_elsewhere():
            return None  # (not direct: the actor has a budget or an owner, or the template no JSON around)
        for prompt in prompts:
            check_prompt(prompt)
        return path, prompts

    async def _outside_ledger(
        self, provider: Provider, built: list[ActorRequest], max_cost_usd: float | None
    ) -> list[Outcome]:
        """Live calls, each through the live caller; or a provider without a batch backend's `complete_many`. No
        ledger: only the call's own budget applies, at the mode's prices."""
        await _preflight(provider, built)
        if max_cost_usd is not None:
            provider_name = self._actor.configuration.provider
            estimates = [worst_case_of(r, mode=provider.mode, provider=provider_name) for r in built]
            self._within(estimates, [r.model for r in built], [self._call_limit(max_cost_usd)])
        if provider.mode is not BatchProcessingMode.LIVE:
            if not tracing():
                return await provider.complete_many(built)
            return await self._traced_many(provider, built)
        caller = self._live(provider)

        async def one(request: ActorRequest) -> Outcome:
            try:
                return await caller.call(request)
            except ActorError as exc:  # a live call's error is its own: its neighbours are answered all the same
                return exc

        return list(await asyncio.gather(*(one(request) for request in built)))

    async def _durable(
        self,
        provider: Provider,
        backend: BatchBackend,
        built: list[ActorRequest],
        named: list[str | None],
        max_cost_usd: float | None,
    ) -> list[Outcome]:
        """Through the durable engine: checked (keys, pre-send checks, budgets) before anything is recorded or sent,
        then claimed together, in one moment, with whatever else the engine is gathering."""
        codec = backend.codec
        engine = self._engine(backend)
        params = [codec.encode_request(request) for request in built]
        keys = [
            given or request.custom_id or derive_key(backend.name, sent)
            for given, request, sent in zip(named, built, params, strict=True)
        ]
        first: dict[str, int] = {}  # each key's first request: a key given twice for the same request travels once
        for index, key in enumerate(keys):
            seen = first.setdefault(key, index)
            if seen != index and params_json(params[seen]) != params_json(params[index]):
                raise key_twice(seen, index, key)
        arrival = engine.arrive()  # a window open now waits for these calls while they are checked
        try:
            known = await _known(engine, first, params)
            fresh = [index for key, index in first.items() if key not in known]
            await _preflight(provider, [built[index] for index in fresh])
            new = {keys[i]: params[i] for i in fresh}
            # Reserved in the engine as they pass, with no wait between: counted against calls checked in the same
            # moment, also while the owner's caps are awaited.
            estimates = await self._budget(engine, new, max_cost_usd)
            try:
                owned = await self._reserve_owner(engine, new, estimates)
            except BaseException:
                engine.reserve(self._actor.name, -sum(estimates.values(), Decimal(0)))  # refused: given back
                raise
            later = self._later(provider, {key: built[index] for key, index in first.items()}) if tracing() else {}
            came = engine.arrival_of(arrival)
            claimed = {
                key: engine.claim(
                    params[index],
                    model=codec.model_of(params[index]),
                    key=key,
                    actor=self._actor.name,
                    worst_case_usd=estimates.get(key),
                    arrived=came,
                    later=later.get(key),
                )
                for key, index in first.items()
            }
        finally:
            engine.arrived(arrival)
        del params  # the engine holds them now, until they are queued
        if not owned:
            return await _answers(engine, keys, claimed, [request.response_model for request in built])
        try:
            return await _answers(engine, keys, claimed, [request.response_model for request in built])
        except BaseException:
            await _release_unrecorded(engine, owned, self._actor.clock.now())
            raise

    async def _reserve_owner(
        self, engine: BatchEngine, fresh: dict[str, dict[str, Any]], estimates: dict[str, Decimal]
    ) -> list[str]:
        """The requests new to the ledger reserved together against their owner's caps (`calls.owners`), all or none,
        before anything is recorded: their keys (none when the calls have no owner)."""
        owner = owner_of(self._actor.configuration)
        if not owner.known or not fresh:
            return []
        codec, at, host = engine.backend.codec, self._actor.clock.now(), host_id()
        entries: list[SpendEntry] = []
        for key, params in fresh.items():
            model = codec.model_of(params)
            worst = estimates.get(key) or codec.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)
            worst = within_limits(worst, model, [])  # an unpriced model refused: its owner's caps could not be kept
            entries.append(SpendEntry(key, owner, self._actor.name, model, worst, at, host))
        await reserve_all_for(engine, entries)
        return [entry.key for entry in entries]

    def _later(
        self, provider: Provider, requests: dict[str, ActorRequest], mode: str = "batch"
    ) -> dict[str, LaterCall]:
        """Telemetry on: each call's span, made when its outcome arrives (no open span while thousands wait)."""
        from lowtide.telemetry.later_calls import for_requests

        return for_requests(
            provider=self._actor.configuration.provider,
            gen_ai_provider=provider.telemetry_name(),
            actor=self._actor.name,
            requests=requests,
            mode=mode,
        )

    async def _traced_many(self, provider: Provider, built: list[ActorRequest]) -> list[Outcome]:
        """A provider without a batch backend's `complete_many`, telemetry on: a span per call as its outcome comes
        (its custom id its key, if it has one)."""
        later = self._later(provider, {str(index): request for index, request in enumerate(built)}, provider.mode.value)
        try:
            outcomes = await provider.complete_many(built)
        except BaseException as exc:
            for index, request in enumerate(built):
                later[str(index)].finish(request.custom_id or "", exc)
            raise
        for index, (request, outcome) in enumerate(zip(built, outcomes, strict=True)):
            later[str(index)].finish(request.custom_id or "", outcome)
        return outcomes

    async def _budget(
        self, engine: BatchEngine, fresh: dict[str, dict[str, Any]], max_cost_usd: float | None
    ) -> dict[str, Decimal]:
        """The worst case of each request new to the ledger, reserved in the engine once their sum fits the call's
        budget and the actor's (what it has spent or committed, and what calls of this moment reserved)."""
        configured = self._actor.configuration.max_cost_usd
        if (max_cost_usd is None and configured is None) or not fresh:
            return {}
        limits: list[Limit] = [self._call_limit(max_cost_usd)]
        if configured is not None:
            committed = await engine.ledger.committed_usd(self._actor.name) + engine.reserved(self._actor.name)
            limits.append((f"actor {self._actor.name!r}", configured, committed))
        codec = engine.backend.codec
        estimates = {
            key: codec.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH) for key, params in fresh.items()
        }
        self._within(list(estimates.values()), [codec.model_of(params) for params in fresh.values()], limits)
        reserved: dict[str, Decimal] = {}
        for key, estimate in estimates.items():
            assert estimate is not None  # (`_within` refused an unpriced request)
            reserved[key] = estimate
            engine.reserve(self._actor.name, estimate)
        return reserved

    def _call_limit(self, max_cost_usd: float | None) -> Limit:
        return (f"this call of run_many to actor {self._actor.name!r}", max_cost_usd, Decimal(0))

    @staticmethod
    def _within(estimates: Sequence[Decimal | None], models: Sequence[str], limits: Sequence[Limit]) -> None:
        """The requests' worst cases together against every limit: all fit, or none is sent."""
        for estimate, model in zip(estimates, models, strict=True):
            if estimate is None:
                within_limits(None, model, limits)  # raises: no price is known for the model
        total = sum((estimate for estimate in estimates if estimate is not None), Decimal(0))
        within_limits(total, models[0], limits, requests=len(estimates))


def _named(keys: Sequence[str | None] | None, count: int) -> list[str | None]:
    """The keys given, one (or None) per request, each checked."""
    if keys is None:
        return [None] * count
    if isinstance(keys, str):
        raise ConfigurationError("keys: give a list of keys, one (or None) per request, not a string.", field="keys")
    given = list(keys)
    if len(given) != count:
        raise ConfigurationError(
            f"keys: {len(given)} key(s) for {count} request(s); give one key (or None) per request.", field="keys"
        )
    return [None if key is None else check_key(key) for key in given]


async def _known(engine: BatchEngine, first: dict[str, int], params: list[dict[str, Any]]) -> set[str]:
    """The keys the ledger already knows (they attach to what is there, unchecked: they were checked when first made);
    one that names another request is refused before anything is recorded."""
    answers = await asyncio.gather(*(engine.knows(key) for key in first))
    known = {key for key, knows in zip(first, answers, strict=True) if knows}
    if known:
        for record in await engine.ledger.requests_for(list(known)):
            sent = params[first[record.key]]
            if other_params(record.params, sent):
                raise other_request(record.key)
    return known


async def _release_unrecorded(engine: BatchEngine, keys: list[str], at: float) -> None:
    """Let go of the owner's reservations of `keys` the ledger never recorded (their calls failed before their
    claims were written): nothing of them can be billed."""
    recorded = {record.key for record in await engine.ledger.requests_for(keys)}
    unrecorded = [key for key in keys if key not in recorded]
    if unrecorded:
        await engine.ledger.spending.release_all(unrecorded, at=at, host=host_id())


async def _preflight(provider: Provider, requests: Sequence[ActorRequest]) -> None:
    """The provider's pre-send checks of each request whole: its size and input tokens are its own; what the provider
    asks its API (the model, a count) it remembers, so the same model is asked once."""
    for request in requests:
        await provider.preflight(request)


async def _answers(
    engine: BatchEngine,
    keys: Sequence[str],
    claimed: dict[str, asyncio.Future[Settled]],
    response_models: Sequence[type[BaseModel] | None] | None,
) -> list[Outcome]:
    """Each request's outcome, in input order, once every claimed call has settled (`response_models`: each
    request's, None for none)."""
    try:
        for future in claimed.values():
            # One at a time: most are settled when their turn comes, so few wait (a callback on every future of
            # thousands is as many more objects).
            if not future.done():
                await asyncio.wait((future,))
    except asyncio.CancelledError:  # the caller gave up: as a cancelled `run`, its calls stop waiting
        for future in claimed.values():
            future.cancel()
        raise
    outcomes: list[Outcome] = []
    failure: BaseException | None = None
    # Each future (and the answer it holds) let go once its response is made, so that the answers and the responses
    # the caller gets are not all held at once: unless a key comes twice, whose later turn reads the future again.
    take = claimed.pop if len(claimed) == len(keys) else claimed.__getitem__
    freeze_survivors(len(keys))  # the responses made here are kept: the collector's full passes need not walk the rest
    try:
        for index, key in enumerate(keys):
            future = take(key)
            error = future.exception()
            if error is not None:
                # Not the request's own outcome (its create refused, its batch past max_wait, the ledger failing):
                # raised once every request has settled. What did arrive is in the ledger under its key.
                failure = failure or error
                continue
            settled = future.result()
            model = response_models[index] if response_models else None
            # An answer held as its fields, with no model to parse it into (nearly every one): its response at once.
            if model is None and type(settled) is TextAnswer:
                outcomes.append(settled.response())
            else:
                outcomes.append(_delivered(engine, settled, model))
            if index % MANY == MANY - 1:
                # Kept too, a thousand at a time (freezing is a splice of the collector's lists): else the responses
                # made so far (seven objects each) set off full collections as they pile up, two at 50,000.
                freeze_survivors(MANY)
    finally:
        thaw()
    if failure is not None:
        raise failure
    return outcomes


def _delivered(engine: BatchEngine, outcome: Settled, response_model: type[BaseModel] | None) -> Outcome:
    """A request's own outcome: its answer (parsed into its response model), or its own error as stored."""
    if isinstance(outcome, ActorError):
        return outcome
    try:
        return engine.deliver(outcome, response_model)
    except StructuredOutputError as exc:  # an answer that does not fit the model is that request's own failure
        return exc
