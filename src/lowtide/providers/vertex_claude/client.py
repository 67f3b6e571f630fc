"""Building the anthropic SDK's `AsyncAnthropicVertex` a Claude-on-Vertex provider uses: the actor's project and
location (`provider_options.vertex_claude`, else Google's variables), Google Cloud credentials as Google's SDKs read
them (Application Default Credentials), or none against an emulator on this machine (`providers/vertex/client.py`'s
`place_of`, shared with Gemini on Vertex). The address is Vertex AI's host, as for `provider: vertex`
(`GOOGLE_VERTEX_BASE_URL` or the actor's `base_url`); the SDK's routes are under its `/v1`."""

from __future__ import annotations

import hashlib

import httpx2
from anthropic.lib.vertex import AsyncAnthropicVertex

from lowtide import ConfigurationError, ProviderOptions
from lowtide.providers.vertex.client import Place, place_of
from lowtide.providers.vertex_claude.options import PROVIDER_NAME

__all__ = ["build_client", "scope_of"]


def build_client(options: ProviderOptions) -> tuple[AsyncAnthropicVertex, bool, Place | None]:
    """The client to use, whether the provider owns it (and so must close it), and where it calls (None for an
    injected client, which lowtide does not read). No credentials on this machine, or no project, is a
    `ConfigurationError` naming what to set, before anything is sent."""
    if options.client is not None:
        if not isinstance(options.client, AsyncAnthropicVertex):
            raise ConfigurationError(
                f"client must be an anthropic.AsyncAnthropicVertex for provider {PROVIDER_NAME}, not "
                f"{type(options.client).__name__}",
                field="client",
            )
        return options.client, False, None
    place = place_of(options, PROVIDER_NAME)
    given = options.http_client
    if given is not None and not isinstance(given, httpx2.AsyncClient):
        raise ConfigurationError(
            f"http_client must be an httpx2.AsyncClient for provider {PROVIDER_NAME}, not {type(given).__name__}",
            field="http_client",
        )
    client = AsyncAnthropicVertex(
        region=place.location,
        project_id=place.project,
        credentials=place.credentials,
        base_url=None if place.base_url is None else f"{place.base_url.rstrip('/')}/v1",
        timeout=options.timeout,
        max_retries=options.max_retries,
        http_client=given,
    )
    return client, True, place


def scope_of(client: AsyncAnthropicVertex, *, owned: bool) -> str:
    """Which live rate limits the client's calls count against: Vertex AI's quotas are a project's in a region, at
    an address (an injected client: itself)."""
    if not owned:
        return f"{PROVIDER_NAME}:client-{id(client)}"
    place = f"{client.base_url}:{client.project_id}:{client.region}"
    return f"{PROVIDER_NAME}:{hashlib.sha256(place.encode()).hexdigest()[:16]}"
