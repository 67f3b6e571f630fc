"""Steps of features/emulator_openai_stored.feature: what the emulated OpenAI account keeps (stored chat completions
and responses, background responses, compaction, fine-tuned models) and the real API's shapes (dated snapshots,
fingerprints, file expiry and downloads), through the official openai SDK over a loopback socket, the client built
from `OPENAI_BASE_URL` and `OPENAI_API_KEY` as a program builds it. Every step text names "the socket OpenAI
emulator" (or the socket OpenAI account), so that it cannot clash with the other step modules."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import _support  # noqa: F401  (registers the Q type of quoted step text)
import openai
from _openai_support import strict
from _socket_emulator import SocketEmulator
from _support import set_env, world
from openai.types.chat import ChatCompletion
from openai.types.chat.chat_completion_store_message import ChatCompletionStoreMessage
from openai.types.responses import CompactedResponse, Response
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorResponse
from lowtide.providers.openai.stream_events import response_events

KEY = "sk-stored-openai-scenario-4b1e"
MODEL = "gpt-4o-mini"
_FINGERPRINT = re.compile(r"fp_[0-9a-f]{10}")


class _AnyRoleMessage(ChatCompletionStoreMessage):
    """A stored completion's message as the API lists it: any role (the SDK's type admits only `assistant`)."""

    role: str  # pyright: ignore[reportIncompatibleVariableOverride]  # the API lists every role


@dataclass
class StoredScenario:
    """What the scenario's program did against the socket emulator."""

    socket: SocketEmulator
    ids: dict[str, str] = field(default_factory=dict[str, str])
    answers: dict[str, Any] = field(default_factory=dict[str, Any])
    error: openai.APIStatusError | None = None
    deleted: Any = None
    fine_tuned: str = ""
    lines: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


class Context(StepContext, Protocol):
    stored_openai: StoredScenario


def _run(context: Context, make: Any) -> Any:
    """An SDK call by a client built from the environment alone; an API error is kept for the Then steps."""
    s = context.stored_openai
    s.error = None

    async def call() -> Any:
        client = openai.AsyncOpenAI(max_retries=0)
        try:
            return await make(client)
        finally:
            await client.close()

    try:
        return world(context).run(call())
    except openai.APIStatusError as exc:
        s.error = exc
        return None


def _ok(context: Context, make: Any) -> Any:
    found = _run(context, make)
    assert context.stored_openai.error is None, context.stored_openai.error
    return found


def _id(context: Context, name: str) -> str:
    return context.stored_openai.ids.get(name, name)


# -- setting up ------------------------------------------------------------------------------------------------------


def _serve(context: Context, processing_seconds: float) -> None:
    w = world(context)
    socket = SocketEmulator("OPENAI_BASE_URL", processing_seconds=processing_seconds)
    socket.serve(w)
    set_env(w, "OPENAI_BASE_URL", f"{socket.url}/v1")
    set_env(w, "OPENAI_API_KEY", KEY)
    context.stored_openai = StoredScenario(socket)


@given("the socket OpenAI emulator runs on a manual clock")
def step_serve(context: Context) -> None:
    _serve(context, 0.0)


@given("the socket OpenAI emulator runs on a manual clock with {seconds:d} processing seconds")
def step_serve_processing(context: Context, seconds: int) -> None:
    _serve(context, float(seconds))


@given("the socket OpenAI emulator keeps its state in a file")
def step_state_file(context: Context) -> None:
    w = world(context)
    context.stored_openai.socket.keep_state(w)
    set_env(w, "OPENAI_BASE_URL", f"{context.stored_openai.socket.url}/v1")


@when("the socket OpenAI emulator is started again on its state file")
def step_restart(context: Context) -> None:
    w = world(context)
    context.stored_openai.socket.serve(w)
    set_env(w, "OPENAI_BASE_URL", f"{context.stored_openai.socket.url}/v1")


@when("the socket OpenAI emulator clock advances {seconds:d} seconds")
def step_advance(context: Context, seconds: int) -> None:
    context.stored_openai.socket.clock.advance(seconds)


# -- stored chat completions -----------------------------------------------------------------------------------------


