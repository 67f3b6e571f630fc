"""Whether the account serves the model a request names, asked of the Bedrock control plane before anything is
recorded or sent (`model_names`: once per model, endpoint and credentials in a process; an unknown name refused with
the closest names the account lists). A foundation model's id is looked up by `GetFoundationModel`, a cross-region
inference profile's (`us.anthropic.claude-...`, led by a geography) by `GetInferenceProfile`; an ARN (a provisioned,
custom or imported model, or a profile of the account's own) is left to the API. Where the control plane cannot say
(credentials allowed `bedrock:InvokeModel` alone: 403; no network), the check is skipped, said once, and the call goes
on."""

from __future__ import annotations

from collections.abc import Sequence

from lowtide.errors import InvalidRequestError, NotFoundError
from lowtide.providers.bedrock.client import AwsClients, call
from lowtide.providers.bedrock.errors import translate_errors
from lowtide.providers.model_names import model_names

__all__ = ["GEOGRAPHIES", "check_model"]

GEOGRAPHIES = frozenset({"us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"})
"""The first part of a cross-region inference profile's id."""
_INVALID = "model identifier is invalid"
"""What GetFoundationModel answers (a ValidationException) for an id the account has no model of."""


async def check_model(clients: AwsClients, model: str) -> None:
    """Refuse `model` (a `ConfigurationError` naming the closest the account lists) when the account has none."""
    if model.startswith("arn:"):
        return
    control = clients.control
    profile = model.partition(".")[0] in GEOGRAPHIES

    async def lookup(name: str) -> object:
        try:
            with translate_errors():
                if profile:
                    return await call(control.get_inference_profile, inferenceProfileIdentifier=name)
                return await call(control.get_foundation_model, modelIdentifier=name)
        except InvalidRequestError as exc:
            if _INVALID in str(exc):
                raise NotFoundError(str(exc), status_code=404) from None
            raise

    async def listing() -> Sequence[str]:
        with translate_errors():
            if not profile:
                answer = await call(control.list_foundation_models)
                return [str(summary["modelId"]) for summary in answer.get("modelSummaries", [])]
            names: list[str] = []
            token: str | None = None
            while True:
                page = await call(control.list_inference_profiles, **({"nextToken": token} if token else {}))
                names += [str(summary["inferenceProfileId"]) for summary in page.get("inferenceProfileSummaries", [])]
                token = page.get("nextToken")
                if not token:
                    return names

    owner = "Bedrock's inference profiles" if profile else "Bedrock"
    names = model_names(owner, clients.endpoint, clients.credential)
    await names.check(model, listing=listing, lookup=lookup)
