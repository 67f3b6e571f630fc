"""Together's Batch API as a `BatchCodec`: OpenAI's JSONL input file (`custom_id`, `method`, `url`, `body`), for
`/v1/chat/completions`, one model a batch; results are output and error file lines, joined by custom id. OpenAI's
codec is reused for the file's shape; what is Together's is here: its limits, its request body, its prices. Pure: no
client, no key."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from lowtide import ActorRequest, BatchProcessingMode
from lowtide.providers import BatchLimits, ResultLine, Settled, cost_of, cost_range
from lowtide.providers.groq.chat import CHAT_URL, chat_line_outcome, request_tokens
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec
from lowtide.providers.together.options import PROVIDER_NAME
from lowtide.providers.together.requests import TOGETHER, encode_request
from lowtide.providers.together.rules import USAGE
from lowtide.types import Usage

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "TogetherBatchCodec"]

MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_BYTES = 100 * 1024 * 1024
"""Together's limits on one batch's input file: 50,000 requests, 100 MB."""


class TogetherBatchCodec(OpenAIBatchCodec):
    """Together's batch requests and results: a request is stored as its input line without the custom id."""

    name = PROVIDER_NAME
    gen_ai_provider_name = None  # the conventions (1.44) name no value for Together: its name
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=24.0)

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return {"method": "POST", "url": CHAT_URL, "body": encode_request(request)}

    def worst_case_usd(
        self, params: Mapping[str, object], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        inputs, outputs = request_tokens(params)
        usage = Usage(input_tokens=inputs, output_tokens=outputs)
        cost = cost_of(usage, self.model_of(params), mode=mode, provider=USAGE)
        return cost.total_usd if cost is not None else None

    def cost_range(self, params: Mapping[str, object]) -> tuple[Decimal, Decimal] | None:
        inputs, outputs = request_tokens(params)
        return cost_range(
            self.model_of(params),
            input_tokens=inputs,
            max_output_tokens=outputs,
            mode=BatchProcessingMode.BATCH,
            provider=USAGE,
        )

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, Any] | None]:
        return chat_line_outcome(line, dialect=TOGETHER, batch_id=batch_id, request_id=request_id)
