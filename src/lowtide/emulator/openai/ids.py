"""Object ids shaped like OpenAI's: `file-` and 22 letters and digits, `batch_`, `resp_` and `msg_` with hex,
`chatcmpl-` and `call_` with letters and digits. Random for new objects; derived (a pure function of their parts)
for those produced again each time they are read, such as the answers in a batch's output file."""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["derived_alnum", "derived_hex", "new_alnum", "new_hex"]

_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def new_hex(prefix: str, length: int = 32) -> str:
    return prefix + secrets.token_hex(length // 2)


def new_alnum(prefix: str, length: int = 22) -> str:
    return prefix + "".join(secrets.choice(_ALNUM) for _ in range(length))


def derived_hex(prefix: str, *parts: str, length: int = 32) -> str:
    return prefix + _digest(parts).hex()[:length]


def derived_alnum(prefix: str, *parts: str, length: int = 22) -> str:
    number = int.from_bytes(_digest(parts), "big")
    chars: list[str] = []
    for _ in range(length):
        number, index = divmod(number, len(_ALNUM))
        chars.append(_ALNUM[index])
    return prefix + "".join(chars)


def _digest(parts: tuple[str, ...]) -> bytes:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=32).digest()
