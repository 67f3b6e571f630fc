"""A request as the Gemini API's REST body (`GenerateContentRequest` in its JSON names), and back into the SDK's
`InlinedRequest`: the two shapes of one batch request. Pure.

The body is made from live mode's mapping (`requests.encode_request`, the SDK's typed dicts), so that both modes send
the same request: the SDK's own models write every field by its JSON name (`parametersJsonSchema`, inline data as
base64), the system instruction, tools, tool config and safety settings go to the top of the body, every other field
of the config into `generationConfig`, and `extra_params` are merged at the top, as the SDK merges them in a live call.
The model travels in the body as `models/<model>` (as the API's `InlinedRequest` names it). `api_version` has no
meaning per request in a batch: the client's version applies. Automatic function calling is the SDK's own and is
never sent.

That body is what the ledger stores, what a batch's JSONL file holds under `request`, and, read back through the SDK's
models (`inlined_request`), what an inline batch sends.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

import pydantic
from google.genai import types

from lowtide import ActorRequest
from lowtide.providers import JSONObject
from lowtide.providers.gemini.requests import encode_request

__all__ = ["MODEL_PREFIX", "inlined_request", "model_name", "rest_body"]

MODEL_PREFIX = "models/"
_TOP_LEVEL = {
    "systemInstruction": "systemInstruction",
    "tools": "tools",
    "toolConfig": "toolConfig",
    "safetySettings": "safetySettings",
    "cachedContent": "cachedContent",
    "labels": "labels",
}
"""Fields of the SDK's config that the REST body holds at its top, not in `generationConfig`."""
_NOT_SENT = frozenset({"httpOptions", "automaticFunctionCalling"})


def rest_body(request: ActorRequest) -> dict[str, object]:
    """`request` as the REST body of one `generateContent` call, with its model (`models/<model>`)."""
    encoded = encode_request(request)
    config = types.GenerateContentConfig.model_validate(encoded.config)
    dumped = cast("dict[str, object]", config.model_dump(mode="json", by_alias=True, exclude_none=True))
    body: dict[str, object] = {
        "model": f"{MODEL_PREFIX}{encoded.model}",
        "contents": [
            types.Content.model_validate(content).model_dump(mode="json", by_alias=True, exclude_none=True)
            for content in encoded.contents
        ],
    }
    generation: dict[str, object] = {}
    for name, value in dumped.items():
        if name in _NOT_SENT:
            continue
        if name in _TOP_LEVEL:
            body[_TOP_LEVEL[name]] = value
        else:
            generation[name] = value
    if generation:
        body["generationConfig"] = generation
    if request.extra_params:
        _merge(body, request.extra_params)
    return body


def _merge(target: dict[str, object], update: Mapping[str, object]) -> None:
    for name, value in update.items():
        held = target.get(name)
        if isinstance(held, dict) and isinstance(value, Mapping):
            _merge(cast("dict[str, object]", held), cast("Mapping[str, object]", value))
        else:
            target[name] = value


def model_name(body: Mapping[str, object]) -> str:
    """The model a REST body names, without `models/`."""
    model = body.get("model")
    if not isinstance(model, str):
        return ""
    return model.removeprefix(MODEL_PREFIX)


def inlined_request(key: str, body: JSONObject) -> types.InlinedRequest | None:
    """The REST body as the SDK's `InlinedRequest` (the key in its metadata, which the API echoes in the answer);
    None when the body holds a field the SDK's models do not know (an `extra_params` field, say): such a batch goes
    as a file, which carries the body as it is."""
    config: dict[str, object] = {}
    generation = body.get("generationConfig")
    if isinstance(generation, dict):
        config.update(generation)
    for name in _TOP_LEVEL:
        if name in body:
            config[name] = body[name]
    known = {"model", "contents", "generationConfig", *_TOP_LEVEL}
    if set(body) - known:
        return None
    payload = {"model": body.get("model"), "contents": body.get("contents"), "config": config, "metadata": {"key": key}}
    try:
        # From JSON, so that inline data is read from its base64 as the API would.
        return types.InlinedRequest.model_validate_json(json.dumps(payload))
    except pydantic.ValidationError:
        return None
