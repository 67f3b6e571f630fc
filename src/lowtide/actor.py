"""`Actor`: runs model calls for one configuration, through the live or the batch provider its mode selects."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, overload

from pydantic import BaseModel

from lowtide.batching.backend import BatchBackend, BatchCodec
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.batching.engine.registry import engine_for
from lowtide.batching.gc_tuning import MANY, freeze_survivors, thaw
from lowtide.batching.tickets import Ticket, ticket_for
from lowtide.calls.arguments import check_call, check_key, check_response_model
from lowtide.calls.deadline_lane import LANE
from lowtide.calls.many import ManyCalls
from lowtide.calls.path import ActorCalls, Calls
from lowtide.calls.providers import ActorProviders
from lowtide.calls.requests import MessagesInput, ToolsInput, build_request
from lowtide.calls.sync_loop import SyncLoop
from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.core.clock import Clock, SystemClock
from lowtide.errors import ActorClosedError, ActorError, ProviderCapabilityError
from lowtide.ledger.locations import shared_quota_store
from lowtide.ledger.quota_records import QuotaStore
from lowtide.ledger.records import RequestRecord
from lowtide.ledger.store import LedgerStore, missing_ledger, open_ledger
from lowtide.live.caller import LiveCaller, Middleware
from lowtide.live.events import Observer
from lowtide.live.retries import Classifier
from lowtide.provider import Outcome, Provider
from lowtide.registry import ProviderRegistry
from lowtide.telemetry.current import CALL
from lowtide.telemetry.switch import tracing
from lowtide.types import ActorRequest, ActorResponse

if TYPE_CHECKING:
    from lowtide.bulk.outputs.results import RunResult
    from lowtide.bulk.planning.batches import RunPlan
    from lowtide.bulk.planning.live_plan import LivePlan
    from lowtide.bulk.running.runner import BulkRun, JobInput
    from lowtide.routing.deadlines import DeadlineInput
    from lowtide.streaming import StreamEvent

__all__ = ["Actor"]

ModelT = TypeVar("ModelT", bound=BaseModel)


class Actor:
    """Runs calls for one `ActorConfiguration`; its `batch_processing` mode picks the provider.

    Everything at the edges is injectable: `client` (the provider's SDK client, e.g. the emulator's
    `anthropic.AsyncAnthropic` or `openai.AsyncOpenAI`),
    `http_client`, `api_key`, `clock`, and the `registry` providers are resolved from. Live calls go through
    `middleware` and tell `observers`; `retry_classifier` names the retry class of a failed live call's error (one
    of `live.retries`' classes, or None: never retried), in place of lowtide's own (`lowtide.live.retries.classify`).
    """

    def __init__(
        self,
        configuration: ActorConfiguration | Mapping[str, object],
        *,
        registry: ProviderRegistry | None = None,
        client: object = None,
        http_client: object = None,
        api_key: str | None = None,
        clock: Clock | None = None,
        ledger: LedgerStore | str | Path | None = None,
        observers: Sequence[Observer] = (),
        middleware: Sequence[Middleware] = (),
        retry_classifier: Classifier | None = None,
    ) -> None:
        self.configuration = (
            configuration
            if isinstance(configuration, ActorConfiguration)
            else ActorConfiguration.from_dict(configuration)
        )
        self._clock = clock or SystemClock()
        self._providers = ActorProviders(
            lambda: self.configuration,
            registry=registry,
            client=client,
            http_client=http_client,
            api_key=api_key,
            clock=self._clock,
            observers=observers,
            middleware=middleware,
            classifier=retry_classifier,
            quota_store=self._quota_store,
            ledger=self._open_ledger,
        )
        self._sync_loop = SyncLoop()
        # Collected unclosed (a script's actor after `run_sync`), its loop's thread and executor are wound down: a
        # process keeps no thread per dropped actor. The finalizer holds the loop only, never the actor.
        weakref.finalize(self, self._sync_loop.drop).atexit = False
        self._closed = False
        self._said_options: set[tuple[str, ...]] = set()  # other providers' call options already warned of
        self._ledger: LedgerStore | str | Path | None = ledger
        self._untraced = ActorCalls(self, self._providers, self._engine)
        self._traced: Calls | None = None
        self._many = ManyCalls(self, self._engine, self._live, self._untraced.prompts)
        self._last_engine: tuple[asyncio.AbstractEventLoop, BatchBackend, ActorConfiguration, BatchEngine] | None = None
        if self.configuration.batch_processing is not BatchProcessingMode.LIVE:
            # Made before the calls it carries, often thousands gathered at once: what the process imported by now
            # (the SDKs' models, several times a plain object's cost to every full collection) is kept out of the
            # collector's sight until its first batch is collected (`batching/gc_tuning.py`).
            freeze_survivors(MANY)

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None, **kwargs: Any) -> Actor:
        """The actor `name` from a YAML or TOML file (the only one, when the file holds one)."""
        return cls(ActorConfiguration.from_file(path, name), **kwargs)

    @property
    def name(self) -> str:
        return self.configuration.name

    def request(
        self,
        prompt: str | None = None,
        *,
        messages: MessagesInput | None = None,
        system: str | list[dict[str, object]] | None = None,
        tools: ToolsInput | None = None,
        tool_choice: Mapping[str, object] | None = None,
        response_model: type[BaseModel] | None = None,
        custom_id: str | None = None,
        **params: object,
    ) -> ActorRequest:
        """Build the `ActorRequest` a call would send: the configuration's defaults, then this call's arguments.

        Bad arguments raise `ConfigurationError` here, before anything is sent or paid for.
        """
        return build_request(
            self.configuration,
            prompt,
            messages=messages,
            system=system,
            tools=tools,
            tool_choice=tool_choice,
            response_model=response_model,
            custom_id=custom_id,
            params=params,
            said_options=self._said_options,
        )

    @overload
    def run(
        self,
        prompt: str | None = None,
        *,
        response_model: type[ModelT],
        mode: BatchProcessingMode | str | None = None,
        key: str | None = None,
        max_cost_usd: float | None = None,
        deadline: DeadlineInput | None = None,
        **kwargs: object,
    ) -> Coroutine[Any, Any, ActorResponse[ModelT]]: ...

    @overload
    def run(
        self,
        prompt: str | None = None,
        *,
        response_model: None = None,
        mode: BatchProcessingMode | str | None = None,
        key: str | None = None,
        max_cost_usd: float | None = None,
        deadline: DeadlineInput | None = None,
        **kwargs: object,
    ) -> Coroutine[Any, Any, ActorResponse[object]]: ...

    def run(
        self,
        prompt: str | None = None,
        *,
        response_model: type[BaseModel] | None = None,
        mode: BatchProcessingMode | str | None = None,
        key: str | None = None,
        max_cost_usd: float | None = None,
        deadline: DeadlineInput | None = None,
        **kwargs: Any,
    ) -> Coroutine[Any, Any, ActorResponse[object]]:
        """Answer one call (a coroutine: await it). `mode` overrides the configuration's `batch_processing` for this
        call only; `deadline` (a clock time "06:00", a duration "2h", an ISO time, a `datetime` or `timedelta`)
        chooses it instead: the cheapest venue expected to answer by then (batch, a cheaper live tier, live), refused
        when none is (docs/bulk.md, "Deadlines").

        Keyword arguments: `messages`, `system`, `tools`, `tool_choice`, `custom_id` and any Messages parameter
        (`max_tokens`, `temperature`, `stop_sequences`, `thinking`, ...).
        """
        # Not a coroutine of its own: the call's (`ActorCalls.run`) is the only frame each of 100,000 waiting calls
        # keeps, and it runs nothing before it is awaited (a bad argument is raised by the await, as it always was).
        if self._closed:
            raise ActorClosedError(self.name)
        calls: Calls = self._calls()
        if deadline is not None:
            from lowtide.calls.deadline import by_deadline

            return by_deadline(self, calls, prompt, response_model, mode, key, max_cost_usd, kwargs, deadline)
        return calls.run(prompt, response_model, mode, key, max_cost_usd, kwargs)

    def stream(
        self,
        prompt: str | None = None,
        *,
        response_model: type[BaseModel] | None = None,
        mode: BatchProcessingMode | str | None = None,
        key: str | None = None,
        max_cost_usd: float | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Answer one call as it is written: `async for event in actor.stream(...)` gives `TextDelta`s and
        `ToolCallDelta`s as they arrive, then the `ActorResponse` `run` would have returned (same content, usage and
        cost), last. Same arguments as `run`.

        Live, the provider's streaming API is used (one without one gives its answer as the one event) through the
        actor's live caller: middleware, quota, retries until a piece has arrived, spending cap. A stream that breaks
        after pieces arrived raises `StreamInterruptedError`, never a short answer. In batch mode the call goes
        through the ledger as `run`'s does (its key, never paid twice) and its answer is the one event.
        """
        if self._closed:
            raise ActorClosedError(self.name)
        from lowtide.calls.streamed import streamed

        def whole() -> Coroutine[Any, Any, ActorResponse[object]]:
            return self.run(
                prompt, response_model=response_model, mode=mode, key=key, max_cost_usd=max_cost_usd, **kwargs
            )

        def request() -> ActorRequest:
            check_call(key, max_cost_usd)
            check_response_model(response_model)
            return self.request(prompt, response_model=response_model, **kwargs)

        return streamed(self, mode, self._live, whole, request, max_cost_usd)

    def _calls(self) -> Calls:
        """The path of a call made now: the actor's own, or, while telemetry is on, the same inside the call's span
        (`TracedCalls`, made once); a call made inside another's span is that call's part (no span of its own)."""
        if not tracing() or CALL.get() is not None:
            return self._untraced
        traced = self._traced
        if traced is None:
            from lowtide.calls.traced import TracedCalls

            traced = self._traced = TracedCalls(self, self._untraced)
        return traced

    def submit(
        self, prompt: str | None = None, *, key: str | None = None, max_cost_usd: float | None = None, **kwargs: Any
    ) -> Coroutine[Any, Any, Ticket]:
        """Park a batch-mode call: its ticket as soon as its batch exists, without waiting for the answer (a
        coroutine: await it).

        `await actor.result(ticket.key)` (in this process or a later one) waits for it; so does `run` with the
        same key.
        """
        if self._closed:
            raise ActorClosedError(self.name)
        return self._calls().submit(prompt, key, max_cost_usd, kwargs)

    @overload
    def result(
        self, key: str, *, response_model: type[ModelT], known: RequestRecord | None = None
    ) -> Coroutine[Any, Any, ActorResponse[ModelT]]: ...

    @overload
    def result(
        self, key: str, *, response_model: None = None, known: RequestRecord | None = None
    ) -> Coroutine[Any, Any, ActorResponse[object]]: ...

    def result(
        self, key: str, *, response_model: type[BaseModel] | None = None, known: RequestRecord | None = None
    ) -> Coroutine[Any, Any, ActorResponse[object]]:
        """The answer of a parked call, waiting for its batch if need be (a coroutine: await it); traced, its span is
        in the trace the call was parked in. `known`: the key's record as the caller has just read it from this
        actor's ledger (`ledger.request(key)`), so that it is not read again."""
        if self._closed:
            raise ActorClosedError(self.name)
        return self._calls().result(key, response_model, known)

    def ticket(self, key: str) -> Ticket:
        """Where a parked call stands, from the ledger, without calling the API (no event loop needed)."""
        return ticket_for(self._open_ledger(), check_key(key))

    def batch_codec(self, capability: str = "durable batch mode") -> BatchCodec:
        """The batch codec of this actor's provider: its requests and results as pure functions, reachable without
        a key (a dry run needs nothing more). `ProviderCapabilityError` naming `capability` when there is none."""
        codec = getattr(self._providers.resolve(BatchProcessingMode.BATCH)[1], "codec", None)
        if isinstance(codec, BatchCodec):
            return codec
        backend = self.provider(BatchProcessingMode.BATCH).batch_backend()
        if backend is None:
            raise ProviderCapabilityError(self.configuration.provider, capability)
        return backend.codec

    def batch_backend(self, capability: str = "parking (durable batch mode)") -> BatchBackend:
        """The batch backend of this actor's provider; `ProviderCapabilityError` naming `capability` when none."""
        backend = self.provider(BatchProcessingMode.BATCH).batch_backend()
        if backend is None:
            raise ProviderCapabilityError(self.configuration.provider, capability)
        return backend

    def _engine(self, backend: BatchBackend | None = None) -> BatchEngine:
        backend = backend or self.batch_backend()
        loop = asyncio.get_running_loop()
        lane = LANE.get()  # a call routed to a batch by its deadline: an engine (and batches) of its lane's
        if lane is not None:
            return engine_for(backend, self._open_ledger(), settings=lane, clock=self._clock)
        last = self._last_engine
        if last is not None and last[:3] == (loop, backend, self.configuration) and not last[3].closed:
            return last[3]  # thousands of calls at once: skip the look-up (and the settings' hash) for each
        engine = engine_for(backend, self._open_ledger(), settings=self.configuration.batch, clock=self._clock)
        self._last_engine = (loop, backend, self.configuration, engine)
        return engine

    def _open_ledger(self) -> LedgerStore:
        if self._ledger is not None and not isinstance(self._ledger, str | Path):
            return self._ledger
        self._ledger = open_ledger(self._ledger or self.configuration.ledger)
        return self._ledger

    @property
    def ledger(self) -> LedgerStore:
        """The ledger this actor's batch-mode calls and runs are recorded in (opened on first use)."""
        return self._open_ledger()

    def existing_ledger(self) -> LedgerStore | None:
        """`ledger`, when there is one to open; None when its location holds none yet (and none is made there)."""
        given = self._ledger
        if (given is None or isinstance(given, str | Path)) and missing_ledger(given or self.configuration.ledger):
            return None
        return self._open_ledger()

    @property
    def clock(self) -> Clock:
        return self._clock

    # Bulk runs.

    def bulk(self, **options: Any) -> BulkRun:
        """A bulk run for this actor, to add jobs to (`add`, `add_jobs`) and then `run()` or `plan()`.

        Options are `BulkRun`'s: run_id, defaults, response_model, citations, items_per_batch,
        max_parallel_batches, max_cost_usd, time_limit, results_dir, out, on_progress, progress; and for live
        runs mode, abort_on, abort_mode, post_process, post_process_timeout.
        """
        from lowtide.bulk.running.options import check_run_options
        from lowtide.bulk.running.runner import BulkRun

        if self._closed:
            raise ActorClosedError(self.name)
        check_run_options(options)
        return BulkRun(self, **options)

    @overload
    async def map(
        self, inputs: Iterable[JobInput], *, dry_run: Literal[False] = False, **options: object
    ) -> RunResult: ...

    @overload
    async def map(
        self, inputs: Iterable[JobInput], *, dry_run: Literal[True], **options: object
    ) -> RunPlan | LivePlan: ...

    async def map(
        self, inputs: Iterable[JobInput], *, dry_run: bool = False, **options: object
    ) -> RunResult | RunPlan | LivePlan:
        """Run many inputs (prompts, `Job`s, or JSONL-shaped mappings) through batches; results in input order.

        `mode="live"` answers them by live calls instead, at the actor's live limits (see `BulkRun`).
        `dry_run=True` returns the plan (`RunPlan`, or `LivePlan` for a live run) instead and sends nothing. Running
        the same inputs again (or the same `run_id`) resumes the run: answers already in the ledger are not paid for
        twice.
        """
        run = self.bulk(**options).add_jobs(inputs)
        if dry_run:
            return await (run.live_plan() if run.mode == "live" else run.plan())
        return await run.run()

    async def run_many(
        self,
        requests: Sequence[ActorRequest | str],
        *,
        mode: BatchProcessingMode | str | None = None,
        keys: Sequence[str | None] | None = None,
        max_cost_usd: float | None = None,
        deadline: DeadlineInput | None = None,
    ) -> list[Outcome]:
        """Answer several calls at once; the outcomes in input order, each a response or that request's own error.
        `deadline` chooses the mode as `run`'s does, for all of them at once (docs/bulk.md, "Deadlines").

        In batch mode each call goes through the ledger as `run`'s does, under its key: `keys[i]` (one key or None
        per request), else the request's `custom_id`, else one derived from what it sends. So a key the ledger
        knows attaches to what is there (asking again never pays again), and the new ones travel in as few batches as
        the engine's windows and limits allow, with whatever `run` calls it is gathering at the moment. The same key
        given twice for one request is asked once; for two different requests it is refused.

        Refused before anything is recorded or sent, with the error raised: bad arguments, a key the ledger holds for
        another request, the provider's pre-send checks (once per model, max_tokens and tools), and budgets: the
        worst cases of the call's new requests together must fit `max_cost_usd`, and, with what the actor has spent
        or committed, the actor's `max_cost_usd`; all are sent or none is.

        In the list: a request's answer (parsed into its `response_model`), its own `BatchRequestError` (errored,
        canceled, expired), or its `StructuredOutputError`. An error that ends a request's wait without an outcome
        of its own (the API refused the create, the batch outlived `max_wait`, the ledger failed) is raised once every
        request has settled, the first in input order; what did arrive is in the ledger, and the same call made
        again returns it without paying again. Live, each request is its own call through the actor's live caller
        (quota, retries, middleware), and every error is that request's own, in the list; keys are not used.
        """
        if self._closed:
            raise ActorClosedError(self.name)
        if deadline is not None:
            from lowtide.calls.many_deadline import many_by_deadline

            return await many_by_deadline(self, self.run_many, self.request, requests, mode=mode, keys=keys,
                                          max_cost_usd=max_cost_usd, deadline=deadline)  # fmt: skip
        await self.ready(mode)
        return await self._many.run(requests, mode=mode, keys=keys, max_cost_usd=max_cost_usd)

    def run_sync(self, prompt: str | None = None, **kwargs: Any) -> ActorResponse[object]:
        """`run` for scripts without an event loop, from any thread. All sync calls of one actor share one loop, in a
        thread of its own: calls from several threads at once are gathered as `run`'s are, each request sent once."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise ActorError("run_sync was called inside a running event loop; use `await actor.run(...)`.")
        return self._sync_loop.run(self.run(prompt, **kwargs))

    def resolve_mode(self, mode: BatchProcessingMode | str | None = None) -> BatchProcessingMode:
        """The mode a call will really run in: the override or the configured mode, after any live fallback."""
        return self._providers.resolve(mode)[0]

    def _live(self, provider: Provider) -> LiveCaller:
        return self._providers.live(provider)

    def live_caller(self) -> LiveCaller:
        """The caller of this actor's live calls in the running event loop: its scope's quota, its retries,
        middleware, observers and spending cap (what a live bulk run sends each item through)."""
        return self._live(self.provider(BatchProcessingMode.LIVE))

    def provider(self, mode: BatchProcessingMode | str | None = None) -> Provider:
        """The provider answering calls in `mode` (default: the configured one), built once and reused."""
        return self._providers.get(mode)

    async def ready(self, mode: BatchProcessingMode | str | None = None) -> Provider:
        """`provider(mode)`, built off the event loop the first time (its SDK imported and its client made in a
        worker thread), so that the first call of a provider never stalls the loop's other tasks. Every call of the
        actor's awaits it; a program may too, to load an actor's provider before its calls begin. The ledger its calls
        will use (a batch provider's, or a live quota shared through it) is opened there too: a new SQLite file made
        and migrated, a database connected to."""
        return await self._providers.ready(mode, then=self._opened_for)

    def _opened_for(self, provider: Provider) -> None:
        """Open the ledger `provider`'s calls will use, if they use one."""
        if provider.batch_backend() is not None:
            self._open_ledger()
        elif provider.mode is BatchProcessingMode.LIVE and self.configuration.live.share_quota:
            # Made as the calls will make it: the store a kind keeps apart from the rest of its ledger (PostgreSQL's:
            # its driver imported here, its pool opened and the schema checked by the first call), else the ledger,
            # opened here. Opening the ledger instead would have the calls use the process's ledger for a kind of
            # the first sort, whose schema it checked when it was opened, not their own store.
            self._quota_store()

    def _quota_store(self) -> QuotaStore:
        return shared_quota_store(self._ledger or self.configuration.ledger, self._open_ledger)

    @property
    def closed(self) -> bool:
        """Whether the actor was closed: its calls are refused (`ActorClosedError`) before anything is recorded."""
        return self._closed

    async def aclose(self) -> None:
        """Close the actor's providers (their connections); from now on every call is refused (`ActorClosedError`),
        before anything is recorded or sent, where a reopened provider would send a new batch."""
        self._closed = True
        self._untraced.prompts.forget()  # its providers are closed: a later call builds them anew
        await self._providers.aclose()
        thaw()  # what lowtide kept from the garbage collector (since this actor was made, say) is given back

    def close(self) -> None:
        """`aclose` for scripts: the providers of `run_sync`'s loop closed, then the loop; calls are refused after."""
        self._closed = True
        self._sync_loop.close(self.aclose())

    async def __aenter__(self) -> Self:
        if self._closed:
            raise ActorClosedError(self.name)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
