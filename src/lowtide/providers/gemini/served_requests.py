"""A `generateContent` request body, as a client of the Gemini API (the google-genai SDK, or plain REST JSON) sends it
to `lowtide serve`, read into an actor's call: the reverse of `requests.py`. The conversation in lowtide's (the
Messages API's) blocks, function declarations as tools, the function-calling config as `tool_choice`, the generation
config's settings as the call's own (`max_tokens`, `temperature`, ...), thinking as `provider_options.gemini`, and
what lowtide has no name for (structured output's MIME type and schema, seed, penalties, safety settings) as
`extra_params` in the API's own JSON, which the SDK lays over the request it sends. Pure; a body the API would refuse,
or that lowtide serve cannot carry, raises `Refusal` (400 `INVALID_ARGUMENT`) naming the field."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import cast

from lowtide.providers import Refusal, ServedCall
from lowtide.providers.gemini.options import PROVIDER_NAME
from lowtide.providers.gemini.requests import SYNTHETIC_CALL_ID

__all__ = ["INVALID", "call_of", "invalid"]

Obj = dict[str, object]

INVALID = "INVALID_ARGUMENT"

_KNOWN = frozenset({"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings"})
_UNSERVED = {
    "cachedContent": "lowtide serve keeps no cached contents: send the whole conversation each time",
    "model": "the model is named by the path (models/{model}:generateContent)",
}
# The generation config's settings with a name in lowtide's call, and their ranges (lowest, highest, integer).
_SETTINGS: Mapping[str, tuple[str, float, float | None, bool]] = {
    "maxOutputTokens": ("max_tokens", 1, None, True),
    "temperature": ("temperature", 0, 2, False),
    "topP": ("top_p", 0, 1, False),
    "topK": ("top_k", 1, None, True),
}
# Those the API takes as they come, sent upstream so (the SDK lays `extra_params` over its request).
_PASSED = frozenset(
    {"responseMimeType", "responseJsonSchema", "responseSchema", "seed", "presencePenalty", "frequencyPenalty"}
    | {"mediaResolution", "responseModalities"}
)
_GENERATION = frozenset({*_SETTINGS, *_PASSED, "stopSequences", "candidateCount", "thinkingConfig"})
_CAMEL = re.compile(r"_([a-z0-9])")
_MODES = {"AUTO": "auto", "ANY": "any", "NONE": "none"}


_MIME_TYPES = ("text/plain", "application/json", "application/xml", "application/yaml", "text/x.enum")
"""The answer types the API writes (`responseMimeType`); another is refused inside a batch."""


def invalid(message: str) -> Refusal:
    """A body the API refuses: 400 `INVALID_ARGUMENT`."""
    return Refusal(400, INVALID, message)


def call_of(body: object, model: str, *, stream: bool) -> ServedCall:
    """The actor's call a `models/{model}:generateContent` (or `:streamGenerateContent`) body asks for."""
    if not isinstance(body, dict):
        raise invalid("Invalid JSON payload received. The request body must be a JSON object.")
    given = _object(cast("Obj", body), "body")
    for name in sorted(given):
        if name in _UNSERVED:
            raise invalid(f"{name} is not supported by lowtide serve: {_UNSERVED[name]}.")
        if name not in _KNOWN:
            raise invalid(f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.')
    contents = given.get("contents")
    if contents is not None and not isinstance(contents, list):
        raise invalid("Invalid value at 'contents': expected a list.")
    if not contents:
        raise invalid("contents is not specified: * GenerateContentRequest.contents: contents is not specified")
    arguments: Obj = {"model": model, "messages": _messages(cast("list[object]", contents))}
    system = given.get("systemInstruction")
    if system is not None:
        arguments["system"] = "\n\n".join(_texts(_object(system, "systemInstruction"), "systemInstruction"))
    extra: Obj = {}
    _tools(given, arguments)
    _generation(_object(given.get("generationConfig") or {}, "generationConfig"), arguments, extra)
    if given.get("safetySettings") is not None:
        settings = _list(given["safetySettings"], "safetySettings")
        extra["safetySettings"] = [_raw(each, f"safetySettings[{n}]") for n, each in enumerate(settings)]
    if extra:
        arguments["extra_params"] = extra
    return ServedCall(arguments=arguments, stream=stream)


def _object(value: object, where: str) -> Obj:
    """An object of the request's own structure, its fields named in lowerCamelCase: the API takes a proto field by
    its own (snake_case) name too, and the SDK sends some so (`parameters_json_schema`)."""
    return {_CAMEL.sub(lambda found: found.group(1).upper(), name): value for name, value in _raw(value, where).items()}


def _raw(value: object, where: str) -> Obj:
    """An object given as it came: a function's arguments or response, a schema."""
    if not isinstance(value, dict):
        raise invalid(f"Invalid value at '{where}': expected an object.")
    return cast("Obj", value)


def _list(value: object, where: str) -> list[object]:
    if not isinstance(value, list):
        raise invalid(f"Invalid value at '{where}': expected a list.")
    return cast("list[object]", value)


def _texts(content: Obj, where: str) -> list[str]:
    texts: list[str] = []
    for number, part in enumerate(_list(content.get("parts"), f"{where}.parts")):
        text = _object(part, f"{where}.parts[{number}]").get("text")
        if not isinstance(text, str):
            raise invalid(f"{where}.parts[{number}]: lowtide serve takes text alone here.")
        texts.append(text)
    return texts


# The conversation.


def _messages(contents: list[object]) -> list[Obj]:
    messages: list[Obj] = []
    calls: list[tuple[str, str]] = []
    """The function calls of the conversation not answered yet, (id, name), in order: a response without an id
    answers the first of its function's (Gemini answers parallel calls in their order)."""
    for index, item in enumerate(contents):
        where = f"contents[{index}]"
        content = _object(item, where)
        role = content.get("role", "user")
        if role not in ("user", "model", "function"):
            raise invalid(f"{where}.role: Please use a valid role: user, model.")
        blocks: list[Obj] = []
        for number, part in enumerate(_list(content.get("parts"), f"{where}.parts")):
            block = _block(_object(part, f"{where}.parts[{number}]"), f"{where}.parts[{number}]", calls)
            if block is not None:
                blocks.append(block)
        if not blocks:
            continue
        messages.append({"role": "assistant" if role == "model" else "user", "content": blocks})
    if not messages:
        raise invalid("contents: no content has a part lowtide serve can send (text, inline data, function calls).")
    return messages


def _block(part: Obj, where: str, calls: list[tuple[str, str]]) -> Obj | None:
    """One part as a content block; None for a part the model wrote for itself (its earlier thoughts)."""
    if part.get("thought") is True:
        return None
    if "text" in part:
        text = part["text"]
        if not isinstance(text, str):
            raise invalid(f"Invalid value at '{where}.text': expected a string.")
        return {"type": "text", "text": text}
    if "inlineData" in part:
        return _inline(_object(part["inlineData"], f"{where}.inlineData"), where)
    if "functionCall" in part:
        call = _object(part["functionCall"], f"{where}.functionCall")
        name = _name(call, f"{where}.functionCall")
        given = call.get("id")
        call_id = given if isinstance(given, str) and given else f"{SYNTHETIC_CALL_ID}{len(calls)}-{name}"
        calls.append((call_id, name))
        args = _raw(call.get("args") or {}, f"{where}.functionCall.args")
        return {"type": "tool_use", "id": call_id, "name": name, "input": args}
    if "functionResponse" in part:
        return _result(_object(part["functionResponse"], f"{where}.functionResponse"), where, calls)
    kinds = ", ".join(sorted(name for name in part if name != "thoughtSignature")) or "nothing"
    raise invalid(
        f"{where}: lowtide serve cannot send a part holding {kinds}: it carries text, inline data (images and PDFs),"
        " function calls and function responses."
    )


def _inline(data: Obj, where: str) -> Obj:
    mime = data.get("mimeType")
    encoded = data.get("data")
    if not isinstance(mime, str) or not isinstance(encoded, str):
        raise invalid(f"{where}.inlineData must give a mimeType and base64 data.")
    kind = "document" if mime == "application/pdf" else "image" if mime.startswith("image/") else None
    if kind is None:
        raise invalid(f"{where}.inlineData: lowtide serve carries images and PDFs, not {mime}.")
    return {"type": kind, "source": {"type": "base64", "media_type": mime, "data": encoded}}


def _name(holder: Obj, where: str) -> str:
    name = holder.get("name")
    if not isinstance(name, str) or not name:
        raise invalid(f"{where}.name: a function's name is required.")
    return name


def _result(response: Obj, where: str, calls: list[tuple[str, str]]) -> Obj:
    """A function's response as the `tool_result` of its call: the call with its id, else the first call of its
    function not answered yet. Its `response` object as the result's text (its `output` alone, when that is all it
    holds, as `requests.py` sends a result); one holding only an `error` is an error result."""
    name = _name(response, f"{where}.functionResponse")
    given = response.get("id")
    answered = [index for index, (call_id, _) in enumerate(calls) if call_id == given] if given else []
    if not answered:
        answered = [index for index, (_, called) in enumerate(calls) if called == name][:1]
    if not answered:
        raise invalid(
            f"{where}.functionResponse: it answers no function call of the conversation named {name!r}; a function"
            " response follows its call."
        )
    call_id, _ = calls.pop(answered[0])
    output = _raw(response.get("response") or {}, f"{where}.functionResponse.response")
    value = (
        output.get("output")
        if set(output) == {"output"}
        else output.get("error")
        if set(output) == {"error"}
        else output
    )
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    block: Obj = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    if set(output) == {"error"}:
        block["is_error"] = True
    return block


# Tools.


def _tools(given: Obj, arguments: Obj) -> None:
    tools: list[Obj] = []
    for index, item in enumerate(_list(given.get("tools") or [], "tools")):
        tool = _object(item, f"tools[{index}]")
        other = sorted(set(tool) - {"functionDeclarations"})
        if other:
            raise invalid(f"tools[{index}].{other[0]}: lowtide serve sends function declarations alone, no {other[0]}.")
        for number, declared in enumerate(_list(tool.get("functionDeclarations") or [], f"tools[{index}]")):
            tools.append(_tool(_object(declared, f"tools[{index}].functionDeclarations[{number}]")))
    if tools:
        arguments["tools"] = tools
    config = given.get("toolConfig")
    if config is not None:
        calling = _object(_object(config, "toolConfig").get("functionCallingConfig") or {}, "toolConfig")
        arguments["tool_choice"] = _choice(calling, [str(tool["name"]) for tool in tools])


def _tool(declared: Obj) -> Obj:
    name = _name(declared, "functionDeclarations")
    schema = declared.get("parametersJsonSchema")
    if schema is None and declared.get("parameters") is not None:
        schema = _json_schema(declared["parameters"])
    tool: Obj = {"name": name, "input_schema": schema if schema is not None else {"type": "object"}}
    if isinstance(declared.get("description"), str):
        tool["description"] = declared["description"]
    return tool


def _json_schema(schema: object) -> object:
    """Gemini's OpenAPI `Schema` (types in capitals, `nullable`) as the JSON schema it stands for."""
    if isinstance(schema, list):
        return [_json_schema(item) for item in cast("list[object]", schema)]
    if not isinstance(schema, dict):
        return schema
    given = cast("Obj", schema)
    out: Obj = {}
    for key, value in given.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _json_schema(inner) for name, inner in cast("Obj", value).items()}
        elif key in ("items", "anyOf"):
            out[key] = _json_schema(value)
        elif key not in ("nullable", "propertyOrdering"):
            out[key] = value
    if given.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _choice(calling: Obj, names: list[str]) -> Obj:
    mode = calling.get("mode", "AUTO")
    allowed = calling.get("allowedFunctionNames")
    if mode not in _MODES:
        raise invalid(f"toolConfig.functionCallingConfig.mode: lowtide serve takes AUTO, ANY or NONE, not {mode}.")
    if allowed is None or mode != "ANY":
        return {"type": _MODES[str(mode)]}
    chosen = [str(name) for name in _list(allowed, "toolConfig.functionCallingConfig.allowedFunctionNames")]
    if len(chosen) == 1:
        return {"type": "tool", "name": chosen[0]}
    if sorted(chosen) == sorted(names):
        return {"type": "any"}
    raise invalid(
        "toolConfig.functionCallingConfig.allowedFunctionNames: lowtide serve takes one name, or all the declared"
        " functions."
    )


