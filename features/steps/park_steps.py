"""Steps for parked calls: tickets, results, and `lowtide status`, `collect` and `cancel` over the ledger."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from _batch_providers import later_result
from _support import (
    API_KEY,
    World,
    answer_to,
    check_fields,
    new_program_actor,
    run_cli,
    set_env,
    table_dict,
    world,
    yaml_doc,
)
from step_context import Context, given, then, when

from lowtide import ActorError, ActorResponse, Ticket
from lowtide.calls import parking

# -- tickets and results ---------------------------------------------------------------------------------------------


@then('the ticket "{key}" says:')
def step_ticket_says(context: Context, key: str) -> None:
    w = world(context)
    w.succeeded()
    check_fields(w.tickets[key], table_dict(context))


@then('the batch of the ticket "{key}" is still in progress')
def step_ticket_batch_running(context: Context, key: str) -> None:
    w = world(context)
    snapshot = w.emu.batch(w.tickets[key].batch_id)
    # Against the time the ticket came back: the actor's poller goes on (moving the clock) whenever the loop runs.
    parked_at = dict(w.witnessed["parked at"])[key]
    assert snapshot.ended_at is None or snapshot.ended_at > parked_at, (snapshot, parked_at)


@given("the ledger's reads of each request are counted")
def step_count_reads(context: Context) -> None:
    """The scenario's SQLite ledger (the actors' own store object) counts, by key, the records it reads."""
    w = world(context)
    store: Any = w.ledger()
    counted: Counter[str] = Counter()
    request, requests_for = store.request, store.requests_for

    def read_one(key: str) -> Any:
        counted[key] += 1
        return request(key)

    def read_many(keys: Any) -> Any:
        counted.update(keys)
        return requests_for(keys)

    store.request, store.requests_for = read_one, read_many
    w.witnessed["reads"] = [counted]

    def restore() -> None:
        store.request, store.requests_for = request, requests_for

    w.cleanups.append(restore)


@then('the ledger\'s record of "{key}" was read at most {most:d} times')
def step_reads_at_most(context: Context, key: str, most: int) -> None:
    [counted] = world(context).witnessed["reads"]
    assert 0 < counted[key] <= most, counted


def _ticket(w: World, key: str) -> Ticket:
    """`actor.ticket(key)`, called from a coroutine of the scenario's program."""

    async def read() -> Ticket:
        return w.current_actor().ticket(key)

    return w.run(read())


@then('the actor\'s ticket for "{key}" is the one it was handed')
def step_ticket_again(context: Context, key: str) -> None:
    w = world(context)
    assert _ticket(w, key) == w.tickets[key], (_ticket(w, key), w.tickets[key])


@then('the actor\'s ticket for "{key}" says:')
def step_actor_ticket_says(context: Context, key: str) -> None:
    check_fields(_ticket(world(context), key), table_dict(context))


@then('the actor\'s ticket for "{key}" carries the cost of the answer')
def step_ticket_cost(context: Context, key: str) -> None:
    w = world(context)
    cost = w.answer().cost
    assert cost is not None, w.answer()
    assert _ticket(w, key).cost_usd == cost.total_usd, cost


@when('a script that runs no event loop reads the actor\'s ticket for "{key}"')
def step_ticket_sync(context: Context, key: str) -> None:
    w = world(context)
    w.error = None
    try:
        w.tickets[key] = w.current_actor().ticket(key)
    except Exception as exc:
        w.error = exc


@when('the actor waits for the result of "{key}"')
def step_wait_result(context: Context, key: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().result(key))


@when('a new program\'s actor "{name}" waits for the result of "{key}"')
def step_new_program_result(context: Context, name: str, key: str) -> None:
    w = world(context)
    later_result(w, new_program_actor(w, name), key)


@given("the API's batches take {seconds:g} seconds from now on")
def step_processing_from_now(context: Context, seconds: float) -> None:
    world(context).emu.processing_seconds = seconds


# -- the API on a socket, for the command line ------------------------------------------------------------------------


