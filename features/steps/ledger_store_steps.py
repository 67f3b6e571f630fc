"""Steps of ledger_store.feature: the `LedgerStore` contract, driven through the interface alone on whichever store
the scenario's Examples name (`_stores.open_store`), with every time given outright."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from _stores import open_store, reopened
from _support import names, shown
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.errors import LedgerError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.quota_records import ScopeState
from lowtide.ledger.records import (
    BatchClaim,
    BatchCreated,
    BatchIntent,
    BatchState,
    KeyAnswer,
    KeyState,
    NewRequest,
    OutcomeRow,
    RequestRecord,
    RequestState,
)
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.runs import ItemOutcome, ItemRow, LiveAnswer, NewItem


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    contract: Contract


PROVIDER = "anthropic"
ENDPOINT = "https://api.anthropic.test"
ACTOR = "planner"


@dataclass
class Contract:
    store: LedgerStore
    claimed: list[RequestRecord] = field(default_factory=list[RequestRecord])
    inserted: dict[str, str] = field(default_factory=dict[str, str])
    known: list[RequestRecord] = field(default_factory=list[RequestRecord])
    created: bool | None = None
    jobs: dict[str, dict[int, dict[str, Any] | str]] = field(default_factory=dict[str, dict[int, dict[str, Any] | str]])
    """The inputs each run was first created with, by item."""
    cursors: dict[str, int] = field(default_factory=dict[str, int])
    """By batch, the cursor of its results read so far (`results_since`)."""
    taken: set[str] = field(default_factory=set[str])
    """The keys the last `take_over_many` took."""
    other: LedgerStore | None = None
    """The same ledger opened again, as another process would."""
    new_keys: list[str] = field(default_factory=list[str])
    """The keys of the new requests of the last claim of many, in the order claimed."""

    @property
    def runs(self) -> RunLedger:
        return self.store.run_store


def contract(context: Context) -> Contract:
    found = getattr(context, "contract", None)
    assert isinstance(found, Contract), "no store: add 'Given a <store> ledger store'"
    return found


def _request(key: str, *, prompt: str | None = None, actor: str = ACTOR, **options: Any) -> NewRequest:
    params = {"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": [{"role": "user", "content": prompt}]}
    params["messages"][0]["content"] = prompt if prompt is not None else f"Plan {key}"
    return NewRequest(key, f"c-{key}", actor, "claude-sonnet-5-5", params, **options)


def _prompt(params: dict[str, Any]) -> str:
    return str(params["messages"][0]["content"])


def _money(text: str) -> Decimal | None:
    return Decimal(text) if text else None


def _time(text: str) -> float | None:
    return float(text) if text else None


def _none_or(text: str) -> list[str]:
    return [] if text in ("none", "") else names(text)


def _check(label: str, column: str, actual: object, expected: str) -> None:
    if isinstance(actual, float) or (isinstance(actual, int) and not isinstance(actual, bool) and expected):
        assert actual == _time(expected), f"{label}: {column} is {actual!r}, not {expected!r}"
    elif isinstance(actual, Decimal):
        assert actual == _money(expected), f"{label}: {column} is {actual!r}, not {expected!r}"
    else:
        assert shown(actual) == expected, f"{label}: {column} is {shown(actual)!r}, not {expected!r}"


# -- the store and its requests --------------------------------------------------------------------------------------


@given("a {kind:w} ledger store")
def step_store(context: Context, kind: str) -> None:
    context.contract = Contract(open_store(context, kind))


@given('the requests {keys} are claimed by "{owner}" until {until:g} at {now:g}')
@when('the requests {keys} are claimed by "{owner}" until {until:g} at {now:g}')
def step_claim(context: Context, keys: str, owner: str, until: float, now: float) -> None:
    c = contract(context)
    c.claimed = c.store.claim([_request(key) for key in names(keys)], owner=owner, until=until, now=now)


@when('the requests {keys} are claimed anew by "{owner}" until {until:g} at {now:g} through {opening}')
def step_claim_through(context: Context, keys: str, owner: str, until: float, now: float, opening: str) -> None:
    """`claim_new` through the scenario's store, or through the same ledger opened again, as another process would
    (one other opening for the whole scenario)."""
    c = contract(context)
    if opening == "the store":
        store = c.store
    else:
        assert opening == "another opening of the ledger", opening
        if c.other is None:
            c.other = reopened(context, c.store)
        store = c.other
    requests = [_request(key) for key in names(keys)]
    c.inserted, c.known = store.claim_new(requests, owner=owner, until=until, now=now)


@given('these requests are claimed by "{owner}" until {until:g} at {now:g}:')
@when('these requests are claimed by "{owner}" until {until:g} at {now:g}:')
def step_claim_table(context: Context, owner: str, until: float, now: float) -> None:
    c = contract(context)
    requests = [
        _request(
            row["key"],
            prompt=row.get("prompt") or None,
            actor=row.get("actor") or ACTOR,
            max_attempts=int(row.get("max attempts") or 1),
            worst_case_usd=_money(row.get("worst case") or ""),
        )
        for row in (r.as_dict() for r in context.table)
    ]
    c.inserted, c.known = c.store.claim_new(requests, owner=owner, until=until, now=now)


@when(
    '{count:d} new requests, with {first} first and {last} last, are claimed by "{owner}" until {until:g} at {now:g}'
    " on the {face:w} face"
)
def step_claim_many_known(
    context: Context, count: int, first: str, last: str, owner: str, until: float, now: float, face: str
) -> None:
    """A claim of many requests (a PostgreSQL store claims them hoping none is known, `claims.hoped`), known keys at
    its two ends: the last is met once every new one before it is inserted."""
    c = contract(context)
    c.new_keys = [f"new-{owner}-{index:05d}" for index in range(count)]
    requests = [_request(first), *(_request(key) for key in c.new_keys), _request(last)]
    c.inserted, c.known = _claim_new(context, requests, owner=owner, until=until, now=now, face=face)


@when('{count:d} other new requests are claimed by "{owner}" until {until:g} at {now:g} on the {face:w} face')
def step_claim_many_new(context: Context, count: int, owner: str, until: float, now: float, face: str) -> None:
    c = contract(context)
    c.new_keys = [f"new-{owner}-{index:05d}" for index in range(count)]
    requests = [_request(key) for key in c.new_keys]
    c.inserted, c.known = _claim_new(context, requests, owner=owner, until=until, now=now, face=face)


def _claim_new(
    context: Context, requests: list[NewRequest], *, owner: str, until: float, now: float, face: str
) -> tuple[dict[str, str], list[RequestRecord]]:
    store = contract(context).store
    if face == "sync":
        return store.claim_new(requests, owner=owner, until=until, now=now)

    async def awaited_face() -> tuple[dict[str, str], list[RequestRecord]]:
        return await async_ledger(store).claim_new(requests, owner=owner, until=until, now=now)

    return context.runner.run(awaited_face())


@then('the claim inserted the {count:d} new requests, and handed back the records of {known} owned by "{owner}"')
def step_claimed_many(context: Context, count: int, known: str, owner: str) -> None:
    c = contract(context)
    _inserted_new(c, count)
    assert [r.key for r in c.known] == names(known), [r.key for r in c.known]
    assert {r.owner for r in c.known} == {owner}, [r.owner for r in c.known]


@then("the claim inserted the {count:d} new requests, and knew no key")
def step_claimed_many_new(context: Context, count: int) -> None:
    c = contract(context)
    _inserted_new(c, count)
    assert c.known == [], [r.key for r in c.known]


def _inserted_new(c: Contract, count: int) -> None:
    assert len(c.inserted) == count, len(c.inserted)
    assert list(c.inserted) == c.new_keys, list(c.inserted)[:3]
    for key, params in c.inserted.items():
        assert _prompt(json.loads(params)) == f"Plan {key}", (key, params)


@then(
    'the store has {count:d} requests: {first} and {last} as "{owner}" claimed them, the {new:d} new ones pending for'
    ' "{claimer}"'
)
def step_many_claimed_read(
    context: Context, count: int, first: str, last: str, owner: str, new: int, claimer: str
) -> None:
    c = contract(context)
    records = {r.key: r for r in c.store.requests()}
    assert len(records) == count, len(records)
    for key in (first, last):
        record = records[key]
        assert (record.owner, record.owner_until, _prompt(record.params)) == (owner, 1100, f"Plan {key}")
    fresh = [records[key] for key in c.new_keys]
    assert len(fresh) == new
    assert {(r.state, r.owner, r.owner_until, r.attempts) for r in fresh} == {
        (RequestState.PENDING, claimer, 1200, 0)
    }, {(r.state, r.owner, r.owner_until, r.attempts) for r in fresh}


@when(
    'the request {traced} is claimed with the trace context "{trace}", and {plain} without one, by "{owner}" until'
    " {until:g} at {now:g}"
)
def step_claim_traced(
    context: Context, traced: str, trace: str, plain: str, owner: str, until: float, now: float
) -> None:
    carrier = f'{{"traceparent":"{trace}"}}'
    requests = [_request(traced, trace=carrier), _request(plain)]
    contract(context).store.claim_new(requests, owner=owner, until=until, now=now)


@then('the store, opened again, has the trace context "{trace}" for {traced}, and none for {others}')
def step_traces(context: Context, trace: str, traced: str, others: str) -> None:
    store = reopened(context, contract(context).store)
    found = store.traces_of([traced, *names(others)])
    assert found == {traced: f'{{"traceparent":"{trace}"}}'}, found


@then('the claim inserted {inserted}, and knew {known} owned by "{owner}"')
def step_claim_new_answer(context: Context, inserted: str, known: str, owner: str) -> None:
    c = contract(context)
    assert sorted(c.inserted) == sorted(names(inserted)), c.inserted
    assert [r.key for r in c.known] == names(known), c.known
    assert all(r.owner == owner for r in c.known), c.known
    for key, params in c.inserted.items():
        stored = c.store.request(key)
        assert stored is not None, key
        assert stored.params_bytes == len(params), (stored.params_bytes, params)


@then("the claim handed back the records of {keys}, owned by {owners}")
def step_claim_answer(context: Context, keys: str, owners: str) -> None:
    c = contract(context)
    assert [r.key for r in c.claimed] == names(keys), c.claimed
    assert [r.owner for r in c.claimed] == names(owners), c.claimed


@then('the request "{key}" asks "{prompt}"')
def step_request_asks(context: Context, key: str, prompt: str) -> None:
    record = contract(context).store.request(key)
    assert record is not None, key
    assert _prompt(record.params) == prompt, record.params


_REQUEST_FIELDS = {
    "state": lambda r: r.state,
    "batch": lambda r: r.batch_id,
    "attempts": lambda r: r.attempts,
    "owner": lambda r: r.owner,
    "until": lambda r: r.owner_until,
    "updated": lambda r: r.updated_at,
    "answer": lambda r: (r.response or {}).get("text"),
    "cost": lambda r: r.cost_usd,
    "live cost": lambda r: r.live_cost_usd,
}


@then("the store reads these requests:")
def step_requests_read(context: Context) -> None:
    store = contract(context).store
    rows = [row.as_dict() for row in context.table]
    # Read one by one and all at once: both are how callers read them.
    together = {r.key: r for r in store.requests_for([row["key"] for row in rows])}
    # And their states alone (`states_of`), which must say what the records say.
    states = {s.key: s for s in store.states_of([row["key"] for row in rows])}
    for row in rows:
        record = store.request(row["key"])
        assert record is not None, f"the store has no request {row['key']!r}"
        assert together[row["key"]] == record, (together[row["key"]], record)
        alone = KeyState(record.key, record.state, record.batch_id, record.owner, record.owner_until)
        assert states[row["key"]] == alone, (states, record)
        for column, expected in row.items():
            if column != "key":
                _check(row["key"], column, _REQUEST_FIELDS[column](record), expected)


@then("the store reads the states of {keys} as:")
def step_states_read(context: Context, keys: str) -> None:
    """`states_of`, on the store's sync face and its awaited one: the keys it knows, in the order asked."""
    c = contract(context)
    found = c.store.states_of(names(keys))

    async def awaited_face() -> list[KeyState]:  # the async face is made inside the loop that awaits it
        return await async_ledger(c.store).states_of(names(keys))

    awaited = context.runner.run(awaited_face())
    assert awaited == found, (awaited, found)
    expected = [
        (row["key"], RequestState(row["state"]), row["batch"] or None, row["owner"] or None) for row in context.table
    ]
    assert [(s.key, s.state, s.batch_id, s.owner) for s in found] == expected, (found, expected)


