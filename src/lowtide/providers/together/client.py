"""Building the `AsyncTogether` client the Together providers use: an injected one, or one made from a key, a base
URL and an HTTP client. The key is handed to the SDK and kept nowhere else."""

from __future__ import annotations

from together import AsyncTogether

from lowtide import ConfigurationError
from lowtide.providers import ProviderOptions

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "build_client"]

BASE_URL_ENV = "TOGETHER_BASE_URL"
API_KEY_ENV = "TOGETHER_API_KEY"


def build_client(options: ProviderOptions) -> tuple[AsyncTogether, bool]:
    """The client to use and whether the provider owns it (and so must close it). Without a key the error says which
    environment variable to set, before anything is sent; the base URL is the actor's, else `TOGETHER_BASE_URL`,
    else Together's API (the SDK adds `/v1/...` to it)."""
    if options.client is not None:
        if not isinstance(options.client, AsyncTogether):
            raise ConfigurationError(
                f"client must be a together.AsyncTogether for provider together, not {type(options.client).__name__}",
                field="client",
            )
        return options.client, False
    api_key, variable = options.api_key_from(API_KEY_ENV)
    if not api_key:
        raise ConfigurationError(
            f"No Together API key: set the {variable} environment variable, pass api_key=..., or run against the "
            "emulator (TOGETHER_BASE_URL pointing at `lowtide emulator`).",
            field="api_key_env",
        )
    settings = options.sdk_settings(api_key, options.base_url_from(BASE_URL_ENV))
    return AsyncTogether(**settings), True
