"""Steps for `BatchEngine.on_results`: each chunk of a batch's results handed over as the API sent it."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2
from _support import names, world
from step_context import Context as StepContext
from step_context import given, then

from lowtide import BatchProcessingMode
from lowtide.batching.backend import ResultLine, UnreadableLine
from lowtide.batching.engine import collecting as collection
from lowtide.batching.engine.registry import engine_for
from lowtide.ledger.store import RequestState


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    handed: _Handed


@dataclass
class _Handed:
    """What the hook was given: (ledger batch id, API batch id, lines), and what the ledger held at that moment."""

    calls: list[tuple[str, str, list[ResultLine | UnreadableLine]]] = field(
        default_factory=list[tuple[str, str, list[ResultLine | UnreadableLine]]]
    )
    unstored: list[str] = field(default_factory=list[str])
    log: list[logging.LogRecord] = field(default_factory=list[logging.LogRecord])


def _handed(context: Context) -> _Handed:
    if not hasattr(context, "handed"):
        context.handed = _Handed()
    handed: _Handed = context.handed
    return handed


def _attach_hook(context: Context, *, fails: bool) -> None:
    """Set `on_results` on the engine the actor's batch-mode calls will use (the loop's engine for its settings)."""
    w = world(context)
    handed = _handed(context)
    actor = w.current_actor()
    ledger = w.ledger()

    def hook(batch_id: str, provider_batch_id: str, lines: Sequence[ResultLine | UnreadableLine]) -> None:
        handed.calls.append((batch_id, provider_batch_id, list(lines)))
        keys = ledger.members(batch_id)  # custom id -> key
        for line in lines:
            custom_id = str(line.custom_id if isinstance(line, UnreadableLine) else line["custom_id"])
            record = ledger.request(keys.get(custom_id, ""))
            if record is None or record.state is not RequestState.SUCCEEDED:
                handed.unstored.append(custom_id)
        if fails:
            raise OSError("the results folder is full")

    async def attach() -> None:
        backend = actor.provider(BatchProcessingMode.BATCH).batch_backend()
        assert backend is not None, actor.configuration.provider
        engine = engine_for(backend, ledger, settings=actor.configuration.batch, clock=w.clock)
        engine.on_results = hook

    w.run(attach())
    if fails:
        handed.log = w.keep_log("lowtide.batching.engine.batch_engine", logging.ERROR)


@given("the actor's batch engine hands each chunk of results to a hook")
def step_hook(context: Context) -> None:
    _attach_hook(context, fails=False)


@given("the actor's batch engine hands each chunk of results to a hook that fails")
def step_failing_hook(context: Context) -> None:
    _attach_hook(context, fails=True)


def _lines(context: Context) -> list[ResultLine]:
    """The lines handed over, all read (these scenarios' API sends no unreadable line)."""
    handed = [line for _, _, lines in _handed(context).calls for line in lines]
    read = [line for line in handed if not isinstance(line, UnreadableLine)]
    assert len(read) == len(handed), handed
    return read


@then("the hook was given each of these results once, as the API sent them: {keys}")
def step_hook_results(context: Context, keys: str) -> None:
    w = world(context)
    lines = _lines(context)
    given = Counter(str(line["custom_id"]) for line in lines)
    assert given == Counter(w.custom_id(key) for key in names(keys)), f"the hook was given {dict(given)}"
    [batch_id] = {provider_batch_id for _, provider_batch_id, _ in _handed(context).calls}

    async def download() -> dict[str, Any]:
        # The results file as the API serves it, each line decoded by nothing but `json.loads`.
        client = w.emu.client()
        batch = await client.messages.batches.retrieve(batch_id)
        assert batch.results_url is not None, batch
        response = await client.get(batch.results_url, cast_to=httpx2.Response)
        return {line["custom_id"]: line for line in map(json.loads, response.text.splitlines())}

    sent = w.run(download())
    for line in lines:
        assert line == sent[line["custom_id"]], f"the hook was given {line}, the API sent {sent[line['custom_id']]}"


@then("the hook was given each of the {count:d} results once")
def step_hook_count(context: Context, count: int) -> None:
    given = Counter(str(line["custom_id"]) for line in _lines(context))
    assert len(given) == count, f"the hook was given {len(given)} results"
    assert set(given.values()) == {1}, f"some results were given more than once: {dict(given)}"


@given("a batch's results are stored {first:d} at a time at first, then twice as many each time, at most {most:d}")
def step_chunk_sizes(context: Context, first: int, most: int) -> None:
    """The sizes lowtide uses (2,000 growing to 10,000), made small so that a scenario sees them grow in a moment."""
    defaults = (collection.RESULTS_PER_TRANSACTION, collection.MOST_RESULTS_PER_TRANSACTION)
    assert defaults == (2000, 10_000), defaults
    collection.RESULTS_PER_TRANSACTION, collection.MOST_RESULTS_PER_TRANSACTION = first, most

    def restore() -> None:
        collection.RESULTS_PER_TRANSACTION, collection.MOST_RESULTS_PER_TRANSACTION = defaults

    world(context).cleanups.append(restore)


@then("the hook was given chunks of {sizes} results, in that order")
def step_hook_chunks(context: Context, sizes: str) -> None:
    given = [len(lines) for _, _, lines in _handed(context).calls]
    wanted = [int(size) for size in sizes.replace(" and ", ", ").split(", ")]
    assert given == wanted, f"the hook was given chunks of {given}"


@then("every result the hook was given was already stored in the ledger when it got it")
def step_hook_after_store(context: Context) -> None:
    handed = _handed(context)
    assert handed.calls, "the hook was never called"
    assert not handed.unstored, f"the hook got {handed.unstored} before they were stored"


@then("the hook was given the ledger's id and the API's id of the batch")
def step_hook_ids(context: Context) -> None:
    [batch] = world(context).ledger().batches()
    ids = {(batch_id, provider_batch_id) for batch_id, provider_batch_id, _ in _handed(context).calls}
    assert ids == {(batch.id, batch.provider_batch_id)}, f"the hook was given {ids}; the ledger has {batch}"


@then("the failure of the hook was logged, naming the batch")
def step_hook_logged(context: Context) -> None:
    handed = _handed(context)
    [batch] = world(context).ledger().batches()
    assert len(handed.log) == len(handed.calls) >= 1, f"{len(handed.log)} errors logged, {len(handed.calls)} calls"
    message = handed.log[0].getMessage()
    assert str(batch.provider_batch_id) in message, message
    assert "stored all the same" in message, message
    exc_info = handed.log[0].exc_info
    assert exc_info is not None, "the error was logged without its traceback"
    assert "the results folder is full" in str(exc_info[1]), exc_info
