"""OpenAI's Batch API as a `BatchCodec`: a request is one line of the batch's JSONL input file (`method`, `url`,
`body`), named by a `custom_id`; one batch holds one endpoint and one model; results are output and error file lines.
Pure: no client, no key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pydantic import BaseModel

from lowtide.batching.backend import BatchLimits, ResultLine, Settled
from lowtide.batching.input_file import joined_lines
from lowtide.batching.prompt_caching import PromptCaching
from lowtide.batching.token_priced import TokenPricedCodec, sent_tokens
from lowtide.core.custom_ids import CustomIdParts, ledger_custom_id, parts_of_ledger_custom_id
from lowtide.cost.pricing import UsageShape
from lowtide.providers.openai.caching import OpenAICaching
from lowtide.providers.openai.codec import encode_request, line_outcome, parse_response
from lowtide.providers.openai.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME, options_of
from lowtide.providers.openai.parameters import refuse_batch_stops
from lowtide.providers.openai.rules import USAGE
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "OpenAIBatchCodec", "body_of", "url_of"]

MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_BYTES = 200 * 1024 * 1024
"""OpenAI's limits on one batch's input file: 50,000 requests, 200 MB."""

# `{"custom_id":"",` before the stored request and the newline after it, beyond the custom id itself.
_ENVELOPE_BYTES = len('{"custom_id":"",') + 1
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_OUTPUT_LIMITS = ("max_output_tokens", "max_completion_tokens", "max_tokens")


def body_of(params: Mapping[str, object]) -> Mapping[str, object]:
    """The API body of a stored request (`{"method", "url", "body"}`)."""
    body = params.get("body")
    return cast("Mapping[str, object]", body) if isinstance(body, Mapping) else {}


def url_of(params: Mapping[str, object]) -> str:
    url = params.get("url")
    return url if isinstance(url, str) else ""


class OpenAIBatchCodec(TokenPricedCodec):
    """Batch API requests and results: a request is stored as its input line without the custom id."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=24.0)
    usage_shape: UsageShape = USAGE
    """How the answers' usage is priced (an API of OpenAI's shapes, Azure's, prices its own)."""
    prompt_caching: PromptCaching | None = OpenAICaching()

    # Requests.

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        encoded = encode_request(request)
        refuse_batch_stops(request, options_of(request))
        return {"method": "POST", "url": encoded.url, "body": encoded.body}

    def custom_id_for(self, key: str, ledger: str | None) -> str:
        """The key and the ledger's identity, `<key>_<ledger>`, when that is a plain id (the key alone outside any
        ledger); otherwise `h:` and a digest of both, which a plain id can never equal."""
        return ledger_custom_id(key, ledger, plain=_PLAIN_ID, hashed="h:", digits=48)

    def custom_id_parts(self, custom_id: str) -> CustomIdParts | None:
        return parts_of_ledger_custom_id(custom_id, plain=_PLAIN_ID, hashed="h:", digits=48)

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """A line of the input file: its custom id, and the rest as stored (`{"method", "url", "body"}`)."""
        custom_id = line.get("custom_id")
        if not isinstance(custom_id, str) or not isinstance(line.get("body"), Mapping):
            return None
        return custom_id, {name: value for name, value in line.items() if name != "custom_id"}

    def request_size(self, custom_id: str, params_json: str) -> int:
        return len(params_json.encode()) + len(custom_id.encode()) + _ENVELOPE_BYTES

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The input file: one line a request, the stored `{"method", "url", "body"}` with its custom id in front."""
        return joined_lines(f'{{"custom_id":"{custom_id}",{params[1:]}\n' for custom_id, params in entries)

    def model_of(self, params: Mapping[str, object]) -> str:
        model = body_of(params).get("model")
        return model if isinstance(model, str) else ""

    def batch_group(self, params: Mapping[str, object] | str, model: str) -> str:
        """A batch takes one endpoint and one model. Thousands of queued requests are grouped at once, so the url is
        read from the end of the stored JSON (keys sorted: `url` comes last) rather than parsing every body."""
        url = _stored_url(params) if isinstance(params, str) else None
        if url is None:
            url = url_of(json.loads(params) if isinstance(params, str) else params)
        return f"{url} {model}"

    def token_bounds(self, params: Mapping[str, object]) -> tuple[int, int]:
        return sent_tokens(body_of(params), leaving_out=_OUTPUT_LIMITS), _output_limit(params)

    # Answers.

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        return line_outcome(
            line, batch_id=batch_id, request_id=request_id, provider=self.name, usage_shape=self.usage_shape
        )

    def parse(self, response: ActorResponse[object], response_model: type[BaseModel]) -> ActorResponse[object]:
        return parse_response(response, response_model)


def _stored_url(params_json: str) -> str | None:
    """The top-level `url` of a stored request when its JSON ends with it as a plain string (`...,"url":"/v1/x"}`);
    None when it does not, or the string holds a quote or an escape (then the caller parses the JSON)."""
    if not params_json.endswith('"}'):
        return None
    start = params_json.rfind('"url":"')
    if start <= 0 or params_json[start - 1] not in ",{":
        return None
    url = params_json[start + len('"url":"') : -2]
    return None if '"' in url or "\\" in url else url


def _output_limit(params: Mapping[str, object]) -> int:
    body = body_of(params)
    for name in _OUTPUT_LIMITS:
        value = body.get(name)
        if isinstance(value, int):
            return value
    return 0
