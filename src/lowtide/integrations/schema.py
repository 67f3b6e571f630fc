"""A response model made from a bare JSON schema, for frameworks that hand lowtide a schema, not a pydantic class."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, create_model

__all__ = ["schema_model"]

_NAME = re.compile(r"[^A-Za-z0-9_]")


class _SchemaModel(BaseModel):
    """Accepts any JSON object: the framework validates the answer itself against its own output type."""

    model_config = ConfigDict(extra="allow")
    json_schema_: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(cls.json_schema_)


def schema_model(name: str | None, schema: dict[str, Any], description: str | None = None) -> type[BaseModel]:
    """A `response_model` whose JSON schema is `schema`, named `name` (made a valid identifier), so that a provider
    asks the API for that schema (native structured output) through the usual `response_model` path."""
    shown = dict(schema)
    if description and "description" not in shown:
        shown["description"] = description
    model = create_model(_NAME.sub("_", name or "Output") or "Output", __base__=_SchemaModel)
    model.json_schema_ = shown
    return model
