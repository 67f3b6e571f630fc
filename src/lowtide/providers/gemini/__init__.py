"""The built-in Google Gemini providers (live: `generateContent`; batch: the API's batch mode, inline or from an
uploaded file; both through the official google-genai SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider class (and
the google-genai SDK, which the `lowtide[gemini]` extra installs) is imported when first used, so registering it
needs no SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide import BatchProcessingMode
from lowtide.providers import LazyCheck, LazyProvider
from lowtide.providers.gemini import rules

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.gemini.batch import GeminiBatchProvider
    from lowtide.providers.gemini.live import GeminiProvider
    from lowtide.providers.gemini.options import GeminiOptions

__all__ = ["GeminiBatchProvider", "GeminiOptions", "GeminiProvider", "register"]

_CLASSES = {
    "GeminiProvider": "lowtide.providers.gemini.live",
    "GeminiBatchProvider": "lowtide.providers.gemini.batch",
    "GeminiOptions": "lowtide.providers.gemini.options",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters("gemini", LazyCheck("lowtide.providers.gemini.parameters", "check_parameters"))
    registry.register_pricing("gemini", rules.USAGE)
    registry.register("gemini", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["GeminiProvider"], "GeminiProvider"))
    registry.register(
        "gemini", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["GeminiBatchProvider"], "GeminiBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
