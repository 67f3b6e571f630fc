"""A Chat Completions or Responses request body, as a client sends it to `lowtide serve`, read into an actor's call:
the conversation in lowtide's (the Messages API's) blocks, tools and tool choice, and OpenAI's own settings as
`provider_options.openai` or `extra_params`, so that `requests.py` sends them upstream as they came. Pure; a body the
API would refuse unsent raises `Refusal` (400) naming the field."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from lowtide.messages.wire import Refusal, ServedCall
from lowtide.providers.openai.options import PROVIDER_NAME, Endpoint

__all__ = ["chat_call", "responses_call"]

JSON = dict[str, Any]

# Settings lowtide models as `provider_options.openai`, and settings sent upstream as they came (`extra_params`).
_OPTIONS = ("service_tier", "prompt_cache_key", "prompt_cache_retention", "store", "safety_identifier")
_CHAT_EXTRA = (
    "response_format",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "user",
    "prediction",
    "web_search_options",
)
_RESPONSES_EXTRA = ("text", "reasoning", "include", "truncation", "user", "top_logprobs", "max_tool_calls")
_COMMON = ("model", "stream", "stream_options", "temperature", "top_p", "metadata", "tools", "tool_choice")
_CHAT_KNOWN = frozenset(
    {*_COMMON, *_OPTIONS, *_CHAT_EXTRA}
    | {"messages", "max_tokens", "max_completion_tokens", "stop", "n", "parallel_tool_calls"}
    | {"reasoning_effort", "verbosity"}
)
_RESPONSES_KNOWN = frozenset(
    {*_COMMON, *_OPTIONS, *_RESPONSES_EXTRA} | {"input", "instructions", "max_output_tokens", "parallel_tool_calls"}
)
# OpenAI's ranges of the numbers it takes: (lowest, highest or None, whether it must be an integer).
_RANGES: dict[str, tuple[float, float | None, bool]] = {
    "max_tokens": (1, None, True),
    "max_completion_tokens": (1, None, True),
    "max_output_tokens": (1, None, True),
    "temperature": (0, 2, False),
    "top_p": (0, 1, False),
    "presence_penalty": (-2, 2, False),
    "frequency_penalty": (-2, 2, False),
    "top_logprobs": (0, 20, True),
    "max_tool_calls": (1, None, True),
}
_UNSERVED = {
    "previous_response_id": "lowtide serve keeps no conversations: send the whole input each time",
    "conversation": "lowtide serve keeps no conversations: send the whole input each time",
    "prompt": "lowtide serve has no stored prompts",
    "background": "every request is answered through a batch already",
    "audio": "lowtide serve answers in text",
    "modalities": "lowtide serve answers in text",
}


def invalid(message: str, param: str | None = None, *, code: str | None = None) -> Refusal:
    return Refusal(400, "invalid_request_error", message, param=param, code=code)


def _check_numbers(given: JSON) -> None:
    """The numbers the body gives within OpenAI's ranges, refused in OpenAI's words and codes (null: left out)."""
    for name, (lowest, highest, integer) in _RANGES.items():
        value: object = given.get(name)
        if value is None:
            continue
        kind = "integer" if integer else "decimal"
        if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
            expected = "an integer" if integer else "a decimal"
            message = f"Invalid type for '{name}': expected {expected}, but got {_json_type(value)} instead."
            raise invalid(message, name, code="invalid_type")
        below = value < lowest
        if below or (highest is not None and value > highest):
            side, bound = ("below minimum", f">= {lowest:g}") if below else ("above maximum", f"<= {highest:g}")
            message = f"Invalid '{name}': {kind} {side} value. Expected a value {bound}, but got {value} instead."
            raise invalid(message, name, code=f"{kind}_{'below_min' if below else 'above_max'}_value")


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, int):
        return "an integer"
    return "an array" if isinstance(value, list) else "an object"


def _check_formats(given: JSON) -> None:
    """`stop`, and the answer's format (Chat's `response_format`, Responses' `text.format`), in the shapes OpenAI takes,
    refused in its words before a batch is made (the API would refuse them inside it)."""
    stop: object = given.get("stop")
    items = cast("list[object]", stop) if isinstance(stop, list) else None
    if stop is not None and not isinstance(stop, str) and (items is None or not all(isinstance(i, str) for i in items)):
        got = _json_type(given["stop"])
        message = f"Invalid type for 'stop': expected a string or an array of strings, but got {got} instead."
        raise invalid(message, "stop", code="invalid_type")
    for name in ("response_format", "text"):
        value = given.get(name)
        if value is None:
            continue
        if not isinstance(value, dict):
            message = f"Invalid type for '{name}': expected an object, but got {_json_type(value)} instead."
            raise invalid(message, name, code="invalid_type")
        shape = cast("JSON", value)
        where = name
        if name == "text":
            if shape.get("format") is None:
                continue
            shape, where = _object(shape.get("format"), "text.format"), "text.format"
        kind = shape.get("type")
        if kind not in ("text", "json_object", "json_schema"):
            message = (f"Invalid value: {json.dumps(kind)}. Supported values are: 'text', 'json_object', and "
                       "'json_schema'.")  # fmt: skip
            raise invalid(message, f"{where}.type", code="invalid_value")
        if kind != "json_schema":
            continue
        schema = shape.get("json_schema") if name == "response_format" else shape
        if schema is None:
            raise invalid(f"Missing required parameter: '{where}.json_schema'.", f"{where}.json_schema",
                          code="missing_required_parameter")  # fmt: skip
        inner = f"{where}.json_schema" if name == "response_format" else where
        if not isinstance(_object(schema, inner).get("name"), str):
            raise invalid(f"Missing required parameter: '{inner}.name'.", f"{inner}.name",
                          code="missing_required_parameter")  # fmt: skip


def _fields(body: object, known: frozenset[str]) -> JSON:
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.")
    given = cast("JSON", body)
    for name in sorted(given):
        if name in _UNSERVED:
            raise invalid(f"{name} is not supported by lowtide serve: {_UNSERVED[name]}.", name)
        if name not in known:
            raise invalid(f"Unrecognized request argument supplied: {name} (not supported by lowtide serve).", name)
    model = given.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("you must provide a model parameter (a non-empty string).", "model")
    if not isinstance(given.get("stream", False), bool):
        raise invalid("stream must be a boolean.", "stream")
    _check_numbers(given)
    return {name: value for name, value in given.items() if value is not None}


def _call(
    given: JSON, endpoint: Endpoint, arguments: JSON, extra_names: tuple[str, ...], options: JSON | None = None
) -> ServedCall:
    """The arguments both APIs fill alike, then the call."""
    _check_formats(given)
    arguments["model"] = given["model"]
    for name in ("temperature", "top_p", "metadata"):
        if name in given:
            arguments[name] = given[name]
    openai_options: JSON = {"endpoint": endpoint, **{name: given[name] for name in _OPTIONS if name in given}}
    arguments["provider_options"] = {PROVIDER_NAME: {**openai_options, **(options or {})}}
    extra = {name: given[name] for name in extra_names if name in given}
    if extra:
        arguments["extra_params"] = extra
    stream_options = given.get("stream_options")
    include_usage = isinstance(stream_options, dict) and cast("JSON", stream_options).get("include_usage") is True
    echo = {name: value for name, value in given.items() if name not in ("input", "messages", "stream")}
    echo["include_usage"] = include_usage
    return ServedCall(arguments=arguments, stream=bool(given.get("stream", False)), echo=echo)


def _max_tokens(given: JSON, *names: str) -> JSON:
    """The first of `names` the body gives (checked already), as the call's `max_tokens`."""
    for name in names:
        if name in given:
            return {"max_tokens": given[name]}
    return {}


