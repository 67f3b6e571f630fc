"""Steps for answers built without a second validation (`types.built_text_answer`), checked against validation."""

from __future__ import annotations

from typing import Any

from behave import given, then, when
from pydantic import BaseModel

from lowtide import Actor, ActorResponse, MemoryLedger
from lowtide.emulator import Emulator

_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.4-mini"}


@given("an actor of {provider} in batch mode against the emulator, on an in-memory ledger")
def step_actor(context: Any, provider: str) -> None:
    emulator = Emulator()
    client = emulator.openai_client() if provider == "openai" else emulator.client()
    context.built_actor = Actor(
        {
            "name": "plain",
            "provider": provider,
            "model": _MODELS[provider],
            "max_tokens": 64,
            "batch_processing": "batch",
            "batch": {"poll_interval": 0.05, "coalesce_window": 0.01},
        },
        client=client,
        ledger=MemoryLedger(),
    )
    context.cleanups.append(context.built_actor.aclose)
    context.cleanups.append(client.close)


@when('it is asked "{prompt}" in batch mode')
def step_ask(context: Any, prompt: str) -> None:
    context.built_answer = context.runner.run(context.built_actor.run(prompt))


def _validated(answer: ActorResponse[Any]) -> ActorResponse[Any]:
    return ActorResponse[Any].model_validate(answer.model_dump(mode="json", exclude_unset=True))


def _parts(answer: ActorResponse[Any]) -> list[BaseModel]:
    return [answer, answer.ids, *answer.content]


@then("the answer, its content blocks and its ids each have the fields set validation would give them")
def step_fields_set(context: Any) -> None:
    answer: ActorResponse[Any] = context.built_answer
    assert answer.content, answer
    for built, validated in zip(_parts(answer), _parts(_validated(answer)), strict=True):
        assert built.model_fields_set == validated.model_fields_set, (type(built), built.model_fields_set)


@then("the answer equals the one validated from its own JSON")
def step_equal(context: Any) -> None:
    answer: ActorResponse[Any] = context.built_answer
    again = _validated(answer)
    assert again == answer, (again, answer)
    assert again.model_dump_json() == answer.model_dump_json()
    assert answer.model_copy() == answer
