"""The OpenAI routes of what the account keeps: stored responses (`GET`/`DELETE /v1/responses/{id}`, cancel,
`input_items`, and `POST /v1/responses/compact`), stored chat completions (list, `GET`/`POST`/`DELETE
/v1/chat/completions/{id}`, `messages`) and model deletion, as rows `openai_routes` serves with the others."""

from __future__ import annotations

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, Streamed, read_json
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.openai.compaction import compact
from lowtide.emulator.openai.errors import invalid_value
from lowtide.http.sse import encode_event
from lowtide.providers.openai.stream_events import response_events

__all__ = ["stored_routes"]


def _paging(request: Request) -> dict[str, str | None]:
    """What a list of a stored object's items is asked for (`after`, `limit`, `order`), as OpenAI reads it."""
    query = request.query_params
    return {"after": query.get("after"), "limit": query.get("limit"), "order": query.get("order")}


def stored_routes(backend: OpenAIBackend) -> list[RouteRow]:
    api = _StoredApi(backend)
    response = "/v1/responses/{response_id}"
    completion = "/v1/chat/completions/{completion_id}"
    return [
        ("/v1/responses/compact", "POST", "openai.responses.compact", api.compact),
        (response, "GET", "openai.responses.retrieve", api.retrieve_response),
        (response, "DELETE", "openai.responses.delete", api.delete_response),
        (f"{response}/cancel", "POST", "openai.responses.cancel", api.cancel_response),
        (f"{response}/input_items", "GET", "openai.responses.input_items", api.input_items),
        ("/v1/chat/completions", "GET", "openai.chat.completions.list", api.list_completions),
        (completion, "GET", "openai.chat.completions.retrieve", api.retrieve_completion),
        (completion, "POST", "openai.chat.completions.update", api.update_completion),
        (completion, "DELETE", "openai.chat.completions.delete", api.delete_completion),
        (f"{completion}/messages", "GET", "openai.chat.completions.messages", api.completion_messages),
        ("/v1/models/{model_id}", "DELETE", "openai.models.delete", api.delete_model),
    ]


class _StoredApi:
    def __init__(self, backend: OpenAIBackend) -> None:
        self._openai = backend

    async def _body(self, request: Request) -> object:
        return await read_json(request, self._openai.limits.max_request_bytes)

    # -- responses -----------------------------------------------------------------------------------------------

    async def compact(self, request: Request) -> Answer:
        backend = self._openai
        return compact(
            await self._body(request), backend.lookup, backend.responses.conversation, now=backend.clock.now()
        )

    async def retrieve_response(self, request: Request) -> Answer:
        response = self._openai.retrieve_response(request.path_params["response_id"])
        query = request.query_params
        stream = query.get("stream")
        if stream not in (None, "true", "false"):
            raise invalid_value("stream", stream)
        if stream != "true":
            return response
        after = query.get("starting_after")
        if after is not None and not after.isdigit():
            raise invalid_value("starting_after", after)
        first = int(after) + 1 if after is not None else 0
        events = (
            encode_event(event["type"], event)
            for event in response_events(response)
            if int(event["sequence_number"]) >= first
        )
        return Streamed(events, "text/event-stream")

    async def delete_response(self, request: Request) -> Answer:
        return self._openai.responses.delete(request.path_params["response_id"])

    async def cancel_response(self, request: Request) -> Answer:
        return self._openai.cancel_response(request.path_params["response_id"])

    async def input_items(self, request: Request) -> Answer:
        return self._openai.responses.input_items(request.path_params["response_id"], **_paging(request))

    # -- chat completions ----------------------------------------------------------------------------------------

    async def list_completions(self, request: Request) -> Answer:
        query = request.query_params
        metadata = {
            key[len("metadata[") : -1]: value
            for key, value in query.multi_items()
            if key.startswith("metadata[") and key.endswith("]")
        }
        return self._openai.completions.page(
            after=query.get("after"),
            limit=query.get("limit"),
            order=query.get("order"),
            model=query.get("model"),
            metadata=metadata,
        )

    async def retrieve_completion(self, request: Request) -> Answer:
        return self._openai.completions.retrieve(request.path_params["completion_id"])

    async def update_completion(self, request: Request) -> Answer:
        return self._openai.completions.update(request.path_params["completion_id"], await self._body(request))

    async def delete_completion(self, request: Request) -> Answer:
        return self._openai.completions.delete(request.path_params["completion_id"])

    async def completion_messages(self, request: Request) -> Answer:
        return self._openai.completions.messages(request.path_params["completion_id"], **_paging(request))

    # -- models --------------------------------------------------------------------------------------------------

    async def delete_model(self, request: Request) -> Answer:
        return self._openai.delete_model(request.path_params["model_id"])
