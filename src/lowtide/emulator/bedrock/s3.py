"""The S3 subset batch inference needs, path-style (`/{bucket}/{key}`, as boto3 addresses an endpoint given by IP
address): CreateBucket, HeadBucket, ListObjectsV2, PutObject, GetObject, HeadObject and DeleteObject, answered in
S3's XML (errors too, `errors.py`). A bucket must exist before objects go in (`NoSuchBucket` otherwise): the emulator
starts with one, `DEFAULT_BUCKET`. An object is held whole; a download streams it line by line, so that a cut fault
breaks it between lines."""

from __future__ import annotations

import datetime
import email.utils
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from xml.sax.saxutils import escape

from starlette.requests import Request

from lowtide.emulator.bedrock.errors import AwsError
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, Streamed, read_body

__all__ = ["DEFAULT_BUCKET", "ObjectStore", "S3Object", "s3_routes"]

DEFAULT_BUCKET = "lowtide-batch"
"""The bucket every emulator holds from its start, for batch inference's input and output."""
_MAX_OBJECT_BYTES = 5 * 1024 * 1024 * 1024
_LIST_MAX = 1000
_XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/"


@dataclass(frozen=True)
class S3Object:
    data: bytes
    modified: float

    @property
    def etag(self) -> str:
        return '"' + hashlib.md5(self.data, usedforsecurity=False).hexdigest() + '"'


class ObjectStore:
    """Buckets and their objects, by key."""

    def __init__(self) -> None:
        self.buckets: dict[str, dict[str, S3Object]] = {DEFAULT_BUCKET: {}}

    def reset(self) -> None:
        self.buckets = {DEFAULT_BUCKET: {}}

    def bucket(self, name: str) -> dict[str, S3Object]:
        found = self.buckets.get(name)
        if found is None:
            raise AwsError(404, "NoSuchBucket", "The specified bucket does not exist", BucketName=name)
        return found

    def put(self, bucket: str, key: str, data: bytes, now: float) -> S3Object:
        stored = S3Object(data, now)
        self.bucket(bucket)[key] = stored
        return stored

    def get(self, bucket: str, key: str) -> S3Object:
        found = self.bucket(bucket).get(key)
        if found is None:
            raise AwsError(404, "NoSuchKey", "The specified key does not exist.", Key=key)
        return found

    def find(self, bucket: str, key: str) -> S3Object | None:
        return self.buckets.get(bucket, {}).get(key)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        return sorted(key for key in self.bucket(bucket) if key.startswith(prefix))


def _http_date(moment: float) -> str:
    return email.utils.formatdate(moment, usegmt=True)


def _iso(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _xml(body: str, status_headers: dict[str, str] | None = None) -> Streamed:
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + body
    return Streamed([text.encode()], "application/xml", headers=status_headers, gather=True)


def _empty(headers: dict[str, str]) -> Streamed:
    return Streamed([b""], "application/xml", headers=headers, gather=True)


def _lines(data: bytes) -> Iterator[bytes]:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        yield data[start:end]
        start = end


class _S3Api:
    def __init__(self, store: ObjectStore, now: Callable[[], float]) -> None:
        self._store = store
        self._now = now

    async def bucket_put(self, request: Request) -> Answer:
        name = str(request.path_params["bucket"])
        if name in self._store.buckets:
            raise AwsError(
                409,
                "BucketAlreadyOwnedByYou",
                "Your previous request to create the named bucket succeeded and you already own it.",
                BucketName=name,
            )
        self._store.buckets[name] = {}
        return _empty({"Location": f"/{name}"})

    async def bucket_get(self, request: Request) -> Answer:
        name = str(request.path_params["bucket"])
        objects = self._store.bucket(name)
        if request.method == "HEAD":
            return _empty({})
        query = request.query_params
        prefix = query.get("prefix", "")
        limit = min(int(query.get("max-keys", str(_LIST_MAX)) or _LIST_MAX), _LIST_MAX)
        after = query.get("continuation-token") or query.get("start-after") or ""
        keys = [key for key in self._store.keys(name, prefix) if key > after]
        shown, more = keys[:limit], len(keys) > limit
        contents = "".join(
            f"<Contents><Key>{escape(key)}</Key><LastModified>{_iso(objects[key].modified)}</LastModified>"
            f"<ETag>{escape(objects[key].etag)}</ETag><Size>{len(objects[key].data)}</Size>"
            "<StorageClass>STANDARD</StorageClass></Contents>"
            for key in shown
        )
        token = f"<NextContinuationToken>{escape(shown[-1])}</NextContinuationToken>" if more and shown else ""
        given = query.get("continuation-token")
        echoed = f"<ContinuationToken>{escape(given)}</ContinuationToken>" if given else ""
        return _xml(
            f'<ListBucketResult xmlns="{_XMLNS}"><Name>{escape(name)}</Name><Prefix>{escape(prefix)}</Prefix>'
            f"<KeyCount>{len(shown)}</KeyCount><MaxKeys>{limit}</MaxKeys>"
            f"<IsTruncated>{'true' if more else 'false'}</IsTruncated>{echoed}{token}{contents}</ListBucketResult>"
        )

    async def object_put(self, request: Request) -> Answer:
        bucket, key = str(request.path_params["bucket"]), str(request.path_params["key"])
        self._store.bucket(bucket)
        try:
            data = await read_body(request, _MAX_OBJECT_BYTES)
        except Exception:
            raise AwsError(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size") from None
        stored = self._store.put(bucket, key, data, self._now())
        return _empty({"ETag": stored.etag})

    async def object_get(self, request: Request) -> Answer:
        bucket, key = str(request.path_params["bucket"]), str(request.path_params["key"])
        found = self._store.get(bucket, key)
        headers = {
            "ETag": found.etag,
            "Last-Modified": _http_date(found.modified),
            "Content-Length": str(len(found.data)),
            "Accept-Ranges": "bytes",
        }
        if request.method == "HEAD":
            return Streamed([b""], "application/octet-stream", headers=headers, gather=True)
        return Streamed(_lines(found.data), "application/octet-stream", headers=headers)

    async def object_delete(self, request: Request) -> Answer:
        bucket, key = str(request.path_params["bucket"]), str(request.path_params["key"])
        self._store.bucket(bucket).pop(key, None)
        return _empty({})


def s3_routes(store: ObjectStore, now: Callable[[], float]) -> list[RouteRow]:
    """S3's path-style routes (to be matched after every other API's: `Emulation.fallback_routes`)."""
    api = _S3Api(store, now)
    obj = "/{bucket}/{key:path}"
    return [
        (obj, "PUT", "bedrock.s3.put_object", api.object_put),
        (obj, "GET", "bedrock.s3.get_object", api.object_get),
        (obj, "DELETE", "bedrock.s3.delete_object", api.object_delete),
        ("/{bucket}", "PUT", "bedrock.s3.create_bucket", api.bucket_put),
        ("/{bucket}", "GET", "bedrock.s3.list_objects", api.bucket_get),
        ("/{bucket}/", "GET", "bedrock.s3.list_objects", api.bucket_get),
    ]
