"""What a `batchGenerateContent` call asks for, read as the API reads it: the body's `batch` (its `displayName`,
`priority`, and `inputConfig`: inline `requests.requests[]`, each a `request` with optional `metadata`, or the
`fileName` of an uploaded JSONL file; `webhookConfig`: the job's own webhook `uris` and the `userMetadata` its events
echo). A body the API would refuse is refused whole (400 `INVALID_ARGUMENT`); a
request inside it that generateContent would refuse fails alone when the job runs.

A file's lines (`{"key": ..., "request": {...}}`) are read when the job is created: a line that is not such an
object makes a job that ends `BATCH_STATE_FAILED`, its error naming the line."""

from __future__ import annotations

import json
from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, jsonl_objects
from lowtide.emulator.gemini.batches import BatchRequest
from lowtide.emulator.gemini.errors import invalid_argument
from lowtide.emulator.gemini.wire import RpcStatus

__all__ = ["BatchSpec", "read_batch_body", "read_batch_file"]

_BODY_KEYS = frozenset({"batch"})
_BATCH_KEYS = frozenset({"displayName", "display_name", "inputConfig", "input_config", "priority", "model", "name",
                         "webhookConfig", "webhook_config"})  # fmt: skip
_WEBHOOK_KEYS = frozenset({"uris", "userMetadata", "user_metadata"})
_INPUT_KEYS = frozenset({"requests", "fileName", "file_name"})
_INLINE_KEYS = frozenset({"request", "metadata"})


@dataclass(frozen=True)
class BatchSpec:
    display_name: str | None
    priority: int
    requests: list[BatchRequest]
    input_file: str | None
    webhook_uris: tuple[str, ...] = ()
    user_metadata: JsonObject | None = None


def _unknown(mapping: JsonObject, known: frozenset[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            at = f" at '{where}'" if where else ""
            raise invalid_argument(f'Invalid JSON payload received. Unknown name "{key}"{at}: Cannot find field.')


def _get(mapping: JsonObject, name: str, proto_name: str) -> object:
    return mapping.get(name, mapping.get(proto_name))


def read_batch_body(body: object) -> BatchSpec:
    """The job `body` asks for; `GeminiError` (400) when the API would refuse the call."""
    outer = as_object(body)
    if outer is None:
        raise invalid_argument("Invalid JSON payload received. Expected an object.")
    _unknown(outer, _BODY_KEYS, "")
    batch = as_object(outer.get("batch"))
    if batch is None:
        raise invalid_argument("* BatchGenerateContentRequest.batch: required field is missing.\n")
    _unknown(batch, _BATCH_KEYS, "batch")
    name = _get(batch, "displayName", "display_name")
    if name is not None and not isinstance(name, str):
        raise invalid_argument(f"Invalid value at 'batch.display_name' (TYPE_STRING), {json.dumps(name)[:40]}")
    priority = batch.get("priority", 0)
    if isinstance(priority, str) and priority.lstrip("-").isdigit():
        priority = int(priority)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise invalid_argument(f"Invalid value at 'batch.priority' (TYPE_INT64), {json.dumps(priority)[:40]}")
    config = as_object(_get(batch, "inputConfig", "input_config"))
    if config is None:
        raise invalid_argument("* BatchGenerateContentRequest.batch.input_config: required field is missing.\n")
    _unknown(config, _INPUT_KEYS, "batch.input_config")
    file_name = _get(config, "fileName", "file_name")
    inline = config.get("requests")
    if (file_name is None) == (inline is None):
        raise invalid_argument(
            "* BatchGenerateContentRequest.batch.input_config: exactly one of file_name or requests must be set.\n"
        )
    if file_name is not None:
        if not isinstance(file_name, str) or not file_name.startswith("files/"):
            raise invalid_argument(
                f"* BatchGenerateContentRequest.batch.input_config.file_name: must be a file's name "
                f"(files/...), got {json.dumps(file_name)[:60]}\n"
            )
        return BatchSpec(name, priority, [], file_name, *_webhook_config(batch))
    return BatchSpec(name, priority, _inline(inline), None, *_webhook_config(batch))


def _webhook_config(batch: JsonObject) -> tuple[tuple[str, ...], JsonObject | None]:
    """The job's own webhook URIs and user metadata (`batch.webhook_config`), as the API checks them."""
    given = _get(batch, "webhookConfig", "webhook_config")
    if given is None:
        return (), None
    config = as_object(given)
    if config is None:
        raise invalid_argument("Invalid JSON payload received. Expected an object for 'batch.webhook_config'.")
    _unknown(config, _WEBHOOK_KEYS, "batch.webhook_config")
    uris = as_array(config.get("uris")) or []
    for uri in uris:
        if not isinstance(uri, str) or not uri.startswith(("http://", "https://")):
            raise invalid_argument(
                f"* BatchGenerateContentRequest.batch.webhook_config.uris: must be http(s) URLs, got "
                f"{json.dumps(uri)[:60]}\n"
            )
    metadata = _get(config, "userMetadata", "user_metadata")
    if metadata is not None and as_object(metadata) is None:
        where = "batch.webhook_config.user_metadata"
        raise invalid_argument(f"Invalid JSON payload received. Expected an object for '{where}'.")
    return tuple(str(uri) for uri in uris), as_object(metadata)


def _inline(value: object) -> list[BatchRequest]:
    where = "batch.input_config.requests"
    container = as_object(value)
    if container is None:
        raise invalid_argument(f"Invalid JSON payload received. Expected an object for '{where}'.")
    _unknown(container, frozenset({"requests"}), where)
    items = as_array(container.get("requests"))
    if not items:
        raise invalid_argument(f"* BatchGenerateContentRequest.{where}.requests: must not be empty.\n")
    requests: list[BatchRequest] = []
    for index, item in enumerate(items):
        at = f"{where}.requests[{index}]"
        inlined = as_object(item)
        if inlined is None:
            raise invalid_argument(f"Invalid JSON payload received. Expected an object for '{at}'.")
        _unknown(inlined, _INLINE_KEYS, at)
        request = as_object(inlined.get("request"))
        if request is None:
            raise invalid_argument(f"* BatchGenerateContentRequest.{at}.request: required field is missing.\n")
        metadata = inlined.get("metadata")
        if metadata is not None and as_object(metadata) is None:
            raise invalid_argument(f"Invalid JSON payload received. Expected an object for '{at}.metadata'.")
        mapping = as_object(metadata)
        key = mapping.get("key") if mapping is not None else None
        requests.append(BatchRequest(str(key) if key is not None else None, mapping, request))
    return requests


def read_batch_file(name: str, content: bytes) -> tuple[list[BatchRequest], RpcStatus | None]:
    """The requests of an input file, or why the job reading it fails."""
    requests: list[BatchRequest] = []
    for number, line in jsonl_objects(content):
        request = as_object(line.get("request")) if line is not None else None
        key = line.get("key") if line is not None else None
        if line is None or request is None or (key is not None and not isinstance(key, str)):
            return [], _failure(
                f'Line {number} of {name} is not a request: a JSON object with a "request" object '
                'and an optional string "key" is expected.'
            )
        requests.append(BatchRequest(key, None, request))
    if not requests:
        return [], _failure(f"The input file {name} holds no requests.")
    return requests, None


def _failure(message: str) -> RpcStatus:
    return {"code": 3, "message": message}
