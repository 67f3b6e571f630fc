"""What lowtide asks of the SDK of an OpenAI-compatible API, generated as OpenAI's is (Stainless: groq's, together's),
as a protocol its client meets (`CompatClient`), and one dialect's binding to its SDK (`Sdk`: the client class, its
exceptions, its models endpoint). Imports no SDK: each dialect's `sdk.py` binds its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, Self, TypeVar

from pydantic import BaseModel

from lowtide import ActorRequest, ConfigurationError
from lowtide.batching.lines import Download
from lowtide.providers import ProviderOptions, SdkErrors, credential_of, translating
from lowtide.providers.model_names import model_names
from lowtide.providers.openai_compatible.dialect import Dialect

__all__ = ["CompatClient", "FilesClient", "Sdk", "SdkClient", "build_client", "check_model"]

_LOOKUP_TIMEOUT = 30.0


class _Answer(Protocol):
    def to_dict(self, *, mode: Literal["json", "python"] = ...) -> dict[str, object]: ...


class _Raw(Protocol):
    @property
    def headers(self) -> Any: ...  # each SDK's own httpx's `Headers`

    def parse(self) -> _Answer | Awaitable[_Answer]: ...


class _RawCompletions(Protocol):
    @property
    def create(self) -> Callable[..., Awaitable[_Raw]]: ...


class _Completions(Protocol):
    @property
    def create(self) -> Callable[..., object]: ...

    @property
    def with_raw_response(self) -> _RawCompletions: ...


class _Chat(Protocol):
    @property
    def completions(self) -> _Completions: ...


class _Streaming(Protocol):
    @property
    def content(self) -> Download: ...


class _Files(Protocol):
    @property
    def with_streaming_response(self) -> _Streaming: ...

    async def delete(self, file_id: str, /) -> object: ...


class SdkClient(Protocol):
    """An async SDK client of OpenAI's make, as lowtide names and asks it: its key and base URL (what the ledger
    names), a copy without retries, its close."""

    @property
    def api_key(self) -> str: ...

    @property
    def base_url(self) -> object: ...

    def with_options(self, *, max_retries: int = ..., timeout: float = ...) -> Self: ...

    async def close(self) -> None: ...


class FilesClient(SdkClient, Protocol):
    """An `SdkClient` as a Batch API's files use it: its files' downloads and deletes. OpenAI's own client is one."""

    @property
    def files(self) -> _Files: ...


class CompatClient(SdkClient, Protocol):
    """An async SDK client of OpenAI's make, as a dialect uses it: an `SdkClient` with Chat Completions whose raw
    answers parse asynchronously (groq's, together's) or at once (OpenAI's own, for an API reached through
    the openai SDK at another base URL). A batch backend asks a `FilesClient` of its own for the files."""

    @property
    def chat(self) -> _Chat: ...


C = TypeVar("C", bound=CompatClient)


@dataclass(frozen=True)
class Sdk(Generic[C]):
    """One dialect's SDK: its async client class, its exceptions (`stainless.stainless_errors`), and its models
    endpoint: the names it lists, and (where it answers for one name) whether it serves a model."""

    client: type[C]
    errors: SdkErrors[Any, Any]
    listing: Callable[[C], Awaitable[Sequence[str]]]
    lookup: Callable[[C, str], Awaitable[object]] | None = None
    unchecked: Callable[[ActorRequest], bool] = lambda _: False
    """Whether a request insists on its model unchecked (Together's `unlisted_model`)."""
    insist: str = ""
    """How a refused model is sent unchecked, ending the refusal."""

    def translate(self) -> AbstractContextManager[None]:
        """Re-raise every exception of the SDK as the matching `ActorError`."""
        return translating(self.errors)


def build_client(options: ProviderOptions, dialect: Dialect[BaseModel], sdk: Sdk[C]) -> tuple[C, bool]:
    """The client to use and whether the provider owns it (and so must close it). Without a key the error says which
    environment variable to set, before anything is sent; the base URL is the actor's, else the dialect's variable,
    else its SDK's default. The key is handed to the SDK and kept nowhere else."""
    kind = sdk.client
    if options.client is not None:
        if not isinstance(options.client, kind):
            sdk_name = f"{kind.__module__.partition('.')[0]}.{kind.__qualname__}"
            raise ConfigurationError(
                f"client must be a {sdk_name} for provider {dialect.name}, not {type(options.client).__name__}",
                field="client",
            )
        return options.client, False
    api_key, variable = options.api_key_from(dialect.api_key_env)
    if not api_key:
        emulator = f"{dialect.base_url_env} pointing at `lowtide emulator`" if dialect.base_url_env else "its base URL"
        raise ConfigurationError(
            f"No {dialect.owner} API key: set the {variable} environment variable, pass api_key=..., or run against "
            f"the emulator ({emulator}).",
            field="api_key_env",
        )
    base_url = options.base_url_from(dialect.base_url_env) or dialect.default_base_url
    if base_url is not None:
        _check_sdk_paths(base_url, dialect, "base_url" if options.base_url is not None else f"${dialect.base_url_env}")
    return kind(**options.sdk_settings(api_key, base_url)), True


def _check_sdk_paths(base_url: str, dialect: Dialect[BaseModel], source: str) -> None:
    """Refuse a base URL ending in a path the dialect's SDK adds itself (`TOGETHER_BASE_URL=http://host/v1`: every
    call would go to `/v1/v1/...`, and the first error would be a model the wrong endpoint does not list)."""
    bare = base_url.rstrip("/")
    for path in dialect.sdk_paths:
        if bare.endswith(path):
            raise ConfigurationError(
                f"{source} {base_url} ends with {path}: the {dialect.owner} SDK adds {dialect.sdk_paths[0]} before"
                f" every route itself, so give the address without it, {bare[: -len(path)] or '/'}.",
                field="base_url",
            )


async def check_model(
    client: C, sdk: Sdk[C], dialect: Dialect[BaseModel], *, owned: bool, request: ActorRequest
) -> None:
    """Refuse the request's model (a `ConfigurationError` with "did you mean") when the models endpoint says it has
    none, unless the request insists (`Sdk.unchecked`)."""
    if sdk.unchecked(request):
        return
    asking = client.with_options(max_retries=0, timeout=_LOOKUP_TIMEOUT)
    endpoint = str(client.base_url).rstrip("/")
    names = model_names(dialect.owner, endpoint, credential_of(client.api_key, owned=owned, client=client))

    async def listing() -> Sequence[str]:
        with sdk.translate():
            return await sdk.listing(asking)

    async def lookup(name: str) -> object:
        assert sdk.lookup is not None
        with sdk.translate():
            return await sdk.lookup(asking, name)

    await names.check(
        request.model, listing=listing, lookup=lookup if sdk.lookup is not None else None, hint=sdk.insist
    )
