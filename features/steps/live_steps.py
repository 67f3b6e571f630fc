"""Steps for live calls given in lowtide's own types."""

from __future__ import annotations

import json

import httpx2
from _support import world
from step_context import Context, given, then, when

from lowtide import ChatMessage, ToolSpec

RECORD_TIDE = ToolSpec(
    name="record_tide",
    description="Record a tide measurement",
    input_schema={
        "type": "object",
        "properties": {"port": {"type": "string"}, "height_m": {"type": "number"}},
        "required": ["port", "height_m"],
    },
)


@when("the actor is asked with a ChatMessage conversation and a ToolSpec it is forced to use")
def step_ask_typed(context: Context) -> None:
    w = world(context)
    conversation = [
        ChatMessage(role="user", content="Is the tide high at Brest?"),
        ChatMessage(role="assistant", content="I will record it."),
        ChatMessage(role="user", content=[{"type": "text", "text": "Please do."}]),
    ]
    w.response = w.attempt_async(
        lambda: w.current_actor().run(
            messages=conversation, tools=[RECORD_TIDE], tool_choice={"type": "tool", "name": "record_tide"}
        )
    )


class _StreamWatchingTransport(httpx2.AsyncBaseTransport):
    """Passes requests on, noting for each Messages call whether its body asks for a stream."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, streamed: list[bool]) -> None:
        self._inner = inner
        self._streamed = streamed

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/v1/messages"):
            self._streamed.append(json.loads(await request.aread()).get("stream") is True)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@given("the emulated API notes whether each Messages call asks for a stream")
def step_watch_streams(context: Context) -> None:
    w = world(context)
    w.client = w.client_over(_StreamWatchingTransport(w.transport(), w.streamed))


@then("the Messages call {how} a stream")
def step_streamed(context: Context, how: str) -> None:
    expected = {"asked for": True, "did not ask for": False}[how]
    assert world(context).streamed == [expected], world(context).streamed
