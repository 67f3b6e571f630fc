"""The errors of a call the provider's API refused or failed, and of a live call past its deadline."""

from __future__ import annotations

from typing import ClassVar

from lowtide.errors.core import ActorError


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
