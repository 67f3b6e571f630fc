"""The Anthropic API's routes: Messages, token counting, Message Batches, Models and Files (`files.py`), as rows of
(path, method, route name, handler) that the core serves (`lowtide.emulator.core.endpoints`: counted, checked,
exposed to faults, saved). Route names follow the SDK's methods (`messages.create`, `batches.results`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

from starlette.requests import Request

from lowtide.emulator.anthropic.backend import AnthropicBackend
from lowtide.emulator.anthropic.files import file_routes
from lowtide.emulator.anthropic.http import betas
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.endpoints import waiter
from lowtide.emulator.core.http import Answer, Headed, Streamed, api_key, read_json
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.http.sse import encode_event
from lowtide.providers.anthropic.stream_events import message_events

__all__ = ["anthropic_routes", "body_digest"]


def anthropic_routes(backend: AnthropicBackend) -> list[RouteRow]:
    """Every route of the Anthropic API. `/v1/files` and `/v1/models` are shared with other APIs: the core sends
    there only the calls of Anthropic's callers (`AnthropicEmulation.claims`). The SDK's beta client calls the Models
    API's paths with `?beta=true`, which routing ignores."""
    api = _Api(backend)
    batch = "/v1/messages/batches/{batch_id}"
    return [
        ("/v1/messages", "POST", "messages.create", api.create_message),
        ("/v1/messages/count_tokens", "POST", "messages.count_tokens", api.count_tokens),
        ("/v1/messages/batches", "POST", "batches.create", api.create_batch),
        ("/v1/messages/batches", "GET", "batches.list", api.list_batches),
        (batch, "GET", "batches.retrieve", api.retrieve_batch),
        (batch, "DELETE", "batches.delete", api.delete_batch),
        (f"{batch}/cancel", "POST", "batches.cancel", api.cancel_batch),
        (f"{batch}/results", "GET", "batches.results", api.batch_results),
        *file_routes(backend),
        ("/v1/models", "GET", "models.list", api.list_models),
        ("/v1/models/{model_id}", "GET", "models.retrieve", api.retrieve_model),
    ]


class _Api:
    def __init__(self, backend: AnthropicBackend) -> None:
        self._backend = backend

    async def create_message(self, request: Request) -> Answer:
        backend = self._backend
        body = await read_json(request, backend.limits.max_request_bytes)
        message, limits = backend.create_message(body, betas(request), api_key=api_key(request))
        latency = backend.settings.latency
        if latency.fixed or latency.per_output_token:
            used = as_object(message.get("usage")) or {}
            output = used.get("output_tokens")
            await waiter(backend.clock, request)(latency.of(output if isinstance(output, int) else 0))
        if await request.is_disconnected():
            backend.abandoned_answers += 1  # its caller is gone: nobody receives this answer
        else:
            backend.live_answers[body_digest(body)] += 1
        if (as_object(body) or {}).get("stream") is True:
            return Streamed(_events(message), "text/event-stream", headers={"cache-control": "no-cache", **limits})
        return Headed(message, limits) if limits else message

    async def count_tokens(self, request: Request) -> Answer:
        body = await read_json(request, self._backend.limits.max_request_bytes)
        return self._backend.count_tokens(body, betas(request))

    async def create_batch(self, request: Request) -> Answer:
        body = await read_json(request, self._backend.limits.max_batch_bytes)
        return self._backend.create_batch(body, str(request.base_url), betas(request))

    async def list_batches(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_batches(
            limit=query.get("limit"),
            after_id=query.get("after_id"),
            before_id=query.get("before_id"),
            base_url=str(request.base_url),
        )

    async def list_models(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_models(
            limit=query.get("limit"),
            after_id=query.get("after_id"),
            before_id=query.get("before_id"),
            # The SDK sends a list as `lifecycle[]=active&lifecycle[]=deprecated`.
            lifecycle=[*query.getlist("lifecycle[]"), *query.getlist("lifecycle")],
        )

    async def retrieve_model(self, request: Request) -> Answer:
        return self._backend.retrieve_model(request.path_params["model_id"])

    async def retrieve_batch(self, request: Request) -> Answer:
        batch = self._backend.retrieve_batch(request.path_params["batch_id"], str(request.base_url))
        # As recorded: a batch not yet ended comes with the API's hint of when to ask again.
        return batch if batch.get("processing_status") == "ended" else Headed(batch, {"retry-after": "10"})

    async def cancel_batch(self, request: Request) -> Answer:
        return self._backend.cancel_batch(request.path_params["batch_id"], str(request.base_url))

    async def delete_batch(self, request: Request) -> Answer:
        return self._backend.delete_batch(request.path_params["batch_id"])

    async def batch_results(self, request: Request) -> Answer:
        lines = self._backend.batch_results(request.path_params["batch_id"])
        # The SDK asks for `application/binary` and decodes JSON lines whatever the type; the API answers with
        # `application/x-jsonl` (as recorded).
        return Streamed(lines, "application/x-jsonl", gather=True)


def body_digest(body: object) -> str:
    """What tells one live request from another in `live_answers`: its body, without `stream`."""
    fields = {key: value for key, value in (as_object(body) or {}).items() if key != "stream"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


def _events(message: JsonObject) -> Iterator[bytes]:
    for name, data in message_events(message):
        yield encode_event(name, data)
