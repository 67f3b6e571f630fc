"""The emulated account's catalogue, as the Bedrock control plane lists it: its foundation models
(`GET /foundation-models`, `GET /foundation-models/{id}`) and its cross-region inference profiles (`GET
/inference-profiles`, `GET /inference-profiles/{id}`: the ids led by a geography, `us.anthropic...`), each of the
models Converse and batch jobs take here (`converse.MODELS` and the emulator's `extra_models`), with the
`inputModalities` Bedrock gives them (`lowtide.providers.bedrock.catalogue`)."""

from __future__ import annotations

from starlette.requests import Request

from lowtide.emulator.bedrock.converse import MODELS
from lowtide.emulator.bedrock.errors import not_found, validation
from lowtide.emulator.bedrock.http import region_of
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.settings import Settings
from lowtide.providers.bedrock.catalogue import input_modalities

__all__ = ["GEOGRAPHIES", "catalog_routes"]

GEOGRAPHIES = frozenset({"us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"})
"""The first part of a cross-region inference profile's id (`us.anthropic.claude-...`)."""


def _is_profile(model: str) -> bool:
    return model.partition(".")[0] in GEOGRAPHIES


class _Catalog:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def _served(self) -> list[str]:
        return [*MODELS, *(name for name in self._settings.extra_models if name not in MODELS)]

    def _model(self, model: str, region: str) -> JsonObject:
        provider = model.partition(".")[0]
        return {
            "modelArn": f"arn:aws:bedrock:{region}::foundation-model/{model}",
            "modelId": model,
            "modelName": model.partition(".")[2].partition(":")[0] or model,
            "providerName": provider,
            "inputModalities": list(input_modalities(model)),
            "outputModalities": ["TEXT"],
            "inferenceTypesSupported": ["ON_DEMAND"],
        }

    def _profile(self, profile: str, region: str) -> JsonObject:
        model = profile.partition(".")[2]
        return {
            "inferenceProfileId": profile,
            "inferenceProfileArn": f"arn:aws:bedrock:{region}::inference-profile/{profile}",
            "inferenceProfileName": profile,
            "models": [{"modelArn": f"arn:aws:bedrock:{region}::foundation-model/{model}"}],
            "status": "ACTIVE",
            "type": "SYSTEM_DEFINED",
        }

    async def models(self, request: Request) -> Answer:
        region = region_of(request.headers)
        return {"modelSummaries": [self._model(m, region) for m in self._served() if not _is_profile(m)]}

    async def model(self, request: Request) -> Answer:
        model = str(request.path_params["model"])
        if model not in self._served() or _is_profile(model):
            raise validation("The provided model identifier is invalid.")
        return {"modelDetails": self._model(model, region_of(request.headers))}

    async def profiles(self, request: Request) -> Answer:
        region = region_of(request.headers)
        return {"inferenceProfileSummaries": [self._profile(m, region) for m in self._served() if _is_profile(m)]}

    async def profile(self, request: Request) -> Answer:
        profile = str(request.path_params["profile"])
        if profile not in self._served() or not _is_profile(profile):
            raise not_found(f"The inference profile {profile} could not be found.")
        return self._profile(profile, region_of(request.headers))


def catalog_routes(settings: Settings) -> list[RouteRow]:
    catalog = _Catalog(settings)
    return [
        ("/foundation-models", "GET", "bedrock.models.list", catalog.models),
        ("/foundation-models/{model:path}", "GET", "bedrock.models.get", catalog.model),
        ("/inference-profiles", "GET", "bedrock.profiles.list", catalog.profiles),
        ("/inference-profiles/{profile:path}", "GET", "bedrock.profiles.get", catalog.profile),
    ]
