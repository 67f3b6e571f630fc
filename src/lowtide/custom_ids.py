"""`CustomIdRule`: what a provider's API takes as a custom id a user gives (a line of a batch file in that provider's
format, a request's own `custom_id`), registered by the provider (`ProviderRegistry.register_custom_ids`); lowtide's
own custom ids are the codec's to make (`BatchCodec.custom_id_for`)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["CustomIdRule", "ledger_custom_id"]


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
