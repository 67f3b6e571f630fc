"""Per-job Gemini webhook deliveries made by hand for gemini_job_webhooks.feature: the emulator's own token for the
job's URL (as Gemini sends it), and the forgeries a receiver must refuse, each with a `batch.succeeded` body."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from typing import cast

from lowtide.emulator.core.job_tokens import ISSUER, JobTokens


def _body(job: str) -> bytes:
    stamp = str(int(time.time()))
    return json.dumps({"type": "batch.succeeded", "version": "v1", "timestamp": stamp, "data": {"id": job}}).encode()


def _headers(token: str, msg: str) -> dict[str, str]:
    return {"webhook-id": msg, "webhook-timestamp": str(int(time.time())), "webhook-signature": token,
            "content-type": "application/json"}  # fmt: skip


def job_delivery(tokens: JobTokens, job: str, receiver: str, token: str) -> tuple[bytes, dict[str, str]]:
    """A `batch.succeeded` delivery for `job` to `receiver` (the URL the job was created with), with `token` as its
    signature: the emulator's for that URL, or one of the forgeries the Examples name."""
    import jwt  # here: every feature loads the steps, and only these need lowtide[gemini]'s pyjwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    body, msg, now = _body(job), f"wh_{uuid.uuid4().hex}", time.time()
    claims = {"iss": ISSUER, "aud": receiver, "iat": int(now), "exp": int(now + 300)}
    if token == "the token the job's URL gets":
        return body, tokens.headers(msg_id=msg, at=now, audience=receiver)
    if token == "a token for another URL":
        return body, tokens.headers(msg_id=msg, at=now, audience="https://elsewhere.example/webhooks/gemini")
    if token == "a token that expired":
        headers = tokens.headers(msg_id=msg, at=now - 600, audience=receiver)
        return body, {**headers, "webhook-timestamp": str(int(now))}  # a fresh moment: the token alone is stale
    if token == "a token of the emulator's key from another issuer":
        forged = tokens.token({**claims, "iss": "https://accounts.google.com"})
        return body, _headers(forged, msg)
    if token == "a token of the emulator's key with no issuer":
        return body, _headers(tokens.token({k: v for k, v in claims.items() if k != "iss"}), msg)
    if token.startswith("a token of its own key"):
        own = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        kid = tokens.kid if token.endswith("under the emulator's key id") else "a-forgers-key"
        return body, _headers(jwt.encode(claims, own, algorithm="RS256", headers={"kid": kid}), msg)
    if token == "an HS256 token keyed with the JWKS's public key":
        [key] = cast("list[dict[str, object]]", tokens.jwks()["keys"])
        public = json.dumps(key).encode()
        forged = _hs256(claims, public, tokens.kid)
        return body, _headers(forged, msg)
    if token == "a project endpoint's HMAC signature":
        secret = b"a secret this receiver was never given"
        stamp = str(int(now))
        mac = hmac.new(secret, f"{msg}.{stamp}.".encode() + body, hashlib.sha256).digest()
        return body, _headers(f"v1,{base64.b64encode(mac).decode()}", msg)
    raise AssertionError(f"no such token: {token}")


def _hs256(claims: dict[str, object], key: bytes, kid: str) -> str:
    """An HS256 token keyed with `key`, built by hand: pyjwt itself refuses to use a public key as an HMAC secret."""

    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    head = f"{part({'alg': 'HS256', 'typ': 'JWT', 'kid': kid})}.{part(claims)}"
    mac = hmac.new(key, head.encode(), hashlib.sha256).digest()
    return f"{head}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
