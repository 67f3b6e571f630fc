"""`LiveCaller`: one live call at a time as the caller sees it, many at once underneath: admitted by the scope's
`Quota`, wrapped in the middleware chain, tried again by error class (tenacity) within the attempt timeout and the
call's deadline, its tokens settled, and every step reported to the observers."""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from lowtide.core.clock import Clock
from lowtide.errors import APITimeoutError, DeadlineExceededError, RateLimitError
from lowtide.live.events import (
    AttemptStarted,
    CallFailed,
    CallSucceeded,
    LiveEvent,
    Observer,
    QuotaAdmitted,
    QuotaSettled,
    RateLimited,
    Retried,
)
from lowtide.live.quota import Quota
from lowtide.live.retries import RetryPolicy
from lowtide.live.spend import OwnedSpend, SpendCap, may_be_billed
from lowtide.live.timing import within
from lowtide.telemetry.current import CALL
from lowtide.telemetry.switch import tracing
from lowtide.types import ActorRequest, ActorResponse

if TYPE_CHECKING:
    from lowtide.live.streams import Stream, Streamer

__all__ = ["CallNext", "LiveCaller", "LiveCalls", "Middleware", "estimate_input_tokens"]

log = logging.getLogger(__name__)

CallNext = Callable[[ActorRequest], Awaitable[ActorResponse[object]]]
LiveCalls = Callable[[ActorRequest, float | None], Coroutine[Any, Any, ActorResponse[object]]]
"""A live call past `LiveCaller.call` (the request and its deadline): the caller's own path, or telemetry's
`TracedLiveCalls` around it."""
Middleware = Callable[[ActorRequest, CallNext], Awaitable[ActorResponse[object]]]
_numbers = itertools.count(1)


def estimate_input_tokens(request: ActorRequest) -> int:
    """A generous estimate of a request's input tokens before it is sent (about 3.5 characters a token, plus the
    framing of each message); settled with the real count once the answer says it."""
    text = request.model_dump_json(include={"system", "messages", "tools"})
    return max(1, int(len(text) / 3.5) + 8 * len(request.messages))


