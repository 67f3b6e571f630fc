"""The process's engines: one per event loop, ledger, provider, endpoint, credential and batch settings."""

from __future__ import annotations

import asyncio
import weakref

from lowtide.batching.backend import BatchBackend
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.config.settings import BatchSettings
from lowtide.core.clock import Clock
from lowtide.ledger.store import (
    LedgerStore,
)

__all__ = ["close_engines_of", "engine_for"]

# Per event loop (weakly: an engine's tasks and futures belong to its loop, and a new loop may reuse a dead one's
# id), then per ledger, provider, endpoint, credential and batch settings. The provider is part of it: two providers
# may sit behind one address with one key (`lowtide emulator`, a gateway serving several APIs), and an engine sends
# every request it is given through its own backend, to its own API.
_engines: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[int, str, str, str, BatchSettings], BatchEngine]
] = weakref.WeakKeyDictionary()


def engine_for(backend: BatchBackend, ledger: LedgerStore, *, settings: BatchSettings, clock: Clock) -> BatchEngine:
    """The process's engine for this event loop, ledger, provider, endpoint, credential and batch settings.

    Actors that share all of these share one engine, so their concurrent calls travel in the same batches.
    """
    engines = _engines.setdefault(asyncio.get_running_loop(), {})
    # The ledger object itself, not its `location`: stores in memory all say "memory", and a file's ledger closed
    # and opened again is a new object. (`open_ledger` gives one object per file; the engine holds it, so its id is
    # not reused while the entry lives.)
    index = (id(ledger), backend.name, backend.endpoint, backend.credential, settings)
    engine = engines.get(index)
    if engine is None or engine.closed:
        engine = engines[index] = BatchEngine(
            backend, ledger, endpoint=backend.endpoint, settings=settings, clock=clock
        )
    return engine


async def close_engines_of(backend: BatchBackend) -> None:
    """Close and forget the engines that use `backend` (its actor is closing); others build a new one."""
    engines = _engines.get(asyncio.get_running_loop(), {})
    for index, engine in list(engines.items()):
        if engine.backend is backend:
            del engines[index]
            await engine.aclose()
