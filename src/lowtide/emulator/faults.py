"""Injected failures: API calls that fail with a chosen HTTP status, and batch requests that end badly.
Tests arm them through `Emulator.faults`, or over a socket through the admin routes."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from lowtide.emulator.errors import ERROR_STATUS, ApiError, error_type_for_status
from lowtide.emulator.outcomes import Outcome, OutcomeKind, outcome_kind

__all__ = ["ROUTES", "Faults"]

ROUTES = (
    "messages.create",
    "batches.create",
    "batches.retrieve",
    "batches.list",
    "batches.cancel",
    "batches.delete",
    "batches.results",
)


@dataclass
class _Fault:
    status: int
    remaining: int
    retry_after: float | None
    message: str | None


class Faults:
    """Queued call failures per route, and standing outcomes per custom_id.

    Thread-safe, because in server mode a test thread arms faults while the server thread consumes them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, deque[_Fault]] = {}
        self._outcomes: dict[str, Outcome] = {}

    def fail_next(
        self,
        route: str,
        status: int,
        *,
        times: int = 1,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        """Make the next `times` calls to `route` answer `status` with the matching error body, before doing
        anything else. Faults queue up: arming two routes' or one route's faults twice runs them in order."""
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}; expected one of {', '.join(ROUTES)}")
        if not 400 <= status <= 599:
            raise ValueError(f"status must be an HTTP error status (400-599), not {status}")
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._calls.setdefault(route, deque()).append(_Fault(status, times, retry_after, message))

    def outcome(
        self,
        custom_id: str,
        kind: OutcomeKind,
        *,
        error_type: str = "invalid_request_error",
        message: str | None = None,
    ) -> None:
        """From now on, whenever a batch holding `custom_id` ends, that request ends as `kind` (until reset)."""
        kind = outcome_kind(kind)
        if error_type not in ERROR_STATUS:
            raise ValueError(f"unknown error type {error_type!r}")
        with self._lock:
            self._outcomes[custom_id] = Outcome(kind, error_type, message)

    def pending(self, route: str) -> int:
        """How many armed failures `route` has left."""
        with self._lock:
            return sum(fault.remaining for fault in self._calls.get(route, ()))

    def take(self, route: str) -> ApiError | None:
        """The failure this call to `route` must answer with, if one is armed; consumes it."""
        with self._lock:
            queue = self._calls.get(route)
            if not queue:
                return None
            fault = queue[0]
            fault.remaining -= 1
            if fault.remaining == 0:
                queue.popleft()
        headers = {"retry-after": _seconds(fault.retry_after)} if fault.retry_after is not None else {}
        return ApiError(error_type_for_status(fault.status), fault.message, status=fault.status, headers=headers)

    def outcome_for(self, custom_id: str) -> Outcome | None:
        with self._lock:
            return self._outcomes.get(custom_id)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()
            self._outcomes.clear()


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
