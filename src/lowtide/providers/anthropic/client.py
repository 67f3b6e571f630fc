"""Building the SDK client a provider uses: an injected one, or one made from a key, a base URL and an HTTP client."""

from __future__ import annotations

from anthropic import AsyncAnthropic

from lowtide.errors import ConfigurationError
from lowtide.provider import ProviderOptions

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "build_client"]

BASE_URL_ENV = "ANTHROPIC_BASE_URL"
API_KEY_ENV = "ANTHROPIC_API_KEY"


def build_client(options: ProviderOptions) -> tuple[AsyncAnthropic, bool]:
    """The client to use and whether the provider owns it (and so must close it).

    Without a key the error says which environment variable to set, before anything is sent. The base URL is the
    actor's, else `ANTHROPIC_BASE_URL`, else Anthropic's API; a malformed one, or a key holding whitespace, is
    refused here, before anything is sent.
    """
    if options.client is not None:
        if not isinstance(options.client, AsyncAnthropic):
            raise ConfigurationError(
                f"client must be an anthropic.AsyncAnthropic, not {type(options.client).__name__}", field="client"
            )
        return options.client, False
    api_key, variable = options.api_key_from(API_KEY_ENV)
    if not api_key:
        raise ConfigurationError(
            f"No Anthropic API key: set the {variable} environment variable, pass api_key=..., "
            "or run against the emulator (lowtide.emulator.Emulator, or ANTHROPIC_BASE_URL pointing at "
            "`lowtide emulator`).",
            field="api_key_env",
        )
    return AsyncAnthropic(**options.sdk_settings(api_key, options.base_url_from(BASE_URL_ENV))), True
