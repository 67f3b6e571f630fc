"""The Gemini API's batch webhooks (`batch.succeeded`, `batch.failed`, `batch.cancelled`, `batch.expired`) to a
project's static endpoint (made with the WebhookService API), verified as Google documents them: Standard Webhooks,
HMAC-SHA256 with the endpoint's signing secret from `$GEMINI_WEBHOOK_SECRET` (`whsec_...`, shown once when the
endpoint is made), the `webhook-id` the event's id on every delivery of it; read into the neutral `BatchEvent`.

Per-job (dynamic) webhooks, signed with RS256 JWTs against Google's JWKS, are not received yet: such a delivery is
refused as unsigned or wrongly signed, and the slow poll collects its job."""

from __future__ import annotations

import os
from collections.abc import Mapping

import orjson

from lowtide.core.json_types import json_object
from lowtide.errors import ConfigurationError
from lowtide.webhooks.events import BatchEvent, WebhookRefused
from lowtide.webhooks.signing import check_secret, verify_signed

__all__ = ["BATCH_EVENTS", "WEBHOOK_SECRET_ENV", "GeminiWebhooks"]

WEBHOOK_SECRET_ENV = "GEMINI_WEBHOOK_SECRET"
"""Where the static endpoint's signing secret (`whsec_...`) is read from."""

BATCH_EVENTS = frozenset({"batch.succeeded", "batch.failed", "batch.cancelled", "batch.expired"})
"""The events that say a batch job has ended: each brings its collection."""

_JOB_PREFIX = "batches/"


class GeminiWebhooks:
    """The verifier of one Gemini static webhook endpoint's deliveries (`webhook_verifier`)."""

    def __init__(self, secret: str | None = None) -> None:
        secret = secret if secret is not None else os.environ.get(WEBHOOK_SECRET_ENV)
        if not secret:
            raise ConfigurationError(
                f"No Gemini webhook secret: set the {WEBHOOK_SECRET_ENV} environment variable to the endpoint's "
                "signing secret (whsec_..., answered once by the WebhookService API when the endpoint is made: "
                "`client.webhooks.create(...).new_signing_secret`).",
                field="webhooks",
            )
        try:
            check_secret(secret)
        except ValueError:
            raise ConfigurationError(
                f"${WEBHOOK_SECRET_ENV} is not a Gemini webhook secret: it is `whsec_` and base64.", field="webhooks"
            ) from None
        self._secret = secret

    @property
    def names(self) -> str:
        return f"${WEBHOOK_SECRET_ENV}"

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance: float) -> BatchEvent | None:
        event_id = verify_signed(body, headers, self._secret, tolerance=tolerance)
        try:
            event = json_object(orjson.loads(body))
            data = json_object(event.get("data"))
        except orjson.JSONDecodeError:
            raise WebhookRefused(400, "a signed body that is not a Gemini event (JSON, `type`, `data`)") from None
        kind, job = event.get("type"), data.get("id")
        if not isinstance(kind, str) or not kind:
            raise WebhookRefused(400, "a signed Gemini event without its `type`")
        if kind not in BATCH_EVENTS:
            return None
        if not isinstance(job, str) or not job.removeprefix(_JOB_PREFIX):
            raise WebhookRefused(400, f"a signed {kind} event without its job's name (`data.id`)")
        name = job if job.startswith(_JOB_PREFIX) else _JOB_PREFIX + job  # the ledger holds `batches/<id>`
        return BatchEvent(event_id, headers.get("webhook-timestamp", ""), name, kind)
