"""Robot keywords that run `lowtide emulator` as a separate process and drive its OpenAI API over a real socket with
the official openai SDK, pointed at it by `OPENAI_BASE_URL` as any program would be: a batch's whole life cycle
(upload, create, poll, read the output file, delete files), a Responses call and a streamed chat completion."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import openai
from openai.types import Batch, FileDeleted, FileObject
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from robot.api import logger
from robot.api.deco import keyword, library

from _processes import Process, emulator_argv, lowtide_command, stop_all, wait_until_listening

MODEL = "gpt-4o-mini"


@library(scope="SUITE", auto_keywords=False)
class EmulatorOpenAILibrary:
    """One emulator process per suite, and one synchronous OpenAI client built from the environment."""

    def __init__(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-emulator-openai-robot-"))
        self._process: Process | None = None
        self._client: openai.OpenAI | None = None
        self._saved: dict[str, str | None] = {}

    # ------------------------------------------------------------------------------------------------- process

    @keyword("Start OpenAI Emulator Process")
    def start_openai_emulator_process(self, processing_seconds: float = 1.0, timeout: float = 120.0) -> str:
        """Start `lowtide emulator --port 0`, point `OPENAI_BASE_URL` and `OPENAI_API_KEY` at it, and build the
        client the way a program would: from the environment alone. Returns the base URL."""
        argv = emulator_argv(lowtide_command(), processing_seconds=processing_seconds)
        self._process = Process(argv, self._workdir, "emulator", os.environ)
        url = wait_until_listening(self._process, timeout)
        for name, value in (("OPENAI_BASE_URL", f"{url}/v1"), ("OPENAI_API_KEY", "sk-robot-any-key")):
            self._saved.setdefault(name, os.environ.get(name))
            os.environ[name] = value
        self._client = openai.OpenAI(max_retries=0)
        return url

    @keyword("Stop OpenAI Emulator Process")
    def stop_openai_emulator_process(self) -> None:
        """Close the client, stop the emulator and put the environment back. Safe in a teardown."""
        if self._client is not None:
            self._client.close()
            self._client = None
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved.clear()
        if self._process is not None:
            stop_all([self._process], with_stderr=True)
            self._process = None

    # --------------------------------------------------------------------------------------------------- files

    @keyword("Upload Batch Input")
    def upload_batch_input(self, count: int, endpoint: str = "/v1/responses") -> str:
        """`POST /v1/files` (multipart, purpose `batch`) with `count` requests r0..; returns the file id."""
        lines = "\n".join(json.dumps(_request(index, endpoint)) for index in range(int(count)))
        created = self._sdk().files.create(file=("input.jsonl", lines.encode()), purpose="batch")
        checked = FileObject.model_validate(created.to_dict())
        assert checked.purpose == "batch", checked
        assert checked.status == "processed", checked
        assert checked.bytes == len(lines.encode()), checked
        return checked.id

    @keyword("Delete File")
    def delete_file(self, file_id: str) -> None:
        """`DELETE /v1/files/{id}`, then check the file is gone (404)."""
        deleted = FileDeleted.model_validate(self._sdk().files.delete(file_id).to_dict())
        assert deleted.deleted, deleted
        assert deleted.id == file_id, deleted
        try:
            self._sdk().files.retrieve(file_id)
        except openai.NotFoundError:
            return
        raise AssertionError(f"File {file_id} can still be retrieved after deletion.")

    # ------------------------------------------------------------------------------------------------- batches

    @keyword("Create OpenAI Batch")
    def create_openai_batch(self, input_file_id: str, endpoint: str = "/v1/responses") -> str:
        """`POST /v1/batches`; the batch must start `validating`. Returns its id."""
        chosen: Any = endpoint
        batch = self._sdk().batches.create(
            input_file_id=input_file_id,
            endpoint=chosen,
            completion_window="24h",
            metadata={"suite": "robot"},
        )
        checked = Batch.model_validate(batch.to_dict())
        assert checked.status == "validating", checked
        assert checked.input_file_id == input_file_id, checked
        return checked.id

    @keyword("Wait Until OpenAI Batch Is Done")
    def wait_until_openai_batch_is_done(self, batch_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Poll `GET /v1/batches/{id}` until it is `completed`, `failed`, `expired` or `cancelled`; returns the
        batch as a dictionary, and logs every status seen on the way."""
        deadline = time.monotonic() + float(timeout)
        seen: list[str] = []
        while True:
            batch = Batch.model_validate(self._sdk().batches.retrieve(batch_id).to_dict())
            if not seen or seen[-1] != batch.status:
                seen.append(batch.status)
            if batch.status in ("completed", "failed", "expired", "cancelled"):
                logger.info(f"Batch {batch_id} went through {' -> '.join(seen)}")
                return {**batch.to_dict(), "statuses": seen}
            if time.monotonic() > deadline:
                raise AssertionError(f"Batch {batch_id} is still {batch.status} after {timeout} s (saw {seen}).")
            time.sleep(0.05)

    @keyword("Output File Should Answer Each Request")
    def output_file_should_answer_each_request(self, output_file_id: str, count: int) -> None:
        """`GET /v1/files/{id}/content`: one line per request r0.., each a `Response` answering its question."""
        text = self._sdk().files.content(output_file_id).text
        lines = [json.loads(line) for line in text.splitlines()]
        assert sorted(line["custom_id"] for line in lines) == sorted(f"r{index}" for index in range(int(count)))
        for line in lines:
            assert line["error"] is None, line
            assert line["response"]["status_code"] == 200, line
            response = Response.model_validate(line["response"]["body"])
            question = f"Question {line['custom_id'][1:]}"
            assert response.output_text.startswith(f'Emulated reply to "{question}": '), response.output_text

    # --------------------------------------------------------------------------------------------- live calls

    @keyword("Ask The Responses API")
    def ask_the_responses_api(self, text: str) -> str:
        """`POST /v1/responses`; returns the answer's text."""
        response = Response.model_validate(self._sdk().responses.create(model=MODEL, input=text).to_dict())
        assert response.status == "completed", response
        assert response.usage is not None, response
        assert response.usage.input_tokens > 0, response.usage
        return response.output_text

    @keyword("Stream A Chat Completion")
    def stream_a_chat_completion(self, text: str) -> str:
        """`POST /v1/chat/completions` with `stream: true`, read by the SDK's streaming helper; returns the text."""
        messages: Any = [{"role": "user", "content": text}]
        with self._sdk().chat.completions.stream(
            model=MODEL, messages=messages, stream_options={"include_usage": True}
        ) as stream:
            completion = stream.get_final_completion()
        checked = ChatCompletion.model_validate(completion.to_dict())
        assert checked.choices[0].finish_reason == "stop", checked
        assert checked.usage is not None, checked
        content = checked.choices[0].message.content
        assert content is not None, checked
        return content

    @keyword("Stream A Response")
    def stream_a_response(self, text: str) -> str:
        """`POST /v1/responses` with `stream: true`, read by the SDK's streaming helper; returns the text."""
        with self._sdk().responses.stream(model=MODEL, input=text) as stream:
            response = stream.get_final_response()
        return Response.model_validate(response.to_dict()).output_text

    # ------------------------------------------------------------------------------------------------- helpers

    def _sdk(self) -> openai.OpenAI:
        if self._client is None:
            raise AssertionError("Start the OpenAI emulator process first.")
        return self._client


def _request(index: int, endpoint: str) -> dict[str, Any]:
    if endpoint == "/v1/chat/completions":
        body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": f"Question {index}"}]}
    else:
        body = {"model": MODEL, "input": f"Question {index}"}
    return {"custom_id": f"r{index}", "method": "POST", "url": endpoint, "body": body}
