"""An `ActorRequest` as the body of `POST /v1/responses` or `POST /v1/chat/completions`: the same body for a live call
and a batch line. Pure; whatever OpenAI cannot do raises `ConfigurationError` naming the field, before sending."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from lowtide.core.parameters import with_extra_params
from lowtide.messages.content import system_text
from lowtide.providers.openai.chat_limits import OPENAI_CHAT, ChatLimits
from lowtide.providers.openai.conversation import (
    apply_tool_choice,
    chat_input,
    chat_tool,
    responses_input,
    responses_tool,
)
from lowtide.providers.openai.options import Endpoint, OpenAIOptions, ReasoningOptions
from lowtide.providers.openai.parameters import check_parameters
from lowtide.providers.openai.rules import CONTENT
from lowtide.types import ActorRequest

if TYPE_CHECKING:  # the SDK's types are annotations here: building a body imports no SDK (Groq's and Together's too)
    from openai.types.chat import ChatCompletionMessageParam

__all__ = [
    "ENDPOINT_URLS",
    "Encoded",
    "encode_request",
    "schema_name",
    "strict_schema",
    "to_chat_body",
    "to_responses_body",
]

ENDPOINT_URLS: dict[Endpoint, str] = {"responses": "/v1/responses", "chat_completions": "/v1/chat/completions"}
"""The path of each endpoint, as a batch input line's `url` names it."""


@dataclass(frozen=True)
class Encoded:
    """A request as OpenAI takes it: which endpoint, and the body (JSON-ready, never holding a key)."""

    endpoint: Endpoint
    body: dict[str, Any]

    @property
    def url(self) -> str:
        return ENDPOINT_URLS[self.endpoint]


def encode_request(request: ActorRequest) -> Encoded:
    """The endpoint the request's `provider_options.openai.endpoint` picks (Responses by default), and its body;
    what OpenAI would refuse of its parameters raises `ConfigurationError` naming the field."""
    options = check_parameters(request)
    if options.endpoint == "chat_completions":
        return Encoded("chat_completions", to_chat_body(request, options))
    return Encoded("responses", to_responses_body(request, options))


def to_responses_body(request: ActorRequest, options: OpenAIOptions | None = None) -> dict[str, object]:
    """The body of `POST /v1/responses` for `request` (whose parameters `options` were checked for, if given)."""
    options = options if options is not None else check_parameters(request)
    body: dict[str, object] = {
        "model": request.model,
        "input": responses_input(request),
        "max_output_tokens": request.max_tokens,
    }
    if request.system is not None:
        body["instructions"] = system_text(request.system, rules=CONTENT)
    if request.tools:
        body["tools"] = [responses_tool(tool, index) for index, tool in enumerate(request.tools)]
    apply_tool_choice(request, body, "responses")
    text: dict[str, object] = {}
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


def to_chat_body(
    request: ActorRequest, options: OpenAIOptions | None = None, *, limits: ChatLimits = OPENAI_CHAT
) -> dict[str, object]:
    """The body of `POST /v1/chat/completions` for `request` (whose parameters `options` were checked for, if
    given); what the API cannot carry is refused in the words of `limits`."""
    options = options if options is not None else check_parameters(request)
    messages: list[ChatCompletionMessageParam] = []
    if request.system is not None:
        text = system_text(request.system, rules=CONTENT)
        messages.append(
            {"role": "developer", "content": text}
            if options.system_role == "developer"
            else {"role": "system", "content": text}
        )
    messages.extend(chat_input(request, limits))
    body: dict[str, object] = {
        "model": request.model,
        "messages": messages,
        "max_completion_tokens": request.max_tokens,
    }
    if request.stop_sequences:
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
        raise limits.refusal(
            "reasoning_summary", "gives no reasoning summaries", field="provider_options.openai.reasoning.summary"
        )
    if reasoning.effort is not None:
        body["reasoning_effort"] = reasoning.effort
    _common(request, options, body)
    return _with_extra(request, body)


def _common(request: ActorRequest, options: OpenAIOptions, body: dict[str, object]) -> None:
    """The settings both endpoints name the same way."""
    for name in ("temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.metadata is not None:
        body["metadata"] = {key: str(value) for key, value in request.metadata.items()}
    settings = options.model_dump(
        include={"service_tier", "prompt_cache_key", "prompt_cache_retention", "store", "safety_identifier"},
        exclude_none=True,
    )
    body.update(settings)


_NOT_EXTRA = {
    "stream": "lowtide reads whole answers (and a batch line cannot stream)",
    "n": "lowtide reads one answer a call",
}


def _with_extra(request: ActorRequest, body: dict[str, object]) -> dict[str, object]:
    return with_extra_params(body, request.extra_params, not_extra=_NOT_EXTRA)


# Structured output.

_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def schema_name(model: type[BaseModel]) -> str:
    """The schema's name as OpenAI takes it: letters, digits, `_` and `-`, at most 64."""
    return _NAME.sub("_", model.__name__)[:64]


def strict_schema(model: type[BaseModel]) -> dict[str, object]:
    """`model`'s JSON schema in the strict form OpenAI's structured outputs ask for (every property required, no
    others allowed), made by the SDK's own public helper."""
    import openai  # the SDK's own schema rules, loaded the first time a response model is sent

    return dict(openai.pydantic_function_tool(model)["function"].get("parameters") or {})
