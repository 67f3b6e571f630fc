"""The OpenAI API's routes (Files, Batches, Responses, Chat Completions, Embeddings, Models, and what the account
keeps: `stored_routes`), as rows of (path, method, route name, handler) that the core serves as it serves every
API's (`lowtide.emulator.core.endpoints`: counted, checked, exposed to faults, saved), under route names starting
`openai.`. `/v1/files` and `/v1/models` are paths other APIs use too: the core sends there the calls no other
emulation claims (`OpenAIEmulation`)."""

from __future__ import annotations

from collections.abc import Iterator

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.endpoints import waiter
from lowtide.emulator.core.http import Answer, Headed, Streamed, api_key, read_json
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.ratelimits import BucketState, QuotaStyle, RateLimits
from lowtide.emulator.openai.backend import OpenAIBackend, expires_after
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.http import read_upload
from lowtide.emulator.openai.stored_routes import stored_routes
from lowtide.http.sse import data_line, encode_event
from lowtide.providers.openai.stream_events import completion_chunks, response_events

__all__ = ["QUOTAS", "OpenAIApi", "openai_routes"]

_BATCH_BODY_BYTES = 1024 * 1024


def _buckets(limits: RateLimits) -> dict[str, int | None]:
    return {"requests": limits.rpm, "tokens": limits.tpm}


def _headers(bucket: BucketState) -> dict[str, str]:
    kind = bucket.kind
    return {
        f"x-ratelimit-limit-{kind}": str(bucket.limit),
        f"x-ratelimit-remaining-{kind}": str(bucket.remaining),
        f"x-ratelimit-reset-{kind}": _duration(bucket.full_at - bucket.now),
    }