@then("the store holds these requests in the state {state}: {keys}")
def step_requests_in_state(context: Context, state: str, keys: str) -> None:
    found = contract(context).store.requests(states=[RequestState(state)])
    assert [r.key for r in found] == names(keys), [r.key for r in found]


@then("the store holds these requests of the {actor:w}: {keys}")
def step_requests_of_actor(context: Context, actor: str, keys: str) -> None:
    found = contract(context).store.requests(actor=actor)
    assert [r.key for r in found] == names(keys), [r.key for r in found]


@then('the store holds these requests in the batch "{batch}": {keys}')
def step_requests_in_batch(context: Context, batch: str, keys: str) -> None:
    found = contract(context).store.requests(batch_id=batch)
    assert [r.key for r in found] == names(keys), [r.key for r in found]


@given('{keys} is requeued by "{owner}" until {until:g} at {now:g}')
@when('{keys} is requeued by "{owner}" until {until:g} at {now:g}')
def step_requeue(context: Context, keys: str, owner: str, until: float, now: float) -> None:
    contract(context).store.requeue(names(keys), owner=owner, until=until, now=now)


@then("these take-overs go as follows, in order:")
def step_take_overs(context: Context) -> None:
    store = contract(context).store
    for number, row in enumerate(context.table, start=1):
        taken = store.take_over(
            row["key"],
            owner=row["owner"],
            until=float(row["until"]),
            now=float(row["at"]),
            dead_owner=row["dead owner"] or None,
        )
        assert taken == (row["taken"] == "yes"), f"take-over {number} ({dict(row.as_dict())}): taken is {taken}"


