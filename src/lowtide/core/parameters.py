"""The settings of a call that each provider checks against its own API's rules (ranges, values it refuses), and the
hook through which it does: an actor's configuration is checked as it loads, by its provider's check found through
the registry (`ProviderRegistry.register_parameters`), and every request again as its provider encodes it.

Neutral code holds no provider's rule: `temperature` is 0 to 1 for Anthropic and 0 to 2 for OpenAI, and only the
provider knows which.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["LazyCheck", "ParameterCheck", "Parameters"]


class Parameters(Protocol):
    """What a provider checks of an actor's configuration (`ActorConfiguration`) or one call (`ActorRequest`): both
    have these fields."""

    @property
    def model(self) -> str: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def temperature(self) -> float | None: ...

    @property
    def top_p(self) -> float | None: ...

    @property
    def top_k(self) -> int | None: ...

    @property
    def stop_sequences(self) -> list[str]: ...

    @property
    def metadata(self) -> dict[str, Any] | None: ...

    @property
    def thinking(self) -> dict[str, Any] | None: ...

    @property
    def tool_choice(self) -> dict[str, Any] | None: ...

    @property
    def output_config(self) -> dict[str, Any] | None: ...

    @property
    def cache_control(self) -> dict[str, Any] | None: ...

    @property
    def extra_params(self) -> dict[str, Any]: ...

    @property
    def provider_options(self) -> dict[str, dict[str, Any]]: ...


ParameterCheck = Callable[[Parameters], object]
"""A provider's check of `Parameters`: raises `ConfigurationError` naming the field (`temperature: ...`) when its
API would refuse them; what it returns is ignored."""


class LazyCheck:
    """A provider's check named by its module, imported when first used: registering the built-in providers'
    checks imports no SDK (an OpenAI actor never pays for Anthropic's, nor the other way round)."""

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.attribute = attribute
        self._loaded: ParameterCheck | None = None

    def __call__(self, parameters: Parameters) -> object:
        check = self._loaded
        if check is None:
            check = self._loaded = getattr(importlib.import_module(self.module), self.attribute)
        return check(parameters)
