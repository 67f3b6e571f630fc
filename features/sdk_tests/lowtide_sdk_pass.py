"""A pytest plugin that runs an official SDK's own generated tests (`tests/api_resources` of its source
distribution) against lowtide's emulator: `nox -s sdk_tests`.

The generated tests are written for a mock server that answers any id: they retrieve, cancel and delete objects
named by placeholders (`message_batch_id`, `file_id`, `batch_id`). This is their stateful pass: the emulator is
served behind a thin ASGI layer that, for each request naming a placeholder, first makes a real object in the
state the operation needs (an ended batch to delete or read, one in progress to cancel, a file to download) and
then sends the request on with that object's id. Nothing of the emulator is changed for the tests.

Which tests run: the modules named on the command line (`nox -s sdk_tests` names those of the resources the emulator
claims to serve: `SDK_TEST_MODULES` in noxfile.py), except those that mock the HTTP layer themselves (`respx_mock`:
they never reach a server). The tally (passed, wrong, missing) is written to the
file `LOWTIDE_SDK_TALLY` names, if set: a test that fails on a route the emulator does not serve is *missing*; one
that fails as the real API would fail it (`REFUSED`), or on its own type assertion narrower than the API's documented
answer (`NARROWER`), is counted apart; any other failure is *wrong*.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator
from lowtide.http.server import app_in_thread

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

PROCESSING_SECONDS = 60.0
KEY = "sdk-tests-key"
ANTHROPIC = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
OPENAI = {"authorization": f"Bearer {KEY}"}

# Generated tests that the real API fails as the emulator does (the mock server they are written for accepts
# anything and answers its spec's examples): each with the failure it must end in and the API's rule. They are
# counted apart; a test listed here that fails in any other way is wrong. Keys: `<sdk>:<module>::<test>`.
REFUSED: dict[str, tuple[str, str]] = {
    "anthropic:test_messages.py::test_deprecated_model_warning": (
        "not_found_error",
        "sends every model in the SDK's deprecation list, retired ones among them (claude-mythos-preview retired "
        "2026-06-30): the API answers a retired model with 404 not_found_error",
    ),
    "anthropic:messages/test_batches.py::test_method_list_with_all_params": (
        "Only one of after_id and before_id",
        "sends after_id and before_id together, which the emulator refuses as it refuses them on /v1/models",
    ),
    "anthropic:test_models.py::test_method_list_with_all_params": (
        "Only one of after_id and before_id",
        "sends after_id and before_id together (as above)",
    ),
    "anthropic:beta/messages/test_batches.py::test_method_list_with_all_params": (
        "Only one of after_id and before_id",
        "sends after_id and before_id together (as above)",
    ),
    "anthropic:beta/test_models.py::test_method_list_with_all_params": (
        "Only one of after_id and before_id",
        "sends after_id and before_id together (as above)",
    ),
    "anthropic:beta/test_files.py::test_method_list_with_all_params": (
        "ids cannot be combined with page or limit",
        "sends ids with limit and cursors: ids is a lookup of its own, not combined with paging",
    ),
    "anthropic:test_files.py::test_method_list_with_all_params": (
        "ids cannot be combined with page or limit",
        "sends ids with page and limit: without the beta header the Files API pages by page, or looks up ids",
    ),
    "openai:test_batches.py::test_method_list_with_all_params": (
        "Invalid 'limit'",
        "sends limit=0: the limit is 1 to 100",
    ),
    "openai:test_files.py::test_method_list_with_all_params": (
        "Invalid 'limit'",
        "sends limit=0: the limit is 1 to 10,000",
    ),
    "openai:chat/test_completions.py::test_method_create_with_all_params_overload_1": (
        "max_completion_tokens",
        "sends max_completion_tokens=0: the API's minimum is 1",
    ),
    "openai:chat/test_completions.py::test_method_create_with_all_params_overload_2": (
        "max_completion_tokens",
        "sends max_completion_tokens=0: the API's minimum is 1",
    ),
    "openai:test_responses.py::test_method_create_overload_1": (
        "Missing required parameter: 'model'",
        "sends no parameter at all: the API requires a model unless a stored prompt names one",
    ),
    "openai:test_responses.py::test_method_create_overload_2": (
        "Missing required parameter: 'model'",
        "sends only stream=True: the API requires a model unless a stored prompt names one",
    ),
    "openai:chat/test_completions.py::test_method_list_with_all_params": (
        "Invalid 'limit'",
        "sends limit=0: the limit is 1 to 100",
    ),
    "openai:chat/completions/test_messages.py::test_method_list_with_all_params": (
        "Invalid 'limit'",
        "sends limit=0: the limit is 1 to 100",
    ),
    "openai:responses/test_input_items.py::test_method_list_with_all_params": (
        "Invalid 'limit'",
        "sends limit=0: the limit is 1 to 100",
    ),
    "openai:responses/test_input_tokens.py::test_method_count_with_all_params": (
        "The model `model` does not exist",
        "names the model `model`, which is none: the API answers an unknown model with 404 model_not_found",
    ),
    "openai:test_embeddings.py::test_method_create": (
        "CreateEmbeddingResponse",
        "a strict client and the SDK's default encoding_format=base64: the API answers base64 text, which strict "
        "validation refuses before the SDK decodes it (the mock server answers its spec's list of floats)",
    ),
}


# Generated tests whose type assertions are narrower than the API's documented answers: each with the failures it may
# end in (any of them) and the answer the SDK's type does not admit. Counted apart; a test listed here that fails in
# any other way is wrong. Keys as REFUSED's.
NARROWER: dict[str, tuple[tuple[str, ...], str]] = {
    "openai:chat/completions/test_messages.py::test_method_list": (
        ("Literal['assistant']", "Data returned by API invalid for expected schema"),
        "the API lists a stored completion's request messages with their own roles (`user` here); the SDK's "
        "`ChatCompletionStoreMessage` admits only `assistant`",
    ),
    "openai:test_responses.py::test_method_compact_with_all_params": (
        ("Did not match any variants", "Data returned by API invalid for expected schema"),
        "the API's compaction output holds the conversation's user messages (`role: user`, `input_text` parts), "
        "which the SDK's `ResponseOutputItem` (a message is the assistant's) does not admit",
    ),
}


def _listed(nodeid: str) -> str:
    module, _, rest = nodeid.partition("::")
    name = rest.split("::")[-1].split("[")[0]
    name = name.replace("test_raw_response_", "test_method_").replace("test_streaming_response_", "test_method_")
    sdk = os.environ.get("LOWTIDE_SDK", "anthropic")
    return f"{sdk}:{module.removeprefix('tests/api_resources/')}::{name}"


def refusal(nodeid: str, failure: str) -> str | None:
    """Why the real API fails test `nodeid` (in its sync, async, raw and streaming forms) as it failed, if it does."""
    listed = REFUSED.get(_listed(nodeid))
    return listed[1] if listed is not None and listed[0] in failure else None


def narrower(nodeid: str, failure: str) -> str | None:
    """Which answer of the API the SDK's type does not admit, if that is why test `nodeid` failed as it did."""
    listed = NARROWER.get(_listed(nodeid))
    return listed[1] if listed is not None and any(text in failure for text in listed[0]) else None


