"""The provider-neutral request and response of one model call: what an actor sends and what it gets back."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from lowtide.core.modes import BatchProcessingMode

if TYPE_CHECKING:
    from lowtide.core.json_types import JSONObject
else:
    # The same JSON object, in the recursive alias pydantic can validate (json_types' is for type checkers alone).
    from pydantic import JsonValue

    JSONObject = dict[str, JsonValue]

__all__ = [
    "ActorRequest",
    "ActorResponse",
    "ChatMessage",
    "ContentBlock",
    "Cost",
    "OtherContent",
    "ProviderIds",
    "TextContent",
    "ThinkingContent",
    "ToolSpec",
    "ToolUseContent",
    "Usage",
]

ParsedT = TypeVar("ParsedT", covariant=True)
ModelT = TypeVar("ModelT", bound=BaseModel)


class ChatMessage(BaseModel):
    """One turn of the conversation; `content` is text or a list of content blocks in the Messages API's shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class ToolSpec(BaseModel):
    """A tool the model may call. Keys beyond these (`type`, `cache_control`, ...) pass through to the API."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = Field(min_length=1)
    description: str | None = None
    input_schema: dict[str, Any] | None = None


class ActorRequest(BaseModel):
    """Everything one model call needs, with the actor's defaults already applied."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int = Field(ge=1)
    system: str | list[dict[str, Any]] | None = None
    tools: list[ToolSpec] = Field(default_factory=list[ToolSpec])
    tool_choice: dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop_sequences: list[str] = Field(default_factory=list[str])
    metadata: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    cache_control: dict[str, Any] | None = None
    extra_params: dict[str, Any] = Field(default_factory=dict[str, Any])
    provider_options: dict[str, dict[str, Any]] = Field(default_factory=dict[str, dict[str, Any]])
    """Settings only one provider has, under its name; each provider checks its own and ignores the others'."""
    response_model: type[BaseModel] | None = Field(default=None, exclude=True)
    custom_id: str | None = None
    """The id this request carries inside a batch; lowtide assigns one when it is not given."""


class Usage(BaseModel):
    """Token counts as the API reported them. `input_tokens` excludes cached tokens, as in the Messages API."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


class Cost(BaseModel):
    """What a call cost in US dollars, at the price that applied, and what the other mode would have cost."""

    model_config = ConfigDict(frozen=True)

    total_usd: Decimal
    input_usd: Decimal
    output_usd: Decimal
    pricing: Literal["batch", "live"]
    live_equivalent_usd: Decimal
    """What the same tokens cost through the live API: the saving is `live_equivalent_usd - total_usd`."""
    source: str = "genai-prices"
    note: str | None = None

    @property
    def savings_usd(self) -> Decimal:
        return self.live_equivalent_usd - self.total_usd


class ProviderIds(BaseModel):
    """Ids that tie a response to the provider's records, for support requests and reconciliation."""

    model_config = ConfigDict(frozen=True)

    message_id: str | None = None
    batch_id: str | None = None
    custom_id: str | None = None
    request_id: str | None = None


class TextContent(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str
    citations: list[dict[str, Any]] | None = None


class ToolUseContent(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


class ThinkingContent(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None


class OtherContent(BaseModel):
    """A block lowtide does not model (redacted thinking, server tool results, ...), kept whole in `data`."""

    model_config = ConfigDict(frozen=True)

    type: str
    data: dict[str, Any]


def _block_tag(value: object) -> str:
    kind = cast("dict[str, object]", value).get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("text", "tool_use", "thinking") else "other"


ContentBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ToolUseContent, Tag("tool_use")]
    | Annotated[ThinkingContent, Tag("thinking")]
    | Annotated[OtherContent, Tag("other")],
    Discriminator(_block_tag),
]


class ActorResponse(BaseModel, Generic[ParsedT]):
    """The answer to one call, the same whether it came through the live API or a batch."""

    model_config = ConfigDict(frozen=True)

    text: str
    content: list[ContentBlock]
    parsed: ParsedT | None = None
    stop_reason: str | None
    stop_sequence: str | None = None
    usage: Usage
    cost: Cost | None
    model: str
    provider: str
    mode: BatchProcessingMode
    ids: ProviderIds
    provider_details: JSONObject | None = None
    """Provider-specific facts about the answer that have no neutral form (an API's safety ratings of the answer, or
    its citation metadata, say), as the provider's JSON; None when it has none (every provider that has no such
    facts). Kept in the ledger with the rest of the answer, and read back with it."""

    @property
    def tool_calls(self) -> list[ToolUseContent]:
        return [block for block in self.content if isinstance(block, ToolUseContent)]

    @property
    def thinking(self) -> str:
        return "".join(block.thinking for block in self.content if isinstance(block, ThinkingContent))


_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


def share_fields_sets(response: ActorResponse[object]) -> ActorResponse[object]:
    """Point the response, its ids and its blocks each at one shared copy of its `model_fields_set`; the response.

    pydantic gives every instance its own set of the fields it was given: 200 to 700 bytes, and one more object for
    the garbage collector to visit, per response, per block and per ids, for as long as a caller holds thousands of
    answers. These models are frozen, and pydantic copies the set before it changes it (`model_copy`), so instances
    given the same fields can share one. The providers' batch paths call this on every answer they build.
    """
    for model in (response, response.ids, *response.content):
        fields = model.__pydantic_fields_set__
        object.__setattr__(model, "__pydantic_fields_set__", _FIELDS_SETS.setdefault(frozenset(fields), fields))
    return response


_set_attribute = object.__setattr__


def built(model: type[ModelT], values: dict[str, Any], fields_set: frozenset[str]) -> ModelT:
    """An instance of `model` from `values` that already have its fields' types, without validating them again.

    What `model_construct` makes, with none of its per-field work: `values` holds every field, in the order the
    model declares them (defaults included), and the instance shares one `model_fields_set` with every other given
    the same fields (see `share_fields_sets`). For data lowtide checked itself, or in a shape it checked, on paths
    that build answers by the thousand; anything else is validated.
    """
    return built_sharing(model, values, shared_fields_set(fields_set))


def built_sharing(model: type[ModelT], values: dict[str, Any], shared: set[str]) -> ModelT:
    """`built`, given the shared `model_fields_set` itself (`shared_fields_set`, looked up once by a caller that
    builds many)."""
    instance = model.__new__(model)
    _set_attribute(instance, "__dict__", values)
    _set_attribute(instance, "__pydantic_fields_set__", shared)
    _set_attribute(instance, "__pydantic_extra__", None)
    _set_attribute(instance, "__pydantic_private__", None)
    return instance


def shared_fields_set(fields: frozenset[str]) -> set[str]:
    """The one `model_fields_set` of every instance given exactly `fields`."""
    shared = _FIELDS_SETS.get(fields)
    if shared is None:
        shared = _FIELDS_SETS[fields] = set(fields)
    return shared
