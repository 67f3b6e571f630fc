"""Pure translations between lowtide's types and Anthropic's: request -> Messages params, message -> response,
batch result line -> outcome, SDK exception -> `ActorError`. No I/O here."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, cast

import anthropic
import httpx2
from anthropic import transform_schema
from anthropic.types import Message
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages.batch_create_params import Request as BatchEntry
from pydantic import BaseModel

from lowtide.batching.backend import Settled
from lowtide.core.custom_ids import CustomIdParts, ledger_custom_id, parts_of_ledger_custom_id
from lowtide.core.json_types import json_object, json_objects
from lowtide.core.modes import MODE_TEXT, BatchProcessingMode
from lowtide.core.parameters import with_extra_params
from lowtide.cost.priced import PriceCache, Priced
from lowtide.cost.pricing import cost_of
from lowtide.cost.usage_shape import UsageShape
from lowtide.errors import (
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchRequestUnreadable,
    ConfigurationError,
    OverloadedError,
)
from lowtide.messages.answers import Answer, TextAnswer, answer_of, response_of, text_alone
from lowtide.messages.content import check_image_types
from lowtide.messages.structured import json_text, parse_response
from lowtide.providers.anthropic.options import PROVIDER_NAME
from lowtide.providers.anthropic.parameters import check_parameters
from lowtide.providers.anthropic.rules import CONTENT, CUSTOM_IDS, ERROR_KINDS, RETRYABLE_ERROR_TYPES, USAGE
from lowtide.providers.sdk_errors import SdkErrors, StatusError, seconds_of, translating
from lowtide.types import (
    ActorRequest,
    ActorResponse,
    ProviderIds,
    Usage,
)

__all__ = [
    "ANTHROPIC",
    "CUSTOM_ID_PATTERN",
    "PROVIDER_NAME",
    "SDK_ERRORS",
    "BatchEntry",
    "MessagesDialect",
    "answer_and_json",
    "batch_entry",
    "check_custom_id",
    "cites_documents",
    "custom_id_for",
    "custom_id_parts",
    "json_text",
    "line_outcome",
    "parse_response",
    "status_error_of",
    "to_batch_request",
    "to_message_params",
    "to_response",
    "translate_errors",
]

CUSTOM_ID_PATTERN = CUSTOM_IDS.pattern


def status_error_of(exc: anthropic.APIStatusError) -> StatusError:
    """What an SDK status error says: its status, the API's message and type, its request id, the wait it asks for."""
    return StatusError(
        exc.status_code,
        exc.api_message or exc.message,
        request_id=exc.request_id,
        error_type=exc.type,
        retry_after=seconds_of(exc.response.headers.get("retry-after")),
    )


SDK_ERRORS = SdkErrors(
    client="Anthropic",
    api="API",
    status=anthropic.APIStatusError,
    read_status=status_error_of,
    connection=anthropic.APIConnectionError,
    base=anthropic.AnthropicError,
    timeout=anthropic.APITimeoutError,
    broken=(httpx2.TransportError,),
    by_type={"overloaded_error": OverloadedError},
)
"""The Anthropic SDK's exceptions, as `translating` reads them: an `overloaded_error` is overloaded, whatever its
status."""


@dataclass(frozen=True, eq=False)
class MessagesDialect:
    """Who answers in Anthropic's Messages shapes: the provider named on its answers, and how their usage is priced
    (Anthropic's API; Claude on Vertex AI at Vertex's prices, `providers/vertex_claude`)."""

    provider: str
    usage: UsageShape
    errors: SdkErrors[anthropic.APIStatusError, anthropic.APIConnectionError] = SDK_ERRORS
    """How its SDK's exceptions read (Vertex AI's errors are Google's shape)."""
    prices: PriceCache = field(default_factory=PriceCache)
    """Each usage its answers report priced once (a dialect's own: the same usage costs what its provider says)."""


ANTHROPIC = MessagesDialect(PROVIDER_NAME, USAGE)