@dataclass
class Tally:
    passed: list[str] = field(default_factory=list[str])
    wrong: dict[str, str] = field(default_factory=dict[str, str])
    missing: dict[str, str] = field(default_factory=dict[str, str])
    refused: dict[str, str] = field(default_factory=dict[str, str])
    narrower: dict[str, str] = field(default_factory=dict[str, str])
    skipped: list[str] = field(default_factory=list[str])


class Placeholders:
    """Real objects for the placeholders the generated tests name, made on demand in the state each call needs."""

    def __init__(self, emulator: Emulator, clock: ManualClock) -> None:
        self.emulator = emulator
        self.clock = clock
        self.http = emulator.http_client()

    async def _post(self, path: str, headers: dict[str, str], **kwargs: Any) -> dict[str, Any]:
        response = await self.http.post(f"{self.emulator.base_url}{path}", headers=headers, **kwargs)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    async def message_batch(self, *, ended: bool) -> str:
        body = {
            "requests": [
                {
                    "custom_id": "sdk-test",
                    "params": {
                        "model": "claude-haiku-4-5",
                        "max_tokens": 16,
                        "messages": [{"role": "user", "content": "Hello"}],
                    },
                }
            ]
        }
        batch = await self._post("/v1/messages/batches", ANTHROPIC, json=body)
        if ended:
            self.clock.advance(PROCESSING_SECONDS)
        return str(batch["id"])

    async def openai_file(self) -> str:
        line = {
            "custom_id": "sdk-test",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]},
        }
        files = {"file": ("input.jsonl", json.dumps(line).encode() + b"\n", "application/jsonl")}
        uploaded = await self._post("/v1/files", OPENAI, data={"purpose": "batch"}, files=files)
        return str(uploaded["id"])

    async def openai_batch(self, *, ended: bool) -> str:
        file_id = await self.openai_file()
        body = {"input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h"}
        batch = await self._post("/v1/batches", OPENAI, json=body)
        if ended:
            self.clock.advance(PROCESSING_SECONDS)
        return str(batch["id"])

    async def openai_response(self, *, background: bool = False) -> str:
        """A stored response: one in the background still in progress (to cancel), else one finished."""
        body = {"model": "gpt-4o-mini", "input": "Hello", "background": background}
        return str((await self._post("/v1/responses", OPENAI, json=body))["id"])

    async def openai_completion(self) -> str:
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}], "store": True}
        return str((await self._post("/v1/chat/completions", OPENAI, json=body))["id"])

    def fine_tuned_model(self, placeholder: str) -> str:
        """A fine-tuned model of the account, of the base, organization and suffix `placeholder` names."""
        _, base, organization, suffix, _ = placeholder.split(":")
        return self.emulator.openai.add_fine_tuned_model(base, suffix=suffix, organization=organization)

    def anthropic_file(self) -> str:
        return self.emulator.anthropic.add_file(b"Hello", filename="sdk-test.txt", mime_type="text/plain")

    async def resolve(self, path: str, *, anthropic: bool) -> str:
        """`path` with its placeholder made a real id of the caller's API, in the state the call needs."""
        segments = path.split("/")
        cancel = segments[-1] == "cancel"
        for index, segment in enumerate(segments):
            made: str | None = None
            under = "/".join(segments[:index])
            if segment == "message_batch_id":
                made = await self.message_batch(ended=not cancel)
            elif segment == "batch_id":
                made = await self.openai_batch(ended=not cancel)
            elif segment == "file_id" and path.startswith("/v1/files"):
                made = self.anthropic_file() if anthropic else await self.openai_file()
            elif segment == "model_id" and path.startswith("/v1/models"):
                made = "claude-haiku-4-5"
            elif segment == "model" and path.startswith("/v1/models"):
                made = "gpt-4o-mini"
            elif segment.startswith("ft:") and under == "/v1/models":
                made = self.fine_tuned_model(segment)
            elif under == "/v1/responses" and segment in ("response_id", "resp_677efb5139a88190b512bc3fef8e535d"):
                made = await self.openai_response(background=cancel)
            elif under == "/v1/chat/completions" and segment == "completion_id":
                made = await self.openai_completion()
            if made is not None:
                segments[index] = made
        return "/".join(segments)

    async def query(self, query: str) -> str:
        """List cursors that name placeholders (`after_id=after_id`) made ids of real objects."""
        pairs = parse_qsl(query, keep_blank_values=True)
        if not any(value in {"after_id", "before_id", "after"} for _, value in pairs):
            return query
        existing = await self.message_batch(ended=True)
        return urlencode([(key, existing if value in {"after_id", "before_id"} else value) for key, value in pairs])

    async def body(self, raw: bytes) -> bytes:
        """A JSON body whose fields name placeholders (`"input_file_id": "input_file_id"`) with real ids."""
        try:
            data = json.loads(raw)
        except ValueError:
            return raw
        if not isinstance(data, dict):
            return raw
        if data.get("input_file_id") == "input_file_id":
            data["input_file_id"] = await self.openai_file()
        elif data.get("previous_response_id") in ("previous_response_id", "resp_123"):
            data["previous_response_id"] = await self.openai_response()
        else:
            return raw
        return json.dumps(data).encode()


