"""An offline, faithful Anthropic API (Messages, token counting, Message Batches, Files and Models) and OpenAI API
(Files, Batches, Responses, Chat Completions, Embeddings) for lowtide's tests and demos.

`Emulator` serves them to the real `anthropic` and `openai` SDKs in process; `lowtide.emulator.server` serves them on
one socket. Each API is an emulation (`emulator/<name>/`: an `Emulation` subclass, made on the `Shared` state, giving
its `RouteRow`s), composed from the `lowtide.emulators` entry-point group; a plugin package ships one the same way,
from what this package exports: `Emulation`, `Shared`, `RouteRow`, `ErrorHandler`, `ApiError`, and for its handlers
`Handler`, `Answer` (a JSON object, a `Streamed` body or a `Headed` one) and `read_json`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.emulator.anthropic.batches import BatchSnapshot
from lowtide.emulator.core.emulation import (
    Emulation,
    EmulationError,
    ErrorHandler,
    RouteRow,
    Shared,
    installed_emulations,
)
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.http import Answer, Handler, Headed, Streamed, read_json
from lowtide.emulator.core.ratelimits import Latency, RateLimits
from lowtide.emulator.core.schema import generate_instance
from lowtide.emulator.core.state import StateFileError
from lowtide.emulator.emulator import Emulator

if TYPE_CHECKING:
    from lowtide.emulator.server import RunningServer, serve_in_thread

    ROUTES: tuple[str, ...]

# `ROUTES` too (`__getattr__`): every route name faults may be armed for, of every installed emulation.
__all__ = [
    "Answer",
    "ApiError",
    "BatchSnapshot",
    "Emulation",
    "EmulationError",
    "Emulator",
    "ErrorHandler",
    "Faults",
    "Handler",
    "Headed",
    "Latency",
    "RateLimits",
    "RouteRow",
    "RunningServer",
    "Shared",
    "StateFileError",
    "Streamed",
    "generate_instance",
    "read_json",
    "serve_in_thread",
]


def __getattr__(name: str) -> object:
    """`ROUTES`: every route name faults may be armed for, of every installed emulation. Read when first asked for,
    not on import: importing the emulator loads no plugin (an emulation that fails to load fails the emulator made
    with it, with its `EmulationError`, not every import). `RunningServer` and `serve_in_thread` likewise: the
    socket's server (uvicorn) is loaded only by a program that serves on one, not by the in-process emulator."""
    if name == "ROUTES":
        return tuple(route for kind in installed_emulations() for route in kind.route_names)
    if name in ("RunningServer", "serve_in_thread"):
        from lowtide.emulator import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
