"""The providers of one actor: one per mode and event loop, resolved through the registry and built on first use from
the actor's configuration and what was injected (client, key, clock), and the caller of their live calls in each event
loop, through the quota of their scope."""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from lowtide.batching.engine.registry import close_engines_of
from lowtide.calls.live_spend import LedgerOwnedSpend
from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.core.clock import Clock
from lowtide.cost.budget import within_limits, worst_case_of
from lowtide.cost.pricing import load_prices_in_background
from lowtide.errors import ActorClosedError, ConfigurationError
from lowtide.ledger.kinds import ledger_registry
from lowtide.ledger.quota_records import QuotaStore
from lowtide.ledger.store import LedgerStore
from lowtide.live.caller import LiveCaller, Middleware
from lowtide.live.events import Observer
from lowtide.live.retries import Classifier, RetryPolicy, classify
from lowtide.live.scopes import quota_for, withdraw_store
from lowtide.live.spend import SpendCap
from lowtide.provider import Provider, ProviderOptions
from lowtide.registry import ProviderFactory, ProviderRegistry, default_registry
from lowtide.types import ActorRequest

__all__ = ["ActorProviders"]

log = logging.getLogger(__name__)


@runtime_checkable
class _Closing(Protocol):
    """A quota store holding connections of its own (PostgreSQL's pool)."""

    async def aclose(self) -> None: ...


class _Built:
    """The providers built for one event loop (or for none: a dry run's, adopted by the first loop that calls)."""

    __slots__ = ("asked", "default", "providers")

    def __init__(self) -> None:
        self.providers: dict[BatchProcessingMode, Provider] = {}
        self.asked: dict[BatchProcessingMode | str, Provider] = {}
        """The provider given for each mode asked by name (a live fallback's for "batch", say)."""
        self.default: tuple[ActorConfiguration, Provider] | None = None


