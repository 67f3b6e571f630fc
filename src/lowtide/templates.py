"""The template of an actor's calls that give only a prompt: everything else comes from the configuration, so the
params are built, checked and encoded once, and each call adds only its prompt."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lowtide.ledger.store import stored_json
from lowtide.types import ActorRequest

__all__ = ["PromptTemplate"]


@dataclass(eq=False)
class PromptTemplate:
    """The params of every call that gives only a prompt, whose other fields come from the configuration."""

    encode: Callable[[str], dict[str, Any]]
    """The provider's params for a prompt (through its codec)."""
    model: str
    around: tuple[str, str] | None
    """The params' JSON as the ledger stores it, before and after the prompt's JSON string."""
    request: ActorRequest
    """A call of this template, for the provider's pre-send checks (made once: only the prompt varies)."""
    checked: bool = False
    checking: asyncio.Future[None] | None = None
    """The checks under way, which the calls that arrive meanwhile wait for."""

    @classmethod
    def of(cls, encode: Callable[[str], dict[str, Any]], request: ActorRequest) -> PromptTemplate:
        marker = f"lowtide-prompt-{uuid.uuid4().hex}"
        encoded = stored_json(encode(marker))
        # JSON nests: the params with a prompt are these pieces around the prompt's own JSON string.
        before, _, after = encoded.partition(stored_json(marker))
        around = (before, after) if encoded.count(marker) == 1 else None
        return cls(encode, request.model, around, request)

    def with_prompt(self, prompt: str) -> dict[str, Any]:
        return self.encode(prompt)
