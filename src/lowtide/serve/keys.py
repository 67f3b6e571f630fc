"""Who a `lowtide serve` client is, and the ledger key of its request.

A client is known by the key it sends (in the header its wire's API takes it in, `Wire.key_header`, else in
`x-api-key` or as `Authorization: Bearer`, the common conventions: where the official SDKs send their key), compared
in constant time with each key the server was given. Each of those keys
has a scope: a slow digest of it (PBKDF2, computed once when the server starts), mixed into the ledger key of every
request its clients send, so that one client's requests never share a ledger key with another's (the same
`Idempotency-Key`, or the same body, from two client keys are two requests), and so that no client key can be read
back from the ledger, nor guessed from it at any useful speed.

A key may carry an owner (`ClientKey`: a team, a project, tags): every call its clients make is charged there, in the
ledger's spend by owner and against that team's and project's caps (`calls.owners.spend_owner`), whatever the actor
names.

A request's ledger key is `serve-` and a digest of the actor's name, the route, the client's scope and either its
`Idempotency-Key` or the call's arguments. An `Idempotency-Key` is kept for a retention (`idempotency_ttl`): a key
whose request ended longer ago than that after it was first sent names a new request. Nothing is deleted for that:
the ledger keeps every request, its answer and cost; the key of the new request is the next generation of the same
derivation (a generation number in the digest), found by reading the generations in turn until one is free or still
within the retention. A request still waiting on its batch is never past its retention.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lowtide.errors import ConfigurationError, classify
from lowtide.ledger.interface import AsyncLedgerStore
from lowtide.ledger.spend_records import Owner

__all__ = ["IDEMPOTENCY_TTL", "ClientKey", "ClientKeys", "ledger_key", "owned_key", "request_key"]

IDEMPOTENCY_TTL = 24 * 3600.0
"""How long an `Idempotency-Key` names the same request, by default: a day."""

_SALT = b"lowtide serve client scope"
_ITERATIONS = 100_000


@dataclass(frozen=True)
class ClientKey:
    """A key `lowtide serve` accepts, and who the calls of its clients are charged to (none: the actor's owner)."""

    key: str = field(repr=False)
    team: str | None = None
    project: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict[str, str])

    def owner(self) -> Owner | None:
        given = Owner(self.team, self.project, tuple(sorted(self.tags.items())))
        return given if given.known else None


def owned_key(spec: str, environ: Mapping[str, str]) -> ClientKey:
    """`VAR:team=T,project=P,tag.NAME=VALUE` (`lowtide serve --client-key-env`): the key in the environment variable
    VAR, owned so; refused, naming what is wrong, when VAR is unset or empty, or a field is not one of those."""
    name, _, fields = spec.partition(":")
    name = name.strip()
    key = environ.get(name, "") if name else ""
    if not key:
        raise ConfigurationError(
            f"--client-key-env {spec!r}: the environment variable {name or '(none named)'} is not set (it holds the"
            " client key, so that the key is never on the command line).",
            field="client_key_env",
        )
    given: dict[str, str] = {}
    tags: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in fields.split(","))):
        field_name, equals, value = part.partition("=")
        field_name, value = field_name.strip(), value.strip()
        if not equals or not value:
            raise ConfigurationError(f"--client-key-env {name}: {part!r} is not FIELD=VALUE.", field="client_key_env")
        if field_name.startswith("tag.") and len(field_name) > 4:
            tags[field_name[4:]] = value
        elif field_name in ("team", "project"):
            given[field_name] = value
        else:
            raise ConfigurationError(
                f"--client-key-env {name}: unknown field {field_name!r}; give team=, project= or tag.NAME=.",
                field="client_key_env",
            )
    return ClientKey(key, team=given.get("team"), project=given.get("project"), tags=tags)


class ClientKeys:
    """The keys `lowtide serve` accepts, each with its scope (computed once, here) and its owner."""

    def __init__(self, keys: Sequence[str | ClientKey]) -> None:
        given = [key if isinstance(key, ClientKey) else ClientKey(key) for key in keys]
        if not given or not all(key.key for key in given):
            raise ValueError("lowtide serve needs a client key to authenticate its clients")
        self._scopes = [(key.key.encode(), _scope(key.key)) for key in given]
        self._owners = {_scope(key.key): owner for key in given if (owner := key.owner()) is not None}

    def owner(self, scope: str) -> Owner | None:
        """Who the calls of the client key of `scope` are charged to (None: the actor's own owner)."""
        return self._owners.get(scope)

    def scope(
        self, headers: Mapping[str, str], key_header: str | None = None, in_query: str | None = None
    ) -> str | None:
        """The scope of the client key these request headers carry (in `key_header`, else in `x-api-key` or as a
        bearer token; else `in_query`, the key the URL's query gave where the wire takes one there), None when they
        carry none of the server's."""
        given = headers.get(key_header) if key_header is not None else None
        if given is None:
            given = headers.get("x-api-key")
        if given is None:
            scheme, _, token = headers.get("authorization", "").partition(" ")
            given = token.strip() if scheme.lower() == "bearer" else None
        if given is None:
            given = in_query
        if given is None:
            return None
        sent = given.encode()
        found = None
        for key, scope in self._scopes:
            # Every key compared, in constant time: how long the check takes says nothing of which key is close.
            if hmac.compare_digest(sent, key):
                found = scope
        return found


@functools.lru_cache(maxsize=64)
def _scope(key: str) -> str:
    """A client key's scope: slow to compute on purpose (and so computed once per key in a process)."""
    return hashlib.pbkdf2_hmac("sha256", key.encode(), _SALT, _ITERATIONS).hex()[:32]


def request_key(
    actor_name: str,
    path: str,
    scope: str,
    arguments: Mapping[str, Any],
    idempotency_key: str | None,
    generation: int = 0,
) -> str:
    """The ledger key of a request: from the client's `Idempotency-Key`, else a digest of the call's arguments (so that
    a streamed request and the same one unstreamed share one answer), in the client's `scope`; `generation` counts
    the times an `Idempotency-Key` outlived its retention."""
    if idempotency_key:
        seed = f"idempotency\0{idempotency_key}"
        if generation:
            seed += f"\0{generation}"
    else:
        seed = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    text = f"{actor_name}\0{path}\0{scope}\0{seed}"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return f"serve-{digest}"


async def ledger_key(
    ledger: AsyncLedgerStore,
    *,
    now: float,
    ttl: float,
    actor_name: str,
    path: str,
    scope: str,
    arguments: Mapping[str, Any],
    idempotency_key: str | None,
) -> str:
    """The request's ledger key (`request_key`), of the first generation whose request is unknown to the ledger,
    still waiting, or first sent less than `ttl` seconds before `now`. Without an `Idempotency-Key`, the arguments'
    digest names one request for as long as the ledger keeps it."""
    generation = 0
    while True:
        key = request_key(actor_name, path, scope, arguments, idempotency_key, generation)
        if not idempotency_key:
            return key
        try:
            record = await ledger.request(key)
        except Exception as exc:
            raise classify(exc, doing="reading the ledger") from exc
        if record is None or not record.state.final or now - record.created_at < ttl:
            return key
        generation += 1
