"""A PostgreSQL ledger's URL, said without its password, and lowtide's own setting in it.

A URL's password is a secret: lowtide never logs it, stores it or puts it in a message. `redacted` is the only form
of a URL that leaves this package, and `scrub` takes the password out of any text (a driver's error message).
`lowtide_outage_seconds` (how long an outage of the server is waited out: `outage`) is read here, and taken out of
what libpq is given (`connection_url`).
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from lowtide.ledger.location import redacted

__all__ = [
    "DEFAULT_OUTAGE_SECONDS", "OUTAGE_ENV", "OUTAGE_PARAMETER", "connection_url", "outage_given", "outage_seconds",
    "redacted", "scrub",
]  # fmt: skip


def _password(url: str) -> str | None:
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return password


def scrub(text: str, url: str) -> str:
    """`text` (an error message about `url`) with every occurrence of the URL's password, raw or percent-decoded,
    replaced by `***`, and the URL itself by its redacted form."""
    text = text.replace(url, redacted(url))
    secrets = [s for s in (_password(url), _query_password(url)) if s]
    for secret in {*secrets, *(unquote(s) for s in secrets)}:
        text = text.replace(secret, "***")
    return text


def _query_password(url: str) -> str | None:
    found = re.search(r"(?i)[?&]password=([^&#]*)", url)
    return found.group(1) if found else None


OUTAGE_PARAMETER = "lowtide_outage_seconds"
"""The URL's parameter saying how long the ledger's work waits out an outage of its server (`outage`)."""
OUTAGE_ENV = "LOWTIDE_PG_OUTAGE_SECONDS"
"""The same, for every PostgreSQL ledger of a process whose URL does not say."""
DEFAULT_OUTAGE_SECONDS = 60.0


def connection_url(url: str) -> str:
    """`url` as libpq is given it: without lowtide's own parameter, which libpq would refuse ("invalid URI query
    parameter")."""
    return _split(url)[0]


def outage_seconds(url: str) -> float:
    """How long the ledger at `url` waits out an outage: its `lowtide_outage_seconds`, else
    `$LOWTIDE_PG_OUTAGE_SECONDS`, else a minute. Raises `ValueError` saying what is wrong with a value given."""
    given = outage_given(url)
    if given is not None:
        return given
    from_env = os.environ.get(OUTAGE_ENV, "").strip()
    if from_env:
        return _seconds(from_env, f"${OUTAGE_ENV} is {from_env!r}")
    return DEFAULT_OUTAGE_SECONDS


def outage_given(url: str) -> float | None:
    """The URL's own `lowtide_outage_seconds` (None: it gives none); `ValueError` saying what is wrong with it."""
    given = _split(url)[1]
    return None if given is None else _seconds(given, f"sets {OUTAGE_PARAMETER} to {given!r}")


def _seconds(text: str, where: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"{where}: write a number of seconds, 0 or more (0: an outage is not waited out).")
    return seconds


def _split(url: str) -> tuple[str, str | None]:
    """The URL without `lowtide_outage_seconds`, and its value (the last, if given twice; None if not given)."""
    base, mark, query = url.partition("?")
    if not mark:
        return url, None
    kept: list[str] = []
    value: str | None = None
    for piece in query.split("&"):
        name, _, given = piece.partition("=")
        if name == OUTAGE_PARAMETER:
            value = unquote(given)
        else:
            kept.append(piece)
    return (f"{base}?{'&'.join(kept)}" if kept else base), value
