"""The settings of a call that each provider checks against its own API's rules (ranges, values it refuses), and the
hook through which it does: an actor's configuration is checked as it loads, by its provider's check found through
the registry (`ProviderRegistry.register_parameters`), and every request again as its provider encodes it.

Neutral code holds no provider's rule: `temperature` is 0 to 1 for Anthropic and 0 to 2 for OpenAI, and only the
provider knows which.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol, TypeVar

from lowtide.errors import ConfigurationError

__all__ = ["LazyCheck", "ParameterCheck", "Parameters", "check_ranges", "refuse_fields", "with_extra_params"]

Body = TypeVar("Body", bound=MutableMapping[str, object])


class Parameters(Protocol):
    """What a provider checks of an actor's configuration (`ActorConfiguration`) or one call (`ActorRequest`): both
    have these fields."""

    @property
    def model(self) -> str: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def temperature(self) -> float | None: ...

    @property
    def top_p(self) -> float | None: ...

    @property
    def top_k(self) -> int | None: ...

    @property
    def stop_sequences(self) -> list[str]: ...

    @property
    def metadata(self) -> dict[str, Any] | None: ...

    @property
    def thinking(self) -> dict[str, Any] | None: ...

    @property
    def tool_choice(self) -> dict[str, Any] | None: ...

    @property
    def output_config(self) -> dict[str, Any] | None: ...

    @property
    def cache_control(self) -> dict[str, Any] | None: ...

    @property
    def extra_params(self) -> dict[str, Any]: ...

    @property
    def provider_options(self) -> dict[str, dict[str, Any]]: ...


ParameterCheck = Callable[[Parameters], object]
"""A provider's check of `Parameters`: raises `ConfigurationError` naming the field (`temperature: ...`) when its
API would refuse them; what it returns is ignored."""


class LazyCheck:
    """A provider's check named by its module, imported when first used: registering the built-in providers'
    checks imports no SDK (an OpenAI actor never pays for Anthropic's, nor the other way round)."""

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.attribute = attribute
        self._loaded: ParameterCheck | None = None

    def __call__(self, parameters: Parameters) -> object:
        check = self._loaded
        if check is None:
            check = self._loaded = getattr(importlib.import_module(self.module), self.attribute)
        return check(parameters)


def refuse_fields(parameters: Parameters, refused: Mapping[str, str], *, who: str) -> None:
    """Refuse the first of the `refused` fields that `parameters` sets ("metadata cannot be sent to Mistral: ..."),
    each with the reason its API gives for having no use for it."""
    for name, reason in refused.items():
        if getattr(parameters, name) is not None:
            raise ConfigurationError(f"{name} cannot be sent to {who}: {reason}", field=name)


def check_ranges(parameters: Parameters, ranges: Mapping[str, tuple[float, float]], *, who: str) -> None:
    """Refuse the first of the `ranges` fields whose value `parameters` sets outside its (low, high), both included
    ("temperature: 5 is outside the range Bedrock's Converse takes, 0 to 1.")."""
    for name, (low, high) in ranges.items():
        value = getattr(parameters, name)
        if value is not None and not low <= value <= high:
            raise ConfigurationError(
                f"{name}: {value:g} is outside the range {who} takes, {low:g} to {high:g}.", field=name
            )


def with_extra_params(body: Body, extra: Mapping[str, object], *, not_extra: Mapping[str, str] | None = None) -> Body:
    """`body` with a call's `extra_params` merged in at the top. Refused, before anything is merged: a name in
    `not_extra` (the API's field lowtide cannot honour, with why), or one the body already sets (an extra parameter
    adds to what lowtide sends; it never silently replaces it)."""
    for name, reason in (not_extra or {}).items():
        if name in extra:
            raise ConfigurationError(f"extra_params cannot set {name}: {reason}.", field=f"extra_params.{name}")
    clashes = set(extra) & set(body)
    if clashes:
        raise ConfigurationError(
            f"extra_params repeats parameter(s) already set: {', '.join(sorted(clashes))}", field="extra_params"
        )
    body.update(extra)
    return body
