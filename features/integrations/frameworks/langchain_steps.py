"""Steps of `langchain.feature`: LangChain over `LowtideChatModel`."""

from __future__ import annotations

from typing import Protocol

from _world import world
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

import lowtide.errors
from lowtide.integrations.langchain import LowtideChatModel


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    model: LowtideChatModel
    prompts: list[str]
    chain: Runnable[LanguageModelInput, AIMessage]
    conversation: list[BaseMessage]
    call: AIMessage
    final: AIMessage
    tool_result: str


class Verdict(BaseModel):
    label: str
    confidence: float


@tool
def lookup(order_id: str) -> str:
    """The status of an order."""
    return f"Order {order_id} shipped yesterday."


@given("a LangChain chat model over an actor in {mode} mode")
def step_chat_model(context: Context, mode: str) -> None:
    w = world(context)
    context.model = LowtideChatModel(actor=w.new_actor(mode))
    w.cleanups.append(context.model.close)


@given("a LangChain chat model over a Gemini actor in {mode} mode")
def step_chat_model_gemini(context: Context, mode: str) -> None:
    w = world(context)
    context.model = LowtideChatModel(actor=w.new_actor(mode, "gemini"))
    w.cleanups.append(context.model.close)


@given('a LangChain chat model over a "{provider}" actor in {mode} mode')
def step_chat_model_served(context: Context, provider: str, mode: str) -> None:
    w = world(context)
    context.model = LowtideChatModel(actor=w.new_actor(mode, provider))
    w.cleanups.append(context.model.close)


@when('the model is invoked with just "{prompt}"')
def step_invoke(context: Context, prompt: str) -> None:
    w = world(context)
    w.results = [w.run(context.model.ainvoke(prompt))]


@then("the answer came in {mode} mode, with its usage and cost")
def step_answer_mode(context: Context, mode: str) -> None:
    (answer,) = world(context).results
    metadata = answer.response_metadata
    assert metadata["mode"] == mode, metadata
    assert metadata["cost_usd"] > 0, metadata
    assert answer.usage_metadata is not None, "no usage"
    assert answer.usage_metadata["input_tokens"] > 0, answer.usage_metadata
    assert answer.usage_metadata["output_tokens"] > 0, answer.usage_metadata


def _prompts(count: int) -> list[str]:
    return [f"Review number {n}: it arrived broken." for n in range(count)]


@when("the model is given {count:d} prompts with abatch")
def step_abatch(context: Context, count: int) -> None:
    w = world(context)
    context.prompts = _prompts(count)
    w.results = w.run(context.model.abatch([*context.prompts]))


@when("the model is given {count:d} prompts with batch")
def step_batch(context: Context, count: int) -> None:
    context.prompts = _prompts(count)
    world(context).results = context.model.batch([*context.prompts])


@then("{count:d} answers come back, each quoting its own prompt, in order")
def step_answers_in_order(context: Context, count: int) -> None:
    results = world(context).results
    assert len(results) == count, f"{len(results)} answers"
    for prompt, answer in zip(context.prompts, results, strict=True):
        assert isinstance(answer, AIMessage), answer
        assert prompt in str(answer.content), f"{answer.content!r} does not quote {prompt!r}"


@then("every answer came in the same batch, at batch prices")
def step_same_batch(context: Context) -> None:
    results: list[AIMessage] = world(context).results
    batches = {answer.response_metadata["batch_id"] for answer in results}
    assert len(batches) == 1, f"{len(batches)} batches"
    for answer in results:
        metadata = answer.response_metadata
        assert metadata["mode"] == "batch", metadata
        assert metadata["cost_usd"] * 2 == metadata["live_equivalent_usd"], metadata
        assert answer.usage_metadata is not None, "no usage"
        assert answer.usage_metadata["output_tokens"] > 0, answer.usage_metadata


@when('the model with a lookup tool is asked "{prompt}"')
def step_tool_question(context: Context, prompt: str) -> None:
    w = world(context)
    context.chain = context.model.bind_tools([lookup])
    context.conversation = [HumanMessage(prompt)]
    context.call = w.run(context.chain.ainvoke(context.conversation))


