"""Vertex AI's batch prediction for Gemini models as a `BatchCodec`: Gemini's (`providers/gemini/batch_codec.py`:
a request stored as its REST body, a line `{"key": <custom id>, "request": <body>}`, a result `{"key", "response"}` or
`{"key", "error"}`), named for Vertex, with Vertex's limits. Pure: no client, no key."""

from __future__ import annotations

from lowtide.providers import BatchLimits
from lowtide.providers.gemini.batch_codec import GeminiBatchCodec
from lowtide.providers.vertex.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "MAX_HOURS", "VertexBatchCodec"]

MAX_BATCH_REQUESTS = 200_000
"""The most requests Vertex AI takes in one Gemini batch job."""
MAX_BATCH_BYTES = 1024 * 1024 * 1024
"""The largest input file of one job (1 GB in Cloud Storage)."""
MAX_HOURS = 72.0
"""A job not finished 72 hours after its create is ended by Vertex AI; what it did not run is unanswered."""


class VertexBatchCodec(GeminiBatchCodec, id_field="key", body_field="request", plain_id=GeminiBatchCodec.plain_id):
    """Gemini's batch lines and answers, as Vertex AI's provider (its name on answers, spans and prices)."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=MAX_HOURS)
