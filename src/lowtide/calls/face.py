"""What the parts of an actor's calls (`PromptCalls`, `ManyCalls`, a bulk run's `RunActor`) need of the actor, as a
Protocol: `lowtide.Actor` is one, and none of them needs its class (nor imports `actor.py`)."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.core.clock import Clock
from lowtide.provider import Provider
from lowtide.types import ActorRequest

__all__ = ["ActorFace"]


class ActorFace(Protocol):
    """An actor as its calls see it: its name, settings and clock, requests built from its defaults, and its provider
    for a mode."""

    @property
    def name(self) -> str: ...

    @property
    def configuration(self) -> ActorConfiguration: ...

    @property
    def clock(self) -> Clock: ...

    def request(
        self, prompt: str | None = None, *, response_model: type[BaseModel] | None = None, **params: Any
    ) -> ActorRequest: ...

    def provider(self, mode: BatchProcessingMode | str | None = None) -> Provider: ...

    async def ready(self, mode: BatchProcessingMode | str | None = None) -> Provider:
        """`provider(mode)`, built off the event loop the first time."""
        ...