@when('"{owner}" takes over these requests at once until {until:g} at {now:g}:')
def step_take_over_many(context: Context, owner: str, until: float, now: float) -> None:
    """`take_over_many` on the store's sync face."""
    c = contract(context)
    keys = [(row["key"], row["dead owner"] or None) for row in context.table]
    c.taken = c.store.take_over_many(keys, owner=owner, until=until, now=now)


@when('"{owner}" takes over these requests at once, awaited, until {until:g} at {now:g}:')
def step_take_over_many_awaited(context: Context, owner: str, until: float, now: float) -> None:
    """`take_over_many` on the store's async face."""
    c = contract(context)
    keys = [(row["key"], row["dead owner"] or None) for row in context.table]

    async def awaited_face() -> set[str]:  # the async face is made inside the loop that awaits it
        return await async_ledger(c.store).take_over_many(keys, owner=owner, until=until, now=now)

    c.taken = context.runner.run(awaited_face())


@then("the take-overs took {keys}")
def step_taken_many(context: Context, keys: str) -> None:
    taken = contract(context).taken
    assert taken == set(_none_or(keys)), sorted(taken)


@then("the store's identity is 12 lowercase hex digits, the same each time it is read and when it is opened again")
def step_identity(context: Context) -> None:
    store = contract(context).store
    identity = store.identity()
    assert re.fullmatch(r"[0-9a-f]{12}", identity), identity
    assert store.identity() == identity
    again = reopened(context, store)
    assert again.identity() == identity, (again.identity(), identity)


