"""Steps for a PostgreSQL ledger whose server restarts, or stays away, while lowtide works on it: a cluster of the
feature's own, a database in it for each scenario (restarted, stopped and started; the run's shared cluster is never
touched), hosts as separate processes against an emulated API on a loopback socket (`many_hosts_steps`: its counters
say what was created), and what a user sees: each call's answer or error, the processes' warnings, the command line's
output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from _support import emulated_reply_to
from many_hosts_steps import Context as HostsContext
from many_hosts_steps import hosts
from postgres import PostgresCluster
from step_context import given, then, when

from lowtide.core.hosts import HOST_ID_ENV
from lowtide.ledger.store import open_ledger


class Context(HostsContext, Protocol):
    """What this module keeps on the scenario's context (and the emulator's, `many_hosts_steps`)."""

    outage: Outage


_MODEL = "claude-sonnet-5-5"
_HANG = 240.0
"""Real seconds a host may take to answer its calls, restart included, on a loaded machine: longer is a hang."""


@dataclass
class Host:
    """One host's process and what it printed: an answer or an error per call, and its warnings."""

    name: str
    process: subprocess.Popen[str]
    answers: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    errors: list[str] = field(default_factory=list[str])
    reader: threading.Thread | None = None
    done_at: float = 0.0


@dataclass
class Outage:
    cluster: PostgresCluster
    url: str
    """The ledger's URL as the hosts are given it (with `lowtide_outage_seconds` when the scenario sets it)."""
    plain: str
    """The same without lowtide's setting: what psycopg, in the test's own reads, is given."""
    hosts: list[Host] = field(default_factory=list[Host])
    went_at: float = 0.0
    back_at: float = 0.0
    command: subprocess.CompletedProcess[str] | None = None
    read_before: list[str] = field(default_factory=list[str])
    read_after: list[str] = field(default_factory=list[str])


def outage(context: Context) -> Outage:
    return context.outage


@given("a PostgreSQL server of the scenario's own")
def step_own_server(context: Context) -> None:
    _own_server(context, None)


@given("a PostgreSQL server of the scenario's own, whose ledger waits out an outage for {seconds:g} seconds")
def step_own_server_waiting(context: Context, seconds: float) -> None:
    _own_server(context, seconds)


def _own_server(context: Context, seconds: float | None) -> None:
    # A cluster apart from the run's: restarting the run's shared one would end the connections of every other
    # scenario's ledger still open in this process. One for the feature, each scenario a database of its own in it:
    # a cluster each (initdb, start, stop) cost 1.2 s of CPU a scenario.
    shared = context.shared_servers.get(_CLUSTER)
    if not isinstance(shared, _FeatureCluster):
        shared = context.shared_servers[_CLUSTER] = _FeatureCluster(PostgresCluster.start())
        context.feature_cleanups.callback(shared.cluster.stop)
    elif not (shared.cluster.data / "postmaster.pid").exists():  # a scenario before ended with its server stopped
        shared.cluster.start_up()
    cluster = shared.cluster
    shared.databases += 1
    plain = cluster.create_database(f"outage_{shared.databases}")
    url = plain if seconds is None else f"{plain}?lowtide_outage_seconds={seconds:g}"
    context.outage = Outage(cluster, url, plain)


_CLUSTER = "outage cluster"
"""The feature's cluster's name in `context.shared_servers`."""


@dataclass
class _FeatureCluster:
    cluster: PostgresCluster
    databases: int = 0


