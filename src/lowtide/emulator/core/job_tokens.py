"""The emulator's own signing key for per-job webhooks, as the Gemini API signs a job's `webhook_config` deliveries:
an RS256 JWT in the `webhook-signature` header, its audience the URL delivered to, checked against a JWKS the emulator
serves (`GET /_emulator/jwks/<emulation>`) in place of Google's. The key is made on first use, once per emulator."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

__all__ = ["ISSUER", "TOKEN_SECONDS", "JobTokens"]

ISSUER = "https://generativelanguage.googleapis.com"
"""The `iss` of the emulator's tokens: the API's address, as the real API's tokens name it."""
TOKEN_SECONDS = 300.0
"""How long a delivery's token is good for after it is signed."""


class JobTokens:
    """An RSA key pair, its public half as a JWKS, and the headers of a delivery signed with it."""

    def __init__(self) -> None:
        self.kid = f"emulator-{uuid.uuid4().hex[:12]}"
        self._key: RSAPrivateKey | None = None
        self._lock = threading.Lock()

    def _private(self) -> RSAPrivateKey:
        with self._lock:
            if self._key is None:
                from cryptography.hazmat.primitives.asymmetric import rsa

                self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            return self._key

    def jwks(self) -> dict[str, object]:
        """The JSON Web Key Set a receiver verifies the tokens with."""
        import json

        from jwt.algorithms import RSAAlgorithm

        key: dict[str, object] = json.loads(RSAAlgorithm.to_jwk(self._private().public_key()))
        return {"keys": [{**key, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def token(self, claims: Mapping[str, object]) -> str:
        """`claims` as an RS256 JWT signed with this key (its `kid` in the header)."""
        import jwt

        return jwt.encode(dict(claims), self._private(), algorithm="RS256", headers={"kid": self.kid})

    def headers(self, *, msg_id: str, at: float, audience: str) -> dict[str, str]:
        """The Standard Webhooks headers of the delivery `msg_id` to `audience` (its URL) at the Unix time `at`, its
        `webhook-signature` an RS256 JWT good for `TOKEN_SECONDS`."""
        token = self.token({"iss": ISSUER, "aud": audience, "iat": int(at), "exp": int(at + TOKEN_SECONDS)})
        return {"webhook-id": msg_id, "webhook-timestamp": str(int(at)), "webhook-signature": token,
                "content-type": "application/json"}  # fmt: skip