@then("another new {kind:w} ledger store has an identity of its own")
def step_other_identity(context: Context, kind: str) -> None:
    other = open_store(context, kind, fresh=True)
    assert other.identity() != contract(context).store.identity(), other.identity()


@then("the {actor:w} has committed ${amount}")
def step_committed(context: Context, actor: str, amount: str) -> None:
    committed = contract(context).store.committed_usd(actor)
    assert committed == Decimal(amount), committed


# -- batches ---------------------------------------------------------------------------------------------------------


def _intent(
    context: Context, batch: str, keys: str, *, provider: str, endpoint: str, owner: str, until: float, now: float
) -> None:
    members = [(key, f"c-{key}") for key in names(keys)]
    contract(context).store.record_intent(
        BatchIntent(
            batch,
            provider=provider,
            endpoint=endpoint,
            members=members,
            request_bytes=100 * len(members),
            owner=owner,
            until=until,
            now=now,
        )
    )


@given('the batch "{batch}" is recorded holding {keys} by "{owner}" until {until:g} at {now:g}')
@when('the batch "{batch}" is recorded holding {keys} by "{owner}" until {until:g} at {now:g}')
def step_intent(context: Context, batch: str, keys: str, owner: str, until: float, now: float) -> None:
    _intent(context, batch, keys, provider=PROVIDER, endpoint=ENDPOINT, owner=owner, until=until, now=now)


@given('the batch "{batch}" of "{provider}" at "{endpoint}" is recorded holding {keys} at {now:g}')
def step_intent_elsewhere(context: Context, batch: str, provider: str, endpoint: str, keys: str, now: float) -> None:
    _intent(context, batch, keys, provider=provider, endpoint=endpoint, owner="worker-1", until=now + 100, now=now)


@given('"{batch}" is created as the API\'s batch "{api}" at {now:g}')
@when('"{batch}" is created as the API\'s batch "{api}" at {now:g}')
def step_submitted(context: Context, batch: str, api: str, now: float) -> None:
    contract(context).store.record_submitted(BatchCreated(batch, api, "running", now, request_id="req-1"))


@given('the create of "{batch}" has an unknown outcome: "{note}"')
@when('the create of "{batch}" has an unknown outcome: "{note}"')
def step_unknown(context: Context, batch: str, note: str) -> None:
    contract(context).store.record_unknown(batch, note=note)


@when('the create of "{batch}" is refused at {now:g}: "{note}"')
def step_refused(context: Context, batch: str, now: float, note: str) -> None:
    contract(context).store.record_refused(batch, note=note, now=now)


@when('the batch "{batch}" ends at {now:g} with {succeeded:d} succeeded and {errored:d} errored')
def step_ended(context: Context, batch: str, now: float, succeeded: int, errored: int) -> None:
    counts = {"succeeded": succeeded, "errored": errored}
    contract(context).store.record_status(batch, phase="ended", counts=counts, ended_at=now)


@given('these results of "{batch}" arrive at {now:g}:')
@when('these results of "{batch}" arrive at {now:g}:')
def step_results(context: Context, batch: str, now: float) -> None:
    outcomes = _outcome_rows(context)
    assert contract(context).store.record_outcomes(batch, outcomes, now=now) == len(outcomes)


@when('these results of "{batch}" arrive at {now:g} through the other process:')
def step_results_elsewhere(context: Context, batch: str, now: float) -> None:
    c = contract(context)
    assert c.other is not None
    outcomes = _outcome_rows(context)
    assert c.other.record_outcomes(batch, outcomes, now=now) == len(outcomes)


def _outcome_rows(context: Context) -> list[OutcomeRow]:
    return [
        OutcomeRow(
            key=row["key"],
            state=RequestState(row["state"]),
            response={"text": row["answer"]} if row.get("answer") else None,
            error={"class": "BatchRequestErrored", "message": "no"} if row["state"] == "failed" else None,
            cost_usd=_money(row.get("cost") or ""),
            live_cost_usd=_money(row.get("live cost") or ""),
        )
        for row in (r.as_dict() for r in context.table)
    ]


