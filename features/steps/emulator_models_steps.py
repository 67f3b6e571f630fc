"""Steps of features/emulator_models.feature: the emulator's Models API through the real SDK (plain and beta), raw
HTTP, and `lowtide emulator --models`. Every step names "the models", "the model", "the emulator is sent" or the
command, so that none clashes with features/emulator.feature's steps."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import threading
import typing
from datetime import datetime
from typing import Any

import anthropic
import httpx2
from _support import World, literal, names, shown, world
from anthropic.types.beta import BetaModelInfo
from step_context import Context, then, when

from lowtide import cli
from lowtide.emulator import Emulator
from lowtide.emulator.anthropic.catalogue import CATALOGUE

_HEADERS = {"x-api-key": "emulator-models-key", "anthropic-version": "2023-06-01"}


def _keep(w: World, name: str, value: Any) -> None:
    w.witnessed[name] = [value]


def _kept(w: World, name: str) -> Any:
    [value] = w.witnessed[name]
    return value


def _attempt(w: World, name: str, make: Any) -> None:
    """Run `make()` (a coroutine) and keep what it returned, or the SDK error it raised, under `name`."""
    w.witnessed.pop("sdk error", None)
    try:
        _keep(w, name, w.run(make()))
    except anthropic.APIStatusError as exc:
        _keep(w, "sdk error", exc)


# -- listing -----------------------------------------------------------------------------------------------------------


@when("the models are listed {limit:d} at a time")
def step_list(context: Context, limit: int) -> None:
    w = world(context)
    _attempt(w, "page", lambda: w.client.models.list(limit=limit))


@when("the models are listed {limit:d} at a time, {where:w} the {which:w} of the page")
def step_list_cursor(context: Context, limit: int, where: str, which: str) -> None:
    w = world(context)
    page = _kept(w, "page")
    cursor = page.last_id if which == "last" else page.first_id
    key = "after_id" if where == "after" else "before_id"
    _attempt(w, "page", lambda: w.client.models.list(limit=limit, **{key: cursor}))


@when("the models are listed with the lifecycles {lifecycles}")
def step_list_lifecycles(context: Context, lifecycles: str) -> None:
    w = world(context)
    _attempt(w, "page", lambda: w.client.models.list(lifecycle=literal(lifecycles)))


@then('the page lists "{models}", with {more} {where:w} it')
def step_page_lists(context: Context, models: str, more: str, where: str) -> None:
    page = _kept(world(context), "page")
    ids = [model.id for model in page.data]
    assert ids == names(models), ids
    assert (page.first_id, page.last_id) == (ids[0], ids[-1]), page
    assert page.has_more is (more == "more"), page.has_more


@then("the page holds {count:d} models, with nothing after it")
def step_page_holds(context: Context, count: int) -> None:
    page = _kept(world(context), "page")
    assert (len(page.data), page.has_more) == (count, False), ([m.id for m in page.data], page.has_more)


@then('the page holds {count:d} models, the last being "{models}", with nothing after it')
def step_page_holds_last(context: Context, count: int, models: str) -> None:
    page = _kept(world(context), "page")
    ids = [model.id for model in page.data]
    expected = names(models)
    assert (len(ids), ids[-len(expected) :], page.has_more) == (count, expected, False), ids


@when("the models are listed through the SDK's pages, {limit:d} at a time")
def step_list_all(context: Context, limit: int) -> None:
    w = world(context)

    async def every() -> list[Any]:
        return [model async for model in w.client.models.list(limit=limit)]

    _keep(w, "models", w.run(every()))


@then("the models listed are, in order:")
def step_models_in_order(context: Context) -> None:
    ids = [model.id for model in _kept(world(context), "models")]
    assert ids == names(" ".join(context.text.split())), ids


def _leaves(capabilities: Any) -> list[bool]:
    """Every `supported` of a capability tree."""
    found: list[bool] = []
    for key, value in capabilities.items():
        if key == "supported":
            found.append(value)
        elif isinstance(value, dict):
            found.extend(_leaves(typing.cast("dict[str, Any]", value)))
    return found


@then("every model listed is the SDK's ModelInfo, newest first, with every capability")
def step_model_infos(context: Context) -> None:
    models = _kept(world(context), "models")
    assert all(isinstance(model, anthropic.types.ModelInfo) for model in models)
    released = [model.created_at for model in models]
    assert released == sorted(released, reverse=True), released
    for model in models:
        assert model.type == "model", model
        assert model.capabilities is not None, model
        leaves = _leaves(model.capabilities.model_dump(exclude_none=True))
        assert leaves == [True] * 24, (model.id, leaves)


@when('the models endpoint is sent "{query}"')
def step_raw_query(context: Context, query: str) -> None:
    w = world(context)

    async def get() -> httpx2.Response:
        async with w.emu.http_client() as http:
            return await http.get(query, headers=_HEADERS)

    _keep(w, "raw", w.run(get()))


@then('the models endpoint answers {status:d} with "{message}"')
def step_raw_answer(context: Context, status: int, message: str) -> None:
    response = _kept(world(context), "raw")
    assert response.status_code == status, response.text
    assert response.json()["error"]["message"] == message, response.text


# -- one model ---------------------------------------------------------------------------------------------------------


@when('the model "{name}" is retrieved')
def step_retrieve(context: Context, name: str) -> None:
    w = world(context)
    _attempt(w, "model", lambda: w.client.models.retrieve(name))


@then("the model is described with:")
def step_described(context: Context) -> None:
    w = world(context)
    assert "sdk error" not in w.witnessed, w.witnessed.get("sdk error")
    model = _kept(w, "model")
    for row in context.table:
        value = getattr(model, row["field"])
        assert shown(value) == row["value"], (row["field"], value)


@then('the models endpoint call failed with {error:w}, status {status:d}, "{kind}" and "{message}"')
def step_sdk_failed(context: Context, error: str, status: int, kind: str, message: str) -> None:
    exc = _kept(world(context), "sdk error")
    assert type(exc).__name__ == error, exc
    assert exc.status_code == status, exc
    assert exc.body["error"] == {"type": kind, "message": message}, exc.body


class _Recording(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, seen: list[httpx2.URL]) -> None:
        self._inner, self._seen = inner, seen

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self._seen.append(request.url)
        return await self._inner.handle_async_request(request)


def _beta(w: World) -> anthropic.AsyncAnthropic:
    if "beta client" not in w.witnessed:
        seen: list[httpx2.URL] = []
        _keep(w, "beta urls", seen)
        _keep(w, "beta client", w.client_over(_Recording(w.transport(), seen)))
    return _kept(w, "beta client")


@when('the model "{name}" is retrieved through the beta client')
def step_retrieve_beta(context: Context, name: str) -> None:
    w = world(context)
    _attempt(w, "model", lambda: _beta(w).beta.models.retrieve(name))


@when("the models are listed through the beta client, {limit:d} at a time")
def step_list_beta(context: Context, limit: int) -> None:
    w = world(context)
    _attempt(w, "beta page", lambda: _beta(w).beta.models.list(limit=limit))


@then("the beta page holds {count:d} models")
def step_beta_page(context: Context, count: int) -> None:
    page = _kept(world(context), "beta page")
    assert len(page.data) == count, page
    assert isinstance(page.data[0], BetaModelInfo), page


@then("the beta client called the same paths as the plain one, {paths}")
def step_beta_urls(context: Context, paths: str) -> None:
    urls = _kept(world(context), "beta urls")
    assert [url.path for url in urls] == names(paths), urls


# -- the catalogue and messages ----------------------------------------------------------------------------------------


@then("every model the emulator describes is named by the SDK's Model type, by its id or an alias")
def step_catalogue_in_sdk(context: Context) -> None:
    sdk = set(typing.get_args(typing.get_args(anthropic.types.Model)[0]))
    unnamed = [entry.id for entry in CATALOGUE if not sdk & {entry.id, *entry.aliases}]
    assert not unnamed, unnamed


def _message(w: World, model: str, max_tokens: int = 64) -> Any:
    # An explicit timeout: without one, the SDK refuses a large max_tokens without a stream, before sending.
    return w.client.messages.create(
        model=model, max_tokens=max_tokens, messages=[{"role": "user", "content": "Hello"}], timeout=60
    )


@when('the emulator is sent a message for the model "{model}"')
def step_message(context: Context, model: str) -> None:
    w = world(context)
    _attempt(w, "message", lambda: _message(w, model))


@when('the emulator is sent a message for the model "{model}" with max_tokens {max_tokens:d}')
def step_message_max_tokens(context: Context, model: str, max_tokens: int) -> None:
    w = world(context)
    _attempt(w, "message", lambda: _message(w, model, max_tokens))


@then("the emulator answered the message")
def step_answered(context: Context) -> None:
    w = world(context)
    assert "sdk error" not in w.witnessed, w.witnessed.get("sdk error")
    assert _kept(w, "message").type == "message"


@when('the emulator is sent a batch with a message for the model "{model}", which ends')
def step_batch(context: Context, model: str) -> None:
    w = world(context)

    async def batch() -> list[Any]:
        params = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "Hello"}]}
        created = await w.client.messages.batches.create(requests=[{"custom_id": "only", "params": params}])
        return [line async for line in await w.client.messages.batches.results(created.id)]

    _keep(w, "results", w.run(batch()))


@then('the batch\'s request errored with "{kind}" and "{message}"')
def step_batch_errored(context: Context, kind: str, message: str) -> None:
    [line] = _kept(world(context), "results")
    assert line.result.type == "errored", line
    assert (line.result.error.error.type, line.result.error.error.message) == (kind, message), line


@when("an emulator is made with the extra models {extra}")
def step_make(context: Context, extra: str) -> None:
    w = world(context)
    try:
        Emulator(extra_models=literal(extra))
    except ValueError as exc:
        _keep(w, "made", str(exc))
    else:
        _keep(w, "made", None)


@then('making it failed with "{message}"')
def step_make_failed(context: Context, message: str) -> None:
    assert _kept(world(context), "made") == message


# -- the command -------------------------------------------------------------------------------------------------------


class _Announced(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.announced = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if "\n" in self.getvalue():
            self.announced.set()
        return written


@when('I run "{command}" and list its models')
def step_command(context: Context, command: str) -> None:
    w = world(context)
    output, seen = _Announced(), {}

    def list_then_stop() -> None:
        try:
            if output.announced.wait(30):
                url = output.getvalue().split()[-1]
                with httpx2.Client(base_url=url) as http:
                    seen["models"] = http.get("/v1/models?limit=100", headers=_HEADERS).json()
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=list_then_stop, daemon=True)
    helper.start()
    with contextlib.redirect_stdout(output):
        status = cli.main(command.split()[1:])
    helper.join(30)
    _keep(w, "command", (status, seen))


@then('the command\'s emulator listed "{models}" last')
def step_command_listed(context: Context, models: str) -> None:
    status, seen = _kept(world(context), "command")
    ids = [model["id"] for model in seen["models"]["data"]]
    expected = names(models)
    assert status == 0, status
    assert ids[-len(expected) :] == expected, ids
    assert all(datetime.fromisoformat(model["created_at"]).year == 1970 for model in seen["models"]["data"][-3:])


@then('the models endpoint answers 200 with the models "{models}"')
def step_raw_models(context: Context, models: str) -> None:
    response = _kept(world(context), "raw")
    assert response.status_code == 200, response.text
    body = response.json()
    ids = [model["id"] for model in body["data"]] if "data" in body else [body["id"]]
    assert ids == names(models), ids