_HOST = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import anthropic
    from lowtide import Actor

    api, ledger, window, every, keys = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]

    async def main():
        client = anthropic.AsyncAnthropic(base_url=api, api_key="hosts-key", max_retries=0)
        # Waiting hosts read the ledger by themselves every 5 minutes: only the database's notice wakes them sooner.
        settings = {"name": "agent", "model": "MODEL", "max_tokens": 64, "batch_processing": "batch",
                    "batch": {"poll_interval": 0.2, "coalesce_window": window, "lease_seconds": 300,
                              "watch_interval": 300}}
        actor = Actor(settings, client=client, ledger=ledger)
        print(json.dumps({"ready": True}), flush=True)
        sys.stdin.readline()

        async def one(key):
            try:
                answer = await actor.run(f"Question {key}", key=key)
                return {"key": key, "text": answer.text, "at": time.time()}
            except Exception as exc:
                return {"key": key, "error": type(exc).__name__, "message": str(exc), "at": time.time()}

        calls = []
        for key in keys:
            calls.append(asyncio.ensure_future(one(key)))
            await asyncio.sleep(every)
        for done in await asyncio.gather(*calls):
            print(json.dumps(done), flush=True)
        await actor.aclose()

    asyncio.run(main())
    """
).replace("MODEL", _MODEL)


def _start_host(context: Context, name: str, keys: list[str], *, window: float, every: float) -> Host:
    state = outage(context)
    api = hosts(context).api
    for key in keys:
        hosts(context).prompts[key] = f"Question {key}"
    process = subprocess.Popen(
        [sys.executable, "-c", _HOST, api, state.url, str(window), str(every), *keys],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, HOST_ID_ENV: name},
        text=True,
    )
    host = Host(name, process)

    def stop() -> None:
        if process.poll() is None:
            process.kill()
        process.wait()

    context.cleanups.append(stop)
    assert process.stdout is not None
    ready = process.stdout.readline()
    assert json.loads(ready or "{}").get("ready"), (ready, process.stderr.read() if process.stderr else "")

    def read() -> None:
        out, err = process.stdout, process.stderr
        assert out is not None
        assert err is not None
        errors = threading.Thread(target=lambda: host.errors.extend(err.read().splitlines()))
        errors.start()
        for line in out:
            said = json.loads(line)
            host.answers[said["key"]] = said
        errors.join()
        host.done_at = time.time()

    host.reader = threading.Thread(target=read, daemon=True)
    host.reader.start()
    state.hosts.append(host)
    return host


def _go(host: Host) -> None:
    assert host.process.stdin is not None
    host.process.stdin.write("go\n")
    host.process.stdin.flush()


def _wait(hosts_: list[Host]) -> None:
    for host in hosts_:
        try:
            host.process.wait(timeout=_HANG)
        except subprocess.TimeoutExpired:
            host.process.kill()
            raise AssertionError(f"{host.name} hung: its calls were not all answered in {_HANG} s") from None
        assert host.reader is not None
        host.reader.join(timeout=30)


def _created_batches(plain: str) -> int:
    import psycopg
    from psycopg.errors import UndefinedTable

    with psycopg.connect(plain, connect_timeout=5) as db:
        try:
            row = db.execute("SELECT count(*) FROM batches WHERE provider_batch_id IS NOT NULL").fetchone()
        except UndefinedTable:  # no host has opened the ledger yet
            return 0
    return int(row[0]) if row is not None else 0


def _once_a_batch_exists(plain: str) -> None:
    deadline = time.monotonic() + _HANG
    while _created_batches(plain) == 0:
        assert time.monotonic() < deadline, "no batch was created"
        time.sleep(0.02)


def _keys(stem: str, count: int) -> list[str]:
    return [f"{stem}-{n}" for n in range(1, count + 1)]


@when(
    'hosts "{first}" and "{second}", separate processes, each ask {count:d} calls on it, one every {every:g} seconds,'
    " and once the first batch exists the server is restarted"
)
def step_restart_under_load(context: Context, first: str, second: str, count: int, every: float) -> None:
    state = outage(context)
    started = [
        _start_host(context, first, _keys("a", count), window=0.2, every=every),
        _start_host(context, second, _keys("b", count), window=0.5, every=every),
    ]
    for host in started:
        _go(host)
    _once_a_batch_exists(state.plain)
    state.went_at = time.time()
    state.cluster.restart()
    state.back_at = time.time()
    _wait(started)


@when(
    'host "{name}", a separate process, asks {count:d} calls on it, and once their batch exists the server is stopped'
    " for {seconds:g} seconds or more, until the host has ended"
)
def step_stopped_under_load(context: Context, name: str, count: int, seconds: float) -> None:
    state = outage(context)
    host = _start_host(context, name, _keys("c", count), window=0.2, every=0.0)
    _go(host)
    _once_a_batch_exists(state.plain)
    state.cluster.shut_down()
    state.went_at = time.time()
    time.sleep(seconds)
    # The calls must fail while the server is away: it stays away until the host has ended, however long a loaded
    # machine takes the process to say its errors and exit (at load 15, more than the 7 s left of a fixed 10 once).
    try:
        host.process.wait(timeout=_HANG)
    except subprocess.TimeoutExpired:
        host.process.kill()
        raise AssertionError(f"{name} still waited, the server away {seconds + _HANG:g} s") from None
    state.cluster.start_up()
    state.back_at = time.time()
    _wait([host])


@when('host "{name}" asks the same {count:d} calls again, in a new process')
def step_rerun(context: Context, name: str, count: int) -> None:
    host = _start_host(context, name, _keys("c", count), window=0.2, every=0.0)
    _go(host)
    _wait([host])


@then("every call of every host got its emulated reply, none failed")
def step_all_answered(context: Context) -> None:
    _all_answered(outage(context).hosts)


@then("every call of the last host got its emulated reply")
def step_last_answered(context: Context) -> None:
    _all_answered(outage(context).hosts[-1:])


def _all_answered(hosts_: list[Host]) -> None:
    for host in hosts_:
        assert host.process.returncode == 0, (host.name, host.process.returncode, host.errors[-20:])
        failed = {key: said for key, said in host.answers.items() if "error" in said}
        assert not failed, (host.name, len(failed), next(iter(failed.values())))
        for key, said in host.answers.items():
            assert said["text"].startswith(emulated_reply_to(f"Question {key}")), (host.name, key, said)
    assert all(len(host.answers) > 0 for host in hosts_)


@then("each host asked its {count:d} calls")
def step_each_asked(context: Context, count: int) -> None:
    for host in outage(context).hosts:
        assert len(host.answers) == count, (host.name, len(host.answers))


@then("the API created {count:d} requests in all, each custom id once, in as many batches as the ledger holds")
def step_created_once_each(context: Context, count: int) -> None:
    emulator = hosts(context).emulator
    assert emulator is not None
    assert len(emulator.created_custom_ids) == count, len(emulator.created_custom_ids)
    twice = {custom_id: n for custom_id, n in emulator.created_custom_ids.items() if n != 1}
    assert not twice, twice
    assert emulator.created_batches == _created_batches(outage(context).plain), emulator.created_batches


@then("the ledger holds {count:d} requests, each answered, and every batch collected")
def step_ledger_settled(context: Context, count: int) -> None:
    ledger = open_ledger(outage(context).url)
    records = ledger.requests()
    assert len(records) == count, len(records)
    assert {record.state.value for record in records} == {"succeeded"}, {record.state.value for record in records}
    assert {batch.state.value for batch in ledger.batches()} == {"collected"}, ledger.batches()


@then("the calls were all answered within {seconds:g} seconds of the server's return")
def step_answered_soon(context: Context, seconds: float) -> None:
    state = outage(context)
    last = max(said["at"] for host in state.hosts for said in host.answers.values())
    # Waiting hosts read the ledger by themselves only every 5 minutes: a notice lost in the restart, had no one woken
    # them when the listener came back, would have kept some waiting that long.
    assert last - state.back_at < seconds, last - state.back_at


@then("each host said its ledger was out of reach, and answered again, naming it with its password shown as ***")
def step_said_outage(context: Context) -> None:
    state = outage(context)
    password = unquote(urlsplit(state.plain).password or "")
    for host in state.hosts:
        text = "\n".join(host.errors)
        assert password not in text, host.name
        gone = [line for line in host.errors if "is out of reach" in line]
        back = [line for line in host.errors if "answers again" in line]
        assert gone, (host.name, host.errors[-20:])
        assert back, (host.name, host.errors[-20:])
        assert ":***@127.0.0.1:" in gone[0], gone[0]


@then(
    'every call failed with a LedgerError saying "{first}" and "{second}", naming the server with its password shown'
    " as ***"
)
def step_all_failed(context: Context, first: str, second: str) -> None:
    state = outage(context)
    host = state.hosts[-1]
    password = unquote(urlsplit(state.plain).password or "")
    assert host.answers, (host.name, host.errors[-20:])
    for key, said in host.answers.items():
        assert said.get("error") == "LedgerError", (key, said)
        message = said["message"]
        assert first in message, message
        assert second in message, message
        assert f":***@127.0.0.1:{state.cluster.port}/" in message, message
        assert password not in message, message
        # Failed while the server was away: after the outage time, not once it came back.
        assert said["at"] < state.back_at, (said["at"] - state.back_at, message)


@then("the API created no batch for them but the first")
def step_no_new_create(context: Context) -> None:
    emulator = hosts(context).emulator
    assert emulator is not None
    assert emulator.created_batches == 1, emulator.created_batches
    assert set(emulator.created_custom_ids.values()) == {1}, emulator.created_custom_ids


# -- the sync face ----------------------------------------------------------------------------------------------------


@given("its ledger holds the answered calls of a host that asked {count:d}")
def step_ledger_holds_answers(context: Context, count: int) -> None:
    host = _start_host(context, "host-s", _keys("s", count), window=0.1, every=0.0)
    _go(host)
    _wait([host])
    _all_answered([host])
    outage(context).hosts.clear()


@when(
    "the server is stopped, `lowtide status` is run on the ledger, and the server is started {seconds:g} seconds after"
    " the command said it was out of reach"
)
def step_status_through_outage(context: Context, seconds: float) -> None:
    state = outage(context)
    state.cluster.shut_down()
    command = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "status", "--ledger", state.url, "--limit", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    context.cleanups.append(command.kill)
    assert command.stderr is not None
    said: list[str] = []
    for line in command.stderr:  # progress, not time: starting Python and lowtide takes seconds on a loaded machine
        said.append(line)
        if "is out of reach" in line:
            break
    assert said, "lowtide status said nothing"
    assert "is out of reach" in said[-1], said
    time.sleep(seconds)
    assert command.poll() is None, "lowtide status did not wait for the server"
    state.cluster.start_up()
    state.back_at = time.time()
    out, err = command.communicate(timeout=_HANG)
    state.command = subprocess.CompletedProcess(command.args, command.returncode, out, "".join(said) + err)


@then(
    "the command listed the {count:d} requests, exiting with 0, and said the ledger was out of reach, then answered"
    " again"
)
def step_status_listed(context: Context, count: int) -> None:
    state = outage(context)
    done = state.command
    assert done is not None
    assert done.returncode == 0, (done.returncode, done.stderr)
    listed = json.loads(done.stdout)
    assert sorted(ticket["key"] for ticket in listed["tickets"]) == sorted(_keys("s", count)), listed
    assert "is out of reach" in done.stderr, done.stderr
    assert "answers again" in done.stderr, done.stderr
    assert unquote(urlsplit(state.plain).password or "") not in done.stdout + done.stderr


@when("a program's ledger reads the requests, the server is restarted, and it reads them again")
def step_read_through_restart(context: Context) -> None:
    state = outage(context)
    ledger = open_ledger(state.url)
    state.read_before = sorted(record.key for record in ledger.requests())
    state.cluster.restart()
    state.back_at = time.time()
    state.read_after = sorted(record.key for record in ledger.requests())


@then("it read the same {count:d} requests both times")
def step_read_same(context: Context, count: int) -> None:
    state = outage(context)
    assert len(state.read_before) == count, state.read_before
    assert state.read_after == state.read_before, state.read_after


# -- commits made twice ------------------------------------------------------------------------------------------------


@given("every transaction of the PostgreSQL ledger is made a second time once it has committed")
def step_commits_twice(context: Context) -> None:
    from commits import made_twice

    context.cleanups.append(made_twice())


@then("the ledger's sums count {count:d} answers, each once, at the batch's price")
def step_sums_once(context: Context, count: int) -> None:
    ledger = open_ledger(context.postgres_url)
    [line] = ledger.views.spend_by("provider")
    assert line.answers == count, line
    records = ledger.requests()
    assert len(records) == count, records
    paid = sum((record.cost_usd or Decimal(0) for record in records), Decimal(0))
    assert line.cost_usd == paid, (line.cost_usd, paid)
