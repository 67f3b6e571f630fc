"""The Cloud Storage JSON API as google-cloud-storage calls it for a batch's files: a multipart upload
(`POST /upload/storage/v1/b/{bucket}/o?uploadType=multipart`), an object's metadata and its bytes (`alt=media`, or
`/download/storage/v1/...`), a listing by prefix (paged) and a delete. The emulator's reading where the API says more:
every bucket exists (made by its first object); a resumable upload (google-cloud-storage's way above 8 MiB) is
served when its bytes come in one chunk (the SDK's chunk is 100 MiB, above the emulator's largest upload), a chunk
that does not end the object is refused with 501; generations count up per object."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP
from typing import cast

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, Headed, Streamed, read_body
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.gemini.errors import GeminiError

__all__ = ["ObjectStore", "StoredObject", "storage_routes"]

_MAX_UPLOAD_BYTES = 64 * 1024 * 1024
_PAGE = 1000


@dataclass
class StoredObject:
    """One object: its bytes, generation and the time it was written (epoch seconds)."""

    data: bytes
    generation: int
    updated: float
    content_type: str = "application/octet-stream"


class ObjectStore:
    """The emulated project's buckets: bucket -> object name -> object."""

    def __init__(self) -> None:
        self.buckets: dict[str, dict[str, StoredObject]] = {}
        self._generation = 0

    def put(self, bucket: str, name: str, data: bytes, *, now: float, content_type: str | None = None) -> StoredObject:
        self._generation += 1
        stored = StoredObject(data, self._generation, now, content_type or "application/octet-stream")
        self.buckets.setdefault(bucket, {})[name] = stored
        return stored

    def get(self, bucket: str, name: str) -> StoredObject:
        found = self.buckets.get(bucket, {}).get(name)
        if found is None:
            raise GeminiError(404, f"No such object: {bucket}/{name}")
        return found

    def names(self, bucket: str, prefix: str) -> list[str]:
        return sorted(name for name in self.buckets.get(bucket, {}) if name.startswith(prefix))

    def delete(self, bucket: str, name: str) -> None:
        self.get(bucket, name)
        del self.buckets[bucket][name]

    def reset(self) -> None:
        self.buckets.clear()


def resource(bucket: str, name: str, stored: StoredObject) -> JsonObject:
    """An object's metadata as the JSON API shows it."""
    moment = datetime.datetime.fromtimestamp(stored.updated, tz=datetime.UTC).isoformat().replace("+00:00", "Z")
    return {
        "kind": "storage#object",
        "id": f"{bucket}/{name}/{stored.generation}",
        "name": name,
        "bucket": bucket,
        "generation": str(stored.generation),
        "metageneration": "1",
        "contentType": stored.content_type,
        "size": str(len(stored.data)),
        "md5Hash": base64.b64encode(hashlib.md5(stored.data, usedforsecurity=False).digest()).decode(),
        "crc32c": base64.b64encode(_crc32c(stored.data).to_bytes(4, "big")).decode(),
        "timeCreated": moment,
        "updated": moment,
    }


def storage_routes(store: ObjectStore, now: Callable[[], float]) -> list[RouteRow]:
    """The routes, named `vertex.storage.objects.*`."""
    api = _Storage(store, now)
    obj = "/storage/v1/b/{bucket}/o/{name:path}"
    return [
        ("/upload/storage/v1/b/{bucket}/o", "POST", "vertex.storage.objects.insert", api.insert),
        ("/upload/storage/v1/b/{bucket}/o", "PUT", "vertex.storage.objects.insert", api.upload_chunk),
        ("/download" + obj, "GET", "vertex.storage.objects.get", api.get),
        ("/storage/v1/b/{bucket}/o", "GET", "vertex.storage.objects.list", api.list),
        (obj, "GET", "vertex.storage.objects.get", api.get),
        (obj, "DELETE", "vertex.storage.objects.delete", api.delete),
    ]