@when('the store and another process on the same ledger each read which results of "{batch}" are final')
def step_both_read_finals(context: Context, batch: str) -> None:
    """The store's `stored_finals`, and another store object's on the same ledger (for memory, the store itself)."""
    c = contract(context)
    c.other = reopened(context, c.store)
    assert c.store.stored_finals(batch) == c.other.stored_finals(batch)


@when('the store reads which results of "{batch}" are final')
def step_read_finals(context: Context, batch: str) -> None:
    contract(context).store.stored_finals(batch)


@then('the sums count {count:d} results of "{actor}" costing ${cost}, as a scan of every result does')
def step_sums_count(context: Context, count: int, actor: str, cost: str) -> None:
    from lowtide.ledger.scan_views import ScanViews

    store = contract(context).store
    kept = store.views.spend_by("actor")
    assert [(line.name, line.answers, line.cost_usd) for line in kept] == [(actor, count, Decimal(cost))], kept
    assert kept == ScanViews(store).spend_by("actor"), (kept, ScanViews(store).spend_by("actor"))


@given('the batch "{batch}" is collected at {now:g}')
@when('the batch "{batch}" is collected at {now:g}')
def step_collected(context: Context, batch: str, now: float) -> None:
    contract(context).store.record_collected(batch, state=BatchState.COLLECTED, now=now)


_BATCH_FIELDS = {
    "id": lambda b: b.id,
    "state": lambda b: b.state,
    "API batch": lambda b: b.provider_batch_id,
    "requests": lambda b: b.request_count,
    "intent at": lambda b: b.intent_at,
    "submitted at": lambda b: b.submitted_at,
    "ended at": lambda b: b.ended_at,
    "collected at": lambda b: b.collected_at,
    "phase": lambda b: b.phase,
    "owner": lambda b: b.owner,
    "until": lambda b: b.owner_until,
    "note": lambda b: b.note,
    "counts": lambda b: ", ".join(f"{k}={v}" for k, v in sorted((b.counts or {}).items())),
}


@then("the store reads these batches:")
def step_batches_read(context: Context) -> None:
    store = contract(context).store
    for row in context.table:
        record = store.batch(row["batch"])
        assert record is not None, f"the store has no batch {row['batch']!r}"
        for column in context.table.headings:
            if column != "batch":
                _check(row["batch"], column, _BATCH_FIELDS[column](record), row[column])


@then("the store holds these batches in the state {state}: {batches}")
def step_batches_in_state(context: Context, state: str, batches: str) -> None:
    found = contract(context).store.batches(states=[BatchState(state)])
    assert [b.id for b in found] == names(batches), found


@then("the store holds no batches in the state {state}")
def step_no_batches_in_state(context: Context, state: str) -> None:
    found = contract(context).store.batches(states=[BatchState(state)])
    assert found == [], found


@then("these reconciliations go as follows, in order:")
def step_reconciliations(context: Context) -> None:
    store = contract(context).store
    for number, row in enumerate(context.table, start=1):
        now, seen = float(row["at"]), _time(row["seen at"])
        action, batch, owner = row["action"], row["batch"], row["owner"]
        outcome: object
        if action == "resume":
            assert seen is not None, "a resume names the attempt it saw"
            outcome = store.resume_intent(batch, intent_at=seen, owner=owner, until=now + 100, now=now)
        elif action == "give up":
            note = f"no batch was found for it ({row['at']})"
            outcome = store.give_up_intent(batch, note=note, owner=owner, until=now + 100, now=now, intent_at=seen)
        elif action == "adopt":
            outcome = store.adopt(batch, provider_batch_id=row["API batch"], now=now)
        elif action == "disown":
            outcome = store.disown(batch, provider_batch_id=row["API batch"], now=now)
        else:
            raise AssertionError(f"no action {action!r}")
        expected: object
        if action == "give up":
            expected = None if row["outcome"] == "lost" else names(row["outcome"])
        else:
            expected = {"won": True, "lost": False}[row["outcome"]]
        assert outcome == expected, f"reconciliation {number} ({row.as_dict()}): {outcome!r}, not {expected!r}"


@then("these batch claims go as follows, in order:")
def step_batch_claims(context: Context) -> None:
    store = contract(context).store
    for number, row in enumerate(context.table, start=1):
        taken = store.claim_batch(
            BatchClaim(
                row["batch"],
                owner=row["owner"],
                until=float(row["until"]),
                now=float(row["at"]),
                force=row["force"] == "yes",
            )
        )
        assert taken == (row["taken"] == "yes"), f"batch claim {number} ({row.as_dict()}): taken is {taken}"


@then('the batch "{batch}" has these members:')
def step_members(context: Context, batch: str) -> None:
    store = contract(context).store
    members, attempts = store.members_and_attempts(batch)
    assert members == store.members(batch), (members, store.members(batch))
    assert members == {row["custom id"]: row["key"] for row in context.table}, members
    expected = {
        row["key"]: tuple(int(n) for n in row["attempts"].split(" of ")) for row in context.table if row["attempts"]
    }
    assert attempts == expected, attempts


