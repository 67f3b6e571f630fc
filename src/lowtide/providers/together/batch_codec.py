"""Together's Batch API as a `BatchCodec`: OpenAI's JSONL input file (`custom_id`, `method`, `url`, `body`), for
`/v1/chat/completions`, one model a batch; results are output and error file lines, joined by custom id. OpenAI's
codec is reused for the file's shape; what is Together's is here: its limits, its request body, its prices. Pure: no
client, no key."""

from __future__ import annotations

from typing import Any

from lowtide import ActorRequest
from lowtide.providers import BatchLimits, ResultLine, Settled
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec
from lowtide.providers.openai_compatible.chat import CHAT_URL, chat_line_outcome
from lowtide.providers.together.options import PROVIDER_NAME
from lowtide.providers.together.requests import TOGETHER, encode_request
from lowtide.providers.together.rules import USAGE

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "TogetherBatchCodec"]

MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_BYTES = 100 * 1024 * 1024
"""Together's limits on one batch's input file: 50,000 requests, 100 MB."""


class TogetherBatchCodec(OpenAIBatchCodec):
    """Together's batch requests and results: a request is stored as its input line without the custom id."""

    name = PROVIDER_NAME
    gen_ai_provider_name = None  # the conventions (1.44) name no value for Together: its name
    usage_shape = USAGE
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=24.0)

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return {"method": "POST", "url": CHAT_URL, "body": encode_request(request)}

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, Any] | None]:
        return chat_line_outcome(line, dialect=TOGETHER, batch_id=batch_id, request_id=request_id)