# Chat Completions.


def chat_call(body: object) -> ServedCall:
    """The actor's call a `POST /v1/chat/completions` body asks for."""
    given = _fields(body, _CHAT_KNOWN)
    messages = given.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid("messages must be a non-empty list of messages.", "messages")
    if given.get("n", 1) != 1:
        raise invalid("n must be 1: lowtide serve answers with one choice.", "n")
    system: list[str] = []
    turns: list[JSON] = []
    for index, item in enumerate(cast("list[object]", messages)):
        _chat_message(_object(item, f"messages[{index}]"), f"messages[{index}]", system, turns)
    arguments: JSON = {"messages": _merged(turns), **_max_tokens(given, "max_completion_tokens", "max_tokens")}
    if system:
        arguments["system"] = "\n\n".join(system)
    stop = given.get("stop")
    if stop is not None:
        arguments["stop_sequences"] = [stop] if isinstance(stop, str) else stop
    options: JSON = {}
    if "reasoning_effort" in given:
        options["reasoning"] = {"effort": given["reasoning_effort"]}
    if "verbosity" in given:
        options["verbosity"] = given["verbosity"]
    _tools(given, arguments, _chat_tool, _chat_choice)
    return _call(given, "chat_completions", arguments, _CHAT_EXTRA, options)


