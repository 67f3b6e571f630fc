"""Steps of content_checks.feature: content every API would refuse (base64 that is not, an image type the provider
cannot read, a tool_choice naming no tool), refused on every provider before anything is sent; the emulator's own
counters, read over its socket, say what it was asked."""

from __future__ import annotations

import base64
from typing import Any

import httpx2
from _support import World, set_env, world
from step_context import Context, given, then, when

from lowtide import ActorError

_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
_TOOLS = [{"name": "weather", "description": "The weather at a harbour", "input_schema": {"type": "object"}}]


def _image(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _asking(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": "What is in it?"}, *blocks]}]}


_ENCODED = base64.b64encode(_PNG).decode()
_LINES = "\n".join(_ENCODED[start : start + 24] for start in range(0, len(_ENCODED), 24))
"""The image's base64 in lines, as a MIME encoder writes it: the APIs refuse it."""
_SENT: dict[str, dict[str, Any]] = {
    "an image that is not base64": _asking(_image("image/png", "not base64!!")),
    "a PDF that is not base64": _asking(
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x%%"}}
    ),
    "a BMP image": _asking(_image("image/bmp", base64.b64encode(_PNG).decode())),
    "a BMP image in a tool result": {
        "messages": [
            {"role": "user", "content": "Show me the chart."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [_image("image/bmp", base64.b64encode(_PNG).decode())],
                    }
                ],
            },
        ],
        "tools": _TOOLS,
    },
    "a tool_choice naming no tool": {
        "prompt": "Is it safe to sail?",
        "tools": _TOOLS,
        "tool_choice": {"type": "tool", "name": "forecast"},
    },
    "a tool_choice with no tools": {
        "prompt": "Is it safe to sail?",
        "tool_choice": {"type": "tool", "name": "forecast"},
    },
    "an image in base64 lines": _asking(_image("image/png", _LINES)),
    "a PNG image": _asking(_image("image/png", _ENCODED)),
    "a tool_choice naming its tool": {
        "prompt": "Is it safe to sail?",
        "tools": _TOOLS,
        "tool_choice": {"type": "tool", "name": "weather"},
    },
}


def _url(w: World) -> str:
    [url] = w.witnessed["server url"]
    return str(url)


def _calls(w: World) -> dict[str, int]:
    calls: dict[str, int] = httpx2.get(f"{_url(w)}/_emulator/stats").json()["calls"]
    return calls


@given('a {mode:w}-mode "{provider}" actor of the model "{model}" that reaches it')
def step_actor(context: Context, mode: str, provider: str, model: str) -> None:
    w = world(context)
    set_env(w, "CONTENT_CHECKS_KEY", "one-key-for-every-provider")
    w.client = None
    base_url = _url(w) + ("/v1" if provider == "openai" else "")
    settings: dict[str, Any] = {
        "name": "sender", "provider": provider, "model": model, "max_tokens": 64, "batch_processing": mode,
        "base_url": base_url, "api_key_env": "CONTENT_CHECKS_KEY",
    }  # fmt: skip
    if provider == "bedrock":  # AWS credentials and a region, as a program on AWS would have them
        set_env(w, "AWS_ACCESS_KEY_ID", "AKIAEMULATED")
        set_env(w, "AWS_SECRET_ACCESS_KEY", "emulated-secret")
        settings["provider_options"] = {"bedrock": {"region": "us-east-1"}}
        del settings["api_key_env"]
    w.add_actor(settings)


@when("the actor is sent {what}")
def step_sent(context: Context, what: str) -> None:
    w = world(context)
    arguments = dict(_SENT[what])
    prompt = arguments.pop("prompt", None)
    w.witnessed["calls before"] = [_calls(w)]
    w.error = None
    w.response = None
    try:
        w.response = w.run(w.current_actor().run(prompt, **arguments))
    except ActorError as exc:
        w.error = exc


@then("the API was asked nothing but which models it serves")
def step_only_models(context: Context) -> None:
    w = world(context)
    [before] = w.witnessed["calls before"]
    after = _calls(w)
    asked = {route: count - before.get(route, 0) for route, count in after.items() if count != before.get(route, 0)}
    assert all("model" in route for route in asked), asked


@then("the actor was answered")
def step_answered(context: Context) -> None:
    w = world(context)
    assert w.error is None, repr(w.error)
    assert w.response is not None
