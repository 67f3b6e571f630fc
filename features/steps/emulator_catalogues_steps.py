"""Steps for the emulator's catalogues against the models the official SDKs' READMEs name (their installed package
metadata), each asked through that SDK's own models endpoint on a loopback socket."""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib.metadata import distribution
from typing import Any, Protocol

from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator import Emulator
from lowtide.emulator.server import serve_in_thread


class Context(StepContext, Protocol):
    catalogue_url: str
    catalogue_asked: dict[str, str | None]


_NAMED = re.compile(r"model=[\"']([\w./:-]+)[\"']")
_NOT_CHAT = re.compile(
    r"embed|whisper|transcribe|realtime|tts|image|^veo-|^imagen-"  # kinds of model lowtide does not call
    r"|^model$|^invalid-model-name$|^deployment-name$"  # the READMEs' placeholders and error examples
    r"|^openai\.gpt"  # openai's README on Bedrock: a Bedrock model id, not OpenAI's
)


def _readme_models(dist: str) -> list[str]:
    text = distribution(dist).read_text("METADATA") or ""
    return sorted({name for name in _NAMED.findall(text) if not _NOT_CHAT.search(name)})


def _asker(sdk: str, url: str) -> Callable[[str], object]:
    """How `sdk` asks its API about one model (raising when the API has none)."""
    if sdk == "anthropic":
        import anthropic

        return anthropic.Anthropic(base_url=url, api_key="k", max_retries=0).models.retrieve
    if sdk == "openai":
        import openai

        return openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0).models.retrieve
    if sdk == "google-genai":
        from google import genai

        client = genai.Client(api_key="k", http_options=genai.types.HttpOptions(base_url=url))
        return lambda name: client.models.get(model=name)
    if sdk == "mistralai":
        from mistralai.client import Mistral

        mistral = Mistral(api_key="k", server_url=url)
        return lambda name: mistral.models.retrieve(model_id=name)
    if sdk == "groq":
        import groq

        return groq.Groq(base_url=url, api_key="k", max_retries=0).models.retrieve
    if sdk == "together":
        import together

        client = together.Together(base_url=url, api_key="k", max_retries=0)

        def listed(name: str) -> object:  # Together has no question for one model: its bare list (as lowtide reads it)
            models: Any = client.get("/v1/models", cast_to=object)
            if name not in {model["id"] for model in models}:
                raise LookupError(f"{name} is not in Together's list")
            return name

        return listed
    raise AssertionError(f"no SDK {sdk!r} in this step")


@given("the emulator on a loopback socket")
def step_socket(context: Context) -> None:
    w = world(context)
    serving = serve_in_thread(Emulator())
    server = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    context.catalogue_url = server.url


@when("the {sdk} SDK asks it for each chat model its README names")
def step_ask(context: Context, sdk: str) -> None:
    ask = _asker(sdk, context.catalogue_url)
    asked: dict[str, str | None] = {}
    for name in _readme_models(sdk):
        try:
            ask(name)
            asked[name] = None
        except Exception as exc:
            asked[name] = f"{type(exc).__name__}: {exc}"
    context.catalogue_asked = asked


@then("the emulator serves every one of them, and there is at least one")
def step_served(context: Context) -> None:
    asked = context.catalogue_asked
    assert asked, "the README names no chat model: the pattern no longer finds its examples"
    missing = {name: why for name, why in asked.items() if why is not None}
    assert not missing, missing
