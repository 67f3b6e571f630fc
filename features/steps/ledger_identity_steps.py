"""Steps of ledger_identity.feature: two ledgers on one API key, each with an actor of its own, asking the same."""

from __future__ import annotations

import os
import re
from decimal import Decimal
from typing import Protocol

from _support import World, emulated_reply_to, names, world, yaml_doc
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ActorResponse, Outcome
from lowtide.ledger.records import FOREIGN
from lowtide.ledger.store import LedgerStore, open_ledger


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    answers_by_ledger: dict[str, list[Outcome]]


def _ledgers(w: World) -> dict[str, LedgerStore]:
    ledgers = w.value.get("ledgers") if isinstance(w.value, dict) else None
    assert isinstance(ledgers, dict), "no ledgers: add 'Given two ledgers, ...'"
    return ledgers  # type: ignore[return-value]


def _answers(context: Context) -> dict[str, list[Outcome]]:
    """What each ledger's actor got from its run_many, by the ledger's name."""
    if not hasattr(context, "answers_by_ledger"):
        context.answers_by_ledger = {}
    answers: dict[str, list[Outcome]] = context.answers_by_ledger
    return answers


@given('two ledgers, "{first}" (the scenario\'s) and "{second}", each with an actor of that name on the same API key:')
def step_two_ledgers(context: Context, first: str, second: str) -> None:
    w = world(context)
    scenario = os.environ["LOWTIDE_LEDGER"]
    # The second ledger is a store of the same kind: another file, or another PostgreSQL database.
    other = context.new_postgres_database() if scenario.startswith("postgresql") else str(w.path(f"{second}.sqlite3"))
    ledgers = {first: open_ledger(scenario), second: open_ledger(other)}
    for name, ledger in ledgers.items():
        # One client, so one API key: what tells the two apart is their ledgers alone.
        w.add_actor({"name": name, "model": "claude-sonnet-5-5", **yaml_doc(context.text)}, ledger=ledger)
    w.value = {"ledgers": ledgers}


@when('"{name}" asks "{prompts}" with run_many')
def step_ledger_asks(context: Context, name: str, prompts: str) -> None:
    w = world(context)
    actor: Actor = w.actors[name]
    w.actor = actor
    outcomes = w.attempt_async(lambda: actor.run_many(names(prompts)))
    w.succeeded()
    assert outcomes is not None
    _answers(context)[name] = outcomes


@then('the ledgers "{first}" and "{second}" have identities of 12 hex digits, different from each other')
def step_identities(context: Context, first: str, second: str) -> None:
    ledgers = _ledgers(world(context))
    identities = [ledgers[first].identity(), ledgers[second].identity()]
    assert all(re.fullmatch(r"[0-9a-f]{12}", identity) for identity in identities), identities
    assert identities[0] != identities[1], identities


@then('the request "{prompt}" has the same key in "{first}" and in "{second}", and a custom id of each ledger\'s own')
def step_same_key_other_ids(context: Context, prompt: str, first: str, second: str) -> None:
    w = world(context)
    from lowtide.batching.keys import derive_key

    found: dict[str, tuple[str, str]] = {}
    for name in (first, second):
        actor = w.actors[name]
        codec = actor.batch_codec()
        key = derive_key(codec.name, codec.encode_request(actor.request(prompt)))
        found[name] = (key, codec.custom_id_for(key, actor.ledger.identity()))
    (key1, id1), (key2, id2) = found[first], found[second]
    assert key1 == key2, found
    assert id1 != id2, found
    assert id1 == f"{key1}_{_ledgers(w)[first].identity()}", found


@then('each run_many call got the emulated replies to "{prompts}", in order')
def step_each_replied(context: Context, prompts: str) -> None:
    for name, outcomes in _answers(context).items():
        assert len(outcomes) == len(names(prompts)), (name, outcomes)
        for outcome, prompt in zip(outcomes, names(prompts), strict=True):
            assert isinstance(outcome, ActorResponse), (name, outcome)
            assert outcome.text.startswith(emulated_reply_to(prompt)), (name, outcome.text)


def _custom_ids(ledger: LedgerStore) -> set[str]:
    return {record.custom_id for record in ledger.requests()}


_CREATED_ONCE = 'the API created each request of "{first}" and of "{second}" exactly once: {count:d} requests,'


@then(_CREATED_ONCE + " in {batches:d} batches")
def step_each_created_once(context: Context, first: str, second: str, count: int, batches: int) -> None:
    w = world(context)
    ledgers = _ledgers(w)
    created = w.emu.created_custom_ids
    expected = _custom_ids(ledgers[first]) | _custom_ids(ledgers[second])
    assert len(expected) == count, expected
    assert dict(created) == dict.fromkeys(expected, 1), created
    assert w.emu.created_batches == batches, w.emu.created_batches


def _their_batch(w: World, name: str) -> str:
    """The API's id of the one batch ledger `name` has collected."""
    found = [b.provider_batch_id for b in _ledgers(w)[name].batches() if b.state.value == "collected"]
    [theirs] = found
    assert theirs is not None, found
    return theirs


@then('"{name}" keeps the batch of "{other}" apart as foreign, storing and counting nothing of it')
def step_kept_apart(context: Context, name: str, other: str) -> None:
    w = world(context)
    theirs = _their_batch(w, other)
    ledger = _ledgers(w)[name]
    record = ledger.batch(theirs)
    assert record is not None, f"{name} holds no record of {theirs}"
    assert (record.id, record.state.value, record.note) == (f"foreign-{theirs}", "failed", FOREIGN), record
    assert (record.request_count, record.counts, ledger.members(record.id)) == (0, None, {}), record
    assert all(r.batch_id != record.id for r in ledger.requests()), ledger.requests()


@then('"{name}" never adopted the batch of "{other}"')
def step_never_adopted(context: Context, name: str, other: str) -> None:
    w = world(context)
    theirs = _their_batch(w, other)
    record = _ledgers(w)[name].batch(theirs)
    assert record is None or record.note == FOREIGN, record


@then("each ledger's answers came from batches holding its own requests alone, and it counts their cost alone")
def step_each_own(context: Context) -> None:
    w = world(context)
    for name, ledger in _ledgers(w).items():
        mine = _custom_ids(ledger)
        outcomes = _answers(context)[name]
        total = Decimal(0)
        for outcome in outcomes:
            assert isinstance(outcome, ActorResponse), outcome
            assert outcome.ids.batch_id is not None, outcome
            held = {custom_id for custom_id, _ in w.emu.batch(outcome.ids.batch_id).requests}
            assert held <= mine, (name, outcome.ids.batch_id, held - mine)
            assert outcome.ids.custom_id in mine, (name, outcome.ids)
            assert outcome.cost is not None
            total += outcome.cost.total_usd
        assert ledger.committed_usd(name) == total, (name, ledger.committed_usd(name), total)
