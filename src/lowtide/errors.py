"""Every error lowtide raises, in one tree rooted at `ActorError`.

```
ActorError
├── ActorClosedError              a call on an actor that was closed (aclose, close, async with); nothing was sent
├── ConfigurationError            invalid actor configuration or call arguments; raised before anything is sent
│   ├── InputError                a bulk run's input file or jobs are wrong (lowtide.bulk); names file and line
│   ├── BatchNotOutstanding       cancel of a batch that has ended (or never existed at the API): nothing to cancel
│   └── UnstorableValueError      an agent step's argument or result that the journal cannot store (names the type)
├── ProviderNotFoundError         no provider registered under that name (with "did you mean ...?")
├── ProviderCapabilityError       the provider exists but cannot do what was asked (e.g. batch mode)
├── StructuredOutputError         the answer did not validate against the requested `response_model`
├── BudgetExceededError           a request's worst-case cost would cross a budget; nothing was sent
│   └── SpendCapExceededError     ... a team's or project's cap, all hosts of the ledger counted (names the cap)
├── APIError                      the provider's API refused or failed a call; keeps status code and request id
│   ├── AuthenticationError       401: missing or invalid API key
│   ├── PermissionDeniedError     403: the key may not do this
│   ├── NotFoundError             404: unknown model, batch or route
│   ├── InvalidRequestError       400, 413, 422 and other 4xx: the request itself is wrong
│   ├── RateLimitError            429: slow down; `retry_after` says for how long when the API said so
│   ├── OverloadedError           529: the API is overloaded; retry later
│   ├── ServerError               500 and other 5xx
│   ├── StreamInterruptedError    a live stream ended before its answer was whole: never a short answer
│   └── APIConnectionError        no answer: the connection dropped, or could not be made
│       ├── APITimeoutError       no answer in time
│       └── APIUnreachableError   no connection at all (refused, unknown host): nothing of that call was sent
├── LedgerError                   the ledger could not be read or written (disk full, locked, removed)
├── InternalError                 lowtide itself failed (a bug); the waiting calls get this, never a hang
├── AgentError                    a durable agent run could not go on (lowtide.agents); names the run
│   ├── AgentDivergedError        replay asked, at a position, for another turn or step than the journal holds
│   └── AgentRunError             the run awaited ended failed, stopped or in doubt (its state and error kept)
├── BatchTimeoutError             a batch did not end within `max_wait`; it was canceled or left running
├── DeadlineExceededError         a live call did not succeed before its deadline (`live.deadline`), over its attempts
└── BatchRequestError             one request of an ended batch did not succeed; its neighbours are unaffected
    ├── BatchRequestErrored       the API answered that request with an error (type and message kept)
    ├── BatchRequestUnreadable    the API's result line for that request could not be read; the raw line is kept
    ├── BatchRequestCanceled      the batch was canceled before that request was processed
    └── BatchRequestExpired       the batch hit its 24 hour limit before that request was processed
```

Errors never carry an API key: messages are built from the API's own error text, ids and numbers only.

One warning, not an error: `ModelDeprecationWarning` (a `FutureWarning`, shown by default), once per model in a
process, when a call names a model its provider has deprecated.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from lowtide.types import ActorResponse

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "APIUnreachableError",
    "ActorClosedError",
    "ActorError",
    "AgentDivergedError",
    "AgentError",
    "AgentRunError",
    "AuthenticationError",
    "BatchNotOutstanding",
    "BatchRequestCanceled",
    "BatchRequestError",
    "BatchRequestErrored",
    "BatchRequestExpired",
    "BatchRequestUnreadable",
    "BatchTimeoutError",
    "BudgetExceededError",
    "ConfigurationError",
    "DeadlineExceededError",
    "InternalError",
    "InvalidRequestError",
    "LedgerError",
    "ModelDeprecationWarning",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "ProviderCapabilityError",
    "ProviderNotFoundError",
    "RateLimitError",
    "ServerError",
    "SpendCapExceededError",
    "StreamInterruptedError",
    "StructuredOutputError",
    "UnstorableValueError",
]


class ActorError(Exception):
    """The root of every error lowtide raises."""


class ActorClosedError(ActorError):
    """Raised by a call on an actor that was closed (`aclose()`, `close()`, or the end of its `async with`), before
    anything is recorded or sent: its providers are closed, and a closed actor opens none again. Make a new `Actor`."""

    def __init__(self, actor: str) -> None:
        super().__init__(
            f"Actor {actor!r} is closed (aclose(), close() or the end of its `async with`); nothing was recorded or "
            "sent. Make a new Actor for further calls."
        )
        self.actor = actor


class ConfigurationError(ActorError):
    """Raised when an actor configuration, or the arguments of a call, are invalid.

    `field` names the offending setting (dotted path) when one setting is to blame.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class BatchNotOutstanding(ConfigurationError):
    """Raised by `cancel` for a batch that has already ended, or that the API never had: nothing to cancel."""


