"""Actor configuration: which provider and model an actor uses, its Messages parameters, and how it waits on batches.

Configurations load from a dict, a YAML file or a TOML file. A file holds one actor, or several under `actors`
(a list, or a table keyed by name) with optional shared `defaults`. Invalid settings fail at load time with a
`ConfigurationError` that names the actor, the file and the field.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lowtide.config.endpoints import base_url_problem
from lowtide.config.files import as_mapping, read_document
from lowtide.config.foreign_options import check_foreign_options
from lowtide.config.settings import (
    DEFAULT_PROVIDER,
    BatchSettings,
    LiveSettings,
    SettingsModel,
    TimeoutPolicy,
)
from lowtide.core.modes import BatchProcessingMode
from lowtide.core.parameters import ParameterCheck
from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError
from lowtide.ledger.location import ledger_problem, redacted

__all__ = [
    "DEFAULT_PROVIDER",
    "ActorConfiguration",
    "BatchProcessingMode",
    "BatchSettings",
    "LiveSettings",
    "TimeoutPolicy",
    "load_actors",
]


class ActorConfiguration(SettingsModel):
    """One actor: its provider, model, Messages parameters and batch behaviour."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False, allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    provider: str = Field(default=DEFAULT_PROVIDER, min_length=1)
    model: str = Field(min_length=1)
    system_prompt: str | None = None
    max_tokens: int = Field(default=1024, ge=1)
    # Their ranges are the provider's (`temperature` is 0 to 1 for Anthropic, 0 to 2 for OpenAI): checked by its
    # parameter check as the actor loads (`_check_parameters`).
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop_sequences: list[str] = Field(default_factory=list[str])
    metadata: dict[str, object] | None = None
    thinking: dict[str, object] | None = None
    tool_choice: dict[str, object] | None = None
    output_config: dict[str, object] | None = None
    cache_control: dict[str, object] | None = None
    extra_params: dict[str, object] = Field(
        default_factory=dict[str, object], description="Further Messages API parameters, passed through as given."
    )
    provider_options: dict[str, dict[str, object]] = Field(
        default_factory=dict[str, dict[str, object]],
        description="Settings only one provider has, under its name (`openai: {endpoint: chat_completions}`); the "
        "actor's provider reads and checks its own, before anything is sent; another provider's is warned of as "
        "ignored, and a name no provider has is refused (a file's `defaults` hand each actor its own provider's).",
    )

    batch_processing: BatchProcessingMode = BatchProcessingMode.LIVE
    batch: BatchSettings = Field(default_factory=BatchSettings)
    live: LiveSettings = Field(default_factory=LiveSettings)
    fallback_to_live: bool = Field(
        default=False,
        description="When the provider cannot batch, answer through its live API instead of failing.",
    )

    max_cost_usd: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Budget for everything this actor sends in batch mode, as recorded in the ledger.",
    )
    team: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The team this actor's spend belongs to: attributed in the ledger, held to the team's caps.",
    )
    project: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The project this actor's spend belongs to: attributed in the ledger, held to the project's caps.",
    )
    tags: dict[str, str] = Field(
        default_factory=dict[str, str], description="Free tags recorded with every request's spend (`lowtide spend`)."
    )
    ledger: str | None = Field(
        default=None, description="Ledger file; default $LOWTIDE_LEDGER, else ~/.local/state/lowtide/ledger.sqlite3."
    )

    api_key_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$",
        description="The name of the environment variable holding the API key (never the key itself); by default "
        "the provider's own (ANTHROPIC_API_KEY, OPENAI_API_KEY).",
    )
    base_url: str | None = None
    timeout: float = Field(default=600.0, gt=0)
    max_retries: int = Field(
        default=2,
        ge=0,
        le=20,
        description="Not used any more: lowtide retries live calls itself, by error class (`live.retries`), so that a"
        " 429 pauses every call sharing the key; kept so that existing files still load.",
    )

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str) -> str:
        if value.isspace() or value != value.strip():
            raise ValueError("a model name has no spaces or blank lines at its ends")
        return value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        problem = None if value is None else base_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("ledger")
    @classmethod
    def _check_ledger(cls, value: str | None) -> str | None:
        problem = None if value is None else ledger_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _check_parameters(self) -> Self:
        """The provider's own rules for its parameters (ranges, values its API refuses), when it registered them; a
        `provider_options` section for another provider refused (no provider reads another's: it would be ignored)."""
        try:
            check_foreign_options(self.provider_options, self.provider, self.name)
        except ConfigurationError as exc:
            raise _Refused(exc) from None
        check = _parameter_check(self.provider, self.batch_processing)
        if check is not None:
            try:
                check(self)
            except ConfigurationError as exc:
                raise _Refused(exc) from None
        return self

    @classmethod
    def from_dict(cls, data: Mapping[str, object], *, source: str = "configuration") -> ActorConfiguration:
        """Validate one actor's settings, raising `ConfigurationError` naming the field on failure."""
        given = cast("object", data)  # what an untyped caller passed
        if not isinstance(given, Mapping):
            raise ConfigurationError(
                f"An actor's configuration is an ActorConfiguration or a mapping of its settings (name, model, ...),"
                f" not {type(given).__name__}.",
                field="configuration",
            )
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise _configuration_error(exc, data, source=source) from None

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None) -> ActorConfiguration:
        """Load one actor from a YAML or TOML file; `name` picks one when the file holds several."""
        actors = load_actors(path)
        if name is None:
            if len(actors) != 1:
                raise ConfigurationError(
                    f"{path} holds {len(actors)} actors ({', '.join(actors)}); say which one, as in"
                    f" {argument('name', next(iter(actors)))}.",
                    field="name",
                )
            return next(iter(actors.values()))
        try:
            return actors[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(actors), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigurationError(
                f"{path} has no actor named {name!r}.{hint} It has {', '.join(sorted(actors))}.", field="name"
            ) from None


class _Refused(ValueError):
    """A provider's refusal of an actor's parameters, through pydantic's validation, keeping the field it names."""

    def __init__(self, refusal: ConfigurationError) -> None:
        super().__init__(str(refusal))
        self.field = refusal.field


def _parameter_problem(data: Mapping[str, Any]) -> _Refused | None:
    """The provider's refusal of an actor's parameters as given, when other settings failed validation (pydantic then
    skips the check across fields): so that every problem is listed. Nothing when they cannot be read as given."""
    provider = data.get("provider", DEFAULT_PROVIDER)
    try:
        mode = BatchProcessingMode(data.get("batch_processing", BatchProcessingMode.LIVE))
    except (ValueError, TypeError):  # a mode misspelt (already listed): checked as the live API takes it
        mode = BatchProcessingMode.LIVE
    check = _parameter_check(provider, mode) if isinstance(provider, str) else None
    if check is None:
        return None
    known = {name: value for name, value in data.items() if name in ActorConfiguration.model_fields}
    try:
        check(ActorConfiguration.model_construct(**known))
    except ConfigurationError as exc:
        return _Refused(exc)
    except Exception:  # a setting of the wrong type (already listed): the check cannot read the others
        return None
    return None


def _parameter_check(provider: str, mode: BatchProcessingMode) -> ParameterCheck | None:
    """The parameter check `provider` registered with the default registry for `mode`; None for a provider it does
    not know (registered elsewhere, or misspelt: said when the actor resolves its provider), or when its plugins
    cannot load (said then too)."""
    from lowtide.registry import default_registry  # the registry's modules import this one

    try:
        return default_registry().parameter_check(provider, mode)
    except ConfigurationError:
        return None


def load_actors(source: str | Path | Mapping[str, object]) -> dict[str, ActorConfiguration]:
    """Load every actor from a YAML or TOML file (by extension) or an already-parsed mapping, keyed by name."""
    if isinstance(source, Mapping):
        return _actors_from_document(source, origin="configuration")
    path = Path(source)
    return _actors_from_document(read_document(path), origin=str(path))


def _actors_from_document(document: Mapping[str, object], *, origin: str) -> dict[str, ActorConfiguration]:
    if "actors" not in document:
        actor = ActorConfiguration.from_dict(document, source=origin)
        return {actor.name: actor}
    unknown = set(document) - {"actors", "defaults"}
    if unknown:
        raise ConfigurationError(
            f"{origin}: unknown top-level key(s) {', '.join(sorted(unknown))}; expected 'actors' and 'defaults'",
            field=sorted(unknown)[0],
        )
    defaults = as_mapping(document.get("defaults") or {})
    if defaults is None:
        raise ConfigurationError(f"{origin}: 'defaults' must be a mapping", field="defaults")
    actors: dict[str, ActorConfiguration] = {}
    for entry in _actor_entries(document["actors"], origin=origin):
        actor = ActorConfiguration.from_dict(_merge(_defaults_for(defaults, entry), entry), source=origin)
        if actor.name in actors:
            raise ConfigurationError(f"{origin}: actor {actor.name!r} is defined twice", field="name")
        actors[actor.name] = actor
    if not actors:
        raise ConfigurationError(f"{origin}: 'actors' is empty", field="actors")
    return actors


def _actor_entries(raw: object, *, origin: str) -> list[dict[str, object]]:
    by_name = as_mapping(raw)
    if by_name is not None:
        entries: list[dict[str, object]] = []
        for name, body in by_name.items():
            settings = as_mapping(body)
            if settings is None:
                raise ConfigurationError(f"{origin}: actor {name!r} must be a mapping of settings", field=name)
            entries.append({"name": name, **settings})
        return entries
    if isinstance(raw, list):
        result: list[dict[str, object]] = []
        for index, body in enumerate(cast("list[object]", raw)):
            settings = as_mapping(body)
            if settings is None:
                raise ConfigurationError(f"{origin}: actors[{index}] must be a mapping of settings", field="actors")
            result.append(settings)
        return result
    raise ConfigurationError(f"{origin}: 'actors' must be a list or a mapping of actors", field="actors")


def _defaults_for(defaults: Mapping[str, object], entry: Mapping[str, object]) -> Mapping[str, object]:
    """A file's `defaults` as one actor takes them: of their `provider_options`, its own provider's section alone
    (the defaults of a file of several providers' actors hold each one's)."""
    sections = as_mapping(defaults.get("provider_options"))
    if sections is None:
        return defaults
    provider = entry.get("provider", defaults.get("provider", DEFAULT_PROVIDER))
    own = {name: section for name, section in sections.items() if name == provider}
    return {**defaults, "provider_options": own}


def _merge(base: Mapping[str, object], override: Mapping[str, object]) -> dict[str, object]:
    """Deep-merge two settings mappings; the override wins, nested mappings (like `batch`) merge key by key."""
    merged = dict(base)
    for key, value in override.items():
        current, incoming = as_mapping(merged.get(key)), as_mapping(value)
        merged[key] = _merge(current, incoming) if current is not None and incoming is not None else value
    return merged


def _name_of(data: Mapping[str, object]) -> str | None:
    name = data.get("name")
    return name if isinstance(name, str) else None


_SECRET_HINTS = ("key", "token", "secret", "password", "auth")


def _field_named_in(message: str) -> str | None:
    """The field a cross-field check names first ("thinking.budget_tokens must ...", "temperature: ..."), if it
    names one."""
    first = message.split(" ", 1)[0].removesuffix(":")
    return first if first.split(".", 1)[0] in ActorConfiguration.model_fields else None


def _never_echo(error_type: str, field: str) -> bool:
    # A misplaced `api_key: sk-...` must not end up in an error message or a log.
    return error_type in ("missing", "extra_forbidden") or any(hint in field.lower() for hint in _SECRET_HINTS)


def _configuration_error(exc: ValidationError, data: Mapping[str, object], *, source: str) -> ConfigurationError:
    problems: list[str] = []
    fields: list[str] = []
    for error in exc.errors():
        message = error["msg"].removeprefix("Value error, ")
        located = ".".join(str(part) for part in error["loc"])
        if not located:
            # A check across fields: its message names the field, and its input is the whole actor, never echoed.
            refusal = (error.get("ctx") or {}).get("error")
            field = refusal.field if isinstance(refusal, _Refused) else None
            fields.append(field or _field_named_in(message) or "(actor)")
            problems.append(f"  {message}")
            continue
        fields.append(located)
        if error["type"] == "extra_forbidden":
            problems.append(f"  {located}: {_unknown_setting(error['loc'])}")
            continue
        given = error["input"]
        if located in ("ledger", "base_url") and isinstance(given, str):
            given = redacted(given)  # a URL's password, if it holds one, is never echoed
        got = "" if _never_echo(error["type"], located) else f" (got {given!r})"
        problems.append(f"  {located}: {message}{got}")
    if all(error["loc"] for error in exc.errors()):
        refused = _parameter_problem(data)
        if refused is not None:
            fields.append(refused.field or _field_named_in(str(refused)) or "(actor)")
            problems.append(f"  {refused}")
    actor = _name_of(data)
    who = f"actor {actor!r}" if actor else "actor"
    return ConfigurationError(
        f"Invalid configuration for {who} in {source}:\n" + "\n".join(problems), field=fields[0] if fields else None
    )


def _unknown_setting(location: tuple[int | str, ...]) -> str:
    """What to say of a setting that is not one: the nearest known name, and the names there are."""
    model: type[BaseModel] | None = ActorConfiguration
    for part in location[:-1]:
        field = model.model_fields.get(str(part)) if model is not None else None
        annotation = field.annotation if field is not None else None
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    if model is None:
        return "not a known setting"
    known = sorted(model.model_fields)
    close = difflib.get_close_matches(str(location[-1]), known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"not a known setting{hint} (known here: {', '.join(known)})"
