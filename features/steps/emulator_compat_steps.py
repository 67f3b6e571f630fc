"""Steps the emulator's Groq and Together scenarios share (features/emulator_groq.feature,
features/emulator_together.feature): the emulator on a socket, restarted from its state file, on its own clock, and
what the groq and together SDKs see of it alike. `{sdk:Sdk}` is "groq" or "together" (features/steps/
_compat_sockets.py); what only one of them has stays in emulator_groq_steps.py and emulator_together_steps.py."""

from __future__ import annotations

import groq
import together
from _compat_sockets import Context, Sdk, call
from _support import world
from step_context import given, then, when


@given("the emulator keeps its state in a file")
def step_socket_state_file(context: Context) -> None:
    context.socket_emulator.keep_state(world(context))


@when("the emulator is restarted from its state file")
def step_socket_restart(context: Context) -> None:
    context.socket_emulator.serve(world(context))


@when("{seconds:g} seconds pass on the emulator's clock")
def step_socket_time(context: Context, seconds: float) -> None:
    context.socket_emulator.clock.advance(seconds)


@when('the {sdk:Sdk} SDK asks "{model}" for a chat completion')
def step_sdk_chat(context: Context, sdk: Sdk, model: str) -> None:
    call(context, lambda c: c.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}]))


@when("the {sdk:Sdk} SDK deletes the input file")
def step_sdk_delete(context: Context, sdk: Sdk) -> None:
    assert call(context, lambda c: c.files.delete(context.sdk_socket.file_id)) is not None, context.sdk_socket.error


@then('the {sdk:Sdk} SDK lists no file of purpose "{purpose}"')
def step_sdk_no_files(context: Context, sdk: Sdk, purpose: str) -> None:
    listed = call(context, lambda c: c.files.list())
    assert purpose not in [item.purpose for item in listed.data], listed


@then('the {sdk:Sdk} SDK raised a {error:w} with status {status:d}, its error body saying "{says}"')
def step_sdk_raised(context: Context, sdk: Sdk, error: str, status: int, says: str) -> None:
    raised = context.sdk_socket.error
    assert isinstance(raised, getattr(sdk.module, error)), raised
    assert isinstance(raised, groq.APIStatusError | together.APIStatusError), raised
    assert raised.status_code == status, raised.status_code
    body = raised.body if isinstance(raised.body, dict) else {}
    detail = body.get("error", body)
    assert set(detail) >= {"message", "type"}, body
    assert says in str(detail), body