@when("the socket OpenAI emulator is asked for chat completions:")
def step_completions(context: Context) -> None:
    assert context.table is not None
    for row in context.table:
        metadata = json.loads(row["metadata"])
        content: Any = row["content"]
        if content.startswith("parts:"):
            content = [{"type": "text", "text": text} for text in content.removeprefix("parts:").split("+")]
        completion = _ok(
            context,
            lambda c, row=row, metadata=metadata, content=content: c.chat.completions.create(
                model=MODEL,
                messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": content}]
                if row["name"].startswith("briefed")
                else [{"role": "user", "content": content}],
                store=row["store"] == "true",
                metadata=metadata or openai.omit,
            ),
        )
        strict(completion)
        context.stored_openai.ids[row["name"]] = completion.id
        context.stored_openai.answers[row["name"]] = completion


def _listed(context: Context, **query: Any) -> list[str]:
    names = {value: name for name, value in context.stored_openai.ids.items()}
    page = _ok(context, lambda c: c.chat.completions.list(**query))
    for item in page.data:
        strict(item)
    return [names[item.id] for item in page.data]


@then('the socket OpenAI emulator lists the stored completions "{expected:Q}"')
def step_listed(context: Context, expected: str) -> None:
    assert _listed(context) == expected.split(", "), _listed(context)


@then('the socket OpenAI emulator lists the stored completions "{expected:Q}" in order "{order:Q}"')
def step_listed_order(context: Context, expected: str, order: str) -> None:
    assert _listed(context, order=order) == expected.split(", ")


@then('the socket OpenAI emulator lists the stored completions "{expected:Q}" with the metadata {key} "{value:Q}"')
def step_listed_metadata(context: Context, expected: str, key: str, value: str) -> None:
    assert _listed(context, metadata={key: value}) == expected.split(", ")


@then('the socket OpenAI emulator lists the stored completions "{expected:Q}" for the model "{model:Q}"')
def step_listed_model(context: Context, expected: str, model: str) -> None:
    assert _listed(context, model=model) == expected.split(", ")


@then('the socket OpenAI emulator lists the stored completions "{expected:Q}" one page at a time')
def step_listed_pages(context: Context, expected: str) -> None:
    names = {value: name for name, value in context.stored_openai.ids.items()}

    async def walk(client: openai.AsyncOpenAI) -> list[tuple[str, bool]]:
        seen: list[tuple[str, bool]] = []
        page = await client.chat.completions.list(limit=1)
        while True:
            seen.extend((item.id, page.has_more is True) for item in page.data)
            if not page.has_next_page():
                return seen
            page = await page.get_next_page()

    walked = _ok(context, walk)
    assert [names[item] for item, _ in walked] == expected.split(", "), walked
    assert [more for _, more in walked] == [True] * (len(walked) - 1) + [False], walked


@then('the socket OpenAI emulator stored completion "{name:Q}" names the model "{model:Q}" and the metadata {metadata}')
def step_stored_completion(context: Context, name: str, model: str, metadata: str) -> None:
    completion = _ok(context, lambda c: c.chat.completions.retrieve(_id(context, name)))
    strict(completion)
    assert completion.model == model, completion.model
    assert completion.to_dict()["metadata"] == json.loads(metadata), completion
    kept = context.stored_openai.answers[name]
    assert (completion.choices, completion.usage) == (kept.choices, kept.usage), completion


@then('the socket OpenAI emulator stored completion "{name:Q}" has the messages "{expected:Q}"')
def step_stored_messages(context: Context, name: str, expected: str) -> None:
    page = _ok(context, lambda c: c.chat.completions.messages.list(_id(context, name)))
    for item in page.data:
        _AnyRoleMessage.model_validate(item.to_dict())
    assert [f"{item.role}: {item.content}" for item in page.data] == expected.split(", "), page.data
    assert page.data[0].id == f"{_id(context, name)}-0", page.data[0].id


@then('the socket OpenAI emulator stored completion "{name:Q}" shows its user message as the parts "{expected:Q}"')
def step_stored_parts(context: Context, name: str, expected: str) -> None:
    page = _ok(context, lambda c: c.chat.completions.messages.list(_id(context, name), order="desc", limit=1))
    (message,) = page.data
    _AnyRoleMessage.model_validate(message.to_dict())
    parts = [part.text for part in message.content_parts or [] if part.type == "text"]
    assert (message.role, parts, message.content) == ("user", expected.split("+"), expected.replace("+", "")), message
    assert page.has_more is True, page


