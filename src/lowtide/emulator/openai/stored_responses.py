"""Stored responses: those created with `store` true (the Responses API's default), kept with their input items and
the conversation a later request continues through `previous_response_id`; and the routes that read them (`GET` and
`DELETE /v1/responses/{id}`, `POST .../{id}/cancel`, `GET .../{id}/input_items`).

A response created with `background: true` is answered `queued`, shows `in_progress` until its end (the emulator's
`processing_seconds` after creation, on its clock, as a batch's), then `completed`; cancelling it before then leaves
it `cancelled`, with no output. Only a background response can be cancelled (the API's 400 for another); cancelling
one that has ended answers it as it is."""

from __future__ import annotations

from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.ids import derived_hex
from lowtide.emulator.openai.kept import Kept, items_page

__all__ = ["StoredResponse", "StoredResponses", "input_items", "response_not_found"]

_ASSISTANT_TEXT = "output_text"


def response_not_found(response_id: str) -> OpenAIError:
    return OpenAIError(404, f"Response with id '{response_id}' not found.")


@dataclass
class StoredResponse:
    """A stored response: as finished (`response`), the items of its input, and `conversation`: the items a
    continuation reads first (the chain before it, its input, its output)."""

    response: JsonObject
    items: list[JsonObject]
    conversation: list[object]
    background: bool = False
    created_at: float = 0.0
    ends_at: float = 0.0
    cancelled_at: float | None = None

    @property
    def id(self) -> str:
        return str(self.response["id"])

    def shown(self, now: float) -> JsonObject:
        """The `Response` as of `now`."""
        if not self.background:
            return self.response
        if self.cancelled_at is None and now >= self.ends_at:
            return {**self.response, "background": True}
        status = "queued" if now <= self.created_at else "in_progress"
        if self.cancelled_at is not None:
            status = "cancelled"
        return {
            **self.response,
            "background": True,
            "status": status,
            "output": [],
            "usage": None,
            "completed_at": None,
        }


class StoredResponses(Kept[StoredResponse]):
    """The account's stored responses, oldest first."""

    def not_found(self, key: str) -> OpenAIError:
        return response_not_found(key)

    def keep(self, stored: StoredResponse) -> None:
        self._stored[stored.id] = stored

    def conversation(self, response_id: str) -> list[object] | None:
        """What a request continuing `response_id` reads before its own input; None if no such response is kept."""
        stored = self._stored.get(response_id)
        return list(stored.conversation) if stored is not None else None

    def delete(self, response_id: str) -> JsonObject:
        self.remove(response_id)
        return {"id": response_id, "object": "response", "deleted": True}

    def cancel(self, response_id: str, now: float) -> JsonObject:
        stored = self.find(response_id)
        if not stored.background:
            raise OpenAIError(400, "Cannot cancel a synchronous response.")
        if stored.cancelled_at is None and now < stored.ends_at:
            stored.cancelled_at = now
        return stored.shown(now)

    def input_items(self, response_id: str, *, after: str | None, limit: str | None, order: str | None) -> JsonObject:
        """`GET /v1/responses/{id}/input_items`: newest first unless `order=asc`."""
        items = self.find(response_id).items
        return items_page(items, "Item", after=after, limit=limit, order=order, default_order="desc")

    def restore(self, items: list[JsonObject]) -> None:
        self._stored = {}
        for item in items:
            cancelled = item.get("cancelled_at")
            ends_at, created_at = item.get("ends_at"), item.get("created_at")
            stored = StoredResponse(
                response=as_object(item["response"]) or {},
                items=[as_object(entry) or {} for entry in as_array(item["items"]) or []],
                conversation=list(as_array(item["conversation"]) or []),
                background=item.get("background") is True,
                created_at=float(created_at) if isinstance(created_at, int | float) else 0.0,
                ends_at=float(ends_at) if isinstance(ends_at, int | float) else 0.0,
                cancelled_at=float(cancelled) if isinstance(cancelled, int | float) else None,
            )
            self._stored[stored.id] = stored


def input_items(response_id: str, value: object) -> list[JsonObject]:
    """A request's `input` (already checked) as the input items list shows it: each item with an id, a message's
    text as content parts (`input_text`, or `output_text` for the assistant's)."""
    if isinstance(value, str):
        value = [{"type": "message", "role": "user", "content": value}]
    items: list[JsonObject] = []
    for index, raw in enumerate(as_array(value) or []):
        entry = dict(as_object(raw) or {})
        kind = entry.setdefault("type", "message")
        entry.setdefault(
            "id", derived_hex("msg_" if kind == "message" else "item_", response_id, str(index), length=48)
        )
        if kind == "message":
            content = entry.get("content")
            if isinstance(content, str):
                part = "output_text" if entry.get("role") == "assistant" else "input_text"
                entry["content"] = [
                    {"type": part, "text": content, **({"annotations": []} if part == _ASSISTANT_TEXT else {})}
                ]
            entry.setdefault("status", "completed")
        items.append(entry)
    return items
