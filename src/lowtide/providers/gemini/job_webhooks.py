"""The Gemini API's per-job webhooks (`webhook_config` on a batch's create, `provider_options.gemini.
batch_webhook_url`): Standard Webhooks headers whose `webhook-signature` is an RS256 JWT, verified with pyjwt against
the keys of a JWKS (Google's, published at `GOOGLE_JWKS_URL`, or the emulator's `/_emulator/jwks/gemini`), as Google's
webhooks guide says: its issuer the Gemini API (`iss`), its audience the URL the job was created to call (`aud`), not
expired (`exp`; `iat` required too). A token of another key, issuer, audience or algorithm, or an expired one, is
refused.

The token does not sign the body: a delivery whose token is right says no more than that the API sent something to
this URL. That is all lowtide takes from it: a verified event only makes it look at the job's status, through the API,
which says whether it ended (a forged body costs one status request, and changes nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from lowtide.errors import ConfigurationError
from lowtide.webhooks.events import WebhookRefused
from lowtide.webhooks.signing import check_moment

if TYPE_CHECKING:
    import jwt

__all__ = ["GOOGLE_JWKS_URL", "ISSUER", "JWKS_URL_ENV", "JobTokens", "is_token"]

JWKS_URL_ENV = "GEMINI_WEBHOOK_JWKS_URL"
"""Where the JWKS the per-job webhooks' tokens are verified with is read from, unless the actor's
`provider_options.gemini.webhook_jwks_url` names it; Google's (`GOOGLE_JWKS_URL`) when neither does."""

GOOGLE_JWKS_URL = "https://generativelanguage.googleapis.com/.well-known/jwks.json"
"""Where the Gemini API publishes the public keys its per-job webhooks' tokens are signed with."""

ISSUER = "https://generativelanguage.googleapis.com"
"""The `iss` of the Gemini API's tokens: a token signed by a key of the JWKS for anything else is not a webhook's."""

_JWKS_SECONDS = 300
"""How long the keys read are trusted before the JWKS is read again (a token of an unknown key reads it at once)."""


def is_token(signature: str) -> bool:
    """Whether a `webhook-signature` is a JWT (three base64url parts) rather than Standard Webhooks' `v1,<hmac>`s."""
    return "," not in signature and signature.count(".") == 2


class JobTokens:
    """The verifier of one receiver's per-job deliveries: the JWKS at `jwks_url`, tokens of `issuer` for `audience`
    alone."""

    def __init__(self, jwks_url: str, audience: str, *, issuer: str = ISSUER) -> None:
        try:
            import jwt
        except ImportError:
            raise ConfigurationError(
                "Gemini's per-job webhooks are verified with pyjwt: install lowtide[gemini].", field="webhooks"
            ) from None
        if not jwks_url.startswith(("https://", "http://")):
            raise ConfigurationError(f"The Gemini webhooks' JWKS address is an http(s) URL, not {jwks_url!r}.",
                                     field="webhooks")  # fmt: skip
        self._jwks: jwt.PyJWKClient = jwt.PyJWKClient(jwks_url, lifespan=_JWKS_SECONDS, timeout=10)
        self.jwks_url = jwks_url
        self.audience = audience
        self.issuer = issuer

    def verify(self, token: str, headers: Mapping[str, str], *, tolerance: float) -> str:
        """The `webhook-id` of a delivery whose `token` verifies, signed within `tolerance` s of now; `WebhookRefused`
        (401; 503 when the JWKS cannot be read, so that the API tries again) for anything else."""
        import jwt

        msg_id, stamp = headers.get("webhook-id"), headers.get("webhook-timestamp")
        if not msg_id or not stamp:
            missing = [name for name, value in (("webhook-id", msg_id), ("webhook-timestamp", stamp)) if not value]
            raise WebhookRefused(401, f"unsigned: no {', '.join(missing)} header")
        check_moment(stamp, tolerance)
        try:
            key = self._jwks.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientConnectionError:
            raise WebhookRefused(503, f"the JWKS at {self.jwks_url} could not be read: try again") from None
        except (jwt.PyJWKClientError, jwt.DecodeError):
            raise WebhookRefused(401, "the token's key is not one of the JWKS's") from None
        try:
            jwt.decode(token, key, algorithms=["RS256"], audience=self.audience, issuer=self.issuer,
                       options={"require": ["exp", "iat", "aud", "iss"]})  # fmt: skip
        except jwt.ExpiredSignatureError:
            raise WebhookRefused(401, "the token expired") from None
        except jwt.InvalidAudienceError:
            raise WebhookRefused(401, "the token is for another audience than this receiver's URL") from None
        except jwt.MissingRequiredClaimError as error:
            raise WebhookRefused(401, f"the token has no `{error.claim}` claim") from None
        except jwt.InvalidIssuerError:
            raise WebhookRefused(401, f"the token's issuer is not the Gemini API ({self.issuer})") from None
        except jwt.InvalidTokenError as error:
            raise WebhookRefused(401, f"the token does not verify: {type(error).__name__}") from None
        return msg_id