class ProviderNotFoundError(ConfigurationError):
    """Raised when no provider is registered under the requested name."""

    def __init__(self, name: str, *, known: Sequence[str], suggestions: Sequence[str]) -> None:
        hint = f" Did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        listing = ", ".join(repr(k) for k in sorted(known)) or "none"
        super().__init__(f"No provider named {name!r}.{hint} Registered providers: {listing}.", field="provider")
        self.name = name
        self.suggestions = list(suggestions)


class ProviderCapabilityError(ConfigurationError):
    """Raised when a provider exists but lacks what the call needs, such as batch processing."""

    def __init__(self, provider: str, capability: str, *, hint: str = "") -> None:
        message = f"Provider {provider!r} does not support {capability}."
        super().__init__(f"{message} {hint}".strip(), field="batch_processing")
        self.provider = provider
        self.capability = capability


class StructuredOutputError(ActorError):
    """Raised when the model's answer does not validate against the requested `response_model`.

    The raw `text` is kept so nothing the model produced (and that was paid for) is lost.
    """

    def __init__(
        self, message: str, *, text: str, model_name: str, response: ActorResponse[object] | None = None
    ) -> None:
        super().__init__(message)
        self.text = text
        self.model_name = model_name
        self.response = response
        """The full response (usage, cost, ids) the unparseable answer came in."""


class BudgetExceededError(ActorError):
    """Raised before submission when a request's worst-case cost would cross a budget; nothing is sent.

    `limit_usd` is the budget, `spent_usd` what is already spent or committed against it, `estimate_usd` the
    request's worst case (estimated input, output at `max_tokens`), or its `requests` requests' together (one call of
    `run_many`).
    """

    def __init__(
        self, *, scope: str, limit_usd: Decimal, spent_usd: Decimal, estimate_usd: Decimal, requests: int = 1
    ) -> None:
        what = "the request could cost" if requests == 1 else f"its {requests} requests could together cost"
        super().__init__(
            f"Budget exceeded for {scope}: {what} up to ${estimate_usd:.6f}, and with "
            f"${spent_usd:.6f} already spent or committed that crosses the limit of ${limit_usd:.6f}. "
            "Nothing was sent."
        )
        self.scope = scope
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.estimate_usd = estimate_usd


class SpendCapExceededError(BudgetExceededError):
    """Raised before anything is recorded or sent when a request's worst case would cross its team's or project's
    cap, counting what every process and host of the ledger has spent (`spent_usd`) and reserved (`reserved_usd`)."""

    def __init__(
        self,
        *,
        cap: str,
        limit_usd: Decimal,
        spent_usd: Decimal,
        reserved_usd: Decimal,
        estimate_usd: Decimal,
        requests: int = 1,
    ) -> None:
        asked = "this request" if requests == 1 else f"these {requests} requests together"
        ActorError.__init__(
            self,
            f"Spend cap reached: {cap}. Spent ${spent_usd:.6f} and reserved ${reserved_usd:.6f} for requests not"
            f" answered yet; {asked} could add up to ${estimate_usd:.6f}, which would cross it. Nothing was sent.",
        )
        self.scope = cap
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd + reserved_usd
        self.reserved_usd = reserved_usd
        self.estimate_usd = estimate_usd


class LedgerError(ActorError):
    """Raised when the ledger could not be read or written (a full disk, a lock held too long, a file removed).

    What the ledger already held stays as it was: a write is one transaction, rolled back whole.
    """


