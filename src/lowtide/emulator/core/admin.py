"""The `/_emulator` routes, which drive faults and read counters over a socket, for every emulation: a call's faults
are armed by its route's name (whichever emulation's route that is), a batch request's by its custom id (whichever
emulation's batch holds it), and the counters are the shared ones and each emulation's `stats()`. Not part of any
API: no authentication, and not counted in `calls`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lowtide.emulator.core.emulation import Shared
from lowtide.emulator.core.errors import invalid_request
from lowtide.emulator.core.faults import Faults, garble_kind
from lowtide.emulator.core.http import read_json
from lowtide.emulator.core.jsonutil import JsonObject, as_object, is_int, is_number
from lowtide.emulator.core.outcomes import outcome_kind

__all__ = ["admin_routes"]

_ADMIN_BODY_BYTES = 1024 * 1024
# `status` (the default) fails calls with an HTTP status; the others act once a call has done its work.
_FAULT_KINDS = ("status", "drop_after_commit", "delay_after_commit", "slow", "cut")


def admin_routes(shared: Shared) -> list[Route]:
    async def faults(request: Request) -> Response:
        body = as_object(await read_json(request, _ADMIN_BODY_BYTES)) or {}
        route, kind = body.get("route"), body.get("kind", "status")
        try:
            if not isinstance(route, str) or kind not in _FAULT_KINDS:
                raise ValueError(f"expected {{'route': str, 'kind': one of {', '.join(_FAULT_KINDS)}, ...}}")
            _arm(shared.faults, route, str(kind), body)
        except ValueError as error:
            raise invalid_request(str(error)) from None
        return JSONResponse({"route": route, "kind": kind, "pending": shared.faults.pending(route)})

    async def outcomes(request: Request) -> Response:
        body = as_object(await read_json(request, _ADMIN_BODY_BYTES)) or {}
        custom_id, kind = body.get("custom_id"), body.get("kind")
        error_type, message = body.get("error_type", "invalid_request_error"), body.get("message")
        if not all(isinstance(value, str) for value in (custom_id, kind, error_type)) or not (
            message is None or isinstance(message, str)
        ):
            raise invalid_request("expected {'custom_id': str, 'kind': str, 'error_type': str, 'message': str}")
        try:
            if kind == "garbled":
                # Any emulation's batch: the request's result line is one a client cannot read, as `how` says.
                how = garble_kind(body.get("how"))
                shared.faults.garble(str(custom_id), how)
                return JSONResponse({"custom_id": custom_id, "kind": kind, "how": how})
            if kind == "missing":
                # For the batches whose results are files of answers and errors (OpenAI's): in neither file.
                shared.faults.lose(str(custom_id))
                return JSONResponse({"custom_id": custom_id, "kind": kind})
            shared.faults.outcome(str(custom_id), outcome_kind(kind), error_type=str(error_type), message=message)
        except ValueError as error:
            raise invalid_request(str(error)) from None
        return JSONResponse({"custom_id": custom_id, "kind": kind})

    async def webhooks(request: Request) -> Response:
        body = as_object(await read_json(request, _ADMIN_BODY_BYTES)) or {}
        name, url, secret = body.get("emulation"), body.get("url"), body.get("secret")
        if not all(isinstance(value, str) for value in (name, url, secret)):
            raise invalid_request("expected {'emulation': str, 'url': str, 'secret': str}")
        emulation = next((each for each in shared.emulations if each.name == name), None)
        if emulation is None:
            raise invalid_request(f"no emulation {name!r}: {', '.join(each.name for each in shared.emulations)}")
        try:
            emulation.add_webhook(str(url), str(secret))
        except ValueError as error:
            raise invalid_request(str(error)) from None
        return JSONResponse({"emulation": name, "url": url})

    async def jwks(request: Request) -> Response:
        # Where a receiver verifying per-job webhooks' tokens is pointed instead of the API's own JWKS.
        name = request.path_params["emulation"]
        emulation = next((each for each in shared.emulations if each.name == name), None)
        keys = emulation.webhook_jwks() if emulation is not None else None
        if keys is None:
            return JSONResponse({"error": f"the emulation {name!r} signs no webhooks with a key"}, status_code=404)
        return JSONResponse(dict(keys))

    async def processing(request: Request) -> Response:
        # Batches created from now on take `seconds` (those out keep theirs): how a test over a socket makes one late.
        body = as_object(await read_json(request, _ADMIN_BODY_BYTES)) or {}
        seconds = body.get("seconds")
        if not is_number(seconds) or seconds < 0:
            raise invalid_request("expected {'seconds': a number of seconds, 0 or more}")
        shared.settings.processing_seconds = float(seconds)
        return JSONResponse({"processing_seconds": float(seconds)})

    async def stats(request: Request) -> Response:
        counters: dict[str, object] = {"calls": dict(shared.calls), "rate_limited": shared.quotas.limited}
        for emulation in shared.emulations:
            counters.update(emulation.stats())
        return JSONResponse(counters)

    async def reset(request: Request) -> Response:
        shared.reset()
        return JSONResponse({"reset": True})

    return [
        Route("/_emulator/faults", faults, methods=["POST"]),
        Route("/_emulator/outcomes", outcomes, methods=["POST"]),
        Route("/_emulator/webhooks", webhooks, methods=["POST"]),
        Route("/_emulator/jwks/{emulation}", jwks, methods=["GET"]),
        Route("/_emulator/processing", processing, methods=["POST"]),
        Route("/_emulator/stats", stats, methods=["GET"]),
        Route("/_emulator/reset", reset, methods=["POST"]),
    ]


def _arm(faults: Faults, route: str, kind: str, body: JsonObject) -> None:
    """Arm the fault `body` describes; ValueError for a malformed one. Keys a kind does not use are ignored."""
    times = body.get("times")
    if times is not None and not is_int(times):
        raise ValueError("times must be an integer")
    if kind == "slow":
        # Standing: every call until a reset, unless `times` limits it.
        faults.slow(route, seconds=_seconds(body), times=times)
        return
    count = times if times is not None else 1
    if kind == "cut":
        after = body.get("after_lines")
        if not is_int(after):
            raise ValueError("a cut needs 'after_lines', an integer")
        faults.cut(route, after_lines=after, times=count)
        return
    if kind == "drop_after_commit":
        faults.drop_after_commit(route, times=count)
    elif kind == "delay_after_commit":
        faults.delay_after_commit(route, seconds=_seconds(body), times=count)
    else:
        status, retry_after, message = body.get("status"), body.get("retry_after"), body.get("message")
        if not is_int(status):
            raise ValueError("expected {'route': str, 'status': int, 'times': int, 'retry_after': float}")
        if (retry_after is not None and not is_number(retry_after)) or (
            message is not None and not isinstance(message, str)
        ):
            raise ValueError("retry_after must be a number and message a string")
        faults.fail_next(route, status, times=count, retry_after=retry_after, message=message)


def _seconds(body: JsonObject) -> float:
    seconds = body.get("seconds")
    if not is_number(seconds):
        raise ValueError("this kind of fault needs 'seconds', a number")
    return seconds
