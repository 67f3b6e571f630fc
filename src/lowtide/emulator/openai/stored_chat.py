"""Stored chat completions: those created with `store: true`, kept with their request's messages and metadata, and
the routes that read them (`GET /v1/chat/completions` with its `model` and `metadata[...]` filters, `GET`, `POST`
(metadata only) and `DELETE /v1/chat/completions/{id}`, `GET .../{id}/messages`), in the SDK's shapes
(`ChatCompletion` with its `metadata`, `ChatCompletionDeleted`, `ChatCompletionStoreMessage`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.openai.checks import check_keys, check_metadata, require_object, required
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.kept import Kept, items_page
from lowtide.emulator.openai.pages import cursor_page

__all__ = ["StoredCompletions", "completion_not_found"]

# The content parts a stored message shows (`content_parts`): text and images; others are left out.
_SHOWN_PARTS = ("text", "image_url")


def completion_not_found(completion_id: str) -> OpenAIError:
    return OpenAIError(404, f"Chat completion with id '{completion_id}' not found.", param="completion_id")


@dataclass
class _Stored:
    completion: JsonObject
    model: str
    """The model the request asked for."""
    messages: list[JsonObject]
    metadata: dict[str, str]

    def shown(self) -> JsonObject:
        return {**self.completion, "metadata": dict(self.metadata)}


class StoredCompletions(Kept[_Stored]):
    """The account's stored chat completions, oldest first."""

    def not_found(self, key: str) -> OpenAIError:
        return completion_not_found(key)

    def keep(self, completion: JsonObject, body: JsonObject) -> None:
        """Keep `completion`, answered to `body` (a request that asked `store: true`)."""
        completion_id = str(completion["id"])
        messages = [_message(completion_id, index, item) for index, item in enumerate(as_array(body["messages"]) or [])]
        metadata = check_metadata(body.get("metadata")) or {}
        self._stored[completion_id] = _Stored(completion, str(body["model"]), messages, metadata)

    def retrieve(self, completion_id: str) -> JsonObject:
        return self.find(completion_id).shown()

    def update(self, completion_id: str, body: object) -> JsonObject:
        """`POST /v1/chat/completions/{id}`: its metadata replaced (the only change the API allows)."""
        params = require_object(body)
        check_keys(params, ("metadata",))
        metadata = check_metadata(required(params, "metadata"))
        stored = self.find(completion_id)
        stored.metadata = metadata or {}
        return stored.shown()

    def delete(self, completion_id: str) -> JsonObject:
        self.remove(completion_id)
        return {"object": "chat.completion.deleted", "id": completion_id, "deleted": True}

    def page(
        self,
        *,
        after: str | None,
        limit: str | None,
        order: str | None,
        model: str | None,
        metadata: Mapping[str, str],
    ) -> JsonObject:
        """`GET /v1/chat/completions`: oldest first unless `order=desc`; `model` matches the model asked for or the
        snapshot that answered, and every `metadata[key]=value` pair must be the completion's."""
        listed = [
            stored.shown()
            for stored in self._stored.values()
            if (model is None or model in (stored.model, stored.completion.get("model")))
            and all(stored.metadata.get(key) == value for key, value in metadata.items())
        ]
        return cursor_page(
            listed, after=after, limit=limit, order=order, default_order="asc", missing_after=completion_not_found
        )

    def messages(self, completion_id: str, *, after: str | None, limit: str | None, order: str | None) -> JsonObject:
        """`GET /v1/chat/completions/{id}/messages`: the request's messages, oldest first unless `order=desc`."""
        messages = self.find(completion_id).messages
        return items_page(messages, "Message", after=after, limit=limit, order=order, default_order="asc")

    def restore(self, items: list[JsonObject]) -> None:
        self._stored = {}
        for item in items:
            completion = as_object(item["completion"]) or {}
            messages = [as_object(message) or {} for message in as_array(item["messages"]) or []]
            metadata = {str(key): str(value) for key, value in (as_object(item["metadata"]) or {}).items()}
            self._stored[str(completion["id"])] = _Stored(completion, str(item["model"]), messages, metadata)


def _message(completion_id: str, index: int, item: object) -> JsonObject:
    """A request message as the messages list shows it (`ChatCompletionStoreMessage`): its text as `content`, and its
    text and image parts as `content_parts` when it was sent as parts."""
    message = as_object(item) or {}
    content = message.get("content")
    parts = as_array(content)
    shown: JsonObject = {
        "id": f"{completion_id}-{index}",
        "role": message.get("role"),
        "content": content if isinstance(content, str) else None,
        "name": message.get("name"),
        "content_parts": None,
    }
    if parts is not None:
        kept = [part for part in (as_object(p) for p in parts) if part is not None and part.get("type") in _SHOWN_PARTS]
        texts = [str(part.get("text")) for part in kept if part.get("type") == "text"]
        shown["content"] = "".join(texts) if texts else None
        shown["content_parts"] = kept
    for key in ("refusal", "tool_calls", "tool_call_id"):
        if key in message:
            shown[key] = message[key]
    return shown
