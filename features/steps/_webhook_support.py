"""What the webhook step modules share: a `whsec_` secret made from words, a delivery as a receiver recorded it, and
its Standard Webhooks signature checked by the openai SDK (any such library would do)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from _openai_provider_support import OPENAI_KEY
from _support import World


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


def webhooks_command(w: World, actor_file: Path, settings: dict[str, Any]) -> str:
    """`lowtide webhooks` for the actor `settings` (written to `actor_file`) in a process of its own, on a port of its
    choosing, ended with the scenario: the URL it listens on."""
    actor_file.write_text(json.dumps(settings))  # JSON is YAML
    command = [sys.executable, "-m", "lowtide", "webhooks", "--actor", str(actor_file), "--port", "0", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env={**os.environ})
    w.cleanups.append(lambda: (process.terminate(), process.wait(30)))
    assert process.stdout is not None
    return str(json.loads(process.stdout.readline())["url"])
