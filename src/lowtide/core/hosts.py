"""Which host this process is on, as lowtide names it to other processes: `$LOWTIDE_HOST_ID`, else the machine's name.

Owners in the ledger are named by it (`batching.keys.owner_id`), and a PostgreSQL ledger's connections show it to the
server (`application_name`). Two processes of one machine given different host ids treat each other as distant: they
tell each other's liveness by lease, not by pid (as the multi-host tests do).
"""

from __future__ import annotations

import os
import socket

__all__ = ["HOST_ID_ENV", "host_id"]

HOST_ID_ENV = "LOWTIDE_HOST_ID"


def host_id() -> str:
    """What this process calls its host: `$LOWTIDE_HOST_ID`, else the machine's name."""
    return os.environ.get(HOST_ID_ENV) or socket.gethostname()
