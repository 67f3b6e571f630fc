"""Claude on Vertex AI's rules for a call's parameters: Anthropic's (`providers/anthropic/parameters.py`, the same
model on another door) and `provider_options.vertex_claude` as `VertexOptions` reads it; in batch mode, a bucket."""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters
from lowtide.providers.anthropic import parameters as anthropic
from lowtide.providers.vertex_claude.options import PROVIDER_NAME, VertexOptions, vertex_settings

__all__ = ["check_batch_parameters", "check_parameters"]


def check_parameters(parameters: Parameters) -> VertexOptions:
    """Refuse what Claude on Vertex AI would refuse of `parameters` (a `ConfigurationError` naming the field); their
    Vertex settings when all is well."""
    options = vertex_settings(parameters)
    anthropic.check_parameters(parameters)
    return options


def check_batch_parameters(parameters: Parameters) -> VertexOptions:
    """As `check_parameters`, and a batch's bucket named: a Vertex batch job reads and writes Cloud Storage."""
    options = check_parameters(parameters)
    if options.bucket is None:
        raise ConfigurationError(
            f"provider_options.{PROVIDER_NAME}.bucket is required in batch mode: a Vertex AI batch job reads its "
            "requests from Cloud Storage and writes its answers there (give a bucket the credentials may write).",
            field=f"provider_options.{PROVIDER_NAME}.bucket",
        )
    return options