@when('the socket OpenAI emulator stored completion "{name:Q}" gets the metadata {metadata}')
def step_update(context: Context, name: str, metadata: str) -> None:
    updated = _ok(context, lambda c: c.chat.completions.update(_id(context, name), metadata=json.loads(metadata)))
    strict(updated)


@when('the socket OpenAI emulator stored completion "{name:Q}" is deleted')
def step_delete_completion(context: Context, name: str) -> None:
    context.stored_openai.deleted = _ok(context, lambda c: c.chat.completions.delete(_id(context, name)))


@then('the socket OpenAI emulator said "{kind:Q}" for "{name:Q}"')
def step_said_deleted(context: Context, kind: str, name: str) -> None:
    deleted = strict(context.stored_openai.deleted)
    assert (deleted.object, deleted.id, deleted.deleted) == (kind, _id(context, name), True), deleted


# -- any call, and its refusal ---------------------------------------------------------------------------------------


def _call_of(context: Context, call: str) -> Any:
    verb, _, rest = call.partition(" ")
    target, _, raw = rest.partition(" ")
    if target.startswith("{"):
        target, raw = "", rest
    body: dict[str, Any] = json.loads(raw) if raw else {}
    ident = _id(context, target)
    calls: dict[str, Any] = {
        "retrieve": lambda c: c.chat.completions.retrieve(ident),
        "delete": lambda c: c.chat.completions.delete(ident),
        "messages": lambda c: c.get(f"/chat/completions/{ident}/messages", options={"params": body}, cast_to=object),
        "get_response": lambda c: c.get(f"/responses/{ident}", options={"params": body}, cast_to=object),
        "update": lambda c: c.post(f"/chat/completions/{ident}", body=body, cast_to=object),
        "list": lambda c: c.get("/chat/completions", options={"params": body}, cast_to=object),
        "retrieve_response": lambda c: c.responses.retrieve(ident),
        "delete_response": lambda c: c.responses.delete(ident),
        "cancel": lambda c: c.responses.cancel(ident),
        "input_items": lambda c: c.get(f"/responses/{ident}/input_items", options={"params": body}, cast_to=object),
        "compact": lambda c: c.post("/responses/compact", body=body, cast_to=object),
        "create": lambda c: c.post("/responses", body=body, cast_to=object),
        "delete_model": lambda c: c.models.delete(ident),
    }
    if target.startswith("resp_") or (verb in ("retrieve", "delete") and ident.startswith("resp_")):
        verb = f"{verb}_response" if verb in ("retrieve", "delete") else verb
    return calls[verb]


@when("the socket OpenAI emulator is called: {call}")
def step_called(context: Context, call: str) -> None:
    _run(context, _call_of(context, call))


@then('the socket OpenAI emulator call failed with {status:d} "{message:Q}"')
def step_failed(context: Context, status: int, message: str) -> None:
    error = context.stored_openai.error
    assert error is not None, "the call succeeded"
    expected = re.sub(r"\{(\w+)\}", lambda m: _id(context, m.group(1)), message)
    body = error.body if isinstance(error.body, dict) else {}
    assert error.status_code == status, (error.status_code, body)
    assert str(body.get("message", "")).startswith(expected), body
    assert body.get("type") == ("invalid_request_error" if status < 500 else "server_error"), body


# -- stored responses ------------------------------------------------------------------------------------------------


def _respond(context: Context, name: str, text: str, **options: Any) -> Response:
    response = _ok(context, lambda c: c.responses.create(model=MODEL, input=text, **options))
    strict(response)
    context.stored_openai.ids[name] = response.id
    context.stored_openai.answers[name] = response
    return response


@when('the socket OpenAI emulator is asked for the response "{name:Q}" to "{text:Q}"')
def step_respond(context: Context, name: str, text: str) -> None:
    _respond(context, name, text)


@when('the socket OpenAI emulator is asked for the unstored response "{name:Q}" to "{text:Q}"')
def step_respond_unstored(context: Context, name: str, text: str) -> None:
    _respond(context, name, text, store=False)


@when('the socket OpenAI emulator is asked for the background response "{name:Q}" to "{text:Q}"')
def step_respond_background(context: Context, name: str, text: str) -> None:
    _respond(context, name, text, background=True)


