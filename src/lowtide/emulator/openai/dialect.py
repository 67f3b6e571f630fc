"""An OpenAI-compatible API's emulation as data (`Dialect`): its name, its models (`Catalogue`, read from the
`models.toml` of its folder), the body keys it takes that OpenAI's does not, its batch windows, its batch listing,
and which of OpenAI's routes it serves under which path prefix. `CompatBackend` and `CompatEmulation` serve it."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.catalogue import model_not_found

__all__ = ["Catalogue", "Dialect", "OwnKeys"]

OwnKeys = Mapping[str, tuple[str, ...]]
"""Body keys the API takes that OpenAI's does not, each with the values it takes (empty: any)."""


@dataclass(frozen=True)
class Catalogue:
    """The models an API serves, each as its Models API shows it (`id`, `object`, `created`, then the API's own
    fields, in its order)."""

    models: tuple[JsonObject, ...]

    @classmethod
    def read(cls, package: str) -> Catalogue:
        """The catalogue in `package`'s `models.toml`: a `created` time, and a `[[models]]` table a model, its `id`
        first, then its own fields as the API names them."""
        data = tomllib.loads(resources.files(package).joinpath("models.toml").read_text(encoding="utf-8"))
        created = int(data["created"])
        rows: list[JsonObject] = []
        for model in data["models"]:
            fields = dict(model)
            rows.append({"id": str(fields.pop("id")), "object": "model", "created": created, **fields})
        return cls(tuple(rows))

    def known(self, name: object) -> bool:
        return isinstance(name, str) and any(model["id"] == name for model in self.models)

    def retrieve(self, name: str) -> JsonObject:
        """The model `name` as the API shows it; OpenAI's 404 when the API serves no such model."""
        for model in self.models:
            if model["id"] == name:
                return dict(model)
        raise model_not_found(name)

    def listed(self) -> list[JsonObject]:
        return [dict(model) for model in self.models]

    def page(self) -> JsonObject:
        return {"object": "list", "data": self.listed()}


@dataclass(frozen=True)
class Dialect:
    """What an OpenAI-compatible API changes of OpenAI's: everything else is OpenAI's emulation, as it is."""

    name: str
    """Its entry point's name: its route names start `<name>.`, its stats `<name>_`, its state file section is
    `<name>`."""
    catalogue: Catalogue
    own_keys: OwnKeys
    served: tuple[str, ...]
    """OpenAI's routes it serves (by their names without `openai.`)."""
    prefix: str = ""
    """Its path prefix before OpenAI's paths (Groq's `/openai`)."""
    endpoints: tuple[str, ...] = ("/v1/chat/completions",)
    """The endpoints a batch may name."""
    least_hours: int = 24
    most_hours: int = 24
    """The completion windows a batch may ask for."""
    paged_listing: bool = True
    """False: the batch listing answers every batch, newest first, in one page."""
    batch_section: str = field(default="")
    """The state file section keeping what OpenAI's section does not (each batch's model and window); by default
    `<name>_batches`."""

    @property
    def route_names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}.{route}" for route in self.served)

    @property
    def extra_section(self) -> str:
        return self.batch_section or f"{self.name}_batches"
