"""Injected failures: API calls that fail with a chosen HTTP status, answers lost or held back after the call did its
work, slow answers, downloads cut off part way, batch requests that end badly, and result lines a client cannot read.
Tests arm them through `Emulator.faults`, or over a socket through the admin routes.

A call's faults are armed by its route's name (`batches.create`, `openai.files.content`: the names the emulations
give their routes, which the emulator tells `Faults` as it composes them); a batch request's by its custom id, for
whichever emulation's batch holds it."""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from lowtide.emulator.core.errors import ERROR_STATUS, ApiError, error_type_for_status
from lowtide.emulator.core.outcomes import Outcome, OutcomeKind, outcome_kind

__all__ = ["GARBLE_KINDS", "AfterCommit", "Faults", "GarbleKind", "garble_kind", "garbled_line"]

GarbleKind = Literal["bad-json", "not-utf8", "unknown-shape", "lone-surrogate", "not-an-object"]
"""How a garbled result line is wrong: JSON cut off mid-line (then a newline), bytes that are not UTF-8 in its text,
a shape the API does not have, an unpaired surrogate (`\\ud800`) escaped in its text, or the whole line inside a JSON
array (valid JSON, not an object)."""
GARBLE_KINDS: tuple[GarbleKind, ...] = get_args(GarbleKind)


def garble_kind(value: object) -> GarbleKind:
    """`value` as a kind of garbled line; ValueError naming the kinds when it is none."""
    for kind in GARBLE_KINDS:
        if value == kind:
            return kind
    raise ValueError(f"unknown kind of garbled line {value!r}; expected one of {', '.join(GARBLE_KINDS)}")


@dataclass
class _Fault:
    status: int
    remaining: int
    retry_after: float | None
    message: str | None


@dataclass(frozen=True)
class AfterCommit:
    """What happens to an answer once its call has done its work: it is lost (`drop`), the connection closing
    without it, or it is sent `seconds` late (`delay`)."""

    kind: Literal["drop", "delay"]
    seconds: float = 0.0


@dataclass
class _Queued:
    action: AfterCommit
    remaining: int


@dataclass
class _Cut:
    after_lines: int
    remaining: int


@dataclass
class _Slow:
    seconds: float
    remaining: int | None


