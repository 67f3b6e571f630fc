"""The requests of a bulk run's jobs (`RunRequests`, the half of `BulkRun` that builds them): each job's request and
its params as the actor's batch codec encodes them, a prompt-only job's through the run's template (`PlainJobs`),
their sizes and worst-case prices, and the batch limits they are split by. What the checks (`checks.CheckedRun`) and
the executions need of a run, apart from recording and sorting it (`runner`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from lowtide.batching.backend import BatchCodec
from lowtide.bulk.inputs.jobs import Job, Jobs, job_messages
from lowtide.bulk.planning.checks import params_text
from lowtide.bulk.planning.plain_jobs import PlainJobs
from lowtide.bulk.running.definition import Prepared, RunActor
from lowtide.calls.owners import owner_of
from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.budget import worst_case_of
from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest

__all__ = ["RunRequests"]


class RunRequests:
    """How a bulk run's jobs become requests: the settings that shape them are `BulkRun`'s, set by its constructor."""

    actor: RunActor
    jobs: Jobs
    defaults: dict[str, Any]
    response_model: type[BaseModel] | None
    citations: bool
    items_per_batch: int | None
    max_cost_usd: Decimal | None
    _codec: BatchCodec | None
    _plain: PlainJobs | None
    """The template of the prompt-only jobs, as the last check found it."""

    def live_request(self, index: int, key: str) -> ActorRequest:
        """Item `index`'s live request (its files read now), under its key."""
        return self.job_request(self.jobs[index]).model_copy(update={"custom_id": key})

    def live_worst_case(self, request: ActorRequest) -> Decimal | None:
        """A live request's worst-case cost, where a budget needs it (`budgeted`); None where none does."""
        if not self.budgeted:
            return None
        return worst_case_of(request, mode=BatchProcessingMode.LIVE, provider=self.actor.configuration.provider)

    def max_requests(self) -> int:
        settings = self.actor.configuration.batch
        limit = self.codec.limits.max_requests
        return min(self.items_per_batch or limit, settings.max_batch_requests, limit)

    def worst_case(self, params: Mapping[str, Any] | str) -> Decimal | None:
        """A request's worst-case cost, where a budget needs it (`budgeted`); None where none does (pricing each of
        100,000 requests costs a tenth of a second per thousand, for nothing)."""
        if not self.budgeted:
            return None
        if isinstance(params, str):
            return self.codec.worst_case_usd(json.loads(params), params, mode=BatchProcessingMode.BATCH)
        return self.codec.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)

    @property
    def budgeted(self) -> bool:
        """Whether a cost limit counts this run's requests: the run's own, its actor's (which counts what the
        actor's requests in the ledger may cost, these among them), or its owner's caps (`calls.owners`)."""
        configuration = self.actor.configuration
        return self.max_cost_usd is not None or configuration.max_cost_usd is not None or owner_of(configuration).known

    def max_bytes(self) -> int:
        return min(self.actor.configuration.batch.max_batch_bytes, self.codec.limits.max_bytes)

    def _request_params(self, job: Job, *, with_content: bool = True) -> dict[str, Any]:
        return self.codec.encode_request(self.job_request(job, with_content=with_content))

    def job_request(self, job: Job, *, with_content: bool = True) -> ActorRequest:
        """The request of a job; without content, a stand-in text (to check a job without reading files)."""
        citations = job.citations if job.citations is not None else self.citations
        if with_content:
            messages: list[Any] = job_messages(job, citations=citations)
        elif job.messages is not None:
            messages = [message.model_dump() for message in job.messages]
        else:
            messages = [{"role": "user", "content": job.prompt or "-"}]
        return self.actor.request(
            messages=messages, response_model=self.response_model, **{**self.defaults, **job.overrides}
        )

    @property
    def codec(self) -> BatchCodec:
        """The actor's batch codec: enough to build, size and price requests, with no key (a dry run)."""
        codec = self._codec
        if codec is None:  # looked up once: it is asked for several times per item
            codec = self._codec = self.actor.batch_codec("bulk runs (durable batch mode)")
        return codec

    def built(self, prepared: Prepared, indexes: Sequence[int]) -> Iterator[tuple[int, dict[str, Any] | str, int]]:
        """(index, params, size) for `indexes`, built one at a time as they are consumed. A prompt-only job's params
        are their JSON, made from the run's template (`PlainJobs`)."""
        plain, codec = self._plain, self.codec
        for index in indexes:
            prompt = self.plain_prompt(index) if plain is not None else None
            if plain is not None and prompt is not None:
                params: dict[str, Any] | str = plain.params_json(prompt)
                size = codec.request_size(codec.custom_id_for(prepared.keys[index], prepared.identity), params)
            else:
                params = self._request_params(self.jobs[index])
                size = codec.request_size(
                    codec.custom_id_for(prepared.keys[index], prepared.identity), params_text(params)
                )
            yield index, params, size

    def model_of(self, params: Mapping[str, Any] | str) -> str:
        """The model of params `built` gave."""
        if isinstance(params, str):
            assert self._plain is not None
            return self._plain.model
        return self.codec.model_of(params)

    def plain_prompt(self, index: int) -> str | None:
        """Job `index`'s prompt when the run's template makes its request (a prompt alone, or with an id only)."""
        prompt = self.jobs.prompt_alone(index)
        return prompt if prompt is not None else PlainJobs.prompt_of(self.jobs[index])

    def _plain_jobs(self) -> PlainJobs | None:
        """The template of this run's prompt-only jobs, or None when the general path must build each (a request
        that cannot be built says so, with its job, there)."""
        try:
            return PlainJobs.of(
                lambda prompt: self._request_params(Job(prompt=prompt)),
                lambda prompt: self.job_request(Job(prompt=prompt)),
            )
        except ConfigurationError:
            return None
