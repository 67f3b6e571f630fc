"""An answer abandoned on purpose: an app raises `ConnectionDropped` after starting an answer it will never finish
(the emulator's faults do), and the server closes the connection without logging it as an error."""

from __future__ import annotations

__all__ = ["ConnectionDropped"]


class ConnectionDropped(Exception):
    """Raised by an app that drops its connection on purpose. Over a socket the server then closes the connection
    (`lowtide.http.server` does not log it as an error); an in-process client sees the connection fail."""
