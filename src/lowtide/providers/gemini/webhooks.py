"""The Gemini API's batch webhooks (`batch.succeeded`, `batch.failed`, `batch.cancelled`, `batch.expired`) to a
project's static endpoint (made with the WebhookService API), verified as Google documents them: Standard Webhooks,
HMAC-SHA256 with the endpoint's signing secret from `$GEMINI_WEBHOOK_SECRET` (`whsec_...`, shown once when the
endpoint is made), the `webhook-id` the event's id on every delivery of it; read into the neutral `BatchEvent`.

Per-job webhooks (a job created with `webhook_config`: `provider_options.gemini.batch_webhook_url`) carry an RS256 JWT
as their `webhook-signature` instead, verified against a JWKS (`job_webhooks.JobTokens`); the event read is the same,
and its `data.user_metadata` (the job's, echoed) says which ledger's job it is (`LEDGER_METADATA`)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import orjson

from lowtide.core.json_types import json_object
from lowtide.errors import ConfigurationError
from lowtide.providers.gemini.job_webhooks import JobTokens, is_token
from lowtide.webhooks.events import LEDGER_METADATA, BatchEvent, WebhookRefused
from lowtide.webhooks.signing import check_secret, verify_signed

__all__ = ["BATCH_EVENTS", "WEBHOOK_SECRET_ENV", "GeminiWebhooks"]

WEBHOOK_SECRET_ENV = "GEMINI_WEBHOOK_SECRET"
"""Where the static endpoint's signing secret (`whsec_...`) is read from."""

BATCH_EVENTS = frozenset({"batch.succeeded", "batch.failed", "batch.cancelled", "batch.expired"})
"""The events that say a batch job has ended: each brings its collection."""

_JOB_PREFIX = "batches/"


class GeminiWebhooks:
    """The verifier of a Gemini receiver's deliveries (`webhook_verifier`): a project endpoint's, signed with its secret
    (`$GEMINI_WEBHOOK_SECRET`), and the per-job ones of `jobs`, when its actor's jobs name a URL of their own."""

    def __init__(self, secret: str | None = None, *, jobs: JobTokens | None = None) -> None:
        secret = secret if secret is not None else os.environ.get(WEBHOOK_SECRET_ENV)
        if not secret and jobs is None:
            raise ConfigurationError(
                f"No Gemini webhook secret: set the {WEBHOOK_SECRET_ENV} environment variable to the endpoint's "
                "signing secret (whsec_..., answered once by the WebhookService API when the endpoint is made: "
                "`client.webhooks.create(...).new_signing_secret`), or give the actor's jobs a webhook of their own "
                "(provider_options.gemini.batch_webhook_url, with the JWKS its tokens are verified with).",
                field="webhooks",
            )
        if secret:
            try:
                check_secret(secret)
            except ValueError:
                raise ConfigurationError(
                    f"${WEBHOOK_SECRET_ENV} is not a Gemini webhook secret: it is `whsec_` and base64.",
                    field="webhooks",
                ) from None
        self._secret = secret or None
        self._jobs = jobs

    @property
    def names(self) -> str:
        said = [f"${WEBHOOK_SECRET_ENV}"] if self._secret else []
        if self._jobs is not None:
            said.append(f"per-job tokens for {self._jobs.audience} (JWKS {self._jobs.jwks_url})")
        return ", ".join(said)

    def may_block(self, headers: Mapping[str, str]) -> bool:
        """Whether checking a request may block: a per-job token's, whose keys are read from the JWKS."""
        return is_token(headers.get("webhook-signature", ""))

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance: float) -> BatchEvent | None:
        signature = headers.get("webhook-signature", "")
        if signature and is_token(signature):
            if self._jobs is None:
                raise WebhookRefused(401, "a per-job webhook's token, and no per-job webhook is configured here "
                                          "(provider_options.gemini.batch_webhook_url)")  # fmt: skip
            event_id = self._jobs.verify(signature, headers, tolerance=tolerance)
        elif self._secret is None:
            raise WebhookRefused(401, f"a project endpoint's webhook-signature, and ${WEBHOOK_SECRET_ENV} is not set "
                                      "here")  # fmt: skip
        else:
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
        echoed = data.get("user_metadata")  # a per-job webhook's, as the job was created with it
        ledger = json_object(echoed).get(LEDGER_METADATA)
        return BatchEvent(event_id, headers.get("webhook-timestamp", ""), name, kind,
                          ledger if isinstance(ledger, str) else None)  # fmt: skip
