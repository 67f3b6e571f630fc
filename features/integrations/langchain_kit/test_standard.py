"""LangChain's standard tests (`langchain-tests`: `ChatModelUnitTests`, `ChatModelIntegrationTests`, the contract
LangChain asks of every chat model) against `LowtideChatModel`, its actors built from the emulator's address on a
loopback socket (`nox -s langchain` runs them with pytest: they are LangChain's kit, not our scenarios)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_tests.integration_tests import ChatModelIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests

from lowtide import Actor
from lowtide.emulator import Emulator, RunningServer, serve_in_thread
from lowtide.integrations.langchain import LowtideChatModel

_SERVER: list[RunningServer] = []
_KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-emulator-key",
    "OPENAI_API_KEY": "sk-emulator-key",
    "GEMINI_API_KEY": "emu-key",
    "GROQ_API_KEY": "gsk-emulator-key",
    "TOGETHER_API_KEY": "emulator-key",
    "FIREWORKS_API_KEY": "fw-emulator-key",
    "XAI_API_KEY": "xai-emulator-key",
    "COMPAT_KEY": "compat-emulator-key",
}
# Where each provider's API sits on the emulator's socket (its root when not named), and the options it needs there.
_PATHS = {"openai": "/v1", "fireworks": "/fireworks", "xai": "/xai/v1"}
_OPTIONS: dict[str, dict[str, Any]] = {"fireworks": {"fireworks": {"account_id": "kit-account"}}}


@pytest.fixture(scope="session", autouse=True)
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One emulator for the session, on a loopback socket, and a ledger of the session's own."""
    os.environ["LOWTIDE_LEDGER"] = str(Path(tmp_path_factory.mktemp("ledger")) / "ledger.sqlite3")
    os.environ.update(_KEYS)
    with serve_in_thread(Emulator(processing_seconds=0.05)) as server:
        _SERVER.append(server)
        yield server
        _SERVER.clear()


def _actor(provider: str, model: str, mode: str) -> Actor:
    url = _SERVER[0].url
    settings: dict[str, Any] = {
        "name": f"kit-{provider}-{mode}",
        "provider": provider,
        "model": model,
        "max_tokens": 1024,
        "batch_processing": mode,
        "batch": {"poll_interval": 0.02, "coalesce_window": 0.05},
    }
    if provider == "openai_compatible":
        settings["provider_options"] = {"openai_compatible": {"base_url": f"{url}/v1", "api_key_env": "COMPAT_KEY"}}
    else:
        settings["base_url"] = url + _PATHS.get(provider, "")
        settings["provider_options"] = _OPTIONS.get(provider, {})
    return Actor(settings)


class _Lowtide:
    """What every configuration of the kit shares: the model class, and the capabilities lowtide's model has."""

    provider = "anthropic"
    model_id = "claude-sonnet-5-5"
    mode = "live"

    @property
    def chat_model_class(self) -> type[LowtideChatModel]:
        return LowtideChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        if not _SERVER:  # the unit tests build the model without the session's emulator: no call is made
            return {"actor": Actor({"name": "kit", "provider": self.provider, "model": self.model_id})}
        return {"actor": _actor(self.provider, self.model_id, self.mode)}

    @property
    def has_tool_choice(self) -> bool:
        return True

    @property
    def supports_image_inputs(self) -> bool:
        # The kit's image test downloads its picture from the web, and these tests have no network; an image sent
        # in a conversation is checked by langchain.feature ("A whole conversation is sent").
        return False


class _KitIntegration(_Lowtide, ChatModelIntegrationTests):
    """The integration class: every test passes against the emulated model (a cooperative one: it calls the tool a
    prompt asks for, with the arguments the prompt gives, docs/emulator.md)."""


class TestAnthropicUnit(_Lowtide, ChatModelUnitTests):
    pass


class TestAnthropicLive(_KitIntegration):
    pass


class TestAnthropicBatch(_KitIntegration):
    mode = "batch"


class TestOpenAILive(_KitIntegration):
    provider = "openai"
    model_id = "gpt-4o-mini"


class TestGeminiBatch(_KitIntegration):
    provider = "gemini"
    model_id = "gemini-2.5-flash"
    mode = "batch"


# The OpenAI-compatible family: each provider of it, live and in batch mode (every one of them has a batch API).


class TestGroqLive(_KitIntegration):
    provider = "groq"
    model_id = "llama-3.1-8b-instant"


class TestGroqBatch(TestGroqLive):
    mode = "batch"


class TestTogetherLive(_KitIntegration):
    provider = "together"
    model_id = "meta-llama/Llama-3.3-70B-Instruct-Turbo"


class TestTogetherBatch(TestTogetherLive):
    mode = "batch"


class TestFireworksLive(_KitIntegration):
    provider = "fireworks"
    model_id = "accounts/fireworks/models/gpt-oss-20b"


class TestFireworksBatch(TestFireworksLive):
    mode = "batch"


class TestXaiLive(_KitIntegration):
    provider = "xai"
    model_id = "grok-3-mini"


class TestXaiBatch(TestXaiLive):
    mode = "batch"


class TestOpenAICompatibleLive(_KitIntegration):
    provider = "openai_compatible"
    model_id = "gpt-4o-mini"


class TestOpenAICompatibleBatch(TestOpenAICompatibleLive):
    mode = "batch"
