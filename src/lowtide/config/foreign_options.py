"""`provider_options` sections for a provider other than the actor's, on the actor or in a call's own arguments: one
naming no provider is refused before anything is sent (a misspelt name: its options would be lost), with the name
meant; one of another provider is warned of, once, as ignored (one mapping may hold several providers' options)."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable

from lowtide.errors import ConfigurationError

__all__ = ["check_foreign_options"]

log = logging.getLogger("lowtide.config.actors")


def check_foreign_options(
    names: Iterable[str], provider: str, actor: str, *, said: set[tuple[str, ...]] | None = None
) -> None:
    """Refuse (`ConfigurationError`, its field the section) a section of `names` naming no provider, and warn of the
    others as ignored: each time for an actor's configuration; for a call's own options (`said`: the sections the
    actor's calls already warned of), once per actor and names, so that a program's every call does not say it."""
    from lowtide.registry import default_registry  # the registry's modules import the configuration's

    names = tuple(names)
    if all(name == provider for name in names):
        return
    try:
        registry = default_registry()
        known, reads = registry.names(), registry.option_sections(provider)
    except ConfigurationError:  # its plugins cannot load (said when the actor resolves its provider)
        known, reads = list(names), (provider,)
    foreign = tuple(sorted(name for name in names if name not in reads))
    if not foreign:
        return
    whose = "a call's own provider_options" if said is not None else "provider_options"
    sections = " and ".join(f"provider_options.{name}" for name in reads)
    own = f"actor {actor!r} is of provider {provider!r}, which reads only {sections}"
    for name in foreign:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            guess = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigurationError(
                f"{whose}.{name}: no provider is named {name!r}{guess}; {own}.", field=f"provider_options.{name}"
            )
    if said is not None:
        if foreign in said:
            return
        said.add(foreign)
    log.warning(
        "%s.%s: %s; the options for %s are ignored (a file's `defaults` may hold several providers' options, each"
        " actor taking its own provider's).",
        whose,
        f", {whose}.".join(foreign),
        own,
        ", ".join(repr(name) for name in foreign),
    )
