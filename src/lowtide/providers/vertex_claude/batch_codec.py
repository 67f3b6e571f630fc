"""Vertex AI's batch prediction of Claude models as a `BatchCodec`: Anthropic's (`providers/anthropic/backend.py`'s
`AnthropicBatchCodec`: Messages parameters, custom ids with the ledger's identity, prompt caching, results read by
`line_outcome`), with Vertex's input lines, limits and prices. Pure: no client, no key.

A line of the input is `{"custom_id": <id>, "request": <Messages parameters>}` (the backend takes the model out: it
is the job's); the backend hands each row of the job's output on in the Message Batches results' shape
(`{"custom_id", "result": {"type": "succeeded", "message": ...}}`, or `errored` with the row's `status`), so that
Anthropic's reading of a result is this codec's too."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, cast

from lowtide import BatchProcessingMode
from lowtide.cost.pricing import cost_range, estimate_input_tokens, worst_case_cost
from lowtide.providers import BatchLimits, ResultLine, Settled
from lowtide.providers.anthropic.backend import AnthropicBatchCodec
from lowtide.providers.anthropic.mapping import line_outcome
from lowtide.providers.vertex.batch_codec import MAX_BATCH_BYTES, MAX_HOURS
from lowtide.providers.vertex_claude.mapping import VERTEX_CLAUDE
from lowtide.providers.vertex_claude.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.vertex_claude.rules import USAGE

__all__ = ["MAX_BATCH_REQUESTS", "VertexClaudeBatchCodec"]

MAX_BATCH_REQUESTS = 100_000
"""The most requests lowtide puts in one Claude job (Anthropic's own batch limit; Vertex's page names none)."""
_ENVELOPE_BYTES = len('{"custom_id":"","request":}\n')


class VertexClaudeBatchCodec(AnthropicBatchCodec):
    """Anthropic's Messages requests and results, in Vertex AI's batch lines, at Vertex AI's prices."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=MAX_HOURS)

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The job's lines, one a request, joined from the JSON the ledger holds."""
        return "".join(f'{{"custom_id":"{custom_id}","request":{params}}}\n' for custom_id, params in entries).encode()

    def request_size(self, custom_id: str, params_json: str) -> int:
        return len(params_json.encode()) + len(custom_id.encode()) + _ENVELOPE_BYTES

    def batch_group(self, params: Mapping[str, Any] | str, model: str) -> str:
        """A Vertex AI job runs one model."""
        return model

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """A line of the job's input (`{"custom_id", "request"}`)."""
        custom_id, request = line.get("custom_id"), line.get("request")
        if not isinstance(custom_id, str) or not isinstance(request, Mapping):
            return None
        return custom_id, cast("Mapping[str, Any]", request)

    def worst_case_usd(
        self, params: Mapping[str, Any], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        return worst_case_cost(params, mode=mode, provider=USAGE)

    def cost_range(self, params: Mapping[str, Any]) -> tuple[Decimal, Decimal] | None:
        return cost_range(
            self.model_of(params),
            input_tokens=estimate_input_tokens(params),
            max_output_tokens=int(params.get("max_tokens", 0)),
            mode=BatchProcessingMode.BATCH,
            provider=USAGE,
        )

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, Any] | None]:
        return line_outcome(line, batch_id=batch_id, request_id=request_id, dialect=VERTEX_CLAUDE)
