"""What the OpenAI account keeps by id (`Kept`: stored responses, stored chat completions), and a page of one kept
object's items (`items_page`: a response's input items, a completion's messages)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Generic, TypeVar

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.pages import cursor_page

__all__ = ["Kept", "items_page"]

T = TypeVar("T")


class Kept(ABC, Generic[T]):
    """Objects (dataclasses) kept by id, oldest first; the state file keeps each as its fields."""

    def __init__(self) -> None:
        self._stored: dict[str, T] = {}

    def __len__(self) -> int:
        return len(self._stored)

    def clear(self) -> None:
        self._stored.clear()

    @abstractmethod
    def not_found(self, key: str) -> OpenAIError:
        """The API's 404 for an id it does not keep."""

    def find(self, key: str) -> T:
        stored = self._stored.get(key)
        if stored is None:
            raise self.not_found(key)
        return stored

    def remove(self, key: str) -> None:
        self.find(key)
        del self._stored[key]

    def state(self) -> list[JsonObject]:
        """What the state file keeps of each, oldest first: its fields."""
        kept: list[JsonObject] = []
        for stored in self._stored.values():
            assert is_dataclass(stored)
            kept.append({field.name: getattr(stored, field.name) for field in fields(stored)})
        return kept


def items_page(
    items: Sequence[JsonObject],
    what: str,
    *,
    after: str | None,
    limit: str | None,
    order: str | None,
    default_order: str,
) -> JsonObject:
    """A cursor page of `items` (`what` they are, as the API's 404 for an unknown `after` names them)."""

    def missing(item_id: str) -> OpenAIError:
        return OpenAIError(404, f"{what} with id '{item_id}' not found.", param="after")

    return cursor_page(items, after=after, limit=limit, order=order, default_order=default_order, missing_after=missing)
