"""A Vertex batch's files in Cloud Storage, through the official google-cloud-storage SDK (synchronous: each call runs
in a worker thread): the input written, whether it is still there, the output folder's JSONL files read, the input
deleted. Its exceptions are lowtide's `ActorError`s (`translate_storage`).

The SDK finds its address as it always does (`STORAGE_EMULATOR_HOST`, the variable Google's emulators use); an actor
whose Vertex AI calls go anonymously to an address on this machine (an emulator) has its Cloud Storage calls go
there too, with no credentials, unless `STORAGE_EMULATOR_HOST` says otherwise."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar, cast

import requests
from google.api_core import exceptions as api_exceptions
from google.auth.credentials import AnonymousCredentials

from lowtide.providers import SdkErrors, StatusError, translating
from lowtide.providers.vertex.client import Place

__all__ = ["EMULATOR_ENV", "BatchFiles", "split_uri", "translate_storage"]

EMULATOR_ENV = "STORAGE_EMULATOR_HOST"
T = TypeVar("T")


def split_uri(uri: str) -> tuple[str, str]:
    """`gs://bucket/name` as (bucket, name)."""
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return bucket, name


def _status_error(exc: api_exceptions.GoogleAPICallError) -> StatusError:
    code = int(exc.code) if exc.code is not None else 500
    said: object = exc.message
    message = said if isinstance(said, str) and said else f"Cloud Storage answered HTTP status {code}."
    return StatusError(code, message)


def _url_of(exc: requests.exceptions.RequestException) -> str:
    request = exc.request
    return str(request.url) if request is not None and request.url is not None else ""


STORAGE_ERRORS = SdkErrors(
    client="google-cloud-storage",
    api="Cloud Storage API",
    status=api_exceptions.GoogleAPICallError,
    read_status=_status_error,
    connection=requests.exceptions.RequestException,
    url_of=_url_of,
    base=api_exceptions.GoogleAPIError,
    timeout=requests.exceptions.Timeout,
)


def translate_storage() -> AbstractContextManager[None]:
    """Re-raise google-cloud-storage's exceptions as the matching `ActorError`s."""
    return translating(STORAGE_ERRORS)


class _Blob(Protocol):
    """A google-cloud-storage `Blob` as lowtide calls it (the SDK leaves its parameters untyped)."""

    @property
    def name(self) -> str: ...

    def upload_from_string(self, data: bytes, content_type: str, *, timeout: float, retry: None) -> None: ...

    def exists(self, *, timeout: float, retry: None) -> bool: ...

    def download_as_bytes(self, *, timeout: float, retry: None) -> bytes: ...

    def delete(self, *, timeout: float, retry: None) -> None: ...


class _Bucket(Protocol):
    def blob(self, blob_name: str) -> _Blob: ...


class _Client(Protocol):
    """A google-cloud-storage `Client` as lowtide calls it."""

    def bucket(self, bucket_name: str) -> _Bucket: ...

    def list_blobs(self, bucket_or_name: str, *, prefix: str, timeout: float, retry: None) -> Iterable[_Blob]: ...

    def close(self) -> None: ...


class BatchFiles:
    """The bucket an actor's batches are written to, through one storage client made on first use."""

    def __init__(self, place: Place, *, anonymous: bool, timeout: float) -> None:
        self._place = place
        self._anonymous = anonymous
        self._timeout = timeout
        """Seconds a call may take; the SDK's own retries are off (`retry=None`): lowtide decides every retry, on
        the actor's clock, where the SDK would sleep a worker thread for up to two minutes."""
        self._client: _Client | None = None

    def _storage(self) -> _Client:
        if self._client is None:
            endpoint = None
            if self._anonymous and not os.environ.get(EMULATOR_ENV) and self._place.base_url is not None:
                endpoint = self._place.base_url
            credentials = AnonymousCredentials() if self._anonymous else self._place.credentials
            options = {"api_endpoint": endpoint} if endpoint is not None else None
            # google-cloud-storage ships no type information: its client is read through `_Client`.
            make = cast("Callable[..., _Client]", importlib.import_module("google.cloud.storage").Client)
            self._client = make(project=self._place.project, credentials=credentials, client_options=options)
        return self._client

    async def _call(self, work: Callable[[_Client], T]) -> T:
        def run() -> T:
            with translate_storage():
                return work(self._storage())

        return await asyncio.to_thread(run)

    async def write(self, uri: str, data: bytes) -> None:
        """Write `data` at `uri` (written again whole when it is there: the same intent writes the same bytes)."""
        bucket, name = split_uri(uri)
        await self._call(
            lambda client: (
                client.bucket(bucket)
                .blob(name)
                .upload_from_string(data, content_type="application/jsonl", timeout=self._timeout, retry=None)
            )
        )

    async def exists(self, uri: str) -> bool:
        bucket, name = split_uri(uri)
        return await self._call(
            lambda client: client.bucket(bucket).blob(name).exists(timeout=self._timeout, retry=None)
        )

    async def read_folder(self, uri: str) -> list[bytes]:
        """Every JSONL file under the folder `uri`, by name."""
        bucket, prefix = split_uri(uri.rstrip("/") + "/")

        def read(client: _Client) -> list[bytes]:
            listed = client.list_blobs(bucket, prefix=prefix, timeout=self._timeout, retry=None)
            blobs = sorted(listed, key=lambda blob: blob.name)
            return [
                blob.download_as_bytes(timeout=self._timeout, retry=None)
                for blob in blobs
                if blob.name.endswith(".jsonl")
            ]

        return await self._call(read)

    async def delete(self, uri: str) -> None:
        """Delete the object at `uri`; one already gone is not an error."""
        bucket, name = split_uri(uri)

        def delete(client: _Client) -> None:
            try:
                client.bucket(bucket).blob(name).delete(timeout=self._timeout, retry=None)
            except api_exceptions.NotFound:
                return

        await self._call(delete)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
