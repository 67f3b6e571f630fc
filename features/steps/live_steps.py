"""Steps for live calls given in lowtide's own types."""

from __future__ import annotations

from typing import Any

from _support import world
from behave import when

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
def step_ask_typed(context: Any) -> None:
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