@then("the model calls the lookup tool")
def step_calls_lookup(context: Context) -> None:
    call: AIMessage = context.call
    assert [tool_call["name"] for tool_call in call.tool_calls] == ["lookup"], call.tool_calls


@then('the model calls the lookup tool with order_id "{order_id}"')
def step_calls_lookup_with(context: Context, order_id: str) -> None:
    call: AIMessage = context.call
    assert [(c["name"], c["args"]) for c in call.tool_calls] == [("lookup", {"order_id": order_id})], call.tool_calls


@then('the model calls no tool and its answer quotes "{text}"')
def step_no_tool(context: Context, text: str) -> None:
    call: AIMessage = context.call
    assert not call.tool_calls, call.tool_calls
    assert text in call.text, call.text


@when("the tool's result is sent back with the conversation")
def step_tool_result(context: Context) -> None:
    w = world(context)
    results: list[BaseMessage] = [w.run(lookup.ainvoke(tool_call)) for tool_call in context.call.tool_calls]
    assert all(isinstance(result, ToolMessage) for result in results), results
    context.tool_result = str(results[0].content)
    context.final = w.run(context.chain.ainvoke([*context.conversation, context.call, *results]))


@then("the final answer quotes the tool's result")
def step_final_quotes(context: Context) -> None:
    final: AIMessage = context.final
    assert not final.tool_calls, final.tool_calls
    assert context.tool_result in str(final.content), f"{final.content!r} does not quote {context.tool_result!r}"


@when('the model\'s structured output for a verdict is asked "{prompt}"')
def step_structured(context: Context, prompt: str) -> None:
    w = world(context)
    w.results = [w.run(context.model.with_structured_output(Verdict).ainvoke(prompt))]


@then("the answer is a verdict")
def step_is_verdict(context: Context) -> None:
    (answer,) = world(context).results
    assert isinstance(answer, Verdict), answer


@when('the model is invoked with "{prompt}" and the key "{key}"')
def step_invoke_key(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    w.results.append(w.run(context.model.ainvoke(prompt, key=key)))


@then("both answers are the same, from the same batch")
def step_same_answers(context: Context) -> None:
    first, second = world(context).results
    assert first.content == second.content, (first.content, second.content)
    assert first.response_metadata["batch_id"] == second.response_metadata["batch_id"]


@when('the model is invoked with "{prompt}" and a budget of ${budget:f}')
def step_invoke_budget(context: Context, prompt: str, budget: float) -> None:
    w = world(context)
    w.attempt(context.model.ainvoke(prompt, max_cost_usd=budget))


@then("the call fails with lowtide's {name}")
def step_call_fails(context: Context, name: str) -> None:
    error = world(context).error
    assert isinstance(error, getattr(lowtide.errors, name)), f"expected {name}, got {error!r}"


_PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"  # a 1x1 PNG


@when('the model is invoked with a system prompt, an image, an earlier tool call, its failed result and "{prompt}"')
def step_conversation(context: Context, prompt: str) -> None:
    w = world(context)
    conversation: list[BaseMessage] = [
        SystemMessage("You track orders."),
        HumanMessage(
            content=[
                {"type": "text", "text": "Here is the parcel."},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_PIXEL}"}},
            ]
        ),
        AIMessage(content="Let me look.", tool_calls=[{"name": "lookup", "args": {"order_id": "7"}, "id": "call_1"}]),
        ToolMessage("The order service is down.", tool_call_id="call_1", status="error"),
        HumanMessage(prompt),
    ]
    w.results = [w.run(context.model.bind_tools([lookup], tool_choice="auto").ainvoke(conversation))]


@then('the answer quotes "{text}"')
def step_answer_quotes(context: Context, text: str) -> None:
    (answer,) = world(context).results
    assert text in str(answer.content), f"{answer.content!r} does not quote {text!r}"


@when('the model with a lookup tool it must call is asked "{prompt}"')
def step_forced_tool(context: Context, prompt: str) -> None:
    context.call = world(context).run(context.model.bind_tools([lookup], tool_choice="lookup").ainvoke(prompt))
