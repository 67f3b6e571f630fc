"""The built-in Anthropic providers and their plugin registration.

`register` is the entry point of the `lowtide.providers` group: the built-ins load exactly as a plugin would. The
provider classes (and the Anthropic SDK with them) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.anthropic import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.anthropic.batch import ClaudeBatchProvider
    from lowtide.providers.anthropic.live import ClaudeProvider

__all__ = ["ClaudeBatchProvider", "ClaudeProvider", "register"]

_REGISTRATION = Registration.built_in(
    "anthropic", __name__, "Claude", rules.USAGE, options=False, custom_ids=rules.CUSTOM_IDS
)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
