"""The seam between the emulator's core and the APIs it serves: an `Emulation` is one provider API (its routes, its
callers, its errors, its state), made on the `Shared` state every emulation uses (clock, settings, faults, call
counts, rate limits, prompt cache, state file). The emulator is composed of the emulations the `lowtide.emulators`
entry-point group names, each a class: adding a provider's API is a folder `emulator/<name>/` with an `Emulation`
subclass, and one entry point."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any, ClassVar

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.http import Handler, error_response
from lowtide.emulator.core.ratelimits import Quotas
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.core.state import StateFile

__all__ = [
    "ENTRY_POINT_GROUP",
    "Emulation",
    "EmulationError",
    "ErrorHandler",
    "RouteRow",
    "Shared",
    "installed_emulations",
    "load_emulations",
]

ENTRY_POINT_GROUP = "lowtide.emulators"

RouteRow = tuple[str, str, str, Handler]
"""One route of an emulation: its path, its method, its name (what `calls` counts and faults are armed by) and its
handler."""

ErrorHandler = Callable[[Request, Exception], Response]


class EmulationError(Exception):
    """An emulation that cannot be loaded or composed: an entry point that fails to import or names no `Emulation`,
    two emulations of one name, or an emulation asked for that is not installed."""


class Shared:
    """What every emulation of one emulator shares: its clock and settings, the faults armed, the calls counted by
    route name, the live rate limits, the prompt cache, and the state file, which `save` writes whole (the shared
    part, then each emulation's `saved()` sections)."""

    def __init__(self, clock: Clock, settings: Settings, state_file: StateFile | None = None) -> None:
        self.clock = clock
        self.settings = settings
        self.state_file = state_file
        self.faults = Faults(on_outcomes=self.save)
        self.calls: Counter[str] = Counter()
        self.quotas = Quotas(settings.rate_limits)
        self.cache = PromptCache()
        self.emulations: tuple[Emulation, ...] = ()

    def reset(self) -> None:
        """Forget the calls, faults and prompt cache, and what every emulation holds; then say so in the state file.
        In place, so that tests holding `calls` or `faults` keep seeing the live objects."""
        self.faults.clear()
        self.calls.clear()
        self.cache.clear()
        for emulation in self.emulations:
            emulation.reset()
        self.save()

    def save(self) -> None:
        """Write the state file, if there is one."""
        if self.state_file is not None:
            self.state_file.write(
                calls=dict(self.calls),
                outcomes=self.faults.outcomes(),
                cache=self.cache.entries(),
                sections=[emulation.saved() for emulation in self.emulations],
            )


class Emulation(ABC):
    """One provider API as the emulator serves it. Subclasses name themselves (`name`: their stats' and state file's
    sections, the entry point's name) and their routes (`route_names`: every name `routes()` gives, which faults may
    be armed for), and give their routes; the rest has defaults.

    Paths that several emulations serve (`/v1/files`, `/v1/models`) go to the emulation that `claims` the caller's
    headers (a header only its SDK sends), else to the one that is the `default_caller` (an API whose clients send
    nothing of their own: OpenAI's bearer key). The same choice answers routing errors and crashes (`error_response`)
    in the shape of the API the caller speaks."""

    name: ClassVar[str]
    route_names: ClassVar[tuple[str, ...]]
    default_caller: ClassVar[bool] = False

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    @abstractmethod
    def routes(self) -> Sequence[RouteRow]:
        """Every route, in the order they are matched."""

    def fallback_routes(self) -> Sequence[RouteRow]:
        """Routes for a call no other route matched, not even by path: a path that would take any other API's path for
        its own (S3's path-style `/{bucket}/{key}`), served to the callers `takes_fallback` says. None by default."""
        return ()

    def takes_fallback(self, headers: Headers, path: str) -> bool:
        """Whether a call no route matched goes to this emulation's `fallback_routes`: by default, its callers'."""
        return self.claims(headers)

    @abstractmethod
    def begin(self, request: Request) -> None:
        """Check what the API asks of every call before it does anything (its key, its headers); raise its error."""

    def claims(self, headers: Headers) -> bool:
        """Whether a caller sending `headers` is certainly this API's client."""
        return False

    def translate(self, error: ApiError) -> Exception:
        """An error of the emulator's own vocabulary (a fault, a body too large or not JSON, a rate limit) as this API
        answers it; by default as it is."""
        return error

    def answer_headers(self, request: Request) -> dict[str, str]:
        """Headers every answer of this API's routes carries (beyond `request-id`, which every answer has)."""
        return {}

    def error_response(self, request: Request, error: Exception) -> Response:
        """A routing error (`HTTPException`) or a crash met by this API's caller, in its error shape."""
        return error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        """How the errors of this API's own vocabulary are answered, by exception class."""
        return {}

    webhook_secret_env: ClassVar[str | None] = None
    """The variable the API's own receivers read the secret its webhooks are signed with from (`lowtide emulator
    --webhook NAME=URL` signs with it); None: it sends none."""

    def add_webhook(self, url: str, secret: str) -> None:
        """Send this API's webhooks (a batch's end) to `url`, signed with `secret` as the API signs them; ValueError
        when it sends none, or `url` or `secret` is not one. By default it sends none."""
        raise ValueError(f"the emulated {self.name} API sends no webhooks")

    def started(self) -> None:
        """Called on the event loop that serves it, when its app starts and before each of its calls: what it restored
        and must run on that loop (a batch's webhooks waiting for its end) starts here. By default nothing."""
        return

    def webhook_jwks(self) -> Mapping[str, object] | None:
        """The JWKS its per-job webhooks' tokens are verified with (`GET /_emulator/jwks/<name>`, in place of the API's
        own address); None: it signs none so."""
        return None

    def stats(self) -> Mapping[str, object]:
        """Its counters, for `GET /_emulator/stats`."""
        return {}

    def reset(self) -> None:
        """Forget what it holds (`Emulator.reset`), in place; by default it holds nothing of its own."""
        return

    def saved(self) -> Mapping[str, str]:
        """Its sections of the state file: top-level key -> JSON text. None of them when it has nothing to keep."""
        return {}

    def restore(self, document: Mapping[str, Any]) -> None:
        """Take back what `saved()` wrote, from the whole state file's `document`; ValueError, TypeError or KeyError
        when it cannot. By default there is nothing to take back."""
        return


def load_emulations(eps: Iterable[EntryPoint] | None = None) -> tuple[type[Emulation], ...]:
    """The `Emulation` classes the entry points name (by default the `lowtide.emulators` group's), by entry point
    name. `EmulationError` naming the entry point that fails to load or names something else."""
    loaded: list[type[Emulation]] = []
    names: set[str] = set()
    found = eps if eps is not None else entry_points(group=ENTRY_POINT_GROUP)
    for ep in sorted(found, key=lambda ep: ep.name):
        try:
            kind: object = ep.load()
        except Exception as error:
            raise EmulationError(f"the emulation {ep.name!r} ({ep.value}) could not be loaded: {error}") from error
        if not (isinstance(kind, type) and issubclass(kind, Emulation)):
            raise EmulationError(f"the emulation {ep.name!r} ({ep.value}) is not an Emulation class")
        if kind.name in names:
            raise EmulationError(f"two emulations are named {kind.name!r}")
        names.add(kind.name)
        loaded.append(kind)
    return tuple(loaded)


@functools.cache
def installed_emulations() -> tuple[type[Emulation], ...]:
    """The emulations installed in the `lowtide.emulators` entry-point group, loaded once."""
    return load_emulations()
