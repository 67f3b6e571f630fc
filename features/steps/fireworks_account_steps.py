"""Steps for a Fireworks batch reached from another host (features/fireworks_batch.feature): `lowtide collect` and
`lowtide cancel` on a host whose FIREWORKS_ACCOUNT_ID names another account than the batch's, with a fireworks SDK
client of their own over the scenario's emulator."""

from __future__ import annotations

import httpx
from _httpx_bridge import Httpx2Bridge
from _support import World, set_env, world
from fireworks import AsyncFireworks
from fireworks_steps import FIREWORKS_ACCOUNT, FIREWORKS_KEY
from step_context import Context, then, when

from lowtide.calls import parking
from lowtide.emulator.fireworks.emulation import FireworksEmulation


def _other_host(w: World, account: str) -> AsyncFireworks:
    """A fireworks client as another host builds one: its own account in FIREWORKS_ACCOUNT_ID, no actor options."""
    set_env(w, "FIREWORKS_ACCOUNT_ID", account)
    http = httpx.AsyncClient(transport=Httpx2Bridge(w.transport()))
    w.cleanups.append(http.aclose)
    return AsyncFireworks(api_key=FIREWORKS_KEY, base_url=f"{w.emu.base_url}/fireworks", http_client=http)


@when('lowtide collects the ended Fireworks batches on a host whose FIREWORKS_ACCOUNT_ID is "{account}"')
def step_collect_elsewhere(context: Context, account: str) -> None:
    w = world(context)
    client = _other_host(w, account)
    w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))


@when('lowtide cancels the Fireworks key "{key}" on a host whose FIREWORKS_ACCOUNT_ID is "{account}"')
def step_cancel_elsewhere(context: Context, key: str, account: str) -> None:
    w = world(context)
    client = _other_host(w, account)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=client, clock=w.clock))


@then('the Fireworks account "{account}" holds {count:d} batch inference jobs and no input dataset')
def step_account_holds(context: Context, account: str, count: int) -> None:
    fireworks = world(context).emu.emulation(FireworksEmulation).fireworks
    jobs = [name for name in fireworks.jobs if name.startswith(f"{account}/")]
    inputs = [name for name in fireworks.datasets if name.startswith(f"{account}/") and name.endswith("-input")]
    assert (len(jobs), inputs) == (count, []), (jobs, inputs)


@then("the ledger names the Fireworks job by its account, and records the account as the create's first step")
def step_ledger_account(context: Context) -> None:
    w = world(context)
    [recorded] = w.ledger().batches()
    [job] = w.emu.emulation(FireworksEmulation).fireworks.jobs.values()
    assert recorded.provider_batch_id == f"accounts/{FIREWORKS_ACCOUNT}/batchInferenceJobs/{job.job_id}", recorded
    steps = w.ledger().create_steps(recorded.id)
    assert steps.get("account") == FIREWORKS_ACCOUNT, steps
