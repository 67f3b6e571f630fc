"""The provider registry: (provider name, mode) -> factory, and each provider's rules as data.

Built-in providers register through the `lowtide.providers` entry-point group, exactly as a third-party plugin
does: each entry point names a callable `register(registry)`. The default registry loads the group on first use.
Besides its factories a provider registers the rules neutral code asks for by its name: the check of its
parameters (`register_parameters`, with a stricter one for batch mode where its batch API takes less), the shape
of its usage for pricing (`register_pricing`), or its prices as its actor configures them
(`register_configured_prices`), and what it takes as a custom id a user gives (`register_custom_ids`).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from lowtide.core.modes import BatchProcessingMode
from lowtide.core.parameters import ParameterCheck
from lowtide.errors import ConfigurationError, ProviderCapabilityError, ProviderNotFoundError
from lowtide.provider import Provider, ProviderOptions
from lowtide.types import Cost, Usage

if TYPE_CHECKING:
    from lowtide.core.custom_ids import CustomIdRule
    from lowtide.cost.usage_shape import UsageShape

__all__ = [
    "ENTRY_POINT_GROUP",
    "ConfiguredPrices",
    "ProviderFactory",
    "ProviderRegistry",
    "Resolution",
    "default_registry",
]

ENTRY_POINT_GROUP = "lowtide.providers"

ProviderFactory = Callable[[ProviderOptions], Provider]
ConfiguredPrices = Callable[[Mapping[str, Mapping[str, object]], Usage, str, BatchProcessingMode], Cost | None]
"""A provider's prices as its actor configures them: (provider_options, usage, model, mode) -> the cost, or None
where no price is configured for the model."""


@dataclass(frozen=True)
class Resolution:
    """The factory picked for a call, and the mode it will really run in (after any fallback)."""

    factory: ProviderFactory
    mode: BatchProcessingMode
    fell_back: bool


class ProviderRegistry:
    """Maps a provider name and a mode to the factory that builds that provider."""

    def __init__(self) -> None:
        self._factories: dict[tuple[str, BatchProcessingMode], ProviderFactory] = {}
        self._checks: dict[str, ParameterCheck] = {}
        self._batch_checks: dict[str, ParameterCheck] = {}
        self._usage: dict[str, UsageShape] = {}
        self._configured: dict[str, ConfiguredPrices] = {}
        self._custom_ids: dict[str, CustomIdRule] = {}
        self._option_sections: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def register(
        self, name: str, mode: BatchProcessingMode, factory: ProviderFactory, *, replace: bool = False
    ) -> None:
        """Register `factory` for `(name, mode)`; registering a taken slot again needs `replace=True`."""
        key = (name, BatchProcessingMode(mode))
        with self._lock:
            if key in self._factories and not replace:
                raise ConfigurationError(
                    f"A provider is already registered as {name!r} for {key[1].value} mode; pass replace=True "
                    "to override it.",
                    field="provider",
                )
            self._factories[key] = factory

    def register_parameters(self, name: str, check: ParameterCheck, *, batch: ParameterCheck | None = None) -> None:
        """Register the check of `name`'s parameters (its API's ranges and refusals), which an actor of that provider
        is checked by as its configuration loads (`parameter_check`); `batch`, when given, replaces it for an actor
        in batch mode (a batch API that takes less than the live one). A later registration replaces both."""
        with self._lock:
            self._checks[name] = check
            if batch is None:
                self._batch_checks.pop(name, None)
            else:
                self._batch_checks[name] = batch

    def parameter_check(self, name: str, mode: BatchProcessingMode = BatchProcessingMode.LIVE) -> ParameterCheck | None:
        """The check `name` registered for its parameters in `mode`, if any."""
        if mode is BatchProcessingMode.BATCH and name in self._batch_checks:
            return self._batch_checks[name]
        return self._checks.get(name)

    def register_pricing(self, name: str, shape: UsageShape) -> None:
        """Register how `name`'s API reports usage, so that its answers and budgets are priced through genai-prices
        (`pricing.cost_of`); a provider that registers none has its costs unrecorded, with a warning."""
        with self._lock:
            self._usage[name] = shape

    def usage_shape(self, name: str) -> UsageShape | None:
        """The usage shape `name` registered, if any."""
        return self._usage.get(name)

    def register_configured_prices(self, name: str, prices: ConfiguredPrices) -> None:
        """Register `name`'s prices as its actors configure them (an endpoint genai-prices cannot know), so that a
        request's worst case, and so every budget of a live call, is priced at them (`budget.worst_case_of`)."""
        with self._lock:
            self._configured[name] = prices

    def configured_prices(self, name: str) -> ConfiguredPrices | None:
        """The configured prices `name` registered, if any."""
        return self._configured.get(name)

    def register_custom_ids(self, name: str, rule: CustomIdRule) -> None:
        """Register what `name`'s API takes as a custom id a user gives (a batch file's lines in its format)."""
        with self._lock:
            self._custom_ids[name] = rule

    def custom_id_rule(self, name: str) -> CustomIdRule | None:
        """The custom id rule `name` registered, if any (None: any id a job may have)."""
        return self._custom_ids.get(name)

    def register_option_sections(self, name: str, sections: Iterable[str]) -> None:
        """Register the other providers' `provider_options` sections `name`'s requests read besides its own (a
        provider that speaks another's API: Claude on Vertex AI reads `anthropic`'s), so that an actor of it setting
        them is not told they are ignored."""
        with self._lock:
            self._option_sections[name] = tuple(sections)

    def option_sections(self, name: str) -> tuple[str, ...]:
        """The `provider_options` sections `name` reads: its own, then those it registered."""
        return (name, *self._option_sections.get(name, ()))

    def names(self) -> list[str]:
        return sorted({name for name, _ in self._factories})

    def modes(self, name: str) -> list[BatchProcessingMode]:
        return [mode for mode in BatchProcessingMode if (name, mode) in self._factories]

    def resolve(self, name: str, mode: BatchProcessingMode, *, fallback_to_live: bool = False) -> Resolution:
        """Find the factory for `(name, mode)`.

        A provider that exists but has no batch factory falls back to live only when `fallback_to_live` is set;
        otherwise a `ProviderCapabilityError` says so and how to allow it.
        """
        mode = BatchProcessingMode(mode)
        factory = self._factories.get((name, mode))
        if factory is not None:
            return Resolution(factory, mode, fell_back=False)
        known = self.names()
        if name not in known:
            raise ProviderNotFoundError(name, known=known, suggestions=difflib.get_close_matches(name, known, n=2))
        live = self._factories.get((name, BatchProcessingMode.LIVE))
        if mode is BatchProcessingMode.BATCH and live is not None:
            if fallback_to_live:
                return Resolution(live, BatchProcessingMode.LIVE, fell_back=True)
            raise ProviderCapabilityError(
                name,
                "batch processing",
                hint="Use batch_processing: live, or set fallback_to_live: true to answer through its live API.",
            )
        raise ProviderCapabilityError(name, f"{mode.value} mode")

    def load_entry_points(self, eps: Iterable[EntryPoint] | None = None) -> list[str]:
        """Call the `register(registry)` of every plugin in the entry-point group; returns the names loaded.

        A plugin that fails to import or register raises `ConfigurationError` naming it, rather than vanishing.
        """
        loaded: list[str] = []
        for ep in eps if eps is not None else entry_points(group=ENTRY_POINT_GROUP):
            try:
                register = ep.load()
                register(self)
            except ConfigurationError:
                raise
            except Exception as exc:
                raise ConfigurationError(
                    f"Provider plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}",
                    field="provider",
                ) from exc
            loaded.append(ep.name)
        return loaded


_default: ProviderRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> ProviderRegistry:
    """The process-wide registry, with every installed plugin (the built-ins included) loaded once."""
    global _default
    with _default_lock:
        if _default is None:
            registry = ProviderRegistry()
            registry.load_entry_points()
            _default = registry
        return _default
