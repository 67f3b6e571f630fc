"""Steps for features/azure_openai_paths.feature: the Azure OpenAI provider called directly, its clients, its codec's
lines, and the emulated resource's answers to calls lowtide never makes (over the scenario's in-process transport)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
from _support import World, world
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode
from lowtide.emulator import Emulator
from lowtide.emulator.azure_openai.emulation import AzureOpenAIEmulation
from lowtide.providers.azure_openai.batch import AzureOpenAIBatchProvider
from lowtide.providers.azure_openai.batch_codec import AzureBatchCodec
from lowtide.providers.azure_openai.live import AzureOpenAIProvider

_KEY = "azure-lowtide-scenario-secret-77c1"
_VERSION = "2024-10-21"


def _azure(w: World) -> AzureOpenAIEmulation:
    return w.emu.emulation(AzureOpenAIEmulation)


def _live(w: World) -> AzureOpenAIProvider:
    provider = w.current_actor().provider(BatchProcessingMode.LIVE)
    assert isinstance(provider, AzureOpenAIProvider), provider
    return provider


@when("the Azure actor answers {count:d} prompts in a live bulk run")
def step_live_bulk(context: Context, count: int) -> None:
    w = world(context)
    prompts = [f"Tide report {n}" for n in range(count)]
    w.value = w.run(w.current_actor().map(prompts, mode="live"))


@then("the live run's {count:d} items were answered by Azure OpenAI")
def step_live_bulk_answered(context: Context, count: int) -> None:
    result = world(context).value
    assert len(result.completed) == count, result.items
    for item in result.items:
        assert item.response is not None, item
        assert item.response.provider == "azure_openai", item.response
        assert item.response.mode is BatchProcessingMode.LIVE, item.response


@when('the Azure OpenAI batch provider answers "{prompt}" alone, outside the ledger')
def step_direct(context: Context, prompt: str) -> None:
    w = world(context)
    actor = w.current_actor()
    provider = actor.provider(BatchProcessingMode.BATCH)
    assert isinstance(provider, AzureOpenAIBatchProvider), provider
    w.response = w.attempt_async(lambda: provider.complete(actor.request(prompt)))


@when("an Azure batch line is encoded from the stored request {stored}")
def step_encode_line(context: Context, stored: str) -> None:
    world(context).value = AzureBatchCodec().encode([("c1", stored)])


@then("the Azure batch line is {line}")
def step_line_is(context: Context, line: str) -> None:
    encoded = world(context).value
    [written] = encoded.decode().splitlines()
    assert json.loads(written) == json.loads(line), written


@when("an Azure OpenAI actor is built with a client that is not an AsyncAzureOpenAI")
def step_not_azure_client(context: Context) -> None:
    w = world(context)
    settings = {"name": "wrong", "provider": "azure_openai", "model": "tide-batch", "max_tokens": 64}
    w.attempt(lambda: w.add_actor(settings, client="not a client").provider())


@then("the actor's Azure client speaks the API version {version}")
def step_client_version(context: Context, version: str) -> None:
    w = world(context)
    client = _live(w)._client  # pyright: ignore[reportPrivateUsage]
    assert client._api_version == version, client._api_version  # pyright: ignore[reportPrivateUsage]
    w.witnessed["azure client"] = [client]


@then("the actor's Azure client is closed")
def step_client_closed(context: Context) -> None:
    [client] = world(context).witnessed["azure client"]
    assert client.is_closed(), client


@when('the Azure API is sent {method:w} "{path}" with {auth} and the body {body}')
def step_raw(context: Context, method: str, path: str, auth: str, body: str) -> None:
    w = world(context)
    headers = {"the key": {"api-key": _KEY}, "an Entra ID token": {"authorization": "Bearer entra-token"}}.get(auth, {})
    sent = json.loads(body)

    async def call() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url) as client:
            return await client.request(
                method, path, params={"api-version": _VERSION}, headers=headers, json=sent if sent is not None else None
            )

    w.witnessed["raw"] = [w.run(call())]


@then('the Azure API\'s error says "{text}"')
def step_raw_says(context: Context, text: str) -> None:
    [response] = world(context).witnessed["raw"]
    assert text in response.json()["error"]["message"], response.text


@then('the Azure API answered with the emulated reply to "{prompt}"')
def step_raw_answered(context: Context, prompt: str) -> None:
    [response] = world(context).witnessed["raw"]
    assert response.status_code == 200, response.text
    text = response.json()["choices"][0]["message"]["content"]
    assert text.startswith(f'Emulated reply to "{prompt}"'), text


@given("the emulated Azure resource holds {count:d} files, as many as it may")
def step_files_full(context: Context, count: int) -> None:
    w = world(context)
    _azure(w).backend.max_files = count

    async def fill() -> None:
        for n in range(count):
            await w.client.files.create(file=(f"other-{n}.jsonl", b"{}\n"), purpose="batch")

    w.run(fill())
    assert len(_azure(w).files.uploaded()) == count, _azure(w).files.uploaded()


@when("a program uploads one more batch file through the SDK")
def step_upload_one_more(context: Context) -> None:
    w = world(context)

    async def upload() -> Any:
        try:
            return await w.client.files.create(file=("more.jsonl", b"{}\n"), purpose="batch")
        except openai.APIStatusError as exc:
            return exc

    w.value = w.run(upload())


@then('the upload was refused with {status:d} and the code "{code}"')
def step_upload_refused(context: Context, status: int, code: str) -> None:
    error = world(context).value
    assert isinstance(error, openai.APIStatusError), error
    assert error.status_code == status, error.status_code
    assert error.code == code, error.code


def _stats(w: World) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        async with httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url) as client:
            return dict((await client.get("/_emulator/stats")).json())

    return w.run(read())


@then("the emulated Azure resource's stats count {count:d} batch")
@then("the emulated Azure resource's stats count {count:d} batches")
def step_stats(context: Context, count: int) -> None:
    w = world(context)
    assert isinstance(w.response, ActorResponse) or count == 0, w.error
    assert _stats(w)["azure_openai_batches"] == count, _stats(w)


@when("the emulated Azure resource is reset")
def step_reset(context: Context) -> None:
    w = world(context)

    async def reset() -> int:
        async with httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url) as client:
            return (await client.post("/_emulator/reset")).status_code

    assert w.run(reset()) == 200


@given("an emulated Azure OpenAI API taking request bodies of at most {size:d} bytes")
def step_small_requests(context: Context, size: int) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, max_request_bytes=size)
    _azure(w).deployments["tide-batch"] = "gpt-4o-mini"


@when('the Azure API is sent POST "{path}" with the key and a message of {size:d} characters')
def step_raw_big(context: Context, path: str, size: int) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "x" * size}]})
    step_raw(context, "POST", path, "the key", body)


@when("a program creates an Azure batch of one request that names no deployment")
def step_batch_no_model(context: Context) -> None:
    w = world(context)
    line = {"custom_id": "one", "method": "POST", "url": "/chat/completions", "body": {"messages": []}}

    async def create() -> Any:
        uploaded = await w.client.files.create(file=("in.jsonl", json.dumps(line).encode() + b"\n"), purpose="batch")
        azure_url: Any = "/chat/completions"  # Azure's url, which the SDK's types (OpenAI's urls) do not list
        batch = await w.client.batches.create(input_file_id=uploaded.id, endpoint=azure_url, completion_window="24h")
        return await w.client.batches.retrieve(batch.id)

    w.value = w.run(create())


@then('the Azure batch failed with the error "{code}" on "{param}"')
def step_batch_failed(context: Context, code: str, param: str) -> None:
    batch = world(context).value
    assert batch.status == "failed", batch.status
    assert batch.errors is not None, batch
    [error] = batch.errors.data or []
    assert (error.code, error.param) == (code, param), error