@given("an emulated Anthropic API served on a socket, whose batches take {seconds:g} seconds")
def step_socket_api(context: Context, seconds: float) -> None:
    """The emulator on a local socket, on the scenario's clock: `lowtide collect` and `cancel` reach it by its URL."""
    w = world(context)
    w.serve_emulator(processing_seconds=seconds)


@given('an actor "{name}" that reaches it with the key in "{variable}", with:')
def step_socket_actor(context: Context, name: str, variable: str) -> None:
    w = world(context)
    [url] = w.witnessed["server url"]
    set_env(w, variable, API_KEY)
    w.client = None  # the actor builds its own client, as a program run from the command line would
    settings = {"name": name, "model": "claude-sonnet-5-5", "base_url": url, "api_key_env": variable}
    w.add_actor({**settings, **yaml_doc(context.text)})


@given('the environment variable "{variable}" is unset')
def step_env_unset(context: Context, variable: str) -> None:
    set_env(world(context), variable, None)


# -- collect and cancel ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _errors_logged(w: World) -> Iterator[None]:
    """Keep what is logged at error level meanwhile (an asyncio "exception was never retrieved", say)."""
    kept: list[str] = w.witnessed.setdefault("errors logged", [])

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(f"{record.name}: {record.getMessage()}")

    handler = Keep(level=logging.ERROR)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(min(level, logging.ERROR) if level else logging.ERROR)  # however the run configured logging
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@when("lowtide collects the ended batches")
def step_collect(context: Context) -> None:
    """`lowtide collect` as a program of its own, with a client of its own."""
    w = world(context)
    client = w.client_over(w.transport())
    w.error = None
    with _errors_logged(w):
        try:
            w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))
        except ActorError as exc:
            w.error = exc


@then("collecting logged no errors")
def step_collect_no_errors(context: Context) -> None:
    logged = world(context).witnessed.get("errors logged", [])
    assert not logged, "\n".join(logged)


def _cancel(w: World, target: str) -> None:
    client = w.client_over(w.transport())
    w.error = None
    try:
        w.value = {"canceled": w.in_program(lambda: parking.cancel(w.ledger(), target, client=client, clock=w.clock))}
    except ActorError as exc:
        w.error = exc


@when('lowtide cancels the key "{key}"')
def step_cancel_key(context: Context, key: str) -> None:
    _cancel(world(context), key)


@when('lowtide cancels the API\'s batch id of the ticket "{key}"')
def step_cancel_api_id(context: Context, key: str) -> None:
    w = world(context)
    ticket: Ticket = w.tickets[key]
    assert ticket.batch_id is not None, ticket
    assert ticket.batch_id.startswith("msgbatch_"), ticket
    _cancel(w, ticket.batch_id)


@when('lowtide cancels lowtide\'s batch id of the ticket "{key}"')
def step_cancel_ledger_id(context: Context, key: str) -> None:
    w = world(context)
    ticket: Ticket = w.tickets[key]
    assert ticket.ledger_batch_id is not None, ticket
    assert ticket.ledger_batch_id.startswith("lt_"), ticket
    _cancel(w, ticket.ledger_batch_id)


# -- status ----------------------------------------------------------------------------------------------------------


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()) if count)


@then("lowtide status shows these tickets:")
def step_status_tickets(context: Context) -> None:
    tickets = parking.status(world(context).ledger()).tickets
    assert len(tickets) == len(context.table.rows), tickets
    by_key = {ticket.key: ticket for ticket in tickets}
    for row in context.table:
        ticket = by_key[row["key"]]
        assert ticket.state == row["state"], ticket
        has_batch = "yes" if ticket.batch_id else "no"
        assert has_batch == row["batch"], ticket
        assert str(ticket.attempts) == row["attempts"], ticket


@then("lowtide status shows these batches:")
def step_status_batches(context: Context) -> None:
    batches = parking.status(world(context).ledger()).batches
    assert len(batches) == len(context.table.rows), batches
    for batch, row in zip(batches, context.table, strict=True):
        assert batch.state == row["state"], batch
        assert str(batch.requests) == row["requests"], batch
        assert _counts(batch.counts) == row["counts"], batch


