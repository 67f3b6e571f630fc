"""`LowtideChatModel`: a LangChain chat model answered by a lowtide `Actor`; `abatch` (and `batch`) of many prompts
travel as one provider batch in batch mode, every call recorded in the actor's ledger."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import aclosing
from typing import Any, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LangSmithParams, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from lowtide.actor import Actor
from lowtide.errors import ActorError
from lowtide.integrations.langchain.messages import (
    last_chunk,
    piece_chunk,
    to_ai_chunk,
    to_ai_message,
    to_arguments,
)
from lowtide.streaming import TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["LowtideChatModel"]

T = TypeVar("T")


class LowtideChatModel(BaseChatModel):
    """A LangChain chat model answered by `actor` (`LowtideChatModel(actor=Actor.from_file(...))`).

    Per call, `key=` names the ledger key (else it is derived from the request, so the same call made again gets
    the stored answer) and `max_cost_usd=` sets a budget: `model.invoke(prompt, key="summary-42")`. lowtide's
    errors (`lowtide.ActorError` and its tree) are raised as they are: LangChain has no error types of its own.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    actor: Actor
    max_cost_usd: float | None = None
    """A budget for each call, checked against its worst case before anything is sent."""

    _runner: asyncio.Runner | None = PrivateAttr(default=None)
    _left: weakref.finalize[[asyncio.Runner, Actor], LowtideChatModel] | None = PrivateAttr(default=None)
    """Closes the runner's loop if the model is dropped without `close` (`_close_left`)."""
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "lowtide"

    @property
    def _identifying_params(self) -> dict[str, object]:
        config = self.actor.configuration
        return {"actor": config.name, "provider": config.provider, "model": config.model}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """LangSmith's standard parameters: the actor's provider and model, and this call's sampling settings
        (the actor's defaults where the call sets none)."""
        config = self.actor.configuration
        temperature = kwargs.get("temperature", config.temperature)
        max_tokens = kwargs.get("max_tokens", config.max_tokens)
        params = LangSmithParams(
            ls_provider=config.provider,
            ls_model_name=kwargs.get("model") or config.model,
            ls_model_type="chat",
            ls_max_tokens=max_tokens,
        )
        if temperature is not None:
            params["ls_temperature"] = temperature
        stops = stop or list(config.stop_sequences)
        if stops:
            params["ls_stop"] = stops
        return params

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        response = await self.actor.run(**self._call(messages, stop, kwargs))
        message = to_ai_message(response)
        return ChatResult(generations=[ChatGeneration(message=message)], llm_output={"model_name": response.model})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._run_sync(lambda: self._agenerate(messages, stop, **kwargs))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """`stream`, `astream` and `astream_events`, through `actor.stream`: live, the answer's thinking (reasoning
        blocks), text and tool-call pieces as they arrive, then a last chunk with its usage and metadata; in batch
        mode the finished answer as the one chunk (its thinking, text, tool calls and usage), so that code written for
        streaming works unchanged."""
        pieces = 0
        blocks = _Blocks()
        async with aclosing(self.actor.stream(**self._call(messages, stop, kwargs))) as events:
            async for event in events:
                if isinstance(event, TextDelta | ThinkingDelta | ToolCallDelta):
                    pieces += 1
                    chunk = ChatGenerationChunk(message=piece_chunk(event, blocks.position(event)))
                else:
                    message = to_ai_message(event)
                    chunk = ChatGenerationChunk(message=last_chunk(message) if pieces else to_ai_chunk(message))
                if run_manager is not None:
                    await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                yield chunk

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The synchronous interface's stream: `_astream`'s chunks, gathered on the model's own event loop (a
        synchronous caller cannot interleave with it), then given in order."""
        for chunk in self._run_sync(lambda: _gathered(self._astream(messages, stop, **kwargs))):
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    def _call(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The actor's call for `messages`: their arguments, the key and budget, and the rest of `kwargs`."""
        arguments = to_arguments(
            messages, tools=kwargs.pop("tools", None), tool_choice=kwargs.pop("tool_choice", None), stop=stop
        )
        kwargs.pop("ls_structured_output_format", None)
        key = kwargs.pop("key", None)
        budget = kwargs.pop("max_cost_usd", self.max_cost_usd)
        return {"key": key, "max_cost_usd": budget, **arguments, **kwargs}

    def batch(
        self,
        inputs: list[LanguageModelInput],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: object,
    ) -> list[AIMessage]:
        """`abatch` run to the end: in batch mode, one provider batch rather than a call per thread."""
        return self._run_sync(lambda: self.abatch(inputs, config, return_exceptions=return_exceptions, **kwargs))

    def bind_tools(
        self,
        tools: Sequence[dict[str, object] | type | Callable[..., object] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: object,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (functions, pydantic classes, LangChain tools or OpenAI-style dicts); `tool_choice` is
        `"auto"`, `"any"`, `"none"` or a tool's name."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _run_sync(self, make: Callable[[], Coroutine[object, object, T]]) -> T:
        """Run a coroutine for the synchronous interface, on one event loop this model keeps for it."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise ActorError("A synchronous call was made inside a running event loop; use `ainvoke` or `abatch`.")
        with self._lock:
            # A copy of a model (pydantic's `model_copy`) shares its runner until the original is collected and closes
            # it: then the copy makes its own.
            if self._runner is None or self._left is None or not self._left.alive:
                self._runner = asyncio.Runner()
                self._left = weakref.finalize(self, _close_left, self._runner, self.actor)
            return self._runner.run(make())

    def close(self) -> None:
        """Close the event loop of the synchronous interface, and the actor's providers on it."""
        with self._lock:
            if self._runner is not None:
                if self._left is not None:
                    self._left.detach()
                self._runner.run(self.actor.aclose())
                self._runner.close()
                self._runner = None


class _Blocks:
    """Where a live answer's pieces go in LangChain's content: text is a plain string until thinking comes; from then
    on each thinking, text or tool-call block of the answer is a standard block of the list, numbered in the order
    they first came."""

    def __init__(self) -> None:
        self._positions: dict[tuple[str, int], int] = {}
        self._thinking = False

    def position(self, piece: TextDelta | ThinkingDelta | ToolCallDelta) -> int | None:
        """The content block `piece` belongs to, or None before any thinking (text a string, tool calls apart)."""
        self._thinking = self._thinking or isinstance(piece, ThinkingDelta)
        if not self._thinking:
            return None
        key = (type(piece).__name__, piece.index)
        return self._positions.setdefault(key, len(self._positions))


def _close_left(runner: asyncio.Runner, actor: Actor) -> None:
    """The loop of a model dropped without `close`, closed as `asyncio.run` closes one: its async generators first,
    so that the actor's providers on it close their connections on it (`ActorProviders`), rather than being collected
    with it, when their SDK's clients close themselves on whatever loop runs then ("Event loop is closed"). `actor` is
    held (not closed: it may serve others) so that, when the model was collected with it, its providers are still
    there to close. In a thread of its own when this one runs a loop (a model collected inside another's loop)."""
    del actor  # held until now, see above
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runner.close()
        return
    closing = threading.Thread(target=runner.close, name="lowtide-close-model-loop")
    closing.start()
    closing.join()


async def _gathered(chunks: AsyncIterator[ChatGenerationChunk]) -> list[ChatGenerationChunk]:
    return [chunk async for chunk in chunks]
