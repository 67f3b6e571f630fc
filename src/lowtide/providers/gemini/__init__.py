"""The built-in Google Gemini providers (live: `generateContent`; batch: the API's batch mode, inline or from an
uploaded file; both through the official google-genai SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider class (and
the google-genai SDK, which the `lowtide[gemini]` extra installs) is imported when first used, so registering it
needs no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers import LazyCheck
from lowtide.providers.gemini import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.gemini.batch import GeminiBatchProvider
    from lowtide.providers.gemini.live import GeminiProvider
    from lowtide.providers.gemini.options import GeminiOptions

__all__ = ["GeminiBatchProvider", "GeminiOptions", "GeminiProvider", "register"]

_REGISTRATION = Registration(
    "gemini",
    __name__,
    live="GeminiProvider",
    batch="GeminiBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    lends={"GeminiOptions": "options"},
)


def register(registry: ProviderRegistry) -> None:
    _REGISTRATION.register(registry)


def __getattr__(name: str) -> object:
    return _REGISTRATION.lent(name)
