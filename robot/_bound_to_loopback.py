"""`lowtide ARGS`, except that whatever `--host` it is given, its server listens on 127.0.0.1 (tests may listen on
loopback only): `python robot/_bound_to_loopback.py dashboard --host 0.0.0.0 ...`. Everything else is the command as a
user runs it: its policy judges the host it was given, and what it prints names that host. Only the socket's address
is swapped, at `lowtide.http.server._bind`, the one place a server's socket is made.
"""

from __future__ import annotations

import socket
import sys

import lowtide.http.server as server
from lowtide.cli import main


def _loopback(host: str, port: int) -> socket.socket:
    return socket.create_server(("127.0.0.1", port), family=socket.AF_INET)


server._bind = _loopback  # pyright: ignore[reportPrivateUsage]  # the seam this launcher exists for

if __name__ == "__main__":
    sys.argv[0] = "lowtide"
    sys.exit(main())
