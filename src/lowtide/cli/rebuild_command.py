"""`lowtide ledger rebuild`: a lost or damaged ledger rebuilt from what the providers' APIs still hold, so that a rerun
of the same program collects what was sent instead of sending (and paying for) it again. The work is
`lowtide.rebuild`'s; here, what the command is given (the ledger, the actors or providers, the identity) and what it
says (`rebuild_report`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lowtide.cli.params import json_option, ledger_option
from lowtide.errors import ConfigurationError, LedgerError, ProviderCapabilityError

if TYPE_CHECKING:
    from lowtide.batching.backend import BatchBackend
    from lowtide.config.settings import BatchSettings
    from lowtide.ledger.interface import LedgerStore
    from lowtide.ledger.location import LedgerLocation

# The rebuild's work (the engine's backends, the ledger's stores, pydantic's models, asyncio) is imported when the
# command runs: `lowtide --help` and every other command list this one without paying for it.

__all__ = ["rebuild"]

_IDENTITY = re.compile(r"[0-9a-f]{12}")
_PROVIDER = re.compile(r"([A-Za-z0-9_.-]+)(?:=([A-Za-z_][A-Za-z0-9_]*))?")


@click.command(
    short_help="Rebuild a lost or damaged ledger from the providers' APIs.",
    epilog="""\b
