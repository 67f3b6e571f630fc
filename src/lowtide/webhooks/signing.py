"""Standard Webhooks signing (the scheme OpenAI's and Gemini's webhooks use): a body's `webhook-id`,
`webhook-timestamp` and `webhook-signature` headers, HMAC-SHA256 over `id.timestamp.body` with a `whsec_<base64>`
secret. Used by lowtide's own notices (`notify`) and the emulator's provider webhooks to sign, and by a provider whose
webhooks follow the scheme without an SDK to check them (`verify_signed`)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping

from lowtide.webhooks.events import WebhookRefused

__all__ = ["check_moment", "check_secret", "signed_headers", "verify_signed"]


def check_secret(secret: str) -> bytes:
    """The key a `whsec_<base64>` secret holds; ValueError for anything else (the message never holds the secret)."""
    if not secret.startswith("whsec_"):
        raise ValueError("a webhook secret is `whsec_` and base64 (Standard Webhooks)")
    try:
        return base64.b64decode(secret[6:], validate=True)
    except binascii.Error:
        raise ValueError("a webhook secret is `whsec_` and base64 (Standard Webhooks)") from None


def signed_headers(body: bytes, secret: str, *, msg_id: str, at: float) -> dict[str, str]:
    """The headers that sign `body` as the message `msg_id`, sent at the Unix time `at`."""
    stamp = str(int(at))
    mac = hmac.new(check_secret(secret), f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": stamp,
        "webhook-signature": f"v1,{base64.b64encode(mac).decode()}",
        "content-type": "application/json",
    }


def check_moment(stamp: str, tolerance: float) -> None:
    """`WebhookRefused` (401) unless `stamp` (a `webhook-timestamp`) is a Unix time within `tolerance` s of now."""
    try:
        moment = int(stamp)
    except ValueError:
        raise WebhookRefused(401, "the webhook-timestamp header is not a Unix time in seconds") from None
    now = time.time()
    if moment < now - tolerance:
        raise WebhookRefused(401, f"signed too long ago: more than {tolerance:g} s before now")
    if moment > now + tolerance:
        raise WebhookRefused(401, f"signed too far ahead: more than {tolerance:g} s after now")


def verify_signed(body: bytes, headers: Mapping[str, str], secret: str, *, tolerance: float) -> str:
    """The `webhook-id` of `body`, once one of its `webhook-signature`'s `v1,` signatures (several during a secret's
    rotation) is found right for `secret`, and its `webhook-timestamp` within `tolerance` seconds of now. Raises
    `WebhookRefused` (401) for anything else; its reason never holds the body, a signature or the secret."""
    msg_id, stamp, signatures = (headers.get(name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not stamp or not signatures:
        missing = [name for name, value in (("webhook-id", msg_id), ("webhook-timestamp", stamp),
                                            ("webhook-signature", signatures)) if not value]  # fmt: skip
        raise WebhookRefused(401, f"unsigned: no {', '.join(missing)} header")
    check_moment(stamp, tolerance)
    expected = hmac.new(check_secret(secret), f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    for signature in signatures.split():
        version, _, encoded = signature.partition(",")
        if version != "v1":
            continue
        try:
            given = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            continue
        if hmac.compare_digest(given, expected):
            return msg_id
    raise WebhookRefused(401, "the webhook-signature does not match the body and the secret")
