"""Steps only Groq actors have (features/groq_batch.feature): its batch's metadata. The steps Groq and Together
actors share are in compat_provider_steps.py."""

from __future__ import annotations

from _compat_apis import GROQ
from _support import world
from step_context import Context, then

from lowtide.providers.groq.batch_backend import INTENT_KEY


@then('the Groq batch was created with lowtide\'s intent id in its metadata, within "{window}"')
def step_groq_batch_metadata(context: Context, window: str) -> None:
    w = world(context)
    [batch] = GROQ.listed(w)
    assert batch.endpoint == "/v1/chat/completions", batch.endpoint
    assert batch.completion_window == window, batch.completion_window
    [recorded] = w.ledger().batches()
    assert batch.metadata == {INTENT_KEY: recorded.id}, (batch.metadata, recorded.id)
    assert recorded.provider_batch_id == batch.id, recorded


@then("the Groq batch was created from the file the dead program uploaded, under its intent id")
def step_groq_resumed(context: Context) -> None:
    w = world(context)
    intent, file_id = w.witnessed["orphan"]
    [batch] = GROQ.listed(w)
    assert batch.input_file_id == file_id, (batch.input_file_id, file_id)
    assert batch.metadata == {INTENT_KEY: intent}, batch.metadata
