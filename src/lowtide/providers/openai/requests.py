"""An `ActorRequest` as the body of `POST /v1/responses` or `POST /v1/chat/completions`: the same body for a live call
and a batch line. Pure; whatever OpenAI cannot do raises `ConfigurationError` naming the field, before sending."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel

from lowtide.errors import ConfigurationError
from lowtide.providers.openai.content import system_text
from lowtide.providers.openai.conversation import (
    apply_tool_choice,
    chat_input,
    chat_tool,
    responses_input,
    responses_tool,
)
from lowtide.providers.openai.options import Endpoint, OpenAIOptions, ReasoningOptions, options_of
from lowtide.types import ActorRequest

__all__ = [
    "ENDPOINT_URLS",
    "MAX_STOP_SEQUENCES",
    "MIN_OUTPUT_TOKENS",
    "Encoded",
    "encode_request",
    "schema_name",
    "strict_schema",
    "to_chat_body",
    "to_responses_body",
]

ENDPOINT_URLS: dict[Endpoint, str] = {"responses": "/v1/responses", "chat_completions": "/v1/chat/completions"}
"""The path of each endpoint, as a batch input line's `url` names it."""
MAX_STOP_SEQUENCES = 4
MIN_OUTPUT_TOKENS = 16
"""The least `max_output_tokens` the Responses API takes."""


@dataclass(frozen=True)
class Encoded:
    """A request as OpenAI takes it: which endpoint, and the body (JSON-ready, never holding a key)."""

    endpoint: Endpoint
    body: dict[str, Any]

    @property
    def url(self) -> str:
        return ENDPOINT_URLS[self.endpoint]


def encode_request(request: ActorRequest) -> Encoded:
    """The endpoint the request's `provider_options.openai.endpoint` picks (Responses by default), and its body."""
    options = options_of(request)
    if options.endpoint == "chat_completions":
        return Encoded("chat_completions", to_chat_body(request, options))
    return Encoded("responses", to_responses_body(request, options))


_REFUSED: dict[str, str] = {
    "top_k": "OpenAI has no top_k; use temperature or top_p.",
    "thinking": "OpenAI models reason by `provider_options.openai.reasoning` (effort, summary), not `thinking`.",
    "output_config": "OpenAI has no output_config: give `response_model` for structured output, and "
    "`provider_options.openai.reasoning` or `verbosity` for effort.",
    "cache_control": "OpenAI caches long prompts by itself; steer it with `provider_options.openai.prompt_cache_key` "
    "and `prompt_cache_retention` instead of cache_control.",
}


def _refuse_unsupported(request: ActorRequest) -> None:
    for name, reason in _REFUSED.items():
        if getattr(request, name) is not None:
            raise ConfigurationError(f"{name} cannot be sent to OpenAI: {reason}", field=name)


def to_responses_body(request: ActorRequest, options: OpenAIOptions | None = None) -> dict[str, Any]:
    """The body of `POST /v1/responses` for `request`."""
    options = options if options is not None else options_of(request)
    _refuse_unsupported(request)
    if request.stop_sequences:
        raise ConfigurationError(
            "stop_sequences cannot be sent to the Responses API, which has none; set "
            "`provider_options.openai.endpoint: chat_completions` to use them.",
            field="stop_sequences",
        )
    if request.max_tokens < MIN_OUTPUT_TOKENS:
        raise ConfigurationError(
            f"max_tokens is {request.max_tokens}; the Responses API needs at least {MIN_OUTPUT_TOKENS}.",
            field="max_tokens",
        )
    body: dict[str, Any] = {
        "model": request.model,
        "input": responses_input(request),
        "max_output_tokens": request.max_tokens,
    }
    if request.system is not None:
        body["instructions"] = system_text(request.system)
    if request.tools:
        body["tools"] = [responses_tool(tool, index) for index, tool in enumerate(request.tools)]
    apply_tool_choice(request, body, "responses")
    text: dict[str, Any] = {}
    if request.response_model is not None:
        text["format"] = {
            "type": "json_schema",
            "name": schema_name(request.response_model),
            "schema": strict_schema(request.response_model),
            "strict": True,
        }
    if options.verbosity is not None:
        text["verbosity"] = options.verbosity
    if text:
        body["text"] = text
    if options.reasoning is not None:
        body["reasoning"] = options.reasoning.model_dump(exclude_none=True)
    _common(request, options, body)
    return _with_extra(request, body)


