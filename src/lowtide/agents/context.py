"""`AgentContext`: what an agent's code is handed, its model turns (`run`) and steps (`step`) journaled. Each asks the
journal at its position first: what is done returns its stored result (nothing paid, nothing run), a different
request than the journal holds there is a divergence, and a step begun without a result is in doubt. A batch-mode
turn whose answer is not in the ledger yet is submitted under its key and parks the run (`Parked`); a question to a
person whose decision is not journaled yet leaves the run waiting on that person (`WaitingOnPerson`)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from lowtide.agents.asking import ask
from lowtide.agents.budget import over, turn_arguments
from lowtide.agents.failures import JournaledError, journaled, replayed
from lowtide.agents.lease import lease_kept
from lowtide.agents.values import decoded, encoded, fingerprint, reference_of, unstorable, unstorable_type
from lowtide.agents.writes import JournalWrites
from lowtide.batching.crashpoints import crashpoint
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import ActorError, AgentDivergedError, BudgetExceededError, ConfigurationError
from lowtide.ledger.journal_records import EntryKind, JournalEntry
from lowtide.ledger.records import RequestRecord
from lowtide.messages.structured import parse_response
from lowtide.types import ActorResponse

if TYPE_CHECKING:
    from lowtide.actor import Actor
    from lowtide.core.clock import Clock
    from lowtide.ledger.interface import LedgerStore

__all__ = ["AgentContext", "Decision", "InDoubt", "JournaledError", "Parked", "Stopped", "WaitingOnPerson"]

T = TypeVar("T")


_RESPONSE = ActorResponse[object]
"""A replayed turn's answer type, parametrized once (not looked up again for each of thousands of replays)."""


