"""A call's `ActorRequest`: the actor's configuration's defaults, then the call's own arguments, checked before
anything is sent or paid for (`Actor.request`, and every call that builds one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ValidationError

from lowtide.calls.arguments import check_messages, check_prompt
from lowtide.calls.documents import documents_by_path
from lowtide.config.actors import ActorConfiguration
from lowtide.config.foreign_options import check_foreign_options
from lowtide.errors import ConfigurationError
from lowtide.messages.media import check_media
from lowtide.messages.unicode import check_request_text
from lowtide.types import ActorRequest, ChatMessage, ToolSpec

__all__ = ["MessagesInput", "ToolsInput", "build_request"]

_SCALARS = frozenset({"str", "int", "float", "bool", "dict"})

MessagesInput = Sequence[ChatMessage | Mapping[str, object]]
ToolsInput = Sequence[ToolSpec | Mapping[str, object]]


def build_request(
    configuration: ActorConfiguration,
    prompt: str | None,
    *,
    messages: MessagesInput | None,
    system: str | list[dict[str, object]] | None,
    tools: ToolsInput | None,
    tool_choice: Mapping[str, object] | None,
    response_model: type[BaseModel] | None,
    custom_id: str | None,
    params: Mapping[str, object],
    said_options: set[tuple[str, ...]] | None = None,
) -> ActorRequest:
    """The request a call of the actor configured by `configuration` would send; bad arguments raise
    `ConfigurationError` here, before anything is sent or paid for. `said_options`: the other providers' sections of
    `provider_options` the actor's calls already warned of (each said once)."""
    if (prompt is None) == (messages is None):
        raise ConfigurationError("Give either a prompt or messages (exactly one of them).", field="prompt")
    if prompt is not None:
        check_prompt(prompt)
    conversation: list[object] = [{"role": "user", "content": prompt}] if prompt is not None else list(messages or [])
    config = configuration
    fields: dict[str, object] = {
        "model": config.model,
        "messages": conversation,
        "max_tokens": config.max_tokens,
        "system": system if system is not None else config.system_prompt,
        "tools": list(tools or []),
        "tool_choice": tool_choice if tool_choice is not None else config.tool_choice,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "top_k": config.top_k,
        "stop_sequences": config.stop_sequences,
        "metadata": config.metadata,
        "thinking": config.thinking,
        "output_config": config.output_config,
        "cache_control": config.cache_control,
        "extra_params": dict(config.extra_params),
        "provider_options": dict(config.provider_options),
        "response_model": response_model,
        "custom_id": custom_id,
    }
    unknown = set(params) - set(ActorRequest.model_fields)
    if unknown:
        raise ConfigurationError(f"Unknown call parameter(s): {', '.join(sorted(unknown))}.", field=sorted(unknown)[0])
    fields.update(params)
    try:
        request = ActorRequest.model_validate(fields)
    except ValidationError as exc:
        where, said = _first_problem(exc)
        raise ConfigurationError(
            f"Invalid call to actor {configuration.name!r}: {where}: {said}", field=where
        ) from None
    if "provider_options" in params:  # another provider's section is ignored: said, or refused if no provider's
        check_foreign_options(request.provider_options, config.provider, config.name, said=said_options)
    if prompt is None:
        check_messages(request.messages)
        by_path = documents_by_path(request.messages)
        if by_path is not None:  # each file read and made its block now, before anything is sent
            request = request.model_copy(update={"messages": by_path})
    check_request_text(request)
    check_media(request)
    return request


def _first_problem(error: ValidationError) -> tuple[str, str]:
    """The place and words of a call's first invalid argument. Where a field takes one of several shapes (a message's
    content: a string or a list of blocks), pydantic names each shape it tried (`content.str`, `content.list[...]`),
    which the caller never wrote: the shapes' names are left out, the deepest problem said (`content.0: Input should
    be a valid dictionary`), or, when none went deeper, every shape's words at the field itself."""
    errors = error.errors()
    first = errors[0]

    def place(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
        return tuple(part for part in loc if not (isinstance(part, str) and (part in _SCALARS or "[" in part)))

    at = place(first["loc"])
    if at == first["loc"]:
        return ".".join(str(part) for part in at), first["msg"]
    same = [each for each in errors if place(each["loc"])[: len(at)] == at]
    deepest = max(same, key=lambda each: len(place(each["loc"])))
    if len(place(deepest["loc"])) > len(at):
        return ".".join(str(part) for part in place(deepest["loc"])), deepest["msg"]
    words = [each["msg"].removeprefix("Input should be ") for each in same]
    said = (
        "Input should be " + " or ".join(dict.fromkeys(words))
        if all(each["msg"].startswith("Input should be ") for each in same)
        else "; ".join(dict.fromkeys(each["msg"] for each in same))
    )
    return ".".join(str(part) for part in at), said
