"""Who owns work in the ledger, and what a request is called: owner ids, liveness, derived keys, params JSON."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any

from lowtide.core.hosts import host_id

__all__ = ["canonical_json", "derive_key", "owner_alive", "owner_id", "params_json"]


def owner_id() -> str:
    """This process, as the ledger names it: host (`hosts.host_id`), pid and a random part (pids are reused)."""
    return f"{host_id()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def owner_alive(owner: str | None, until: float | None, now: float) -> bool:
    """Whether the process named `owner` may still be working: on this host, while its pid lives (a dead one frees
    its work at once); elsewhere, until its lease (`until`: where the ledger keeps heartbeats, the owner's) runs out.
    A lease ended (0: its engine let go, or its event loop closed) frees its work at once, wherever it ran."""
    if owner is None:
        return False
    if until is not None and until <= 0:  # its lease was ended (`let_go`, or its event loop closed): work is free
        return False
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host == host_id() and pid_text.isdigit():
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # pragma: no cover - someone else's live process
            return True
        return True
    return until is None or until >= now


def derive_key(provider: str, params: dict[str, Any] | str) -> str:
    """The key of a request the caller did not name: a digest of everything it sends (params, or their JSON).

    The same request made again attaches to the first one's batch or stored answer instead of paying twice.
    """
    digest = hashlib.sha256(f"{provider}\n{params_json(params)}".encode()).hexdigest()
    return f"auto-{digest[:40]}"


def canonical_json(params: dict[str, Any]) -> str:
    return _ENCODE(params)


def params_json(params: dict[str, Any] | str) -> str:
    return params if isinstance(params, str) else _ENCODE(params)


# Built once: `json.dumps` with options builds an encoder on every call.
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode
