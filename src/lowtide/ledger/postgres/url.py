"""A PostgreSQL ledger's URL, said without its password.

A URL's password is a secret: lowtide never logs it, stores it or puts it in a message. `redacted` is the only form
of a URL that leaves this package, and `scrub` takes the password out of any text (a driver's error message).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from lowtide.ledger.location import redacted

__all__ = ["redacted", "scrub"]


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