def placeholder_layer(app: Asgi, placeholders: Placeholders) -> Asgi:
    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_emulator"):
            await app(scope, receive, send)
            return
        # Anthropic's SDK sends its API's version on every call; OpenAI's never does.
        anthropic = any(name == b"anthropic-version" for name, _ in scope["headers"])
        path = await placeholders.resolve(scope["path"], anthropic=anthropic)
        query = await placeholders.query(scope.get("query_string", b"").decode())
        scope = {**scope, "path": path, "raw_path": path.encode(), "query_string": query.encode()}
        if dict(scope["headers"]).get(b"content-type", b"").startswith(b"application/json"):
            raw = b""
            while True:
                message = await receive()
                raw += message.get("body", b"")
                if not message.get("more_body"):
                    break
            sent = await placeholders.body(raw)
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            scope["headers"] = [*headers, (b"content-length", str(len(sent)).encode())]
            delivered = False

            async def replay() -> MutableMapping[str, Any]:
                nonlocal delivered
                if delivered:
                    return await receive()
                delivered = True
                return {"type": "http.request", "body": sent, "more_body": False}

            await app(scope, replay, send)
            return
        await app(scope, receive, send)

    return layer


_EXIT = ExitStack()
_TALLY = Tally()
# A route the emulator does not serve: each API's answer to an unknown path or method.
_NOT_SERVED = re.compile(r"Error code: 404 - .*('message': 'Not found\.'|Invalid URL)|Error code: 405 - Invalid method")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """The emulator started before the generated tests' conftest is imported: it reads where its server is then."""
    clock = ManualClock()
    emulator = Emulator(clock=clock, processing_seconds=PROCESSING_SECONDS)
    app = placeholder_layer(emulator.app, Placeholders(emulator, clock))
    url, _ = _EXIT.enter_context(app_in_thread(app))
    # OpenAI's SDK takes its base URL with the API's version in it.
    os.environ["TEST_API_BASE_URL"] = f"{url}/v1" if os.environ.get("LOWTIDE_SDK") == "openai" else url


