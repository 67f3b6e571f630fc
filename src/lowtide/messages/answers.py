"""An answer as a batch result hands it over: an `ActorResponse`, or a `TextAnswer` that builds one when asked; and
what one request comes to (`Outcome`, `Settled`: its answer, or the error that is its alone).

Nearly every answer is text blocks alone. A batch of 100,000 brings 100,000 of them, and a bulk run holds every one
until it returns: as `ActorResponse`s that is about 1 KB each (the response, its ids, its block and their dicts), as
`TextAnswer`s about a tenth of it. The providers' batch codecs give a `TextAnswer` for an answer of that shape;
whoever needs the response builds it (`response_of`), the same one `model_validate` would give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import ActorError
from lowtide.types import (
    ActorResponse,
    Cost,
    ProviderIds,
    TextContent,
    Usage,
    built_sharing,
    share_fields_sets,
    shared_fields_set,
)

__all__ = ["Answer", "Outcome", "Settled", "TextAnswer", "answer_of", "response_of", "text_alone"]


class TextAnswer:
    """An answer of text blocks alone (no citations), with string or null ids, stop reason and sequence, held as
    its fields. `response()` builds its `ActorResponse`, anew each time it is called."""

    __slots__ = (
        "_blocks",
        "batch_id",
        "cost",
        "custom_id",
        "message_id",
        "mode",
        "model",
        "provider",
        "request_id",
        "stop_reason",
        "stop_sequence",
        "text",
        "usage",
    )

    text: str
    stop_reason: str | None
    stop_sequence: str | None
    usage: Usage
    cost: Cost | None
    model: str
    provider: str
    mode: BatchProcessingMode
    message_id: str | None
    batch_id: str | None
    custom_id: str | None
    request_id: str | None
    _blocks: bool | tuple[tuple[str, bool], ...]
    """The blocks: each block's text and whether it gave `citations` (as null); a bool alone stands for the one
    block of most answers, holding `text` (the bool says whether it gave `citations`)."""

    def __init__(
        self,
        fields: Mapping[str, Any],
        *,
        usage: Usage,
        cost: Cost | None,
        mode: BatchProcessingMode,
    ) -> None:
        """From a provider's shaped answer: `text`, `content` (each block `{"type": "text", "text": ...}`, with
        `citations` null or absent), `stop_reason`, `stop_sequence`, `model`, `provider` and `ids` (its four ids).
        The provider checks the shape; `usage` and `cost` are the answer's, already built."""
        blocks: Sequence[Mapping[str, Any]] = fields["content"]
        text: str = fields["text"]
        self._blocks = (
            "citations" in blocks[0]
            if len(blocks) == 1 and blocks[0]["text"] == text
            else tuple((block["text"], "citations" in block) for block in blocks)
        )
        self.text = text
        self.stop_reason = fields["stop_reason"]
        self.stop_sequence = fields["stop_sequence"]
        self.usage = usage
        self.cost = cost
        self.model = fields["model"]
        self.provider = fields["provider"]
        self.mode = mode
        ids: Mapping[str, str | None] = fields["ids"]
        self.message_id = ids["message_id"]
        self.batch_id = ids["batch_id"]
        self.custom_id = ids["custom_id"]
        self.request_id = ids["request_id"]

    def response(self) -> ActorResponse[object]:
        """The `ActorResponse` (built directly: the same field values, fields set and shared sets as validation
        would give, without validating again what the provider checked)."""
        blocks = self._blocks
        content: list[object]
        if isinstance(blocks, bool):  # the one block of most answers
            content = [
                built_sharing(
                    TextContent,
                    {"type": "text", "text": self.text, "citations": None},
                    _CITED_SET if blocks else _TEXT_ONLY_SET,
                )
            ]
        else:
            content = [
                built_sharing(
                    TextContent,
                    {"type": "text", "text": text, "citations": None},
                    _CITED_SET if cited else _TEXT_ONLY_SET,
                )
                for text, cited in blocks
            ]
        ids = built_sharing(
            ProviderIds,
            {
                "message_id": self.message_id,
                "batch_id": self.batch_id,
                "custom_id": self.custom_id,
                "request_id": self.request_id,
            },
            _IDS_SET,
        )
        return built_sharing(
            _RESPONSE,
            {
                "text": self.text,
                "content": content,
                "parsed": None,
                "stop_reason": self.stop_reason,
                "stop_sequence": self.stop_sequence,
                "usage": self.usage,
                "cost": self.cost,
                "model": self.model,
                "provider": self.provider,
                "mode": self.mode,
                "ids": ids,
                "provider_details": None,
            },
            _ANSWER_SET,
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextAnswer):
            return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal by value, like the response it stands for

    def __repr__(self) -> str:
        return f"TextAnswer(message_id={self.message_id!r}, custom_id={self.custom_id!r}, text={self.text[:40]!r})"