class LiveCaller:
    """Live calls of one provider through one scope's quota."""

    def __init__(
        self,
        complete: CallNext,
        quota: Quota,
        *,
        clock: Clock,
        policy: RetryPolicy,
        attempt_timeout: float | None,
        deadline: float | None,
        middleware: Sequence[Middleware] = (),
        observers: Sequence[Observer] = (),
        spend: SpendCap | None = None,
        worst_case: Callable[[ActorRequest], Decimal] | None = None,
        owned: OwnedSpend | None = None,
        provider: str = "",
        gen_ai_provider: str | None = None,
    ) -> None:
        self._provider = provider
        """`lowtide.provider` of the calls' spans (telemetry on)."""
        self._gen_ai_provider = gen_ai_provider
        """`gen_ai.provider.name` of the calls' spans (the provider's `telemetry_name()`; None: `provider`)."""
        self._complete = complete
        self._spend = spend
        self._worst_case = worst_case
        self._owned = owned
        """The ledger's spend by owner (None: no ledger to charge a call's owner in)."""
        self.quota = quota
        self._clock = clock
        self._policy = policy
        self._attempt_timeout = attempt_timeout
        self._deadline = deadline
        self._middleware = tuple(middleware)
        self._observers = tuple(observers)
        self._traced: LiveCalls | None = None
        """The calls inside their spans, made the first time the caller calls with telemetry on."""
        if self._observers:
            quota.listeners.append(self.emit)

    def emit(self, event: LiveEvent) -> None:
        for observer in self._observers:
            try:
                observer(event)
            except Exception:  # an observer's bug must not fail the call it watches
                log.exception("A live-call observer failed on %s", type(event).__name__)

    def call(
        self, request: ActorRequest, *, deadline: float | None = None
    ) -> Coroutine[Any, Any, ActorResponse[object]]:
        """Answer `request` through the middleware and the retries (a coroutine: await it); `deadline` (seconds from
        now) overrides the configured one for this call."""
        # Not a coroutine of its own, as `Actor.run`: the path's coroutine is the only frame a waiting call keeps here.
        return self._path()(request, deadline)

    def stream(self, request: ActorRequest, opened: Streamer, *, deadline: float | None = None) -> Stream:
        """`request` answered by `opened` (a provider's `stream`) as its pieces arrive, the finished `ActorResponse`
        last, through the same middleware, quota, retries (only until a piece has been given), spending cap and span
        as `call`: `live.streams` says how."""
        from lowtide.live.streams import stream_call

        def path(given: ActorRequest, seconds: float | None, complete: CallNext) -> Awaitable[ActorResponse[object]]:
            answer: LiveCalls = lambda r, d: self._answer(r, d, complete)  # noqa: E731 (the path of this call only)
            if tracing() and CALL.get() is None:
                from lowtide.telemetry.live_calls import TracedLiveCalls

                answer = TracedLiveCalls(self._provider, self._gen_ai_provider, answer).call
            return answer(given, seconds)

        return stream_call(request, opened, lambda given, complete: path(given, deadline, complete))

    def _path(self) -> LiveCalls:
        """The path of a call made now: the caller's own (`_answer`), or, while telemetry is on, the same inside the
        call's span (`TracedLiveCalls`, made once); a call made inside another's span (an actor's call) is that
        call's part, with no span of its own."""
        if not tracing() or CALL.get() is not None:
            return self._answer
        traced = self._traced
        if traced is None:
            from lowtide.telemetry.live_calls import TracedLiveCalls

            traced = self._traced = TracedLiveCalls(self._provider, self._gen_ai_provider, self._answer).call
        return traced

    async def _answer(
        self, request: ActorRequest, deadline: float | None, complete: CallNext | None = None
    ) -> ActorResponse[object]:
        """The call's own path, untraced: its middleware, then its attempts (each by `complete`, by default the
        provider's), within the spending cap, its owner charged in the ledger (`owned`)."""
        seconds = deadline if deadline is not None else self._deadline
        ends = self._clock.now() + seconds if seconds is not None else None
        key = request.custom_id or f"live-{next(_numbers)}"
        in_doubt = [0]  # attempts that failed once sent, which the provider may have billed (`may_be_billed`)

        async def innermost(given: ActorRequest) -> ActorResponse[object]:
            return await self._retrying(given, key, ends, complete or self._complete, in_doubt)

        handler: CallNext = innermost
        for layer in reversed(self._middleware):
            handler = _wrap(layer, handler)
        settle = None if self._owned is None else await self._owned.admit(request)
        if settle is None:
            if self._spend is None or self._worst_case is None:
                return await handler(request)  # no cap, no owner: no frame of their own while the call waits
            return await self._capped(handler, request)
        answered: ActorResponse[object] | None = None
        try:
            answered = await self._capped(handler, request)
            return answered
        finally:
            await settle(answered, in_doubt[0])

    async def _capped(self, handler: CallNext, request: ActorRequest) -> ActorResponse[object]:
        """`request` answered by `handler` within the actor's live spending cap in this process, if it has one."""
        if self._spend is None or self._worst_case is None:
            return await handler(request)
        worst = self._worst_case(request)
        await self._spend.reserve(worst)
        cost = Decimal(0)
        try:
            response = await handler(request)
            cost = response.cost.total_usd if response.cost is not None else worst
            return response
        finally:
            await self._spend.settle(worst, cost)

    async def _retrying(
        self, request: ActorRequest, key: str, ends: float | None, complete: CallNext, in_doubt: list[int]
    ) -> ActorResponse[object]:
        used: Counter[str] = Counter()
        plan: dict[str, Any] = {}
        attempts = 0

        def should_retry(error: BaseException) -> bool:
            kind = self._policy.retryable(error, used)
            if kind is None:
                return False
            wait = 0.0 if isinstance(error, RateLimitError) else self._policy.wait_after(error, used[kind])
            used[kind] += 1
            plan.update(kind=kind, wait=wait)
            return True

        def stop(state: RetryCallState) -> bool:
            if ends is not None and self._clock.now() + plan.get("wait", 0.0) >= ends:
                plan["deadline"] = True
                return True
            return False

        def wait(state: RetryCallState) -> float:
            return float(plan.get("wait", 0.0))

        def before_sleep(state: RetryCallState) -> None:
            event = Retried(key, attempts, str(plan["kind"]), float(plan["wait"]))
            self.emit(event)
            if CALL.get() is not None:
                from lowtide.telemetry.live_calls import retried

                retried(event.reason, event.attempt, event.wait)

        retrying = AsyncRetrying(
            sleep=self._clock.sleep,
            retry=retry_if_exception(should_retry),
            stop=stop,
            wait=wait,
            before_sleep=before_sleep,
            reraise=True,
        )
        response: ActorResponse[object] | None = None
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    response = await self._attempt(request, key, attempts, ends, complete, in_doubt)
            assert response is not None  # tenacity ends its loop only after an attempt that returned
            self.emit(CallSucceeded(key, attempts, response.cost.total_usd if response.cost is not None else None))
            return response
        except BaseException as exc:
            if plan.get("deadline") and not isinstance(exc, DeadlineExceededError):
                error = DeadlineExceededError(
                    f"The call {key!r} did not succeed before its deadline, after {attempts} attempt(s); the last"
                    f" failure: {exc}",
                    attempts=attempts,
                )
                self.emit(CallFailed(key, attempts, error))
                raise error from exc
            if isinstance(exc, Exception):
                self.emit(CallFailed(key, attempts, exc))
            raise

    async def _attempt(
        self, request: ActorRequest, key: str, attempt: int, ends: float | None, complete: CallNext, in_doubt: list[int]
    ) -> ActorResponse[object]:
        def late() -> Exception:
            return DeadlineExceededError(
                f"The call {key!r} reached its deadline on attempt {attempt}.", attempts=attempt
            )

        estimate = estimate_input_tokens(request)
        permit = await within(
            self._clock,
            None if ends is None else ends - self._clock.now(),
            self.quota.admit(input_tokens=estimate, output_tokens=request.max_tokens),
            late,
        )
        self.emit(QuotaAdmitted(key, permit.input_tokens, permit.output_tokens, permit.waited))
        self.emit(AttemptStarted(key, attempt))
        limit = self._attempt_timeout
        timeout_is_deadline = False
        if ends is not None:
            left = ends - self._clock.now()
            timeout_is_deadline = limit is None or left < limit
            limit = left if timeout_is_deadline else limit

        def too_slow() -> Exception:
            if timeout_is_deadline:
                return late()
            return APITimeoutError(f"No answer within the attempt timeout of {self._attempt_timeout:g} s.")

        try:
            response = await within(self._clock, limit, complete(request), too_slow)
        except RateLimitError as exc:
            self.quota.release(permit, input_tokens=0, output_tokens=0)  # refused: the API counted nothing
            self.emit(QuotaSettled(key, 0, 0))
            self.emit(RateLimited(key, exc.retry_after))
            if CALL.get() is not None:
                from lowtide.telemetry.live_calls import rate_limited

                rate_limited(exc.retry_after, attempt)
            await self.quota.pause(exc.retry_after if exc.retry_after is not None else self._policy.backoff(attempt))
            raise
        except BaseException as exc:
            in_doubt[0] += may_be_billed(exc)
            self.quota.release(permit)  # what it used is unknown: what it took stays taken
            self.emit(QuotaSettled(key, permit.input_tokens, permit.output_tokens))
            raise
        usage = response.usage
        used_input = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        self.quota.release(permit, input_tokens=used_input, output_tokens=usage.output_tokens)
        self.quota.succeeded()
        self.emit(QuotaSettled(key, used_input, usage.output_tokens))
        return response


def _wrap(layer: Middleware, inner: CallNext) -> CallNext:
    async def wrapped(request: ActorRequest) -> ActorResponse[object]:
        return await layer(request, inner)

    return wrapped
