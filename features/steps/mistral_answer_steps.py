"""Steps for features/mistral_answers.feature: Mistral's API answering in ways the emulator does not (a reasoning
model's chunks, tool calls cut short, streams in odd pieces, error bodies of every shape, model cards of a kind lowtide
does not know), queued on the scenario's transport and read by the unmodified mistralai SDK."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from _mistral_support import canned, sent, unreachable
from _support import world
from step_context import Context, given, then

from lowtide import TextContent, ThinkingContent, ToolUseContent
from lowtide.types import OtherContent


def _queue(context: Context, path: str, response: httpx2.Response) -> None:
    canned(world(context)).setdefault(path, []).append(response)


@given('the Mistral API answers the next call to "{path}" with:')
def step_mistral_canned(context: Context, path: str) -> None:
    assert context.text is not None
    _queue(context, path, httpx2.Response(200, json=json.loads(context.text)))


@given('the Mistral API answers the next call to "{path}" with status {status:d} and the body:')
def step_mistral_canned_error(context: Context, path: str, status: int) -> None:
    """The body as given (`-` for none), sent as JSON when it reads as JSON, else as text (a proxy's HTML page)."""
    text = "" if context.text in (None, "-") else context.text
    try:
        json.loads(text)
        kind = "application/json"
    except ValueError:
        kind = "text/html"
    _queue(context, path, httpx2.Response(status, content=text.encode(), headers={"content-type": kind}))


@given("the Mistral API streams the next chat call as these chunks:")
def step_mistral_canned_stream(context: Context) -> None:
    """Each line of the text is one chunk's JSON; the stream ends `data: [DONE]` unless its last line is `(cut)`."""
    assert context.text is not None
    lines = [line for line in context.text.splitlines() if line.strip()]
    done = lines[-1] != "(cut)"
    events = [f"data: {line}\n\n".encode() for line in lines if line != "(cut)"]
    if done:
        events.append(b"data: [DONE]\n\n")
    response = httpx2.Response(200, content=b"".join(events), headers={"content-type": "text/event-stream"})
    _queue(context, "/v1/chat/completions", response)


@given("the Mistral models endpoint cannot be reached")
def step_mistral_models_unreachable(context: Context) -> None:
    unreachable(world(context)).add("/v1/models")


def _shown(block: Any) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ThinkingContent):
        return block.thinking
    if isinstance(block, ToolUseContent):
        return f"{block.name} {json.dumps(block.input, sort_keys=True)}"
    assert isinstance(block, OtherContent), block
    return json.dumps(block.data, sort_keys=True)


@then("the Mistral response holds these content blocks:")
def step_mistral_blocks(context: Context) -> None:
    content = world(context).answer().content
    assert context.table is not None
    expected = [(row["type"], row["detail"]) for row in context.table]
    actual = [(block.type, _shown(block)) for block in content]
    assert actual == expected, actual


@then("Mistral was sent {count:d} chat call")
@then("Mistral was sent {count:d} chat calls")
def step_mistral_chat_count(context: Context, count: int) -> None:
    bodies = sent(world(context))
    assert len(bodies) == count, bodies
