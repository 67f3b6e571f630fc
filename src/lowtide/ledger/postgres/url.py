"""PostgreSQL ledger locations: telling a `postgresql://` URL from a file path, and saying it without its password.

A URL's password is a secret: lowtide never logs it, stores it or puts it in a message. `redacted` is the only form
of a URL that leaves this package, and `scrub` takes the password out of any text (a driver's error message).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lowtide.ledger.location import ledger_location, redacted

__all__ = ["configured_url", "is_postgres_url", "redacted", "scrub"]

_SCHEME = re.compile(r"^postgres(?:ql)?:/", re.IGNORECASE)
"""`postgresql://` or `postgres://`; one slash is enough, since `Path` folds `//` into `/`."""


def is_postgres_url(location: object) -> bool:
    """Whether a ledger location (a string, a Path, a `Ledger`: anything) names a PostgreSQL database."""
    return isinstance(location, str | Path) and bool(_SCHEME.match(str(location)))


def configured_url(location: object) -> str | None:
    """The PostgreSQL URL a ledger setting names (None: `$LOWTIDE_LEDGER`), or None when it names another kind of
    ledger (or is a ledger object already). A location lowtide cannot read is a `ConfigurationError`
    (`location.ledger_location`)."""
    if location is not None and not isinstance(location, str | Path):
        return None
    found = ledger_location(location)
    return found.target if found.scheme == "postgresql" else None


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