Examples:
  lowtide ledger rebuild --actors actors.yaml                      list the identities found
  lowtide ledger rebuild --actors actors.yaml --identity 3f9a0c1d2e4b --dry-run
  lowtide ledger rebuild --actors actors.yaml --identity 3f9a0c1d2e4b --wait
  lowtide ledger rebuild --provider openai --provider anthropic=WORK_KEY --identity 3f9a0c1d2e4b""",
)
@ledger_option
@click.option(
    "--actors",
    "actor_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The actor file your programs use: each actor's provider, endpoint and key name an account to read.",
)
@click.option(
    "--provider",
    "providers",
    multiple=True,
    metavar="NAME[=KEY_VARIABLE]",
    help="A provider whose account to read at its default endpoint, with the key in KEY_VARIABLE (default: the"
    " provider's own variable). May be given more than once.",
)
@click.option(
    "--identity", default=None, help="The lost ledger's identity (12 hex digits). Without it: list those found."
)
@click.option(
    "--wait",
    is_flag=True,
    help="Wait for the running batches whose requests cannot be read until they end (Anthropic's, say), then record"
    " them. Without it such batches stop the rebuild before anything is written.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be recorded, and write nothing.")
@json_option
def rebuild(
    ledger: str | None,
    actor_file: Path | None,
    providers: tuple[str, ...],
    identity: str | None,
    wait: bool,
    dry_run: bool,
    json_output: bool,
) -> int:
    """Rebuild a lost or damaged ledger from the batches the providers' APIs still hold.

    A ledger lost (its file deleted, its -wal removed before a checkpoint) or damaged must not be replaced by a new one
    and the program run again: a new ledger has an identity of its own, so it would send (and pay for) again every
    request the lost one had sent. Instead, with the actor file your programs use (or the providers and their keys'
    variables), this reads the accounts' batches: without --identity it lists the identities their custom ids carry,
    for you to choose the lost ledger's, and writes nothing; with it, it records every batch of that ledger's still
    held (their requests and results) in the ledger --ledger names, which takes that identity. Run your program again
    with that ledger: it collects what was answered or is running, and sends only what never was sent.

    The ledger must hold nothing: a new one, or the damaged file, which is moved aside first (renamed
    FILE.damaged-TIME). Stop the programs using the ledger first.
    """
    if actor_file is None and not providers:
        raise ConfigurationError(
            "Name the accounts to read: --actors with the actor file your programs use, or --provider NAME.",
            field="actors",
        )
    if identity is not None and not _IDENTITY.fullmatch(identity):
        raise ConfigurationError(
            f"--identity: a ledger's identity is 12 lowercase hex digits (as the listing shows), not {identity!r}.",
            field="identity",
        )
    import asyncio

    given = _backends(actor_file, providers)
    return asyncio.run(_run(ledger, given, identity, wait=wait, dry_run=dry_run, json_output=json_output))


async def _run(
    ledger: str | None,
    given: Sequence[tuple[BatchBackend, str, str, BatchSettings]],
    identity: str | None,
    *,
    wait: bool,
    dry_run: bool,
    json_output: bool,
) -> int:
    from lowtide.cli.rebuild_report import planned, refused_unseen, surveyed, written
    from lowtide.core.clock import SystemClock
    from lowtide.rebuild import check_target, look, record, sources_of, survey

    sources = sources_of(given)
    try:
        if identity is None:
            click.echo(surveyed(await survey(sources), json_output=json_output))
            return 0
        if not dry_run:  # refused before the APIs are read (a --wait may take hours), when it would be after
            _refuse_in_process(ledger)
        existing = _existing(ledger)
        if existing is not None:  # refused before the APIs are read, when it would be after
            try:
                check_target(existing, identity)
            finally:
                existing.close()
        plan = await look(sources, identity, clock=SystemClock(), wait=wait, said=_said)
        if plan.unseen:
            click.echo(refused_unseen(plan), err=True)
            return 1
        if dry_run or not plan.found:
            click.echo(planned(plan, dry_run=dry_run, json_output=json_output))
            return 0 if plan.found or dry_run else 1
        if not json_output:
            click.echo(planned(plan, dry_run=False, json_output=False))
        target = _target(ledger)
        try:
            counts = record(plan, target)
            click.echo(written(plan, target.location, counts, json_output=json_output))
        finally:
            target.close()
        return 0
    finally:
        for backend, *_ in given:
            await backend.aclose()


def _backends(actor_file: Path | None, providers: Sequence[str]) -> list[tuple[BatchBackend, str, str, BatchSettings]]:
    """Each account's batch backend, with its actor's name, model and batch settings ("" for a provider alone)."""
    from lowtide.config.settings import BatchSettings

    given: list[tuple[BatchBackend, str, str, BatchSettings]] = []
    if actor_file is not None:
        from lowtide.actor import Actor
        from lowtide.config.actors import load_actors

        for configuration in load_actors(actor_file).values():
            actor = Actor(configuration)
            try:
                backend = actor.batch_backend("a rebuild (it reads batches)")
            except ProviderCapabilityError:
                continue  # a provider of live calls alone: no batch of its can hold a request
            given.append((backend, configuration.name, configuration.model, configuration.batch))
    for text in providers:
        given.append((_provider_backend(text), "", "", BatchSettings()))
    if not given:
        raise ConfigurationError(f"No actor of {actor_file} sends batches: there is nothing to read.", field="actors")
    return given


def _provider_backend(text: str) -> BatchBackend:
    from lowtide.config.actors import BatchProcessingMode
    from lowtide.provider import ProviderOptions
    from lowtide.registry import default_registry

    matched = _PROVIDER.fullmatch(text)
    if matched is None:
        raise ConfigurationError(f"--provider: write NAME or NAME=KEY_VARIABLE, not {text!r}.", field="provider")
    name, variable = matched.groups()
    factory = default_registry().resolve(name, BatchProcessingMode.BATCH).factory
    backend = factory(ProviderOptions(api_key_env=variable)).batch_backend()
    if backend is None:
        raise ProviderCapabilityError(name, "a rebuild (it reads batches)")
    return backend


def _existing(ledger: str | None) -> LedgerStore | None:
    """The ledger `ledger` names when there is one that can be read (none is made here): opened for reading alone.
    None for a damaged one too: it is moved aside when the rebuild is written (`_target`)."""
    from lowtide.ledger.store import ledger_location

    location = ledger_location(ledger)
    if location.kind.in_process or location.kind.missing(location.target) is not None:
        return None
    return _opened(location, read_only=True)


def _refuse_in_process(ledger: str | None) -> LedgerLocation:
    """The location `ledger` names; a `ConfigurationError` when it is a ledger in this process's memory, which a
    rebuild would write into only to lose it as the command ends."""
    from lowtide.ledger.store import ledger_location

    location = ledger_location(ledger)
    if location.kind.in_process:
        raise ConfigurationError(
            f"{location} is a ledger in one process's memory, gone when this command ends: name the ledger your"
            " programs use with --ledger or $LOWTIDE_LEDGER.",
            field="ledger",
        )
    return location


def _target(ledger: str | None) -> LedgerStore:
    """The ledger to rebuild into, made if there is none; a damaged one (a SQLite file) moved aside first."""
    from lowtide.ledger.store import open_ledger

    location = _refuse_in_process(ledger)
    store = _opened(location, read_only=False)
    if store is not None:
        return store
    aside = location.kind.set_aside(location.target)
    click.echo(f"The damaged ledger was moved aside to {aside}; a new one is made in its place.", err=True)
    return open_ledger(location, own=True)


def _opened(location: LedgerLocation, *, read_only: bool) -> LedgerStore | None:
    """The ledger at `location`, its requests read through (damage in its pages shows when they are read); None when
    it is damaged so that its kind can move it aside (`LedgerKind.damaged`)."""
    from lowtide.ledger.store import open_ledger

    store: LedgerStore | None = None
    try:
        store = open_ledger(location, read_only=read_only, own=True)
        store.identity()
        sum(len(chunk) for chunk in store.export_rows("requests"))
        return store
    except LedgerError as exc:
        if store is not None:
            store.close()
        if not location.kind.damaged(location.target, exc):
            raise
        return None


def _said(line: str) -> None:
    click.echo(line, err=True)
    sys.stderr.flush()
