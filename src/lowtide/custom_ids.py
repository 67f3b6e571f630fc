"""`CustomIdRule`: what a provider's API takes as a custom id a user gives (a line of a batch file in that provider's
format, a request's own `custom_id`), registered by the provider (`ProviderRegistry.register_custom_ids`); lowtide's
own custom ids are the codec's to make (`BatchCodec.custom_id_for`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CustomIdRule"]


@dataclass(frozen=True)
class CustomIdRule:
    """A provider's rule for custom ids: a pattern a whole id must match, and the rule in words for a refusal."""

    pattern: re.Pattern[str]
    described: str
    """The rule as a refusal says it: "1 to 64 letters, digits, '-' or '_'"."""

    def allows(self, custom_id: object) -> bool:
        """Whether `custom_id` is a string the provider takes as a custom id."""
        return isinstance(custom_id, str) and self.pattern.fullmatch(custom_id) is not None
