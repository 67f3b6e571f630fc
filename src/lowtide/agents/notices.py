"""Webhooks out for agent runs: a signed notice (`webhooks.notify`) when a run parks, waits on a person, stands in
doubt, finishes, fails or is stopped, configured per run (`Agent.start(notify=...)`) and kept with its input, so that
every process that advances the run tells it, and kept in the ledger's outbox until taken. A notice names the run,
its agent, its state and cost: never its arguments, result or error text."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from lowtide.config.settings import AGENT_EVENTS, NotifySettings
from lowtide.core.clock import Clock, SystemClock
from lowtide.errors import ConfigurationError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun
from lowtide.webhooks.notify import notifier_for

__all__ = ["run_notify", "tell"]

_log = logging.getLogger("lowtide.webhooks.notify")


def run_notify(notify: NotifySettings | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A run's `notify` as kept with its input (every `agent.*` state unless it names some); `ConfigurationError`,
    before the run is recorded, for settings that are not valid or a secret's variable that is not set."""
    if notify is None:
        return None
    try:
        settings = notify if isinstance(notify, NotifySettings) else NotifySettings.model_validate(notify)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ConfigurationError(f"notify: {where}: {problem['msg']}", field="notify") from None
    if "events" not in settings.model_fields_set:
        settings = settings.model_copy(update={"events": AGENT_EVENTS})
    notifier_for(settings, SystemClock())  # its secret checked now, not when the run first parks
    return settings.model_dump(mode="json")


async def tell(store: LedgerStore, runs: Iterable[AgentRun], clock: Clock) -> None:
    """Send each run's notice of the state it now stands in, where its input names a `notify`: one try each, side by
    side; one not taken is left in the outbox, for the next sweep (`lowtide agents resume`, an engine with notify)."""
    sends: list[Coroutine[Any, Any, bool]] = []
    for run in runs:
        if '"notify"' not in run.input:  # most runs: nothing to parse
            continue
        notify = json.loads(run.input).get("notify")
        kind = f"agent.{run.state.value}"
        if notify is None or kind not in notify.get("events", ()):
            continue
        settings = NotifySettings.model_validate({**notify, "retries": 0})
        try:
            notifier = notifier_for(settings, clock, outbox=async_ledger(store))
        except ConfigurationError as exc:  # its secret not set in this process: said, the run goes on
            _log.warning("Agent run %s's notice %s not sent: %s", run.run_id, kind, exc)
            continue
        assert notifier is not None
        data = {"run_id": run.run_id, "agent": run.reference, "state": run.state.value, "cost_usd": str(run.cost_usd)}
        sends.append(notifier.send(kind, data, subject=f"{run.run_id}@{run.updated_at!r}"))
    await asyncio.gather(*sends)
