"""OpenAI's emulated account (`lowtide.emulator.openai.backend.OpenAIBackend`: files, batches on the clock, faults,
chat answers) serving an OpenAI-compatible API whose models are its own (Groq's, Together's).

OpenAI's backend checks every model against OpenAI's catalogue. Here a request naming a model of the API's own
catalogue is handed to it under a stand-in OpenAI model, and every answer, batch and result line it gives back names
the model asked for again; a chat completion naming any other model (one only OpenAI serves included) is refused
with OpenAI's 404, and a batch line naming one goes to OpenAI's backend as it is (an errored line for a model neither
catalogue knows). Body keys OpenAI does not take (the API's own parameters) are checked here, then left out.
A batch's completion window may be longer than OpenAI's 24 hours (`CompatBatch`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.openai.batches import OpenAIBatch
from lowtide.emulator.openai.catalogue import model_not_found
from lowtide.emulator.openai.chat_params import ChatCall
from lowtide.emulator.openai.errors import OpenAIError, invalid_value
from lowtide.emulator.openai.files import StoredFile
from lowtide.emulator.openai.ids import new_alnum

__all__ = ["STAND_IN", "CompatBackend", "CompatBatch", "OwnKeys", "prefixed_routes", "window_seconds_of"]

STAND_IN = "gpt-4.1-mini"
"""The OpenAI model OpenAI's backend answers as, for a model of the API's own catalogue."""
_STAND_IN_JSON = json.dumps(STAND_IN).encode()

OwnKeys = Mapping[str, tuple[str, ...]]
"""Body keys the API takes that OpenAI's does not, each with the values it takes (empty: any)."""


@dataclass(eq=False)
class CompatBatch(OpenAIBatch):
    """An OpenAI batch whose completion window is `window_seconds` long."""

    window_seconds: float = 24 * 3600.0

    @property
    def expires_at(self) -> float:
        return self.created_at + self.window_seconds

    @property
    def expiry(self) -> float:
        """A batch still processing at the end of its window expires then, whatever OpenAI's 24 hours."""
        return self.created_at + self.window_seconds


