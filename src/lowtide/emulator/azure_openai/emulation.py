"""The Azure OpenAI API as an emulation (the `azure_openai` entry point of `lowtide.emulators`): files, batches and
chat completions at Azure's paths (`/openai/...`, every call with its `?api-version=`), keyed by an `api-key` header
or a Microsoft Entra bearer token, in Azure's error shape with an `apim-request-id`. A program sets only
`AZURE_OPENAI_ENDPOINT` to the emulator's address. Its resource is its own: files, batches and counters apart from
the OpenAI emulation's, kept in the state file's `"azure_openai"` section."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from lowtide.emulator.azure_openai.backend import AzureBackend, default_deployments
from lowtide.emulator.azure_openai.errors import (
    ACCESS_DENIED,
    AzureError,
    azure_error_response,
    resource_not_found,
)
from lowtide.emulator.azure_openai.routes import azure_routes
from lowtide.emulator.core.emulation import EmulationError, ErrorHandler, RouteRow, Shared
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import request_id
from lowtide.emulator.openai.account import OpenAIAccountEmulation
from lowtide.emulator.openai.errors import from_api_error

__all__ = ["DEPLOYMENTS_ENV", "AzureOpenAIEmulation", "deployments_from"]

_API_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}(-preview)?$")


DEPLOYMENTS_ENV = "LOWTIDE_EMULATOR_AZURE_DEPLOYMENTS"
"""More deployments of the emulated resource, `NAME=MODEL` pairs separated by commas (`lowtide emulator
--azure-deployment` sets it)."""


def deployments_from(given: str) -> dict[str, str]:
    """The deployments `given` names (`NAME=MODEL,...`); a pair not of that shape, or naming a model OpenAI's
    emulation does not serve, raises `EmulationError` saying which, with the closest names."""
    known = default_deployments()
    found: dict[str, str] = {}
    for pair in (part.strip() for part in given.replace("\n", ",").split(",") if part.strip()):
        name, equals, model = (side.strip() for side in pair.partition("="))
        if not equals or not name or not model:
            raise EmulationError(f"Azure deployment {pair!r}: expected NAME=MODEL ({DEPLOYMENTS_ENV}).")
        if model not in known:
            close = difflib.get_close_matches(model, sorted(known), n=3)
            hint = f" Did you mean {', '.join(repr(each) for each in close)}?" if close else ""
            raise EmulationError(f"Azure deployment {pair}: the emulator serves no model {model!r}.{hint}")
        found[name] = model
    return found


class AzureOpenAIEmulation(OpenAIAccountEmulation[AzureBackend]):
    """The emulated Azure OpenAI resource (`Emulator.emulation(AzureOpenAIEmulation)`): its `deployments` (name ->
    the model it serves; by default one per text model, named after it), `created_custom_ids` and `created_batches`
    (the exactly-once evidence, as OpenAI's), `files`, and `backend.limits` / `backend.max_files` to lower Azure's
    limits in tests."""

    name = "azure_openai"
    route_names = (
        "azure_openai.chat.completions.create",
        "azure_openai.batches.create",
        "azure_openai.batches.list",
        "azure_openai.batches.retrieve",
        "azure_openai.batches.cancel",
        "azure_openai.files.create",
        "azure_openai.files.list",
        "azure_openai.files.retrieve",
        "azure_openai.files.delete",
        "azure_openai.files.content",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared, AzureBackend(shared.clock, shared.settings, shared.faults, shared.cache))
        self.backend.deployments.update(deployments_from(os.environ.get(DEPLOYMENTS_ENV, "")))

    @property
    def deployments(self) -> dict[str, str]:
        return self.backend.deployments

    # -- the emulation ---------------------------------------------------------------------------------------------

    def routes(self) -> Sequence[RouteRow]:
        return azure_routes(self.shared, self.backend)

    def begin(self, request: Request) -> None:
        """Azure asks every call for its API version (else the 404 of a path it does not serve) and its key."""
        version = request.query_params.get("api-version")
        if version is None or not _API_VERSION.match(version):
            raise resource_not_found()
        key = request.headers.get("api-key", "").strip()
        if not key:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            key = token.strip() if scheme.lower() == "bearer" else ""
        allowed = self.shared.settings.api_keys
        if not key or (allowed is not None and key not in allowed):
            raise AzureError(401, ACCESS_DENIED)

    def claims(self, headers: Headers) -> bool:
        return "api-key" in headers

    def translate(self, error: ApiError) -> Exception:
        return AzureError.of(from_api_error(error))

    def answer_headers(self, request: Request) -> dict[str, str]:
        identifier = request_id(request)
        return {"apim-request-id": identifier, "x-request-id": identifier}

    def error_response(self, request: Request, error: Exception) -> Response:
        return azure_error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {AzureError: azure_error_response}
