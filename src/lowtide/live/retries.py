"""Which failed live calls are tried again, how often and after how long: by error class, each with its own budget,
with exponential backoff and full jitter (through tenacity, sleeping on lowtide's clock), never past a deadline.

Retried: `rate_limited` (429; the wait is the API's `retry-after` when it gave one), `overloaded` (529), `server`
(500 and other 5xx), `connection` (no answer; a connection that could not be made at all, refused or to an unknown
host, at most `len(endpoints.UNREACHABLE_WAITS)` times within seconds: it is almost always the configuration),
`timeout` (no answer in time, the attempt timeout included). Never
retried: an invalid request, a bad key, a missing permission, a refused budget: the same call would fail again.
A classifier of one's own (`Actor(retry_classifier=...)`) can put an error in another class, or say None for
"never"; a class it names has the budget `live.retries` gives it (none when not given).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lowtide.config.endpoints import UNREACHABLE_WAITS
from lowtide.errors import (
    ActorError,
    APIConnectionError,
    APITimeoutError,
    APIUnreachableError,
    AuthenticationError,
    BudgetExceededError,
    DeadlineExceededError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)

__all__ = ["DEFAULT_BUDGETS", "ERROR_CLASSES", "Classifier", "RetryPolicy", "classify", "error_class"]

DEFAULT_BUDGETS: Mapping[str, int] = {"rate_limited": 8, "overloaded": 6, "server": 4, "connection": 4, "timeout": 3}

Classifier = Callable[[BaseException], str | None]


def classify(error: BaseException) -> str | None:
    """The retry class of `error`, or None when trying again cannot help."""
    match error:
        case RateLimitError():
            return "rate_limited"
        case OverloadedError():
            return "overloaded"
        case ServerError():
            return "server"
        case APITimeoutError():
            return "timeout"
        case APIConnectionError():
            return "connection"
        case _:
            return None


ERROR_CLASSES = (
    "authentication",
    "permission",
    "not_found",
    "invalid_request",
    "rate_limited",
    "overloaded",
    "server",
    "connection",
    "timeout",
    "deadline",
    "budget",
    "other",
)
"""Every class `error_class` names: what a bulk run's `abort_on` chooses from."""


def error_class(error: BaseException) -> str:
    """The class of a failed call's final error, in words a user chooses from (`ERROR_CLASSES`)."""
    match error:
        case AuthenticationError():
            return "authentication"
        case PermissionDeniedError():
            return "permission"
        case NotFoundError():
            return "not_found"
        case InvalidRequestError():
            return "invalid_request"
        case DeadlineExceededError():
            return "deadline"
        case BudgetExceededError():
            return "budget"
        case _:
            return classify(error) or "other"


@dataclass
class RetryPolicy:
    """Budgets per class (retries, not attempts), backoff `base` and `cap` in seconds, and the classifier."""

    budgets: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_BUDGETS))
    base: float = 1.0
    cap: float = 60.0
    classifier: Classifier = classify
    rng: random.Random = field(default_factory=random.Random)

    def backoff(self, retry: int) -> float:
        """Full jitter: a random wait up to `base * 2**retry`, at most `cap`."""
        return self.rng.uniform(0, min(self.cap, self.base * 2**retry))

    def wait_after(self, error: BaseException, retry: int) -> float:
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            return max(0.0, error.retry_after)
        if isinstance(error, APIUnreachableError):
            return UNREACHABLE_WAITS[min(retry, len(UNREACHABLE_WAITS) - 1)]
        return self.backoff(retry)

    def retryable(self, error: BaseException, used: Mapping[str, int]) -> str | None:
        """The class to spend a retry of, if `error` is retryable and its class has budget left (an unreachable
        API: at most as many retries as `UNREACHABLE_WAITS` has waits)."""
        if not isinstance(error, ActorError):
            return None
        kind = self.classifier(error)
        budget = self.budgets.get(kind, 0) if kind is not None else 0
        if isinstance(error, APIUnreachableError):
            budget = min(budget, len(UNREACHABLE_WAITS))
        if kind is None or used.get(kind, 0) >= budget:
            return None
        return kind