@then('the store holds final results from "{batch}" for {keys}')
def step_stored_finals(context: Context, batch: str, keys: str) -> None:
    found = contract(context).store.stored_finals(batch)
    assert found == set(_none_or(keys)), found


@given('a cursor of the results is taken for "{batch}"')
@when('a cursor of the results is taken for "{batch}"')
def step_cursor(context: Context, batch: str) -> None:
    found = contract(context)
    keys, found.cursors[batch] = found.store.results_since(batch, None)
    assert keys == [], keys


@then('the results of "{batch}" since its cursor are of {keys}')
def step_results_since(context: Context, batch: str, keys: str) -> None:
    found = contract(context)
    before = found.cursors[batch]
    read, found.cursors[batch] = found.store.results_since(batch, before)
    assert read == _none_or(keys), read
    assert (found.cursors[batch] > before) == bool(read), (before, found.cursors[batch])


@then('of {keys} the batch "{first}" holds {held}, and the batch "{second}" holds {also}')
def step_members_among(context: Context, keys: str, first: str, held: str, second: str, also: str) -> None:
    """`members_among`, on the store's sync face and its awaited one."""
    c = contract(context)

    async def awaited_face(batch: str) -> set[str]:
        return await async_ledger(c.store).members_among(batch, names(keys))

    for batch, expected in ((first, held), (second, also)):
        found = c.store.members_among(batch, names(keys))
        assert found == set(names(expected)), (batch, found)
        assert context.runner.run(awaited_face(batch)) == found, batch


@then('the store reads the answers of "{batch}" for {keys} as:')
def step_answers_read(context: Context, batch: str, keys: str) -> None:
    """`answers_of`, on the store's sync face and its awaited one: each key's latest result from `batch`, in the order
    asked, those with none left out."""
    c = contract(context)
    found = c.store.answers_of(batch, names(keys))

    async def awaited_face() -> list[KeyAnswer]:  # the async face is made inside the loop that awaits it
        return await async_ledger(c.store).answers_of(batch, names(keys))

    awaited = context.runner.run(awaited_face())
    assert awaited == found, (awaited, found)
    read = [(a.key, a.state, (a.response or {}).get("text"), (a.error or {}).get("class")) for a in found]
    expected = [
        (row["key"], RequestState(row["state"]), row["answer"] or None, row["error"] or None) for row in context.table
    ]
    assert read == expected, (read, expected)
    records = {r.key: r for r in c.store.requests_for(names(keys))}
    for answer in found:  # a key still in the batch: its answer is its record's
        record = records[answer.key]
        if record.batch_id == batch:
            assert (record.state, record.response, record.error) == (answer.state, answer.response, answer.error)


@when('the step "{step}" of the create of "{batch}" is recorded as "{value}"')
def step_create_step(context: Context, step: str, batch: str, value: str) -> None:
    contract(context).store.record_create_step(batch, step, value)


@then('the create steps of "{batch}" are {steps}')
def step_create_steps(context: Context, batch: str, steps: str) -> None:
    found = contract(context).store.create_steps(batch)
    expected = dict(pair.split("=", 1) for pair in _none_or(steps))
    assert found == expected, found


@then('the unresolved intents of "{provider}" are {batches}')
def step_unresolved(context: Context, provider: str, batches: str) -> None:
    found = contract(context).store.unresolved(provider=provider, endpoint=ENDPOINT)
    assert [b.id for b in found] == names(batches), [b.id for b in found]


@then('of the batches {among}, the one holding "{custom_id}" is {answer}')
@then('of no batches, the one holding "{custom_id}" is {answer}')
def step_batch_holding(context: Context, custom_id: str, answer: str, among: str = "") -> None:
    found = contract(context).store.batch_holding(custom_id, names(among))
    assert found == (None if answer == "none" else answer), found


# -- runs ------------------------------------------------------------------------------------------------------------


@when('the run "{run_id}" is created at {now:g} with the fingerprint "{fingerprint}" and items {keys}')
def step_create_run(context: Context, run_id: str, now: float, fingerprint: str, keys: str) -> None:
    c = contract(context)
    items = [NewItem(index, f"item-{index}", {"prompt": f"Plan {key}"}, key) for index, key in enumerate(names(keys))]
    c.jobs.setdefault(run_id, {i.index: i.job for i in items})
    c.created = c.runs.create(
        run_id,
        actor=ACTOR,
        configuration={"name": ACTOR, "model": "claude-sonnet-5-5"},
        options={"items_per_batch": 2},
        fingerprint=fingerprint,
        items=items,
        now=now,
    )


@then("the run was created")
def step_run_created(context: Context) -> None:
    assert contract(context).created is True


@then("the run was not created")
def step_run_not_created(context: Context) -> None:
    assert contract(context).created is False


@then("the store's runs are {runs}")
def step_runs(context: Context, runs: str) -> None:
    assert [r.id for r in contract(context).runs.runs()] == names(runs)


@then('the store has no run "{run_id}"')
def step_no_run(context: Context, run_id: str) -> None:
    assert contract(context).runs.run(run_id) is None


