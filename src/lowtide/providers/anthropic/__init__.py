"""The built-in Anthropic providers and their plugin registration.

`register` is the entry point of the `lowtide.providers` group: the built-ins load exactly as a plugin would. The
provider classes (and the Anthropic SDK with them) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.core.parameters import LazyCheck
from lowtide.providers.anthropic import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.anthropic.batch import ClaudeBatchProvider
    from lowtide.providers.anthropic.live import ClaudeProvider
    from lowtide.registry import ProviderRegistry

__all__ = ["ClaudeBatchProvider", "ClaudeProvider", "register"]

_REGISTRATION = Registration(
    "anthropic",
    __name__,
    live="ClaudeProvider",
    batch="ClaudeBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    custom_ids=rules.CUSTOM_IDS,
)


def register(registry: ProviderRegistry) -> None:
    _REGISTRATION.register(registry)


def __getattr__(name: str) -> object:
    return _REGISTRATION.lent(name)