# In the order the API documents them; Anthropic's own (`top_k`, `thinking`, `cache_control`) come from
# `check_parameters` (the request's Anthropic settings), the rest from the neutral request.
_OPTIONAL_PARAMS = ("temperature", "top_p", "top_k", "metadata", "thinking", "tool_choice", "cache_control")


def to_message_params(request: ActorRequest) -> dict[str, Any]:
    """The Messages API parameters for `request`, identical for a live call and a batch entry; what the API would
    refuse of its parameters raises `ConfigurationError` naming the field."""
    settings = check_parameters(request)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [message.model_dump() for message in request.messages],
    }
    if any(not isinstance(message.content, str) for message in request.messages):
        check_image_types(params["messages"], CONTENT)
    if request.system is not None:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [tool.model_dump(exclude_none=True) for tool in request.tools]
    if request.stop_sequences:
        params["stop_sequences"] = list(request.stop_sequences)
    for name in _OPTIONAL_PARAMS:
        value = settings.get(name) if name in settings else getattr(request, name, None)
        if value is not None:
            params[name] = value
    output_config = dict(settings.get("output_config") or {})
    if request.response_model is not None and cites_documents(params["messages"]):
        # The API refuses citations together with structured outputs: the schema goes in the system prompt instead.
        params["system"] = _with_json_instruction(request.system, request.response_model)
    elif request.response_model is not None:
        output_config["format"] = {"type": "json_schema", "schema": transform_schema(request.response_model)}
    if output_config:
        params["output_config"] = output_config
    return with_extra_params(params, request.extra_params)


_JSON_INSTRUCTION = (
    "Answer only with one JSON value that is an instance of the JSON schema below, with no other text; quote the "
    "documents in its string values, and cite them there too."
)


def cites_documents(messages: Sequence[Mapping[str, object]]) -> bool:
    """Whether any document of the conversation (tool results included) has citations enabled."""
    for message in messages:
        for block in json_objects(message.get("content")):
            nested = json_objects(block.get("content")) if block.get("type") == "tool_result" else []
            if any(_cited(item) for item in [block, *nested]):
                return True
    return False


def _cited(block: Mapping[str, object]) -> bool:
    enabled = json_object(block.get("citations")).get("enabled")
    return block.get("type") == "document" and enabled is True


def _with_json_instruction(
    system: str | Sequence[Mapping[str, object]] | None, model: type[BaseModel]
) -> str | list[Mapping[str, object]]:
    """`system` followed by the instruction to answer an instance of `model`'s JSON schema, in `<json_schema>` tags."""
    schema = json.dumps(model.model_json_schema(), ensure_ascii=False)
    instruction = f"{_JSON_INSTRUCTION}\n<json_schema>\n{schema}\n</json_schema>"
    if system is None:
        return instruction
    if isinstance(system, str):
        return f"{system}\n\n{instruction}"
    return [*system, {"type": "text", "text": instruction}]


def check_custom_id(custom_id: str) -> str:
    if not CUSTOM_ID_PATTERN.fullmatch(custom_id):
        raise ConfigurationError(
            f"custom_id {custom_id!r} is invalid: use 1 to 64 letters, digits, '_' or '-'", field="custom_id"
        )
    return custom_id


def to_batch_request(custom_id: str, request: ActorRequest) -> BatchEntry:
    return batch_entry(custom_id, to_message_params(request))


def batch_entry(custom_id: str, params: Mapping[str, object]) -> BatchEntry:
    # `params` come from `to_message_params` (now or before a restart, through the ledger): the Messages API's
    # parameter shape, built from validated fields. The SDK's TypedDict cannot see that through a dynamically
    # built dict, hence the cast at the one place the shape is declared.
    return {"custom_id": check_custom_id(custom_id), "params": cast("MessageCreateParamsNonStreaming", params)}


def custom_id_for(key: str, ledger: str | None) -> str:
    """The `custom_id` a keyed request carries in the ledger whose identity is `ledger`: the key and the ledger's
    identity, `<key>_<ledger>`, when the API allows it (1 to 64 letters, digits, `_` or `-`), else `k-` and a digest of
    both, which no such id can equal. Outside any ledger (None), the key itself, or a digest of it."""
    return ledger_custom_id(key, ledger, plain=CUSTOM_ID_PATTERN, hashed="k-", digits=40)


