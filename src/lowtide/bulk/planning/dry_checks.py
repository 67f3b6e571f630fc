"""A dry run's checks that need no network: what a run would refuse that can be told without asking the API.

A dry run asks the API nothing (`lowtide run --dry-run`, `BulkRun.plan()`, `live_plan()`), so it cannot make the
provider's pre-send checks a run makes (the model looked up, tokens counted). What it can tell from what lowtide
knows offline it checks: a blank model name is refused; each distinct model is looked up in genai-prices' catalogue
of the provider's models, one it does not list noted (with the closest names it lists) as not checked; and each job's
size, at about four bytes a token, against the catalogued model's context window, a job past it refused, named. The
notes say what was left unchecked, for the plan to print.
"""

from __future__ import annotations

import difflib
import json

from lowtide.bulk.inputs.jobs import Jobs
from lowtide.bulk.planning.checks import Checked, named
from lowtide.cost.pricing import Catalogued, catalogued
from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest

__all__ = ["BYTES_PER_TOKEN", "dry_checks"]

BYTES_PER_TOKEN = 4
"""About this many bytes of JSON a token: the plan's own low estimate (typical English text is about four)."""


def dry_checks(jobs: Jobs, checked: Checked, provider: str) -> list[str]:
    """Refuse what a run would refuse and can be told offline (`ConfigurationError`, the job named); the notes of
    what a dry run could not check."""
    notes: list[str] = []
    facts: list[Catalogued | None] = []
    for index, request in checked.probes:
        model = request.model
        if not model.strip() or model != model.strip():
            raise ConfigurationError(
                f"Job {index}{named(jobs[index])}: model: a model name has no spaces or blank lines at its ends"
                f" (got {model!r}).",
                field="model",
            )
        known = catalogued(model, provider)
        facts.append(known)
        if known is None:
            notes.append(f"model {model!r}: lowtide has no catalogue of {provider}'s models; not checked")
        elif not known.listed:
            close = difflib.get_close_matches(model, list(known.names), n=3)
            near = f" (the closest it lists: {', '.join(repr(name) for name in close)})" if close else ""
            notes.append(f"model {model!r}: not in lowtide's catalogue of {known.owner}'s models{near}; not checked")
    bases = [_body_bytes(request) if checked.added else 0 for _, request in checked.probes]
    for index, size in enumerate(checked.sizes):
        place = checked.probe_of[index] if index < len(checked.probe_of) else 0
        known = facts[place] if place < len(facts) else None
        window = known.context_window if known is not None else None
        tokens = (size + bases[place]) // BYTES_PER_TOKEN if place < len(bases) else size // BYTES_PER_TOKEN
        if window is not None and tokens > window:
            model = checked.probes[place][1].model
            raise ConfigurationError(
                f"Job {index}{named(jobs[index])}: about {tokens:,} input tokens by its size (~{BYTES_PER_TOKEN} bytes"
                f" a token), past the {window:,}-token context window of {model!r}: the run would refuse it before"
                " sending anything.",
                field="messages",
            )
    if checked.probes:
        notes.append(
            "not checked (a dry run asks the API nothing): that the API serves each model, and exact token counts"
        )
    return notes


def _body_bytes(request: ActorRequest) -> int:
    """The bytes of what a request sends of its own (system, messages, tools), as JSON."""
    sent = {"system": request.system, "messages": request.messages, "tools": request.tools}
    return len(json.dumps(sent, separators=(",", ":"), default=str).encode())
