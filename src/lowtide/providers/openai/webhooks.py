"""OpenAI's batch webhooks (`batch.completed`, `batch.failed`, `batch.expired`, `batch.cancelled`), verified as OpenAI
specifies, by the SDK's own `webhooks.verify_signature` (its `webhook-id`, `webhook-timestamp` and `webhook-signature`
headers, the endpoint's secret from `$OPENAI_WEBHOOK_SECRET`), and read into the neutral `BatchEvent`."""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping

import orjson
from openai import AsyncOpenAI, InvalidWebhookSignatureError

from lowtide.core.json_types import json_object
from lowtide.errors import ConfigurationError
from lowtide.webhooks.events import BatchEvent, WebhookRefused

__all__ = ["BATCH_EVENTS", "WEBHOOK_SECRET_ENV", "OpenAIWebhooks"]

WEBHOOK_SECRET_ENV = "OPENAI_WEBHOOK_SECRET"
"""The SDK's own variable for an endpoint's signing secret (`whsec_...`)."""

BATCH_EVENTS = frozenset({"batch.completed", "batch.failed", "batch.expired", "batch.cancelled"})
"""The events that say a batch has ended: each brings its collection."""


class OpenAIWebhooks:
    """The verifier of one OpenAI webhook endpoint's deliveries (`webhook_verifier`)."""

    def __init__(self, client: AsyncOpenAI, secret: str | None = None) -> None:
        secret = secret if secret is not None else os.environ.get(WEBHOOK_SECRET_ENV)
        if not secret:
            raise ConfigurationError(
                f"No OpenAI webhook secret: set the {WEBHOOK_SECRET_ENV} environment variable to the endpoint's "
                "signing secret (whsec_..., shown when the endpoint is made in OpenAI's dashboard).",
                field="webhooks",
            )
        if secret.startswith("whsec_"):
            try:
                base64.b64decode(secret[6:], validate=True)
            except binascii.Error:
                raise ConfigurationError(
                    f"${WEBHOOK_SECRET_ENV} is not a webhook secret: after `whsec_` it must be base64.",
                    field="webhooks",
                ) from None
        self._client = client
        self._secret = secret

    @property
    def names(self) -> str:
        return f"${WEBHOOK_SECRET_ENV}"

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance: float) -> BatchEvent | None:
        try:
            self._client.webhooks.verify_signature(body, headers, secret=self._secret, tolerance=int(tolerance))
        except InvalidWebhookSignatureError as exc:  # a wrong signature, or a moment outside the tolerance
            raise WebhookRefused(401, str(exc)) from None
        except ValueError as exc:  # a header missing: unsigned
            raise WebhookRefused(401, str(exc)) from None
        try:
            event = json_object(orjson.loads(body))
            data = json_object(event.get("data"))
        except orjson.JSONDecodeError:
            raise WebhookRefused(400, "a signed body that is not an OpenAI event (JSON with `data`)") from None
        kind, event_id, batch_id = event.get("type"), event.get("id"), data.get("id")
        if not isinstance(kind, str) or not isinstance(event_id, str):
            raise WebhookRefused(400, "a signed OpenAI event without its `id` or `type`")
        if kind not in BATCH_EVENTS:
            return None
        if not isinstance(batch_id, str) or not batch_id:
            raise WebhookRefused(400, f"a signed {kind} event without its batch's id (`data.id`)")
        return BatchEvent(event_id, headers.get("webhook-timestamp", ""), batch_id, kind)
