"""The OpenRouter API as an emulation (the `openrouter` entry point of `lowtide.emulators`): OpenAI's emulation in
OpenRouter's dialect, Chat Completions and the models list under `/openrouter/api/v1/` (OpenRouter's own paths are
under `/api/v1/`; the `openai` SDK sends nothing of OpenRouter's own, so its calls are told apart by that prefix: a
program sets `OPENROUTER_BASE_URL=http://127.0.0.1:8765/openrouter/api/v1`). Route names are
`openrouter.chat.completions.create` and `openrouter.models.list`; errors are OpenAI's shape. No batch routes: lowtide
speaks no OpenRouter Batch API."""

from __future__ import annotations

from lowtide.emulator.openai.dialect import Catalogue, Dialect
from lowtide.emulator.openai.dialect_emulation import CompatEmulation

__all__ = ["OPENROUTER", "OpenRouterEmulation"]

OPENROUTER = Dialect(
    name="openrouter",
    catalogue=Catalogue.read("lowtide.emulator.openrouter"),
    own_keys={"reasoning_effort": ("minimal", "low", "medium", "high"), "top_k": (), "provider": (), "models": ()},
    served=("chat.completions.create", "models.list"),
    prefix="/openrouter/api",
)
"""What OpenRouter changes of OpenAI's API: its models (named `<author>/<slug>`), its body keys and its paths."""


class OpenRouterEmulation(CompatEmulation):
    """The emulated OpenRouter account (`Emulator.emulation(OpenRouterEmulation)`), as OpenAI's emulation has it."""

    dialect = OPENROUTER
    name = OPENROUTER.name
    route_names = OPENROUTER.route_names
