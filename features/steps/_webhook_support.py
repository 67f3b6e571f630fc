"""What the webhook step modules share: a `whsec_` secret made from words, a delivery as a receiver recorded it, and
its Standard Webhooks signature checked by the openai SDK (any such library would do)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import openai
from _openai_provider_support import OPENAI_KEY


def whsec(words: bytes) -> str:
    """A webhook secret as OpenAI's dashboard shows one: `whsec_` and base64."""
    return "whsec_" + base64.b64encode(words).decode()


@dataclass
class Delivery:
    """One POST a receiver took: when (the scenario's clock), its body and headers."""

    at: float
    body: bytes
    headers: dict[str, str]


def verified(delivery: Delivery, secret: str) -> dict[str, Any]:
    """The delivery's JSON, once the openai SDK has verified its signature with `secret` (raising otherwise)."""
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url="http://unused.invalid")
    try:
        client.webhooks.verify_signature(delivery.body, delivery.headers, secret=secret)
    finally:
        client.close()
    return json.loads(delivery.body)
