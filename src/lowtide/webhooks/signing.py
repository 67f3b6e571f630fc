"""Standard Webhooks signing (the scheme OpenAI's and Gemini's webhooks use): a body's `webhook-id`,
`webhook-timestamp` and `webhook-signature` headers, HMAC-SHA256 over `id.timestamp.body` with a `whsec_<base64>`
secret. Used by lowtide's own notices (`notify`) and the emulator's provider webhooks."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

__all__ = ["check_secret", "signed_headers"]


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
