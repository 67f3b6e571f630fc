"""A provider package's registration as data: its name, its live and batch classes (imported when first used), its
rules for the registry, and the names the package lends from its modules (its `__getattr__`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lowtide.core.custom_ids import CustomIdRule
from lowtide.core.modes import BatchProcessingMode
from lowtide.core.parameters import LazyCheck, ParameterCheck
from lowtide.cost.pricing import UsageShape
from lowtide.providers.lazy import LazyProvider, lender

if TYPE_CHECKING:
    from lowtide.registry import ProviderRegistry

__all__ = ["Registration"]


@dataclass(frozen=True)
class Registration:
    """What a provider package's `register(registry)` hands the registry, and the names its `__getattr__` lends.

    `live` and `batch` are class names in the package's `live` and `batch` modules; `lends` names more of its public
    names by module (`{"GeminiOptions": "options"}`). None of them is imported until first used, so registering a
    provider loads no SDK."""

    name: str
    package: str
    """The package's `__name__`: its modules are found below it."""
    live: str
    batch: str
    usage: UsageShape | None = None
    parameters: ParameterCheck | None = None
    batch_parameters: ParameterCheck | None = None
    """The check of an actor in batch mode, where the batch API takes less than the live one (None: `parameters`)."""
    custom_ids: CustomIdRule | None = None
    lends: Mapping[str, str] = field(default_factory=dict[str, str])
    reads_options_of: tuple[str, ...] = ()
    """Other providers' `provider_options` sections its requests read too (Claude on Vertex AI reads Anthropic's):
    not warned of as ignored on its actors."""

    @classmethod
    def built_in(
        cls,
        name: str,
        package: str,
        prefix: str,
        usage: UsageShape,
        *,
        options: bool = True,
        custom_ids: CustomIdRule | None = None,
        batch_check: bool = False,
    ) -> Registration:
        """A package laid out as the built-ins are: `<prefix>Provider` in its `live` module, `<prefix>BatchProvider`
        in `batch`, `<prefix>Options` in `options` (unless `options` is False), `check_parameters` in `parameters`
        (and `check_batch_parameters` there too, with `batch_check`)."""
        return cls(
            name,
            package,
            live=f"{prefix}Provider",
            batch=f"{prefix}BatchProvider",
            usage=usage,
            parameters=LazyCheck(f"{package}.parameters", "check_parameters"),
            batch_parameters=LazyCheck(f"{package}.parameters", "check_batch_parameters") if batch_check else None,
            custom_ids=custom_ids,
            lends={f"{prefix}Options": "options"} if options else {},
        )

    def register(self, registry: ProviderRegistry) -> None:
        """The package's entry point of the `lowtide.providers` group: its rules, then its two classes."""
        if self.parameters is not None:
            registry.register_parameters(self.name, self.parameters, batch=self.batch_parameters)
        if self.usage is not None:
            registry.register_pricing(self.name, self.usage)
        if self.custom_ids is not None:
            registry.register_custom_ids(self.name, self.custom_ids)
        if self.reads_options_of:
            registry.register_option_sections(self.name, self.reads_options_of)
        registry.register(self.name, BatchProcessingMode.LIVE, LazyProvider(f"{self.package}.live", self.live))
        registry.register(self.name, BatchProcessingMode.BATCH, LazyProvider(f"{self.package}.batch", self.batch))

    def lent(self, attribute: str) -> object:
        """The package's `attribute` from the module that defines it, imported now (the package's `__getattr__`)."""
        return lender(self.package, {self.live: "live", self.batch: "batch", **self.lends})(attribute)
