"""What a durable pydantic-ai run takes besides its prompt (`deps`, `message_history`, `model_settings`): checked
before the run starts, stored as JSON with the run's input, and rebuilt from it on every advance, in any process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.settings import ModelSettings

from lowtide.agents.fleet import referenced
from lowtide.agents.values import reference_of, unstorable
from lowtide.errors import ConfigurationError, UnstorableValueError

__all__ = ["RunInput", "stored_input"]

DepsFactory = Callable[[], Any] | str
"""A function of no arguments that makes a run's deps, or its `module:qualname` reference."""


def stored_input(
    deps: Any, deps_factory: DepsFactory | None, message_history: Sequence[ModelMessage] | None,
    model_settings: ModelSettings | None,
) -> dict[str, Any]:  # fmt: skip
    """The keyword arguments the run's input keeps (only those given), or the error that refuses the run, raised
    before anything is recorded: deps that JSON cannot hold, a factory no other process can import by reference."""
    given: dict[str, Any] = {}
    if deps is not None and deps_factory is not None:
        raise ConfigurationError("Give a run deps or a deps_factory, not both.", field="deps")
    if deps is not None:
        refused = unstorable(deps, "deps")
        if refused is not None:
            raise UnstorableValueError(
                f"{refused} Deps that are not JSON (clients, connections, dataclasses) are made in each process that"
                " advances the run: give deps_factory, a module-level function that returns them.",
                field="deps",
            )
        given["deps"] = deps
    if deps_factory is not None:
        given["deps_factory"] = _factory_reference(deps_factory)
    if message_history:
        given["message_history"] = ModelMessagesTypeAdapter.dump_python(list(message_history), mode="json")
    if model_settings:
        refused = unstorable(dict(model_settings), "model_settings")
        if refused is not None:
            raise refused
        given["model_settings"] = dict(model_settings)
    return given


def _factory_reference(factory: DepsFactory) -> str:
    """`module:qualname` of the factory, checked to import back to it (a lambda or a nested function cannot)."""
    reference = factory if isinstance(factory, str) else reference_of(factory)
    module, _, qualname = reference.rpartition(":")
    if not module or "<" in qualname:
        raise ConfigurationError(
            f"The deps_factory {reference} cannot be imported by another process: give a function defined at the top"
            " of a module (or its 'module:name').",
            field="deps_factory",
        )
    found = referenced(reference, "deps_factory")
    if not callable(found) or (not isinstance(factory, str) and found is not factory):
        raise ConfigurationError(
            f"The deps_factory {reference} is not a function defined at the top of its module (or not the one given).",
            field="deps_factory",
        )
    return reference


class RunInput:
    """A run's stored deps, history and settings, as pydantic-ai takes them (the deps made afresh if a factory)."""

    def __init__(
        self, deps: Any = None, deps_factory: str | None = None, message_history: list[Any] | None = None,
        model_settings: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        self.deps = cast(Callable[[], Any], referenced(deps_factory, "deps_factory"))() if deps_factory else deps
        self.message_history = ModelMessagesTypeAdapter.validate_python(message_history) if message_history else None
        self.model_settings = cast(ModelSettings, model_settings) if model_settings else None