class _Storage:
    def __init__(self, store: ObjectStore, now: Callable[[], float]) -> None:
        self._store = store
        self._now = now
        self._sessions: dict[str, tuple[str, str, str | None]] = {}
        self._uploads = 0

    async def insert(self, request: Request) -> Answer:
        bucket = str(request.path_params["bucket"])
        kind = request.query_params.get("uploadType", "")
        body = await read_body(request, _MAX_UPLOAD_BYTES)
        if kind == "media":
            name = request.query_params.get("name", "")
            content_type = request.headers.get("content-type")
            data = body
        elif kind == "multipart":
            name, content_type, data = _multipart(request.headers.get("content-type", ""), body)
            name = request.query_params.get("name") or name
        elif kind == "resumable":
            metadata = json.loads(body or b"{}")
            name = request.query_params.get("name") or str(metadata.get("name") or "")
            if not name:
                raise GeminiError(400, "Required object name.")
            self._uploads += 1
            upload_id = f"upload-{self._uploads}"
            self._sessions[upload_id] = (bucket, name, request.headers.get("x-upload-content-type"))
            location = f"{str(request.base_url).rstrip('/')}/upload/storage/v1/b/{bucket}/o?uploadType=resumable"
            return Headed({}, {"location": f"{location}&upload_id={upload_id}"})
        else:
            raise GeminiError(501, f"The emulator serves uploadType=multipart, media and resumable, not {kind!r}.")
        if not name:
            raise GeminiError(400, "Required object name.")
        stored = self._store.put(bucket, name, data, now=self._now(), content_type=content_type)
        return resource(bucket, name, stored)

    async def upload_chunk(self, request: Request) -> Answer:
        """A resumable upload's bytes, whole in one chunk (`Content-Range: bytes 0-N/total`)."""
        session = self._sessions.get(request.query_params.get("upload_id", ""))
        if session is None:
            raise GeminiError(404, "No such upload session.")
        bucket, name, content_type = session
        data = await read_body(request, _MAX_UPLOAD_BYTES)
        declared = request.headers.get("content-range", "")
        total = declared.rpartition("/")[2]
        if not declared.startswith("bytes 0-") or not total.isdigit() or int(total) != len(data):
            raise GeminiError(501, "The emulator takes a resumable upload's bytes in one chunk, whole.")
        del self._sessions[request.query_params["upload_id"]]
        stored = self._store.put(bucket, name, data, now=self._now(), content_type=content_type)
        return resource(bucket, name, stored)

    async def get(self, request: Request) -> Answer:
        bucket, name = str(request.path_params["bucket"]), str(request.path_params["name"])
        stored = self._store.get(bucket, name)
        if request.url.path.startswith("/download/") or request.query_params.get("alt") == "media":
            return Streamed([stored.data], stored.content_type, headers={"x-goog-generation": str(stored.generation)})
        return resource(bucket, name, stored)

    async def list(self, request: Request) -> Answer:
        bucket = str(request.path_params["bucket"])
        names = self._store.names(bucket, request.query_params.get("prefix", ""))
        token = request.query_params.get("pageToken")
        start = int(token) if token and token.isdigit() else 0
        size = int(request.query_params.get("maxResults") or _PAGE)
        page = names[start : start + size]
        listing: JsonObject = {
            "kind": "storage#objects",
            "items": [resource(bucket, name, self._store.get(bucket, name)) for name in page],
        }
        if start + size < len(names):
            listing["nextPageToken"] = str(start + size)
        return listing

    async def delete(self, request: Request) -> Answer:
        self._store.delete(str(request.path_params["bucket"]), str(request.path_params["name"]))
        return {}


def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of `data`, which the SDK checks a resumable upload by: google-crc32c's, where installed
    (beside google-cloud-storage), else computed here."""
    try:
        import google_crc32c  # pyright: ignore[reportMissingTypeStubs] - a C extension without stubs
    except ImportError:
        crc = 0xFFFFFFFF
        for byte in data:
            crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF
    compute = cast("Callable[[bytes], int]", google_crc32c.value)  # pyright: ignore[reportUnknownMemberType]
    return compute(data)


def _table() -> list[int]:
    table: list[int] = []
    for index in range(256):
        crc = index
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _table()


def _multipart(content_type: str, body: bytes) -> tuple[str, str | None, bytes]:
    """The object's name, content type and bytes from a `multipart/related` upload (metadata, then media)."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    parts = list(message.iter_parts()) if message.is_multipart() else []
    if len(parts) != 2:
        raise GeminiError(400, "A multipart upload holds the object's metadata, then its media.")
    metadata = json.loads(cast("bytes", parts[0].get_payload(decode=True)) or b"{}")
    data = cast("bytes", parts[1].get_payload(decode=True)) or b""
    return str(metadata.get("name") or ""), parts[1].get_content_type(), data
