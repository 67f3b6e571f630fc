"""The emulator's in-process transport (httpx2, as the OpenAI and Anthropic SDKs speak) for SDKs built on httpx (groq,
together): each request handed over as it is, each answer streamed back, a connection the emulator drops raised as
httpx's own error, so that the SDK and lowtide see what they would over a socket."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import httpx2


class Httpx2Bridge(httpx.AsyncBaseTransport):
    """An httpx transport answering through an httpx2 one."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = await request.aread()
        sent = httpx2.Request(request.method, str(request.url), headers=list(request.headers.raw), content=content)
        try:
            answer = await self._inner.handle_async_request(sent)
        except httpx2.TimeoutException as exc:
            raise httpx.ReadTimeout(str(exc), request=request) from exc
        except httpx2.TransportError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        return httpx.Response(
            answer.status_code, headers=list(answer.headers.raw), stream=_Body(answer, request), request=request
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Body(httpx.AsyncByteStream):
    def __init__(self, answer: httpx2.Response, request: httpx.Request) -> None:
        self._answer = answer
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._answer.aiter_raw():
                yield part
        except httpx2.TransportError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=self._request) from exc

    async def aclose(self) -> None:
        await self._answer.aclose()
