"""Mistral's Batch API as a `BatchCodec`: a request is its chat completions body (`requests.encode_request`, model
included), one line of a job's input `{"custom_id": ..., "body": ...}`, inline in the create or in an uploaded JSONL
file; one job holds one model; a result is an output file line `{"custom_id", "response": {"status_code", "body"}}`
or an error file line `{"custom_id", "error": {...}}`. Pure: no client, no key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pydantic import BaseModel

from lowtide import (
    ActorRequest,
    ActorResponse,
    BatchProcessingMode,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchRequestUnreadable,
)
from lowtide.providers import (
    BatchLimits,
    CustomIdParts,
    ResultLine,
    Settled,
    TokenPricedCodec,
    api_error_class,
    json_object,
    ledger_custom_id,
    parse_response,
    parts_of_ledger_custom_id,
    sent_tokens,
)
from lowtide.providers.mistral.answers import answer_and_json, finish_error
from lowtide.providers.mistral.errors import error_of_body
from lowtide.providers.mistral.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.mistral.requests import encode_request
from lowtide.providers.mistral.rules import USAGE

__all__ = [
    "CANCELED_CODE",
    "EXPIRED_CODE",
    "FAILED_CODE",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_REQUESTS",
    "MistralBatchCodec",
    "error_line",
]

MAX_BATCH_REQUESTS = 100_000
"""Mistral's limit on the requests of one batch job."""
MAX_BATCH_BYTES = 512 * 1024 * 1024
"""Mistral's limit on one batch input file (512 MB)."""
MAX_HOURS = 24.0
"""A job's `timeout_hours` by default: lowtide asks for its `batch.max_wait`, at most 168 hours."""

CANCELED_CODE = "lowtide_batch_cancelled"
EXPIRED_CODE = "lowtide_batch_timeout_exceeded"
FAILED_CODE = "lowtide_batch_failed"
"""The error codes of the lines lowtide writes for requests an ended job left unanswered (`unanswered_line`)."""

_ENVELOPE_BYTES = len('{"custom_id":"","body":}') + 1
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def error_line(custom_id: str, code: str, message: str) -> dict[str, object]:
    """A result line standing for an error lowtide writes (an error file line, a code of lowtide's own)."""
    return {"custom_id": custom_id, "error": {"message": message, "code": code}}


class MistralBatchCodec(TokenPricedCodec):
    """Mistral batch requests and results: a request is stored as its chat completions body, model included."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    usage_shape = USAGE
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=MAX_HOURS)

    # Requests.

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return encode_request(request)

    def custom_id_for(self, key: str, ledger: str | None) -> str:
        """The key and the ledger's identity, `<key>_<ledger>`, when that is a plain id (the key alone outside any
        ledger); otherwise `h:` and a digest of both, which a plain id can never equal."""
        return ledger_custom_id(key, ledger, plain=_PLAIN_ID, hashed="h:", digits=48)

    def custom_id_parts(self, custom_id: str) -> CustomIdParts | None:
        return parts_of_ledger_custom_id(custom_id, plain=_PLAIN_ID, hashed="h:", digits=48)

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """A line of the JSONL input: its custom id and its chat completions body as stored."""
        custom_id, body = line.get("custom_id"), line.get("body")
        if not isinstance(custom_id, str) or not isinstance(body, Mapping):
            return None
        return custom_id, cast("Mapping[str, Any]", body)

    def request_size(self, custom_id: str, params_json: str) -> int:
        return len(params_json.encode()) + len(custom_id.encode()) + _ENVELOPE_BYTES

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The JSONL input: a line a request, `{"custom_id": <custom id>, "body": <stored body>}`."""
        return "".join(f'{{"custom_id":"{custom_id}","body":{params}}}\n' for custom_id, params in entries).encode()

    def model_of(self, params: Mapping[str, object]) -> str:
        model = params.get("model")
        return model if isinstance(model, str) else ""

    def batch_group(self, params: Mapping[str, object] | str, model: str) -> str:
        """A batch job takes one model (its create names it)."""
        return model

    def token_bounds(self, params: Mapping[str, object]) -> tuple[int, int]:
        return sent_tokens(params, leaving_out=("max_tokens",)), _output_limit(params)

    # Answers.

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        """A result line as its request's outcome: an answer (priced at batch prices), Mistral's error for the
        request (retried when its status says the same request may succeed later), or the cancel, timeout or
        failure of the whole job."""
        custom_id = str(line.get("custom_id"))
        error = line.get("error")
        response = line.get("response")
        if isinstance(error, dict):
            return _error_outcome(cast("Mapping[str, object]", error), batch_id, custom_id), None
        if isinstance(response, dict):
            held = cast("Mapping[str, object]", response)
            status = held.get("status_code")
            body = json_object(held.get("body"))
            if isinstance(status, int) and status != 200:
                return _status_outcome(status, body, batch_id, custom_id), None
            failed = finish_error(body, request_id=request_id)
            if failed is not None:
                return BatchRequestErrored(
                    batch_id=batch_id,
                    custom_id=custom_id,
                    error_type="error",
                    api_message=str(failed),
                    retryable=True,
                    kind=type(failed),
                ), None
            ids = {"batch_id": batch_id, "custom_id": custom_id, "request_id": request_id}
            return answer_and_json(body, mode=BatchProcessingMode.BATCH, ids=ids)
        return BatchRequestUnreadable(
            batch_id=batch_id,
            custom_id=custom_id,
            raw_line=json.dumps(line, ensure_ascii=False, separators=(",", ":")),
            reason="a line with neither a response nor an error; a newer lowtide may read it",
        ), None

    def parse(self, response: ActorResponse[object], response_model: type[BaseModel]) -> ActorResponse[object]:
        return parse_response(response, response_model)


def _error_outcome(error: Mapping[str, object], batch_id: str, custom_id: str) -> Settled:
    code = error.get("code")
    if code == CANCELED_CODE:
        return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id)
    if code == EXPIRED_CODE:
        return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id)
    status = error.get("status_code")
    http = status if isinstance(status, int) and not isinstance(status, bool) else None
    message = error.get("message")
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=str(code) if code is not None else (f"http_{http}" if http is not None else "error"),
        api_message=str(message) if message else "The Mistral API gave no message.",
        retryable=code != FAILED_CODE and (http is None or http in (408, 429) or http >= 500),
        kind=api_error_class(http) if http is not None else None,
    )


def _status_outcome(status: int, body: Mapping[str, object], batch_id: str, custom_id: str) -> Settled:
    message, error_type = error_of_body(status, json.dumps(body))
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=error_type or f"http_{status}",
        api_message=message,
        retryable=status in (408, 429) or status >= 500,
        kind=api_error_class(status, error_type),
    )


def _output_limit(params: Mapping[str, object]) -> int:
    limit = params.get("max_tokens")
    return limit if isinstance(limit, int) else 0