def _chat_message(message: JSON, where: str, system: list[str], turns: list[JSON]) -> None:
    role = message.get("role")
    content: object = message.get("content")
    if role in ("system", "developer"):
        system.append(_chat_text(content, f"{where}.content"))
    elif role == "user":
        turns.append({"role": "user", "content": _chat_parts(content, f"{where}.content")})
    elif role == "assistant":
        blocks: list[JSON] = []
        if content is not None:
            blocks.append({"type": "text", "text": _chat_text(content, f"{where}.content")})
        for number, call in enumerate(cast("list[object]", message.get("tool_calls") or [])):
            inner = f"{where}.tool_calls[{number}]"
            entry = _object(call, inner)
            function = _object(entry.get("function"), f"{inner}.function")
            blocks.append(_tool_use(entry.get("id"), function.get("name"), function.get("arguments"), inner))
        turns.append({"role": "assistant", "content": [block for block in blocks if block.get("text") != ""]})
    elif role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise invalid(f"{where}.tool_call_id must be a string.", f"{where}.tool_call_id")
        result = {"type": "tool_result", "tool_use_id": call_id, "content": _chat_text(content, f"{where}.content")}
        turns.append({"role": "user", "content": [result]})
    else:
        raise invalid(f"{where}.role must be one of system, developer, user, assistant, tool.", f"{where}.role")


