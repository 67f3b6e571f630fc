"""What an agent run's journal can store: JSON values and pydantic models, checked before anything runs (naming the
type it cannot store), written as JSON that gives the same value back on replay, and fingerprinted so that replay
can tell it is asked the same thing."""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lowtide.errors import UnstorableValueError

__all__ = ["SCRIPT_MODULE", "decoded", "encoded", "fingerprint", "reference_of", "unstorable", "unstorable_type"]

SCRIPT_MODULE = "lowtide_agents_script_"
"""The prefix of the name a script's path is loaded under (`fleet.imported`)."""
_MODEL = "__lowtide_model__"
"""The key under which a pydantic model's class is named in its stored form."""


def reference_of(thing: Any) -> str:
    """`module:qualname` of a function or class: how another process finds it again. One defined in the script being
    run (`__main__`) is named by its module when run with `python -m`, else by the script's path (`/path/run.py:f`),
    which `fleet.imported` loads as a module of its own name (its `if __name__ == "__main__":` part not run)."""
    module = getattr(thing, "__module__", "?")
    qualname = getattr(thing, "__qualname__", type(thing).__qualname__)
    if module == "__main__":
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        script = getattr(main, "__file__", None)
        if spec is not None and getattr(spec, "name", None):
            module = str(spec.name)
        elif script:
            module = str(Path(script).resolve())
    elif module.startswith(SCRIPT_MODULE):  # a script `lowtide agents resume` loaded: named by its path again
        module = str(getattr(sys.modules.get(module), "__file__", module))
    return f"{module}:{qualname}"


_STORABLE = (BaseModel, str, int, float, bool, list, tuple, dict, type(None))


def unstorable(value: Any, where: str) -> UnstorableValueError | None:
    """Why `value` cannot be stored (the error to raise, naming its type and where it is), or None when it can."""
    found = _first_unstorable(value, where)
    return _refusal(*found) if found is not None else None


def unstorable_type(kind: object, where: str) -> UnstorableValueError | None:
    """Why values of the declared type `kind` cannot be stored, or None when they can (or it says nothing: no plain
    class, `Any`, `object`)."""
    if not isinstance(kind, type) or kind in (Any, object) or issubclass(kind, _STORABLE):
        return None
    return _refusal(where, f"{kind.__module__}.{kind.__qualname__}")


def _refusal(path: str, kind: str) -> UnstorableValueError:
    return UnstorableValueError(
        f"{path} is a {kind}, which the agent's journal cannot store: pass and return JSON values (str, int, float,"
        " bool, None, lists and dicts with str keys) or pydantic models.",
        field=path,
    )


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""The exact types a value is most often of, told by one look up (not a chain of `isinstance`): every turn and step
of every run a `resume` pass replays is fingerprinted, and its arguments checked."""


def _first_unstorable(value: Any, path: str) -> tuple[str, str] | None:
    if type(value) in _SCALARS or isinstance(value, str | bool | int | float | BaseModel):
        return None
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType] - checked item by item below
        for index, item in enumerate(items):
            if type(item) in _SCALARS:  # (its path not spelt out for nothing)
                continue
            found = _first_unstorable(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        entries: dict[Any, Any] = dict(value)  # pyright: ignore[reportUnknownArgumentType] - checked below
        for key, item in entries.items():
            if not isinstance(key, str):
                return f"{path} key {key!r}", type(key).__qualname__
            if type(item) in _SCALARS:
                continue
            found = _first_unstorable(item, f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    return path, f"{type(value).__module__}.{type(value).__qualname__}"


_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
"""`json.dumps(value, sort_keys=True, separators=(",", ":"))`, its encoder made once rather than for every value."""
_FINGERPRINT = json.JSONEncoder(sort_keys=True, default=repr, separators=(",", ":")).encode
"""The same, anything not JSON by its repr: what a fingerprint digests (the same text as ever: journals keep them)."""


def _plain(value: Any) -> Any:
    seen: object = value
    kind = type(seen)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, BaseModel):
        return {_MODEL: reference_of(type(value)), "value": value.model_dump(mode="json")}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


def encoded(value: Any) -> str:
    """`value` as the journal stores it (checked storable first by the caller)."""
    return _ENCODE(_plain(value))


def _revived(value: Any) -> Any:
    if isinstance(value, list):
        return [_revived(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        named: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType] - JSON objects have str keys
        if set(named) == {_MODEL, "value"}:
            module, _, qualname = str(named[_MODEL]).partition(":")
            cls: Any = importlib.import_module(module)
            for part in qualname.split("."):
                cls = getattr(cls, part)
            return cls.model_validate(named["value"])
        return {k: _revived(v) for k, v in named.items()}
    return value


def decoded(text: str) -> Any:
    """A stored value as it was (a pydantic model rebuilt from its class)."""
    return _revived(json.loads(text))


def fingerprint(*parts: Any) -> str:
    """A digest of what was asked (its parts as JSON, anything else by its repr)."""
    text = _FINGERPRINT(_plain(list(parts)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]