class CompatBackend(OpenAIBackend):
    """OpenAI's backend for an API with its own models (`known`) and body keys (`own_keys`). `batch_models` keeps,
    for each batch, the model its requests named (OpenAI's backend saw the stand-in), and `batch_windows` its
    completion window in seconds: both in the emulation's state file section."""

    snapshots: Mapping[str, str] = {}
    """The API's answers name its own models as asked, never an OpenAI snapshot of the stand-in."""

    def __init__(
        self,
        clock: Clock,
        settings: Settings,
        faults: Faults,
        cache: PromptCache,
        *,
        known: Callable[[object], bool],
        own_keys: OwnKeys,
    ) -> None:
        super().__init__(clock, settings, faults, cache)
        self._known = known
        self._own_keys = own_keys
        self.batch_models: dict[str, str] = {}
        self.batch_windows: dict[str, float] = {}
        self._renamed: weakref.WeakSet[StoredFile] = weakref.WeakSet()

    def reset(self) -> None:
        super().reset()
        self.batch_models.clear()
        self.batch_windows.clear()

    # -- requests ------------------------------------------------------------------------------------------------

    def to_openai(self, body: object) -> tuple[object, str | None]:
        """`body` as OpenAI's backend takes it (the stand-in for a model of the API's own, its own keys checked and
        left out), and the model it named when that was replaced."""
        given = as_object(body)
        if given is None:
            return body, None
        params = dict(given)
        for key, values in self._own_keys.items():
            if key in params:
                value = params.pop(key)
                if values and value not in values:
                    raise invalid_value(key, value, values)
        model = params.get("model")
        if self._known(model):
            params["model"] = STAND_IN
            return params, str(model)
        if isinstance(model, str):
            # Not one of the API's models, though OpenAI's catalogue may know the name: refused as an unknown one.
            raise model_not_found(model)
        return params, None

    def create_chat_completion(self, body: object) -> tuple[JsonObject, ChatCall]:
        sent, model = self.to_openai(body)
        completion, call = super().create_chat_completion(sent)
        if model is not None:
            completion["model"] = model
        return completion, call

    # -- batches -------------------------------------------------------------------------------------------------

    def create_compat_batch(self, params: JsonObject, *, window_seconds: float) -> JsonObject:
        """A batch created by OpenAI's backend from a copy of its input file whose lines name the stand-in (the copy
        dropped once read), shown with the file and window asked for."""
        input_file_id = params.get("input_file_id")
        stored = self.files.get(input_file_id, self.clock.now()) if isinstance(input_file_id, str) else None
        if stored is None or stored.purpose != "batch":
            created = super().create_batch({**params, "completion_window": "24h"})
            return self._shown(self._wrap(str(created["id"]), window_seconds), created)
        content, model = self._translated(b"".join(stored.pieces()))
        copy = StoredFile(
            id=new_alnum("file-"),
            filename=stored.filename,
            purpose="batch",
            created_at=stored.created_at,
            expires_at=stored.expires_at,
            content=content,
        )
        self.files.add(copy)
        try:
            created = super().create_batch({**params, "input_file_id": copy.id, "completion_window": "24h"})
        finally:
            self.files.delete(copy.id)
        batch = self._wrap(str(created["id"]), window_seconds)
        batch.input_file_id = stored.id
        if model is not None:
            self.batch_models[batch.id] = model
            for error in batch.errors:
                message = error.get("message")
                if isinstance(message, str):
                    error["message"] = message.replace(STAND_IN, model)
        return self._shown(batch, {**created, "input_file_id": stored.id})

    def _wrap(self, batch_id: str, window_seconds: float) -> CompatBatch:
        """The batch OpenAI's backend made, as a `CompatBatch` of the window asked for, in its place."""
        made = self.batches.find(batch_id)
        batch = CompatBatch(
            **{field.name: getattr(made, field.name) for field in fields(OpenAIBatch)}, window_seconds=window_seconds
        )
        self.batches.add(batch)
        self.batch_windows[batch.id] = window_seconds
        return batch

    def rewrap(self) -> None:
        """After a restore: every batch as the `CompatBatch` of its window."""
        for batch in self.batches.oldest_first():
            window = self.batch_windows.get(batch.id)
            if window is not None and not isinstance(batch, CompatBatch):
                self._wrap(batch.id, window)

    def _shown(self, batch: OpenAIBatch, rendered: JsonObject) -> JsonObject:
        window = self.batch_windows.get(batch.id)
        shown = {**rendered, "expires_at": int(batch.expires_at)}
        if window is not None:
            shown["completion_window"] = window_text(window)
        model = self.batch_models.get(batch.id)
        if model is not None and shown.get("model") == STAND_IN:
            shown["model"] = model
        return shown

    def shown(self, rendered: JsonObject) -> JsonObject:
        """A batch as OpenAI's backend rendered it, with the window and model asked for."""
        return self._shown(self.batches.find(str(rendered["id"])), rendered)

    def _translated(self, content: bytes) -> tuple[bytes, str | None]:
        """The input file with each line's body as OpenAI's backend takes it; the model of the API's own it named.
        A line that is not a JSON object is kept as it is (OpenAI's backend says what is wrong with it)."""
        lines: list[bytes] = []
        model: str | None = None
        for raw in content.split(b"\n"):
            try:
                line = as_object(json.loads(raw)) if raw.strip() else None
            except json.JSONDecodeError:
                line = None
            body = as_object(line.get("body")) if line is not None else None
            if line is None or body is None:
                lines.append(raw)
                continue
            try:
                sent, named = self.to_openai(body)
            except OpenAIError:
                sent, named = body, None
            if named is not None and model is not None and named != model:
                sent = {**(as_object(sent) or body), "model": named}  # a second model: refused, as by OpenAI
            model = model or named
            lines.append(json.dumps({**line, "body": sent}).encode())
        return b"\n".join(lines), model

    def add_batch_files(self, batch: OpenAIBatch) -> None:
        """The batch's files as OpenAI's backend makes them, their lines naming the model asked for."""
        super().add_batch_files(batch)
        model = self.batch_models.get(batch.id)
        if model is None:
            return
        named = json.dumps(model).encode()
        for which in ("output", "error"):
            stored = self.files.get(batch.file_id(which), batch.ended_at)
            if stored is not None and stored.lines is not None and stored not in self._renamed:
                stored.lines = _renamed(stored.lines, named)
                self._renamed.add(stored)


def _renamed(lines: Callable[[], Iterable[bytes]], named: bytes) -> Callable[[], Iterable[bytes]]:
    def produce() -> Iterable[bytes]:
        for line in lines():
            yield line.replace(_STAND_IN_JSON, named)

    return produce


def window_text(seconds: float) -> str:
    """A completion window as the API shows it: whole days as `7d`, else hours as `36h`."""
    hours = int(seconds // 3600)
    return f"{hours // 24}d" if hours % 24 == 0 and hours > 24 else f"{hours}h"


def window_seconds_of(value: object, *, least_hours: int, most_hours: int) -> float | None:
    """A completion window written as hours (`36h`) or days (`7d`), in seconds, when within the bounds."""
    if not isinstance(value, str) or len(value) < 2 or value[-1] not in "hd" or not value[:-1].isdigit():
        return None
    hours = int(value[:-1]) * (24 if value[-1] == "d" else 1)
    return hours * 3600.0 if least_hours <= hours <= most_hours else None


def prefixed_routes(rows: Sequence[RouteRow], *, name: str, prefix: str, served: Sequence[str]) -> list[RouteRow]:
    """OpenAI's route rows that an API serves too (`served`, by their names without `openai.`), under its path
    `prefix` and its own route names (`<name>.<route>`)."""
    wanted = set(served)
    return [
        (f"{prefix}{path}", method, f"{name}.{route[len('openai.') :]}", handler)
        for path, method, route, handler in rows
        if route[len("openai.") :] in wanted
    ]
