"""Object ids shaped like the API's (`msg_01…`, `msgbatch_01…`): random for new objects, derived for ones that
must come out the same each time they are produced, such as the messages in a batch's results."""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["derived_id", "new_id"]

# Base58, as in the API's ids: no 0, O, I or l.
_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_LENGTH = 22
_PAIR_BASE = len(_ALPHABET) ** 2
_PAIRS = [_ALPHABET[index % len(_ALPHABET)] + _ALPHABET[index // len(_ALPHABET)] for index in range(_PAIR_BASE)]


def new_id(prefix: str) -> str:
    return f"{prefix}_01" + "".join(secrets.choice(_ALPHABET) for _ in range(_LENGTH))


def derived_id(prefix: str, *parts: str) -> str:
    """An id that is a pure function of `parts`."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=24).digest()
    number = int.from_bytes(digest, "big")
    # Two characters per division (least significant first, as one at a time would give): a batch's results derive
    # an id for each of up to 100,000 messages.
    pairs: list[str] = []
    for _ in range(_LENGTH // 2):
        number, index = divmod(number, _PAIR_BASE)
        pairs.append(_PAIRS[index])
    return f"{prefix}_01" + "".join(pairs)