@when('the socket OpenAI emulator is asked for the response "{name:Q}" to "{text:Q}", continuing "{previous:Q}"')
def step_respond_continuing(context: Context, name: str, text: str, previous: str) -> None:
    _respond(context, name, text, previous_response_id=_id(context, previous))


@then('the socket OpenAI emulator returns the response "{name:Q}" as it answered it, naming "{model:Q}"')
def step_response_again(context: Context, name: str, model: str) -> None:
    again = _ok(context, lambda c: c.responses.retrieve(_id(context, name)))
    strict(again)
    assert again == context.stored_openai.answers[name], (again, context.stored_openai.answers[name])
    assert again.model == model, again.model


@then('the socket OpenAI emulator streams the response "{name:Q}" again, rebuilt as it answered it')
def step_response_streamed(context: Context, name: str) -> None:
    async def read(client: openai.AsyncOpenAI) -> list[Any]:
        stream = await client.responses.retrieve(_id(context, name), stream=True)
        return [event async for event in stream]

    events = _ok(context, read)
    answered = context.stored_openai.answers[name]
    assert (events[-1].type, events[-1].response) == ("response.completed", answered), events[-1]
    expected = [event["type"] for event in response_events(answered.to_dict())]
    assert [event.type for event in events] == expected, [event.type for event in events]

    async def resumed(client: openai.AsyncOpenAI) -> list[Any]:
        stream = await client.responses.retrieve(_id(context, name), stream=True, starting_after=1)
        return [event async for event in stream]

    later = _ok(context, resumed)
    assert [event.sequence_number for event in later] == list(range(2, len(events))), later


@then('the socket OpenAI emulator lists the input items of "{name:Q}" as "{expected:Q}"')
def step_input_items(context: Context, name: str, expected: str) -> None:
    page = _ok(context, lambda c: c.responses.input_items.list(_id(context, name)))
    for item in page.data:
        strict(item)
    shown = [f"{item.role}: {''.join(part.text for part in item.content)}" for item in page.data]
    assert shown == expected.split(", "), shown


@then('the response "{name:Q}" read the conversation of "{previous:Q}" before its own input')
def step_read_conversation(context: Context, name: str, previous: str) -> None:
    answers = context.stored_openai.answers
    answer, before = answers[name], answers[previous]
    assert answer.previous_response_id == before.id, answer.previous_response_id
    assert answer.usage.input_tokens > before.usage.input_tokens + before.usage.output_tokens, (answer, before)


@then('the socket OpenAI emulator counts more input tokens continuing "{previous:Q}" than without it')
def step_count_continuing(context: Context, previous: str) -> None:
    alone = _ok(context, lambda c: c.responses.input_tokens.count(model=MODEL, input="And when is high tide?"))
    continuing = _ok(
        context,
        lambda c: c.responses.input_tokens.count(
            model=MODEL, input="And when is high tide?", previous_response_id=_id(context, previous)
        ),
    )
    assert continuing.input_tokens > alone.input_tokens, (continuing, alone)


@when('the socket OpenAI emulator response "{name:Q}" is deleted')
def step_delete_response(context: Context, name: str) -> None:
    _ok(context, lambda c: c.responses.delete(_id(context, name)))


@then('the socket OpenAI emulator cannot find the response "{name:Q}"')
def step_response_gone(context: Context, name: str) -> None:
    for verb in ("retrieve_response", "delete_response", "cancel", "input_items"):
        _run(context, _call_of(context, f"{verb} {name}"))
        step_failed(context, 404, f"Response with id '{_id(context, name)}' not found.")


@then('a response continuing "{name:Q}" is refused with {status:d} "{code:Q}"')
def step_continuing_refused(context: Context, name: str, status: int, code: str) -> None:
    _run(context, lambda c: c.responses.create(model=MODEL, input="Hi", previous_response_id=_id(context, name)))
    error = context.stored_openai.error
    assert error is not None, "the call succeeded"
    assert (error.status_code, error.code) == (status, code), error


@when('the socket OpenAI emulator response "{name:Q}" is cancelled')
def step_cancel(context: Context, name: str) -> None:
    cancelled = _run(context, lambda c: c.responses.cancel(_id(context, name)))
    if cancelled is not None:
        context.stored_openai.answers[name] = strict(cancelled)


