"""Steps for Mistral actors across programs (features/mistral_batch.feature): a call parked by one program, canceled
or collected by a later one, each program with a mistralai client of its own over the emulator, as a new process
would build it."""

from __future__ import annotations

import httpx2
from _batch_providers import later_result
from _support import API_KEY, World, set_env, world, yaml_doc
from mistralai.client import Mistral
from step_context import Context, given, then, when

from lowtide import Actor
from lowtide.calls import parking


def _program_client(w: World) -> Mistral:
    """A mistralai client as a new program makes it: an HTTP client of its own over the emulator."""
    http = httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url)
    return Mistral(api_key=API_KEY, server_url=w.emu.base_url, async_client=http)


def _program_actor(w: World) -> Actor:
    """The current actor as a new program builds it; closed after the scenario (a program that ends leaves its
    batch to the ledger, not to a goodbye)."""
    actor = Actor(w.current_actor().configuration, client=_program_client(w), clock=w.clock, registry=w.registry)

    async def close() -> None:
        try:
            await actor.aclose()
        except RuntimeError as exc:  # its connections belonged to a program's event loop, closed with it
            if "Event loop is closed" not in str(exc):
                raise

    w.cleanups.append(close)
    return actor


@when('a Mistral program parks "{prompt}" with the key "{key}" and ends')
def step_mistral_park_in_program(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    actor = _program_actor(w)

    w.tickets[key] = w.in_program(lambda: actor.submit(prompt, key=key))


@when('lowtide cancels the Mistral key "{key}"')
def step_mistral_cancel_key(context: Context, key: str) -> None:
    w = world(context)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=_program_client(w), clock=w.clock))


@when("lowtide collects the ended Mistral batches")
def step_mistral_collect(context: Context) -> None:
    w = world(context)
    w.in_program(lambda: parking.collect(w.ledger(), client=_program_client(w), clock=w.clock))


@when('a later Mistral program waits for the result of "{key}"')
def step_mistral_later_result(context: Context, key: str) -> None:
    w = world(context)
    later_result(w, _program_actor(w), key)


@given("an emulated Mistral API served on a socket, whose jobs take {seconds:g} seconds")
def step_mistral_socket_api(context: Context, seconds: float) -> None:
    """The emulator on a loopback socket, on the scenario's clock: `lowtide collect` and `cancel` reach it by its
    URL."""
    w = world(context)
    w.serve_emulator(processing_seconds=seconds)


@given('a Mistral actor "{name}" that reaches it with the key in "{variable}", with:')
def step_mistral_socket_actor(context: Context, name: str, variable: str) -> None:
    """An actor that builds its own mistralai client from its base URL and key variable, as a program run from the
    command line would."""
    w = world(context)
    [url] = w.witnessed["server url"]
    set_env(w, variable, API_KEY)
    w.client = None
    settings = {"name": name, "provider": "mistral", "model": "mistral-small-latest", "max_tokens": 64}
    w.add_actor({**settings, "base_url": url, "api_key_env": variable, **yaml_doc(context.text)})


@then('the command printed that cancelling the Mistral job of the ticket "{key}" was requested, the job now "{state}"')
def step_mistral_cli_cancelled(context: Context, key: str, state: str) -> None:
    w = world(context)
    ticket = w.tickets[key]
    assert w.value["out"].splitlines() == [f"{ticket.batch_id} cancellation requested ({state})"], w.value["out"]
