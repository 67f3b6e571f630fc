"""uvicorn's HTTP/1.1 protocol (h11) with the two limits it lacks before a request reaches the app: headers that do not
arrive whole within a time (a client that sends half a request line and waits holds a connection for ever) and
headers larger than a size. Each is answered (408, 431; a request h11 cannot parse, 400) in the served API's own error
shape when the server is given one, and the connection is closed only once the client has stopped sending, so that it
reads the answer instead of a reset."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_BYTES", "HEADER_SECONDS", "ErrorBody", "guarded_protocol"]

HEADER_BYTES = 64 * 1024
"""The most a request's line and headers may hold: four times h11's default, more than any SDK sends (a long
`traceparent` and `baggage` included), far less than would let a client fill the server's memory."""

HEADER_SECONDS = 30.0
"""Seconds a request's line and headers may take to arrive whole, from its first byte (or the connection)."""

_LINGER_SECONDS = 2.0
"""How long a refused connection is read and dropped before it is closed: closed at once with the client's bytes
unread, the kernel would reset it, and the client would never read the answer."""

ErrorBody = Callable[[int, str], tuple[str, bytes]]
"""An error as the served API writes it: (status, message) to (content type, body)."""


def _plain(status: int, message: str) -> tuple[str, bytes]:
    return "text/plain; charset=utf-8", message.encode()


def guarded_protocol(
    error_body: ErrorBody | None = None, *, header_seconds: float = HEADER_SECONDS
) -> type[asyncio.Protocol]:
    """The protocol class for `uvicorn.Config(http=...)`, with `h11_max_incomplete_event_size=HEADER_BYTES`."""
    render = error_body or _plain

    class Guarded(H11Protocol):
        _headers_due: asyncio.TimerHandle | None = None
        _refused = False

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._await_headers()

        def data_received(self, data: bytes) -> None:
            if self._refused:  # answered already: what the client still sends is read and dropped
                return
            if self._headers_due is None and self.conn.their_state is h11.IDLE:
                self._await_headers()  # the next request on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # its headers are in (or it failed, and was answered)
                self._headers_arrived()

        def connection_lost(self, exc: Exception | None) -> None:
            self._headers_arrived()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:
            """h11 could not read the request: its headers too large (h11 holds at most `HEADER_BYTES` waiting for
            their end), or not HTTP."""
            pending, _ = self.conn.trailing_data
            limit = self.config.h11_max_incomplete_event_size or HEADER_BYTES
            if len(pending) > limit:
                self._refuse(431, f"The request's headers are larger than this server reads: {limit:,} bytes at most.")
            else:
                self._refuse(400, "The request is not HTTP/1.1 this server can read.")

        def _await_headers(self) -> None:
            self._headers_due = self.loop.call_later(header_seconds, self._headers_late)

        def _headers_arrived(self) -> None:
            if self._headers_due is not None:
                self._headers_due.cancel()
                self._headers_due = None

        def _headers_late(self) -> None:
            self._headers_due = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._unset_keepalive_if_required()
                self._refuse(408, f"The request's headers did not arrive whole within {header_seconds:g} seconds.")

        def _refuse(self, status: int, message: str) -> None:
            """Write the answer by hand (h11 sends no response to a request it never read), then read and drop what
            the client still sends until it closes, or `_LINGER_SECONDS`."""
            self._refused = True
            content_type, body = render(status, message)
            head = (
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: {content_type}\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            )
            self.transport.write(head.encode("latin-1") + body)
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(_LINGER_SECONDS, self.transport.close)

    return Guarded
