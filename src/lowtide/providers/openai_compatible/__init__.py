"""The base of the providers whose APIs speak OpenAI's Chat Completions and Batch API shapes (Groq, Together, or a
plugin's): such a provider is a `Dialect` (its names, key, parameter rules, limits and prices, as data), its SDK's
binding (`sdk.Sdk`: the client class, its exceptions, its models endpoint) and its batch backend's few hooks
(`batch_backend.FileBatchBackend`); its live and batch providers are `live.ChatProvider` and `batch.ChatBatchProvider`
naming them, registered by `register_dialect`.

Imports no SDK (each dialect's folder binds its own) and no provider's folder: a dialect's folder imports this, never
the other way round. `provider: openai_compatible` itself, an endpoint configured by data, is `endpoint.py` (light)
and `endpoint_providers.py` (the openai SDK at the configured base URL, imported when first used).
"""

from lowtide.providers.openai_compatible.dialect import Dialect, register_dialect

__all__ = ["Dialect", "register_dialect"]
