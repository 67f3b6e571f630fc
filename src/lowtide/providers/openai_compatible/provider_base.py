"""`DialectProvider`: what a provider class of an OpenAI-compatible API is, live or batch: its `Dialect` and `Sdk`,
and its `name` and `gen_ai_provider_name` taken from the dialect, so that a dialect's class names only those two."""

from __future__ import annotations

from typing import Generic

from pydantic import BaseModel

from lowtide import Provider
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.sdk import C, Sdk

__all__ = ["DialectProvider"]


class DialectProvider(Provider, Generic[C]):
    """A provider of an OpenAI-compatible API, named by its `dialect` (unless the class sets `name` or
    `gen_ai_provider_name` itself)."""

    dialect: Dialect[BaseModel]
    sdk: Sdk[C]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        dialect = cls.__dict__.get("dialect")
        if isinstance(dialect, Dialect):
            named: Dialect[BaseModel] = cls.dialect  # (the class attribute just found, as declared)
            if "name" not in cls.__dict__:
                cls.name = named.name
            if "gen_ai_provider_name" not in cls.__dict__:
                cls.gen_ai_provider_name = named.gen_ai_provider_name