class UnstorableValueError(ConfigurationError):
    """Raised for an agent step's argument or result that the journal cannot store (neither JSON nor a pydantic
    model), naming its type: an argument before the step runs, a result before it is journaled."""


class AgentError(ActorError):
    """Raised when a durable agent run (`lowtide.agents`) cannot go on; `run_id` names it."""

    def __init__(self, message: str, *, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


class AgentDivergedError(AgentError):
    """Replay asked, at `position`, for a different turn or step than the journal holds there (the code changed, or
    depends on something not journaled): the run fails rather than send a new request under an old key."""

    def __init__(self, message: str, *, run_id: str, position: int) -> None:
        super().__init__(message, run_id=run_id)
        self.position = position


class AgentRunError(AgentError):
    """The run awaited (`Agent.result`) ended without a result: `state` is failed, stopped or in-doubt."""

    def __init__(self, message: str, *, run_id: str, state: str) -> None:
        super().__init__(message, run_id=run_id)
        self.state = state


class InternalError(ActorError):
    """Raised to the calls waiting on work that failed inside lowtide for a reason it does not know (a bug).

    The cause is chained (`__cause__`) and logged; the calls get this error instead of waiting forever.
    """


def classify(exc: BaseException, *, doing: str) -> ActorError:
    """`exc` as an `ActorError`: itself if it is one, else an `InternalError` saying what lowtide was `doing`."""
    if isinstance(exc, ActorError):
        return exc
    error = InternalError(f"lowtide failed while {doing}: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


class APIError(ActorError):
    """Raised when the provider's API refused or failed a call."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        request_id: str | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.request_id = request_id
        self.error_type = error_type

    def __str__(self) -> str:
        parts = [self.message]
        if self.status_code is not None:
            parts.append(f"status {self.status_code}")
        if self.request_id:
            parts.append(f"request id {self.request_id}")
        return " | ".join(parts)

    retryable: ClassVar[bool] = False
    """Whether sending the same call again may succeed."""


class AuthenticationError(APIError):
    """401: the API key is missing or invalid."""


class PermissionDeniedError(APIError):
    """403: the API key may not perform this call."""


class NotFoundError(APIError):
    """404: the model, batch or route does not exist."""


class InvalidRequestError(APIError):
    """400, 413, 422 and other client errors: the request itself must change before it can succeed."""


class RateLimitError(APIError):
    """429: too many requests; `retry_after` is the wait the API asked for, in seconds, when it gave one."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        request_id: str | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status_code=status_code, request_id=request_id, error_type=error_type)
        self.retry_after = retry_after

    retryable: ClassVar[bool] = True


class OverloadedError(APIError):
    """529: the API is temporarily overloaded."""

    retryable: ClassVar[bool] = True


class ServerError(APIError):
    """500 and other 5xx: the API failed."""

    retryable: ClassVar[bool] = True


class StreamInterruptedError(APIError):
    """A streamed live answer ended before it was whole (the connection dropped, or the API closed the stream without
    its final event), after some of it was delivered: raised by `Actor.stream` in place of a short answer. Not tried
    again, since the consumer has seen part of the answer; calling again asks (and pays) anew."""


class APIConnectionError(APIError):
    """No answer from the API: the connection was refused or dropped."""

    retryable: ClassVar[bool] = True


class APITimeoutError(APIConnectionError):
    """No answer from the API within the client's timeout."""


class APIUnreachableError(APIConnectionError):
    """The connection to the API could not be made at all: refused (nothing listens at that address), a host name
    that does not resolve, no route. Nothing of the call was sent. Almost always the configuration (the base URL,
    an emulator or proxy not running), so it is retried only for a few seconds; `host`, `port` and `reason` say
    where and why."""

    def __init__(self, message: str, *, host: str, port: int, reason: str) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
        self.reason = reason


class DeadlineExceededError(ActorError):
    """Raised when a live call has not succeeded by its deadline, counting every attempt and every wait between
    them; `attempts` says how many were made."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class BatchTimeoutError(ActorError):
    """Raised when a batch has not ended within `max_wait` seconds.

    `canceled` says whether lowtide asked the API to cancel the batch (the `cancel` policy) or left it
    running (the `leave` policy); either way `ClaudeBatchProvider.collect(batch_id)` picks up its results once
    it ends, and `custom_ids` names the requests it holds.
    """

    def __init__(self, *, batch_id: str, elapsed: float, max_wait: float, canceled: bool) -> None:
        action = "cancellation was requested" if canceled else "it was left running"
        super().__init__(
            f"Batch {batch_id} did not end within the maximum wait of {max_wait:g} s (waited {elapsed:g} s); {action}."
        )
        self.batch_id = batch_id
        self.elapsed = elapsed
        self.max_wait = max_wait
        self.canceled = canceled
        self.custom_ids: list[str] = []
        """The custom ids of the requests in the batch, to join results collected later."""


class BatchRequestError(ActorError):
    """One request of an ended batch did not succeed."""

    def __init__(self, message: str, *, batch_id: str, custom_id: str) -> None:
        super().__init__(message)
        self.batch_id = batch_id
        self.custom_id = custom_id

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed in a later batch."""
        return False


class BatchRequestErrored(BatchRequestError):
    """The API answered this request with an error; `error_type` and `api_message` are the API's own. The rest is
    the provider's word, said by its codec as it reads the result line: `retryable`, whether the same request may
    succeed in a later batch; `kind`, which of lowtide's `APIError`s a live call refused the same way would have
    raised (a `RateLimitError`, say), when it says (for mappings to other libraries' errors); `request_id`, the id
    the API gave the request's own run, for its support (None where the API gives none, as for a request its
    validation refused before it ran)."""

    def __init__(
        self,
        *,
        batch_id: str,
        custom_id: str,
        error_type: str,
        api_message: str,
        retryable: bool = False,
        kind: type[APIError] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(
            f"Request {custom_id} in batch {batch_id} errored: {error_type}: {api_message}",
            batch_id=batch_id,
            custom_id=custom_id,
        )
        self.error_type = error_type
        self.api_message = api_message
        self._retryable = retryable
        self.kind = kind
        self.request_id = request_id

    @property
    def retryable(self) -> bool:
        return self._retryable


class BatchRequestUnreadable(BatchRequestError):
    """The API answered this request, but lowtide could not read its result line: not JSON (a line cut off), not
    UTF-8, a string with an unpaired surrogate, or a shape this version of lowtide does not know.

    Nothing is lost: `raw_line` keeps the line as it came (bytes that are not UTF-8 as `\\xNN` escapes), in the
    ledger and in a bulk run's raw results; `reason` says what was wrong with it. Never sent again on its own: the
    API has answered it, and may have charged for the answer.
    """

    def __init__(self, *, batch_id: str, custom_id: str, raw_line: str, reason: str) -> None:
        super().__init__(
            f"Request {custom_id} in batch {batch_id}: lowtide could not read its result line ({reason}); the raw"
            " line is kept with this error.",
            batch_id=batch_id,
            custom_id=custom_id,
        )
        self.raw_line = raw_line
        self.reason = reason


class BatchRequestCanceled(BatchRequestError):
    """The batch was canceled before this request was processed; nothing was charged for it."""

    def __init__(self, *, batch_id: str, custom_id: str) -> None:
        super().__init__(
            f"Request {custom_id} in batch {batch_id} was canceled before it was processed.",
            batch_id=batch_id,
            custom_id=custom_id,
        )


class BatchRequestExpired(BatchRequestError):
    """The batch reached its 24 hour limit before this request was processed; nothing was charged for it."""

    def __init__(self, *, batch_id: str, custom_id: str) -> None:
        super().__init__(
            f"Request {custom_id} in batch {batch_id} expired before it was processed (24 h limit).",
            batch_id=batch_id,
            custom_id=custom_id,
        )

    @property
    def retryable(self) -> bool:
        return True


class ModelDeprecationWarning(FutureWarning):
    """A call names a model its provider has deprecated: it still answers until its end of life, then refuses.

    The message names the end of life and what to use instead. A `FutureWarning`, so that Python shows it by
    default; `warnings.filterwarnings("ignore", category=ModelDeprecationWarning)` silences it.
    """