@then('the socket OpenAI emulator answered the response "{name:Q}" as "{status:Q}"')
def step_answered_as(context: Context, name: str, status: str) -> None:
    answer = context.stored_openai.answers[name]
    assert answer.status == status, answer.status
    assert answer.background is True, answer.background
    assert (answer.output == []) == (status != "completed"), answer.output


@then('the socket OpenAI emulator shows the response "{name:Q}" as "{status:Q}"')
def step_shows_as(context: Context, name: str, status: str) -> None:
    context.stored_openai.answers[name] = strict(_ok(context, lambda c: c.responses.retrieve(_id(context, name))))
    step_answered_as(context, name, status)


@when('the socket OpenAI emulator compacts "{text:Q}" after "{previous:Q}"')
def step_compact(context: Context, text: str, previous: str) -> None:
    compacted = _ok(
        context, lambda c: c.responses.compact(model=MODEL, input=text, previous_response_id=_id(context, previous))
    )
    context.stored_openai.answers["compacted"] = compacted


@then('the compaction holds the user messages "{expected:Q}" and one compaction item')
def step_compacted(context: Context, expected: str) -> None:
    compacted: CompactedResponse = context.stored_openai.answers["compacted"]
    data: dict[str, Any] = compacted.to_dict()
    output: list[dict[str, Any]] = data["output"]
    *messages, last = output
    texts = [part["text"] for item in messages for part in item["content"]]
    assert [item["role"] for item in messages] == ["user"] * len(messages), messages
    assert texts == expected.split(", "), texts
    assert (last["type"], last["id"][:4], bool(last["encrypted_content"])) == ("compaction", "cmp_", True), last
    assert (data["object"], data["usage"]["input_tokens"] > 0) == ("response.compaction", True), data


# -- fine-tuned models -----------------------------------------------------------------------------------------------


@given('the socket OpenAI account has a model fine-tuned from "{base:Q}" with the suffix "{suffix:Q}"')
def step_fine_tuned(context: Context, base: str, suffix: str) -> None:
    s = context.stored_openai
    s.fine_tuned = s.socket.emu.openai.add_fine_tuned_model(base, suffix=suffix)
    assert s.fine_tuned.startswith(f"ft:{base}:lowtide:{suffix}:"), s.fine_tuned


@then('the socket OpenAI emulator lists and describes the fine-tuned model, owned by "{owner:Q}"')
def step_fine_tuned_listed(context: Context, owner: str) -> None:
    model_id = context.stored_openai.fine_tuned
    listed = _ok(context, lambda c: c.models.list())
    assert model_id in [model.id for model in listed.data], model_id
    described = strict(_ok(context, lambda c: c.models.retrieve(model_id)))
    assert (described.id, described.owned_by) == (model_id, owner), described


@when("the socket OpenAI emulator deletes the fine-tuned model")
def step_delete_fine_tuned(context: Context) -> None:
    s = context.stored_openai
    s.deleted = _ok(context, lambda c: c.models.delete(s.fine_tuned))


@then("the socket OpenAI emulator said the fine-tuned model was deleted, and no longer lists it")
def step_fine_tuned_deleted(context: Context) -> None:
    s = context.stored_openai
    deleted = strict(s.deleted)
    assert (deleted.id, deleted.object, deleted.deleted) == (s.fine_tuned, "model", True), deleted
    listed = _ok(context, lambda c: c.models.list())
    assert s.fine_tuned not in [model.id for model in listed.data]


# -- the real API's shapes -------------------------------------------------------------------------------------------


@then('the socket OpenAI emulator completion "{name:Q}" names "{model:Q}" with a fingerprint "fp_" and 10 hex digits')
def step_completion_shape(context: Context, name: str, model: str) -> None:
    completion: ChatCompletion = context.stored_openai.answers[name]
    assert completion.model == model, completion.model
    assert _FINGERPRINT.fullmatch(completion.system_fingerprint or ""), completion.system_fingerprint


