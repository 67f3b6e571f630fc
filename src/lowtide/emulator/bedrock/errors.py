"""AWS's errors as boto3 reads them: S3's XML body (`<Error><Code>...`), and the Bedrock APIs' JSON body
`{"message": ...}` with the error's name in the `x-amzn-ErrorType` header (botocore's rest-json parser reads the
name from there). The emulator's own vocabulary (a fault's status, a body too large) is translated by status."""

from __future__ import annotations

from xml.sax.saxutils import escape

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.emulator.bedrock.http import S3, service_of
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import request_id

__all__ = ["AwsError", "aws_error_response", "conflict", "from_api_error", "not_found", "validation"]

_JSON_NAMES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    409: "ConflictException",
    413: "ValidationException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
    504: "ModelTimeoutException",
    529: "ServiceUnavailableException",
}
_S3_CODES = {
    400: "InvalidRequest",
    403: "AccessDenied",
    404: "NoSuchKey",
    409: "OperationAborted",
    413: "EntityTooLarge",
    429: "SlowDown",
    500: "InternalError",
    503: "SlowDown",
}


class AwsError(Exception):
    """An AWS error response waiting to be sent: its status, its code (`NoSuchKey`, `ValidationException`) and its
    message; `extra` are S3's further elements (`Key`, `BucketName`)."""

    def __init__(self, status: int, code: str | None, message: str, *, s3: bool = False, **extra: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.s3 = s3
        """Whether it is answered in S3's shape whatever the caller signed for (an S3 call that is not signed)."""
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        self.headers: dict[str, str] = {}


def validation(message: str) -> AwsError:
    return AwsError(400, "ValidationException", message)


def not_found(message: str) -> AwsError:
    return AwsError(404, "ResourceNotFoundException", message)


def conflict(message: str) -> AwsError:
    return AwsError(409, "ConflictException", message)


def from_api_error(error: ApiError) -> AwsError:
    """A fault or a limit of the emulator's own, in AWS's terms (its code chosen by the caller's service)."""
    translated = AwsError(error.status, None, error.message)
    translated.headers = dict(error.headers)
    return translated


def aws_error_response(request: Request, error: Exception) -> Response:
    """`error` (an `AwsError`, a routing error or a crash) in the shape of the service the caller signed for."""
    s3 = service_of(request.headers) == S3
    if isinstance(error, AwsError):
        status, code, message, extra, headers = error.status, error.code, error.message, error.extra, error.headers
        s3 = s3 or error.s3
    else:
        status = int(getattr(error, "status_code", 500))
        code, message, extra, headers = None, "Not found." if status == 404 else "Internal error.", {}, {}
    rid = request_id(request)
    if s3:
        code = code or _S3_CODES.get(status, "InternalError" if status >= 500 else "InvalidRequest")
        elements = "".join(f"<{name}>{escape(value)}</{name}>" for name, value in extra.items())
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>{elements}"
            f"<RequestId>{rid}</RequestId></Error>"
        )
        return Response(
            body if request.method != "HEAD" else b"",
            status_code=status,
            media_type="application/xml",
            headers={**headers, "x-amz-request-id": rid},
        )
    code = code or _JSON_NAMES.get(status, "InternalServerException" if status >= 500 else "ValidationException")
    return JSONResponse(
        {"message": message},
        status_code=status,
        headers={**headers, "x-amzn-ErrorType": code, "x-amzn-RequestId": rid},
    )