class Parked(BaseException):
    """The run waits for the answer of `key`: the agent's coroutine is abandoned here (a `BaseException`, so that
    the agent's own `except Exception` does not swallow it)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class WaitingOnPerson(BaseException):
    """The run asks a person (`entry`, its question) and no decision is journaled yet: abandoned here, as `Parked`."""

    def __init__(self, entry: JournalEntry) -> None:
        super().__init__(entry.name)
        self.entry = entry


@dataclass(frozen=True, slots=True)
class Decision:
    """What a person decided (`lowtide agents approve RUN [--deny] [--result JSON]`, or `Agent.approve`)."""

    approved: bool
    result: Any = None
    """What the person gave with the decision (`--result`: any JSON value), or None."""


class InDoubt(BaseException):
    def __init__(self, entry: JournalEntry) -> None:
        super().__init__(entry.name)
        self.entry = entry


class Stopped(BaseException):
    """The run was stopped (`lowtide agents stop`) while its process advanced it."""


class AgentContext:
    """The journaled face of one advance of a run: its turns, its steps, and the key of the step running now."""

    def __init__(
        self,
        run_id: str,
        store: LedgerStore,
        entries: list[JournalEntry],
        clock: Clock,
        *,
        max_cost_usd: Decimal | None = None,
        holder: str | None = None,
        answers: Mapping[str, RequestRecord] | None = None,
    ) -> None:
        self.run_id = run_id
        self._holder = holder
        """The process holding the run's lease (`driver.advance`), renewed while a step runs."""
        self.max_cost_usd = max_cost_usd
        """The run's budget over all its turns, or None."""
        self._store = store
        self._entries = {e.position: e for e in entries}
        self._answers = dict(answers or {})
        """Records of turns' requests read before this advance (by its `resume` pass), each used once, unread again."""
        self._clock = clock
        self._position = 0
        self._step_key: str | None = None

    @property
    def step_key(self) -> str:
        """The stable idempotency key of the step running now (`<run id>/<position>`): pass it to the systems the
        step calls, so that a step run again (idempotent, or retried) is recognized there."""
        if self._step_key is None:
            raise ConfigurationError("ctx.step_key is only known inside a step (ctx.step).", field="step_key")
        return self._step_key

    @property
    def cost_usd(self) -> Decimal:
        return sum((e.cost_usd or Decimal(0) for e in self._entries.values()), Decimal(0))

    def _writes(self) -> JournalWrites:
        """The journal's writes and stop checks, made together with those of the runs this event loop advances beside
        this one (`JournalWrites.of`)."""
        return JournalWrites.of(self._store)

    # -- the journal at the next position ----------------------------------------------------------------------------

    async def _io(self, call: Callable[[], T]) -> T:
        return await ask(self._store, call)

    async def _intent(
        self, kind: EntryKind, name: str, asked: str, key: str, *, idempotent: bool = False
    ) -> tuple[JournalEntry, bool]:
        """The entry at the next position: the journal's (checked to ask the same), or this intent, recorded now.
        True when it was journaled by an earlier advance."""
        position = self._position
        self._position += 1
        known = self._entries.get(position)
        if known is not None:
            if known.fingerprint != asked or known.kind is not kind:
                raise AgentDivergedError(
                    f"Agent run {self.run_id!r} diverged at position {position}: the journal holds {known.kind.value}"
                    f" {known.name}, and replay asked for {kind.value} {name}. Nothing was sent or run; the run "
                    "fails (start a new run id for the changed code).",
                    run_id=self.run_id,
                    position=position,
                )
            return known, True
        entry = JournalEntry(
            run_id=self.run_id, position=position, kind=kind, name=name, fingerprint=asked, key=key, result=None,
            error=None, cost_usd=None, idempotent=idempotent, retry=False, attempts=1, started_at=self._clock.now(),
            ended_at=None,
        )  # fmt: skip
        stored = await self._writes().put(entry)
        self._entries[position] = stored
        return stored, False

    async def _settle(
        self, entry: JournalEntry, *, result: str | None, error: str | None, cost: Decimal | None
    ) -> None:
        now = self._clock.now()
        settled = replace(entry, result=result, error=error, cost_usd=cost, ended_at=now)
        await self._writes().change(entry.run_id, entry.position, lambda _: settled)
        self._entries[entry.position] = settled

    async def _settle_stopped(self, entry: JournalEntry, *, result: str, cost: Decimal | None) -> bool:
        """The entry's result stored; whether the run was stopped meanwhile (its state read in the transaction that
        writes the result, not in one of its own)."""
        settled = replace(entry, result=result, error=None, cost_usd=cost, ended_at=self._clock.now())
        stopped = await self._writes().settle(entry.run_id, entry.position, lambda _: settled)
        self._entries[entry.position] = settled
        return stopped

    # -- model turns -------------------------------------------------------------------------------------------------

    async def run(
        self,
        actor: Actor,
        prompt: str | None = None,
        *,
        response_model: type[BaseModel] | None = None,
        mode: BatchProcessingMode | str | None = None,
        **kwargs: Any,
    ) -> ActorResponse[object]:
        """A model turn: what `Actor.run` takes (the key is the run's own). In batch mode the request is submitted
        under `<run id>/<position>` and, until its answer is in the ledger, the run parks here."""
        shown = prompt if prompt is not None else "(messages)"
        name = f"{actor.name}: {shown[:60]!r}"
        asked = fingerprint("turn", actor.name, prompt, mode, sorted(kwargs.items()), reference_of(response_model))
        key = f"{self.run_id}/{self._position}"
        entry, known = await self._intent(EntryKind.TURN, name, asked, key)
        if entry.error is not None:
            raise replayed(entry.error)
        if entry.result is not None:
            response = _RESPONSE.model_validate_json(entry.result)
            return parse_response(response, response_model) if response_model is not None else response
        if actor.resolve_mode(mode) is BatchProcessingMode.LIVE:
            limited = self._budgeted(kwargs)
            with self._as_runs_budget(kwargs, limited):
                async with lease_kept(self._store, self.run_id, self._holder, self._clock):
                    response = await self._answered(entry, actor.run(prompt, mode=mode, **limited))
        else:
            ledger = actor.ledger
            if ledger.identity() != self._store.identity():
                raise ConfigurationError(
                    f"The actor {actor.name!r} keeps its calls in the ledger {ledger.location}, and the agent run"
                    f" {self.run_id!r} is in {self._store.location}: give both the same ledger.",
                    field="ledger",
                )
            # A turn first journaled now was submitted by no earlier process (its intent comes first): nothing to read.
            # One its pass read already (the run was parked on it) is not read again, here nor by `result`.
            record = self._answers.pop(entry.key, None) if known else None
            if known and record is None:
                record = await self._io(lambda: ledger.request(entry.key))
            if record is None or not record.state.final:
                limited = self._budgeted(kwargs)
                with self._as_runs_budget(kwargs, limited):
                    await actor.submit(prompt, key=entry.key, **limited)  # never twice: the ledger knows the key
                raise Parked(entry.key)
            response = await self._answered(entry, actor.result(entry.key, known=record))
        return parse_response(response, response_model) if response_model is not None else response

    def _budgeted(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return turn_arguments(self.run_id, self.max_cost_usd, self.cost_usd, kwargs)

    @contextlib.contextmanager
    def _as_runs_budget(self, kwargs: dict[str, Any], limited: dict[str, Any]) -> Generator[None]:
        """A refusal of the budget this turn was given from the run's (`limited` is not the turn's own arguments),
        said as the run's: its budget and what it has spent."""
        try:
            yield
        except BudgetExceededError as exc:
            if self.max_cost_usd is None or limited is kwargs or not exc.scope.startswith("this call"):
                raise
            raise over(self.run_id, self.max_cost_usd, self.cost_usd, exc.estimate_usd) from exc

    async def _answered(self, entry: JournalEntry, call: Awaitable[ActorResponse[object]]) -> ActorResponse[object]:
        try:
            response = await call
        except ActorError as exc:
            await self._settle(entry, result=None, error=journaled(exc), cost=None)
            raise
        cost = response.cost.total_usd if response.cost is not None else None
        if await self._settle_stopped(entry, result=response.model_dump_json(), cost=cost):
            raise Stopped()
        return response

    # -- a person's decision ----------------------------------------------------------------------------------------

    async def approval(self, question: str, *, details: Any = None) -> Decision:
        """Ask a person to approve what comes next: the first time, the run stops here in state `waiting-on-person`
        (its process may exit) until `lowtide agents approve RUN [--deny] [--result JSON]` records the decision; the
        next resume replays to here and gets it. `details` (a JSON value) is shown with the question."""
        refused = unstorable(details, "the question's details")
        if refused is not None:
            raise refused
        key = f"{self.run_id}/{self._position}"
        name = question if details is None else f"{question} {encoded(details)}"
        entry, _ = await self._intent(EntryKind.PERSON, name, fingerprint("person", question, details), key)
        if entry.result is None:
            raise WaitingOnPerson(entry)
        said = decoded(entry.result)
        return Decision(approved=bool(said["approved"]), result=said.get("result"))

    # -- steps -------------------------------------------------------------------------------------------------------

    async def step(self, fn: Callable[..., Any], *args: Any, idempotent: bool = False, **kwargs: Any) -> Any:
        """Run `fn(*args, **kwargs)` (awaited if it is a coroutine function) once, its result journaled: on replay
        the stored result. Its arguments and result are JSON values or pydantic models (anything else is refused,
        naming the type: the arguments before the step runs). Begun in a process that died before its result was
        stored, it runs again only if `idempotent`; otherwise the run stops `in-doubt` until `lowtide agents retry`."""
        refused = unstorable(list(args), "the step's arguments") or unstorable(kwargs, "the step's keyword arguments")
        refused = refused or unstorable_type(_returned(fn), f"the result of {reference_of(fn)}")
        if refused is not None:
            raise refused
        reference = reference_of(fn)
        # By qualname: the module a function is named by differs between a script run as `__main__` and the same
        # module imported by `lowtide agents resume`, and must not read as a divergence.
        asked = fingerprint("step", getattr(fn, "__qualname__", reference), list(args), kwargs)
        key = f"{self.run_id}/{self._position}"
        entry, known = await self._intent(EntryKind.STEP, reference, asked, key, idempotent=idempotent)
        if entry.error is not None:
            raise replayed(entry.error)
        if entry.result is not None:
            crashpoint("agent-replayed-step")  # a replay killed half-way: the next one starts it over
            return decoded(entry.result)
        if known:  # begun by an earlier process, which died before its result was stored
            if not (entry.idempotent or entry.retry):
                raise InDoubt(entry)
            again = replace(entry, retry=False, attempts=entry.attempts + 1, started_at=self._clock.now())
            await self._writes().change(entry.run_id, entry.position, lambda _: again)
            entry = self._entries[entry.position] = again
        self._step_key = entry.key
        try:
            value = fn(*args, **kwargs)
            if inspect.isawaitable(value):
                async with lease_kept(self._store, self.run_id, self._holder, self._clock):
                    value = await value
        except Exception as exc:
            await self._settle(entry, result=None, error=journaled(exc), cost=None)
            raise
        finally:
            self._step_key = None
        bad = unstorable(value, f"the result of {reference}")
        if bad is not None:
            await self._settle(entry, result=None, error=journaled(bad), cost=None)
            raise bad
        stopped = await self._settle_stopped(entry, result=encoded(value), cost=None)
        crashpoint("agent-after-step")
        if stopped:
            raise Stopped()
        return value


def _returned(fn: Callable[..., Any]) -> object:
    """The return type `fn` declares, evaluated where it can be (a string annotation of its module's names); once
    per function (evaluating annotations costs more than the rest of a replayed step)."""
    try:
        return _declared(fn)
    except TypeError:  # unhashable (a callable object comparing by value): evaluated each time
        return _declared.__wrapped__(fn)


@functools.lru_cache(maxsize=1024)
def _declared(fn: Callable[..., Any]) -> object:
    try:
        return typing.get_type_hints(fn).get("return")
    except Exception:  # an annotation naming what its module does not define: nothing to check beforehand
        return None
