"""Steps for partial outcomes: requests that end badly in one batch only, and the errors that are final."""

from __future__ import annotations

from _support import World, world
from step_context import Context, given, then

from lowtide import BatchRequestError


def _first_batch_only(w: World) -> None:
    """Standing outcomes last until reset: take them back once the first batch has ended (as it is downloaded)."""
    w.hooks.before("batches.results", w.emu.faults.clear)


@given('the API will end request "{key}" as expired in the first batch only')
def step_expired_once(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.outcome(w.custom_id(key), "expired")
    _first_batch_only(w)


@given('the API will end request "{key}" as errored with {error_type:w} in the first batch only')
def step_errored_once(context: Context, key: str, error_type: str) -> None:
    w = world(context)
    w.emu.faults.outcome(w.custom_id(key), "errored", error_type=error_type)
    _first_batch_only(w)


@then('the error names the request "{key}" and the last of the {count:d} batches it was sent in')
def step_error_names_last_batch(context: Context, key: str, count: int) -> None:
    w = world(context)
    error = w.failure()
    assert isinstance(error, BatchRequestError), error
    batches = w.ledger().batches()
    assert len(batches) == count, batches
    assert error.custom_id == w.custom_id(key), error
    assert error.batch_id == batches[-1].provider_batch_id, (error.batch_id, batches)
    assert f"Request {w.custom_id(key)} in batch {error.batch_id}" in str(error), str(error)
