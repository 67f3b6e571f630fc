"""`CompatEmulation`: OpenAI's emulation serving an OpenAI-compatible API from its `Dialect` (Groq's, Together's): its
models, keys and windows on `CompatBackend`, OpenAI's routes it serves under its own path prefix and route names (so
that faults armed for `<name>.` routes reach its callers alone), its own stats and state file sections."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from lowtide.core.json_types import json_object
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.openai.compat import CompatBackend, prefixed_routes
from lowtide.emulator.openai.dialect import Dialect
from lowtide.emulator.openai.emulation import OpenAIEmulation
from lowtide.emulator.openai.routes import openai_routes

__all__ = ["CompatEmulation"]


class CompatEmulation(OpenAIEmulation):
    """The emulated account of the API `dialect` says (`Emulator.emulation(GroqEmulation)`): its `limits`,
    `created_custom_ids` and `created_batches` (the exactly-once evidence), `files` and `batches`, as OpenAI's
    emulation has them. Subclasses give `dialect`, and `name` and `route_names` as it says them."""

    dialect: ClassVar[Dialect]
    default_caller = False

    def __init__(self, shared: Shared, backend: CompatBackend | None = None) -> None:
        """`backend`: the dialect's own account, when it serves more than OpenAI's (Together's uploads and jobs)."""
        self.compat = backend or CompatBackend(shared.clock, shared.settings, shared.faults, shared.cache, self.dialect)
        super().__init__(shared, self.compat)

    def routes(self) -> Sequence[RouteRow]:
        dialect = self.dialect
        rows = openai_routes(self.shared, self.backend)
        return prefixed_routes(rows, name=dialect.name, prefix=dialect.prefix, served=dialect.served)

    def kept(self) -> dict[str, Mapping[str, object]]:
        """What the dialect's section keeps beside OpenAI's: each batch's model and completion window."""
        return {"models": self.compat.batch_models, "windows": self.compat.batch_windows}

    def take_back(self, kept: Mapping[str, object]) -> None:
        """Take back what `kept` gave, before OpenAI's section is restored."""
        models, windows = json_object(kept.get("models")), json_object(kept.get("windows"))
        self.compat.batch_models.update({key: str(value) for key, value in models.items()})
        self.compat.batch_windows.update({key: float(str(value)) for key, value in windows.items()})

    def saved(self) -> Mapping[str, str]:
        sections = super().saved()
        if not sections:
            return {}
        extra = json.dumps(self.kept(), separators=(",", ":"), sort_keys=True)
        return {**sections, self.dialect.extra_section: extra}

    def restore(self, document: Mapping[str, Any]) -> None:
        if document.get(self.name) is None:
            return
        self.take_back(json_object(document.get(self.dialect.extra_section)))
        super().restore(document)
        self.compat.rewrap()
