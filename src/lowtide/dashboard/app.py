"""The dashboard's web application (Starlette): one page (`static/index.html`, its script and style, shipped in the
package: nothing is fetched from the network) and the JSON each of its views polls. Every route reads; none writes.

A token, when the dashboard has one (always, listening beyond loopback), is required of every request: given once as
`?token=` in the address (answered with a cookie, HttpOnly and SameSite=Strict, and a redirect to the address without
it), or as `Authorization: Bearer`. It is compared in constant time; a request without it gets 401 and nothing of the
ledger.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable
from importlib.resources import files

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from lowtide.dashboard.agents import agent_run_page, agents_page
from lowtide.dashboard.data import DashboardData, Json
from lowtide.dashboard.spend import spend_page

__all__ = ["COOKIE", "build_app"]

COOKIE = "lowtide_dashboard"
_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
}
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self';"
    " connect-src 'self'; frame-ancestors 'none'",
}
_REFUSED = """<!doctype html><meta charset="utf-8"><title>lowtide dashboard: token required</title>
<h1>Token required</h1><p>This dashboard needs its token: open the address <code>lowtide dashboard</code> printed,
which ends in <code>?token=...</code>.</p>"""


def build_app(data: DashboardData, *, token: str | None, refresh_seconds: float = 2.0) -> Starlette:
    """The dashboard over `data`; `token`: what every request must carry (None: nothing, on loopback only)."""

    def allowed(request: Request) -> bool:
        if token is None:
            return True
        given = request.cookies.get(COOKIE) or ""
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        return hmac.compare_digest(given.encode(), token.encode())

    def refused(request: Request) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": "token required"}, status_code=401, headers=_HEADERS)
        return Response(_REFUSED, status_code=401, media_type="text/html", headers=_HEADERS)

    async def page(request: Request) -> Response:
        given = request.query_params.get("token")
        if token is not None and given is not None:
            if not hmac.compare_digest(given.encode(), token.encode()):
                return refused(request)
            response = RedirectResponse("/", status_code=303, headers=_HEADERS)
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return response
        if not allowed(request):
            return refused(request)
        return _static("index.html")

    async def static(request: Request) -> Response:
        if not allowed(request):
            return refused(request)
        return _static(str(request.path_params["name"]))

    def api(compute: Callable[[Request], Json | None]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not allowed(request):
                return refused(request)
            found = await asyncio.to_thread(compute, request)
            if found is None:
                return JSONResponse({"error": "not found"}, status_code=404, headers=_HEADERS)
            return JSONResponse({**found, "refresh_seconds": refresh_seconds}, headers=_HEADERS)

        return endpoint

    def batches(request: Request) -> Json | None:
        try:
            number = max(0, int(request.query_params.get("page", "0")))
        except ValueError:
            number = 0
        return data.batches(page=number)

    def one(request: Request) -> Json | None:
        wanted = request.query_params.get("id", "").strip()
        return data.request(wanted) if wanted else None

    def runs(request: Request) -> Json | None:
        return data.runs()

    def spend(request: Request) -> Json | None:
        return data.money()

    def failures(request: Request) -> Json | None:
        return data.failures()

    def agent_runs(request: Request) -> Json | None:
        # With `?run=ID`, that run's timeline too (`shown`, None when the ledger has no such run).
        wanted = request.query_params.get("run", "").strip()
        page = agents_page(data.store, data.clock())
        return {**page, "shown": agent_run_page(data.store, wanted, data.clock()) if wanted else None}

    def spend_by_owner(request: Request) -> Json | None:
        return spend_page(data.store, data.clock())

    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/api/runs", api(runs)),
        Route("/api/batches", api(batches)),
        Route("/api/money", api(spend)),
        Route("/api/failures", api(failures)),
        Route("/api/request", api(one)),
        Route("/api/agents", api(agent_runs)),
        Route("/api/spend", api(spend_by_owner)),
    ]
    return Starlette(routes=routes)


def _static(name: str) -> Response:
    media = _STATIC.get(name)
    if media is None:
        return Response("not found", status_code=404, headers=_HEADERS)
    body = files("lowtide.dashboard").joinpath("static", name).read_bytes()
    return Response(body, media_type=media, headers=_HEADERS)
