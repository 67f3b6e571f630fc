"""Steps for lowtide's public API."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from importlib.metadata import version
from typing import Any

from behave import then, when

import lowtide


@then("lowtide's __all__ is sorted")
def step_all_sorted(context: Any) -> None:
    assert lowtide.__all__ == sorted(lowtide.__all__), [
        (a, b) for a, b in zip(lowtide.__all__, sorted(lowtide.__all__), strict=True) if a != b
    ]
    assert len(set(lowtide.__all__)) == len(lowtide.__all__)


@then("every name in lowtide's __all__ is exported")
def step_all_exported(context: Any) -> None:
    missing = [name for name in lowtide.__all__ if not hasattr(lowtide, name)]
    assert not missing, missing


@then("every public object lowtide exports is in its __all__")
def step_exports_listed(context: Any) -> None:
    public = {
        name
        for name, value in vars(lowtide).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    unlisted = public - set(lowtide.__all__)
    assert not unlisted, sorted(unlisted)


@then('"from lowtide import *" imports exactly the names in __all__')
def step_star_import(context: Any) -> None:
    namespace: dict[str, Any] = {}
    exec("from lowtide import *", namespace)
    namespace.pop("__builtins__", None)
    assert sorted(namespace) == sorted(lowtide.__all__), sorted(set(namespace) ^ set(lowtide.__all__))


@then("lowtide.__version__ is the version of the installed distribution")
def step_version(context: Any) -> None:
    assert lowtide.__version__ == version("lowtide"), (lowtide.__version__, version("lowtide"))


def _modules_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{name.partition('.')[0] for name in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@when("a new Python process imports lowtide")
def step_import_fresh(context: Any) -> None:
    context.modules = _modules_after("import lowtide")


@when("a new Python process imports lowtide and asks it for ClaudeBatchProvider")
def step_import_claude(context: Any) -> None:
    context.modules = _modules_after("import lowtide\nlowtide.ClaudeBatchProvider")


@then("neither the anthropic nor the openai SDK was imported")
def step_no_sdk(context: Any) -> None:
    assert not {"anthropic", "openai"} & context.modules, sorted({"anthropic", "openai"} & context.modules)


@then("the anthropic SDK was imported, and the openai SDK was not")
def step_anthropic_only(context: Any) -> None:
    assert "anthropic" in context.modules, "anthropic was not imported"
    assert "openai" not in context.modules, "openai was imported"


_BUILD = (
    "from lowtide import Actor\n"
    "actor = Actor({{'name': 'a', 'provider': '{provider}', 'model': '{model}', 'max_tokens': 64,"
    " 'batch_processing': 'batch'}}, api_key='not-a-key')\n"
    "actor.provider()\n"
    "actor.batch_codec()"
)


@when("a new Python process builds an Anthropic actor in batch mode and its provider")
def step_build_anthropic(context: Any) -> None:
    context.modules = _modules_after(_BUILD.format(provider="anthropic", model="claude-sonnet-5-5"))


@when("a new Python process builds an OpenAI actor in batch mode and its provider")
def step_build_openai(context: Any) -> None:
    context.modules = _modules_after(_BUILD.format(provider="openai", model="gpt-5.4-mini"))


@then("the openai SDK was imported, and the anthropic SDK was not")
def step_openai_only(context: Any) -> None:
    assert "openai" in context.modules, "openai was not imported"
    assert "anthropic" not in context.modules, "anthropic was imported"