def custom_id_parts(custom_id: str) -> CustomIdParts | None:
    """`custom_id_for` read back: the key and ledger of a plain id, `HASHED` for a digest, None for another's id."""
    return parts_of_ledger_custom_id(custom_id, plain=CUSTOM_ID_PATTERN, hashed="k-", digits=40)


def to_response(
    message: Message,
    *,
    mode: BatchProcessingMode,
    ids: ProviderIds,
    response_model: type[BaseModel] | None = None,
    dialect: MessagesDialect = ANTHROPIC,
) -> ActorResponse[object]:
    """Map an API `Message` to an `ActorResponse`, priced at `mode`'s rates and parsed into `response_model`.

    Raises `StructuredOutputError` (carrying the response) when the answer does not fit `response_model`.
    """
    answer, _ = answer_and_json(
        message.model_dump(mode="json", exclude_none=True),
        mode=mode,
        ids=ids.model_dump(exclude={"message_id"}),
        dialect=dialect,
    )
    response = response_of(answer)
    return response if response_model is None else parse_response(response, response_model)


_MODELLED_BLOCKS = ("text", "tool_use", "thinking")


def answer_and_json(
    message: Mapping[str, object],
    *,
    mode: BatchProcessingMode,
    ids: Mapping[str, str | None],
    dialect: MessagesDialect = ANTHROPIC,
) -> tuple[Answer, dict[str, object]]:
    """An API message, as JSON, as an answer (a `TextAnswer` when it is text alone, else a validated
    `ActorResponse`), and that answer in the form the ledger stores it. `ids` are the answer's batch id, custom id
    and request id; the message gives its own id.

    Batch results arrive by the thousand, so this works on the JSON as received rather than on SDK models, and
    reads what nearly every answer is (one text block, `_one_text`) without the general walk over its blocks.
    The usage and cost of a distinct usage are built once and shared (frozen) by the responses that report it.
    """
    content = message.get("content")
    text = _one_text(content)
    if text is not None:
        blocks = cast("list[Mapping[str, object]]", content)
        alone = True
    else:
        blocks = json_objects(content)
        alone = text_alone(blocks)
        text = "".join(
            [part for block in blocks if block.get("type") == "text" and isinstance(part := block["text"], str)]
        )
    model = sys.intern(str(message.get("model", "")))
    stop_reason = message.get("stop_reason")
    stop_sequence = message.get("stop_sequence")
    message_id = message.get("id")
    priced = _priced(dialect, model, mode, json_object(message.get("usage")))
    stored: dict[str, object] = {
        "text": text,
        # Blocks lowtide does not model are kept whole rather than dropped.
        "content": blocks if alone else [_shaped(block) for block in blocks],
        "stop_reason": sys.intern(stop_reason) if isinstance(stop_reason, str) else stop_reason,
        "stop_sequence": stop_sequence,
        "model": model,
        "provider": dialect.provider,
        "ids": {**ids, "message_id": message_id},
        "usage": priced.usage_json,
        "cost": priced.cost_json,
        "mode": MODE_TEXT[mode],
    }
    if (
        alone
        and (message_id is None or isinstance(message_id, str))
        and (stop_reason is None or isinstance(stop_reason, str))
        and (stop_sequence is None or isinstance(stop_sequence, str))
        and len(ids) == len(_IDS)
        and _IDS.issuperset(ids)
    ):
        # What `answer_of` would check and hold, checked here: its ids are strings or null by their type.
        return TextAnswer(stored, usage=priced.usage, cost=priced.cost, mode=mode), stored
    answer = answer_of(stored, text_alone=alone, usage=priced.usage, cost=priced.cost, mode=mode)
    return answer, stored


_IDS = frozenset(("batch_id", "custom_id", "request_id"))
"""The ids a caller of `answer_and_json` gives (the message gives the fourth)."""


