"""Vertex AI's rules for a Gemini call's parameters: Gemini's (`providers/gemini/parameters.py`, the same model on
another door) and `provider_options.vertex` as `VertexOptions` reads it; in batch mode, a bucket for the files."""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters
from lowtide.providers.gemini import parameters as gemini
from lowtide.providers.vertex.options import VertexOptions, options_of

__all__ = ["check_batch_parameters", "check_parameters"]


def check_parameters(parameters: Parameters) -> VertexOptions:
    """Refuse what Vertex AI would refuse of `parameters` (a `ConfigurationError` naming the field); their Vertex
    settings when all is well."""
    options = options_of(parameters)
    gemini.check_parameters(parameters)
    return options


def check_batch_parameters(parameters: Parameters) -> VertexOptions:
    """As `check_parameters`, and a batch's bucket named: a Vertex batch job reads and writes Cloud Storage."""
    options = check_parameters(parameters)
    if options.bucket is None:
        raise ConfigurationError(
            "provider_options.vertex.bucket is required in batch mode: a Vertex AI batch job reads its requests "
            "from Cloud Storage and writes its answers there (give a bucket the credentials may write).",
            field="provider_options.vertex.bucket",
        )
    return options
