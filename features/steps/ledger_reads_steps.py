"""Steps that count how often the ledger is asked about requests: thousands of calls at once must not each make a
read of their own (on a remote store each would take a connection from a small pool)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

from _support import world
from step_context import Context, given, then

_READS = ("request", "requests_for")


@given("the ledger's reads of requests are counted")
def step_count_reads(context: Context) -> None:
    """Counted where the engine reads: a store's own async face (PostgreSQL's), else the local store's methods its
    inline face calls."""
    w = world(context)
    ledger = w.ledger()
    reads = Counter[str]()
    w.witnessed["ledger reads"] = [reads]
    if hasattr(ledger, "asynchronous"):
        from lowtide.ledger.postgres.aio import AsyncPostgresLedger as face

        for method in _READS:
            real_async = getattr(face, method)

            def counted_async(real: Callable[..., Any], name: str) -> Callable[..., Any]:
                @functools.wraps(real)
                async def read(self: Any, *args: Any, **kwargs: Any) -> Any:
                    reads[name] += 1
                    return await real(self, *args, **kwargs)

                return read

            setattr(face, method, counted_async(real_async, method))
            w.cleanups.append(functools.partial(setattr, face, method, real_async))
        return
    for method in _READS:
        real = getattr(ledger, method)

        def counted(real: Callable[..., Any], name: str) -> Callable[..., Any]:
            def read(*args: Any, **kwargs: Any) -> Any:
                reads[name] += 1
                return real(*args, **kwargs)

            return read

        setattr(ledger, method, counted(real, method))
        w.cleanups.append(functools.partial(setattr, ledger, method, real))


@then("the ledger was asked about the calls' keys in at most {most:d} reads")
def step_reads_at_most(context: Context, most: int) -> None:
    [reads] = world(context).witnessed["ledger reads"]
    total = sum(reads.values())
    assert 0 < total <= most, f"the ledger was read {total} times ({dict(reads)}), expected 1 to {most}"


@given("the ledger cannot be read for requests")
def step_unreadable(context: Context) -> None:
    """Every read of requests fails, as a disk or a server that went away would make it."""
    w = world(context)
    ledger = w.ledger()
    if hasattr(ledger, "asynchronous"):
        from lowtide.ledger.postgres.aio import AsyncPostgresLedger as face

        for method in _READS:
            real_async = getattr(face, method)

            async def failing_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                raise OSError("the server went away")

            setattr(face, method, failing_async)
            w.cleanups.append(functools.partial(setattr, face, method, real_async))
        return
    for method in _READS:
        real = getattr(ledger, method)

        def failing(*args: Any, **kwargs: Any) -> Any:
            raise OSError("the disk went away")

        setattr(ledger, method, failing)
        w.cleanups.append(functools.partial(setattr, ledger, method, real))


@then('every call failed with an {name:w} saying "{text}"')
def step_every_call_failed(context: Context, name: str, text: str) -> None:
    asked = world(context).asked
    assert asked, "no call was made"
    for key, outcome in asked.items():
        assert type(outcome).__name__ == name, f"{key}: {outcome!r}"
        assert text in str(outcome), f"{key}: {outcome}"
