"""The built-in Mistral providers (live: chat completions; batch: Mistral's Batch API, inline or from an uploaded
file; both through the official mistralai SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the mistralai SDK, which the `lowtide[mistral]` extra installs) are imported when first used, so registering them
needs no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.mistral import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.mistral.batch import MistralBatchProvider
    from lowtide.providers.mistral.live import MistralProvider
    from lowtide.providers.mistral.options import MistralOptions

__all__ = ["MistralBatchProvider", "MistralOptions", "MistralProvider", "register"]

_REGISTRATION = Registration.built_in("mistral", __name__, "Mistral", rules.USAGE)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
