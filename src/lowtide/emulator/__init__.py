"""An offline, faithful Anthropic API (Messages, token counting, Message Batches, Files and Models) and OpenAI API
(Files, Batches, Responses, Chat Completions, Embeddings) for lowtide's tests and demos.

`Emulator` serves them to the real `anthropic` and `openai` SDKs in process; `lowtide.emulator.server` serves them on
one socket. Each API is an emulation (`emulator/<name>/`: an `Emulation` subclass, made on the `Shared` state, giving
its `RouteRow`s), composed from the `lowtide.emulators` entry-point group; a plugin package ships one the same way.
"""

from __future__ import annotations

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
from lowtide.emulator.core.ratelimits import Latency, RateLimits
from lowtide.emulator.core.schema import generate_instance
from lowtide.emulator.core.state import StateFileError
from lowtide.emulator.emulator import Emulator
from lowtide.emulator.server import RunningServer, serve_in_thread

__all__ = [
    "ROUTES",
    "ApiError",
    "BatchSnapshot",
    "Emulation",
    "EmulationError",
    "Emulator",
    "ErrorHandler",
    "Faults",
    "Latency",
    "RateLimits",
    "RouteRow",
    "RunningServer",
    "Shared",
    "StateFileError",
    "generate_instance",
    "serve_in_thread",
]

ROUTES: tuple[str, ...] = tuple(name for kind in installed_emulations() for name in kind.route_names)
"""Every route name faults may be armed for, of every installed emulation."""
