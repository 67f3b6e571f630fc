"""Steps for a rebuilt ledger on every store (features/ledger_store.feature): its rows loaded with the lost ledger's
identity, and a request whose key was not known taken over by the claim whose custom id is its own."""

from __future__ import annotations

import re

from _stores import reopened
from ledger_store_steps import Context, _request, contract
from step_context import then, when

from lowtide.ledger.inline import async_ledger
from lowtide.ledger.records import UNKNOWN_PARAMS, NewRequest, RequestRecord, stored_json


def _answer(text: str) -> str:
    return stored_json({"text": text, "content": [{"type": "text", "text": text}], "model": "claude-sonnet-5-5"})


@when(
    'the rows of a rebuilt ledger of identity "{identity}" are loaded into it: the batch "{batch}" answered {keyed},'
    ' and the custom id "{custom_id}" whose key was not known'
)
def step_load_rebuilt(context: Context, identity: str, batch: str, keyed: str, custom_id: str) -> None:
    c = contract(context)
    unkeyed = f"rebuilt:{custom_id}"
    known = _request(keyed)
    params = stored_json(known.params)
    rows = {
        "batches": [
            (batch, "anthropic", "https://api.example", f"api-{batch}", "collected", "ended", 2, 0, 1000.0, 1000.0,
             1000.0, 1000.0, '{"succeeded":2}', None, None, None, "rebuilt from the API (lowtide ledger rebuild)",
             None, None),
        ],
        "requests": [
            (keyed, known.custom_id, "planner", known.model, params, len(params), "submitting", batch, 1, 1, None,
             1000.0, 1000.0, None, None),
            (unkeyed, custom_id, "planner", "", UNKNOWN_PARAMS, 2, "submitting", batch, 1, 1, None, 1000.0, 1000.0,
             None, None),
        ],
        "batch_members": [(batch, known.custom_id, keyed), (batch, custom_id, unkeyed)],
        "results": [
            (batch, keyed, "succeeded", _answer(f"Answer {keyed}"), None, "0.5", "1", 1000.0),
            (batch, unkeyed, "succeeded", _answer("Answer beta"), None, "0.25", "0.5", 1000.0),
        ],
    }  # fmt: skip
    written = c.store.load(((table, [table_rows]) for table, table_rows in rows.items()), identity=identity)
    assert written == {"batches": 1, "requests": 2, "batch_members": 2, "results": 2}, written


@then('the store\'s identity is "{identity}", the same when it is opened again')
def step_identity_taken(context: Context, identity: str) -> None:
    store = contract(context).store
    assert store.identity() == identity, store.identity()
    assert reopened(context, store).identity() == identity


@then("the store holds rebuilt requests whose keys are not known")
def step_holds_unkeyed(context: Context) -> None:
    store = contract(context).store
    assert store.unkeyed()
    assert context.runner.run(_unkeyed_awaited(context))


@then("the store holds no rebuilt request whose key is not known")
def step_holds_no_unkeyed(context: Context) -> None:
    store = contract(context).store
    assert not store.unkeyed()
    assert not context.runner.run(_unkeyed_awaited(context))
    assert not [r.key for r in store.requests() if r.key.startswith("rebuilt:")]


async def _unkeyed_awaited(context: Context) -> bool:
    return await async_ledger(contract(context).store).unkeyed()


@when(
    'the requests {keys} are claimed by "{owner}" until {until:g} at {now:g} on the {face:w} face, taking over first'
    " the rebuilt requests of their custom ids"
)
def step_claim_adopting(context: Context, keys: str, owner: str, until: float, now: float, face: str) -> None:
    c = contract(context)
    requests: list[NewRequest] = [_request(key) for key in re.split(r",\s*", keys)]
    if face == "sync":
        c.store.adopt_unkeyed(requests)
        c.inserted, c.known = c.store.claim_new(requests, owner=owner, until=until, now=now)
        return

    async def awaited() -> tuple[dict[str, str], list[RequestRecord]]:
        store = async_ledger(c.store)
        await store.adopt_unkeyed(requests)
        return await store.claim_new(requests, owner=owner, until=until, now=now)

    c.inserted, c.known = context.runner.run(awaited())


@then("the claim inserted {inserted}, and knew {known}, each in its batch, owned by none")
def step_claimed_rebuilt(context: Context, inserted: str, known: str) -> None:
    c = contract(context)
    assert sorted(c.inserted) == re.split(r",\s*", inserted), c.inserted
    assert sorted(r.key for r in c.known) == re.split(r",\s*", known), c.known
    for record in c.known:
        assert (record.owner, record.batch_id, record.state.value) == (None, "b1", "succeeded"), record


_ANSWERED = 'the requests {first} and {second} were answered "{answer1}" and "{answer2}" in the batch "{batch}"'


@then(_ANSWERED + ", whose members they are")
def step_rebuilt_answers(context: Context, first: str, second: str, answer1: str, answer2: str, batch: str) -> None:
    store = contract(context).store
    for key, answer in ((first, answer1), (second, answer2)):
        record = store.request(key)
        assert record is not None, key
        assert (record.response or {}).get("text") == answer, record.response
        assert record.batch_id == batch, record
    assert sorted(store.members(batch).values()) == sorted([first, second]), store.members(batch)
