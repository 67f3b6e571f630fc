"""Jobs that give only a prompt (an id too, maybe, but no file, messages, citations or overrides): every one of them
is the same request but for its prompt, so a run builds, encodes and checks that request once, and each job adds
only its prompt's JSON (`PlainJobs`). A run of 100,000 such jobs then builds one request, not 200,000 (once to
check, once to send), and writes each job's JSON once for its fingerprint and its row in the ledger.

The template is trusted only where it gives, for a sample job, exactly what the general path gives (the params
JSON the ledger stores, the job JSON the run's fingerprint and the ledger hold): a run's fingerprint must not change
with the path it took, or a run could not be resumed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lowtide.bulk.inputs.jobs import Job
from lowtide.calls.templates import PromptTemplate
from lowtide.ledger.store import stored_json
from lowtide.types import ActorRequest

__all__ = ["PlainJobs", "job_json"]

# Prompt and id of the sample job each template is tried on: quotes, escapes, a newline and characters beyond ASCII.
_SAMPLE_PROMPT = 'Le "plus" \\ grand\n\u00e9t\u00e9 \u2014 \U0001f30a'
_SAMPLE_ID = 'id "\u00e9"'


def job_json(job: Job) -> str:
    """A job as the run's fingerprint and the ledger's `run_items.job` hold it: compact JSON, keys sorted."""
    return stored_json(job.model_dump(mode="json"))


@dataclass(frozen=True)
class PlainJobs:
    """The request and the job JSON of a run's prompt-only jobs, in pieces around what varies."""

    params: PromptTemplate
    """The params' JSON around the prompt's (as the ledger stores it: what the batch sends)."""
    job_around: tuple[str, str, str]
    """A job's JSON around its id's JSON and its prompt's, in that order."""

    @classmethod
    def of(cls, encode: Callable[[str], dict[str, Any]], request: Callable[[str], ActorRequest]) -> PlainJobs | None:
        """The template of a run whose prompt-only job with prompt P has the params `encode(P)` and the request
        `request(P)`; None when the pieces cannot be cut (the prompt shows up twice, or not as it is)."""
        template = PromptTemplate.of(encode, request("-"))
        prompt_marker, id_marker = "lowtide-plain-prompt-4c1f", "lowtide-plain-id-4c1f"
        encoded = job_json(Job(prompt=prompt_marker, id=id_marker))
        before, _, rest = encoded.partition(stored_json(id_marker))
        between, _, after = rest.partition(stored_json(prompt_marker))
        plain = cls(template, (before, between, after))
        # Pieces that were not cut as expected (the prompt twice in the params, the id after the prompt) give other
        # JSON for the sample than building it does: the general path serves.
        if template.around is None or plain.job_json(_SAMPLE_PROMPT, _SAMPLE_ID) != job_json(
            Job(prompt=_SAMPLE_PROMPT, id=_SAMPLE_ID)
        ):
            return None
        return plain if plain.params_json(_SAMPLE_PROMPT) == stored_json(encode(_SAMPLE_PROMPT)) else None

    @staticmethod
    def prompt_of(job: Job) -> str | None:
        """The prompt of a job this template makes (None: the job needs the general path). A blank prompt takes
        the general path too, which refuses it as it refuses any blank message."""
        prompt = job.prompt
        if (
            prompt is None
            or job.file is not None
            or job.messages is not None
            or job.citations is not None
            or job.overrides
            or not prompt
            or prompt.isspace()
        ):
            return None
        return prompt

    @property
    def model(self) -> str:
        return self.params.model

    def params_json(self, prompt: str) -> str:
        around = self.params.around
        assert around is not None
        return around[0] + stored_json(prompt) + around[1]

    def job_json(self, prompt: str, item_id: str | None) -> str:
        before, between, after = self.job_around
        return before + json.dumps(item_id) + between + stored_json(prompt) + after