def _current_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class ActorProviders:
    """What answers an actor's calls, per mode; `configuration` gives the actor's current configuration."""

    def __init__(
        self,
        configuration: Callable[[], ActorConfiguration],
        *,
        registry: ProviderRegistry | None,
        client: Any,
        http_client: Any,
        api_key: str | None,
        clock: Clock,
        observers: Sequence[Observer],
        middleware: Sequence[Middleware],
        quota_store: Callable[[], QuotaStore],
        ledger: Callable[[], LedgerStore],
        classifier: Classifier | None = None,
    ) -> None:
        self._classifier = classifier or classify
        self._owned = LedgerOwnedSpend(configuration, ledger, clock, _worst_case)
        """The live calls' owners charged in the actor's ledger (`calls.live_spend`)."""
        self._configuration = configuration
        self._quota_store = quota_store
        self._stores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[QuotaStore]] = (
            weakref.WeakKeyDictionary()
        )
        self._registry = registry
        self._client = client
        self._http_client = http_client
        self._api_key = api_key
        self._clock = clock
        self._observers = tuple(observers)
        self._middleware = tuple(middleware)
        self._built: dict[asyncio.AbstractEventLoop | None, _Built] = {}
        """Per event loop: an SDK's HTTP client keeps connections of the loop it was first used on, which another loop
        cannot use ("Connection error": a batch create of unknown outcome) nor close once that loop has ended."""
        self._last: tuple[asyncio.AbstractEventLoop | None, _Built] | None = None
        self._closing: set[asyncio.Future[None]] = set()
        self._closed = False
        """Set by `aclose`: no provider is built again (a call made before the actor closed and awaited after it)."""
        self._callers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, LiveCaller]] = (
            weakref.WeakKeyDictionary()
        )
        self._caps: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SpendCap] = weakref.WeakKeyDictionary()
        self._building = threading.Lock()
        """Held while a provider is built: by a worker thread (`ready`) or by a caller of `get` on the loop's."""
        self._readying: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[BatchProcessingMode | str | None, asyncio.Future[Provider]]
        ] = weakref.WeakKeyDictionary()
        self._watching: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = (
            weakref.WeakKeyDictionary()
        )
        """Per event loop the actor's providers were built on: what closes them as the loop ends (`_watch`)."""

    def built(self, mode: BatchProcessingMode | str | None = None) -> bool:
        """Whether the provider answering calls in `mode` (default: the configured one) is built: a call needs
        nothing from `ready` first. Cheap, for every call."""
        built = self._for(_current_loop())
        if mode is None:
            default = built.default
            return default is not None and default[0] is self._configuration()
        return mode in built.asked

    def _for(self, loop: asyncio.AbstractEventLoop | None) -> _Built:
        """The providers of `loop`: those built without a loop are adopted by the first loop that asks (nothing of
        theirs has connected yet); a loop's first ask retires the providers of loops that have ended."""
        last = self._last
        if last is not None and last[0] is loop:
            return last[1]
        built = self._built.get(loop)
        if built is None:
            built = self._built.pop(None, None) if loop is not None else None
            built = self._built[loop] = built or _Built()
            self._watch(loop)
            ended = self._retire_ended() if loop is not None else []
            if ended:
                closing = asyncio.ensure_future(_close_ended(ended))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        self._last = (loop, built)
        return built

    def _retire_ended(self) -> list[Provider]:
        """Forget the providers of loops that have ended; their closing (`_close_ended`), on the running loop, is
        returned to be awaited, or, when `_for` retires them, left to a task of its own."""
        ended: list[Provider] = []
        for loop in [loop for loop in self._built if loop is not None and loop.is_closed()]:
            ended.extend(self._built.pop(loop).providers.values())
        return ended

    async def ready(
        self, mode: BatchProcessingMode | str | None = None, *, then: Callable[[Provider], object] | None = None
    ) -> Provider:
        """`get(mode)`, the first time in a worker thread: a provider's SDK imported (a second or more of CPU, and
        seconds on a loaded machine) and its client made there, so that the first call of a provider never stalls
        the other tasks of the event loop, and `then(provider)` there after it (what else the first call would open
        on the loop: its ledger). Concurrent first calls share one build."""
        if self.built(mode):
            return self.get(mode)
        loop = asyncio.get_running_loop()
        self._watch(loop)
        readying = self._readying.setdefault(loop, {})
        future = readying.get(mode)
        if future is None or (future.done() and future.exception() is not None):
            future = readying[mode] = asyncio.ensure_future(asyncio.to_thread(self._load, mode, then, loop))
        # Shielded: one caller giving up must not cancel the build the others wait on.
        return await asyncio.shield(future)

    def _load(
        self,
        mode: BatchProcessingMode | str | None,
        then: Callable[[Provider], object] | None,
        loop: asyncio.AbstractEventLoop,
    ) -> Provider:
        """What a first call needs loaded, in a worker thread: the provider (its SDK), and the ledger stores' entry
        points (every installed distribution's metadata read: a third of a second on a cold disk), which its
        ledger or its live quota's store is found through; then `then`'s."""
        ledger_registry()
        provider = self.get(mode, loop=loop)
        if then is not None:
            then(provider)
        return provider

    def get(
        self, mode: BatchProcessingMode | str | None = None, *, loop: asyncio.AbstractEventLoop | None = None
    ) -> Provider:
        """The provider answering calls in `mode` (default: the configured one) on `loop` (default: the running one),
        built once per loop and reused."""
        configuration = self._configuration()
        built = self._for(loop or _current_loop())
        default = built.default
        if mode is None and default is not None and default[0] is configuration:
            return default[1]  # resolved once, not again for each of thousands of calls
        effective, factory = self.resolve(mode)
        provider = built.providers.get(effective)
        if provider is None:
            with self._building:
                provider = built.providers.get(effective)
                if provider is None:
                    provider = built.providers[effective] = self._build(configuration, factory)
        if mode is None:
            built.default = (configuration, provider)
        else:
            built.asked[mode] = provider
        return provider

    def _build(self, configuration: ActorConfiguration, factory: ProviderFactory) -> Provider:
        if self._closed:
            raise ActorClosedError(configuration.name)
        options = ProviderOptions(
            api_key=self._api_key,
            api_key_env=configuration.api_key_env,
            base_url=configuration.base_url,
            http_client=self._http_client,
            client=self._client,
            clock=self._clock,
            batch=configuration.batch,
            timeout=configuration.timeout,
            provider_options=configuration.provider_options,
            max_retries=0,  # lowtide retries, by error class: live.retries, batch.api_retries
        )
        return factory(options)

    def resolve(self, mode: BatchProcessingMode | str | None) -> tuple[BatchProcessingMode, ProviderFactory]:
        """The mode a call in `mode` really runs in (after any live fallback), and its provider's factory."""
        configuration = self._configuration()
        resolution = (self._registry or default_registry()).resolve(
            configuration.provider, self.mode(mode), fallback_to_live=configuration.fallback_to_live
        )
        return resolution.mode, resolution.factory

    def mode(self, mode: BatchProcessingMode | str | None) -> BatchProcessingMode:
        if mode is None:
            return self._configuration().batch_processing
        try:
            return BatchProcessingMode(mode)
        except ValueError:
            choices = ", ".join(m.value for m in BatchProcessingMode)
            raise ConfigurationError(f"Unknown mode {mode!r}; choose one of: {choices}.", field="mode") from None

    def live(self, provider: Provider) -> LiveCaller:
        """The caller of `provider`'s live calls in this event loop: through the quota of its scope, shared with
        every actor of this process calling with the same credentials at the same endpoint, and (`live.share_quota`)
        with every process using the actor's ledger."""
        callers = self._callers.setdefault(asyncio.get_running_loop(), {})
        caller = callers.get(id(provider))
        if caller is None:
            load_prices_in_background()  # while the first call is checked and sent, not when it is answered
            configuration = self._configuration()
            settings = configuration.live
            store = self._quota_store() if settings.share_quota else None
            if store is not None:
                self._stores.setdefault(asyncio.get_running_loop(), []).append(store)
            quota = quota_for(provider.name, provider.quota_scope(), settings, self._clock, store)
            provider.watch_limits(quota.learn)
            caller = callers[id(provider)] = LiveCaller(
                provider.complete,
                quota,
                clock=self._clock,
                policy=RetryPolicy(budgets=settings.retries, classifier=self._classifier),
                attempt_timeout=settings.attempt_timeout,
                deadline=settings.deadline,
                middleware=self._middleware,
                observers=self._observers,
                spend=self._cap(configuration),
                worst_case=lambda request: _worst_case(request, configuration),
                owned=self._owned,
                provider=configuration.provider,
                gen_ai_provider=provider.telemetry_name(),
            )
        return caller

    def _cap(self, configuration: ActorConfiguration) -> SpendCap | None:
        """The actor's live spending cap in this event loop, shared by its providers."""
        limit = configuration.live.max_cost_usd
        if limit is None:
            return None
        loop = asyncio.get_running_loop()
        cap = self._caps.get(loop)
        if cap is None:
            cap = self._caps[loop] = SpendCap(Decimal(str(limit)), f"the live calls of actor {configuration.name!r}")
        return cap

    def _watch(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Have the providers built on `loop` closed on it as it ends, when it is the running one. `asyncio.run`, an
        `asyncio.Runner` (pytest-asyncio's too) and `LowtideChatModel.close` close their loop's async generators
        before they close it: one of ours, started here, closes the providers then, while their connections can
        still be closed. Left to the garbage collector instead, an SDK's client closes itself by starting a task on
        whatever loop runs then, which fails ("Task exception was never retrieved ... Event loop is closed")."""
        if loop is None or loop in self._watching or _current_loop() is not loop:
            return
        watcher = _closing_at_end(weakref.ref(self), weakref.ref(loop))
        try:
            watcher.asend(None).send(None)  # to its `yield`, on this loop's thread: the loop now holds it
        except StopIteration:
            self._watching[loop] = watcher

    async def loop_ended(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the providers of `loop`, which is ending (its tasks are done): a later call on it builds them again.
        A provider that fails to close is logged at debug level: the loop's end goes on."""
        built = self._built.pop(loop, None)
        if self._last is not None and self._last[0] is loop:
            self._last = None
        try:
            await self._close_on(loop, list(built.providers.values()) if built is not None else [])
        except Exception as exc:
            log.debug("Closing the providers of an ending event loop: %r", exc)

    async def aclose(self) -> None:
        """Close the providers of this loop (and of none), and those of loops that have ended; none is built again."""
        self._closed = True
        loop = asyncio.get_running_loop()
        await _close_ended(self._retire_ended())
        providers = [
            p for owner in (loop, None) if (built := self._built.pop(owner, None)) for p in built.providers.values()
        ]
        self._last = None
        self._callers = weakref.WeakKeyDictionary()
        watcher = self._watching.pop(loop, None)
        await self._close_on(loop, providers)
        if watcher is not None:
            await watcher.aclose()  # its work is done: nothing is left to close as the loop ends

    async def _close_on(self, loop: asyncio.AbstractEventLoop, providers: list[Provider]) -> None:
        """Close `providers` of `loop` (the running one), the quota stores opened on it and its live callers."""
        self._callers.pop(loop, None)
        for store in self._stores.pop(loop, []):
            withdraw_store(store)  # the scope's quota goes on through another actor's store, never a closed one
            if isinstance(store, _Closing):
                await store.aclose()  # its connections (a PostgreSQL pool); opened again if another actor uses it
        for provider in providers:
            backend = provider.batch_backend()
            if backend is not None:
                await close_engines_of(backend)
            await provider.aclose()


async def _closing_at_end(
    owner: weakref.ref[ActorProviders], ending: weakref.ref[asyncio.AbstractEventLoop]
) -> AsyncGenerator[None, None]:
    """Wait at its `yield` until the loop `ending` refers to closes its async generators as it ends, then close
    `owner`'s providers of it (an actor collected before then has nothing left to close: its providers went with it).
    Both by weak reference: neither the actor nor a loop is kept alive by it."""
    try:
        yield
    finally:
        providers, loop = owner(), ending()
        if providers is not None and loop is not None and not loop.is_closed():
            await providers.loop_ended(loop)


async def _close_ended(providers: list[Provider]) -> None:
    """Close providers whose event loop has ended. Their connections cannot be closed without it (their sockets are
    freed with them), but their clients must be marked closed: an SDK's client closes itself when collected by
    starting a task on whatever loop is running then, which fails ("Task exception was never retrieved ... Event loop
    is closed"). Each `aclose` marks its client closed before it reaches a dead connection, which fails as that."""
    for provider in providers:
        try:
            await provider.aclose()
        except RuntimeError:
            pass  # "Event loop is closed": the loop of its connections
        except Exception as exc:
            log.debug("Closing the provider of an ended event loop: %r", exc)


def _worst_case(request: ActorRequest, configuration: ActorConfiguration) -> Decimal:
    """What `request` could cost at most, live: its input as estimated and its `max_tokens` answered."""
    estimate = worst_case_of(request, mode=BatchProcessingMode.LIVE, provider=configuration.provider)
    return within_limits(estimate, request.model, [])
