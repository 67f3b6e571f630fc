"""Steps for the provider registry: lookups, entry-point plugins and registration rules."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from _support import entry_point, names, plugins_importable, world
from step_context import Context, given, then, when

from lowtide import BatchProcessingMode, ProviderRegistry, default_registry
from lowtide.registry import ENTRY_POINT_GROUP


def _registry(context: Context) -> ProviderRegistry:
    registry = world(context).registry
    assert registry is not None, "no registry was set up"
    return registry


@given('the installed package declares the provider entry point "{spec}"')
def step_installedentry_point(context: Context, spec: str) -> None:
    expected = entry_point(spec)
    installed = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert installed.get(expected.name) == expected.value, f"installed entry points: {installed}"


@given("the default provider registry")
def step_default_registry(context: Context) -> None:
    world(context).registry = default_registry()


@given("an empty provider registry")
def step_empty_registry(context: Context) -> None:
    world(context).registry = ProviderRegistry()


@then("the default provider registry is built only once")
def step_default_once(context: Context) -> None:
    assert default_registry() is default_registry() is world(context).registry


@when("the installed provider plugins are loaded into the registry")
def step_load_installed(context: Context) -> None:
    w = world(context)
    w.plugins_loaded = w.attempt(lambda: _registry(context).load_entry_points()) or []


@given('the entry point "{spec}" is loaded into the registry')
@when('the entry point "{spec}" is loaded into the registry')
@when('the entry points "{spec}" are loaded into the registry')
def step_load_entry_points(context: Context, spec: str) -> None:
    plugins_importable()
    w = world(context)
    eps = [entry_point(part) for part in spec.split(",")]
    w.plugins_loaded = w.attempt(lambda: _registry(context).load_entry_points(eps)) or []


@then('the plugins loaded are "{expected}"')
def step_plugins_loaded(context: Context, expected: str) -> None:
    w = world(context)
    w.succeeded()
    assert w.plugins_loaded == names(expected), w.plugins_loaded


@then('the registry lists the providers "{expected}"')
def step_registry_lists(context: Context, expected: str) -> None:
    assert _registry(context).names() == names(expected), _registry(context).names()


@then("the registry lists no providers")
def step_registry_empty(context: Context) -> None:
    assert _registry(context).names() == [], _registry(context).names()


@then('provider "{name}" offers the modes "{expected}"')
def step_provider_modes(context: Context, name: str, expected: str) -> None:
    modes = [mode.value for mode in _registry(context).modes(name)]
    assert modes == names(expected), modes


@when('"{name}" is looked up in {mode:w} mode')
def step_look_up(context: Context, name: str, mode: str) -> None:
    w = world(context)
    w.resolution = w.attempt(lambda: _registry(context).resolve(name, BatchProcessingMode(mode)))


@when('"{name}" is looked up in {mode:w} mode with fallback to live')
def step_look_up_fallback(context: Context, name: str, mode: str) -> None:
    w = world(context)
    w.resolution = w.attempt(lambda: _registry(context).resolve(name, BatchProcessingMode(mode), fallback_to_live=True))


def _check_resolution(context: Context, factory: str, mode: str, *, fell_back: bool) -> None:
    w = world(context)
    w.succeeded()
    found = w.resolution
    assert found.factory.__name__ == factory, found.factory
    assert found.mode is BatchProcessingMode(mode), found.mode
    assert found.fell_back is fell_back, found


@then("the lookup gives {factory:w} in {mode:w} mode")
def step_lookup_gives(context: Context, factory: str, mode: str) -> None:
    _check_resolution(context, factory, mode, fell_back=False)


@then("the lookup gives {factory:w} in {mode:w} mode, having fallen back")
def step_lookup_fell_back(context: Context, factory: str, mode: str) -> None:
    _check_resolution(context, factory, mode, fell_back=True)


@then('the lookup of "{name}" in {mode:w} mode still gives {factory:w}')
@then('the lookup of "{name}" in {mode:w} mode now gives {factory:w}')
def step_lookup_of(context: Context, name: str, mode: str, factory: str) -> None:
    found = _registry(context).resolve(name, BatchProcessingMode(mode))
    assert found.factory.__name__ == factory, found.factory


def _plugin_class(name: str) -> Any:
    plugins_importable()
    import lowtide_echo_plugin

    return getattr(lowtide_echo_plugin, name)


@when('{factory:w} is registered as "{name}" for {mode:w} mode')
def step_register(context: Context, factory: str, name: str, mode: str) -> None:
    w = world(context)
    w.attempt(lambda: _registry(context).register(name, BatchProcessingMode(mode), _plugin_class(factory)))


@when('{factory:w} is registered as "{name}" for {mode:w} mode with replace=True')
def step_register_replace(context: Context, factory: str, name: str, mode: str) -> None:
    w = world(context)
    w.attempt(
        lambda: _registry(context).register(name, BatchProcessingMode(mode), _plugin_class(factory), replace=True)
    )
