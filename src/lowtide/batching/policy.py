"""What a result comes to in the ledger: stored answer, another attempt, or a final error; and back again."""

from __future__ import annotations

from typing import Any

from lowtide.batching.backend import Settled
from lowtide.batching.keys import canonical_json, params_json
from lowtide.batching.records import answer_from_json, error_from_json, error_to_json
from lowtide.errors import (
    ActorError,
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestExpired,
    ConfigurationError,
)
from lowtide.ledger.store import (
    OutcomeRow,
    RequestRecord,
    RequestState,
    answer_json,
)

__all__ = ["key_twice", "other_params", "other_request", "result_row", "stored_outcome"]


def stored_outcome(record: RequestRecord) -> Settled:
    return settled_of(record.key, record.state, record.response, record.error)


def settled_of(
    key: str, state: RequestState | None, response: dict[str, Any] | None, error: dict[str, Any] | None
) -> Settled:
    """A request's outcome from what the ledger stored for it: its answer, else its error."""
    if state is RequestState.SUCCEEDED and response is not None:
        return answer_from_json(response)
    return error_from_json(error or {"class": "ActorError", "message": f"{key}: no result"})


def result_row(key: str, outcome: Settled, stored: dict[str, Any] | None, *, used: int, allowed: int) -> OutcomeRow:
    """How one result is stored: succeeded (`stored`: its response as JSON), requeued for another attempt, or final."""
    if not isinstance(outcome, ActorError):
        assert stored is not None, "a response comes with the form it is stored in (line_outcome)"
        cost = outcome.cost
        return OutcomeRow(
            key,
            RequestState.SUCCEEDED,
            # Encoded now, so that the dicts of a chunk's answers do not outlive their line (the collector's work).
            response=answer_json(stored),
            cost_usd=cost.total_usd if cost else None,
            live_cost_usd=cost.live_equivalent_usd if cost else None,
        )
    error = error_to_json(outcome)
    if isinstance(outcome, BatchRequestCanceled):
        return OutcomeRow(key, RequestState.CANCELED, error=error)
    retryable = isinstance(outcome, BatchRequestError) and outcome.retryable
    if retryable and used < allowed:
        return OutcomeRow(key, RequestState.PENDING, error=error)
    final = RequestState.EXPIRED if isinstance(outcome, BatchRequestExpired) else RequestState.FAILED
    return OutcomeRow(key, final, error=error)


def other_params(stored: dict[str, Any], sent: dict[str, Any] | str) -> bool:
    """Whether a call's params (`sent`, or their JSON) are another request's than the ledger's record of its key
    (`stored`). A rebuilt request whose body the API no longer showed (`records.UNKNOWN_PARAMS`, `{}`) is any
    request's: its key is all that names it. The dicts compared first, the JSON only when they differ."""
    return stored != sent and bool(stored) and canonical_json(stored) != params_json(sent)


def other_request(key: str) -> ConfigurationError:
    return ConfigurationError(
        f"Key {key!r} already names a different request in the ledger; use a new key for new content.", field="key"
    )


def key_twice(first: int, again: int, key: str) -> ConfigurationError:
    """`run_many`'s requests `first` and `again` were given the same key but differ."""
    return ConfigurationError(
        f"keys: requests {first} and {again} have the same key {key!r} but differ; a key names one request.",
        field="keys",
    )
