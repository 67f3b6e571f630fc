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
        self._dropped = threading.Event()
        """Set when the loop was dropped (its thread closes it) rather than closed by `close`."""

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

    def drop(self) -> None:
        """Wind the loop down without waiting, from any thread (its actor was collected unclosed): what still runs on
        it is cancelled, its async generators and executor shut down, then the loop stops and its thread closes it."""
        with self._lock:
            loop, self._loop, self._thread = self._loop, None, None
            if loop is None or loop.is_closed():
                return
            self._dropped.set()
        loop.call_soon_threadsafe(lambda: loop.create_task(_wind_down(loop)))

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            return self._start()[0]

    def _start(self) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
        """The loop and its thread, started now if they were not (the lock held)."""
        if self._loop is None or self._thread is None:
            self._loop, self._dropped = asyncio.new_event_loop(), threading.Event()
            serve = (self._loop, self._dropped)
            self._thread = threading.Thread(target=_serve, args=serve, name="lowtide-run-sync", daemon=True)
            self._thread.start()
        return self._loop, self._thread


def _settle(answer: concurrent.futures.Future[T], task: asyncio.Task[T]) -> None:
    if task.cancelled():
        answer.cancel()
    elif (error := task.exception()) is not None:
        answer.set_exception(error)
    else:
        answer.set_result(task.result())


def _serve(loop: asyncio.AbstractEventLoop, dropped: threading.Event) -> None:
    """The thread's work: the loop until it is stopped; closed here when it was dropped (`close` closes it itself)."""
    loop.run_forever()
    if dropped.is_set():
        loop.close()


async def _wind_down(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the loop's other tasks and wait for them, shut its async generators and executor down, stop it."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()
    loop.stop()
