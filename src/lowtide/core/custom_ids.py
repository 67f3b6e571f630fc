"""`CustomIdRule`: what a provider's API takes as a custom id a user gives (a line of a batch file in that provider's
format, a request's own `custom_id`), registered by the provider (`ProviderRegistry.register_custom_ids`); lowtide's
own custom ids are the codec's to make (`BatchCodec.custom_id_for`)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["HASHED", "CustomIdParts", "CustomIdRule", "ledger_custom_id", "parts_of_ledger_custom_id"]

_IDENTITY = re.compile(r"(.+)_([0-9a-f]{12})")
"""A plain custom id made in a ledger: the key, `_`, and the ledger's identity (12 lowercase hex digits, as every
store makes it)."""


@dataclass(frozen=True)
class CustomIdRule:
    """A provider's rule for custom ids: a pattern a whole id must match, and the rule in words for a refusal."""

    pattern: re.Pattern[str]
    described: str
    """The rule as a refusal says it: "1 to 64 letters, digits, '-' or '_'"."""

    def allows(self, custom_id: object) -> bool:
        """Whether `custom_id` is a string the provider takes as a custom id."""
        return isinstance(custom_id, str) and self.pattern.fullmatch(custom_id) is not None


def ledger_custom_id(key: str, ledger: str | None, *, plain: re.Pattern[str], hashed: str, digits: int) -> str:
    """The custom id of `key` in the ledger whose identity is `ledger`: `<key>_<ledger>` when it matches `plain` (the
    key alone outside any ledger), otherwise `hashed` and `digits` hex digits of a digest of both, which a plain id
    never equals when `hashed` holds a character `plain` does not take."""
    custom_id = key if ledger is None else f"{key}_{ledger}"
    if plain.fullmatch(custom_id):
        return custom_id
    named = key if ledger is None else f"{ledger}\n{key}"
    return hashed + hashlib.sha256(named.encode()).hexdigest()[:digits]


@dataclass(frozen=True, slots=True)
class CustomIdParts:
    """What a custom id lowtide made in a ledger says of its request (`BatchCodec.custom_id_parts`): its key and the
    ledger's identity when the id is plain (`<key>_<identity>`), neither when it is hashed (a digest of both, made for
    a key the provider's id rule does not take as it is)."""

    key: str | None
    """The request's key; None for a hashed id."""
    identity: str | None
    """The identity of the ledger that claimed it (`LedgerStore.identity`); None for a hashed id."""

    @property
    def hashed(self) -> bool:
        return self.key is None


HASHED = CustomIdParts(None, None)
"""The parts of a hashed custom id: neither its key nor its ledger can be read from it."""


def parts_of_ledger_custom_id(
    custom_id: str, *, plain: re.Pattern[str], hashed: str, digits: int
) -> CustomIdParts | None:
    """`ledger_custom_id` read back: the key and identity of a plain id, `HASHED` for a hashed one, None for an id
    `ledger_custom_id` never makes in a ledger (a user's own, another program's). A plain id is read first: it may
    start as a hashed one does (Anthropic's `k-`, a key `k-1`), but a hashed one is hex digits after its start, never
    `_` and an identity."""
    matched = _IDENTITY.fullmatch(custom_id) if plain.fullmatch(custom_id) else None
    if matched is not None:
        return CustomIdParts(matched.group(1), matched.group(2))
    rest = custom_id[len(hashed) :] if custom_id.startswith(hashed) else ""
    return HASHED if len(rest) == digits and all(c in "0123456789abcdef" for c in rest) else None
