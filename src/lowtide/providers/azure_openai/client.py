"""Building the `AsyncAzureOpenAI` client the Azure OpenAI providers use: an injected one (with a Microsoft Entra
token provider, say), or one made from a key, the resource's endpoint, an API version and an HTTP client. The key is
handed to the SDK and kept nowhere else."""

from __future__ import annotations

import os

from openai import AsyncAzureOpenAI

from lowtide.errors import ConfigurationError
from lowtide.provider import ProviderOptions
from lowtide.providers.azure_openai.options import DEFAULT_API_VERSION, PROVIDER_NAME

__all__ = ["API_KEY_ENV", "API_VERSION_ENV", "ENDPOINT_ENV", "api_version_of", "build_client"]

ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
API_KEY_ENV = "AZURE_OPENAI_API_KEY"
API_VERSION_ENV = "OPENAI_API_VERSION"


def api_version_of(options: ProviderOptions) -> str:
    """The actor's `provider_options.azure_openai.api_version`, else `OPENAI_API_VERSION`, else the default."""
    given = (options.provider_options.get(PROVIDER_NAME) or {}).get("api_version")
    if isinstance(given, str) and given:
        return given
    return os.environ.get(API_VERSION_ENV) or DEFAULT_API_VERSION


def build_client(options: ProviderOptions) -> tuple[AsyncAzureOpenAI, bool]:
    """The client to use and whether the provider owns it (and so must close it).

    Without a key or an endpoint the error says which environment variable to set, before anything is sent. The
    endpoint is the actor's `base_url`, else `AZURE_OPENAI_ENDPOINT` (the resource's address,
    `https://<resource>.openai.azure.com`; the SDK adds `/openai`).
    """
    if options.client is not None:
        if not isinstance(options.client, AsyncAzureOpenAI):
            raise ConfigurationError(
                "client must be an openai.AsyncAzureOpenAI for provider azure_openai, not "
                f"{type(options.client).__name__}",
                field="client",
            )
        return options.client, False
    api_key, variable = options.api_key_from(API_KEY_ENV)
    if not api_key:
        raise ConfigurationError(
            f"No Azure OpenAI API key: set the {variable} environment variable, pass api_key=..., or pass a client "
            "(openai.AsyncAzureOpenAI with azure_ad_token_provider=... for Microsoft Entra ID).",
            field="api_key_env",
        )
    endpoint = options.base_url_from(ENDPOINT_ENV)
    if endpoint is None:
        raise ConfigurationError(
            f"No Azure OpenAI endpoint: set the {ENDPOINT_ENV} environment variable (https://<resource>.openai."
            "azure.com, or `lowtide emulator`'s address) or the actor's base_url.",
            field="base_url",
        )
    settings = options.sdk_settings(api_key, None)
    del settings["base_url"]  # Azure's client takes the resource's endpoint, and adds `/openai` to it
    return AsyncAzureOpenAI(azure_endpoint=endpoint, api_version=api_version_of(options), **settings), True
