"""Whether the account serves the model a request names, asked of the Bedrock control plane before anything is
recorded or sent (`model_names`: once per model, endpoint and credentials in a process; an unknown name refused with
the closest names the account lists). A foundation model's id is looked up by `GetFoundationModel`, a cross-region
inference profile's (`us.anthropic.claude-...`, led by a geography) by `GetInferenceProfile`; an ARN (a provisioned,
custom or imported model, or a profile of the account's own) is left to the API. Where the control plane cannot say
(credentials allowed `bedrock:InvokeModel` alone: 403; no network), the check is skipped, said once, and the call goes
on.

Whether the model reads images is Bedrock's word too: its `inputModalities` (`GetFoundationModel`; a profile's by its
first model), asked once per model, endpoint and credentials, and only for a request that holds an image
(`check_images`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from lowtide.errors import APIError, ConfigurationError, InvalidRequestError, NotFoundError
from lowtide.messages.content import first_image
from lowtide.providers.asked import AskedOnce
from lowtide.providers.bedrock.client import AwsClients, Json, call
from lowtide.providers.bedrock.errors import translate_errors
from lowtide.providers.model_names import model_names
from lowtide.types import ActorRequest

__all__ = ["GEOGRAPHIES", "check_images", "check_model"]

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


_MODALITIES: dict[tuple[str, str], AskedOnce[str, frozenset[str] | None]] = {}
_VISION_EXAMPLE = "anthropic.claude-haiku-4-5-20251001-v1:0"


async def check_images(clients: AwsClients, request: ActorRequest) -> None:
    """Refuse a request holding an image for a model whose `inputModalities` lack IMAGE, naming where the image is;
    left to Converse when the control plane cannot say (or the model is an ARN)."""
    where = first_image(request.messages)
    if where is None or request.model.startswith("arn:"):
        return
    asked = _MODALITIES.setdefault((clients.endpoint, clients.credential), AskedOnce())
    model = request.model
    modalities = await asked.ask(model, lambda: _modalities(clients, model), kept=lambda found: found is not None)
    if modalities is not None and "IMAGE" not in modalities:
        raise ConfigurationError(
            f"{where}: Bedrock's model {model!r} does not read images (its inputModalities are "
            f"{', '.join(sorted(modalities))}); send them to one whose inputModalities include IMAGE, such as "
            f"{_VISION_EXAMPLE!r}.",
            field=where,
        )


async def _modalities(clients: AwsClients, model: str) -> frozenset[str] | None:
    """The model's `inputModalities` as the control plane gives them; None when it cannot say."""
    control = clients.control
    try:
        with translate_errors():
            if model.partition(".")[0] in GEOGRAPHIES:
                profile: Json = await call(control.get_inference_profile, inferenceProfileIdentifier=model)
                model = _first_model(profile)
                if not model:
                    return None
            answer: Json = await call(control.get_foundation_model, modelIdentifier=model)
    except APIError:  # not allowed to ask (403), unreachable, or gone: Converse has the last word
        return None
    details: object = answer.get("modelDetails")
    found: object = cast("Json", details).get("inputModalities") if isinstance(details, Mapping) else None
    return frozenset(str(name) for name in cast("list[object]", found)) if isinstance(found, list) else None


def _first_model(profile: Json) -> str:
    """The foundation model id of a profile's first model ARN (`...:foundation-model/<id>`); "" when it has none."""
    models: object = profile.get("models")
    if not isinstance(models, list) or not models:
        return ""
    first: object = cast("list[object]", models)[0]
    arn: object = cast("Json", first).get("modelArn") if isinstance(first, Mapping) else None
    return arn.rpartition("foundation-model/")[2] if isinstance(arn, str) else ""
