"""The Groq API as an emulation (the `groq` entry point of `lowtide.emulators`): Files, Batches, Chat Completions and
Models under Groq's own `/openai/v1/` prefix, answered in Groq's shapes and errors (OpenAI's), every answer with its
`x-request-id`. Its paths are its own, so it needs no caller to be told apart; a program sets only `GROQ_BASE_URL`.

OpenAI's routes (`lowtide.emulator.openai.routes`) are served again on Groq's backend, under Groq's paths and route
names (`groq.files.create`, `groq.batches.create`, `groq.chat.completions.create`, ...), so faults armed for a
`groq.` route reach Groq's callers alone."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from lowtide.core.json_types import json_object
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.groq.backend import GroqBackend
from lowtide.emulator.openai.compat import prefixed_routes
from lowtide.emulator.openai.emulation import OpenAIEmulation
from lowtide.emulator.openai.routes import openai_routes
from lowtide.emulator.openai.state import OpenAIStateCodec, restore

__all__ = ["GroqEmulation", "prefixed_routes"]

_SERVED = (
    "files.create",
    "files.retrieve",
    "files.list",
    "files.delete",
    "files.content",
    "batches.create",
    "batches.retrieve",
    "batches.list",
    "batches.cancel",
    "chat.completions.create",
    "models.list",
    "models.retrieve",
)


class GroqEmulation(OpenAIEmulation):
    """The emulated Groq account (`Emulator.emulation(GroqEmulation)`): its `limits`, `created_custom_ids` and
    `created_batches` (the exactly-once evidence), `files` and `batches`, as OpenAI's emulation has them."""

    name: ClassVar[str] = "groq"
    route_names = tuple(f"groq.{route}" for route in _SERVED)
    default_caller = False

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.groq = GroqBackend(shared.clock, shared.settings, shared.faults, shared.cache)
        self.backend = self.groq
        if shared.settings.max_request_bytes is not None:
            self.backend.limits.max_request_bytes = shared.settings.max_request_bytes
        self._state = OpenAIStateCodec()

    def routes(self) -> Sequence[RouteRow]:
        return prefixed_routes(openai_routes(self.shared, self.backend), name="groq", prefix="/openai", served=_SERVED)

    def stats(self) -> Mapping[str, object]:
        backend = self.backend
        return {
            "groq_batches": len(backend.batches),
            "groq_created_batches": backend.created_batches,
            "groq_created_custom_ids": dict(backend.created_custom_ids),
        }

    def saved(self) -> Mapping[str, str]:
        section = self._state.encode(self.backend)
        if section is None:
            return {}
        extra = _compact({"models": self.groq.batch_models, "windows": self.groq.batch_windows})
        return {"groq": section, "groq_batches": extra}

    def restore(self, document: Mapping[str, Any]) -> None:
        section = document.get("groq")
        if section is None:
            return
        extra = json_object(document.get("groq_batches"))
        models, windows = json_object(extra.get("models")), json_object(extra.get("windows"))
        self.groq.batch_models.update({key: str(value) for key, value in models.items()})
        self.groq.batch_windows.update({key: float(str(value)) for key, value in windows.items()})
        restore(self.backend, section)
        self.groq.rewrap()


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