def _duration(seconds: float) -> str:
    """OpenAI's way of saying how long: `20ms`, `1.5s`, `6m0s`."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


QUOTAS = QuotaStyle("openai", _buckets, _headers)
"""The Responses and Chat Completions APIs' rate limits: requests and tokens per minute, tokens counting the input
and the answer's maximum; every live answer carries the `x-ratelimit-*` headers (limit, remaining, and the time until
the bucket is full again, as `1m30s`)."""


def openai_routes(shared: Shared, backend: OpenAIBackend, api: OpenAIApi | None = None) -> list[RouteRow]:
    """Every route of the OpenAI API, answered by `api` (by default OpenAI's handlers on `backend`)."""
    api = api or OpenAIApi(shared, backend)
    batch = "/v1/batches/{batch_id}"
    file = "/v1/files/{file_id}"
    return [
        ("/v1/responses", "POST", "openai.responses.create", api.create_response),
        ("/v1/responses/input_tokens", "POST", "openai.responses.input_tokens", api.count_input_tokens),
        ("/v1/chat/completions", "POST", "openai.chat.completions.create", api.create_chat_completion),
        ("/v1/embeddings", "POST", "openai.embeddings.create", api.create_embeddings),
        ("/v1/batches", "POST", "openai.batches.create", api.create_batch),
        ("/v1/batches", "GET", "openai.batches.list", api.list_batches),
        (batch, "GET", "openai.batches.retrieve", api.retrieve_batch),
        (f"{batch}/cancel", "POST", "openai.batches.cancel", api.cancel_batch),
        ("/v1/files", "POST", "openai.files.create", api.create_file),
        ("/v1/files", "GET", "openai.files.list", api.list_files),
        (file, "GET", "openai.files.retrieve", api.retrieve_file),
        (file, "DELETE", "openai.files.delete", api.delete_file),
        (f"{file}/content", "GET", "openai.files.content", api.file_content),
        ("/v1/models", "GET", "openai.models.list", api.list_models),
        ("/v1/models/{model_id}", "GET", "openai.models.retrieve", api.retrieve_model),
        *stored_routes(backend),
    ]


class OpenAIApi:
    """The handlers of the OpenAI routes, on one backend; an API of OpenAI's shapes at other paths (Azure's) serves
    them too, reading a chat body its own way (`chat_body`)."""

    def __init__(self, shared: Shared, backend: OpenAIBackend) -> None:
        self._shared = shared
        self._openai = backend

    async def json_body(self, request: Request, limit: int | None = None) -> object:
        return await read_json(request, limit if limit is not None else self._openai.limits.max_request_bytes)

    # -- the model -----------------------------------------------------------------------------------------------

    async def create_response(self, request: Request) -> Answer:
        body = await self.json_body(request)
        response, stream = self._openai.create_response(body)
        headers = await self._live(request, body, response, ("input_tokens", "output_tokens"), "max_output_tokens")
        if stream:
            events = (encode_event(event["type"], event) for event in response_events(response))
            return Streamed(events, "text/event-stream", headers=headers)
        return Headed(response, headers) if headers else response

    async def chat_body(self, request: Request) -> object:
        """The Chat Completions body of `request`, as the backend reads it."""
        return await self.json_body(request)

    async def create_chat_completion(self, request: Request) -> Answer:
        body = await self.chat_body(request)
        completion, call = self._openai.create_chat_completion(body)
        headers = await self._live(
            request, body, completion, ("prompt_tokens", "completion_tokens"), "max_completion_tokens", "max_tokens"
        )
        if call.stream:
            return Streamed(_chat_stream(completion, call.include_usage), "text/event-stream", headers=headers)
        return Headed(completion, headers) if headers else completion

    async def _live(
        self, request: Request, body: object, answer: JsonObject, usage_names: tuple[str, str], *maximums: str
    ) -> dict[str, str]:
        """A live answer's rate limits (a 429 when over them; else its headers) and its latency, as configured."""
        usage = as_object(answer.get("usage")) or {}
        used_in, used_out = (usage.get(name) for name in usage_names)
        input_tokens = used_in if isinstance(used_in, int) else 0
        output_tokens = used_out if isinstance(used_out, int) else 0
        settings = self._shared.settings
        headers: dict[str, str] = {}
        if settings.rate_limits.any:
            fields = as_object(body) or {}
            maximum = next((v for name in maximums if isinstance(v := fields.get(name), int)), output_tokens)
            quotas, now = self._shared.quotas, self._shared.clock.now()
            # Over the limits, a 429 in the core's terms, which the route's endpoint answers in OpenAI's.
            admitted = quotas.admit(QUOTAS, api_key(request), input_tokens=input_tokens, max_tokens=maximum, now=now)
            headers = quotas.settle(admitted, output_tokens=output_tokens, now=now)
        latency = settings.latency
        if latency.fixed or latency.per_output_token:
            await waiter(self._shared.clock, request)(latency.of(output_tokens))
        return headers

    async def count_input_tokens(self, request: Request) -> Answer:
        return self._openai.count_input_tokens(await self.json_body(request))

    def _lacking(self, part: str, request: Request) -> None:
        """The 404 OpenAI answers for a path it does not serve, when the emulator is told the endpoint lacks `part`
        (`Settings.compatible_lacks`)."""
        if part in self._shared.settings.compatible_lacks:
            raise OpenAIError(404, f"Invalid URL ({request.method} {request.url.path})")

    async def list_models(self, request: Request) -> Answer:
        self._lacking("models", request)
        return self._openai.list_models()

    async def retrieve_model(self, request: Request) -> Answer:
        self._lacking("models", request)
        return self._openai.retrieve_model(request.path_params["model_id"])

    async def create_embeddings(self, request: Request) -> Answer:
        return self._openai.create_embeddings(await self.json_body(request))

    # -- batches -------------------------------------------------------------------------------------------------

    async def create_batch(self, request: Request) -> Answer:
        body = await self.json_body(request, _BATCH_BODY_BYTES)
        fields = as_object(body)
        if fields is not None and "metadata" in self._shared.settings.compatible_lacks:
            # An endpoint without batch metadata takes the key and keeps nothing of it (as such gateways do).
            body = {key: value for key, value in fields.items() if key != "metadata"}
        created = self._openai.create_batch(body)
        self._openai.webhooks.watch(str(created["id"]))
        return created

    async def list_batches(self, request: Request) -> Answer:
        query = request.query_params
        return self._openai.list_batches(after=query.get("after"), limit=query.get("limit"))

    async def retrieve_batch(self, request: Request) -> Answer:
        return self._openai.retrieve_batch(request.path_params["batch_id"])

    async def cancel_batch(self, request: Request) -> Answer:
        self._lacking("cancel", request)
        canceling = self._openai.cancel_batch(request.path_params["batch_id"])
        self._openai.webhooks.watch(str(canceling["id"]))  # its end moved
        return canceling

    # -- files ---------------------------------------------------------------------------------------------------

    async def create_file(self, request: Request) -> Answer:
        upload = await read_upload(request, self._openai.limits.max_file_bytes)
        lifetime = expires_after(upload.fields)
        return self._openai.upload(upload.filename, upload.content, upload.fields.get("purpose"), lifetime)

    async def list_files(self, request: Request) -> Answer:
        query = request.query_params
        return self._openai.list_files(
            after=query.get("after"), limit=query.get("limit"), order=query.get("order"), purpose=query.get("purpose")
        )

    async def retrieve_file(self, request: Request) -> Answer:
        return self._openai.retrieve_file(request.path_params["file_id"])

    async def delete_file(self, request: Request) -> Answer:
        return self._openai.delete_file(request.path_params["file_id"])

    async def file_content(self, request: Request) -> Answer:
        content = self._openai.file_content(request.path_params["file_id"])
        return Streamed(content, "application/octet-stream", gather=True)


def _chat_stream(completion: JsonObject, include_usage: bool) -> Iterator[bytes]:
    for chunk in completion_chunks(completion, include_usage=include_usage):
        yield data_line(chunk)
    yield b"data: [DONE]\n\n"
