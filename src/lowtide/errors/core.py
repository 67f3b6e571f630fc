"""The root of lowtide's errors and those raised before anything is sent: configuration, budgets, agents, bugs."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lowtide.types import ActorResponse


class ActorError(Exception):
    """The root of every error lowtide raises."""


class ActorClosedError(ActorError):
    """Raised by a call on an actor that was closed (`aclose()`, `close()`, or the end of its `async with`), before
    anything is recorded or sent: its providers are closed, and a closed actor opens none again. Make a new `Actor`."""

    def __init__(self, actor: str) -> None:
        super().__init__(
            f"Actor {actor!r} is closed (aclose(), close() or the end of its `async with`); nothing was recorded or "
            "sent. Make a new Actor for further calls."
        )
        self.actor = actor


class ConfigurationError(ActorError):
    """Raised when an actor configuration, or the arguments of a call, are invalid.

    `field` names the offending setting (dotted path) when one setting is to blame.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class BatchNotOutstanding(ConfigurationError):
    """Raised by `cancel` for a batch that has already ended, or that the API never had: nothing to cancel."""


class ProviderNotFoundError(ConfigurationError):
    """Raised when no provider is registered under the requested name."""

    def __init__(self, name: str, *, known: Sequence[str], suggestions: Sequence[str]) -> None:
        hint = f" Did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        listing = ", ".join(repr(k) for k in sorted(known)) or "none"
        super().__init__(f"No provider named {name!r}.{hint} Registered providers: {listing}.", field="provider")
        self.name = name
        self.suggestions = list(suggestions)


class ProviderCapabilityError(ConfigurationError):
    """Raised when a provider exists but lacks what the call needs, such as batch processing."""

    def __init__(self, provider: str, capability: str, *, hint: str = "") -> None:
        message = f"Provider {provider!r} does not support {capability}."
        super().__init__(f"{message} {hint}".strip(), field="batch_processing")
        self.provider = provider
        self.capability = capability


class StructuredOutputError(ActorError):
    """Raised when the model's answer does not validate against the requested `response_model`.

    The raw `text` is kept so nothing the model produced (and that was paid for) is lost.
    """

    def __init__(
        self, message: str, *, text: str, model_name: str, response: ActorResponse[object] | None = None
    ) -> None:
        super().__init__(message)
        self.text = text
        self.model_name = model_name
        self.response = response
        """The full response (usage, cost, ids) the unparseable answer came in."""


class BudgetExceededError(ActorError):
    """Raised before submission when a request's worst-case cost would cross a budget; nothing is sent.

    `limit_usd` is the budget, `spent_usd` what is already spent or committed against it, `estimate_usd` the
    request's worst case (estimated input, output at `max_tokens`), or its `requests` requests' together (one call of
    `run_many`).
    """

    def __init__(
        self, *, scope: str, limit_usd: Decimal, spent_usd: Decimal, estimate_usd: Decimal, requests: int = 1
    ) -> None:
        what = "the request could cost" if requests == 1 else f"its {requests} requests could together cost"
        super().__init__(
            f"Budget exceeded for {scope}: {what} up to ${estimate_usd:.6f}, and with "
            f"${spent_usd:.6f} already spent or committed that crosses the limit of ${limit_usd:.6f}. "
            "Nothing was sent."
        )
        self.scope = scope
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.estimate_usd = estimate_usd


class SpendCapExceededError(BudgetExceededError):
    """Raised before anything is recorded or sent when a request's worst case would cross its team's or project's
    cap, counting what every process and host of the ledger has spent (`spent_usd`) and reserved (`reserved_usd`)."""

    def __init__(
        self,
        *,
        cap: str,
        limit_usd: Decimal,
        spent_usd: Decimal,
        reserved_usd: Decimal,
        estimate_usd: Decimal,
        requests: int = 1,
    ) -> None:
        asked = "this request" if requests == 1 else f"these {requests} requests together"
        ActorError.__init__(
            self,
            f"Spend cap reached: {cap}. Spent ${spent_usd:.6f} and reserved ${reserved_usd:.6f} for requests not"
            f" answered yet; {asked} could add up to ${estimate_usd:.6f}, which would cross it. Nothing was sent.",
        )
        self.scope = cap
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd + reserved_usd
        self.reserved_usd = reserved_usd
        self.estimate_usd = estimate_usd


class LedgerError(ActorError):
    """Raised when the ledger could not be read or written (a full disk, a lock held too long, a file removed).

    What the ledger already held stays as it was: a write is one transaction, rolled back whole.
    """


class UnstorableValueError(ConfigurationError):
    """Raised for an agent step's argument or result that the journal cannot store (neither JSON nor a pydantic
    model), naming its type: an argument before the step runs, a result before it is journaled."""


class AgentError(ActorError):
    """Raised when a durable agent run (`lowtide.agents`) cannot go on; `run_id` names it."""

    def __init__(self, message: str, *, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


class AgentDivergedError(AgentError):
    """Replay asked, at `position`, for a different turn or step than the journal holds there (the code changed, or
    depends on something not journaled): the run fails rather than send a new request under an old key."""

    def __init__(self, message: str, *, run_id: str, position: int) -> None:
        super().__init__(message, run_id=run_id)
        self.position = position


class AgentRunError(AgentError):
    """The run awaited (`Agent.result`) ended without a result: `state` is failed, stopped or in-doubt."""

    def __init__(self, message: str, *, run_id: str, state: str) -> None:
        super().__init__(message, run_id=run_id)
        self.state = state


class InternalError(ActorError):
    """Raised to the calls waiting on work that failed inside lowtide for a reason it does not know (a bug).

    The cause is chained (`__cause__`) and logged; the calls get this error instead of waiting forever.
    """


def classify(exc: BaseException, *, doing: str) -> ActorError:
    """`exc` as an `ActorError`: itself if it is one, else an `InternalError` saying what lowtide was `doing`."""
    if isinstance(exc, ActorError):
        return exc
    error = InternalError(f"lowtide failed while {doing}: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


class ModelDeprecationWarning(FutureWarning):
    """A call names a model its provider has deprecated: it still answers until its end of life, then refuses.

    The message names the end of life and what to use instead. A `FutureWarning`, so that Python shows it by
    default; `warnings.filterwarnings("ignore", category=ModelDeprecationWarning)` silences it.
    """
