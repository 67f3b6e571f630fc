"""Steps for rebuilding a lost ledger into each store (features/ledger_rebuild.feature, `@stores`): the emulated
Anthropic API in process (on a PostgreSQL ledger too), programs whose ledgers are lost with them (one in memory) or
deleted (a file), and the rebuild into the scenario's ledger or into a ledger in memory."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from _support import World, check_error, emulated_reply_to, world
from step_context import Context, given, then, when

from lowtide import Actor, ActorResponse
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.store import close_ledgers, open_ledger
from lowtide.rebuild import look, record, sources_of

_CONFIGURATION = {
    "name": "crew",
    "model": "claude-haiku-4-5",
    "max_tokens": 64,
    "batch_processing": "batch",
    "batch": {"poll_interval": 10, "coalesce_window": 0.1, "max_wait": 100_000},
}


def _state(w: World) -> dict[str, Any]:
    return w.witnessed.setdefault("rebuild", [{}])[0]  # type: ignore[no-any-return]


def _long(n: int) -> str:
    return f"k{n}-".ljust(80, "x")


def _prompts(long: tuple[int, int], keyed: tuple[str, int, int]) -> dict[str, str]:
    prompts = {_long(n): f"question {n}" for n in range(long[0], long[1] + 1)}
    prefix = keyed[0].rstrip("0123456789")
    prompts.update({f"{prefix}{n}": f"question {n}" for n in range(keyed[1], keyed[2] + 1)})
    return prompts


def _actor(w: World, ledger: LedgerStore | str | None) -> Actor:
    actor = Actor(
        _CONFIGURATION, client=w.client_over(w.transport()), clock=w.clock, registry=w.registry, ledger=ledger
    )
    w.cleanups.append(actor.aclose)
    return actor


def _target(w: World, name: str) -> LedgerStore:
    state = _state(w)
    if name == "the scenario's ledger":
        return open_ledger(os.environ["LOWTIDE_LEDGER"])
    if name in ("a new ledger in memory", "the ledger in memory"):
        if "memory" not in state:
            state["memory"] = MemoryLedger()
        ledger: LedgerStore = state["memory"]
        return ledger
    raise AssertionError(f"no ledger {name!r}")


@when(
    "a program whose ledger is {where} asks questions {first:d} to {last:d} with keys of 80 characters and questions"
    ' {first_keyed:d} to {last_keyed:d} with the keys "{key}" to "{last_key}", all answered'
)
def step_first_program(
    context: Context, where: str, first: int, last: int, first_keyed: int, last_keyed: int, key: str, last_key: str
) -> None:
    w = world(context)
    state = _state(w)
    ledger: LedgerStore | str = MemoryLedger() if where == "in its memory" else str(w.ledger_path)
    actor = state["actor"] = _actor(w, ledger)
    prompts = _prompts((first, last), (key, first_keyed, last_keyed))

    async def asking() -> list[ActorResponse[Any]]:
        return list(await asyncio.gather(*(actor.run(prompt, key=k) for k, prompt in prompts.items())))

    answers = w.run(asking())
    state["batches"] = {k: a.ids.batch_id for k, a in zip(prompts, answers, strict=True)}
    state["identity"] = actor.ledger.identity()
    state["where"] = where


@when(
    'that program parks questions {first:d} to {last:d} with the keys "{key}" to "{last_key}", their batch created and'
    " still running, and ends, its ledger gone with it"
)
def step_park_and_end(context: Context, first: int, last: int, key: str, last_key: str) -> None:
    w = world(context)
    state = _state(w)
    actor: Actor = state.pop("actor")
    prompts = _prompts((1, 0), (key, first, last))

    async def parking() -> list[Any]:
        tickets = await asyncio.gather(*(actor.submit(prompt, key=k) for k, prompt in prompts.items()))
        await actor.aclose()
        return list(tickets)

    tickets = w.run(parking())
    assert all(t.state == "waiting-on-batch" for t in tickets), tickets
    state["batches"].update({t.key: t.batch_id for t in tickets})
    if state["where"] == "the scenario's file":
        close_ledgers()
        for suffix in ("", "-wal", "-shm"):
            w.ledger_path.with_name(w.ledger_path.name + suffix).unlink(missing_ok=True)


@when("the lost ledger is rebuilt into {target}, waiting for the batches it cannot read yet")
def step_rebuild_into(context: Context, target: str) -> None:
    w = world(context)
    state = _state(w)
    into = _target(w, target)
    actor = _actor(w, None)
    backend = actor.batch_backend()
    backend.list_page = 1
    sources = sources_of([(backend, actor.name, str(_CONFIGURATION["model"]), actor.configuration.batch)])

    async def rebuilding() -> dict[str, int]:
        plan = await look(sources, state["identity"], clock=w.clock, wait=True)
        assert not plan.unseen, plan.unseen
        state["plan"] = plan
        return record(plan, into)

    state["written"] = w.run(rebuilding())


@then(
    "{target} has the lost ledger's identity, and records {count:d} requests, {unkeyed:d} of them keyed by their custom"
    " ids alone"
)
def step_rebuilt_into(context: Context, target: str, count: int, unkeyed: int) -> None:
    w = world(context)
    state = _state(w)
    ledger = _target(w, target)
    assert ledger.identity() == state["identity"], (ledger.identity(), state["identity"])
    records = ledger.requests()
    assert len(records) == count, [r.key for r in records]
    assert sum(r.key.startswith("rebuilt:") for r in records) == unkeyed, [r.key for r in records]
    assert ledger.unkeyed()


@when(
    "a program on {target} asks questions {first:d} to {last:d} with keys of 80 characters and questions"
    ' {first_keyed:d} to {last_keyed:d} with the keys "{key}" to "{last_key}"'
)
def step_rerun(
    context: Context, target: str, first: int, last: int, first_keyed: int, last_keyed: int, key: str, last_key: str
) -> None:
    w = world(context)
    state = _state(w)
    actor = _actor(w, _target(w, target))
    prompts = state["prompts"] = _prompts((first, last), (key, first_keyed, last_keyed))

    async def asking() -> list[Any]:
        return list(await asyncio.gather(*(actor.run(p, key=k) for k, p in prompts.items()), return_exceptions=True))

    state["asked"] = dict(zip(prompts, w.run(asking()), strict=True))


@then(
    "each of the {count:d} questions was answered with the emulated reply to it, from the same API batches for the"
    " first {known:d}"
)
def step_rerun_answered(context: Context, count: int, known: int) -> None:
    state = _state(world(context))
    asked: dict[str, Any] = state["asked"]
    assert len(asked) == count, asked
    for key, outcome in asked.items():
        assert isinstance(outcome, ActorResponse), f"{key!r} was not answered: {outcome!r}"
        assert outcome.text.startswith(emulated_reply_to(state["prompts"][key])), (key, outcome.text)
    before: dict[str, str] = state["batches"]
    assert len(before) == known, before
    for key, batch_id in before.items():
        assert asked[key].ids.batch_id == batch_id, (key, asked[key].ids.batch_id, batch_id)


@then("the Anthropic API created {count:d} requests in all, each once")
def step_created(context: Context, count: int) -> None:
    created = world(context).emu.created_custom_ids
    assert len(created) == count, created
    assert set(created.values()) == {1}, created


@then("the scenario's ledger holds no request keyed by its custom id alone any more")
@then("the ledger in memory holds no request keyed by its custom id alone any more")
def step_no_unkeyed(context: Context) -> None:
    w = world(context)
    ledger = _target(w, "the ledger in memory" if "memory" in _state(w) else "the scenario's ledger")
    assert not ledger.unkeyed()
    keys = {r.key for r in ledger.requests()}
    assert set(_state(w)["prompts"]) <= keys, sorted(set(_state(w)["prompts"]) - keys)


@given("a postgres ledger store holding the requests {keys}")
def step_postgres_store(context: Context, keys: str) -> None:
    from _stores import open_store
    from ledger_store_steps import _request

    store = open_store(context, "postgres")
    store.claim([_request(key) for key in keys.split(", ")], owner="worker-1", until=1100.0, now=1000.0)
    _state(world(context))["store"] = store


@when('its table "{table}" is dropped while the store is open, and its requests are read')
def step_drop_table(context: Context, table: str) -> None:
    import psycopg
    from psycopg import sql

    state = _state(world(context))
    with psycopg.connect(context.postgres_url, autocommit=True) as db:
        # the scenario's own schema, first on its search path
        db.execute(sql.SQL("DROP TABLE {} CASCADE").format(sql.Identifier(table)))
    try:
        state["store"].requests()
    except Exception as exc:
        state["failure"] = exc
    else:
        state["failure"] = None


@then('the read fails with a {name:w} saying "{first}" and "{second}"')
def step_read_failed(context: Context, name: str, first: str, second: str) -> None:
    failure = _state(world(context))["failure"]
    check_error(failure, name)
    assert first in str(failure), str(failure)
    assert second in str(failure), str(failure)