def _answers_by_actor(w: World) -> dict[str, list[ActorResponse[Any]]]:
    by_actor: dict[str, list[ActorResponse[Any]]] = {}
    for label in w.asked:
        record = w.ledger().request(label) or next(
            r for r in w.ledger().requests() if r.params["messages"][0]["content"] == label
        )
        by_actor.setdefault(record.actor, []).append(answer_to(w, label))
    return by_actor


def _batch_price(answers: list[ActorResponse[Any]]) -> Decimal:
    return sum((a.cost.total_usd for a in answers if a.cost is not None), Decimal(0))


def _live_price(answers: list[ActorResponse[Any]]) -> Decimal:
    return sum((a.cost.live_equivalent_usd for a in answers if a.cost is not None), Decimal(0))


@then("lowtide status totals for each actor the cost of its answers, at batch and at live prices")
def step_status_actor_totals(context: Context) -> None:
    w = world(context)
    report = parking.status(w.ledger())
    expected = _answers_by_actor(w)
    assert sorted(line.actor for line in report.actors) == sorted(expected), report.actors
    for line in report.actors:
        answers = expected[line.actor]
        assert all(a.cost is not None for a in answers), answers
        assert line.requests == len(answers), line
        assert line.states == {"collected": len(answers)}, line
        assert line.cost_usd == _batch_price(answers) > 0, line
        assert line.live_cost_usd == _live_price(answers), line


@then("lowtide status totals for the batch the cost of all {count:d} answers, at batch and at live prices")
def step_status_batch_totals(context: Context, count: int) -> None:
    w = world(context)
    [batch] = parking.status(w.ledger()).batches
    answers = [answer_to(w, label) for label in w.asked]
    assert len(answers) == count == batch.requests, batch
    assert batch.batch_id == answers[0].ids.batch_id, batch
    assert batch.cost_usd == _batch_price(answers), batch
    assert batch.live_cost_usd == _live_price(answers), batch


@then("lowtide status totals the cost of all answers, the live price being twice the batch price")
def step_status_grand_totals(context: Context) -> None:
    w = world(context)
    report = parking.status(w.ledger())
    answers = [answer_to(w, label) for label in w.asked]
    assert report.cost_usd == _batch_price(answers), report.cost_usd
    assert report.live_cost_usd == _live_price(answers) == 2 * report.cost_usd, report.live_cost_usd


# -- the command -----------------------------------------------------------------------------------------------------


@when('"{command}" runs on the scenario\'s ledger')
def step_cli_on_ledger(context: Context, command: str) -> None:
    w = world(context)
    run_cli(w, command, ledger=w.ledger_path)


@when('"lowtide collect" of the batch of the ticket "{key}" runs with the key in "{variable}"')
def step_cli_collect_one(context: Context, key: str, variable: str) -> None:
    w = world(context)
    ticket: Ticket = w.tickets[key]
    run_cli(w, f"lowtide collect {ticket.batch_id} --api-key-env {variable}", ledger=w.ledger_path)


def _lines(context: Context) -> list[str]:
    return world(context).value["out"].splitlines()


def _line_with(context: Context, *parts: str) -> str:
    found = [line for line in _lines(context) if all(part in line for part in parts)]
    assert len(found) == 1, f"{len(found)} lines with {parts}:\n" + world(context).value["out"]
    return found[0]


@then('the command printed a line for the batch with its state "{state}", "{requests}" and "{counts}"')
def step_cli_batch_line(context: Context, state: str, requests: str, counts: str) -> None:
    [batch] = parking.status(world(context).ledger()).batches
    line = _line_with(context, str(batch.batch_id), state, requests, counts)
    assert f"${batch.cost_usd:.6f} (live ${batch.live_cost_usd:.6f})" in line, line


@then('the command printed a line for the batch, "{state}", "{requests}", and {unknown:d} answer(s) of unknown cost')
def step_cli_batch_line_unpriced(context: Context, state: str, requests: str, unknown: int) -> None:
    [batch] = parking.status(world(context).ledger()).batches
    line = _line_with(context, str(batch.batch_id), state, requests, "succeeded")
    said = f" + {unknown} answer(s) of unknown cost"
    assert f"${batch.cost_usd:.6f}{said} (live ${batch.live_cost_usd:.6f}{said})" in line, line


