"""Providers: the interface every provider implements, and the built-in Anthropic providers."""

from lowtide.providers.base import Capability, Provider, ProviderOptions

__all__ = ["Capability", "Provider", "ProviderOptions"]
