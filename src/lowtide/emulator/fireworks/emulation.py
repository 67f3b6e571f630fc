"""The Fireworks AI API as an emulation (the `fireworks` entry point of `lowtide.emulators`): Chat Completions as
OpenAI's emulation serves them in Fireworks' dialect, and Fireworks' own models routes (`GET
/v1/accounts/{account}/models`, `.../models/{model}`), all under `/fireworks/v1/`. The fireworks SDK, given a base URL,
puts `/v1/...` after it for every route (at its default address, chat goes to `/inference/v1/...`), so a program sets
`FIREWORKS_BASE_URL=http://127.0.0.1:8765/fireworks`. Route names are `fireworks.chat.completions.create`,
`fireworks.models.retrieve` and `fireworks.models.list`, so faults armed for a `fireworks.` route reach Fireworks'
callers alone; errors are OpenAI's shape (the emulator's reading: the SDK reads any JSON error body).

A model is shown as Fireworks' REST reference shows one: `name` (`accounts/<account>/models/<id>`), `displayName`,
`state` and `contextLength`; the listing is a page of `models` with `nextPageToken` and `totalSize`, every model in
one page (the emulator's reading: a handful of models never needs a second)."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.http import Answer
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.catalogue import model_not_found
from lowtide.emulator.openai.dialect import Catalogue, Dialect
from lowtide.emulator.openai.dialect_emulation import CompatEmulation

__all__ = ["FIREWORKS", "FireworksEmulation"]

FIREWORKS = Dialect(
    name="fireworks",
    catalogue=Catalogue.read("lowtide.emulator.fireworks"),
    own_keys={"reasoning_effort": ("none", "low", "medium", "high"), "top_k": ()},
    served=("chat.completions.create",),
    prefix="/fireworks",
)
"""What Fireworks changes of OpenAI's API: its models (named `accounts/<account>/models/<id>`), its body keys, its
path prefix; its models routes are its own."""


def _shown(model: JsonObject) -> JsonObject:
    """A catalogue row as Fireworks' models routes show a model."""
    name = str(model["id"])
    return {
        "name": name,
        "displayName": name.rsplit("/", 1)[-1],
        "state": "READY",
        "contextLength": model.get("context_length"),
    }


class FireworksEmulation(CompatEmulation):
    """The emulated Fireworks account (`Emulator.emulation(FireworksEmulation)`)."""

    dialect = FIREWORKS
    name = FIREWORKS.name
    route_names = (*FIREWORKS.route_names, "fireworks.models.list", "fireworks.models.retrieve")

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)

    def routes(self) -> Sequence[RouteRow]:
        models = "/fireworks/v1/accounts/{account}/models"
        return [
            (models, "GET", "fireworks.models.list", self._list_models),
            (models + "/{model}", "GET", "fireworks.models.retrieve", self._retrieve_model),
            *super().routes(),
        ]

    async def _list_models(self, request: Request) -> Answer:
        account = request.path_params["account"]
        prefix = f"accounts/{account}/models/"
        shown = [_shown(model) for model in FIREWORKS.catalogue.listed() if str(model["id"]).startswith(prefix)]
        return {"models": shown, "nextPageToken": "", "totalSize": len(shown)}

    async def _retrieve_model(self, request: Request) -> Answer:
        name = f"accounts/{request.path_params['account']}/models/{request.path_params['model']}"
        for model in FIREWORKS.catalogue.listed():
            if model["id"] == name:
                return _shown(model)
        raise model_not_found(name)
