"""The journal asked from the event loop: a store that answers at once (a file, memory) inline, one across the
network (PostgreSQL, any store with an async face of its own) from a thread, so that the loop never waits a round
trip while other runs' calls are in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore

__all__ = ["ask"]

T = TypeVar("T")


async def ask(store: LedgerStore, call: Callable[[], T]) -> T:
    if callable(getattr(store, "asynchronous", None)):
        return await asyncio.to_thread(call)
    return call()