@then('the run "{run_id}" has the fingerprint "{fingerprint}", {count:d} items, and was updated at {now:g}')
@then('the run "{run_id}" has the fingerprint "{fingerprint}", {count:d} item, and was updated at {now:g}')
def step_run_record(context: Context, run_id: str, fingerprint: str, count: int, now: float) -> None:
    c = contract(context)
    record = c.runs.run(run_id)
    assert record is not None, run_id
    assert (record.fingerprint, record.item_count, record.updated_at) == (fingerprint, count, now), record
    assert record.actor == ACTOR, record
    assert record.configuration["name"] == ACTOR, record
    assert len(c.runs.items(run_id)) == count


_ITEM_FIELDS = {
    "key": lambda i: i.key,
    "attempt": lambda i: i.attempt,
    "state": lambda i: i.request_state,
    "batch": lambda i: i.batch_id,
    "cost": lambda i: i.cost_usd,
    "status": lambda i: i.status,
    "reason": lambda i: i.reason,
}


@then('the run "{run_id}" reads these items:')
def step_items(context: Context, run_id: str) -> None:
    c = contract(context)
    runs = c.runs
    items: list[ItemRow] = runs.items(run_id)
    assert [i.index for i in items] == sorted(i.index for i in items), "items not in input order"
    bare = {i.index: i for i in runs.items(run_id, with_jobs=False)}
    by_index = {i.index: i for i in items}
    for row in context.table:
        item = by_index[int(row["index"])]
        assert item.job == c.jobs[run_id][item.index], item.job
        assert item.item_id == f"item-{item.index}", item.item_id
        assert bare[item.index].job == {}, bare[item.index].job
        for column in context.table.headings:
            if column != "index":
                _check(f"item {item.index}", column, _ITEM_FIELDS[column](item), row[column])


@then('the run "{run_id}" reads from item {start:d} up to {stop:d} the items {indexes}')
def step_items_between(context: Context, run_id: str, start: int, stop: int, indexes: str) -> None:
    """A run's items read a chunk at a time (`items(start=, stop=)`), each as the whole read gives it."""
    runs = contract(context).runs
    whole = {item.index: item for item in runs.items(run_id, with_jobs=False)}
    found = runs.items(run_id, with_jobs=False, start=start, stop=stop)
    assert [item.index for item in found] == [int(index) for index in names(indexes)], found
    assert all(item == whole[item.index] for item in found), (found, whole)


@then(
    'the run "{run_id}" reads from item {start:d} up to {stop:d} apart the answered items {answered} costing {cost},'
    " and rows of the items {others}"
)
def step_items_apart(
    context: Context, run_id: str, start: int, stop: int, answered: str, cost: str, others: str
) -> None:
    """A run's items as sorting it out reads them (`items_apart`): the plain successes as their indexes and costs
    alone, each other item's row as `items` gives it."""
    runs = contract(context).runs
    whole = {item.index: item for item in runs.items(run_id, with_jobs=False)}
    apart = runs.items_apart(run_id, start=start, stop=stop)
    assert apart.answered == [int(index) for index in names(answered)], apart.answered
    assert apart.answered_cost == Decimal(cost), apart.answered_cost
    assert [row.index for row in apart.rows] == [int(index) for index in names(others)], apart.rows
    assert all(row == whole[row.index] for row in apart.rows), (apart.rows, whole)


_OUTCOME_FIELDS = {
    "key": lambda o: o.key,
    "state": lambda o: o.state,
    "answer": lambda o: (o.response or {}).get("text"),
    "error": lambda o: (o.error or {}).get("class"),
    "status": lambda o: o.status,
    "reason": lambda o: o.reason,
}


@then('the run "{run_id}" reads these outcomes from item {start:d} up to {stop:d}, of items {indexes} alone:')
def step_outcomes_of(context: Context, run_id: str, start: int, stop: int, indexes: str) -> None:
    _outcomes(context, run_id, start, stop, [int(index) for index in names(indexes)])


@then('the run "{run_id}" reads these outcomes from item {start:d} up to {stop:d}:')
def step_outcomes(context: Context, run_id: str, start: int, stop: int) -> None:
    _outcomes(context, run_id, start, stop, None)


def _outcomes(context: Context, run_id: str, start: int, stop: int, only: list[int] | None) -> None:
    c = contract(context)
    found: list[ItemOutcome] = c.runs.outcomes(run_id, start=start, stop=stop, only=only)

    async def awaited_face() -> list[ItemOutcome]:  # the async face is made inside the loop that awaits it
        return await async_ledger(c.store).run_store.outcomes(run_id, start=start, stop=stop, only=only)

    awaited = context.runner.run(awaited_face())
    assert awaited == found, (awaited, found)
    assert [o.index for o in found] == [int(row["index"]) for row in context.table], [o.index for o in found]
    for outcome, row in zip(found, context.table, strict=True):
        for column in context.table.headings:
            if column != "index":
                _check(f"item {outcome.index}", column, _OUTCOME_FIELDS[column](outcome), row[column])


