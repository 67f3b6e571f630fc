"""Azure OpenAI's error vocabulary: `{"error": {"code", "message", "param", "type"}}` (its code a word such as
`DeploymentNotFound`, or the HTTP status as text), with an `apim-request-id` header; OpenAI's errors, met at Azure's
paths, answered in the same shape."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.emulator.core.http import request_id
from lowtide.emulator.openai.errors import OpenAIError

__all__ = [
    "ACCESS_DENIED",
    "AzureError",
    "azure_error_response",
    "deployment_not_found",
    "resource_not_found",
]

ACCESS_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an "
    "active subscription and use a correct regional API endpoint for your resource."
)


class AzureError(Exception):
    """An Azure error response waiting to be sent."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        error_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.code = code if code is not None else str(status)
        self.param = param
        self.error_type = error_type
        self.headers = dict(headers or {})
        super().__init__(f"{status} {self.code}: {message}")

    @classmethod
    def of(cls, error: OpenAIError) -> AzureError:
        """OpenAI's error as Azure answers it at its paths."""
        return cls(
            error.status,
            error.message,
            code=error.code or str(error.status),
            param=error.param,
            error_type=error.error_type,
            headers=error.headers,
        )

    def body(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.param is not None:
            error["param"] = self.param
        if self.error_type is not None:
            error["type"] = self.error_type
        return {"error": error}


def resource_not_found() -> AzureError:
    """What Azure answers a call without an `api-version`, or at a path it does not serve."""
    return AzureError(404, "Resource not found")


def deployment_not_found(deployment: str) -> AzureError:
    return AzureError(
        404,
        f"The API deployment {deployment!r} for this resource does not exist. If you created the deployment within "
        "the last 5 minutes, please wait a moment and try again.",
        code="DeploymentNotFound",
    )


def azure_error_response(request: Request, error: Exception) -> Response:
    """An `AzureError`, or a routing error or crash met by an Azure caller, in Azure's shape."""
    if isinstance(error, HTTPException):
        error = resource_not_found() if error.status_code == 404 else AzureError(error.status_code, str(error.detail))
    elif not isinstance(error, AzureError):  # an OpenAIError of a route is Azure's already (`routes._azure_shaped`)
        error = AzureError(500, "The server had an error while processing your request.", code="InternalServerError")
    identifier = request_id(request)
    headers = {**error.headers, "apim-request-id": identifier, "x-request-id": identifier}
    return JSONResponse(error.body(), status_code=error.status, headers=headers)
