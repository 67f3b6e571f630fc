"""Azure OpenAI's Batch API as a `BatchCodec`: OpenAI's (a request is one JSONL line, `custom_id`, `method`, `url`,
`body`; results are output and error file lines), with Azure's differences: every line's `url` is
`/chat/completions` and its body's `model` the global-batch deployment; one deployment a batch; Azure's limits
(100,000 requests and 200 MB a file); the answers priced at Azure's rates. Pure: no client, no key.

A stored request also says which model its deployment serves (`model`, beside `body`), for prices and budgets; it is
left out of the line sent."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

import orjson

from lowtide.batching.backend import BatchLimits
from lowtide.batching.input_file import joined_lines
from lowtide.batching.keys import params_json
from lowtide.cost.pricing import UsageShape
from lowtide.providers.azure_openai.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.azure_openai.requests import BATCH_URL, encode_request, model_served
from lowtide.providers.azure_openai.rules import USAGE
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec, body_of
from lowtide.types import ActorRequest

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "MAX_FILES", "MAX_HOURS", "AzureBatchCodec", "deployment_of"]

MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 200 * 1024 * 1024
MAX_FILES = 500
"""Azure's global batch limits: 100,000 requests and 200 MB an input file, 500 files a resource."""
MAX_HOURS = 72.0
"""How long lowtide waits for an Azure batch by default: Azure aims at 24 hours and does not expire longer jobs."""

_TAIL = f',"url":"{BATCH_URL}"}}'
_METHOD = ',"method":"POST"'
_MODEL = ',"model":'


def deployment_of(params: Mapping[str, object]) -> str:
    """The deployment a stored request goes to: its body's `model`."""
    model = body_of(params).get("model")
    return model if isinstance(model, str) else ""


class AzureBatchCodec(OpenAIBatchCodec):
    """Azure's batch requests and results."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    # Azure aims at 24 hours and lets a job run on past them (an older job may still say `expired`): unless the
    # actor sets `batch.max_wait`, a batch is waited for this long (and ten minutes) before `on_timeout` applies.
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=MAX_HOURS)
    usage_shape: UsageShape = USAGE
    prompt_caching = None  # (OpenAI's `prompt_cache_key` is not sent to a deployment)

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        encoded = encode_request(request)
        return {"method": "POST", "url": BATCH_URL, "body": encoded.body, "model": model_served(request)}

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The input file: one line a request, `{"custom_id", "body", "method", "url"}` (the served model left
        out: the API knows the deployment)."""
        return joined_lines(f'{{"custom_id":"{custom_id}",{_line(params)[1:]}\n' for custom_id, params in entries)

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """A line of the input file with the served model put back as the deployment's name (the file leaves it out):
        what the ledger stored unless the actor named another (`provider_options.azure_openai.model`)."""
        decoded = super().decode_input(line)
        if decoded is None:
            return None
        custom_id, params = decoded
        return custom_id, {**params, "model": deployment_of(params)}

    def model_of(self, params: Mapping[str, object]) -> str:
        model = params.get("model")
        return model if isinstance(model, str) and model else deployment_of(params)

    def batch_group(self, params: Mapping[str, object] | str, model: str) -> str:
        """A batch takes one deployment (two deployments of one model travel apart). Thousands of queued requests
        are grouped at once: a stored request's JSON is read by orjson, several times faster than `json` (only its
        deployment, a string, is read from it), and by `json` where orjson refuses it (a NaN, an unpaired
        surrogate)."""
        read = _read(params) if isinstance(params, str) else params
        return f"{BATCH_URL} {deployment_of(read)}"


def _read(params: str) -> Mapping[str, object]:
    try:
        read: object = orjson.loads(params)
    except orjson.JSONDecodeError:
        read = json.loads(params)
    return cast("Mapping[str, object]", read) if isinstance(read, dict) else {}


def _line(params: str) -> str:
    """A stored request's JSON without its served `model`. Its keys are sorted, so the JSON ends with
    `,"method":"POST","model":"...","url":"/chat/completions"}`: cut there (a JSON string holds no bare quote, so the
    last `,"model":` is the top-level one); any other shape is parsed and written again."""
    if params.endswith(_TAIL):
        start = params.rfind(_MODEL, 0, len(params) - len(_TAIL))
        if start > len(_METHOD) and params[start - len(_METHOD) : start] == _METHOD:
            return params[:start] + _TAIL
    read = json.loads(params)
    read.pop("model", None)
    return params_json(read)
