"""A generateContent body read and checked as the Gemini API checks it (unknown fields, contents and parts,
generationConfig within Gemini's ranges, the model's output limit), into a `GeminiCall`: the conversation in the
Messages shape the emulator's answer generator reads (`lowtide.emulator.core.answers`), plus what only Gemini has
(its media's tokens, thinking, JSON output).

Tokens are counted as the other emulations count them (a token per four characters of text, tools and schema), an
image, PDF or file part at 258 tokens, Gemini's rate for an image."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, canonical, is_int, is_number
from lowtide.emulator.gemini.catalogue import GeminiModel
from lowtide.emulator.gemini.errors import GeminiError, invalid_argument

__all__ = ["MEDIA_TOKENS", "GeminiCall", "proto", "read_call", "read_contents"]

MEDIA_TOKENS = 258
_TOP_LEVEL = frozenset(
    {"model", "contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings",
     "cachedContent", "labels", "serviceTier"}
)  # fmt: skip
_GENERATION = frozenset(
    {"temperature", "topP", "topK", "candidateCount", "maxOutputTokens", "stopSequences", "responseMimeType",
     "responseSchema", "responseJsonSchema", "_responseJsonSchema", "thinkingConfig", "presencePenalty",
     "frequencyPenalty", "seed", "responseLogprobs", "logprobs", "responseModalities", "mediaResolution",
     "enableEnhancedCivicAnswers", "speechConfig", "imageConfig"}
)  # fmt: skip
_PART_KEYS = frozenset(
    {"text", "inlineData", "fileData", "functionCall", "functionResponse", "thought", "thoughtSignature",
     "executableCode", "codeExecutionResult", "videoMetadata", "mediaResolution", "partMetadata"}
)  # fmt: skip
_MIME_TYPES = ("text/plain", "application/json", "text/x.enum")
_SCHEMA_TYPE = re.compile(r"^[A-Z]+$")
_CAMEL = re.compile(r"_([a-z])")


@dataclass
class GeminiCall:
    """One generateContent call, read: the Messages-shaped `params` the answer generator takes, the prompt's
    `prefixes` (text characters and media tokens, in the order the model reads them: the cache's keys), and the
    settings only Gemini has."""

    model: GeminiModel
    params: JsonObject
    prefixes: list[tuple[str, int]] = field(default_factory=list[tuple[str, int]])
    media_tokens: int = 0
    thinking: bool = False
    include_thoughts: bool = False
    json_output: bool = False


def proto(value: object) -> JsonObject | None:
    """A protocol object with its fields by their JSON names: the API takes each field by its lowerCamel name or its
    proto name (`parameters_json_schema`, which the SDK sends, is `parametersJsonSchema`); values are left as they
    are (a schema's or a call's arguments' keys are the user's)."""
    mapping = as_object(value)
    if mapping is None:
        return None
    return {_CAMEL.sub(lambda match: match.group(1).upper(), key): item for key, item in mapping.items()}


def read_call(body: object, model: GeminiModel) -> GeminiCall:
    """`body` checked and read; a `GeminiError` (400 `INVALID_ARGUMENT`) naming what Gemini would refuse."""
    request = proto(body)
    if request is None:
        raise invalid_argument("Invalid JSON payload received. Expected an object.")
    _no_unknown(request, _TOP_LEVEL, "")
    config = _object(request.get("generationConfig"), "generation_config") or {}
    _no_unknown(config, _GENERATION, "generation_config.")
    max_tokens = _generation(config, model)
    params: JsonObject = {"model": model.id, "max_tokens": max_tokens}
    turns, media = read_contents(request.get("contents"))
    params["messages"] = turns
    system = _system(request.get("systemInstruction"))
    if system:
        params["system"] = system
    tools = _tools(request.get("tools"))
    if tools:
        params["tools"] = tools
        params["tool_choice"] = _tool_choice(request.get("toolConfig"))
    stops = as_array(config.get("stopSequences")) or []
    if stops:
        params["stop_sequences"] = [str(stop) for stop in stops]
    call = GeminiCall(model=model, params=params, media_tokens=media)
    schema = _response_schema(config)
    call.json_output = config.get("responseMimeType") == "application/json"
    if schema is not None:
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    thinking = proto(config.get("thinkingConfig")) or {}
    budget = thinking.get("thinkingBudget")
    call.thinking = model.thinking and budget != 0 and thinking.get("thinkingLevel") != "MINIMAL"
    call.include_thoughts = call.thinking and thinking.get("includeThoughts") is True
    if call.thinking:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget if is_int(budget) and budget > 0 else 1024}
    call.prefixes = _prefixes(params, tools, schema, turns)
    return call


def read_contents(value: object) -> tuple[list[JsonObject], int]:
    """`contents` as Messages turns (a `model` turn the assistant's, function calls as tool uses and function
    responses as tool results), and the tokens its media parts count."""
    contents = as_array(value)
    if not contents:
        raise invalid_argument("* GenerateContentRequest.contents: contents is not specified\n")
    turns: list[JsonObject] = []
    media = 0
    for index, item in enumerate(contents):
        content = proto(item)
        if content is None:
            raise invalid_argument(f"* GenerateContentRequest.contents[{index}]: must be an object\n")
        role = content.get("role", "user")
        if role not in ("user", "model", "function"):
            raise invalid_argument(
                f"Please use a valid role: user, model. (contents[{index}].role: {str(role)[:40]!r})"
            )
        parts = as_array(content.get("parts"))
        if not parts:
            raise invalid_argument(
                f"* GenerateContentRequest.contents[{index}].parts: contents.parts must not be empty.\n"
            )
        blocks: list[JsonObject] = []
        for position, piece in enumerate(parts):
            block, tokens = _part(piece, f"contents[{index}].parts[{position}]")
            media += tokens
            if block is not None:
                blocks.append(block)
        turns.append({"role": "assistant" if role == "model" else "user", "content": blocks})
    return turns, media


def _part(value: object, where: str) -> tuple[JsonObject | None, int]:
    part = proto(value)
    if part is None:
        raise invalid_argument(f"* GenerateContentRequest.{where}: must be an object\n")
    _no_unknown(part, _PART_KEYS, f"{where}.")
    if part.get("thought") is True:
        return None, 0  # thoughts of earlier turns are not read again
    if "text" in part:
        text = part["text"]
        if not isinstance(text, str):
            raise invalid_argument(f"Invalid value at '{where}.text' (TYPE_STRING), {canonical(text)[:40]}")
        return {"type": "text", "text": text}, 0
    call = proto(part.get("functionCall"))
    if call is not None:
        name = str(call.get("name", ""))
        return {"type": "tool_use", "id": str(call.get("id") or name), "name": name, "input": call.get("args") or {}}, 0
    response = proto(part.get("functionResponse"))
    if response is not None:
        name = str(response.get("name", ""))
        content = canonical(response.get("response") or {})
        return {"type": "tool_result", "tool_use_id": str(response.get("id") or name), "content": content}, 0
    for key in ("inlineData", "fileData"):
        data = proto(part.get(key))
        if data is not None:
            if not isinstance(data.get("mimeType"), str) and key == "inlineData":
                raise invalid_argument(f"* GenerateContentRequest.{where}.inline_data.mime_type: required field\n")
            return None, MEDIA_TOKENS
    if not part.keys() - {"thoughtSignature", "partMetadata"}:
        raise invalid_argument(
            f"* GenerateContentRequest.{where}.data: required oneof field 'data' must have one initialized field\n"
        )
    return None, 0


def _system(value: object) -> str:
    system = proto(value)
    if system is None:
        return ""
    texts = [
        str(part.get("text")) for part in map(as_object, as_array(system.get("parts")) or []) if part and "text" in part
    ]
    return "\n".join(texts)


def _tools(value: object) -> list[JsonObject]:
    """Function declarations as the answer generator's tools (`name`, `input_schema`); Gemini's other tools
    (search, code execution) are accepted and never called."""
    tools: list[JsonObject] = []
    for index, item in enumerate(as_array(value) or []):
        tool = proto(item) or {}
        for position, entry in enumerate(as_array(tool.get("functionDeclarations")) or []):
            declaration = proto(entry) or {}
            name = declaration.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}", name):
                raise invalid_argument(
                    f"* GenerateContentRequest.tools[{index}].function_declarations[{position}].name: Invalid function"
                    " name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores"
                    " (_), dots (.), colons (:) or dashes (-), with a maximum length of 128.\n"
                )
            schema = as_object(declaration.get("parametersJsonSchema"))
            if schema is None:
                schema = _json_schema(declaration.get("parameters") or {"type": "OBJECT", "properties": {}})
            tools.append({"name": name, "description": str(declaration.get("description", "")), "input_schema": schema})
    return tools


def _tool_choice(value: object) -> JsonObject:
    config = proto((proto(value) or {}).get("functionCallingConfig")) or {}
    mode = config.get("mode", "AUTO")
    allowed = [str(name) for name in as_array(config.get("allowedFunctionNames")) or []]
    if mode == "NONE":
        return {"type": "none"}
    if mode == "ANY":
        return {"type": "tool", "name": allowed[0]} if len(allowed) == 1 else {"type": "any"}
    if mode not in ("AUTO", "VALIDATED", "MODE_UNSPECIFIED"):
        raise invalid_argument(f"Invalid value at 'tool_config.function_calling_config.mode', \"{str(mode)[:40]}\"")
    return {"type": "auto"}


def _response_schema(config: JsonObject) -> JsonObject | None:
    schema = as_object(config.get("responseJsonSchema") or config.get("_responseJsonSchema"))
    if schema is None and "responseSchema" in config:
        schema = _json_schema(config["responseSchema"])
    if schema is not None and config.get("responseMimeType") != "application/json":
        raise invalid_argument(
            "* GenerateContentRequest.generation_config.response_mime_type: response_mime_type must be "
            "application/json when a response schema is set.\n"
        )
    return schema


def _json_schema(value: object) -> JsonObject:
    """Gemini's OpenAPI-style `Schema` (`"type": "OBJECT"`) as JSON Schema (`"type": "object"`)."""
    converted = as_object(_converted(value))
    return converted if converted is not None else {"type": "object"}


def _converted(value: object) -> Any:
    mapping = as_object(value)
    if mapping is not None:
        out: JsonObject = {}
        for key, item in mapping.items():
            if key == "type" and isinstance(item, str) and _SCHEMA_TYPE.match(item):
                out[key] = item.lower()
            elif key in ("nullable", "propertyOrdering"):
                continue
            else:
                out[key] = _converted(item)
        return out
    items = as_array(value)
    return [_converted(item) for item in items] if items is not None else value


def _generation(config: JsonObject, model: GeminiModel) -> int:
    """Check generationConfig's numbers against Gemini's ranges; the answer's token limit."""
    _range(config, "temperature", 0.0, 2.0)
    _range(config, "topP", 0.0, 1.0)
    top_k = config.get("topK")
    if top_k is not None and (not is_number(top_k) or top_k < 1):
        raise invalid_argument(f"* GenerateContentRequest.generation_config.top_k: must be at least 1, got {top_k}\n")
    count = config.get("candidateCount", 1)
    if count != 1:
        raise invalid_argument("* GenerateContentRequest.generation_config.candidate_count: only 1 is supported here\n")
    stops = as_array(config.get("stopSequences")) or []
    if len(stops) > 5:
        raise invalid_argument(
            "* GenerateContentRequest.generation_config.stop_sequences: at most 5 stop sequences are allowed\n"
        )
    mime = config.get("responseMimeType", "text/plain")
    if mime not in _MIME_TYPES:
        raise invalid_argument(
            "* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are "
            f"{', '.join(_MIME_TYPES)}, got {str(mime)[:40]}\n"
        )
    maximum = config.get("maxOutputTokens")
    if maximum is None:
        return model.output_limit
    if not is_int(maximum) or maximum < 1 or maximum > model.output_limit:
        raise invalid_argument(
            f"The specified maxOutputTokens value {maximum} is out of range: it must be from 1 (inclusive) to "
            f"{model.output_limit + 1} (exclusive)."
        )
    return maximum


def _range(config: JsonObject, name: str, low: float, high: float) -> None:
    value = config.get(name)
    if value is None:
        return
    if not is_number(value) or not low <= value <= high:
        snake = re.sub(r"([A-Z])", lambda match: "_" + match.group(1).lower(), name)
        raise invalid_argument(
            f"* GenerateContentRequest.generation_config.{snake}: {name} must be in [{low:g}, {high:g}], got {value}\n"
        )


def _object(value: object, where: str) -> JsonObject | None:
    if value is None:
        return None
    mapping = proto(value)
    if mapping is None:
        raise invalid_argument(f"Invalid JSON payload received. Expected an object for '{where}'.")
    return mapping


def _no_unknown(mapping: JsonObject, known: frozenset[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            raise GeminiError(
                400,
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where.rstrip('.')}': Cannot find field."
                if where
                else f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.',
            )


def _prefixes(
    params: JsonObject, tools: list[JsonObject], schema: JsonObject | None, turns: list[JsonObject]
) -> list[tuple[str, int]]:
    """The prompt's prefixes in reading order (tools, schema, system, each turn), each its canonical text and its
    size in characters."""
    head = canonical([tools, schema, params.get("system", "")])
    chars = len(canonical(tools)) if tools else 0
    chars += len(canonical(schema)) if schema is not None else 0
    chars += len(str(params.get("system", "")))
    prefixes = [(head, chars)]
    text = head
    for turn in turns:
        text += canonical(turn)
        for block in turn["content"]:
            kind = block.get("type")
            if kind == "text":
                chars += len(block["text"])
            elif kind == "tool_use":
                chars += len(block["name"]) + len(canonical(block["input"]))
            else:
                chars += len(str(block.get("content", "")))
        prefixes.append((text, chars))
    return prefixes
