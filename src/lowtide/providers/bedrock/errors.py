# botocore ships no type stubs.
# pyright: reportMissingTypeStubs=false
"""boto3's exceptions as lowtide's `ActorError`s, in one context manager (`translate_errors`).

botocore raises `ClientError` for every error answer, its `response["Error"]["Code"]` the AWS error's name
(`ThrottlingException`, `ValidationException`, `ModelNotReadyException`, S3's `NoSuchKey`...) and its
`ResponseMetadata` the HTTP status and request id: the class is the status's (`api_error_from_status`), but for the
names that mean more than their status. A connection that could not be made is `APIUnreachableError`; a timeout
`APITimeoutError`; a connection closed before or while the answer came (`ConnectionClosedError`, a body cut short)
`APIConnectionError`, whose outcome is unknown (urllib3's own errors too: a ConverseStream's events are read from
its body, and botocore passes them on as they are)."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Any, cast
from urllib.parse import urlsplit

from botocore import exceptions
from urllib3 import exceptions as transport

from lowtide import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    APIUnreachableError,
    AuthenticationError,
    InvalidRequestError,
    RateLimitError,
    ServerError,
)
from lowtide.providers import api_error_from_status, unreachable

__all__ = ["BY_NAME", "translate_errors"]

BY_NAME: Mapping[str, type[APIError]] = {
    "ThrottlingException": RateLimitError,
    "ServiceQuotaExceededException": RateLimitError,
    "TooManyRequestsException": RateLimitError,
    "SlowDown": RateLimitError,
    "ModelNotReadyException": ServerError,
    "ModelErrorException": ServerError,
    "ModelTimeoutException": ServerError,
    "ServiceUnavailableException": ServerError,
    "InternalServerException": ServerError,
    "ModelStreamErrorException": ServerError,
    "ValidationException": InvalidRequestError,
    "UnrecognizedClientException": AuthenticationError,
    "InvalidSignatureException": AuthenticationError,
    "ExpiredTokenException": AuthenticationError,
}
"""AWS error names whose class is not their HTTP status's: a quota of jobs (`ServiceQuotaExceededException`, 400) is
waited out as a rate limit; a model still loading (`ModelNotReadyException`, 429) or failing is the server's;
credentials AWS does not take (403) are an `AuthenticationError`."""


def _status_error(exc: exceptions.ClientError) -> APIError:
    response = cast("Mapping[str, Any]", exc.response)
    error = cast("Mapping[str, Any]", response.get("Error") or {})
    metadata = cast("Mapping[str, Any]", response.get("ResponseMetadata") or {})
    status = int(metadata.get("HTTPStatusCode") or 500)
    code = str(error.get("Code") or "") or None
    message = str(error.get("Message") or "") or f"AWS answered HTTP status {status}."
    headers = cast("Mapping[str, str]", metadata.get("HTTPHeaders") or {})
    retry_after = headers.get("retry-after")
    return api_error_from_status(
        status,
        message,
        request_id=cast("str | None", metadata.get("RequestId")),
        error_type=code,
        retry_after=float(retry_after) if retry_after and retry_after.replace(".", "", 1).isdigit() else None,
        by_type=BY_NAME,
    )


def _unreachable(exc: exceptions.EndpointConnectionError | exceptions.ConnectTimeoutError) -> APIError:
    given = cast("Mapping[str, object]", vars(exc).get("kwargs") or {})
    url = str(given.get("endpoint_url") or "")
    found = unreachable(exc, url)
    if found is not None:
        return found
    if isinstance(exc, exceptions.ConnectTimeoutError):
        return APITimeoutError(f"The connection to AWS timed out ({url}).")
    parts = urlsplit(url)
    host = parts.hostname or "(no host)"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return APIUnreachableError(f"could not connect to {host}:{port} ({exc})", host=host, port=port, reason=str(exc))


def translated(exc: BaseException) -> APIError | None:
    """The `ActorError` for a boto3 exception; None for any other."""
    match exc:
        case exceptions.ClientError():
            return _status_error(exc)
        case exceptions.EndpointConnectionError() | exceptions.ConnectTimeoutError():
            return _unreachable(exc)
        case exceptions.ReadTimeoutError():
            return APITimeoutError("AWS did not answer in time.")
        case exceptions.HTTPClientError() | exceptions.IncompleteReadError() | exceptions.ConnectionError():
            return APIConnectionError(f"The connection to AWS failed: {exc}")
        case exceptions.BotoCoreError():
            return APIError(f"The boto3 client failed: {type(exc).__name__}: {exc}")
        # ConverseStream's events are read from urllib3's body as they come, and botocore passes its errors on as
        # they are: a connection broken or stalled mid-stream.
        case transport.ReadTimeoutError():
            return APITimeoutError("AWS did not send the rest of its stream in time.")
        case transport.HTTPError():
            return APIConnectionError(f"The connection to AWS broke while its answer streamed: {exc}")
        case _:
            return None


@contextmanager
def translate_errors() -> Generator[None]:
    """Re-raise every boto3 exception as the matching `ActorError`, keeping status, request id and AWS's error name."""
    try:
        yield
    except BaseException as exc:
        error = translated(exc)
        if error is None:
            raise
        raise error from exc