def _batch_lines(context: Context, lines: list[dict[str, Any]], endpoint: str) -> list[dict[str, Any]]:
    """The output lines of a batch of `lines` to `endpoint`, run to its end."""
    content = "\n".join(json.dumps(line) for line in lines).encode()

    async def run(client: openai.AsyncOpenAI) -> bytes:
        uploaded = await client.files.create(file=("in.jsonl", content), purpose="batch")
        assert uploaded.expires_at is None, uploaded
        batch = await client.batches.create(
            input_file_id=uploaded.id,
            endpoint=cast(Any, endpoint),
            completion_window="24h",
        )
        context.stored_openai.socket.clock.advance(1)
        ended = await client.batches.retrieve(batch.id)
        assert ended.status == "completed", ended
        assert ended.output_file_id is not None, ended
        return (await client.files.content(ended.output_file_id)).content

    output = _ok(context, run)
    return [json.loads(line) for line in output.splitlines()]


@when('the socket OpenAI emulator runs a batch to "{first:Q}" and one to "{second:Q}" for "{model:Q}"')
def step_batches(context: Context, first: str, second: str, model: str) -> None:
    found: list[dict[str, Any]] = []
    for endpoint in (first, second):
        if endpoint == "/v1/chat/completions":
            body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "Hello"}]}
        else:
            body = {"model": model, "input": "Hello"}
        line = {"custom_id": "r0", "method": "POST", "url": endpoint, "body": body}
        found.extend(_batch_lines(context, [line], endpoint))
    context.stored_openai.lines = found


@when("the socket OpenAI emulator runs a batch of {count:d} embeddings")
def step_embeddings_batch(context: Context, count: int) -> None:
    lines = [
        {
            "custom_id": f"e{index}",
            "method": "POST",
            "url": "/v1/embeddings",
            "body": {"model": "text-embedding-3-small", "input": f"Tide {index}", "encoding_format": "float"},
        }
        for index in range(count)
    ]
    context.stored_openai.lines = _batch_lines(context, lines, "/v1/embeddings")
    assert len(context.stored_openai.lines) == count


@then('every output line of the socket OpenAI emulator names "{model:Q}"')
def step_lines_model(context: Context, model: str) -> None:
    lines = context.stored_openai.lines
    assert lines, "no output lines"
    assert all(line["response"]["body"]["model"] == model for line in lines), lines


@then('every chat completion line of the socket OpenAI emulator has a fingerprint "fp_" and 10 hex digits')
def step_lines_fingerprint(context: Context) -> None:
    bodies = [line["response"]["body"] for line in context.stored_openai.lines]
    chats = [body for body in bodies if body["object"] == "chat.completion"]
    assert chats, bodies
    assert all(_FINGERPRINT.fullmatch(body["system_fingerprint"]) for body in chats), chats
    for body in bodies:
        (ChatCompletion if body["object"] == "chat.completion" else Response).model_validate(body)


@then('every output line of the socket OpenAI emulator holds one embedding of {size:d} numbers for "{model:Q}"')
def step_lines_embeddings(context: Context, size: int, model: str) -> None:
    for line in context.stored_openai.lines:
        body = line["response"]["body"]
        assert (line["response"]["status_code"], body["model"]) == (200, model), line
        assert [len(item["embedding"]) for item in body["data"]] == [size], body


@when(
    'the socket OpenAI emulator holds the upload "{first:Q}" for "{first_purpose:Q}" '
    'and "{second:Q}" for "{second_purpose:Q}"'
)
def step_uploads(context: Context, first: str, first_purpose: str, second: str, second_purpose: str) -> None:
    for name, purpose in ((first, first_purpose), (second, second_purpose)):
        uploaded = _ok(
            context,
            lambda c, name=name, purpose=purpose: c.files.create(file=(name, b"High water at noon."), purpose=purpose),
        )
        assert uploaded.expires_at is None, uploaded
        context.stored_openai.ids[name] = uploaded.id


@then('downloading "{name:Q}" from the socket OpenAI emulator fails with {status:d} "{message:Q}"')
def step_download_refused(context: Context, name: str, status: int, message: str) -> None:
    _run(context, lambda c: c.files.content(_id(context, name)))
    step_failed(context, status, message)


@then('downloading "{name:Q}" from the socket OpenAI emulator gives its bytes')
def step_download(context: Context, name: str) -> None:
    content = _ok(context, lambda c: c.files.content(_id(context, name)))
    assert content.content == b"High water at noon.", content.content


# -- lowtide's own OpenAI code ---------------------------------------------------------------------------------------


@then('every OpenAI answer names the model "{model:Q}"')
def step_answers_model(context: Context, model: str) -> None:
    for label, outcome in world(context).asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        assert outcome.model == model, (label, outcome.model)
