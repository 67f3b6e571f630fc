"""Who is calling: boto3 signs every call (SigV4), and the `Authorization` header's credential scope names the
service (`Credential=<key id>/<date>/<region>/<service>/aws4_request`): `s3` for S3, `bedrock` for both the control
plane and bedrock-runtime (whose signing name is `bedrock` too: their paths tell them apart). A bearer token
(`AWS_BEARER_TOKEN_BEDROCK`, which boto3 sends to Bedrock as `Authorization: Bearer`) is a Bedrock caller. Signatures
are never checked: any credentials are taken, none at all is refused."""

from __future__ import annotations

import re

from starlette.datastructures import Headers

__all__ = ["BEDROCK", "S3", "region_of", "service_of"]

S3 = "s3"
BEDROCK = "bedrock"
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/([A-Za-z0-9-]+)/([A-Za-z0-9-]+)/aws4_request")


def service_of(headers: Headers) -> str | None:
    """The service a call is signed for (`s3`, `bedrock`), None for a call with no AWS credentials."""
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer ") and authorization[7:].strip():
        return BEDROCK
    matched = _SCOPE.search(authorization) if authorization.startswith("AWS4-HMAC-SHA256") else None
    return matched.group(2) if matched else None


def region_of(headers: Headers, default: str = "us-east-1") -> str:
    """The region a call is signed for (ARNs name it)."""
    matched = _SCOPE.search(headers.get("authorization", ""))
    return matched.group(1) if matched else default
