"""Steps for loading actor configurations from dicts and files."""

from __future__ import annotations

import json
from typing import Any

import yaml
from _support import dig, literal, names, shown, world, yaml_doc
from step_context import Context, given, then, when

from lowtide import Actor, ActorConfiguration, load_actors


@given('a file "{name}" containing:')
def step_file(context: Context, name: str) -> None:
    world(context).path(name).write_text(context.text + "\n", encoding="utf-8")


@given('a file "{name}" holding the Latin-1 bytes of:')
def step_file_latin1(context: Context, name: str) -> None:
    world(context).path(name).write_bytes((context.text + "\n").encode("latin-1"))


@given('a file "{name}" containing the actor "{actor}" with "{setting}"')
def step_file_with_setting(context: Context, name: str, actor: str, setting: str) -> None:
    settings = {"name": actor, "model": "claude-sonnet-5-5", **yaml_doc(setting)}
    world(context).path(name).write_text(yaml.safe_dump(settings), encoding="utf-8")


@when("the actors are loaded from the dict:")
def step_load_dict(context: Context) -> None:
    w = world(context)
    w.loaded = w.attempt(lambda: load_actors(literal(context.text)))


@when('the actors are loaded from "{name}"')
def step_load_file(context: Context, name: str) -> None:
    w = world(context)
    w.loaded = w.attempt(lambda: load_actors(w.path(name)))


@when('actor "{actor}" is loaded from "{name}"')
def step_load_named(context: Context, actor: str, name: str) -> None:
    w = world(context)
    w.configuration = w.attempt(lambda: ActorConfiguration.from_file(w.path(name), actor))


@when('the only actor is loaded from "{name}"')
def step_load_only(context: Context, name: str) -> None:
    w = world(context)
    w.configuration = w.attempt(lambda: ActorConfiguration.from_file(str(w.path(name))))


@when('an Actor is created from "{name}" with the name "{actor}"')
def step_actor_from_file_named(context: Context, name: str, actor: str) -> None:
    w = world(context)
    w.actor = w.attempt(lambda: Actor.from_file(w.path(name), actor, clock=w.clock))


@when('an Actor is created from "{name}"')
def step_actor_from_file(context: Context, name: str) -> None:
    w = world(context)
    w.actor = w.attempt(lambda: Actor.from_file(w.path(name), clock=w.clock))


@then('the loaded actor "{actor}" has the provider options {options}')
def step_loaded_options(context: Context, actor: str, options: str) -> None:
    w = world(context)
    w.succeeded()
    assert w.loaded is not None
    assert w.loaded[actor].provider_options == json.loads(options), w.loaded[actor].provider_options


@then('the actors loaded are "{expected}"')
def step_actors_loaded(context: Context, expected: str) -> None:
    w = world(context)
    w.succeeded()
    assert w.loaded is not None
    assert list(w.loaded) == names(expected), list(w.loaded)


def _check_settings(configuration: ActorConfiguration, row: Any) -> None:
    for heading in row.headings:
        actual = shown(dig(configuration, heading))
        assert actual == row[heading], f"{configuration.name}.{heading} is {actual!r}, not {row[heading]!r}"


@then("the loaded actors have these settings:")
def step_loaded_settings(context: Context) -> None:
    w = world(context)
    w.succeeded()
    assert w.loaded is not None
    assert [row["name"] for row in context.table] == list(w.loaded), list(w.loaded)
    for row in context.table:
        _check_settings(w.loaded[row["name"]], row)


@then('the actor is called "{actor}" and has these settings:')
def step_actor_settings(context: Context, actor: str) -> None:
    w = world(context)
    w.succeeded()
    assert w.current_actor().name == actor, w.current_actor().name
    [row] = context.table.rows
    _check_settings(w.current_actor().configuration, row)


@then('the configuration loaded is "{actor}" with model "{model}"')
def step_configuration_loaded(context: Context, actor: str, model: str) -> None:
    w = world(context)
    w.succeeded()
    assert w.configuration is not None
    assert (w.configuration.name, w.configuration.model) == (actor, model), w.configuration