class Faults:
    """Queued call failures and after-commit faults per route, slow routes, and standing outcomes per custom_id.

    Thread-safe, because in server mode a test thread arms faults while the server thread consumes them.
    `on_outcomes` is called after `outcome` arms a standing outcome, which the emulator's state file records.
    `routes` are the route names faults may be armed for (`know` adds more).
    """

    def __init__(self, on_outcomes: Callable[[], None] = lambda: None, routes: Iterable[str] = ()) -> None:
        self._routes: tuple[str, ...] = tuple(routes)
        self._lock = threading.Lock()
        self._calls: dict[str, deque[_Fault]] = {}
        self._after_commit: dict[str, deque[_Queued]] = {}
        self._slow: dict[str, _Slow] = {}
        self._outcomes: dict[str, Outcome] = {}
        self._lost: set[str] = set()
        self._garbled: dict[str, GarbleKind] = {}
        self._cuts: dict[str, deque[_Cut]] = {}
        self._on_outcomes = on_outcomes

    @property
    def routes(self) -> tuple[str, ...]:
        """The route names faults may be armed for, in the order the emulations gave them."""
        return self._routes

    def know(self, routes: Iterable[str]) -> None:
        """Let faults be armed for `routes` too (the route names of an emulation)."""
        self._routes = (*self._routes, *(route for route in routes if route not in self._routes))

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
        self._check_route(route)
        if not 400 <= status <= 599:
            raise ValueError(f"status must be an HTTP error status (400-599), not {status}")
        _check_times(times)
        with self._lock:
            self._calls.setdefault(route, deque()).append(_Fault(status, times, retry_after, message))

    def drop_after_commit(self, route: str = "batches.create", *, times: int = 1) -> None:
        """Make the next `times` calls to `route` that succeed do their work (a create commits its batch, which
        is then listed and processed) and then lose their answer: the connection closes without a response,
        which the SDK reports as `APIConnectionError`. Queued with `delay_after_commit`, in order."""
        self._queue_after_commit(route, AfterCommit("drop"), times)

    def delay_after_commit(self, route: str = "batches.create", *, seconds: float, times: int = 1) -> None:
        """Make the next `times` calls to `route` that succeed do their work, then wait `seconds` before
        answering as usual: on the emulator clock in process, in real time over a socket."""
        self._queue_after_commit(route, AfterCommit("delay", _check_seconds(seconds)), times)

    def slow(self, route: str, *, seconds: float, times: int | None = None) -> None:
        """Make every successful call to `route` (or the next `times` of them) answer slowly: `seconds` before
        each line of a results file, before each event of a streamed message, before the whole body of any
        other answer. Replaces an earlier `slow` of the route; `seconds=0` ends it."""
        self._check_route(route)
        seconds = _check_seconds(seconds)
        if times is not None:
            _check_times(times)
        with self._lock:
            if seconds == 0:
                self._slow.pop(route, None)
            else:
                self._slow[route] = _Slow(seconds, times)

    def slow_results(self, seconds_per_line: float, *, times: int | None = None) -> None:
        """`slow("batches.results", ...)`: results files stream one line every `seconds_per_line`."""
        self.slow("batches.results", seconds=seconds_per_line, times=times)

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
        self._on_outcomes()

    def lose(self, custom_id: str) -> None:
        """From now on, whenever an OpenAI batch holding `custom_id` ends, that request is written to neither its
        output nor its error file, though counted as completed (until reset): a fault for testing how a client
        notices a request that never came back."""
        with self._lock:
            self._lost.add(custom_id)
        self._on_outcomes()

    def garble(self, custom_id: str, kind: GarbleKind) -> None:
        """From now on, whenever a batch holding `custom_id` ends (either provider's), that request's result line is
        one a client cannot read as an answer, of `kind` (`GARBLE_KINDS`), until reset. Not kept in the state file:
        a fault for testing how a client keeps what it cannot read, and reads the other lines all the same."""
        checked = garble_kind(kind)
        with self._lock:
            self._garbled[custom_id] = checked

    def garbled(self, custom_id: str) -> GarbleKind | None:
        """How the result line of `custom_id` is garbled, if it is."""
        with self._lock:
            return self._garbled.get(custom_id)

    def cut(self, route: str, *, after_lines: int, times: int = 1) -> None:
        """Make the next `times` successful downloads from `route` (a batch's results, `batches.results`, or an OpenAI
        file's content, `openai.files.content`) stop after `after_lines` lines, the connection breaking mid-body: the
        client sees the lines before the cut, then a transport error (`httpx.RemoteProtocolError`). Queued in order."""
        self._check_route(route)
        _check_times(times)
        if after_lines < 0:
            raise ValueError(f"after_lines must be 0 or more, not {after_lines}")
        with self._lock:
            self._cuts.setdefault(route, deque()).append(_Cut(after_lines, times))

    def take_cut(self, route: str) -> int | None:
        """After how many lines this successful download from `route` breaks, if a cut is armed; consumes it."""
        with self._lock:
            queue = self._cuts.get(route)
            if not queue:
                return None
            cut = queue[0]
            cut.remaining -= 1
            if cut.remaining == 0:
                queue.popleft()
            return cut.after_lines

    def is_lost(self, custom_id: str) -> bool:
        with self._lock:
            return custom_id in self._lost

    def lost(self) -> set[str]:
        """The custom ids armed to go missing (a copy)."""
        with self._lock:
            return set(self._lost)

    def restore_lost(self, custom_ids: set[str]) -> None:
        with self._lock:
            self._lost = set(custom_ids)

    def pending(self, route: str) -> int:
        """How many armed failures `route` has left: failing calls and lost or late answers."""
        with self._lock:
            failing = sum(fault.remaining for fault in self._calls.get(route, ()))
            cuts = sum(cut.remaining for cut in self._cuts.get(route, ()))
            return failing + cuts + sum(queued.remaining for queued in self._after_commit.get(route, ()))

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

    def take_after_commit(self, route: str) -> AfterCommit | None:
        """What becomes of the answer of this successful call to `route`, if a fault is armed; consumes it."""
        with self._lock:
            queue = self._after_commit.get(route)
            if not queue:
                return None
            queued = queue[0]
            queued.remaining -= 1
            if queued.remaining == 0:
                queue.popleft()
            return queued.action

    def take_slow(self, route: str) -> float | None:
        """The pause before each piece of this successful call's answer, if `route` is slow; counts the call."""
        with self._lock:
            slow = self._slow.get(route)
            if slow is None:
                return None
            if slow.remaining is not None:
                slow.remaining -= 1
                if slow.remaining == 0:
                    del self._slow[route]
            return slow.seconds

    def outcome_for(self, custom_id: str) -> Outcome | None:
        with self._lock:
            return self._outcomes.get(custom_id)

    def outcomes(self) -> dict[str, Outcome]:
        """The standing outcomes by custom_id (a copy)."""
        with self._lock:
            return dict(self._outcomes)

    def restore_outcomes(self, outcomes: dict[str, Outcome]) -> None:
        """Replace the standing outcomes, as a state file recorded them."""
        with self._lock:
            self._outcomes = dict(outcomes)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()
            self._after_commit.clear()
            self._slow.clear()
            self._outcomes.clear()
            self._lost.clear()
            self._garbled.clear()
            self._cuts.clear()

    def _check_route(self, route: str) -> None:
        if route not in self._routes:
            raise ValueError(f"unknown route {route!r}; expected one of {', '.join(self._routes)}")

    def _queue_after_commit(self, route: str, action: AfterCommit, times: int) -> None:
        self._check_route(route)
        _check_times(times)
        with self._lock:
            self._after_commit.setdefault(route, deque()).append(_Queued(action, times))