Answer = ActorResponse[object] | TextAnswer
"""An answer as a batch result gives it: built, or held as its fields until asked for."""

Outcome = ActorResponse[object] | ActorError
"""What one request of a batch came to, as its caller gets it: its response, or the error that is its alone."""

Settled = Answer | ActorError
"""What one result line comes to: an answer (an `ActorResponse`, or a `TextAnswer` that builds one when asked), or
the error that belongs to that request alone."""


def answer_of(
    stored: dict[str, Any], *, text_alone: bool, usage: Usage, cost: Cost | None, mode: BatchProcessingMode
) -> Answer:
    """The answer a provider shaped as the ledger stores it (`stored`: `text`, `content`, `stop_reason`,
    `stop_sequence`, `model`, `provider`, `ids`, and the JSON of `usage`, `cost` and `mode`), with `usage` and `cost`
    already built. Held as its fields when its blocks are text alone (the provider says: `text_alone`) and its ids,
    stop reason and sequence are strings or null; validated otherwise, as any answer from outside is."""
    ids: Mapping[str, object] = stored["ids"]
    if (
        text_alone
        and len(ids) == len(_IDS_FIELDS)
        and _IDS_FIELDS.issuperset(ids)
        and _string_or_null(ids["message_id"])
        and _string_or_null(ids["batch_id"])
        and _string_or_null(ids["custom_id"])
        and _string_or_null(ids["request_id"])
        and _string_or_null(stored["stop_reason"])
        and _string_or_null(stored["stop_sequence"])
    ):
        return TextAnswer(stored, usage=usage, cost=cost, mode=mode)
    return share_fields_sets(_RESPONSE.model_validate({**stored, "usage": usage, "cost": cost, "mode": mode}))


def text_alone(blocks: Sequence[object]) -> bool:
    """Whether an answer's blocks are text alone, as nearly every answer's are: each a dict of `type` "text", a
    string `text` and, if any, `citations` null; nothing else. (Read from the API's JSON, a provider's shaping or
    the ledger's: any may hold something else.)"""
    for block in blocks:
        if not isinstance(block, dict):
            return False
        fields = cast("dict[str, object]", block)
        if (
            fields.get("type") != "text"
            or not isinstance(fields.get("text"), str)
            or fields.get("citations") is not None
        ):
            return False
        if not _TEXT_AND_CITATIONS.issuperset(fields):
            return False
    return True


def _string_or_null(value: object) -> bool:
    return value is None or isinstance(value, str)


def response_of(answer: Answer) -> ActorResponse[object]:
    """The `ActorResponse` of an answer (itself, or built from a `TextAnswer`)."""
    return answer if isinstance(answer, ActorResponse) else answer.response()


_RESPONSE = ActorResponse[object]  # looked up once: subscripting a generic model on every call costs a hash of it
_ANSWER_FIELDS = frozenset(
    ("text", "content", "stop_reason", "stop_sequence", "usage", "cost", "model", "provider", "mode", "ids")
)
_IDS_FIELDS = frozenset(("message_id", "batch_id", "custom_id", "request_id"))
_TEXT_ONLY: frozenset[str] = frozenset(("type", "text"))
_TEXT_AND_CITATIONS: frozenset[str] = frozenset(("type", "text", "citations"))
# The shared `model_fields_set`s of what `TextAnswer.response` builds, looked up once.
_ANSWER_SET = shared_fields_set(_ANSWER_FIELDS)
_IDS_SET = shared_fields_set(_IDS_FIELDS)
_TEXT_ONLY_SET = shared_fields_set(_TEXT_ONLY)
_CITED_SET = shared_fields_set(_TEXT_AND_CITATIONS)
