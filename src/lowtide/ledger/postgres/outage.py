"""How a PostgreSQL ledger rides through an outage of its server (a restart, a failover, a dropped connection): which
errors pass (`transient`), and work tried again, on a new connection, with exponential backoff and full jitter
(tenacity), for as long as the ledger waits out an outage (`Outage.seconds`: a minute unless its URL or
`$LOWTIDE_PG_OUTAGE_SECONDS` says otherwise), then a `LedgerError` naming the outage, never the password.

What is tried again is a whole operation, made anew (`steps`): one whose transaction was rolled back changed nothing,
and every operation of the store is written to be safe to repeat after a commit whose answer was lost, one that did
apply (docs/ledger.md, "Riding through an outage of the PostgreSQL server").
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception
from tenacity.wait import wait_random_exponential

from lowtide.errors import LedgerError
from lowtide.ledger.postgres.url import OUTAGE_ENV, OUTAGE_PARAMETER, redacted, scrub

__all__ = ["FIRST_WAIT", "LONGEST_WAIT", "Outage", "backoff", "said", "transient"]

T = TypeVar("T")

log = logging.getLogger("lowtide.ledger")

FIRST_WAIT = 0.05
"""The longest first wait after a transient error, in seconds: each wait is drawn between 0 and twice the last's
bound (full jitter), so that a hundred calls that failed together do not come back together."""
LONGEST_WAIT = 2.0
"""The bound the waits grow to: a server back from a restart is used within two seconds."""

_TRANSIENT_STATES = frozenset(
    {
        "57P01",  # admin_shutdown: terminating connection due to administrator command (a restart, a fast shutdown)
        "57P02",  # crash_shutdown: another server process crashed
        "57P03",  # cannot_connect_now: the database system is starting up, or shutting down
        "57P05",  # idle_session_timeout: the server ended a session idle too long
        "53300",  # too_many_connections: every process of a cluster reconnecting at once, just after a restart
        "25006",  # read_only_sql_transaction: a standby reached while a failover promotes another
    }
)
"""SQLSTATEs (besides class 08, the connection exceptions) that end a connection, or refuse one, for a while."""

_FOR_GOOD = (
    "authentication failed",
    "password",
    "pg_hba.conf",
    "does not exist",
    "permission denied",
    "not permitted",
    "certificate",
)
"""What a refused connection says when trying again cannot help (libpq gives a connection's failure no SQLSTATE):
a wrong password, an unknown database or role, a rule of the server's. Said at once, not after a minute."""
_MALFORMED = re.compile(
    r'invalid [\w" ]*value|invalid port number|could not match \d+ \w+ \w+ to|invalid ssl protocol|invalid when'
)
"""What libpq says of a URL it cannot use, before it reaches any server: a port that is no number or out of range
(`invalid integer value "x" for connection option "port"`, `invalid port number`), a setting's unknown value
(`invalid sslmode value: "x"`, target_session_attrs, channel_binding...), hosts and ports that do not pair up. A
malformed URL is said at once, when the ledger is first opened, not waited out as an outage."""


def backoff(tries: int) -> float:
    """The wait before the next try of something that tries until the server answers (a listener, a heartbeat), after
    `tries` failed: as `Outage` waits, drawn between 0 and a bound that doubles from `FIRST_WAIT` to `LONGEST_WAIT`."""
    return random.uniform(0, min(LONGEST_WAIT, FIRST_WAIT * 2 ** min(tries, 16)))


def transient(exc: BaseException) -> bool:
    """Whether `exc` ends a connection, or refuses one, for a reason that passes: the server restarting, shut down,
    starting up, failing over, a connection dropped or refused while the server is away, the pool (replaced after
    such an error) closed or out of connections in time. A wrong password, an unknown database, a statement the
    server refuses, are not."""
    from psycopg import InterfaceError, OperationalError
    from psycopg_pool import PoolClosed, PoolTimeout

    if isinstance(exc, PoolTimeout | PoolClosed | ConnectionError):
        return True
    state = getattr(exc, "sqlstate", None)
    if state is not None:
        return str(state).startswith("08") or state in _TRANSIENT_STATES
    if isinstance(exc, OperationalError | InterfaceError):
        # No SQLSTATE: a connection that failed on the client's side (refused, reset, closed, timed out) or one the
        # server refused before it would say why in a field of its own (libpq has only the message).
        said_ = str(exc).lower()
        return not (any(words in said_ for words in _FOR_GOOD) or _MALFORMED.search(said_))
    return False


def said(exc: BaseException, url: str, doing: str) -> LedgerError:
    """`exc` (psycopg's, the pool's, the network's) as the `LedgerError` a user reads: what could not be done and
    the ledger's URL, its password removed from both, and, when the ledger's tables are damaged or gone, to rebuild
    it."""
    detail = scrub(str(exc).strip() or type(exc).__name__, url)
    advice = _REBUILD.format(url=redacted(url)) if getattr(exc, "sqlstate", None) in _DAMAGE else ""
    return LedgerError(f"The PostgreSQL ledger at {redacted(url)} could not {doing}: {detail}{advice}")


_DAMAGE = frozenset({"XX001", "XX002", "42P01"})
"""What says the ledger's data is damaged (`data_corrupted`, `index_corrupted`) or its tables gone from under it
(`undefined_table`: dropped while a program ran)."""
_REBUILD = (
    ". Its tables are damaged or gone: do not start a new ledger and run your programs again (a new ledger has an"
    " identity of its own, so it would send, and pay for, again every request this one had sent); rebuild it from"
    " the providers' APIs instead: lowtide ledger rebuild --ledger {url} --actors ACTOR_FILE."
)


def _said_too(exc: BaseException) -> bool:
    """Whether `said` words `exc`: an error of the database's driver, its pool or the network (lowtide's own, as a
    `LedgerError` an operation raises, go on as they are)."""
    from psycopg import Error
    from psycopg_pool import PoolTimeout

    return isinstance(exc, Error | PoolTimeout | OSError)


class Outage:
    """How long one ledger's work waits out an outage of its server (`seconds`), and since when the server has been
    out of reach: said once when it goes and once when it is back, not by each call that waits, and counted from its
    start, not from each call's: once the server has been away `seconds`, work that meets it away fails at once,
    until it answers again."""

    def __init__(self, url: str, seconds: float) -> None:
        self.url = url
        """The ledger's URL as given: what messages name, its password redacted."""
        self.seconds = seconds
        self._since: float | None = None
        self._lock = threading.Lock()

    def call(self, doing: str, attempt: Callable[[float], T], *, wait_out: bool = True) -> T:
        """`attempt(patience)` (how long it may wait for a connection) until it returns, tried again after each
        transient error until the server has been out of reach for `seconds` (without `wait_out`: once more, on
        a new connection, at once: a stale connection is no outage); its errors said as `LedgerError`s."""
        started = time.monotonic()
        retrying = Retrying(
            retry=retry_if_exception(transient), stop=self._stop(started, wait_out), wait=_WAIT,
            before_sleep=self._gone, reraise=True,
        )  # fmt: skip
        try:
            result = retrying(lambda: attempt(self._patience(started, wait_out)))
        except Exception as exc:
            raise self._failed(exc, doing, started, retrying.statistics, wait_out=wait_out) from None
        self._back()
        return result

    async def call_async(self, doing: str, attempt: Callable[[float], Awaitable[T]], *, wait_out: bool = True) -> T:
        """`call`, the event loop going on while the server answers, or while it waits to try again."""
        started = time.monotonic()
        retrying = AsyncRetrying(
            retry=retry_if_exception(transient), stop=self._stop(started, wait_out), wait=_WAIT,
            before_sleep=self._gone, reraise=True,
        )  # fmt: skip

        async def once() -> T:
            return await attempt(self._patience(started, wait_out))

        try:
            result: T = await retrying(once)
        except Exception as exc:
            raise self._failed(exc, doing, started, retrying.statistics, wait_out=wait_out) from None
        self._back()
        return result

    def _out_for(self, started: float) -> float:
        """How long the server has been out of reach, as a call that began at `started` sees it: since the outage
        began, if it began before the call."""
        since = self._since
        return time.monotonic() - (started if since is None else min(since, started))

    def _stop(self, started: float, wait_out: bool) -> Callable[[RetryCallState], bool]:
        def stop(state: RetryCallState) -> bool:
            if not wait_out or self.seconds <= 0:
                return state.attempt_number >= _IMPATIENT_ATTEMPTS
            return self._out_for(started) >= self.seconds

        return stop

    def _patience(self, started: float, wait_out: bool) -> float:
        """How long an attempt may wait for a connection: what is left of the outage's time (a second at least),
        at most the pool's usual half minute."""
        if not wait_out:
            return _CHECKOUT_SECONDS
        return min(_CHECKOUT_SECONDS, max(1.0, self.seconds - self._out_for(started)))

    def _gone(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        with self._lock:
            if self._since is not None:
                return
            self._since = time.monotonic()
        detail = scrub(str(error).strip() or type(error).__name__, self.url)
        log.warning(
            "The PostgreSQL ledger at %s is out of reach (%s); its work waits and is tried again for up to %g s.",
            redacted(self.url), detail, self.seconds,
        )  # fmt: skip

    def _back(self) -> None:
        if self._since is not None:  # read without the lock: the usual case, nothing to say
            self._said_back()

    def _said_back(self) -> None:
        with self._lock:
            since, self._since = self._since, None
        if since is not None:  # not said already by another call that came back at the same moment
            log.warning("The PostgreSQL ledger at %s answers again, after %.1f s.", redacted(self.url),
                        time.monotonic() - since)  # fmt: skip

    def _failed(
        self, exc: Exception, doing: str, started: float, statistics: dict[str, object], *, wait_out: bool
    ) -> Exception:
        if not _said_too(exc):
            return exc
        if not (wait_out and self.seconds > 0 and transient(exc)):
            return said(exc, self.url, doing)
        tries = statistics.get("attempt_number", 1)
        detail = scrub(str(exc).strip() or type(exc).__name__, self.url)
        return LedgerError(
            f"The PostgreSQL ledger at {redacted(self.url)} could not {doing}: its server was out of reach for "
            f"{self._out_for(started):.1f} s, longer than the {self.seconds:g} s an outage is waited out "
            f"({OUTAGE_PARAMETER} in the URL, or ${OUTAGE_ENV}, sets it); tried {tries} times, the last error: "
            f"{detail}"
        )


_WAIT = wait_random_exponential(multiplier=FIRST_WAIT, max=LONGEST_WAIT)
_IMPATIENT_ATTEMPTS = 2
"""Attempts of work that does not wait out an outage: the second on a new connection (the pool replaced after the
first's transient error), so that a connection the server ended earlier does not fail it."""
_CHECKOUT_SECONDS = 30.0
"""The longest an attempt waits for a connection of the pool (psycopg_pool's own default)."""
