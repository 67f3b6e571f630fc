"""`Cached`: what the dashboard's views computed, kept and handed out again, so that a ledger of a million requests is
read a few times a minute however many browsers poll it, and no page ever waits for a count it has already made.

A value is fresh for `ttl` seconds, and for at least `SPAN` times as long as computing it took (a view that costs
2 s of a core is made again at most every 10 s). Once stale it is still handed out, at once, while one thread of
the cache's makes the next (stale-while-revalidate): only the first reader of a name waits for it, and readers
arriving meanwhile wait for that same computation rather than starting their own. A value quick to compute (under
`QUICK`: a small ledger) is computed again by the reader that finds it stale, so that small ledgers are shown as
they are now. A value whose `final` says it can
no longer change is kept until its `version` does (a finished run, until it is retried), and is then stale as well.
A background computation that fails drops the value, so that the next reader computes it again and is told why.

`within` is `get` for a page that must not wait: every computation is made in the background and waited for only
`patience` seconds; past that the reader gets the value as it was, or, for a name never computed, is told it is not
counted yet (`NOT_YET`) and comes back later. So even the first page over a ledger of a million requests is answered
at once, and a quick count never waits behind a slow one that holds the same connection.
"""

from __future__ import annotations

import enum
import logging
import math
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

__all__ = ["NOT_YET", "QUICK", "SPAN", "Cached", "NotYet"]

T = TypeVar("T")
SPAN = 5.0
"""A value stays fresh at least this many times as long as it took to compute."""
QUICK = 0.05
"""A stale value that took less than this many seconds to compute is computed again by its reader, not handed out."""

_log = logging.getLogger("lowtide.dashboard")


class NotYet(enum.Enum):
    """What `Cached.within` gives for a value still being computed for the first time."""

    NOT_YET = "not counted yet"


NOT_YET = NotYet.NOT_YET


@dataclass
class _Entry(Generic[T]):
    computing: threading.Lock = field(default_factory=threading.Lock)
    """Held while this name is being computed: one computation of a name at a time."""
    value: T | None = None
    known: bool = False
    version: Hashable = None
    until: float = -math.inf
    at: float = 0.0
    took: float = 0.0
    refreshing: bool = False
    started: float = 0.0
    """When the latest background computation of this name began (`time.monotonic`)."""
    settled: threading.Event = field(default_factory=threading.Event)
    """Set when the latest background computation of this name has ended, well or not (what `within` waits on)."""
    failed: Exception | None = None
    """Why the last background computation of a name with no value failed, for its next reader."""


def _in_a_thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="lowtide-dashboard-refresh", daemon=True).start()


class Cached:
    """Values by name, each computed by the callable its reader gives (a name is always given one kind of value)."""

    def __init__(
        self,
        ttl: float,
        *,
        clock: Callable[[], float] = time.time,
        background: Callable[[Callable[[], None]], None] = _in_a_thread,
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self._background = background
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry[object]] = {}

    def get(
        self, name: str, compute: Callable[[], T], *, version: Hashable = None, final: Callable[[T], bool] | None = None
    ) -> T:
        """The value of `name`: computed here when there is none yet; as kept while fresh; once stale (past its time,
        or made for another `version`), computed here again if that is quick, else as kept while it is made again in
        the background."""
        with self._lock:
            entry = self._entries.setdefault(name, _Entry())
            stale = entry.version != version or entry.until <= self.clock()
            if entry.known and (not stale or entry.took >= QUICK or entry.refreshing):
                if stale and not entry.refreshing:
                    entry.refreshing = True
                    entry.settled = threading.Event()
                    entry.started = time.monotonic()
                    self._background(lambda: self._refresh(name, entry, compute, version, final))
                return cast("T", entry.value)  # stored by `_compute` for this name: a T
        with entry.computing:
            with self._lock:
                if entry.known and entry.version == version and entry.until > self.clock():  # made meanwhile
                    return cast("T", entry.value)
            return self._compute(entry, compute, version, final)

    def within(
        self,
        name: str,
        compute: Callable[[], T],
        patience: float,
        *,
        version: Hashable = None,
        final: Callable[[T], bool] | None = None,
    ) -> T | NotYet:
        """As `get`, for a reader that must not wait longer than `patience` seconds: every computation is made in
        the background. A fresh value is given at once; a stale one that was slow to compute at once too (as `get`
        gives it); a stale one that was quick is waited for until `patience` after its computation began, else given
        as it was; a value never computed (or dropped by a failure) likewise, else `NOT_YET`. A computation that
        failed in the background for a name with no value is raised here, to the next reader, once."""
        with self._lock:
            entry = self._entries.setdefault(name, _Entry())
            stale = entry.version != version or entry.until <= self.clock()
            if entry.known and not stale:
                return cast("T", entry.value)  # stored by `_compute` for this name: a T
            if not entry.known:
                failed, entry.failed = entry.failed, None
                if failed is not None:
                    raise failed
            if not entry.refreshing:
                entry.refreshing = True
                entry.settled = threading.Event()
                entry.started = time.monotonic()
                self._background(lambda: self._refresh(name, entry, compute, version, final))
            settled = entry.settled
            # Waited for until `patience` after it started: a reader arriving while a long count goes on is not
            # held for it again.
            wait = entry.started + patience - time.monotonic() if not entry.known or entry.took < QUICK else 0.0
        if wait > 0:
            settled.wait(wait)
        with self._lock:
            return cast("T", entry.value) if entry.known else NOT_YET

    def computed_at(self, name: str) -> float | None:
        """When the value of `name` handed out now started to be computed (what it counts is as of then)."""
        with self._lock:
            entry = self._entries.get(name)
            return entry.at if entry is not None and entry.known else None

    def _compute(
        self, entry: _Entry[object], compute: Callable[[], T], version: Hashable, final: Callable[[T], bool] | None
    ) -> T:
        started = self.clock()
        value = compute()
        done = self.clock()
        with self._lock:
            entry.value, entry.known, entry.version, entry.at, entry.took = (
                value,
                True,
                version,
                started,
                done - started,
            )
            kept = final is not None and final(value)
            entry.until = math.inf if kept else done + max(self.ttl, SPAN * (done - started))
            entry.failed = None
        return value

    def _refresh(
        self,
        name: str,
        entry: _Entry[object],
        compute: Callable[[], T],
        version: Hashable,
        final: Callable[[T], bool] | None,
    ) -> None:
        try:
            with entry.computing:
                self._compute(entry, compute, version, final)
        except Exception as error:
            _log.exception("The dashboard could not count %s again; the next reader will try", name)
            with self._lock:
                entry.known, entry.value, entry.failed = False, None, error
        finally:
            with self._lock:
                entry.refreshing = False
                entry.settled.set()
