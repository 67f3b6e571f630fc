"""The errors of a batch: one not ended in time, and one request of an ended batch that did not succeed."""

from __future__ import annotations

from lowtide.errors.api import APIError
from lowtide.errors.core import ActorError


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
