"""Building the `AsyncOpenAI` client the OpenAI provider uses: an injected one, or one made from a key, a base URL and
an HTTP client. The key is handed to the SDK and kept nowhere else."""

from __future__ import annotations

from openai import AsyncOpenAI

from lowtide.errors import ConfigurationError
from lowtide.provider import ProviderOptions

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "build_client"]

BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"


def build_client(options: ProviderOptions) -> tuple[AsyncOpenAI, bool]:
    """The client to use and whether the provider owns it (and so must close it).

    Without a key the error says which environment variable to set, before anything is sent. The base URL is the
    actor's, else `OPENAI_BASE_URL`, else OpenAI's API; a malformed one, or a key holding whitespace, is refused
    here, before anything is sent.
    """
    if options.client is not None:
        if not isinstance(options.client, AsyncOpenAI):
            raise ConfigurationError(
                f"client must be an openai.AsyncOpenAI for provider openai, not {type(options.client).__name__}",
                field="client",
            )
        return options.client, False
    api_key, variable = options.api_key_from(API_KEY_ENV)
    if not api_key:
        raise ConfigurationError(
            f"No OpenAI API key: set the {variable} environment variable, pass api_key=..., or run against the "
            "emulator (lowtide.emulator.Emulator().openai_client(), or OPENAI_BASE_URL pointing at "
            "`lowtide emulator`'s /v1).",
            field="api_key_env",
        )
    return AsyncOpenAI(**options.sdk_settings(api_key, options.base_url_from(BASE_URL_ENV))), True