@then('the run "{run_id}" has no outstanding batches')
def step_no_outstanding(context: Context, run_id: str) -> None:
    assert contract(context).runs.outstanding_batches(run_id) == []


@then('the run "{run_id}" has the outstanding batches {batches}')
def step_outstanding(context: Context, run_id: str, batches: str) -> None:
    found = contract(context).runs.outstanding_batches(run_id)
    assert found == names(batches), found


@then('the run "{run_id}" was in these batches:')
def step_run_batches(context: Context, run_id: str) -> None:
    found = contract(context).runs.batches(run_id)
    expected = [(row["batch"], row["API batch"] or None, row["state"], int(row["items"])) for row in context.table]
    assert found == expected, found


@when('the run "{run_id}" decides at {now:g} that item {index:d} is "{status}" for "{reason}"')
def step_decide(context: Context, run_id: str, now: float, index: int, status: str, reason: str) -> None:
    contract(context).runs.decide(run_id, [(index, status, reason)], now=now)


@when('the run "{run_id}" makes a new attempt of item {index:d} under the key "{key}" at {now:g}')
def step_new_attempt(context: Context, run_id: str, index: int, key: str, now: float) -> None:
    contract(context).runs.new_attempts(run_id, [(index, key)], now=now)


@when(
    'the run "{run_id}" records at {now:g} the live answer "{text}" for item {index:d} under the key "{key}",'
    " costing {cost}"
)
def step_record_live(context: Context, run_id: str, now: float, text: str, index: int, key: str, cost: str) -> None:
    answer = LiveAnswer(
        index=index,
        key=key,
        actor=ACTOR,
        model="claude-sonnet-5-5",
        params={"messages": [{"role": "user", "content": f"Plan {key}"}]},
        state=RequestState.SUCCEEDED,
        response={"text": text},
        error=None,
        cost_usd=Decimal(cost),
    )
    contract(context).runs.record_live(run_id, [answer], now=now)


@then('the request "{key}" reads the live answer "{text}", costing {cost} at batch and live prices')
def step_live_request(context: Context, key: str, text: str, cost: str) -> None:
    record = contract(context).store.request(key)
    assert record is not None, key
    assert (record.state, record.batch_id, record.attempts) == (RequestState.SUCCEEDED, None, 1), record
    assert (record.response or {}).get("text") == text, record.response
    assert record.cost_usd == record.live_cost_usd == Decimal(cost), record


@then('the run "{run_id}" would have cost ${amount} live')
def step_live_cost(context: Context, run_id: str, amount: str) -> None:
    assert contract(context).runs.live_cost(run_id) == Decimal(amount)


@when('the options of the run "{run_id}" are changed to a cost limit of {limit:d} at {now:g}')
def step_update_options(context: Context, run_id: str, limit: int, now: float) -> None:
    contract(context).runs.update_options(run_id, {"max_cost_usd": limit}, now=now)


@then('the run "{run_id}" has the options: {options}')
def step_options(context: Context, run_id: str, options: str) -> None:
    record = contract(context).runs.run(run_id)
    assert record is not None, run_id
    expected = {name: int(value) for name, value in (pair.split("=", 1) for pair in names(options))}
    assert record.options == expected, record.options


# -- integrity -------------------------------------------------------------------------------------------------------


def _refused(action: Any) -> None:
    try:
        action()
    except LedgerError:
        return
    raise AssertionError("the change was not refused")


@then('recording the batch "{batch}" holding {keys} is refused with a LedgerError')
def step_intent_refused(context: Context, batch: str, keys: str) -> None:
    _refused(lambda: step_intent(context, batch, keys, "worker-2", 2000, 1900))


@then('recording "{batch}" as created as the API\'s batch "{api}" is refused with a LedgerError')
def step_submitted_refused(context: Context, batch: str, api: str) -> None:
    _refused(lambda: step_submitted(context, batch, api, 1900))


@then('the store has no batch "{batch}"')
def step_no_batch(context: Context, batch: str) -> None:
    store = contract(context).store
    assert store.batch(batch) is None, store.batch(batch)
    assert store.members(batch) == {}, store.members(batch)


# -- the live quota --------------------------------------------------------------------------------------------------


@when('the store\'s quota scope "{scope}" is paused until {until:g}')
def step_quota_pause(context: Context, scope: str, until: float) -> None:
    def pause(state: ScopeState) -> int:
        state.paused_until = until
        state.pauses += 1
        return state.pauses

    before = context.runner.run(contract(context).store.quota_store.update(scope, lambda s: s.pauses))
    assert context.runner.run(contract(context).store.quota_store.update(scope, pause)) == before + 1


@then('the store\'s quota scope "{scope}" is paused until {until:g}, after {pauses:d} pauses')
def step_quota_state(context: Context, scope: str, until: float, pauses: int) -> None:
    seen = context.runner.run(contract(context).store.quota_store.update(scope, lambda s: (s.paused_until, s.pauses)))
    assert seen == (until, pauses), seen
