"""The AWS APIs lowtide's Bedrock provider calls, as the emulator serves them on its one port: S3 (path-style, the
few object calls batch inference needs), the Bedrock control plane's batch inference jobs, and bedrock-runtime's
Converse, each told apart by what boto3 signs its calls with (`http.service_of`)."""

from collections.abc import Mapping

__all__ = ["CLIENT_ENVIRONMENT"]

CLIENT_ENVIRONMENT: Mapping[str, str | None] = {
    "AWS_ACCESS_KEY_ID": "AKIDLOWTIDEEMULATOR",
    "AWS_SECRET_ACCESS_KEY": "not-a-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_PROFILE": None,
    "AWS_ENDPOINT_URL": None,
}
"""The environment boto3 needs to call the emulator (None: unset): credentials of no meaning, since the emulator checks
no signature, found by boto3's usual chain; no instance metadata, and no profile or endpoint of the machine's."""
