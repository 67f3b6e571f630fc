"""Steps for rebuilding a lost or damaged ledger from the providers' APIs (features/ledger_rebuild.feature)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from _rebuild_support import RebuildWorld, delete_ledger_files, gather, keys_created, the_ledger
from _support import World, check_error, emulated_reply_to, run_cli, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.ledger.sqlite import Ledger
from lowtide.rebuild import held


class Context(StepContext):
    rebuild: RebuildWorld


def _r(context: Context) -> RebuildWorld:
    found = getattr(context, "rebuild", None)
    assert isinstance(found, RebuildWorld), "no emulator on a socket: add 'Given the emulator on a socket, ...'"
    return found


def _questions(first: int, last: int) -> list[int]:
    return list(range(first, last + 1))


def _keyed(key: str, numbers: list[int]) -> dict[str, str]:
    """Question n keyed as `key` is, its number n ("k-1" ... "k-4")."""
    prefix = key.rstrip("0123456789")
    return {f"{prefix}{n}": f"question {n}" for n in numbers}


def _long_keyed(numbers: list[int]) -> dict[str, str]:
    """Keys of 80 characters: too long for any provider's custom ids with the ledger's identity (64 at most)."""
    return {f"k{n}-".ljust(80, "x"): f"question {n}" for n in numbers}


def _ask(w: World, r: RebuildWorld, prompts: dict[str, str], *, ledger: str | None = None) -> dict[str, Any]:
    async def asking(actor: Actor) -> list[Any]:
        return await gather(*(actor.run(prompt, key=key) for key, prompt in prompts.items()))

    asked = dict(zip(prompts, r.program(w, asking, ledger=ledger), strict=True))
    r.prompts.update(prompts)
    r.asked = asked
    return asked


def _answered(r: RebuildWorld, asked: dict[str, Any]) -> None:
    for key, outcome in asked.items():
        text = getattr(outcome, "text", None)
        assert isinstance(text, str), f"{key!r} was not answered: {outcome!r}"
        assert text.startswith(emulated_reply_to(r.prompts[key])), (key, text)


def _lost_identity(w: World, r: RebuildWorld) -> None:
    """The scenario's ledger's identity, kept before it is lost."""
    if not r.identity:
        r.identity = the_ledger().identity()


# -- the emulator and the programs ---------------------------------------------------------------------------------


@given("the emulator on a socket, whose batches take {seconds:g} seconds")
def step_socket(context: Context, seconds: float) -> None:
    context.rebuild = RebuildWorld.serve(world(context), seconds)


@given("the programs' actor sends its batches to the {provider:w} API")
@given("the programs' actor sends its batches to the {provider:w} API, {options}")
def step_actor(context: Context, provider: str, options: str = "") -> None:
    r = _r(context)
    if options.startswith("with ") and options.endswith(" attempts a request"):
        r.use(provider)
        r.configuration["batch"]["max_attempts"] = int(options.split()[1])
    else:
        r.use(provider, options)


@when("another tool of the account runs an OpenAI batch of {count:d} requests with custom ids of its own, which ends")
def step_foreign_batch(context: Context, count: int) -> None:
    """A batch lowtide did not make, on the account the rebuild reads: its custom ids ("row-1", ...) name no ledger."""
    import io
    import json

    from openai import OpenAI

    r = _r(context)
    client = OpenAI(base_url=r.socket.url + "/v1", api_key="emulator-key")
    body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 16}
    url = "/v1/chat/completions"
    lines = [{"custom_id": f"row-{n}", "method": "POST", "url": url, "body": body} for n in range(count)]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    uploaded = client.files.create(file=("rows.jsonl", io.BytesIO(data)), purpose="batch")
    client.batches.create(input_file_id=uploaded.id, endpoint=url, completion_window="24h")
    client.close()


@when('the API will refuse the next "{route}" call with status {status:d}')
def step_refuse_next(context: Context, route: str, status: int) -> None:
    _r(context).socket.emu.faults.fail_next(route, status)


@given('the API will let the request "{key}" expire')
def step_expire(context: Context, key: str) -> None:
    w, r = world(context), _r(context)
    _lost_identity(w, r)
    r.socket.emu.faults.outcome(f"{key}_{r.identity}", "expired")


_ASKED = 'a program asks questions {first:d} to {last:d} with the keys "{key}" to "{last_key}"'


@when(_ASKED + ", and they are answered")
def step_ask_answered(context: Context, first: int, last: int, key: str, last_key: str) -> None:
    w, r = world(context), _r(context)
    _answered(r, _ask(w, r, _keyed(key, _questions(first, last))))
    _lost_identity(w, r)


@when(_ASKED)
def step_ask(context: Context, first: int, last: int, key: str, last_key: str) -> None:
    w, r = world(context), _r(context)
    r.socket.emu.faults.restore_outcomes({})  # an expiry armed for the first run is not the rerun's
    _ask(w, r, _keyed(key, _questions(first, last)))


@when("a program asks questions {first:d} to {last:d} with keys of 80 characters, and they are answered")
def step_ask_long_answered(context: Context, first: int, last: int) -> None:
    w, r = world(context), _r(context)
    _answered(r, _ask(w, r, _long_keyed(_questions(first, last))))
    _lost_identity(w, r)


@when("a program asks questions {first:d} to {last:d} with keys of 80 characters")
def step_ask_long(context: Context, first: int, last: int) -> None:
    w, r = world(context), _r(context)
    _ask(w, r, _long_keyed(_questions(first, last)))


@when(
    'a program on the ledger "{name}" asks questions {first:d} to {last:d} with the keys "{key}" to'
    ' "{last_key}", and they are answered'
)
def step_ask_other(context: Context, name: str, first: int, last: int, key: str, last_key: str) -> None:
    w, r = world(context), _r(context)
    path = str(w.path(name))
    _answered(r, _ask(w, r, _keyed(key, _questions(first, last)), ledger=path))
    w.witnessed["other identity"] = [Ledger(path).identity()]


@when(
    'a program on a new ledger at the same place asks questions {first:d} to {last:d} with the keys "{key}"'
    ' to "{last_key}", and they are answered'
)
def step_ask_new(context: Context, first: int, last: int, key: str, last_key: str) -> None:
    w, r = world(context), _r(context)
    _answered(r, _ask(w, r, _keyed(key, _questions(first, last))))
    w.witnessed["new identity"] = [the_ledger().identity()]


@when(
    'a program parks questions {first:d} to {last:d} with the keys "{key}" to "{last_key}", their batches'
    " created and still running"
)
def step_park(context: Context, first: int, last: int, key: str, last_key: str) -> None:
    w, r = world(context), _r(context)
    prompts = _keyed(key, _questions(first, last))

    async def parking(actor: Actor) -> list[Any]:
        return await gather(*(actor.submit(prompt, key=key) for key, prompt in prompts.items()))

    tickets = r.program(w, parking)
    assert all(getattr(t, "state", None) == "waiting-on-batch" for t in tickets), tickets
    r.prompts.update(prompts)
    w.witnessed["running"] = list(Counter(str(t.batch_id) for t in tickets).items())
    _lost_identity(w, r)


@when("the API's batches end")
def step_batches_end(context: Context) -> None:
    world(context).clock.advance(1_000)


@when("the ledger's file is deleted with its -wal and -shm, half-way through the run")
def step_delete(context: Context) -> None:
    w = world(context)
    _lost_identity(w, _r(context))
    delete_ledger_files(w.ledger_path)
    assert not w.ledger_path.exists()


@when("the pages of the ledger's file are overwritten")
def step_damage(context: Context) -> None:
    w = world(context)
    _lost_identity(w, _r(context))
    from lowtide.ledger.store import close_ledgers

    close_ledgers()  # its -wal checkpointed into it, as a program's exit leaves it
    size = w.ledger_path.stat().st_size
    with w.ledger_path.open("r+b") as damaged:  # the header stays; pages after it are overwritten
        damaged.seek(size // 3)
        damaged.write(b"\xff" * (size // 3))


@when("the ledger is rebuilt from the API into a new file with the lost ledger's identity, waiting for nothing")
def step_rebuild(context: Context) -> None:
    w, r = world(context), _r(context)
    plan = r.rebuild(w, the_ledger(), wait=False)
    assert not plan.unseen, plan.unseen


@when(
    "the ledger is rebuilt from the API into a new file with the lost ledger's identity, waiting for the batches it"
    " cannot read yet"
)
def step_rebuild_waiting(context: Context) -> None:
    w, r = world(context), _r(context)
    plan = r.rebuild(w, the_ledger(), wait=True)
    assert not plan.unseen, plan.unseen


# -- the command ---------------------------------------------------------------------------------------------------


@when("the operator runs `{command}`")
def step_command(context: Context, command: str) -> None:
    w, r = world(context), _r(context)
    line = command.replace("actors.yaml", str(r.actor_file(w))).replace("IDENTITY", r.identity)
    before = sum(r.socket.emu.calls.values())
    run_cli(w, line, ledger=w.ledger_path, cwd=w.path("actors.yaml").parent)
    w.witnessed["API calls by the command"] = [str(sum(r.socket.emu.calls.values()) - before)]


@then("the API was not asked for its batches by the rebuild")
def step_api_unread(context: Context) -> None:
    calls = world(context).witnessed["API calls by the command"]
    assert calls == ["0"], f"the rebuild made {calls[0]} call(s) to the API"


def _placed(context: Context, text: str) -> str:
    w, r = world(context), _r(context)
    new = w.witnessed.get("new identity", [""])[0]
    text = text.replace("NEW_IDENTITY", new).replace("IDENTITY", r.identity)
    return text.replace("LEDGER", str(w.ledger_path))


@then('the rebuild printed "{text}"')
def step_printed(context: Context, text: str) -> None:
    out = world(context).value["out"]
    assert _placed(context, text) in out, f"{_placed(context, text)!r} not in:\n{out}"


@then('the rebuild printed on stderr "{text}"')
def step_printed_err(context: Context, text: str) -> None:
    err = world(context).value["err"]
    assert _placed(context, text) in err, f"{_placed(context, text)!r} not in:\n{err}"
    assert "Traceback" not in err, err


@then("the command printed one line on stderr, and nothing on stdout")
def step_one_line(context: Context) -> None:
    result = world(context).value
    assert result["err"].strip(), result
    assert "\n" not in result["err"].strip(), result
    assert not result["out"], result


@then("on stderr, the command names each running batch of the API and its request count")
def step_names_running(context: Context) -> None:
    w, r = world(context), _r(context)
    err = w.value["err"]
    running = w.witnessed["running"]
    assert running, "no batch was left running"
    for batch_id, requests in running:
        assert f"{batch_id} ({r.provider}, {requests} request(s))" in err, (batch_id, err)


@then("no SQLite ledger file was made at the scenario's ledger")
def step_no_ledger(context: Context) -> None:
    assert not world(context).ledger_path.exists()


@then(
    "the command listed the lost ledger's identity with {lost:d} requests, and the other ledger's with {other:d}, each"
    " with its newest batch's time"
)
def step_listed(context: Context, lost: int, other: int) -> None:
    w, r = world(context), _r(context)
    out = w.value["out"]
    [other_identity] = w.witnessed["other identity"]
    for identity, requests in ((r.identity, lost), (other_identity, other)):
        when = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"
        line = re.search(
            rf"^    {identity}  1 batch\(es\), {requests} request\(s\), newest {when}$",
            out,
            re.M,
        )
        assert line, f"{identity} with {requests} request(s) not listed in:\n{out}"


@then("the command listed the lost ledger's identity with {batches:d} batches and {requests:d} requests")
def step_listed_lost(context: Context, batches: int, requests: int) -> None:
    out = world(context).value["out"]
    identity = _r(context).identity
    line = re.search(rf"^    {identity}  {batches} batch\(es\), (\d+) request\(s\), newest ", out, re.M)
    assert line, f"{identity} with {batches} batch(es) not listed in:\n{out}"
    assert int(line.group(1)) == requests, f"{identity} listed with {line.group(1)} request(s), not {requests}:\n{out}"


@then("the command printed one identity, and no batch of unknown owner")
def step_one_identity(context: Context) -> None:
    out = world(context).value["out"]
    listed = [line for line in out.splitlines() if line.startswith("    ")]
    assert len(listed) == 1, out
    assert listed[0].startswith(f"    {_r(context).identity}  "), out


@then("the scenario's ledger holds {count:d} requests, as before")
def step_holds(context: Context, count: int) -> None:
    assert held(the_ledger())["requests"] == count


# -- what was rebuilt, and what the API created --------------------------------------------------------------------


@then(
    "the rebuilt ledger has the lost ledger's identity, and records {count:d} requests: {answered:d} answered,"
    " {running:d} in batches still running"
)
def step_rebuilt(context: Context, count: int, answered: int, running: int) -> None:
    r = _r(context)
    assert r.plan is not None
    ledger = the_ledger()
    assert ledger.identity() == r.identity, (ledger.identity(), r.identity)
    rebuilt = r.plan.rebuilt
    assert (rebuilt.requests, rebuilt.answered, rebuilt.waiting) == (count, answered, running), rebuilt
    assert r.written.get("requests") == count, r.written
    states = Counter(record.state.value for record in ledger.requests())
    assert states["succeeded"] == answered, states
    assert states["waiting-on-batch"] == running, states


@then("the rebuild left {count:d} request for the rerun to send, its last attempt one that may be made again")
def step_left(context: Context, count: int) -> None:
    r = _r(context)
    assert r.plan is not None
    assert dict(r.plan.rebuilt.left_out) == {"retry": count}, r.plan.rebuilt.left_out


@then(
    "{count:d} of the rebuilt requests are keyed by their custom ids alone, and {batches:d} batch holds only"
    " hashed custom ids"
)
def step_unkeyed(context: Context, count: int, batches: int) -> None:
    r = _r(context)
    assert r.plan is not None
    assert r.plan.rebuilt.unkeyed == count, r.plan.rebuilt
    assert len(r.plan.hashed) == batches, r.plan.hashed
    assert the_ledger().unkeyed()


@then("the rebuilt ledger holds no request keyed by its custom id alone any more")
def step_adopted(context: Context) -> None:
    ledger = the_ledger()
    assert not ledger.unkeyed()
    r = _r(context)
    known = {record.key for record in ledger.requests()}
    assert set(r.prompts) <= known, sorted(set(r.prompts) - known)


@then("each of the {count:d} questions was answered with the emulated reply to it")
def step_each_answered(context: Context, count: int) -> None:
    r = _r(context)
    assert len(r.asked) == count, r.asked
    _answered(r, r.asked)


@then('each of the {count:d} questions failed with a {name:w} saying "{text}"')
def step_each_failed(context: Context, count: int, name: str, text: str) -> None:
    r = _r(context)
    assert len(r.asked) == count, r.asked
    for key, outcome in r.asked.items():
        check_error(outcome, name)
        assert text in str(outcome), (key, str(outcome))


@then("the API created each of the {count:d} keys exactly once")
def step_created_once(context: Context, count: int) -> None:
    created = keys_created(_r(context).created())
    assert len(created) == count, created
    twice = {key: times for key, times in created.items() if times != 1}
    assert not twice, f"created more than once: {twice}"


@then('the API created the keys "{a}", "{b}" and "{c}" once each, and "{d}" twice')
def step_created_twice(context: Context, a: str, b: str, c: str, d: str) -> None:
    created = keys_created(_r(context).created())
    assert created == Counter({a: 1, b: 1, c: 1, d: 2}), created


@then("the API created {count:d} requests in all, each once")
def step_created_all(context: Context, count: int) -> None:
    created = _r(context).created()
    assert len(created) == count, created
    assert set(created.values()) == {1}, created


# -- calls keyed by their requests ---------------------------------------------------------------------------------


def _derived(w: World, r: RebuildWorld, numbers: list[int], *, park: bool = False) -> dict[str, Any]:
    """Questions asked (or parked) with no key: each keyed by its request (`derive_key`); by that key."""

    async def asking(actor: Actor) -> list[Any]:
        if park:
            return await gather(*(actor.submit(f"question {n}") for n in numbers))
        return await gather(*(actor.run(f"question {n}") for n in numbers))

    outcomes = r.program(w, asking)
    if park:
        keyed = {t.key: t for t in outcomes}
        r.prompts.update({t.key: f"question {n}" for n, t in zip(numbers, outcomes, strict=True)})
        return keyed
    keyed = {}
    for n, outcome in zip(numbers, outcomes, strict=True):
        key = f"question {n}"  # an answer names its custom id; the prompts are what the checks read
        keyed[key] = outcome
        r.prompts[key] = f"question {n}"
    return keyed


@when("a program asks questions {first:d} to {last:d} without keys, and they are answered")
def step_ask_derived_answered(context: Context, first: int, last: int) -> None:
    w, r = world(context), _r(context)
    r.asked = _derived(w, r, _questions(first, last))
    _answered(r, r.asked)
    _lost_identity(w, r)


@when("a program asks questions {first:d} to {last:d} without keys")
def step_ask_derived(context: Context, first: int, last: int) -> None:
    w, r = world(context), _r(context)
    r.asked = _derived(w, r, _questions(first, last))


@when("a program parks questions {first:d} to {last:d} without keys, their batches created and still running")
def step_park_derived(context: Context, first: int, last: int) -> None:
    w, r = world(context), _r(context)
    tickets = _derived(w, r, _questions(first, last), park=True)
    assert all(t.state == "waiting-on-batch" for t in tickets.values()), tickets
    w.witnessed["parked keys"] = list(tickets)
    _lost_identity(w, r)


@then("the rebuilt requests in the running batch hold the bodies their keys were derived from")
def step_bodies(context: Context) -> None:
    from lowtide.batching.keys import derive_key, params_json

    w, r = world(context), _r(context)
    parked = w.witnessed["parked keys"]
    records = the_ledger().requests_for(parked)
    assert [record.key for record in records] == parked, records
    for record in records:
        assert record.params, f"{record.key}: its body is not known"
        assert derive_key(r.provider, params_json(record.params)) == record.key, record


@then(
    "the JSON printed says a dry run of IDENTITY: {batches:d} batches ({ended:d} ended, {running:d} running),"
    " {answered:d} answered, {waiting:d} waiting, nothing left out"
)
def step_dry_json(context: Context, batches: int, ended: int, running: int, answered: int, waiting: int) -> None:
    import json

    w, r = world(context), _r(context)
    printed = json.loads(w.value["out"])
    assert printed["dry_run"] is True, printed
    assert printed["identity"] == r.identity, printed
    assert len(printed["batches"]) == batches, printed["batches"]
    assert sum(b["ended"] for b in printed["batches"]) == ended, printed["batches"]
    assert sum(not b["ended"] for b in printed["batches"]) == running, printed["batches"]
    assert (printed["answered"], printed["waiting"], printed["left_for_the_rerun"]) == (answered, waiting, {}), printed


@when("the API no longer holds the results files of its batches")
def step_results_gone(context: Context) -> None:
    import httpx

    r = _r(context)
    headers = {"authorization": "Bearer emulator-key"}
    listed = httpx.get(r.socket.url + "/v1/batches", headers=headers, timeout=10.0).json()["data"]
    assert listed, "the API holds no batch"
    for batch in listed:
        for file_id in (batch.get("output_file_id"), batch.get("error_file_id")):
            if file_id:
                httpx.delete(r.socket.url + f"/v1/files/{file_id}", headers=headers, timeout=10.0).raise_for_status()


@then("the rebuild named each batch of the API with its status and request count")
def step_named_batches(context: Context) -> None:
    import httpx

    w, r = world(context), _r(context)
    headers = {"authorization": "Bearer emulator-key"}
    listed = httpx.get(r.socket.url + "/v1/batches", headers=headers, timeout=10.0).json()["data"]
    assert len(listed) == 2, listed
    for batch in listed:
        line = f"    {batch['id']}  {batch['status']}, created "
        assert line in w.value["out"], (line, w.value["out"])
        assert f", {batch['request_counts']['total']} request(s)" in w.value["out"], batch
