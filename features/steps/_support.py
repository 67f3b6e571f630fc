"""Shared state and helpers for lowtide's step modules: one `World` per scenario, kept on `context.world`."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import logging
import os
import shlex
import shutil
import sqlite3
import sys
import tempfile
import threading
import traceback
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import httpx2
import parse
import yaml
from behave.api.step_matchers import register_type
from step_context import Context

import lowtide
from lowtide import (
    Actor,
    ActorConfiguration,
    ActorError,
    ActorResponse,
    ManualClock,
    Outcome,
    ProviderRegistry,
)
from lowtide.core.clock import VirtualClock
from lowtide.ledger.store import BatchIntent, LedgerStore, open_ledger
from lowtide.registry import ENTRY_POINT_GROUP

if TYPE_CHECKING:
    from lowtide.emulator import Emulator

T = TypeVar("T")

FEATURES = Path(__file__).resolve().parents[1]
PLUGINS = FEATURES / "plugins"

# How long (real time) a call may take before a scenario calls it hung. A hang is a call that will never end, not a
# slow one: on a loaded machine (two cores shared by several test runs, under coverage) a scenario of 240 live calls,
# or a PostgreSQL store's first connection and migration, took more than 5 seconds; such slowness is not what this
# guard is for, and a guard that fires on it fails a correct scenario. A true hang still fails the step, later.
HANG_SECONDS = 60.0

# The key every emulator client of these scenarios sends: distinctive, so that a leak into a message is caught.
API_KEY = "sk-ant-api03-lowtide-scenario-secret-9f2c"


@parse.with_pattern(r'[^"]*')
def _quoted(string: str) -> str:
    return string


# `"{name:Q}"` matches quoted text without quotes in it, so that `asked "{prompt:Q}"` cannot swallow a longer step.
register_type(Q=_quoted)


@dataclass
class World:
    """Everything one scenario sets up, does and observes."""

    runner: Any
    cleanups: list[Callable[[], object]]
    clock: ManualClock | VirtualClock = field(default_factory=ManualClock)
    emulator: Emulator | None = None
    client: Any = None
    registry: ProviderRegistry | None = None
    actors: dict[str, Actor] = field(default_factory=dict[str, Actor])
    actor: Actor | None = None
    tmp: Path | None = None
    loaded: dict[str, ActorConfiguration] | None = None
    configuration: ActorConfiguration | None = None
    plugins_loaded: list[str] = field(default_factory=list[str])
    resolution: Any = None
    response: ActorResponse[Any] | None = None
    answers: list[ActorResponse[Any]] = field(default_factory=list[ActorResponse[Any]])
    outcomes: list[Outcome] = field(default_factory=list[Outcome])
    error: BaseException | None = None
    custom_ids: list[str] = field(default_factory=list[str])
    started_at: float = 0.0
    collected: dict[str, Outcome] = field(default_factory=dict[str, Outcome])
    value: Any = None
    hooks: Hooks = field(default_factory=lambda: Hooks())
    asked: dict[str, Any] = field(default_factory=dict[str, Any])
    """What concurrent calls came back with (a response or an error), by prompt."""
    tickets: dict[str, Any] = field(default_factory=dict[str, Any])
    """Tickets of parked calls, by key."""
    witnessed: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])
    """What the ledger had committed each time the API was called, by route."""
    tried: list[str] = field(default_factory=list[str])
    """The method and path of each request made to an API that cannot be reached (when the scenario watches)."""
    streamed: list[bool] = field(default_factory=list[bool])
    """Whether each live Messages call asked for a stream, in order (when the scenario watches for it)."""
    store: LedgerStore | None = None
    """The ledger object the scenario's actors were given (a `MemoryLedger`), when not the scenario's file."""

    # -- running things ------------------------------------------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the scenario's loop; a call that never returns fails the step instead of the whole run.

        Time is virtual in these scenarios (a `ManualClock`; a `VirtualClock` on a PostgreSQL ledger), so a call takes
        milliseconds of real time: one still waiting after `HANG_SECONDS` is waiting for something that will never
        happen.
        """

        async def guarded() -> T:
            task = asyncio.ensure_future(coro)
            done, _ = await asyncio.wait({task}, timeout=HANG_SECONDS)
            if task in done:
                return task.result()
            where = hung_stacks()  # (read before the cancel unwinds them: where each task and thread waits)
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise AssertionError(f"the call hung: no answer after {HANG_SECONDS:g} real seconds\n{where}")

        return self.runner.run(guarded())

    def attempt(self, action: Callable[[], T]) -> T | None:
        """Run `action`, keeping the `ActorError` it raises (if any) for the Then steps to examine."""
        self.error = None
        try:
            return action()
        except ActorError as exc:
            self.error = exc
            return None

    def attempt_async(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T | None:
        self.started_at = self.clock.now()
        result = self.attempt(lambda: self.run(make()))
        if isinstance(result, ActorResponse):
            self.answers.append(result)
        return result

    def succeeded(self) -> None:
        if self.error is not None:
            raise AssertionError(f"expected success, got {type(self.error).__name__}: {self.error}")

    def failure(self) -> BaseException:
        if self.error is None:
            raise AssertionError("expected an error, but the call succeeded")
        return self.error

    def outcome(self, custom_id: str) -> Outcome:
        """The outcome of the request `custom_id` in the last `run_many`."""
        self.succeeded()
        assert custom_id in self.custom_ids, f"no request {custom_id!r} among {self.custom_ids}"
        outcome = self.outcomes[self.custom_ids.index(custom_id)]
        own = outcome.ids.custom_id if isinstance(outcome, ActorResponse) else getattr(outcome, "custom_id", custom_id)
        if own not in (custom_id, None) and not own.startswith("auto-"):  # (a derived key's: not named by the row)
            assert own == self.custom_id(custom_id), f"the outcome for {custom_id!r} says it is {own!r}"
        return outcome

    def answer(self) -> ActorResponse[Any]:
        self.succeeded()
        assert self.response is not None, "no response was received"
        return self.response

    # -- the emulator --------------------------------------------------------------------------------------------

    @property
    def emu(self) -> Emulator:
        assert self.emulator is not None, "this scenario has no emulator: add 'Given an emulated Anthropic API ...'"
        return self.emulator

    def start_emulator(self, **kwargs: Any) -> Emulator:
        from lowtide.emulator import Emulator

        self.emulator = Emulator(clock=self.clock, **kwargs)
        self.client = self.client_over(self.transport())
        return self.emulator

    def transport(self) -> httpx2.AsyncBaseTransport:
        """The emulator's in-process transport, through the scenario's `hooks`."""
        return HookTransport(self.emu.transport(), self.hooks)

    def client_over(self, transport: httpx2.AsyncBaseTransport, **options: Any) -> Any:
        """A real SDK client, as `Emulator.client()` makes it, over `transport`; closed after the scenario."""
        import anthropic

        client = anthropic.AsyncAnthropic(
            api_key=API_KEY,
            base_url=self.emu.base_url,
            http_client=httpx2.AsyncClient(transport=transport, base_url=self.emu.base_url),
            max_retries=0,
            **options,
        )
        self.cleanups.append(client.close)
        return client

    # -- actors --------------------------------------------------------------------------------------------------

    def current_actor(self) -> Actor:
        assert self.actor is not None, "no actor was set up"
        return self.actor

    def serve_emulator(self, emulator: Emulator | None = None, *, processing_seconds: float = 0.0) -> str:
        """`emulator` (by default a new one on the scenario's clock, whose batches take `processing_seconds`) on a
        loopback socket until the scenario ends, as `w.emulator`; its URL, also kept as `witnessed["server url"]`
        (`lowtide collect` and `cancel`, and actors that build their own clients, reach it by it)."""
        from lowtide.emulator import Emulator
        from lowtide.emulator.server import serve_in_thread

        self.emulator = emulator or Emulator(clock=self.clock, processing_seconds=processing_seconds)
        serving = serve_in_thread(self.emulator)
        server = serving.__enter__()
        self.cleanups.append(lambda: serving.__exit__(None, None, None))
        self.witnessed["server url"] = [server.url]
        return server.url

    def add_actor(self, settings: Mapping[str, Any], **kwargs: Any) -> Actor:
        options: dict[str, Any] = {"clock": self.clock, "registry": self.registry}
        if self.client is not None:
            options["client"] = self.client
        options.update(kwargs)
        actor = Actor(dict(settings), **options)
        self.cleanups.append(actor.aclose)
        self.actors[actor.name] = actor
        self.actor = actor
        return actor

    # -- the ledger ----------------------------------------------------------------------------------------------

    @property
    def ledger_path(self) -> Path:
        """The scenario's ledger file: where `LOWTIDE_LEDGER` points (environment.py gives each scenario its own)."""
        return Path(os.environ["LOWTIDE_LEDGER"])

    def ledger(self) -> LedgerStore:
        """The scenario's ledger, as the actors open it (one per location in a process): its SQLite file, or the
        PostgreSQL database `LOWTIDE_LEDGER` names when the scenario runs on that store; or the store object the
        actors were given."""
        return self.store if self.store is not None else open_ledger(os.environ["LOWTIDE_LEDGER"])

    def custom_id(self, key: str) -> str:
        """The custom id the ledger gives a request keyed `key`: the key and the ledger's identity, by the provider's
        rules (the current actor's ledger and provider; without an actor, the scenario's ledger and Anthropic's)."""
        if self.actor is not None:
            return self.actor.batch_codec().custom_id_for(key, self.actor.ledger.identity())
        from lowtide.providers.anthropic.mapping import custom_id_for

        return custom_id_for(key, self.ledger().identity())

    def in_program(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run `make()` as a short program would: on an event loop of its own, closed (tasks and all) at the end.

        What the program left running (a poller, say) stops with it, as it would when a process exits; what it
        recorded stays in the ledger for the next program.
        """
        runner = asyncio.Runner()
        try:

            async def guarded() -> T:
                try:
                    return await asyncio.wait_for(make(), HANG_SECONDS)
                except TimeoutError:
                    raise AssertionError(f"the program hung: no answer after {HANG_SECONDS:g} real seconds") from None

            return runner.run(guarded())
        finally:
            runner.close()

    # -- files ---------------------------------------------------------------------------------------------------

    def keep_log(self, logger: str, level: int) -> list[logging.LogRecord]:
        """The records `logger` emits at `level` or above from now to the scenario's end, as they come."""
        kept: list[logging.LogRecord] = []
        handler = _Kept(kept, level)
        target = logging.getLogger(logger)
        target.addHandler(handler)
        self.cleanups.append(lambda: target.removeHandler(handler))
        return kept

    def path(self, name: str) -> Path:
        if self.tmp is None:
            self.tmp = Path(tempfile.mkdtemp(prefix="lowtide-scenario-"))
            tmp = self.tmp
            self.cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
        return self.tmp / name


def world(context: Context) -> World:
    """The scenario's `World`, made on first use."""
    current = getattr(context, "world", None)
    if not isinstance(current, World):
        # On a PostgreSQL ledger the calls wait on sockets, and a `ManualClock` would let a poller's sleeps move time
        # on while a call waits for the database (a batch ended before its call is parked): time moves only when every
        # task waits, and stands still while one waits for the database (`VirtualClock(wait_for_io=True)`).
        on_server = os.environ.get("LOWTIDE_LEDGER", "").startswith("postgres")
        clock = VirtualClock(wait_for_io=True) if on_server else ManualClock()
        current = World(runner=context.runner, cleanups=context.cleanups, clock=clock)
        context.world = current
    return current


def plugins_importable() -> None:
    """Make the scenario plugins under features/plugins importable, as an installed plugin would be."""
    if str(PLUGINS) not in sys.path:
        sys.path.insert(0, str(PLUGINS))


def entry_point(spec: str) -> EntryPoint:
    """An entry point of the `lowtide.providers` group from "name = module:attribute"."""
    name, _, value = (part.strip() for part in spec.partition("="))
    return EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def error_class(name: str) -> type[BaseException]:
    cls = getattr(lowtide, name, None)
    assert isinstance(cls, type), f"lowtide exports no error named {name}"
    assert issubclass(cls, BaseException), f"lowtide exports no error named {name}"
    return cls


def check_error(error: object, name: str) -> None:
    """`error` is exactly lowtide's error class `name` (not merely a relative of it)."""
    expected = error_class(name)
    assert type(error) is expected, f"expected {name}, got {type(error).__name__}: {error}"


def yaml_doc(text: str | None) -> dict[str, Any]:
    data = yaml.safe_load(text or "") or {}
    assert isinstance(data, dict), f"expected a mapping, got {data!r}"
    return data


def literal(text: str) -> Any:
    return ast.literal_eval(text.strip())


def dig(obj: Any, dotted: str) -> Any:
    """`obj.a.b`, or `obj["a"]["b"]`, for `dotted` "a.b"."""
    for part in dotted.split("."):
        obj = obj[part] if isinstance(obj, Mapping) else getattr(obj, part)
    return obj


def shown(value: object) -> str:
    """A value as a feature file writes it."""
    if isinstance(value, Enum):
        return str(value.value)
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def emulated_reply_to(prompt: str) -> str:
    """How the emulated model's plain-text answer to `prompt` begins."""
    return f'Emulated reply to "{prompt}": '


def names(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


class PathRefused(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, but refuses the connection of every call to a path starting with `prefix` (the
    models endpoint, say)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, prefix: str) -> None:
        self._inner = inner
        self._prefix = prefix

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path.startswith(self._prefix):
            raise httpx2.ConnectError("connection refused", request=request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _BreakingStream(httpx2.AsyncByteStream):
    """A response body that delivers its first half, then loses the connection."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body[: len(self._body) // 2]
        raise httpx2.ReadError("connection reset by peer")


class BreakingTransport(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, but breaks the body of the next `breaks` responses whose path ends in `suffix`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, suffix: str, breaks: int = 1) -> None:
        self._inner = inner
        self._suffix = suffix
        self.breaks = breaks

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if self.breaks <= 0 or not request.url.path.endswith(self._suffix) or response.status_code != 200:
            return response
        self.breaks -= 1
        body = await response.aread()
        await response.aclose()
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx2.Response(200, headers=headers, stream=_BreakingStream(body), request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class DroppingTransport(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, but drops the connection of the next `drops` GETs of a batch's status."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, drops: int = 1) -> None:
        self._inner = inner
        self.drops = drops

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if self.drops > 0 and request.method == "GET" and "/batches/msgbatch_" in path and "/results" not in path:
            self.drops -= 1
            raise httpx2.ConnectError("connection reset by peer", request=request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def unreachable_api(
    error: type[httpx2.TransportError], *, cause: OSError | None = None, tried: list[str] | None = None
) -> httpx2.MockTransport:
    """A transport on which every request fails with `error` (raised from `cause`, the OS error beneath it, as a
    real transport does), as a refused connection, a dropped one or a silent server would. Each request's method and
    path is added to `tried`."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if tried is not None:
            tried.append(f"{request.method} {request.url.path}")
        raise error("the API is out of reach", request=request) from cause

    return httpx2.MockTransport(handler)


class RetryAfterDateTransport(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, rewriting any `retry-after` of the answers as an HTTP date (as RFC 9110 allows)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if "retry-after" in response.headers:
            response.headers["retry-after"] = "Wed, 21 Oct 2026 07:28:00 GMT"
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class TruncatingTransport(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, but ends the body of the next results download halfway, as a clean close."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner
        self.truncations = 1

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if self.truncations <= 0 or not request.url.path.endswith("/results") or response.status_code != 200:
            return response
        self.truncations -= 1
        body = await response.aread()
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx2.Response(200, headers=headers, content=body[: len(body) // 2], request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def route_of(request: httpx2.Request) -> str:
    """The emulator's name for the API route `request` calls (`batches.create`, `batches.results`, ...)."""
    method, parts = request.method, request.url.path.strip("/").split("/")
    if parts[:2] == ["v1", "models"] and method == "GET":
        return "models.list" if len(parts) == 2 else "models.retrieve"
    if parts[:2] != ["v1", "messages"]:
        return f"{method} {request.url.path}"
    rest = parts[2:]
    if not rest:
        return "messages.create"
    if rest == ["count_tokens"]:
        return "messages.count_tokens"
    if rest == ["batches"]:
        return "batches.create" if method == "POST" else "batches.list"
    if len(rest) == 2:
        return {"GET": "batches.retrieve", "DELETE": "batches.delete"}.get(method, f"{method} {request.url.path}")
    return {"results": "batches.results", "cancel": "batches.cancel"}.get(rest[2], f"{method} {request.url.path}")


@dataclass
class _Hook:
    route: str
    nth: int
    action: Callable[[], object]
    seen: int = 0


class Hooks:
    """Actions a scenario wants run just before the API serves a call: the n-th call of a route, or every one.

    They run in the caller's event loop, before the emulator sees the request, so they observe what the caller had
    committed (to its ledger, say) at the moment it called the API, and can change what the API will do.
    """

    def __init__(self) -> None:
        self._once: list[_Hook] = []
        self._every: list[_Hook] = []
        self._after: list[_Hook] = []
        self.rewrites: dict[str, Callable[[bytes], bytes]] = {}
        """How to change the body of every successful answer on a route, as a misbehaving API would."""

    def before(self, route: str, action: Callable[[], object], *, nth: int = 1) -> None:
        self._once.append(_Hook(route, nth, action))

    def before_every(self, route: str, action: Callable[[], object]) -> None:
        self._every.append(_Hook(route, 0, action))

    def after(self, route: str, action: Callable[[], object], *, nth: int = 1) -> None:
        """Run `action` once the API has served the n-th successful call of `route` (a create it committed, say),
        before the answer reaches the caller; `nth=0`: after every one."""
        self._after.append(_Hook(route, nth, action))

    async def fire(self, route: str, *, hooks: list[_Hook] | None = None) -> None:
        every = self._every if hooks is None else [hook for hook in hooks if hook.nth == 0]
        due: list[_Hook] = [hook for hook in every if hook.route == route]
        for hook in list(self._once if hooks is None else hooks):
            if hook.route == route and hook.nth:
                hook.seen += 1
                if hook.seen == hook.nth:
                    (self._once if hooks is None else hooks).remove(hook)
                    due.append(hook)
        for hook in due:
            result = hook.action()
            if inspect.isawaitable(result):
                await result

    async def fire_after(self, route: str) -> None:
        await self.fire(route, hooks=self._after)


class HookTransport(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, running the `hooks` armed for each one's route first."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, hooks: Hooks) -> None:
        self._inner = inner
        self._hooks = hooks

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        route = route_of(request)
        await self._hooks.fire(route)
        response = await self._inner.handle_async_request(request)
        if response.status_code < 400:
            await self._hooks.fire_after(route)
        rewrite = self._hooks.rewrites.get(route)
        if rewrite is None or response.status_code != 200:
            return response
        body = rewrite(await response.aread())
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx2.Response(200, headers=headers, content=body, request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


# -- durable batch mode ----------------------------------------------------------------------------------------------


def new_program_actor(w: World, name: str) -> Actor:
    """The actor `name` as a new program builds it: same configuration and ledger, its own client (and engine)."""
    configuration = w.actors[name].configuration
    # An actor given no client (one that reaches the API over a socket) builds its own in the new program too.
    client = w.client_over(w.transport()) if w.client is not None else None
    actor = Actor(configuration, client=client, clock=w.clock, registry=w.registry)

    async def close() -> None:
        try:
            await actor.aclose()
        except RuntimeError as exc:
            # Its client's connections belong to a program's event loop, closed with it: dropped, as when a
            # process exits.
            if "Event loop is closed" not in str(exc):
                raise

    w.cleanups.append(close)
    return actor


async def checked_models(actors: Iterable[Actor]) -> None:
    """Each actor made ready as in a process that has called before: its provider built (`Actor.ready`: the first
    time in a worker thread, real time that a scenario's manual clock does not count, so that one actor's first call
    could claim after another's window closed), then the pre-send checks of its model and settings (which ask the
    API's models endpoint once per model)."""
    for actor in actors:
        await (await actor.ready()).preflight(actor.request("-"))


def first_prompt(params: Mapping[str, Any]) -> str:
    """The first message's text of a stored request: Anthropic's params, or an OpenAI batch line's body (Responses
    `input` or Chat `messages`)."""
    body = params.get("body", params)
    messages = body.get("messages") or body.get("input")
    content = messages[0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def answer_to(w: World, label: str) -> ActorResponse[Any]:
    outcome = w.asked.get(label)
    assert isinstance(outcome, ActorResponse), f"{label!r} was not answered: {outcome!r}"
    return outcome


def committed(location: str) -> dict[str, list[dict[str, Any]]] | None:
    """The ledger's batches and requests (each in the state its rows and results give it) as another process would
    read them now, through a connection of its own: committed rows only. None before the ledger exists."""
    if location.startswith("postgres"):
        import psycopg
        from psycopg.rows import dict_row

        with psycopg.connect(location, autocommit=True) as db, db.cursor(row_factory=dict_row) as cursor:
            if cursor.execute("SELECT to_regclass('batches') AS t").fetchone() == {"t": None}:
                return None
            batches = cursor.execute("SELECT * FROM batches ORDER BY intent_at, id").fetchall()
            return {
                "batches": batches,
                "requests": cursor.execute("SELECT * FROM request_view ORDER BY created_at").fetchall(),
            }
    if location.startswith("folder:"):
        return _committed_through_store(location)
    if not Path(location).exists():
        return None
    connection = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    try:
        return {
            "batches": [dict(row) for row in connection.execute("SELECT * FROM batches ORDER BY rowid")],
            "requests": [dict(row) for row in connection.execute("SELECT * FROM request_view ORDER BY created_at")],
        }
    finally:
        connection.close()


def _committed_through_store(location: str) -> dict[str, list[dict[str, Any]]] | None:
    """`committed` of a store of another package (`-D store=folder`), which no SQL reads: through a store of its
    own on the ledger, as another process would read it."""
    import dataclasses

    from lowtide.ledger.store import open_ledger

    if not Path(location.removeprefix("folder:"), "tables.pickle").exists():
        return None
    store = open_ledger(location, own=True)
    try:

        def row(record: Any) -> dict[str, Any]:
            values = dataclasses.asdict(record)
            return {name: getattr(value, "value", value) for name, value in values.items()}

        batches = sorted(store.batches(), key=lambda b: (b.intent_at, b.id))
        return {
            "batches": [row(b) for b in batches],
            "requests": [row(r) for r in sorted(store.requests(), key=lambda r: r.created_at)],
        }
    finally:
        store.close()


def table_dict(context: Context) -> dict[str, str]:
    """A two-column table (`field`, `value`) as a dict."""
    return {row["field"]: row["value"] for row in context.table}


def check_fields(obj: Any, expected: dict[str, str]) -> None:
    for name, value in expected.items():
        actual = shown(getattr(obj, name))
        if value.endswith("..."):
            assert actual.startswith(value[:-3]), f"{name} is {actual!r}, not {value!r}"
        else:
            assert actual == value, f"{name} is {actual!r}, not {value!r}"


def hung_stacks() -> str:
    """Where every task of the running loop and every thread of the process waits: what a hung step reports."""
    lines: list[str] = []
    for task in asyncio.all_tasks():
        if task is asyncio.current_task():
            continue
        awaited: list[str] = []
        step: Any = task.get_coro()
        while step is not None and len(awaited) < 16:  # the coroutines each awaits, outermost first
            frame = getattr(step, "cr_frame", None) or getattr(step, "ag_frame", None)
            if frame is not None:
                awaited.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno} {frame.f_code.co_name}")
            step = getattr(step, "cr_await", None) or getattr(step, "ag_await", None)
        lines.append(f"task {task.get_name()}: " + " -> ".join(awaited))
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():  # pyright: ignore[reportPrivateUsage]
        stack = traceback.extract_stack(frame, limit=12)
        lines.append(f"thread {names.get(ident, ident)}: " + " <- ".join(
            f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack)
        ))  # fmt: skip
    return "\n".join(lines)


def run_cli(
    w: World,
    command: str,
    *,
    ledger: Path | None,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    terminal: bool = False,
) -> None:
    """`lowtide ...` in process, with `--ledger` after the subcommand unless the command names one or `ledger` is
    None (in `cwd`, when given; `stdin` piped in, or a terminal there with `terminal`); a crash is kept as the exit
    "code", not raised.

    The exit code and both outputs are kept where the command steps of demo_steps read them.
    """
    from lowtide.cli import main

    argv = shlex.split(command)
    assert argv[0] == "lowtide", argv
    args = argv[1:]
    if ledger is not None and "--ledger" not in args:
        args = [*args, "--ledger", str(ledger)]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    given = _Stdin(stdin or b"", terminal=terminal)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _stdin(given):
            try:
                code: int | str = main(args)
            except SystemExit as exit_:
                code = int(exit_.code or 0)
            except Exception as exc:
                code = f"crashed with {type(exc).__name__}: {exc}"
    finally:
        os.chdir(here)
    w.value = {"code": code, "out": out.getvalue(), "err": err.getvalue()}


class _Stdin(io.TextIOWrapper):
    """Standard input for a command run in process: bytes piped in, or a terminal with nothing typed."""

    def __init__(self, data: bytes, *, terminal: bool) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._terminal = terminal

    def isatty(self) -> bool:
        return self._terminal


@contextlib.contextmanager
def _stdin(stream: io.TextIOWrapper) -> Iterator[None]:
    previous = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = previous


def emulated_aws_credentials(w: World) -> None:
    """AWS credentials of no meaning in the environment for the rest of the scenario (the usual chain finds them; the
    emulator checks no signature), and no endpoint or profile of the machine's."""
    from lowtide.emulator.bedrock import CLIENT_ENVIRONMENT

    for variable, value in CLIENT_ENVIRONMENT.items():
        set_env(w, variable, value)


def set_env(w: World, variable: str, value: str | None) -> None:
    """Set (or with None, unset) a variable for the rest of the scenario; put back as it was afterwards."""
    previous = os.environ.get(variable)

    def restore() -> None:
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous

    w.cleanups.append(restore)
    if value is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = value


def remember_env(context: Context, variable: str) -> None:
    """Restore `variable` to what it was when the scenario ends."""
    set_env(world(context), variable, os.environ.get(variable))


class _Kept(logging.Handler):
    def __init__(self, into: list[logging.LogRecord], level: int) -> None:
        super().__init__(level)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


class _Backend(Protocol):
    """What dead_intent reads of a provider's batch backend."""

    @property
    def name(self) -> str: ...
    @property
    def endpoint(self) -> str: ...


def dead_intent(
    batch_id: str,
    backend: _Backend,
    member: tuple[str, str],
    request_bytes: int,
    owner: str,
    now: float,
    recorded: float,
) -> BatchIntent:
    """The intent a process recorded (at `recorded`) for one request before it died: its lease ended a second before
    `now`, so that the next process reconciles it."""
    return BatchIntent(
        batch_id,
        provider=backend.name,
        endpoint=backend.endpoint,
        members=[member],
        request_bytes=request_bytes,
        owner=owner,
        until=now - 1,
        now=recorded,
    )
