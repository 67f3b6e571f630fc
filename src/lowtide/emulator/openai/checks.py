"""Small checks on OpenAI request bodies, shared by the Responses, Chat Completions, Embeddings and Batches
validators; each raises the `OpenAIError` OpenAI answers with, naming the parameter as OpenAI does (`input[0].role`)."""

from __future__ import annotations

import re
from collections.abc import Collection

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, is_int, is_number
from lowtide.emulator.openai.catalogue import Kind, find, model_not_found
from lowtide.emulator.openai.errors import (
    OpenAIError,
    above_maximum,
    below_minimum,
    invalid_type,
    missing_parameter,
    unknown_parameter,
)

__all__ = [
    "check_bool",
    "check_integer",
    "check_keys",
    "check_metadata",
    "check_model",
    "check_number",
    "check_string",
    "function_schema",
    "require_object",
    "required",
]

_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_METADATA_PAIRS = 16
_METADATA_KEY = 64
_METADATA_VALUE = 512


def require_object(value: object, param: str | None = None) -> JsonObject:
    found = as_object(value)
    if found is None:
        if param is None:
            raise OpenAIError(400, "The request body must be a JSON object.")
        raise invalid_type(param, "an object", value)
    return found


def check_keys(body: JsonObject, known: Collection[str], prefix: str = "") -> None:
    for key in body:
        if key not in known:
            raise unknown_parameter(f"{prefix}{key}")


def required(body: JsonObject, key: str, prefix: str = "") -> object:
    if body.get(key) is None:
        raise missing_parameter(f"{prefix}{key}")
    return body[key]


def check_string(value: object, param: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_type(param, "a string", value)
    return value


def check_bool(value: object, param: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise invalid_type(param, "a boolean", value)
    return value


def check_integer(value: object, param: str, minimum: int | None = None, maximum: int | None = None) -> int | None:
    if value is None:
        return None
    if not is_int(value):
        raise invalid_type(param, "an integer", value)
    if minimum is not None and value < minimum:
        raise below_minimum(param, minimum, value)
    if maximum is not None and value > maximum:
        raise above_maximum(param, maximum, value)
    return value


def check_number(value: object, param: str, minimum: float, maximum: float) -> float | None:
    if value is None:
        return None
    if not is_number(value):
        raise invalid_type(param, "a decimal", value)
    if value < minimum:
        raise below_minimum(param, minimum, value, integer=False)
    if value > maximum:
        raise above_maximum(param, maximum, value, integer=False)
    return float(value)


def check_metadata(value: object, param: str = "metadata") -> dict[str, str] | None:
    """At most 16 pairs, keys of at most 64 characters, string values of at most 512."""
    if value is None:
        return None
    metadata = require_object(value, param)
    if len(metadata) > _METADATA_PAIRS:
        raise OpenAIError(
            400,
            f"Invalid '{param}': too many properties. Expected an object with at most {_METADATA_PAIRS} properties, "
            f"but got an object with {len(metadata)} properties instead.",
            param=param,
            code="object_above_max_properties",
        )
    for key, item in metadata.items():
        if len(key) > _METADATA_KEY:
            raise _too_long(f"{param}.{key[:8]}…", _METADATA_KEY, len(key))
        if not isinstance(item, str):
            raise invalid_type(f"{param}.{key}", "a string", item)
        if len(item) > _METADATA_VALUE:
            raise _too_long(f"{param}.{key}", _METADATA_VALUE, len(item))
    return {key: str(item) for key, item in metadata.items()}


def check_model(value: object, kind: Kind = "text") -> str:
    """A model of `kind` the account may use (`catalogue`), else the 404 OpenAI answers an unknown model with."""
    if not isinstance(value, str):
        raise invalid_type("model", "a string", value)
    if find(value, kind) is None:
        raise model_not_found(value)
    return value


def function_schema(name: object, parameters: object, where: str) -> JsonObject:
    """A function tool as the answer generator reads it (`name`, `input_schema`), after OpenAI's checks."""
    if name is None:
        raise missing_parameter(f"{where}.name")
    if not isinstance(name, str) or not _FUNCTION_NAME.fullmatch(name):
        raise OpenAIError(
            400,
            f"Invalid '{where}.name': string does not match pattern. Expected a string that matches the pattern "
            "'^[a-zA-Z0-9_-]+$'.",
            param=f"{where}.name",
            code="invalid_value",
        )
    schema = require_object(parameters, f"{where}.parameters") if parameters is not None else {"type": "object"}
    return {"name": name, "input_schema": schema}


def unique_names(tools: list[JsonObject], param: str) -> None:
    names = [str(tool["name"]) for tool in tools]
    for name in names:
        if names.count(name) > 1:
            raise OpenAIError(
                400, f"Invalid '{param}': duplicate function name '{name}'.", param=param, code="invalid_value"
            )


def string_list(value: object, param: str, maximum: int) -> list[str]:
    """`stop`: a string or an array of at most `maximum` strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    items = as_array(value)
    if items is None or not all(isinstance(item, str) for item in items):
        raise invalid_type(param, "a string or an array of strings", value)
    if len(items) > maximum:
        raise OpenAIError(
            400,
            f"Invalid '{param}': array too long. Expected an array with maximum length {maximum}, but got an array "
            f"with length {len(items)} instead.",
            param=param,
            code="array_above_max_length",
        )
    return [str(item) for item in items]


def _too_long(param: str, maximum: int, length: int) -> OpenAIError:
    return OpenAIError(
        400,
        f"Invalid '{param}': string too long. Expected a string with maximum length {maximum}, but got a string "
        f"with length {length} instead.",
        param=param,
        code="string_above_max_length",
    )
