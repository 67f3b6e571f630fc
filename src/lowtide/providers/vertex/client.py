"""Building the google-genai `Client` a Vertex provider uses: `vertexai=True`, a project and a location, and Google
Cloud credentials as Google's SDKs read them (Application Default Credentials), or none against an emulator.

The credentials are looked for as the client is built, so that a machine with none is told what to set before
anything is recorded or sent. lowtide decides every retry, so the client is built without the SDK's retry options.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Sequence
from typing import Protocol, cast
from urllib.parse import urlsplit

import google.auth
import httpx2
from google import genai
from google.auth import credentials as auth_credentials
from google.auth import exceptions as auth_exceptions
from google.genai import types
from google.oauth2 import credentials as oauth2

from lowtide import ConfigurationError, ProviderOptions
from lowtide.providers.gemini.client import OwnedClient
from lowtide.providers.vertex.options import PROVIDER_NAME, VertexOptions, options_in

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_LOCATION",
    "LOCATION_ENV",
    "PROJECT_ENV",
    "Place",
    "build_client",
    "place_of",
]

BASE_URL_ENV = "GOOGLE_VERTEX_BASE_URL"
"""The variable google-genai reads Vertex AI's address from (an emulator's: `http://127.0.0.1:8765`)."""
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
LOCATION_ENV = "GOOGLE_CLOUD_LOCATION"
DEFAULT_LOCATION = "us-central1"
_API = "Vertex AI"
_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
_ANONYMOUS_TOKEN = "lowtide-anonymous"
"""Not a secret: what an emulator is shown in place of a token."""


class _Default(Protocol):
    """`google.auth.default` as lowtide calls it."""

    def __call__(self, *, scopes: Sequence[str]) -> tuple[auth_credentials.Credentials, str | None]: ...


@dataclasses.dataclass(frozen=True)
class Place:
    """Where an actor's Vertex calls go: its project, its location, its address (None: Google's) and its
    credentials."""

    project: str
    location: str
    base_url: str | None
    credentials: auth_credentials.Credentials
    options: VertexOptions
    anonymous: bool = False
    """No credentials are sent (an emulator)."""


def place_of(options: ProviderOptions, name: str = PROVIDER_NAME) -> Place:
    """The project, location, address and credentials of an actor (its settings under `provider_options.<name>`), or
    the `ConfigurationError` that says what to set: no project, or no credentials where Google's address is called."""
    settings = options_in(options.provider_options, name)
    base_url = options.base_url_from(BASE_URL_ENV)
    anonymous = settings.credentials == "anonymous" or (settings.credentials is None and _loopback(base_url))
    found_project: str | None = None
    if anonymous:
        credentials: auth_credentials.Credentials = oauth2.Credentials(token=_ANONYMOUS_TOKEN)
    else:
        try:
            # google-auth leaves its transport `request` parameter untyped; the call returns the credentials.
            lookup = cast("_Default", google.auth.default)  # pyright: ignore[reportUnknownMemberType]
            loaded, found_project = lookup(scopes=_SCOPES)
        except auth_exceptions.DefaultCredentialsError:
            raise ConfigurationError(
                "No Google Cloud credentials for Vertex AI: run `gcloud auth application-default login`, or set "
                "GOOGLE_APPLICATION_CREDENTIALS to a service account's key file; against an emulator, set "
                f"{BASE_URL_ENV} to its address (or provider_options.{name}.credentials: anonymous).",
                field=f"provider_options.{name}.credentials",
            ) from None
        credentials = loaded
    project = settings.project or os.environ.get(PROJECT_ENV) or found_project
    if not project:
        raise ConfigurationError(
            f"No Google Cloud project for Vertex AI: set provider_options.{name}.project, or {PROJECT_ENV}.",
            field=f"provider_options.{name}.project",
        )
    location = settings.location or os.environ.get(LOCATION_ENV) or DEFAULT_LOCATION
    return Place(project, location, base_url, credentials, settings, anonymous)


def build_client(options: ProviderOptions, name: str = PROVIDER_NAME) -> tuple[OwnedClient, Place | None]:
    """The client to use (an injected `google.genai.Client` made with `vertexai=True`, or one built here from the
    actor's `provider_options.<name>`) and where it calls (None for an injected one, which lowtide does not read)."""
    if options.client is not None:
        client = options.client
        if not isinstance(client, genai.Client) or not client.vertexai:
            raise ConfigurationError(
                "client must be a google.genai.Client made with vertexai=True for provider vertex, not "
                f"{type(client).__name__}",
                field="client",
            )
        return OwnedClient(client, None, f"vertex:client-{id(client)}", api=_API), None
    place = place_of(options, name)
    given = options.http_client
    if given is not None and not isinstance(given, httpx2.AsyncClient):
        raise ConfigurationError(
            f"http_client must be an httpx2.AsyncClient for provider vertex, not {type(given).__name__}",
            field="http_client",
        )
    http = given if given is not None else httpx2.AsyncClient(follow_redirects=True)
    http_options = types.HttpOptions(
        base_url=place.base_url, timeout=int(options.timeout * 1000), httpx_async_client=http
    )
    client = genai.Client(
        vertexai=True,
        project=place.project,
        location=place.location,
        credentials=place.credentials,
        http_options=http_options,
    )
    endpoint = place.base_url or f"https://{place.location}-aiplatform.googleapis.com"
    scope = f"vertex:{endpoint}:{place.project}:{place.location}"
    return OwnedClient(client, None if given is not None else http, scope, endpoint, _API), place


def _loopback(base_url: str | None) -> bool:
    """Whether `base_url` is an address on this machine (where an emulator listens)."""
    if base_url is None:
        return False
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
