"""Steps every feature shares: what went wrong, and how the error says it."""

from __future__ import annotations

from _support import API_KEY, check_error, world
from step_context import Context, then


@then("a {name:w} is raised")
@then("an {name:w} is raised")
def step_error_raised(context: Context, name: str) -> None:
    check_error(world(context).failure(), name)


@then('the error message contains "{text}"')
def step_error_contains(context: Context, text: str) -> None:
    message = str(world(context).failure())
    assert text in message, f"{text!r} not in the message:\n{message}"


@then('the error message does not contain "{text}"')
def step_error_lacks(context: Context, text: str) -> None:
    message = str(world(context).failure())
    assert text not in message, f"{text!r} is in the message:\n{message}"


@then("the error message does not contain the API key")
def step_error_lacks_key(context: Context) -> None:
    error = world(context).failure()
    for text in (str(error), repr(error), *(str(arg) for arg in error.args)):
        assert API_KEY not in text, f"the API key leaked into:\n{text}"


@then("the error message is:")
def step_error_is(context: Context) -> None:
    message = str(world(context).failure())
    assert message == context.text, f"the message is:\n{message}"


@then('the error names the field "{field}"')
def step_error_field(context: Context, field: str) -> None:
    error = world(context).failure()
    assert getattr(error, "field", None) == field, f"the error names {getattr(error, 'field', None)!r}: {error}"


@then("the call fails with {name:w}")
def step_call_fails_with(context: Context, name: str) -> None:
    check_error(world(context).failure(), name)


@then("the error is retryable")
def step_error_retryable(context: Context) -> None:
    error = world(context).failure()
    assert getattr(error, "retryable", None) is True, error


@then("the error is not retryable")
def step_error_not_retryable(context: Context) -> None:
    error = world(context).failure()
    assert getattr(error, "retryable", None) is False, error