def _chat_text(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [_object(part, f"{where}[{n}]") for n, part in enumerate(cast("list[object]", content))]
        if all(part.get("type") == "text" and isinstance(part.get("text"), str) for part in parts):
            return "".join(str(part["text"]) for part in parts)
    raise invalid(f"{where} must be a string or a list of text parts.", where)


def _chat_parts(content: object, where: str) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise invalid(f"{where} must be a string or a non-empty list of parts.", where)
    blocks: list[JSON] = []
    for number, item in enumerate(cast("list[object]", content)):
        inner = f"{where}[{number}]"
        part = _object(item, inner)
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": _string(part, "text", inner)})
        elif kind == "image_url":
            blocks.append(_image(_string(_object(part.get("image_url"), f"{inner}.image_url"), "url", inner)))
        elif kind == "file":
            file = _object(part.get("file"), f"{inner}.file")
            if "file_id" in file:
                blocks.append(_document({"type": "file", "file_id": _string(file, "file_id", inner)}))
            else:
                blocks.append(_document(_base64(_string(file, "file_data", inner), inner)))
        else:
            raise invalid(f"{inner}.type {kind!r} is not supported by lowtide serve.", f"{inner}.type")
    return blocks


def _chat_tool(tool: JSON, where: str) -> JSON:
    if tool.get("type") != "function":
        raise invalid(f"{where}.type must be 'function': lowtide serve sends function tools only.", f"{where}.type")
    return _tool(_object(tool.get("function"), f"{where}.function"), where)


def _chat_choice(choice: JSON, where: str) -> str:
    return _string(_object(choice.get("function"), f"{where}.function"), "name", where)


# Responses.


def responses_call(body: object) -> ServedCall:
    """The actor's call a `POST /v1/responses` body asks for."""
    given = _fields(body, _RESPONSES_KNOWN)
    given_input = given.get("input")
    system: list[str] = []
    if isinstance(given.get("instructions"), str):
        system.append(str(given["instructions"]))
    turns: list[JSON] = []
    if isinstance(given_input, str) and given_input:
        turns.append({"role": "user", "content": [{"type": "text", "text": given_input}]})
    elif isinstance(given_input, list) and given_input:
        for index, item in enumerate(cast("list[object]", given_input)):
            _responses_item(_object(item, f"input[{index}]"), f"input[{index}]", system, turns)
    else:
        raise invalid("input must be a non-empty string or list of input items.", "input")
    arguments: JSON = {"messages": _merged(turns), **_max_tokens(given, "max_output_tokens")}
    if system:
        arguments["system"] = "\n\n".join(system)
    _tools(given, arguments, _responses_tool, _responses_choice)
    return _call(given, "responses", arguments, _RESPONSES_EXTRA)


def _responses_item(item: JSON, where: str, system: list[str], turns: list[JSON]) -> None:
    kind = item.get("type", "message")
    role = item.get("role")
    if kind == "message" and role in ("system", "developer"):
        system.append(_responses_text(item.get("content"), f"{where}.content"))
    elif kind == "message" and role in ("user", "assistant"):
        turns.append({"role": role, "content": _responses_parts(item.get("content"), f"{where}.content")})
    elif kind == "function_call":
        call = _tool_use(item.get("call_id"), item.get("name"), item.get("arguments"), where)
        turns.append({"role": "assistant", "content": [call]})
    elif kind == "function_call_output":
        call_id = _string(item, "call_id", where)
        output: object = item.get("output")
        content = output if isinstance(output, str) else _responses_parts(output, f"{where}.output")
        turns.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}]})
    elif kind == "reasoning":
        return  # the model's earlier reasoning: an upstream batch request cannot carry it back
    else:
        raise invalid(f"{where}: input items of type {kind!r} are not supported by lowtide serve.", f"{where}.type")


def _responses_text(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in _responses_parts(content, where))


def _responses_parts(content: object, where: str) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise invalid(f"{where} must be a string or a non-empty list of content parts.", where)
    blocks: list[JSON] = []
    for number, item in enumerate(cast("list[object]", content)):
        inner = f"{where}[{number}]"
        part = _object(item, inner)
        kind = part.get("type")
        if kind in ("input_text", "output_text"):
            blocks.append({"type": "text", "text": _string(part, "text", inner)})
        elif kind == "input_image" and "file_id" in part:
            blocks.append({"type": "image", "source": {"type": "file", "file_id": _string(part, "file_id", inner)}})
        elif kind == "input_image":
            blocks.append(_image(_string(part, "image_url", inner)))
        elif kind == "input_file" and "file_id" in part:
            blocks.append(_document({"type": "file", "file_id": _string(part, "file_id", inner)}))
        elif kind == "input_file" and "file_url" in part:
            blocks.append(_document({"type": "url", "url": _string(part, "file_url", inner)}))
        elif kind == "input_file":
            blocks.append(_document(_base64(_string(part, "file_data", inner), inner)))
        else:
            raise invalid(f"{inner}.type {kind!r} is not supported by lowtide serve.", f"{inner}.type")
    return blocks


