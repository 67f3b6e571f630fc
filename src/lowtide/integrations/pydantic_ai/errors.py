"""lowtide's errors as pydantic-ai's exceptions, in one context manager: an agent's `except ModelHTTPError` (or
`ModelRateLimitError`, ...) catches what lowtide raised, with lowtide's error kept as the `__cause__`."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)

from lowtide.errors import (
    ActorError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchTimeoutError,
    BudgetExceededError,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StructuredOutputError,
)

__all__ = ["mapped_errors", "to_pydantic_ai"]

Category = (
    type[ModelRateLimitError]
    | type[ModelUnavailableError]
    | type[ModelServerError]
    | type[ModelRequestRejectedError]
    | None
)

# By class of lowtide's API errors (the most specific first).
_API_CATEGORIES: list[tuple[type[APIError], Category]] = [
    (AuthenticationError, ModelAuthenticationError),
    (PermissionDeniedError, ModelRequestRejectedError),
    (NotFoundError, ModelNotFoundError),
    (InvalidRequestError, ModelRequestRejectedError),
    (RateLimitError, ModelRateLimitError),
    (OverloadedError, ModelOverloadedError),
    (ServerError, ModelServerError),
]


@contextmanager
def mapped_errors(model_name: str) -> Generator[None]:
    """Re-raise lowtide's errors as pydantic-ai's (`to_pydantic_ai`), chained to the original."""
    try:
        yield
    except ActorError as exc:
        mapped = to_pydantic_ai(exc, model_name)
        if mapped is exc:
            raise
        raise mapped from exc


def to_pydantic_ai(error: ActorError, model_name: str) -> Exception:
    """The pydantic-ai exception an agent expects for `error`; lowtide's own failures (ledger, internal) stay as
    they are, since pydantic-ai has no word for them."""
    if isinstance(error, BudgetExceededError):
        return UsageLimitExceeded(str(error))
    if isinstance(error, ConfigurationError):
        return UserError(str(error))
    if isinstance(error, StructuredOutputError):
        return UnexpectedModelBehavior(str(error), body=error.text)
    if isinstance(error, BatchTimeoutError):
        return ModelRequestTimeout(model_name, error.max_wait, setting="request_timeout")
    if isinstance(error, APITimeoutError):
        return ModelTimeoutError(model_name, str(error))
    if isinstance(error, APIConnectionError):
        return ModelConnectionError(model_name, str(error))
    if isinstance(error, APIError):
        return _http_error(error, model_name)
    if isinstance(error, BatchRequestErrored):
        # By the API error the provider says the request's error is (`kind`); a request refused, when it says none.
        kind = error.kind
        found = next((category for api, category in _API_CATEGORIES if kind and issubclass(kind, api)), None)
        category = found or ModelRequestRejectedError
        return category(model_name, str(error), provider_error_type=error.error_type, body=error.api_message)
    if isinstance(error, BatchRequestExpired):
        return ModelUnavailableError(model_name, str(error), provider_error_type="expired")
    if isinstance(error, BatchRequestCanceled):
        return ModelAPIError(model_name, str(error), provider_error_type="canceled")
    return error


def _http_error(error: APIError, model_name: str) -> Exception:
    category = next((category for kind, category in _API_CATEGORIES if isinstance(error, kind)), None)
    retry_after = error.retry_after if isinstance(error, RateLimitError) else None
    if error.status_code is None:
        return (category or ModelAPIError)(
            model_name, str(error), provider_error_type=error.error_type, retry_after=retry_after
        )
    return ModelHTTPError.for_category(
        category,
        status_code=error.status_code,
        model_name=model_name,
        body=error.message,
        provider_error_type=error.error_type,
        retry_after=retry_after,
    )