def to_chat_body(request: ActorRequest, options: OpenAIOptions | None = None) -> dict[str, Any]:
    """The body of `POST /v1/chat/completions` for `request`."""
    options = options if options is not None else options_of(request)
    _refuse_unsupported(request)
    messages: list[ChatCompletionMessageParam] = []
    if request.system is not None:
        text = system_text(request.system)
        messages.append(
            {"role": "developer", "content": text}
            if options.system_role == "developer"
            else {"role": "system", "content": text}
        )
    messages.extend(chat_input(request))
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_completion_tokens": request.max_tokens,
    }
    if request.stop_sequences:
        if len(request.stop_sequences) > MAX_STOP_SEQUENCES:
            raise ConfigurationError(
                f"stop_sequences holds {len(request.stop_sequences)} sequences; Chat Completions takes at most "
                f"{MAX_STOP_SEQUENCES}.",
                field="stop_sequences",
            )
        body["stop"] = list(request.stop_sequences)
    if request.tools:
        body["tools"] = [chat_tool(tool, index) for index, tool in enumerate(request.tools)]
    apply_tool_choice(request, body, "chat_completions")
    if request.response_model is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema_name(request.response_model),
                "schema": strict_schema(request.response_model),
                "strict": True,
            },
        }
    if options.verbosity is not None:
        body["verbosity"] = options.verbosity
    reasoning = options.reasoning or ReasoningOptions()
    if reasoning.summary is not None:
        raise ConfigurationError(
            "Chat Completions gives no reasoning summaries; use the Responses endpoint for them.",
            field="provider_options.openai.reasoning.summary",
        )
    if reasoning.effort is not None:
        body["reasoning_effort"] = reasoning.effort
    _common(request, options, body)
    return _with_extra(request, body)


def _common(request: ActorRequest, options: OpenAIOptions, body: dict[str, Any]) -> None:
    """The settings both endpoints name the same way."""
    for name in ("temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.metadata is not None:
        body["metadata"] = _metadata(request.metadata)
    settings = options.model_dump(
        include={"service_tier", "prompt_cache_key", "prompt_cache_retention", "store", "safety_identifier"},
        exclude_none=True,
    )
    body.update(settings)


def _metadata(metadata: dict[str, Any]) -> dict[str, str]:
    wrong = sorted(key for key, value in metadata.items() if not isinstance(value, str))
    if wrong:
        raise ConfigurationError(
            f"OpenAI's metadata holds strings only; metadata.{wrong[0]} is not one.", field=f"metadata.{wrong[0]}"
        )
    return {key: str(value) for key, value in metadata.items()}


_NOT_EXTRA = {
    "stream": "lowtide reads whole answers (and a batch line cannot stream)",
    "n": "lowtide reads one answer a call",
}


def _with_extra(request: ActorRequest, body: dict[str, Any]) -> dict[str, Any]:
    for name, reason in _NOT_EXTRA.items():
        if name in request.extra_params:
            raise ConfigurationError(f"extra_params cannot set {name}: {reason}.", field=f"extra_params.{name}")
    clashes = set(request.extra_params) & set(body)
    if clashes:
        raise ConfigurationError(
            f"extra_params repeats parameter(s) already set: {', '.join(sorted(clashes))}", field="extra_params"
        )
    body.update(request.extra_params)
    return body


# Structured output.

_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def schema_name(model: type[BaseModel]) -> str:
    """The schema's name as OpenAI takes it: letters, digits, `_` and `-`, at most 64."""
    return _NAME.sub("_", model.__name__)[:64]


def strict_schema(model: type[BaseModel]) -> dict[str, object]:
    """`model`'s JSON schema in the strict form OpenAI's structured outputs ask for (every property required, no
    others allowed), made by the SDK's own public helper."""
    return dict(openai.pydantic_function_tool(model)["function"].get("parameters") or {})
