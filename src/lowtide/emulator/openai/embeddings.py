"""`POST /v1/embeddings`: the checks OpenAI makes, and deterministic unit vectors (a pure function of the model and
the text) as floats or, as the SDK asks by default, base64 little-endian float32."""

from __future__ import annotations

import base64
import hashlib
import math
import random
import struct

from lowtide.emulator.core.jsonutil import JsonObject, as_array, is_int
from lowtide.emulator.openai.checks import check_integer, check_keys, check_model, require_object, required
from lowtide.emulator.openai.content import text_tokens
from lowtide.emulator.openai.errors import OpenAIError, invalid_type, invalid_value

__all__ = ["create_embeddings"]

_PARAMS = ("dimensions", "encoding_format", "input", "model", "user")
_DIMENSIONS = {"text-embedding-3-large": 3072}
_DEFAULT_DIMENSIONS = 1536
_MAX_INPUTS = 2048


def create_embeddings(body: object) -> JsonObject:
    """The `CreateEmbeddingResponse` for `body`, or the `OpenAIError` OpenAI answers with."""
    params = require_object(body)
    check_keys(params, _PARAMS)
    required(params, "model")
    texts = _inputs(required(params, "input"))
    encoding = params.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise invalid_value("encoding_format", encoding, ("float", "base64"))
    model = check_model(params["model"], "embedding")
    dimensions = check_integer(params.get("dimensions"), "dimensions", minimum=1)
    native = _DIMENSIONS.get(model, _DEFAULT_DIMENSIONS)
    if dimensions is not None and (model == "text-embedding-ada-002" or dimensions > native):
        raise OpenAIError(
            400, f"This model does not support specifying dimensions of {dimensions}.", param="dimensions"
        )
    size = dimensions or native
    data: list[JsonObject] = []
    for index, text in enumerate(texts):
        vector = _vector(model, text, size)
        shown: object = base64.b64encode(struct.pack(f"<{size}f", *vector)).decode() if encoding == "base64" else vector
        data.append({"object": "embedding", "index": index, "embedding": shown})
    tokens = sum(max(1, text_tokens(len(text))) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _inputs(value: object) -> list[str]:
    """Strings, or token arrays (read as their numbers' text): one vector each."""
    if isinstance(value, str):
        items: list[object] = [value]
    else:
        found = as_array(value)
        if found is None:
            raise invalid_type("input", "a string or an array", value)
        items = [found] if found and all(is_int(item) for item in found) else list(found)
    if not items or len(items) > _MAX_INPUTS:
        raise OpenAIError(
            400,
            f"Invalid 'input': expected between 1 and {_MAX_INPUTS} inputs, but got {len(items)}.",
            param="input",
            code="invalid_value",
        )
    texts: list[str] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            if not item:
                raise OpenAIError(
                    400, f"Invalid 'input[{index}]': empty string.", param=f"input[{index}]", code="invalid_value"
                )
            texts.append(item)
        else:
            tokens = as_array(item)
            if tokens is None or not tokens or not all(is_int(token) for token in tokens):
                raise invalid_type(f"input[{index}]", "a string or an array of integers", item)
            texts.append(" ".join(str(token) for token in tokens))
    return texts


def _vector(model: str, text: str, size: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(f"{model}\x1f{text}".encode()).digest()[:8], "big")
    generator = random.Random(seed)
    raw = [generator.gauss(0.0, 1.0) for _ in range(size)]
    norm = math.sqrt(sum(value * value for value in raw)) or 1.0
    # Rounded through float32, so that the float and base64 forms carry the same numbers.
    return [struct.unpack("<f", struct.pack("<f", value / norm))[0] for value in raw]
