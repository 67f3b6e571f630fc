"""The Azure OpenAI API's routes: OpenAI's handlers (`OpenAIApi`) at Azure's paths under `/openai`, named
`azure_openai.*` for counts and faults. Chat Completions go to a deployment (`/openai/deployments/{deployment}/...`),
which names the model that answers; OpenAI's errors met there are answered in Azure's shape."""

from __future__ import annotations

from starlette.requests import Request

from lowtide.emulator.azure_openai.backend import AzureBackend
from lowtide.emulator.azure_openai.errors import AzureError, deployment_not_found
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.http import Answer, Handler
from lowtide.emulator.core.jsonutil import as_object
from lowtide.emulator.openai.compat import prefixed_routes
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.routes import OpenAIApi, openai_routes

__all__ = ["azure_routes"]

_SERVED = (
    "batches.create",
    "batches.list",
    "batches.retrieve",
    "batches.cancel",
    "files.create",
    "files.list",
    "files.retrieve",
    "files.delete",
    "files.content",
)
"""OpenAI's routes Azure serves as they are, at `/openai/...` for OpenAI's `/v1/...`."""


class _AzureApi(OpenAIApi):
    def __init__(self, shared: Shared, backend: AzureBackend) -> None:
        super().__init__(shared, backend)
        self._azure = backend

    async def chat_body(self, request: Request) -> object:
        """The body as the deployment's model reads it: Azure answers with the model its deployment serves."""
        deployment = request.path_params["deployment"]
        model = self._azure.deployments.get(deployment)
        if model is None:
            raise deployment_not_found(deployment)
        body = await self.json_body(request)
        fields = as_object(body)
        return {**fields, "model": model} if fields is not None else body


def _azure_shaped(handler: Handler) -> Handler:
    async def serve(request: Request) -> Answer:
        try:
            return await handler(request)
        except OpenAIError as error:
            raise AzureError.of(error) from None

    return serve


def azure_routes(shared: Shared, backend: AzureBackend) -> list[RouteRow]:
    """Every route of the Azure OpenAI API lowtide uses."""
    api = _AzureApi(shared, backend)
    chat = (
        "/openai/deployments/{deployment}/chat/completions",
        "POST",
        "azure_openai.chat.completions.create",
        api.create_chat_completion,
    )
    openai_rows = openai_routes(shared, backend, api)
    rows = [chat, *prefixed_routes(openai_rows, name="azure_openai", prefix="/openai", served=_SERVED, drop="/v1")]
    return [(path, method, name, _azure_shaped(handler)) for path, method, name, handler in rows]
