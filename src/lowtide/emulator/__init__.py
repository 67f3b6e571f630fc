"""An offline, faithful Anthropic API (Messages, token counting, Message Batches, Files and Models) and OpenAI API
(Files, Batches, Responses, Chat Completions, Embeddings) for lowtide's tests and demos.

`Emulator` serves them to the real `anthropic` and `openai` SDKs in process; `lowtide.emulator.server` serves them on
one socket.
"""

from __future__ import annotations

from lowtide.emulator.batches import BatchSnapshot
from lowtide.emulator.emulator import Emulator
from lowtide.emulator.faults import ROUTES, Faults
from lowtide.emulator.ratelimits import Latency, RateLimits
from lowtide.emulator.schema import generate_instance
from lowtide.emulator.server import RunningServer, serve_in_thread
from lowtide.emulator.state import StateFileError

__all__ = [
    "ROUTES",
    "BatchSnapshot",
    "Emulator",
    "Faults",
    "Latency",
    "RateLimits",
    "RunningServer",
    "StateFileError",
    "generate_instance",
    "serve_in_thread",
]
