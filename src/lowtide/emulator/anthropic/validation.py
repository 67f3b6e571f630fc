"""The checks the API makes on request bodies (a Messages request's params, a batch's list of requests), as
pure functions that raise `ApiError` with messages in the API's style (`field.path: what is wrong`)."""

from __future__ import annotations

import re
from typing import Any

from lowtide.emulator.anthropic.betas import check_beta_params, enabled_beta_params
from lowtide.emulator.anthropic.catalogue import ModelCatalogue
from lowtide.emulator.anthropic.message_checks import (
    MAX_CACHE_BREAKPOINTS,
    check_breakpoint_count,
    check_cache_control,
    check_messages,
    check_system,
)
from lowtide.emulator.core.documents import check_citations
from lowtide.emulator.core.errors import invalid_request, not_found
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, is_int, is_number

__all__ = [
    "COUNT_TOKENS_PARAMS",
    "KNOWN_PARAMS",
    "MAX_BATCH_REQUESTS",
    "MAX_CACHE_BREAKPOINTS",
    "MAX_OUTPUT_TOKENS",
    "validate_batch_create",
    "validate_message_params",
]

# The body keys of `POST /v1/messages` in SDK 2.11, plus the sampling knobs the API still accepts.
KNOWN_PARAMS = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "cache_control",
        "container",
        "diagnostics",
        "inference_geo",
        "metadata",
        "output_config",
        "service_tier",
        "speed",
        "stop_sequences",
        "stream",
        "system",
        "temperature",
        "thinking",
        "tool_choice",
        "tools",
        "top_k",
        "top_p",
    }
)
# The body keys of `POST /v1/messages/count_tokens`: what shapes the prompt, nothing about the output's length.
COUNT_TOKENS_PARAMS = frozenset(
    {"model", "messages", "cache_control", "output_config", "speed", "system", "thinking", "tool_choice", "tools"}
)
MAX_OUTPUT_TOKENS = 128_000
MAX_BATCH_REQUESTS = 100_000

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_EFFORTS = (None, "low", "medium", "high", "xhigh", "max")


_CATALOGUE = ModelCatalogue()


def validate_message_params(
    params: object,
    *,
    in_batch: bool = False,
    betas: frozenset[str] = frozenset(),
    count_tokens: bool = False,
    models: ModelCatalogue = _CATALOGUE,
) -> JsonObject:
    """`params` as a Messages request (or with `count_tokens`, a token count request), or the `ApiError` the API
    would answer with. `betas` are the request's `anthropic-beta` values, which enable beta-only parameters; `models`
    are the models served.

    The model is checked last: the API reports a malformed request (400) before an unknown model (404), which is
    one `models` does not serve (not in it, or retired). `max_tokens` is checked against the model's own limit.
    """
    body = as_object(params)
    if body is None:
        raise invalid_request("The request body must be a JSON object.")
    known = (COUNT_TOKENS_PARAMS if count_tokens else KNOWN_PARAMS) | enabled_beta_params(betas)
    for key in body:
        if key not in known:
            raise invalid_request(f"{key}: Extra inputs are not permitted")
    for key in ("model", "messages") if count_tokens else ("model", "max_tokens", "messages"):
        if key not in body:
            raise invalid_request(f"{key}: Field required")
    model = body["model"]
    if not isinstance(model, str):
        raise invalid_request("model: Input should be a valid string")
    max_tokens = (
        None
        if count_tokens
        else _check_max_tokens(body["max_tokens"], model, models.max_tokens(model) or MAX_OUTPUT_TOKENS)
    )
    check_messages(body["messages"])
    check_system(body.get("system"))
    tools = _check_tools(body.get("tools"))
    thinking = _check_thinking(body.get("thinking"), max_tokens)
    _check_tool_choice(body.get("tool_choice"), tools, thinking=thinking)
    _check_stop_sequences(body.get("stop_sequences"))
    _check_output_config(body.get("output_config"))
    check_citations(body)
    _check_sampling(body)
    _check_metadata(body.get("metadata"))
    _check_choices(body)
    _check_stream(body.get("stream"), in_batch=in_batch)
    check_cache_control(body.get("cache_control"), "cache_control")
    check_breakpoint_count(body)
    check_beta_params(body, betas)
    if models.serves(model) is None:
        raise not_found(f"model: {model}")
    return body


