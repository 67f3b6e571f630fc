"""Building the google-genai `Client` the Gemini provider uses: an injected one, or one made from a key, a base URL and
an HTTP client. The key is handed to the SDK and kept nowhere else.

lowtide decides every retry (by error class, the scope paused on a 429), so the client is built without the SDK's
retry options, under which it never retries.
"""

from __future__ import annotations

import dataclasses

import httpx2
from google import genai
from google.genai import types

from lowtide import ConfigurationError, ProviderOptions
from lowtide.providers import credential_of

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "OwnedClient", "build_client"]

BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
API_KEY_ENV = "GEMINI_API_KEY"
_GOOGLE = "https://generativelanguage.googleapis.com"
_OTHER_KEY_ENV = "GOOGLE_API_KEY"
"""The SDK's other key variable, read when `GEMINI_API_KEY` is not set and the actor names no variable."""


@dataclasses.dataclass(frozen=True)
class OwnedClient:
    """The client, and what the provider must close: the HTTP client it made itself (the SDK never closes one it
    was given), or nothing when the client was injected."""

    client: genai.Client
    http: httpx2.AsyncClient | None
    scope: str
    """Which live rate limits the client's calls count against: its endpoint and a digest of its key (an injected
    client: itself)."""
    endpoint: str | None = None
    """The base URL the client calls, for messages (None: an injected client's, which lowtide does not read)."""
    api: str = "the Gemini API"
    """What messages call the API the client reaches (Vertex AI's provider names its own)."""


def build_client(options: ProviderOptions) -> OwnedClient:
    """The client to use. Without a key the error says which environment variable to set, before anything is sent;
    the base URL is the actor's, else `GOOGLE_GEMINI_BASE_URL`, else Google's, and a malformed one, or a key holding
    whitespace, is refused here."""
    if options.client is not None:
        if not isinstance(options.client, genai.Client):
            raise ConfigurationError(
                f"client must be a google.genai.Client for provider gemini, not {type(options.client).__name__}",
                field="client",
            )
        return OwnedClient(options.client, None, f"gemini:client-{id(options.client)}")
    api_key, variable = options.api_key_from(API_KEY_ENV)
    if not api_key and options.api_key_env is None:
        api_key, _ = dataclasses.replace(options, api_key_env=_OTHER_KEY_ENV).api_key_from(_OTHER_KEY_ENV)
    if not api_key:
        raise ConfigurationError(
            f"No Gemini API key: set the {variable} environment variable, pass api_key=..., or run against the "
            f"emulator ({BASE_URL_ENV} pointing at `lowtide emulator`).",
            field="api_key_env",
        )
    given = options.http_client
    if given is not None and not isinstance(given, httpx2.AsyncClient):
        raise ConfigurationError(
            f"http_client must be an httpx2.AsyncClient for provider gemini, not {type(given).__name__}",
            field="http_client",
        )
    http = given if given is not None else httpx2.AsyncClient(follow_redirects=True)
    base_url = options.base_url_from(BASE_URL_ENV)
    http_options = types.HttpOptions(base_url=base_url, timeout=int(options.timeout * 1000), httpx_async_client=http)
    return OwnedClient(
        genai.Client(api_key=api_key, http_options=http_options),
        None if given is not None else http,
        f"gemini:{base_url or 'google'}:{credential_of(api_key, owned=True, client=None)}",
        base_url or _GOOGLE,
    )
