"""Structured answers: the JSON of an answer's text, whichever provider gave it, parsed into the caller's model."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ValidationError

from lowtide.errors import ActorError, StructuredOutputError
from lowtide.messages.answers import Answer, response_of
from lowtide.types import ActorResponse

__all__ = ["json_text", "parse_response", "parsed_outcome"]

_FENCE = re.compile(r"\A\s*```[A-Za-z]*[ \t]*\n(.*?)\n?[ \t]*```\s*\Z", re.S)


def json_text(text: str) -> str:
    """The JSON of an answer, taken out of the Markdown code fence a model may wrap JSON asked for by prompt in."""
    match = _FENCE.match(text)
    return match.group(1) if match is not None else text


def parse_response(response: ActorResponse[object], model: type[BaseModel]) -> ActorResponse[object]:
    """`response` with `parsed` set to its answer validated as `model`; `StructuredOutputError` if it does not fit.

    The answer is the response's text, or the input of its first tool call when it has no text.
    """
    source = response.text
    if not source and response.tool_calls:
        source = json.dumps(response.tool_calls[0].input)
    try:
        parsed = model.model_validate_json(json_text(source))
    except ValidationError as exc:
        raise StructuredOutputError(
            f"The answer does not fit {model.__name__}: {exc.error_count()} problem(s); first: "
            f"{_first_problem(exc)}. The raw text is kept on the error and its response.",
            text=source,
            model_name=model.__name__,
            response=response,
        ) from None
    return response.model_copy(update={"parsed": parsed})


def _first_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(root)"
    return f"{where}: {first['msg']}"


def parsed_outcome(outcome: Answer | ActorError, model: type[BaseModel] | None) -> ActorResponse[object] | ActorError:
    """A request's outcome with its answer parsed into `model` (when one is given); an answer that does not fit is
    the outcome's `StructuredOutputError`, never raised. An answer held as its fields comes back built."""
    if isinstance(outcome, ActorError):
        return outcome
    response = response_of(outcome)
    if model is None:
        return response
    try:
        return parse_response(response, model)
    except StructuredOutputError as exc:
        return exc
