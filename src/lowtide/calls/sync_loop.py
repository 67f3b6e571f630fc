"""`SyncLoop`: the one event loop, in a thread of its own, that answers an actor's synchronous calls from any thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class SyncLoop:
    """An event loop kept running in a daemon thread. Calls from any number of threads run on it together (so eight
    threads' calls share the actor's providers, engine and batches, as eight tasks of one program would), each in
    its caller's context (its span the call's parent); a caller waits for its own answer only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """The result of `coroutine`, run on the loop; cancelled there if the caller is interrupted (Ctrl-C)."""
        loop = self._started()
        context = contextvars.copy_context()
        answer: concurrent.futures.Future[T] = concurrent.futures.Future()
        tasks: list[asyncio.Task[T]] = []

        def start() -> None:
            task = loop.create_task(coroutine, context=context)
            tasks.append(task)
            task.add_done_callback(lambda done: _settle(answer, done))

        loop.call_soon_threadsafe(start)
        try:
            return answer.result()
        except BaseException:
            if not answer.done():  # the caller gave up (KeyboardInterrupt): so does its call
                loop.call_soon_threadsafe(lambda: [task.cancel() for task in tasks])
            raise

    def close(self, last: Coroutine[Any, Any, object]) -> None:
        """Run `last` (the actor's closing) on the loop, started for it if need be, then stop and close the loop."""
        with self._lock:
            loop, thread = self._start()
            self._loop = self._thread = None
        try:
            asyncio.run_coroutine_threadsafe(last, loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            return self._start()[0]

    def _start(self) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
        """The loop and its thread, started now if they were not (the lock held)."""
        if self._loop is None or self._thread is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="lowtide-run-sync", daemon=True)
            self._thread.start()
        return self._loop, self._thread


def _settle(answer: concurrent.futures.Future[T], task: asyncio.Task[T]) -> None:
    if task.cancelled():
        answer.cancel()
    elif (error := task.exception()) is not None:
        answer.set_exception(error)
    else:
        answer.set_result(task.result())
