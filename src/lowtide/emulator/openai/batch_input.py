"""A batch's input file, read and checked as OpenAI checks it while the batch is `validating`: one JSON object a
line, `{"custom_id", "method": "POST", "url", "body"}`, custom ids unique, every url the batch's endpoint, one
model throughout, at most 50,000 requests and 200 MB. A file that fails gives a batch that ends `failed`, its
problems in `errors.data` (`BatchError`: code, line, message, param), with OpenAI's codes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from lowtide.emulator.core.jsonutil import JsonObject, as_object, surrogate_error

__all__ = ["MAX_BATCH_INPUT_BYTES", "MAX_BATCH_REQUESTS", "BatchInput", "read_batch_input"]

MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_INPUT_BYTES = 200 * 1024 * 1024
# OpenAI lists the first problems it finds, not every one of a broken 50,000-line file.
_MAX_ERRORS = 100


@dataclass
class BatchInput:
    requests: list[tuple[str, JsonObject]] = field(default_factory=list[tuple[str, JsonObject]])
    model: str | None = None
    errors: list[JsonObject] = field(default_factory=list[JsonObject])

    def fail(self, code: str, message: str, *, line: int | None = None, param: str | None = None) -> None:
        if len(self.errors) < _MAX_ERRORS:
            self.errors.append({"code": code, "line": line, "message": message, "param": param})


def read_batch_input(
    raw: bytes,
    endpoint: str,
    *,
    max_requests: int = MAX_BATCH_REQUESTS,
    max_bytes: int = MAX_BATCH_INPUT_BYTES,
) -> BatchInput:
    """The requests of the input file `raw`, or the problems that fail its batch (then `requests` is empty)."""
    found = BatchInput()
    if len(raw) > max_bytes:
        found.fail(
            "file_too_large",
            f"The batch input file is {len(raw)} bytes, larger than the {max_bytes} bytes a batch input file may be.",
        )
        return found
    seen: set[str] = set()
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if line.strip():
            _read_line(line, number, endpoint, found, seen)
    if not seen and not found.errors:
        found.fail("empty_file", "The batch input file is empty.")
    elif len(found.requests) > max_requests and not found.errors:
        found.fail(
            "too_many_tasks",
            f"The batch input file holds {len(found.requests)} requests; a batch can hold at most {max_requests}.",
        )
    if found.errors:
        found.requests = []
        found.model = None
    return found


def _read_line(line: bytes, number: int, endpoint: str, found: BatchInput, seen: set[str]) -> None:
    try:
        request = None if surrogate_error(line) is not None else as_object(json.loads(line))
    except ValueError:
        request = None
    if request is None:
        found.fail("invalid_json_line", "This line is not parseable as valid JSON.", line=number)
        return
    for key in ("custom_id", "method", "url", "body"):
        if request.get(key) is None:
            found.fail("missing_required_parameter", f"Missing required parameter: '{key}'.", line=number, param=key)
            return
    custom_id, method, url, body = request["custom_id"], request["method"], request["url"], as_object(request["body"])
    if not isinstance(custom_id, str):
        found.fail("invalid_type", "Invalid type for 'custom_id': expected a string.", line=number, param="custom_id")
    elif method != "POST":
        found.fail(
            "invalid_value", f"Invalid value: '{method}'. Supported values are: 'POST'.", line=number, param="method"
        )
    elif url != endpoint:
        found.fail(
            "url_mismatch",
            f"The url '{url}' of this request does not match the batch's endpoint '{endpoint}'.",
            line=number,
            param="url",
        )
    elif body is None:
        found.fail("invalid_type", "Invalid type for 'body': expected an object.", line=number, param="body")
    elif not isinstance(body.get("model"), str):
        found.fail(
            "missing_required_parameter", "Missing required parameter: 'body.model'.", line=number, param="body.model"
        )
    elif custom_id in seen:
        found.fail(
            "duplicate_custom_id",
            "The custom_id for this request is a duplicate of another request. The custom_id parameter must be "
            "unique for each request in a batch.",
            line=number,
            param="custom_id",
        )
    elif found.model is not None and body["model"] != found.model:
        found.fail(
            "model_mismatch",
            f"The model '{body['model']}' of this request does not match the model '{found.model}' of the requests "
            "before it; a batch must use one model.",
            line=number,
            param="body.model",
        )
    else:
        seen.add(custom_id)
        found.model = str(body["model"])
        found.requests.append((custom_id, body))