def pytest_unconfigure(config: pytest.Config) -> None:
    _EXIT.close()
    destination = os.environ.get("LOWTIDE_SDK_TALLY")
    if destination:
        Path(destination).write_text(
            json.dumps(
                {
                    "passed": len(_TALLY.passed),
                    "wrong": _TALLY.wrong,
                    "missing": _TALLY.missing,
                    "refused as the API refuses": len(_TALLY.refused),
                    "the SDK's type narrower than the API": len(_TALLY.narrower),
                    "not against the emulator": len(_TALLY.skipped),
                },
                indent=2,
            )
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    for item in items:
        if "respx_mock" in getattr(item, "fixturenames", ()):
            _TALLY.skipped.append(item.nodeid)
            continue
        kept.append(item)
    items[:] = kept


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or report.failed:
        if report.passed:
            _TALLY.passed.append(report.nodeid)
        elif report.failed:
            text = str(report.longrepr)
            last = text.strip().splitlines()[-1] if text.strip() else text
            why = refusal(report.nodeid, text)
            narrow = narrower(report.nodeid, text)
            if why is not None:
                _TALLY.refused[report.nodeid] = why
            elif narrow is not None:
                _TALLY.narrower[report.nodeid] = narrow
            else:
                (_TALLY.missing if _NOT_SERVED.search(text) else _TALLY.wrong)[report.nodeid] = last[:300]
