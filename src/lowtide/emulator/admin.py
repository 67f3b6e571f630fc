"""The `/_emulator` routes, which drive faults and read counters over a socket. Not part of the API: no
authentication, and not counted in `calls`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lowtide.emulator.backend import Backend
from lowtide.emulator.errors import invalid_request
from lowtide.emulator.jsonutil import as_object, is_int, is_number
from lowtide.emulator.outcomes import outcome_kind
from lowtide.emulator.web import read_json

__all__ = ["admin_routes"]

_ADMIN_BODY_BYTES = 1024 * 1024


def admin_routes(backend: Backend) -> list[Route]:
    async def faults(request: Request) -> Response:
        body = as_object(await read_json(request, _ADMIN_BODY_BYTES)) or {}
        route, status = body.get("route"), body.get("status")
        times, retry_after, message = body.get("times", 1), body.get("retry_after"), body.get("message")
        if not isinstance(route, str) or not is_int(status) or not is_int(times):
            raise invalid_request("expected {'route': str, 'status': int, 'times': int, 'retry_after': float}")
        if (retry_after is not None and not is_number(retry_after)) or (
            message is not None and not isinstance(message, str)
        ):
            raise invalid_request("retry_after must be a number and message a string")
        try:
            backend.faults.fail_next(route, status, times=times, retry_after=retry_after, message=message)
        except ValueError as error:
            raise invalid_request(str(error)) from None
        return JSONResponse({"route": route, "pending": backend.faults.pending(route)})

    async def outcomes(request: Request) -> Response:
        body = as_object(await read_json(request, _ADMIN_BODY_BYTES)) or {}
        custom_id, kind = body.get("custom_id"), body.get("kind")
        error_type, message = body.get("error_type", "invalid_request_error"), body.get("message")
        if not all(isinstance(value, str) for value in (custom_id, kind, error_type)) or not (
            message is None or isinstance(message, str)
        ):
            raise invalid_request("expected {'custom_id': str, 'kind': str, 'error_type': str, 'message': str}")
        try:
            backend.faults.outcome(str(custom_id), outcome_kind(kind), error_type=str(error_type), message=message)
        except ValueError as error:
            raise invalid_request(str(error)) from None
        return JSONResponse({"custom_id": custom_id, "kind": kind})

    async def stats(request: Request) -> Response:
        return JSONResponse({"calls": dict(backend.calls), "batches": len(backend.batches)})

    async def reset(request: Request) -> Response:
        backend.reset()
        return JSONResponse({"reset": True})

    return [
        Route("/_emulator/faults", faults, methods=["POST"]),
        Route("/_emulator/outcomes", outcomes, methods=["POST"]),
        Route("/_emulator/stats", stats, methods=["GET"]),
        Route("/_emulator/reset", reset, methods=["POST"]),
    ]
