"""Steps for lowtide's public API."""

from __future__ import annotations

import types
from importlib.metadata import version
from typing import Any

from behave import then

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
