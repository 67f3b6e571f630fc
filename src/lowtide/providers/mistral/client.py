"""Building the mistralai `Mistral` client the Mistral providers use: an injected one, or one made from a key, a
server URL and an HTTP client. The key is handed to the SDK and kept nowhere else.

The SDK retries nothing unless given a retry configuration, and none is given: lowtide decides every retry.
`MISTRAL_SERVER_URL` (lowtide's variable; the SDK reads none) points a program at another address, such as
`lowtide emulator`'s.
"""

from __future__ import annotations

import dataclasses

import httpx2
from mistralai.client import Mistral

from lowtide import ConfigurationError, ProviderOptions
from lowtide.providers import credential_of

__all__ = ["API_KEY_ENV", "MISTRAL_SERVER_URL", "SERVER_URL_ENV", "OwnedClient", "build_client"]

SERVER_URL_ENV = "MISTRAL_SERVER_URL"
API_KEY_ENV = "MISTRAL_API_KEY"
MISTRAL_SERVER_URL = "https://api.mistral.ai"


@dataclasses.dataclass(frozen=True)
class OwnedClient:
    """The client, what the provider must close (the HTTP client it made itself; nothing for an injected client),
    its address and the quota scope of its calls (its address and a digest of its key; an injected client: itself)."""

    client: Mistral
    http: httpx2.AsyncClient | None
    endpoint: str
    scope: str
    credential: str


def build_client(options: ProviderOptions) -> OwnedClient:
    """The client to use. Without a key the error says which environment variable to set, before anything is sent;
    the server URL is the actor's `base_url`, else `MISTRAL_SERVER_URL`, else Mistral's."""
    if options.client is not None:
        if not isinstance(options.client, Mistral):
            raise ConfigurationError(
                f"client must be a mistralai.client.Mistral for provider mistral, not {type(options.client).__name__}",
                field="client",
            )
        named = f"client-{id(options.client)}"
        return OwnedClient(options.client, None, f"{MISTRAL_SERVER_URL}#{named}", f"mistral:{named}", named)
    api_key, variable = options.api_key_from(API_KEY_ENV)
    if not api_key:
        raise ConfigurationError(
            f"No Mistral API key: set the {variable} environment variable, pass api_key=..., or run against the "
            f"emulator ({SERVER_URL_ENV} pointing at `lowtide emulator`).",
            field="api_key_env",
        )
    given = options.http_client
    if given is not None and not isinstance(given, httpx2.AsyncClient):
        raise ConfigurationError(
            f"http_client must be an httpx2.AsyncClient for provider mistral, not {type(given).__name__}",
            field="http_client",
        )
    http = given if given is not None else httpx2.AsyncClient(follow_redirects=True)
    server_url = (options.base_url_from(SERVER_URL_ENV) or MISTRAL_SERVER_URL).rstrip("/")
    client = Mistral(api_key=api_key, server_url=server_url, async_client=http, timeout_ms=int(options.timeout * 1000))
    credential = credential_of(api_key, owned=True, client=None)
    return OwnedClient(client, None if given is not None else http, server_url, f"mistral:{server_url}:{credential}",
                       credential)  # fmt: skip
