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
from lowtide.emulator.openai.checks import require_object, required
from lowtide.emulator.openai.dialect import Dialect
from lowtide.emulator.openai.errors import OpenAIError, invalid_value
from lowtide.emulator.openai.files import StoredFile
from lowtide.emulator.openai.ids import new_alnum

__all__ = ["STAND_IN", "CompatBackend", "CompatBatch", "prefixed_routes", "window_seconds_of"]

STAND_IN = "gpt-4.1-mini"
"""The OpenAI model OpenAI's backend answers as, for a model of the API's own catalogue."""
_STAND_IN_JSON = json.dumps(STAND_IN).encode()


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
    """OpenAI's backend for an API of OpenAI's shapes (its `dialect`: its own models, body keys, batch windows and
    listing). `batch_models` keeps,
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
        dialect: Dialect,
    ) -> None:
        super().__init__(clock, settings, faults, cache)
        self.dialect = dialect
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
        for key, values in self.dialect.own_keys.items():
            if key in params:
                value = params.pop(key)
                if values and value not in values:
                    raise invalid_value(key, value, values)
        model = params.get("model")
        if self.dialect.catalogue.known(model):
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

    def create_batch(self, body: object) -> JsonObject:
        """A batch of one of the dialect's endpoints, over a completion window within its bounds."""
        params = require_object(body)
        endpoint = required(params, "endpoint")
        window = required(params, "completion_window")
        dialect = self.dialect
        if endpoint not in dialect.endpoints:
            raise invalid_value("endpoint", endpoint, dialect.endpoints)
        seconds = window_seconds_of(window, least_hours=dialect.least_hours, most_hours=dialect.most_hours)
        if seconds is None:
            least, most = window_text(dialect.least_hours * 3600.0), window_text(dialect.most_hours * 3600.0)
            raise OpenAIError(
                400,
                f"Invalid 'completion_window': {window!r}. Durations from {least} to {most} are supported.",
                param="completion_window",
                code="invalid_value",
            )
        return self.create_compat_batch(params, window_seconds=seconds)

    def retrieve_batch(self, batch_id: str) -> JsonObject:
        return self.shown(super().retrieve_batch(batch_id))

    def cancel_batch(self, batch_id: str) -> JsonObject:
        return self.shown(super().cancel_batch(batch_id))

    def list_batches(self, *, after: str | None = None, limit: str | None = None) -> JsonObject:
        """OpenAI's pages, or every batch, newest first, in one answer (a listing that takes no page, Groq's)."""
        if self.dialect.paged_listing:
            return super().list_batches(after=after, limit=limit)
        batches = list(reversed(self.batches.oldest_first()))
        return {"object": "list", "data": [self.retrieve_batch(batch.id) for batch in batches]}

    def list_models(self) -> JsonObject:
        return self.dialect.catalogue.page()

    def retrieve_model(self, model_id: str) -> JsonObject:
        return self.dialect.catalogue.retrieve(model_id)

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


def prefixed_routes(
    rows: Sequence[RouteRow], *, name: str, prefix: str, served: Sequence[str], drop: str = ""
) -> list[RouteRow]:
    """OpenAI's route rows that an API serves too (`served`, by their names without `openai.`), under its path
    `prefix` (in place of `drop`, the start of OpenAI's path it does not have: Azure's `/v1`) and its own route names
    (`<name>.<route>`)."""
    wanted = set(served)
    return [
        (_own(f"{prefix}{path.removeprefix(drop)}", prefix), method, f"{name}.{route[len('openai.') :]}", handler)
        for path, method, route, handler in rows
        if route[len("openai.") :] in wanted
    ]


def _own(path: str, prefix: str) -> str:
    """A model id under an API's own prefix is the rest of the path, slashes and all (Groq's `openai/gpt-oss-20b`,
    `meta-llama/llama-4-scout-17b-16e-instruct`). OpenAI's own paths keep the one-segment template: the APIs that share
    them (Anthropic's and Mistral's `/v1/models/{id}`) are told apart on that template."""
    return path.replace("{model_id}", "{model_id:path}") if prefix else path
