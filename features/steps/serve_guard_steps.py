"""Steps for what `lowtide serve` refuses from clients it cannot trust, and for its idempotency keys: an Anthropic and
an OpenAI actor served on loopback sockets in front of a socket emulator, driven over plain HTTP (and a raw socket where
the bytes on the wire matter), so that status, headers and error bodies are seen exactly as a client sees them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx
from shared_servers import shared_server
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorError
from lowtide.actor import Actor
from lowtide.emulator.emulator import Emulator
from lowtide.http.server import app_in_thread
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.records import NewRequest
from lowtide.providers.anthropic.serving import MessagesWire
from lowtide.serve.app import build_app, error_body
from lowtide.serve.keys import ledger_key, request_key


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    build_error: ActorError | ValueError | None
    derived: str
    guarded: Guarded
    waiting: tuple[Any, str]


_UPSTREAM_ENV = "LOWTIDE_SERVE_GUARD_UPSTREAM_KEY"
_MODELS = {"anthropic": "claude-haiku-5-5", "openai": "gpt-5.4-mini"}
_LIVE_CALLS = ("messages.create", "openai.chat.completions.create", "openai.responses.create")


class MovableClock:
    """The actors' clock: real time (so that batches poll and wait as usual), moved forward when a scenario says."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Guarded:
    emulator: Emulator
    emulator_url: str
    clock: MovableClock = field(default_factory=MovableClock)
    urls: dict[str, str] = field(default_factory=dict[str, str])
    actors: list[Actor] = field(default_factory=list[Actor])
    path: str = ""
    answer: Answer | None = None
    answers: list[Answer] = field(default_factory=list[Answer])
    idempotency_keys: set[str] = field(default_factory=set[str])
    records: list[logging.LogRecord] = field(default_factory=list[logging.LogRecord])