def validate_batch_create(body: object) -> list[tuple[str, JsonObject]]:
    """The `(custom_id, params)` pairs of a batch, after the checks the API makes when the batch is created.

    The params themselves are not checked here: the API validates them while processing, and a bad one comes
    back as an `errored` result rather than failing the whole batch.
    """
    payload = as_object(body)
    if payload is None:
        raise invalid_request("Invalid JSON body.")
    for key in payload:
        if key != "requests":
            raise invalid_request(f"{key}: Extra inputs are not permitted")
    if "requests" not in payload:
        raise invalid_request("requests: Field required")
    requests = as_array(payload["requests"])
    if requests is None:
        raise invalid_request("requests: Input should be a valid list")
    if not requests:
        raise invalid_request("requests: List should have at least 1 item after validation, not 0")
    if len(requests) > MAX_BATCH_REQUESTS:
        raise invalid_request(
            f"requests: List should have at most {MAX_BATCH_REQUESTS} items after validation, not {len(requests)}"
        )
    seen: set[str] = set()
    pairs: list[tuple[str, JsonObject]] = []
    for index, item in enumerate(requests):
        pairs.append(_check_batch_request(item, index, seen))
    return pairs


def _check_batch_request(item: object, index: int, seen: set[str]) -> tuple[str, JsonObject]:
    where = f"requests.{index}"
    request = as_object(item)
    if request is None:
        raise invalid_request(f"{where}: Input should be a valid dictionary")
    for key in request:
        if key not in ("custom_id", "params"):
            raise invalid_request(f"{where}.{key}: Extra inputs are not permitted")
    if "custom_id" not in request:
        raise invalid_request(f"{where}.custom_id: Field required")
    custom_id = request["custom_id"]
    if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
        raise invalid_request(f"{where}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
    if custom_id in seen:
        raise invalid_request(
            f"{where}.custom_id: Duplicate custom_id '{custom_id}'; custom_id values must be unique within a batch"
        )
    seen.add(custom_id)
    if "params" not in request:
        raise invalid_request(f"{where}.params: Field required")
    params = as_object(request["params"])
    if params is None:
        raise invalid_request(f"{where}.params: Input should be a valid dictionary")
    return custom_id, params


def _check_max_tokens(value: object, model: str, limit: int) -> int:
    if not is_int(value):
        raise invalid_request("max_tokens: Input should be a valid integer")
    assert isinstance(value, int)
    if value < 1:
        raise invalid_request("max_tokens: Input should be greater than or equal to 1")
    if value > limit:
        raise invalid_request(
            f"max_tokens: {value} > {limit}, which is the maximum allowed number of output tokens for {model}"
        )
    return value


def _check_tools(value: object) -> dict[str, JsonObject]:
    if value is None:
        return {}
    items = as_array(value)
    if items is None:
        raise invalid_request("tools: Input should be a valid list")
    tools: dict[str, JsonObject] = {}
    for index, item in enumerate(items):
        where = f"tools.{index}"
        tool = as_object(item)
        if tool is None:
            raise invalid_request(f"{where}: Input should be a valid dictionary")
        name = tool.get("name")
        if not isinstance(name, str):
            raise invalid_request(f"{where}.name: Field required")
        kind = tool.get("type")
        if kind in (None, "custom"):
            _check_custom_tool(tool, name, f"{where}.custom")
        elif not isinstance(kind, str):
            raise invalid_request(f"{where}.type: Input should be a valid string")
        check_cache_control(tool.get("cache_control"), f"{where}.cache_control")
        if name in tools:
            raise invalid_request("tools: Tool names must be unique.")
        tools[name] = tool
    return tools


def _check_custom_tool(tool: JsonObject, name: str, where: str) -> None:
    if not _TOOL_NAME.fullmatch(name):
        raise invalid_request(f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
    schema = as_object(tool.get("input_schema"))
    if schema is None:
        raise invalid_request(f"{where}.input_schema: Field required")
    if schema.get("type") != "object":
        raise invalid_request(f"{where}.input_schema.type: Input should be 'object'")


def _check_thinking(value: object, max_tokens: int | None) -> bool:
    """Whether thinking is on. Without `max_tokens` (a token count), the budget is not compared with it."""
    if value is None:
        return False
    thinking = as_object(value)
    if thinking is None:
        raise invalid_request("thinking: Input should be a valid dictionary")
    if thinking.get("display") not in (None, "summarized", "omitted"):
        raise invalid_request("thinking.display: Input should be 'summarized' or 'omitted'")
    kind = thinking.get("type")
    if kind == "disabled":
        return False
    if kind == "adaptive":
        return True
    if kind != "enabled":
        raise invalid_request("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
    budget = thinking.get("budget_tokens")
    if not is_int(budget):
        raise invalid_request("thinking.enabled.budget_tokens: Input should be a valid integer")
    assert isinstance(budget, int)
    if budget < 1024:
        raise invalid_request("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    if max_tokens is not None and budget >= max_tokens:
        raise invalid_request("`max_tokens` must be greater than `thinking.budget_tokens`.")
    return True


def _check_tool_choice(value: object, tools: dict[str, JsonObject], *, thinking: bool) -> None:
    if value is None:
        return
    choice = as_object(value)
    if choice is None:
        raise invalid_request("tool_choice: Input should be a valid dictionary")
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise invalid_request("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if kind in ("auto", "none"):
        return
    if not tools:
        raise invalid_request("tool_choice: `tool_choice` may only be specified while providing tools.")
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise invalid_request("tool_choice.tool.name: Field required")
        if name not in tools:
            raise invalid_request(f"tool_choice.tool.name: Tool '{name}' not found in `tools`.")
    if thinking:
        raise invalid_request("Thinking may not be enabled when tool_choice forces tool use.")


def _check_stop_sequences(value: object) -> None:
    if value is None:
        return
    sequences = as_array(value)
    if sequences is None:
        raise invalid_request("stop_sequences: Input should be a valid list")
    for index, sequence in enumerate(sequences):
        if not isinstance(sequence, str) or not sequence.strip():
            raise invalid_request(f"stop_sequences.{index}: stop sequences must contain non-whitespace")


def _check_output_config(value: object) -> None:
    if value is None:
        return
    config = as_object(value)
    if config is None:
        raise invalid_request("output_config: Input should be a valid dictionary")
    for key in config:
        if key not in ("effort", "format"):
            raise invalid_request(f"output_config.{key}: Extra inputs are not permitted")
    if config.get("effort") not in _EFFORTS:
        raise invalid_request("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'")
    if config.get("format") is None:
        return
    output_format = as_object(config["format"])
    if output_format is None or output_format.get("type") != "json_schema":
        raise invalid_request("output_config.format.type: Input should be 'json_schema'")
    if as_object(output_format.get("schema")) is None:
        raise invalid_request("output_config.format.schema: Field required")


def _check_sampling(body: JsonObject) -> None:
    for key in ("temperature", "top_p"):
        value: Any = body.get(key)
        if value is None:
            continue
        if not is_number(value):
            raise invalid_request(f"{key}: Input should be a valid number")
        if not 0 <= value <= 1:
            raise invalid_request(f"{key}: Input should be between 0 and 1")
    top_k: Any = body.get("top_k")
    if top_k is not None and (not is_int(top_k) or top_k < 0):
        raise invalid_request("top_k: Input should be a non-negative integer")


def _check_metadata(value: object) -> None:
    if value is None:
        return
    metadata = as_object(value)
    if metadata is None:
        raise invalid_request("metadata: Input should be a valid dictionary")
    for key in metadata:
        if key != "user_id":
            raise invalid_request(f"metadata.{key}: Extra inputs are not permitted")
    if metadata.get("user_id") is not None and not isinstance(metadata["user_id"], str):
        raise invalid_request("metadata.user_id: Input should be a valid string")


def _check_choices(body: JsonObject) -> None:
    if body.get("service_tier") not in (None, "auto", "standard_only"):
        raise invalid_request("service_tier: Input should be 'auto' or 'standard_only'")
    if body.get("speed") not in (None, "standard", "fast"):
        raise invalid_request("speed: Input should be 'standard' or 'fast'")


def _check_stream(value: object, *, in_batch: bool) -> None:
    if value is not None and not isinstance(value, bool):
        raise invalid_request("stream: Input should be a valid boolean")
    if in_batch and value:
        raise invalid_request("stream: streaming is not supported for requests in a Message Batch")
