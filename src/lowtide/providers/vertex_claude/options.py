"""The names of Claude on Vertex AI (`provider: vertex_claude`); its settings are Vertex AI's (`VertexOptions`: project,
location, credentials, bucket, key_prefix), read from `provider_options.vertex_claude`."""

from __future__ import annotations

from lowtide.providers import Parameters
from lowtide.providers.vertex.options import VertexOptions, options_of

__all__ = ["GEN_AI_PROVIDER_NAME", "PROVIDER_NAME", "VertexOptions", "vertex_settings"]

PROVIDER_NAME = "vertex_claude"
GEN_AI_PROVIDER_NAME = "gcp.vertex_ai"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value for Vertex AI."""


def vertex_settings(parameters: Parameters) -> VertexOptions:
    """The Vertex settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    return options_of(parameters, PROVIDER_NAME)
