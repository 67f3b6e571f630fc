"""The OpenRouter API as an emulation (the `openrouter` entry point of `lowtide.emulators`): OpenAI's emulation in
OpenRouter's dialect, Chat Completions and the models list, and OpenRouter's own Batch API (`batches.py`: inline
requests, one of OpenAI's batches underneath), all under `/openrouter/api/v1/` (OpenRouter's own paths are under
`/api/v1/`; the `openai` SDK sends nothing of OpenRouter's own, so its calls are told apart by that prefix: a program
sets `OPENROUTER_BASE_URL=http://127.0.0.1:8765/openrouter/api/v1`). Route names are
`openrouter.chat.completions.create`, `openrouter.models.list` and `openrouter.batches.create`, `.list`, `.retrieve`;
errors are OpenAI's shape."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.http import Answer, read_json
from lowtide.emulator.openai.dialect import Catalogue, Dialect
from lowtide.emulator.openai.dialect_emulation import CompatEmulation
from lowtide.emulator.openrouter.batches import OpenRouterBatches

__all__ = ["OPENROUTER", "OpenRouterEmulation"]

OPENROUTER = Dialect(
    name="openrouter",
    catalogue=Catalogue.read("lowtide.emulator.openrouter"),
    own_keys={"reasoning_effort": ("minimal", "low", "medium", "high"), "top_k": (), "provider": (), "models": ()},
    served=("chat.completions.create", "models.list"),
    prefix="/openrouter/api",
)
"""What OpenRouter changes of OpenAI's API: its models (named `<author>/<slug>`), its body keys and its paths."""

_BODY_BYTES = 100 * 1024 * 1024
_BATCHES = "/openrouter/api/v1/batches"


class OpenRouterEmulation(CompatEmulation):
    """The emulated OpenRouter workspace (`Emulator.emulation(OpenRouterEmulation)`), as OpenAI's emulation has it:
    its batches are OpenAI's underneath (`created_custom_ids` counts what each create sent)."""

    dialect = OPENROUTER
    name = OPENROUTER.name
    route_names = (
        *OPENROUTER.route_names,
        "openrouter.batches.create",
        "openrouter.batches.list",
        "openrouter.batches.retrieve",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.openrouter = OpenRouterBatches(self.compat)

    def routes(self) -> Sequence[RouteRow]:
        return [
            (_BATCHES, "POST", "openrouter.batches.create", self._create),
            (_BATCHES, "GET", "openrouter.batches.list", self._list),
            (f"{_BATCHES}/{{batch_id}}", "GET", "openrouter.batches.retrieve", self._retrieve),
            *super().routes(),
        ]

    async def _create(self, request: Request) -> Answer:
        return self.openrouter.submit(await read_json(request, _BODY_BYTES))

    async def _list(self, request: Request) -> Answer:
        return self.openrouter.listing(dict(request.query_params))

    async def _retrieve(self, request: Request) -> Answer:
        return self.openrouter.show(request.path_params["batch_id"])
