"""The xAI API as an emulation (the `xai` entry point of `lowtide.emulators`): Chat Completions and Models as OpenAI's
emulation serves them in xAI's dialect, and xAI's own Batch API (`routes.py`, `backend.py`), all under `/xai/v1/`:
the `openai` SDK xAI's providers use sends nothing of xAI's own, so its calls are told apart by that prefix (a
program sets `XAI_BASE_URL=http://127.0.0.1:8765/xai/v1`). Route names are `xai.chat.completions.create`,
`xai.batches.create`, ..., so faults armed for an `xai.` route reach xAI's callers alone; errors are OpenAI's shape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lowtide.core.json_types import json_object
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.openai.dialect_emulation import CompatEmulation
from lowtide.emulator.xai.backend import XAI, XaiBackend, XaiBatch
from lowtide.emulator.xai.routes import xai_routes

__all__ = ["XAI", "XaiEmulation"]


class XaiEmulation(CompatEmulation):
    """The emulated xAI team (`Emulator.emulation(XaiEmulation)`): `xai.xai_batches` beside OpenAI's emulation's
    record of the batches its adds ran as."""

    dialect = XAI
    name = XAI.name
    route_names = (
        *XAI.route_names,
        "xai.batches.create",
        "xai.batches.list",
        "xai.batches.add",
        "xai.batches.requests",
        "xai.batches.results",
        "xai.batches.cancel",
        "xai.batches.retrieve",
    )

    def __init__(self, shared: Shared) -> None:
        self.xai = XaiBackend(shared.clock, shared.settings, shared.faults, shared.cache)
        super().__init__(shared, self.xai)

    def routes(self) -> Sequence[RouteRow]:
        return [*xai_routes(self.xai), *super().routes()]

    def kept(self) -> dict[str, Mapping[str, object]]:
        named = {batch_id: batch.kept() for batch_id, batch in self.xai.xai_batches.items()}
        return {**super().kept(), "named": named}

    def take_back(self, kept: Mapping[str, object]) -> None:
        super().take_back(kept)
        for batch_id, batch in json_object(kept.get("named")).items():
            self.xai.xai_batches[batch_id] = XaiBatch.from_kept(dict(json_object(batch)))