def _responses_tool(tool: JSON, where: str) -> JSON:
    if tool.get("type") != "function":
        raise invalid(f"{where}.type must be 'function': lowtide serve sends function tools only.", f"{where}.type")
    return _tool(tool, where)


def _responses_choice(choice: JSON, where: str) -> str:
    return _string(choice, "name", where)


# Both.


def _tools(
    given: JSON, arguments: JSON, read_tool: Callable[[JSON, str], JSON], read_choice: Callable[[JSON, str], str]
) -> None:
    tools: object = given.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise invalid("tools must be a list of tools.", "tools")
        listed = cast("list[object]", tools)
        arguments["tools"] = [read_tool(_object(tool, f"tools[{n}]"), f"tools[{n}]") for n, tool in enumerate(listed)]
    choice: object = given.get("tool_choice")
    named: JSON | None = None
    if choice in ("auto", "none"):
        named = {"type": choice}
    elif choice == "required":
        named = {"type": "any"}
    elif isinstance(choice, dict):
        named = {"type": "tool", "name": read_choice(cast("JSON", choice), "tool_choice")}
    elif choice is not None:
        raise invalid("tool_choice must be auto, none, required, or a named function.", "tool_choice")
    if given.get("parallel_tool_calls") is False:
        named = {**(named or {"type": "auto"}), "disable_parallel_tool_use": True}
    if named is not None:
        arguments["tool_choice"] = named


def _tool(spec: JSON, where: str) -> JSON:
    tool: JSON = {"name": _string(spec, "name", where)}
    if isinstance(spec.get("description"), str):
        tool["description"] = spec["description"]
    parameters = spec.get("parameters")
    schema: JSON = {"type": "object"}
    tool["input_schema"] = _object(parameters, f"{where}.parameters") if parameters is not None else schema
    if isinstance(spec.get("strict"), bool):
        tool["strict"] = spec["strict"]
    return tool


def _tool_use(call_id: object, name: object, arguments: object, where: str) -> JSON:
    if not isinstance(call_id, str) or not isinstance(name, str) or not isinstance(arguments, str):
        raise invalid(f"{where} must give the call's id, name and arguments as strings.", where)
    try:
        parsed: object = json.loads(arguments)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise invalid(f"{where}.arguments must be a JSON object.", f"{where}.arguments")
    return {"type": "tool_use", "id": call_id, "name": name, "input": parsed}


_DATA_URL = re.compile(r"data:(?P<media>[\w.+-]+/[\w.+-]+);base64,(?P<data>.+)", re.DOTALL)


def _base64(url: str, where: str) -> JSON:
    found = _DATA_URL.fullmatch(url)
    if found is None:
        raise invalid(f"{where} must be a base64 data URL (data:<type>;base64,...).", where)
    return {"type": "base64", "media_type": found["media"], "data": found["data"]}


def _image(url: str) -> JSON:
    source = _base64(url, "image_url") if url.startswith("data:") else {"type": "url", "url": url}
    return {"type": "image", "source": source}


def _document(source: JSON) -> JSON:
    return {"type": "document", "source": source}


def _merged(turns: list[JSON]) -> list[JSON]:
    """Consecutive turns of one role as one message (tool results and a following question, say), as the Messages
    API has them."""
    merged: list[JSON] = []
    for turn in turns:
        if merged and merged[-1]["role"] == turn["role"]:
            merged[-1] = {"role": turn["role"], "content": [*merged[-1]["content"], *turn["content"]]}
        else:
            merged.append(turn)
    if not merged:
        raise invalid("The conversation holds no user or assistant message.", "messages")
    return merged


def _object(value: object, where: str) -> JSON:
    if not isinstance(value, dict):
        raise invalid(f"{where} must be an object.", where)
    return cast("JSON", value)


def _string(block: Mapping[str, Any], key: str, where: str) -> str:
    value: object = block.get(key)
    if not isinstance(value, str):
        raise invalid(f"{where}.{key} must be a string.", f"{where}.{key}")
    return value