def _one_text(content: object) -> str | None:
    """The text of content that is one text block (`type`, a string `text`, and `citations` null if any), as nearly
    every answer's is; None for anything else (which `text_alone` and the general walk read)."""
    if type(content) is not list or len(cast("list[object]", content)) != 1:
        return None
    block = cast("list[object]", content)[0]
    if type(block) is not dict:
        return None
    fields = cast("dict[str, object]", block)
    text = fields.get("text")
    if type(text) is not str or fields.get("type") != "text":
        return None
    size = len(fields)
    if size == 2 or (size == 3 and "citations" in fields and fields["citations"] is None):
        return text
    return None


def _shaped(block: Mapping[str, object]) -> Mapping[str, object]:
    return block if block.get("type") in _MODELLED_BLOCKS else _other_block(block)


def _other_block(block: Mapping[str, object]) -> dict[str, object]:
    return {"type": str(block.get("type")), "data": {name: value for name, value in block.items() if value is not None}}


def _priced(dialect: MessagesDialect, model: str, mode: BatchProcessingMode, usage: Mapping[str, object]) -> Priced:
    found = dialect.prices.get(usage, model, mode)
    return found if found is not None else _price_anew(dialect, model, mode, usage)


def _price_anew(dialect: MessagesDialect, model: str, mode: BatchProcessingMode, usage: Mapping[str, object]) -> Priced:
    """A usage not seen yet, priced and kept (its closure made here, not for every answer)."""
    return dialect.prices.priced(usage, model, mode, make=lambda: _price_usage(dialect, model, mode, usage))


def _price_usage(
    dialect: MessagesDialect, model: str, mode: BatchProcessingMode, usage: Mapping[str, object]
) -> Priced:
    raw = _without_none(usage)
    counted = Usage.model_validate({name: raw.get(name) or 0 for name in _COUNTS})
    return Priced.of(counted, cost_of(raw, model, mode=mode, provider=dialect.usage))


_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _without_none(value: Mapping[str, object]) -> dict[str, object]:
    return {
        name: _without_none(cast("Mapping[str, object]", item)) if isinstance(item, dict) else item
        for name, item in value.items()
        if item is not None
    }


def line_outcome(
    line: Mapping[str, object],
    *,
    batch_id: str,
    request_id: str | None = None,
    dialect: MessagesDialect = ANTHROPIC,
) -> tuple[Settled, dict[str, object] | None]:
    """One results line (as JSON) as what the request settled as: its answer (with the response as the ledger stores
    it), or the error that belongs to that request alone. `request_id` is that of the call that created the batch: the
    id Anthropic support asks for."""
    result = json_object(line.get("result"))
    custom_id = str(line.get("custom_id"))
    kind = result.get("type")
    if kind == "succeeded":
        ids = {"batch_id": batch_id, "custom_id": custom_id, "request_id": request_id}
        return answer_and_json(
            json_object(result.get("message")), mode=BatchProcessingMode.BATCH, ids=ids, dialect=dialect
        )
    if kind == "errored":
        response = json_object(result.get("error"))
        error = json_object(response.get("error"))
        error_type = str(error.get("type"))
        # The run's own id (`workerreq_...`); null for a request the API's validation refused before it ran.
        run_id = response.get("request_id")
        return BatchRequestErrored(
            batch_id=batch_id,
            custom_id=custom_id,
            error_type=error_type,
            api_message=str(error.get("message")),
            retryable=error_type in RETRYABLE_ERROR_TYPES,
            kind=ERROR_KINDS.get(error_type),
            request_id=run_id if isinstance(run_id, str) else None,
        ), None
    if kind == "canceled":
        return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id), None
    if kind == "expired":
        return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id), None
    # A result type newer than this code: kept as it came, for a later lowtide to read.
    return BatchRequestUnreadable(
        batch_id=batch_id,
        custom_id=custom_id,
        raw_line=json.dumps(line, ensure_ascii=False, separators=(",", ":")),
        reason=f"a result of unknown type {kind!r}; a newer lowtide may read it",
    ), None


def translate_errors(dialect: MessagesDialect = ANTHROPIC) -> AbstractContextManager[None]:
    """Re-raise every SDK exception as the matching `ActorError`, keeping status code and request id."""
    return translating(dialect.errors)
