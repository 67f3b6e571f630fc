"""Azure OpenAI's rules for a call's parameters, checked as an actor loads and on every request as it is encoded:
Azure's own settings (`options.AzureOptions`), and OpenAI's Chat Completions rules for the rest (`temperature` 0 to 2,
at most 4 stop sequences, OpenAI's metadata limits, no `top_k`/`thinking`/...), which Azure's API shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lowtide.core.parameters import Parameters
from lowtide.errors import ConfigurationError
from lowtide.providers.azure_openai.options import OPENAI_SECTION, PROVIDER_NAME, AzureOptions, azure_options
from lowtide.providers.azure_openai.options import openai_options as openai_section
from lowtide.providers.openai.parameters import check_parameters as check_openai

__all__ = ["as_openai_error", "check_parameters"]


@dataclass(frozen=True)
class _AsOpenAI:
    """`parameters` with their Azure section handed to OpenAI's checks as OpenAI's section."""

    parameters: Parameters
    provider_options: dict[str, dict[str, Any]]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parameters, name)


def check_parameters(parameters: Parameters) -> AzureOptions:
    """Refuse what Azure OpenAI would refuse of `parameters` (a `ConfigurationError` naming the field); their Azure
    settings when all is well."""
    options = azure_options(parameters)
    viewed: Any = _AsOpenAI(parameters, {OPENAI_SECTION: openai_section(parameters)})
    try:
        check_openai(viewed)
    except ConfigurationError as exc:
        raise as_openai_error(exc) from None
    return options


def as_openai_error(exc: ConfigurationError) -> ConfigurationError:
    """OpenAI's refusal of a setting, in the words of the Azure section it was given in."""
    section, ours = f"provider_options.{OPENAI_SECTION}", f"provider_options.{PROVIDER_NAME}"
    field = exc.field.replace(section, ours) if exc.field else exc.field
    return ConfigurationError(str(exc).replace(section, ours), field=field)
