"""What the batch providers' steps share: a program that died in the middle of a create, as the ledger holds it; a
later program's wait for a key; the answers' batch prices; a cancelled batch with nothing answered."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from _support import World, dead_intent

from lowtide import Actor, ActorError, ActorResponse, BatchProcessingMode
from lowtide.batching.backend import BatchBackend
from lowtide.cost.pricing import cost_of
from lowtide.ledger.store import LedgerStore, NewRequest, stored_json
from lowtide.providers import Phase, ResultLine
from lowtide.providers.openai.batch_backend import ENDPOINT_STEP
from lowtide.providers.openai_compatible.batch_backend import INPUT_FILE_STEP

DEAD_OWNER = "host:999999:dead"
"""The owner ids of a program that died: no host runs it, and its lease has ended."""


@dataclass(frozen=True)
class DeadProgram:
    """A request a dead program claimed and the intent it recorded for it, before the rest of its create."""

    batch_id: str
    key: str
    custom_id: str
    model: str
    params: dict[str, Any]
    body: bytes
    """The batch's input, as the provider's codec encodes it (its size is the intent's)."""
    ledger: LedgerStore


def dead_program(
    w: World,
    key: str,
    prompt: str,
    batch_id: str,
    *,
    backend: BatchBackend | None = None,
    model: str | None = None,
    body: Callable[[str, dict[str, Any]], bytes] | None = None,
) -> DeadProgram:
    """The current actor's request for `prompt` claimed under `key` by a program that died, and its intent
    `batch_id` recorded two minutes ago; `body` encodes the input when the codec's own encoding is not what the
    program wrote."""
    actor = w.current_actor()
    backend = backend or actor.batch_backend()
    params: dict[str, Any] = backend.codec.encode_request(actor.request(prompt))
    custom_id = w.custom_id(key)
    ledger = w.ledger()
    now = w.clock.now()
    model = model or backend.codec.model_of(params)
    request = NewRequest(key=key, custom_id=custom_id, actor=actor.name, model=model, params=params)
    ledger.claim([request], owner=DEAD_OWNER, until=now - 1, now=now)
    data = body(custom_id, params) if body else backend.codec.encode([(custom_id, stored_json(params))])
    member = (key, custom_id)
    ledger.record_intent(dead_intent(batch_id, backend, member, len(data), DEAD_OWNER, now, recorded=now - 120))
    return DeadProgram(batch_id, key, custom_id, model, params, data, ledger)


def later_result(w: World, actor: Actor, key: str) -> None:
    """A later program's wait for `key`'s result: the answer, or the error, kept for the steps that follow."""
    w.error = None
    try:
        w.response = w.in_program(lambda: actor.result(key))
    except ActorError as exc:
        w.response, w.error = None, exc


def asked_answers(w: World) -> list[ActorResponse[Any]]:
    """Every answer the scenario asked for by key, else its one answer; anything else fails the step."""
    outcomes: Iterable[object] = list(w.asked.values()) or [w.answer()]
    answers: list[ActorResponse[Any]] = []
    for outcome in outcomes:
        assert isinstance(outcome, ActorResponse), outcome
        answers.append(outcome)
    return answers


def assert_batch_priced(w: World, provider: str, *, output: bool = False) -> None:
    """Every answer was `provider`'s, priced at batch prices: half the live equivalent (and, `output`, with output
    tokens reported)."""
    for answer in asked_answers(w):
        cost = answer.cost
        assert cost is not None, answer
        assert cost.pricing == "batch", cost
        assert cost.total_usd > 0, cost
        assert cost.total_usd * 2 == cost.live_equivalent_usd, cost
        assert answer.provider == provider, answer
        assert not output or answer.usage.output_tokens > 0, answer


def assert_priced(answers: Iterable[ActorResponse[Any]], model: str, provider: str, mode: BatchProcessingMode) -> None:
    """Every answer priced as genai-prices prices its usage of `model` at `provider`'s prices of `mode` (batch
    prices half the live ones)."""
    for answer in answers:
        cost = answer.cost
        assert cost is not None, answer
        expected = cost_of(answer.usage, model, mode=mode, provider=provider)
        assert expected is not None, answer.usage
        assert cost.total_usd == expected.total_usd, (cost, expected)
        assert cost.pricing == mode.value, cost
        if mode is BatchProcessingMode.BATCH:
            assert cost.total_usd > 0, cost
            assert cost.total_usd * 2 == cost.live_equivalent_usd, cost


def assert_cancelled_unanswered(w: World, canceled: int, key: str) -> None:
    """The ledger's one batch, retrieved again, has ended cancelled: `canceled` requests canceled, none answered, no
    result line, and `key`'s line is the API's cancellation."""
    [recorded] = w.ledger().batches()
    backend = w.current_actor().batch_backend()
    batch = w.run(backend.retrieve(recorded.provider_batch_id or ""))
    assert batch.phase is Phase.ENDED, batch
    assert batch.cancel_requested, batch
    assert (batch.counts.canceled, batch.counts.succeeded) == (canceled, 0), batch.counts
    lines: list[ResultLine] = []
    w.run(backend.stream_results(batch, lambda line: lines.append(line) if isinstance(line, dict) else None))
    assert lines == [], lines
    unanswered = backend.unanswered_line(batch, w.custom_id(key))
    assert unanswered is not None, batch
    assert unanswered["error"]["code"] == "batch_cancelled", unanswered


def dead_after_openai_upload(w: World, key: str, prompt: str, batch_id: str, endpoint: str) -> None:
    """A dead program's intent whose input file it uploaded through the scenario's openai client and recorded as
    its steps (`endpoint` its batch's), before creating the batch; witnessed as "orphan": its id and the file's."""
    dead = dead_program(w, key, prompt, batch_id)

    async def upload() -> str:
        uploaded = await w.client.files.create(file=("orphan.jsonl", dead.body, "application/jsonl"), purpose="batch")
        return uploaded.id

    file_id = w.run(upload())
    dead.ledger.record_create_step(batch_id, ENDPOINT_STEP, endpoint)
    dead.ledger.record_create_step(batch_id, INPUT_FILE_STEP, file_id)
    w.witnessed["orphan"] = [batch_id, file_id]
    w.emu.calls.clear()