class _Records(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _guarded(context: Context) -> Guarded:
    return context.guarded


def _provider(path: str) -> str:
    return "anthropic" if path.startswith("/v1/messages") else "openai"


@given('an emulator behind lowtide serve, on a socket, that also serves "{model}"')
def guarded_emulator(context: Context, model: str) -> None:
    emulator = Emulator(processing_seconds=0, extra_models=[model])
    slot = shared_server(context, "serve-guard-emulator")
    slot.serve(context, emulator.app)
    guarded = context.guarded = Guarded(emulator=emulator, emulator_url=slot.url)
    handler = _Records(guarded.records)
    for name in ("lowtide", "uvicorn"):
        logging.getLogger(name).addHandler(handler)
        context.cleanups.append(lambda name=name: logging.getLogger(name).removeHandler(handler))


@given("lowtide serve runs an Anthropic and an OpenAI actor, with")
def serve_both(context: Context) -> None:
    """The table's rows (option, value): client keys (comma-separated), body limit (bytes), allowed models
    (comma-separated), idempotency ttl (seconds), body timeout (seconds)."""
    options = {row["option"]: row["value"] for row in context.table}
    _start(
        context,
        keys=[key.strip() for key in options.get("client keys", "key-a").split(",")],
        allow_models=[name.strip() for name in options.get("allowed models", "").split(",") if name.strip()],
        max_body_bytes=int(options["body limit"]) if "body limit" in options else None,
        idempotency_ttl=float(options.get("idempotency ttl", 86400)),
        body_timeout=float(options.get("body timeout", 30)),
    )


@given(
    "lowtide serve runs an Anthropic and an OpenAI actor, each on a server of its own whose headers must arrive within "
    "{seconds:g} seconds"
)
def serve_own_servers(context: Context, seconds: float) -> None:
    _start(context, header_seconds=seconds)


@given("lowtide serve runs an Anthropic and an OpenAI actor that fail in a way lowtide does not expect")
def serve_failing(context: Context) -> None:
    _start(context, actor_class=_Unexpected)


@given("lowtide serve runs an Anthropic and an OpenAI actor whose ledger cannot be read")
def serve_unreadable_ledger(context: Context) -> None:
    _start(context, ledger=_UnreadableLedger)


@given("lowtide serve runs an Anthropic actor behind a wire whose checks fail in a way lowtide does not expect")
def serve_fragile(context: Context) -> None:
    _start(context, wires={"anthropic": [_FragileWire()]})


class _Unexpected(Actor):
    """An actor whose calls fail with an error that is no `ActorError`: what lowtide serve never expects."""

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("an error lowtide does not expect")


class _UnreadableLedger(MemoryLedger):
    def request(self, key: str) -> Any:
        raise OSError("the ledger cannot be read")


class _FragileWire(MessagesWire):
    """The Messages API, but a check of its fails, for a body asking for it, with an error that is no `Refusal`."""

    def call(self, body: object, route: Mapping[str, str]) -> Any:
        if isinstance(body, dict) and "fail-the-check" in json.dumps(body):
            raise TypeError("a check failed on this body")
        return super().call(body, route)


def _start(
    context: Context,
    *,
    keys: list[str] | None = None,
    actor_class: type[Actor] = Actor,
    ledger: type[MemoryLedger] | None = None,
    wires: dict[str, list[Any]] | None = None,
    header_seconds: float | None = None,
    **options: Any,
) -> None:
    """Both actors served, each by an app of its own on a loopback socket, with `--access-log` (the feature's
    servers, `shared_server`: the socket is the feature's, the app and its actors the scenario's)."""
    guarded = _guarded(context)
    os.environ[_UPSTREAM_ENV] = "sk-upstream-never-shown"
    context.cleanups.append(lambda: os.environ.pop(_UPSTREAM_ENV, None))
    guarded.actors = []
    for provider, base_url in (("anthropic", guarded.emulator_url), ("openai", f"{guarded.emulator_url}/v1")):
        actor = actor_class(
            {
                "name": f"guarded-{provider}",
                "provider": provider,
                "model": _MODELS[provider],
                "max_tokens": 64,
                "batch_processing": "batch",
                "base_url": base_url,
                "api_key_env": _UPSTREAM_ENV,
                "batch": {"poll_interval": 0.05, "coalesce_window": 0.05},
            },
            clock=guarded.clock,
            ledger=ledger() if ledger is not None else None,
        )
        guarded.actors.append(actor)
        served = (wires or {}).get(provider)
        app = build_app(actor, served, client_keys=keys or ["key-a"], **options)
        if header_seconds is not None:  # a server of its own, as `lowtide serve` starts it, with a short limit
            shapes = error_body(actor, served)
            started = app_in_thread(app, access_log=True, error_body=shapes, header_seconds=header_seconds)
            stack = contextlib.ExitStack()
            guarded.urls[provider], _ = stack.enter_context(started)
            context.cleanups.append(stack.close)
            continue
        slot = shared_server(context, f"serve-guard-{provider}", access_log=True)
        slot.serve(context, app, actor)
        guarded.urls[provider] = slot.url


# Bodies.


def _request(path: str, prompt: str = "What is a tide?", /, **fields: Any) -> dict[str, Any]:
    """A valid body for `path`, with `fields` laid over it (Responses' `text` among them)."""
    model = _MODELS[_provider(path)]
    if path == "/v1/messages":
        body: dict[str, Any] = {"model": model, "max_tokens": 32, "messages": [{"role": "user", "content": prompt}]}
    elif path == "/v1/chat/completions":
        body = {"model": model, "messages": [{"role": "user", "content": prompt}]}
    else:
        body = {"model": model, "input": prompt}
    return {**body, **fields}


def _bad_body(path: str, what: str) -> bytes:
    if what.startswith("nested "):
        levels = int(what.split()[1])
        inner = json.dumps(_request(path, "PLACE")).encode()
        return inner.replace(b'"PLACE"', b"[" * levels + b"]" * levels)
    if what == "not UTF-8":
        return json.dumps(_request(path, "cafe")).encode().replace(b"cafe", b"caf\xff")
    if what == "holding a lone surrogate":
        return json.dumps(_request(path, "x \ud800")).encode()
    if what == "holding an emoji written as a surrogate pair":
        body = json.dumps(_request(path, "A tide \N{WATER WAVE}")).encode()
        assert b"\\ud83c\\udf0a" in body, body
        return body
    if what == "holding NaN":
        return json.dumps(_request(path, temperature=float("nan"))).encode()
    if what == "holding a number too large for a float":
        return json.dumps(_request(path)).encode().replace(b"{", b'{"temperature": 1e999, ', 1)
    if what == "not JSON":
        return b"not json"
    raise AssertionError(f"no such body: {what}")


# Sending.


def _headers(key: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    given = {"x-api-key": key} if key is not None else {}
    return {**given, "content-type": "application/json", "anthropic-version": "2023-06-01", **(extra or {})}


def _send(context: Context, method: str, path: str, content: bytes, key: str | None = "key-a", **extra: str) -> Answer:
    guarded = _guarded(context)
    guarded.path = path
    response = httpx.request(
        method, f"{guarded.urls[_provider(path)]}{path}", content=content, headers=_headers(key, extra), timeout=60
    )
    json_body = response.headers.get("content-type") == "application/json"
    body = response.json() if json_body else response.text
    guarded.answer = Answer(response.status_code, dict(response.headers), body)
    return guarded.answer


@when('a body of {size:d} bytes is posted to lowtide serve at "{path}"')
def post_sized(context: Context, size: int, path: str) -> None:
    body = json.dumps(_request(path)).encode()
    _send(context, "POST", path, body + b" " * (size - len(body)))


@when('a body declaring {size:d} bytes is sent to lowtide serve at "{path}", its headers only')
def post_declared(context: Context, size: int, path: str) -> None:
    """Over a raw socket: the headers, then nothing but waiting for the answer (which must come without the body)."""
    _raw(context, path, lambda host: _head(path, host, size))


def _head(path: str, host: str, size: int, extra: str = "") -> bytes:
    """A request's line and headers, declaring a body of `size` bytes."""
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: key-a\r\ncontent-type: application/json\r\n"
        f"anthropic-version: 2023-06-01\r\n{extra}content-length: {size}\r\n\r\n"
    ).encode()


def _raw(context: Context, path: str, sent: Callable[[str], bytes]) -> None:
    """Over a raw socket to the server of `path`: `sent(host)` all at once, then the answer read off the socket."""
    guarded = _guarded(context)
    guarded.path = path
    host, port = guarded.urls[_provider(path)].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(sent(host))
        guarded.answer = _read_answer(sock)


def _read_answer(sock: socket.socket) -> Answer:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed before an answer: {received!r}"
        received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "the connection closed in the middle of the answer"
        rest += chunk
    return Answer(int(status_line.split()[1]), headers, json.loads(rest[:length]))


@when('a body declaring {size:d} bytes is sent to lowtide serve at "{path}", then only its first {sent:d} bytes')
def post_stalled(context: Context, size: int, path: str, sent: int) -> None:
    """The headers and `sent` bytes of the body, then nothing but waiting for the answer, which must come once the
    server's body timeout has passed, the connection still open."""
    _raw(context, path, lambda host: _head(path, host, size) + json.dumps(_request(path)).encode()[:sent])


@when('a request whose headers hold {size:d} bytes is sent to lowtide serve at "{path}", its body after them')
def post_large_headers(context: Context, size: int, path: str) -> None:
    """All at once: the answer must be read, not a connection reset by unread bytes."""
    body = json.dumps(_request(path)).encode()
    _raw(context, path, lambda host: _head(path, host, len(body), f"x-padding: {'p' * size}\r\n") + body)


@when('a request whose headers never end is sent to lowtide serve at "{path}"')
def post_unended_headers(context: Context, path: str) -> None:
    _raw(context, path, lambda host: f"POST {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: key-a\r\n".encode())


@when('a request body {what} is posted to lowtide serve at "{path}"')
def post_bad(context: Context, what: str, path: str) -> None:
    _send(context, "POST", path, _bad_body(path, what))


@when('the raw body {body} is posted to lowtide serve at "{path}"')
def post_raw(context: Context, body: str, path: str) -> None:
    _send(context, "POST", path, body.encode())


@when('a request without {name} is posted to lowtide serve at "{path}"')
def post_without(context: Context, name: str, path: str) -> None:
    body = _request(path)
    del body[name]
    _send(context, "POST", path, json.dumps(body).encode())


@when('a request with no client key is posted to lowtide serve at "{path}"')
def post_keyless(context: Context, path: str) -> None:
    _send(context, "POST", path, json.dumps(_request(path)).encode(), key=None)


@when('a request of {size:d} bytes with a lone surrogate in its last key is posted to lowtide serve at "{path}"')
def post_large_surrogate(context: Context, size: int, path: str) -> None:
    body = json.dumps(_request(path, "x" * size, metadata={"\ud800": "late"})).encode()
    _send(context, "POST", path, body)


@when('a client sends lowtide serve a part of a body at "{path}", then disconnects')
def post_and_leave(context: Context, path: str) -> None:
    guarded = _guarded(context)
    guarded.path = path
    host, port = guarded.urls[_provider(path)].removeprefix("http://").split(":")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: key-a\r\ncontent-type: application/json\r\n"
        "content-length: 1000\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode() + b'{"model": ')


@when('a streamed request is posted to lowtide serve at "{path}"')
def post_streamed(context: Context, path: str) -> None:
    _send(context, "POST", path, json.dumps(_request(path, stream=True)).encode())


@when('a request asking its checks to fail is posted to lowtide serve at "{path}"')
def post_failing_check(context: Context, path: str) -> None:
    _send(context, "POST", path, json.dumps(_request(path, "fail-the-check")).encode())


@when("lowtide serve is built with {option} {value}")
def build_with(context: Context, option: str, value: str) -> None:
    actor = Actor({"name": "built", "provider": "anthropic", "model": _MODELS["anthropic"]})
    try:
        build_app(actor, client_keys=["key-a"], **{option: json.loads(value)})
    except ValueError as error:
        context.build_error = error
    else:
        context.build_error = None


@when('"{method}" is sent to lowtide serve at "{path}"')
def send_method(context: Context, method: str, path: str) -> None:
    _send(context, method, path, b"")


@when('a request for the model "{model}" is posted to lowtide serve at "{path}"')
def post_model(context: Context, model: str, path: str) -> None:
    _send(context, "POST", path, json.dumps(_request(path, model=model)).encode())


@when('a request with {name} set to {value} is posted to lowtide serve at "{path}"')
def post_field(context: Context, name: str, value: str, path: str) -> None:
    _send(context, "POST", path, json.dumps(_request(path, **{name: json.loads(value)})).encode())


@when('a streamed request with {name} set to {value} is posted to lowtide serve at "{path}"')
def post_streamed_field(context: Context, name: str, value: str, path: str) -> None:
    _send(context, "POST", path, json.dumps(_request(path, stream=True, **{name: json.loads(value)})).encode())


@when('client "{key}" asks "{text}" at "{path}" with Idempotency-Key "{idempotency_key}"')
def ask_keyed(context: Context, key: str, text: str, path: str, idempotency_key: str) -> None:
    body = json.dumps(_request(path, text)).encode()
    answer = _send(context, "POST", path, body, key, **{"idempotency-key": idempotency_key})
    _guarded(context).answers.append(answer)
    _guarded(context).idempotency_keys.add(idempotency_key)


@when('client "{key}" asks "{text}" at "{path}"')
def ask_plain(context: Context, key: str, text: str, path: str) -> None:
    answer = _send(context, "POST", path, json.dumps(_request(path, text)).encode(), key)
    _guarded(context).answers.append(answer)


@when("the actors' clock moves {seconds:d} seconds forward")
def move_clock(context: Context, seconds: int) -> None:
    _guarded(context).clock.offset += seconds


# Checking.


@then('lowtide serve answers {status:d} in the API\'s error shape, type "{kind}", code "{code}"')
def answered_error(context: Context, status: int, kind: str, code: str) -> None:
    guarded = _guarded(context)
    answer = guarded.answer
    assert answer is not None
    assert answer.status == status, answer
    assert answer.headers["content-type"] == "application/json", answer.headers
    body = answer.body
    if _provider(guarded.path) == "anthropic":
        assert code == "-", code
        assert set(body) == {"type", "error"}, body
        assert body["type"] == "error", body
        assert set(body["error"]) == {"type", "message"}, body
        assert body["error"]["type"] == kind, body
    else:
        assert set(body) == {"error"}, body
        assert set(body["error"]) == {"message", "type", "param", "code"}, body
        assert body["error"]["type"] == kind, body
        assert body["error"]["code"] == (None if code == "-" else code), body
    assert isinstance(body["error"]["message"], str), body
    assert body["error"]["message"], body


def _error(context: Context) -> dict[str, Any]:
    answer = _guarded(context).answer
    assert answer is not None
    return answer.body["error"]


@then('its message says "{words}"')
def message_says(context: Context, words: str) -> None:
    assert words in _error(context)["message"], _error(context)


@then('its message does not say "{words}"')
def message_does_not_say(context: Context, words: str) -> None:
    assert words not in _error(context)["message"], _error(context)


@then('its message is "{message}"')
def message_is(context: Context, message: str) -> None:
    assert _error(context)["message"] == message, _error(context)


@then('its error names the param "{param}"')
def names_param(context: Context, param: str) -> None:
    if _provider(_guarded(context).path) == "openai":
        assert _error(context)["param"] == param, _error(context)


@then('its "{name}" header is "{value}"')
def header_is(context: Context, name: str, value: str) -> None:
    answer = _guarded(context).answer
    assert answer is not None
    assert answer.headers.get(name.lower()) == value, answer.headers


@then("lowtide serve answers 200 with the API's answer")
def answered(context: Context) -> None:
    answer = _guarded(context).answer
    assert answer is not None
    assert answer.status == 200, answer
    expected = {"/v1/messages": "message", "/v1/chat/completions": "chat.completion", "/v1/responses": "response"}
    assert answer.body.get("type", answer.body.get("object")) == expected[_guarded(context).path], answer.body


@then('lowtide serve logged "{words}" at warning level, in one line, and no traceback')
def logged_warning(context: Context, words: str) -> None:
    records = _guarded(context).records
    warned = [record for record in records if record.levelno >= logging.WARNING]
    assert [record for record in warned if words in record.getMessage()], [r.getMessage() for r in warned]
    assert all("\n" not in record.getMessage() for record in warned), [r.getMessage() for r in warned]
    assert not [record for record in records if record.exc_info and record.levelno >= logging.WARNING], records


@then('the stream ends with an error event of type "{kind}"')
def stream_error(context: Context, kind: str) -> None:
    answer = _guarded(context).answer
    assert answer is not None
    assert answer.status == 200, answer
    events = [line.removeprefix("data: ") for line in str(answer.body).splitlines() if line.startswith("data: ")]
    last = json.loads(events[-1])
    error = last["error"]
    assert error["type"] == kind, last


@then('lowtide serve\'s access log shows "{line}"')
def access_log_shows(context: Context, line: str) -> None:
    records = _guarded(context).records
    deadline = time.monotonic() + 30
    while True:
        lines = [record.getMessage() for record in list(records) if record.name == "lowtide.access"]
        if any(logged.startswith(f"{line} ") for logged in lines):
            return
        assert time.monotonic() < deadline, lines
        time.sleep(0.02)


@then("nothing was sent upstream")
def nothing_sent(context: Context) -> None:
    emulator = _guarded(context).emulator
    assert sum(emulator.calls.values()) == 0, emulator.calls
    assert emulator.created_batches == emulator.openai.created_batches == 0


@then("nothing but a look-up of the model was sent upstream")
def only_model_lookup(context: Context) -> None:
    emulator = _guarded(context).emulator
    assert set(emulator.calls) <= {"models.retrieve", "openai.models.retrieve"}, emulator.calls
    assert emulator.created_batches == emulator.openai.created_batches == 0


@then("lowtide serve logged no error and no traceback")
def no_traceback(context: Context) -> None:
    records = _guarded(context).records
    loud = [record for record in records if record.levelno >= logging.WARNING or record.exc_info]
    assert not loud, [f"{record.name}: {record.getMessage()}" for record in loud]


@then("the emulator behind lowtide serve was sent {count:d} request(s) in batches, none live")
def sent_in_batches(context: Context, count: int) -> None:
    emulator = _guarded(context).emulator
    sent = sum(emulator.created_custom_ids.values()) + sum(emulator.openai.created_custom_ids.values())
    assert sent == count, (emulator.created_custom_ids, emulator.openai.created_custom_ids)
    assert not any(emulator.calls[name] for name in _LIVE_CALLS), emulator.calls


@then("answers {first:d} and {second:d} are the same answer")
def same_answer(context: Context, first: int, second: int) -> None:
    answers = _guarded(context).answers
    one, other = answers[first - 1], answers[second - 1]
    assert one.status == other.status == 200, (one, other)
    assert one.body["id"] == other.body["id"], (one.body, other.body)


@then("answers {first:d} and {second:d} are different answers")
def different_answers(context: Context, first: int, second: int) -> None:
    answers = _guarded(context).answers
    one, other = answers[first - 1], answers[second - 1]
    assert one.status == other.status == 200, (one, other)
    assert one.body["id"] != other.body["id"], (one.body, other.body)


@then("the ledger holds {count:d} served request(s), and neither client key nor Idempotency-Key in clear")
def ledger_holds(context: Context, count: int) -> None:
    guarded = _guarded(context)
    records = [record for actor in guarded.actors for record in actor.ledger.requests(actor=actor.name)]
    assert len(records) == count, [record.key for record in records]
    assert all(record.key.startswith("serve-") for record in records), [record.key for record in records]
    location = Path(guarded.actors[0].ledger.location)
    stored = b"".join(path.read_bytes() for path in location.parent.glob(f"{location.name}*"))
    assert guarded.idempotency_keys
    for secret in {"key-a", "key-b", *guarded.idempotency_keys}:
        assert secret.encode() not in stored, f"{secret!r} is in the ledger"


# The retention, at the ledger.

_NOW = 1_800_000_000.0


def _derive(context: Context, ledger: Any, ttl: float) -> str:
    return context.runner.run(
        ledger_key(
            async_ledger(ledger),
            now=_NOW,
            ttl=ttl,
            actor_name="guarded",
            path="/v1/messages",
            scope="scope-a",
            arguments={"model": "m"},
            idempotency_key="tide-11",
        )
    )


@given("a ledger holding a served request first sent {age:d} seconds ago, still waiting on its batch")
def waiting_request(context: Context, age: int) -> None:
    ledger = MemoryLedger()
    key = request_key("guarded", "/v1/messages", "scope-a", {"model": "m"}, "tide-11")
    new = NewRequest(key=key, custom_id="c-1", actor="guarded", model="m", params={"model": "m"})
    [record] = ledger.claim([new], owner="elsewhere", until=_NOW + 60, now=_NOW - age)
    assert not record.state.final, record
    context.waiting = (ledger, key)


@when("lowtide serve derives the ledger key of the same Idempotency-Key now, with a retention of {ttl:d} seconds")
def derive_now(context: Context, ttl: int) -> None:
    ledger, _ = context.waiting
    context.derived = _derive(context, ledger, ttl)


@then("the key is the waiting request's")
def same_key(context: Context) -> None:
    _, key = context.waiting
    assert context.derived == key, (context.derived, key)