def _check_times(times: int) -> None:
    if times < 1:
        raise ValueError("times must be at least 1")


def _check_seconds(seconds: float) -> float:
    if not 0 <= seconds < math.inf:
        raise ValueError(f"seconds must be a finite number, 0 or more, not {seconds}")
    return float(seconds)


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# Where a garbled line's fault goes: into the first text of the answer (or of the error), so that the line still names
# its request and would be read as an answer but for the fault.
_TEXT_FIELDS = (b'"text":"', b'"content":"', b'"message":"')


def garbled_line(line: bytes, kind: GarbleKind, *, unknown_shape: bytes) -> bytes:
    """`line` (one JSON result line, newline included) garbled as `kind`; `unknown_shape` is the line of a shape the
    provider's API does not have, naming the same request (each provider's results give it)."""
    if kind == "unknown-shape":
        return unknown_shape
    if kind == "not-an-object":
        return b"[" + line.rstrip(b"\n") + b"]\n"
    if kind == "bad-json":
        named = line.find(b'"custom_id":"')
        named_end = line.find(b'"', named + len(b'"custom_id":"')) + 1 if named >= 0 else 0
        return line[: min(max(named_end + 1, len(line) // 2), len(line) - 3)] + b"\n"
    at = next((line.find(field) + len(field) for field in _TEXT_FIELDS if line.find(field) >= 0), -1)
    fault = b"\xff\xfe" if kind == "not-utf8" else b"\\ud800"
    if at < 0:  # no text at all: the fault goes into a field of its own
        return b'{"garbled":"' + fault + b'",' + line[1:]
    return line[:at] + fault + line[at:]
