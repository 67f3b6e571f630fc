"""The Groq API as an emulation (the `groq` entry point of `lowtide.emulators`): OpenAI's emulation in Groq's dialect.
Files, Batches, Chat Completions and Models under Groq's own `/openai/v1/` prefix, answered in Groq's shapes and
errors (OpenAI's), every answer with its `x-request-id`. Its paths are its own, so it needs no caller to be told
apart; a program sets only `GROQ_BASE_URL`. Route names are `groq.files.create`, `groq.batches.create`, ..., so faults
armed for a `groq.` route reach Groq's callers alone."""

from __future__ import annotations

from lowtide.emulator.openai.dialect import Catalogue, Dialect
from lowtide.emulator.openai.dialect_emulation import CompatEmulation

__all__ = ["GROQ", "GroqEmulation"]

GROQ = Dialect(
    name="groq",
    catalogue=Catalogue.read("lowtide.emulator.groq"),
    own_keys={
        "reasoning_format": ("hidden", "raw", "parsed"),
        "reasoning_effort": ("none", "default", "low", "medium", "high"),
        "service_tier": ("auto", "on_demand", "flex", "performance"),
        "include_reasoning": (),
    },
    served=(
        "files.create",
        "files.retrieve",
        "files.list",
        "files.delete",
        "files.content",
        "batches.create",
        "batches.retrieve",
        "batches.list",
        "batches.cancel",
        "chat.completions.create",
        "models.list",
        "models.retrieve",
    ),
    prefix="/openai",
    least_hours=24,
    most_hours=7 * 24,
    paged_listing=False,
)
"""What Groq changes of OpenAI's API: its models, body keys and paths, batch windows from 24 hours to 7 days, and a
batch listing of every batch in one answer."""


class GroqEmulation(CompatEmulation):
    """The emulated Groq account (`Emulator.emulation(GroqEmulation)`), as OpenAI's emulation has it."""

    dialect = GROQ
    name = GROQ.name
    route_names = GROQ.route_names
