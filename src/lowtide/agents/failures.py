"""A failed turn or step as the journal keeps it (`<class>: <message>`), and raised again on replay as its first
error's class where that can be rebuilt safely (a builtin exception, or one of `lowtide.errors` that takes its
message alone), so that the agent's own `except ValueError:` takes the same path on every replay; any other class
(a user's module, which replay does not import, or one whose constructor needs more than a message) is raised as
`JournaledError`, naming it."""

from __future__ import annotations

import builtins

from lowtide import errors
from lowtide.errors import ActorError

__all__ = ["JournaledError", "journaled", "replayed"]


class JournaledError(ActorError):
    """A turn or step that failed when it first ran fails again on replay, with the error the journal kept, when its
    class cannot be rebuilt: `error_class` names it (`module.QualName`, or a builtin's name)."""

    def __init__(self, message: str, *, error_class: str = "") -> None:
        super().__init__(message)
        self.error_class = error_class


def _class_name(exc: BaseException) -> str:
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def journaled(exc: BaseException) -> str:
    """`exc` as the journal keeps it: its class (a builtin by its name, any other by `module.QualName`) and message."""
    return f"{_class_name(exc)}: {exc}"


def _rebuildable(name: str) -> type[Exception] | None:
    module, _, qualname = name.rpartition(".")
    home = builtins if not module else errors if module == errors.__name__ else None
    found = getattr(home, qualname, None) if home is not None and "." not in qualname else None
    return found if isinstance(found, type) and issubclass(found, Exception) else None


def replayed(text: str) -> Exception:
    """The error a journaled failure (`journaled`'s text) is raised as on replay."""
    name, _, message = text.partition(": ")
    kind = _rebuildable(name)
    rebuilt: Exception | None = None
    if kind is not None:
        try:
            rebuilt = kind(message)
        except Exception:  # a constructor that needs more than a message: said as JournaledError below
            rebuilt = None
    # A constructor that rewrites its message would not be the error that was raised.
    if rebuilt is not None and str(rebuilt) == message:
        return rebuilt
    named = message and all(part.isidentifier() for part in name.split("."))
    return JournaledError(text, error_class=name if named else "")
