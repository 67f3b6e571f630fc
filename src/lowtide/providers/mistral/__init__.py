"""The built-in Mistral providers (live: chat completions; batch: Mistral's Batch API, inline or from an uploaded
file; both through the official mistralai SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the mistralai SDK, which the `lowtide[mistral]` extra installs) are imported when first used, so registering them
needs no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers import LazyCheck
from lowtide.providers.mistral import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.mistral.batch import MistralBatchProvider
    from lowtide.providers.mistral.live import MistralProvider
    from lowtide.providers.mistral.options import MistralOptions

__all__ = ["MistralBatchProvider", "MistralOptions", "MistralProvider", "register"]

_REGISTRATION = Registration(
    "mistral",
    __name__,
    live="MistralProvider",
    batch="MistralBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    lends={"MistralOptions": "options"},
)


def register(registry: ProviderRegistry) -> None:
    _REGISTRATION.register(registry)


def __getattr__(name: str) -> object:
    return _REGISTRATION.lent(name)