@then('the command printed a line for "{key}" with its state "{state}" and "{attempts}"')
def step_cli_ticket_line(context: Context, key: str, state: str, attempts: str) -> None:
    ticket = next(t for t in parking.status(world(context).ledger()).tickets if t.key == key)
    _line_with(context, key, state, f"batch {ticket.batch_id}", attempts)


@then('the command printed the batch of the ticket "{key}" as "{state}"')
def step_cli_batch_state(context: Context, key: str, state: str) -> None:
    ticket: Ticket = world(context).tickets[key]
    lines = _lines(context)
    assert f"{ticket.batch_id} {state}" in lines, lines


@then('the command printed that cancelling the batch of the ticket "{key}" was requested')
def step_cli_cancel_printed(context: Context, key: str) -> None:
    ticket: Ticket = world(context).tickets[key]
    assert _lines(context) == [f"{ticket.batch_id} cancellation requested (waiting-on-batch)"], _lines(context)


@then("the command printed each actor's cost at batch and live prices")
def step_cli_actor_lines(context: Context) -> None:
    report = parking.status(world(context).ledger())
    assert report.actors, report
    for line in report.actors:
        printed = _line_with(context, f"actor {line.actor}:")
        assert f"{line.requests} request(s)" in printed, printed
        assert f"${line.cost_usd:.6f} at batch prices, ${line.live_cost_usd:.6f} live" in printed, printed
        assert line.cost_usd > 0, line


@then("the command printed the total cost at batch prices and what the same calls would have cost live")
def step_cli_total_line(context: Context) -> None:
    report = parking.status(world(context).ledger())
    expected = f"total: ${report.cost_usd:.6f} at batch prices; the same calls live: ${report.live_cost_usd:.6f}"
    assert _lines(context)[-1] == expected, world(context).value["out"]


@then('the command did not print "{text}"')
def step_cli_not_printed(context: Context, text: str) -> None:
    out = world(context).value["out"]
    assert text not in out, out


def _json(context: Context) -> dict[str, Any]:
    result = world(context).value
    assert result["code"] == 0, result
    return json.loads(result["out"], parse_float=Decimal)


@then("the command printed JSON with these tickets:")
def step_cli_json_tickets(context: Context) -> None:
    tickets = _json(context)["tickets"]
    assert len(tickets) == len(context.table.rows), tickets
    for ticket, row in zip(sorted(tickets, key=lambda t: t["key"]), context.table, strict=True):
        for column in context.table.headings:
            assert str(ticket[column]) == row[column], (column, ticket)
        assert re.fullmatch(r"msgbatch_\w+", ticket["batch_id"]), ticket


@then('the JSON holds one batch, "{state}", with its API id, {requests:d} requests and counts "{counts}"')
def step_cli_json_batch(context: Context, state: str, requests: int, counts: str) -> None:
    [batch] = _json(context)["batches"]
    assert batch["state"] == state, batch
    assert batch["requests"] == requests, batch
    assert batch["batch_id"].startswith("msgbatch_"), batch
    assert batch["id"].startswith("lt_"), batch
    assert _counts(batch["counts"]) == counts, batch


@then("the JSON's costs, per ticket, actor, batch and in total, are those of the answers")
def step_cli_json_costs(context: Context) -> None:
    w = world(context)
    data = _json(context)
    answers = {label: answer_to(w, label) for label in w.asked}
    for ticket in data["tickets"]:
        cost = answers[ticket["key"]].cost
        assert cost is not None, ticket
        assert Decimal(str(ticket["cost_usd"])) == cost.total_usd, ticket
    batch_price, live_price = _batch_price(list(answers.values())), _live_price(list(answers.values()))
    [actor] = data["actors"]
    [batch] = data["batches"]
    for part in (actor, batch, data):
        assert Decimal(str(part["cost_usd"])) == batch_price, part
        assert Decimal(str(part["live_cost_usd"])) == live_price, part