# The generation config.


def _generation(config: Obj, arguments: Obj, extra: Obj) -> None:
    for name in sorted(config):
        if name not in _GENERATION:
            raise invalid(
                f"Invalid JSON payload received. Unknown name \"{name}\" at 'generation_config': Cannot find field"
                " (or not supported by lowtide serve)."
            )
    for name, (argument, lowest, highest, integer) in _SETTINGS.items():
        value = config.get(name)
        if value is None:
            continue
        if integer and isinstance(value, float) and value.is_integer():
            value = int(value)  # the SDK types topK as a float, and sends 20.0
        if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
            raise invalid(
                f"Invalid value at 'generation_config.{name}': expected {'an integer' if integer else 'a number'}."
            )
        if value < lowest or (highest is not None and value > highest):
            bounds = f"from {lowest:g} to {highest:g}" if highest is not None else f"at least {lowest:g}"
            raise invalid(f"generation_config.{name}: {value:g} is out of range: it must be {bounds}.")
        arguments[argument] = value
    count = config.get("candidateCount", 1)
    if count != 1:
        raise invalid("generation_config.candidateCount: lowtide serve answers with one candidate.")
    stops = config.get("stopSequences")
    if stops is not None:
        arguments["stop_sequences"] = _list(stops, "generation_config.stopSequences")
    passed = {name: config[name] for name in sorted(_PASSED) if config.get(name) is not None}
    mime = passed.get("responseMimeType")
    if mime is not None and mime not in _MIME_TYPES:
        raise invalid(
            "* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are "
            f"{', '.join(_MIME_TYPES)}, got {str(mime)[:40]}"
        )
    modalities = passed.get("responseModalities")
    if modalities is not None and modalities != ["TEXT"]:
        raise invalid("generation_config.responseModalities: lowtide serve answers in TEXT alone.")
    if passed:
        extra["generationConfig"] = passed
    thinking = config.get("thinkingConfig")
    if thinking is not None:
        _thinking(_object(thinking, "generation_config.thinkingConfig"), arguments, extra)


def _thinking(thinking: Obj, arguments: Obj, extra: Obj) -> None:
    """`thinkingBudget` and `includeThoughts` as the Gemini options lowtide knows; the rest (`thinkingLevel`) sent as
    it came."""
    options: Obj = {}
    if "thinkingBudget" in thinking:
        options["thinking_budget"] = thinking["thinkingBudget"]
    if "includeThoughts" in thinking:
        options["include_thoughts"] = thinking["includeThoughts"]
    rest = {name: value for name, value in thinking.items() if name not in ("thinkingBudget", "includeThoughts")}
    if options:
        arguments["provider_options"] = {PROVIDER_NAME: options}
    if rest:
        generation = cast("Obj", extra.setdefault("generationConfig", {}))
        generation["thinkingConfig"] = rest
