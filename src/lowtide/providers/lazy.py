"""A provider class named by its module, imported when first used: registering the built-in providers loads no SDK,
so an actor of one provider never pays for importing another's (tens of MiB and a second of CPU each)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.batching.backend import BatchCodec

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lowtide.provider import Provider, ProviderOptions

    ProviderFactory = Callable[[ProviderOptions], Provider]

__all__ = ["LazyProvider", "lender"]


class LazyProvider:
    """A provider factory standing for `module.attribute`, a `Provider` class: called, it builds the provider;
    `codec` is the class's own (what a dry run needs, with no client)."""

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.__name__ = attribute
        self._loaded: ProviderFactory | None = None

    def load(self) -> ProviderFactory:
        """The provider class, imported on first use."""
        loaded = self._loaded
        if loaded is None:
            loaded = self._loaded = getattr(importlib.import_module(self.module), self.__name__)
        return loaded

    def __call__(self, options: ProviderOptions) -> Provider:
        return self.load()(options)

    @property
    def codec(self) -> BatchCodec | None:
        codec: object = getattr(self.load(), "codec", None)
        return codec if isinstance(codec, BatchCodec) else None

    def __repr__(self) -> str:
        return f"LazyProvider({self.module}.{self.__name__})"


def lender(package: str, modules: Mapping[str, str]) -> Callable[[str], object]:
    """A provider package's `__getattr__`: each public name of `modules` (`{"GroqProvider": "live"}`) from the module
    below `package` that defines it, imported when first asked for, so that importing the package loads no SDK."""

    def lent(attribute: str) -> object:
        module = modules.get(attribute)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {attribute!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), attribute)

    return lent
