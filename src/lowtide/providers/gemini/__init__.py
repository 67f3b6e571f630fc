"""The built-in Google Gemini providers (live: `generateContent`; batch: the API's batch mode, inline or from an
uploaded file; both through the official google-genai SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider class (and
the google-genai SDK, which the `lowtide[gemini]` extra installs) is imported when first used, so registering it
needs no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.gemini import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.gemini.batch import GeminiBatchProvider
    from lowtide.providers.gemini.live import GeminiProvider
    from lowtide.providers.gemini.options import GeminiOptions

__all__ = ["GeminiBatchProvider", "GeminiOptions", "GeminiProvider", "register"]

_REGISTRATION = Registration.built_in("gemini", __name__, "Gemini", rules.USAGE)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
