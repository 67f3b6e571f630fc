"""What a provider asked its API before sending (a model's description, a request's input tokens), asked once per
key in a process and kept: concurrent askers share one question, and one giving up does not cancel it for the
others. A provider's pre-send checks use it, so that thousands of calls cost one look-up."""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["AskedOnce", "Directories"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
C = TypeVar("C")


class AskedOnce(Generic[K, V]):
    """Answers by key, kept (at most `keep` of them: the oldest go first); a question under way is shared."""

    def __init__(self, keep: int = 10_000) -> None:
        self._keep = keep
        self._known: dict[K, V] = {}
        self._asking: dict[K, asyncio.Task[V]] = {}

    def known(self, key: K) -> bool:
        return key in self._known

    def get(self, key: K) -> V:
        return self._known[key]

    def keep(self, key: K, value: V) -> None:
        if len(self._known) >= self._keep:
            del self._known[next(iter(self._known))]
        self._known[key] = value

    async def ask(self, key: K, question: Callable[[], Awaitable[V]], *, kept: Callable[[V], bool]) -> V:
        """The answer for `key`: kept, or `question()` asked (once for concurrent askers); an answer is kept when
        `kept(answer)` says so (an answer meaning "cannot say now" is not)."""
        if key in self._known:
            return self._known[key]
        loop = asyncio.get_running_loop()
        task = self._asking.get(key)
        if task is None or task.done() or task.get_loop() is not loop:

            async def asked() -> V:
                answer = await question()
                if kept(answer):
                    self.keep(key, answer)
                return answer

            task = self._asking[key] = loop.create_task(asked())
            task.add_done_callback(lambda done: self._forget(key, done))
        # Shielded: one caller giving up must not cancel the question the others wait on.
        return await asyncio.shield(task)

    def _forget(self, key: K, done: asyncio.Task[V]) -> None:
        if self._asking.get(key) is done:
            del self._asking[key]


class Directories(Generic[C, V]):
    """What a provider knows of its endpoints' models (a directory each, made by `make(endpoint)`): one per endpoint
    and credential for the clients lowtide builds, shared by every actor with that key; one per client for a client
    lowtide did not build (an emulator's, say), which is an endpoint of its own and whose directory goes with it."""

    def __init__(self, make: Callable[[str], V]) -> None:
        self._make = make
        self._shared: dict[tuple[str, str], V] = {}
        self._injected: weakref.WeakKeyDictionary[C, V] = weakref.WeakKeyDictionary()

    def of(self, client: C, endpoint: str, *, owned: bool, credential: str) -> V:
        """The directory of `client`, which calls `endpoint` with `credential` (kept only as its hash)."""
        if not owned:
            directory = self._injected.get(client)
            if directory is None:
                directory = self._injected[client] = self._make(endpoint)
            return directory
        key = (endpoint, hashlib.sha256(credential.encode()).hexdigest())
        directory = self._shared.get(key)
        if directory is None:
            directory = self._shared[key] = self._make(endpoint)
        return directory

    def forget(self) -> None:
        """Forget what the endpoints of built clients said, as a new process would (for tests)."""
        self._shared.clear()
