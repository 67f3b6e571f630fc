"""Steps for exactly-once submission: what the ledger had committed when the API was called, lost creates, and
batches that are not ours."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from _support import committed, world
from step_context import Context, given, then

if TYPE_CHECKING:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

_ROUTES = {
    "the create": "batches.create",
    "the first status check": "batches.retrieve",
    "first asked for its list of batches": "batches.list",
}


@given("the ledger is read whenever the API is called")
def step_witness(context: Context) -> None:
    """Before each batch call reaches the API, read what the ledger had committed, as another process would."""
    w = world(context)

    def witness(route: str) -> None:
        seen = committed(os.environ["LOWTIDE_LEDGER"])
        if seen is not None:
            w.witnessed.setdefault(route, []).append(seen)

    for route in set(_ROUTES.values()):
        w.hooks.before_every(route, lambda route=route: witness(route))


def _check_witnessed(context: Context, route: str) -> None:
    w = world(context)
    seen = w.witnessed.get(route)
    assert seen, f"the API was never called on {route}"
    state = seen[0]
    [row] = context.table
    [batch] = state["batches"]
    requests = {request["key"]: request for request in state["requests"]}
    request = requests[row["request"]]
    assert batch["state"] == row["batch state"], batch
    assert ("yes" if batch["provider_batch_id"] else "no") == row["API batch"], batch
    if "note" in context.table.headings:
        assert (batch["note"] or "") == row["note"], batch["note"]
    assert request["state"] == row["request state"], request
    assert request["batch_id"] == batch["id"], (request, batch)
    if "attempts" in context.table.headings:
        assert str(request["attempts"]) == row["attempts"], request


@then("when the API received {call}, the ledger had committed:")
def step_witnessed(context: Context, call: str) -> None:
    _check_witnessed(context, _ROUTES[call])


@then("when the API was {call}, the ledger had committed:")
def step_witnessed_list(context: Context, call: str) -> None:
    _check_witnessed(context, _ROUTES[call])


@given("the API will commit the next batch but drop the connection before answering")
def step_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("batches.create")


@then("the second batch was recorded {seconds:g} seconds after the first: the grace period, then the coalescing window")
def step_second_batch_after(context: Context, seconds: float) -> None:
    w = world(context)
    first, second = w.ledger().batches()
    settings = w.current_actor().configuration.batch
    assert seconds == settings.reconcile_grace + settings.coalesce_window, settings
    assert second.intent_at - first.intent_at == seconds, (first.intent_at, second.intent_at)


@given('another client creates a batch asking "{prompt}" as lowtide first lists the batches')
def step_foreign_batch(context: Context, prompt: str) -> None:
    w = world(context)
    other = w.emu.client(api_key="sk-ant-someone-else")
    w.cleanups.append(other.close)
    params: MessageCreateParamsNonStreaming = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": prompt}],
    }

    async def create() -> None:
        batch = await other.messages.batches.create(requests=[{"custom_id": "theirs", "params": params}])
        w.value = {"foreign batch": batch.id}

    w.hooks.before("batches.list", create)


@then("the answer did not come from the other client's batch")
def step_not_foreign(context: Context) -> None:
    w = world(context)
    foreign = w.value["foreign batch"]
    answer = w.answer()
    assert answer.ids.batch_id != foreign, answer.ids
    assert [custom_id for custom_id, _ in w.emu.batch(foreign).requests] == ["theirs"]


@given('the API\'s results will name the request "{key}" "{other}" instead')
def step_results_rename(context: Context, key: str, other: str) -> None:
    w = world(context)

    def rename(body: bytes) -> bytes:
        old, new = f'"custom_id":"{w.custom_id(key)}"'.encode(), f'"custom_id":"{other}"'.encode()
        assert old in body, body[:200]
        return body.replace(old, new)

    w.hooks.rewrites["batches.results"] = rename


@then("the ledger counts nothing of the other client's batch")
def step_foreign_not_counted(context: Context) -> None:
    w = world(context)
    ledger = w.ledger()
    foreign = ledger.batch(w.value["foreign batch"])
    assert foreign is not None, "the other client's batch is not kept apart in the ledger"
    assert (foreign.id, foreign.counts, foreign.request_count) == (f"foreign-{foreign.provider_batch_id}", None, 0)
    assert not ledger.members(foreign.id), ledger.members(foreign.id)
    answer = w.answer()
    assert answer.cost is not None, answer
    assert ledger.committed_usd(w.current_actor().name) == answer.cost.total_usd, ledger.committed_usd("x")
