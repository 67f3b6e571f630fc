"""Robot keywords that run `lowtide emulator` as a separate process and drive it over its socket with the official
SDK: every Message Batches endpoint, the Messages endpoint, and the admin routes.

The library counts the API calls it makes, so that a test can check the server counted the same ones.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anthropic
import httpx2
from anthropic.types import CitationsSearchResultLocation, CitationsWebSearchResultLocation
from robot.api import logger
from robot.api.deco import keyword, library

LISTENING = re.compile(r"^lowtide emulator listening on (http://\S+)\n")
MODEL = "claude-sonnet-5-5"


@library(scope="SUITE", auto_keywords=False)
class EmulatorSdkLibrary:
    """One emulator process per suite, and one synchronous SDK client talking to it."""

    def __init__(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-emulator-robot-"))
        self._process: subprocess.Popen[bytes] | None = None
        self._url: str | None = None
        self._client: anthropic.Anthropic | None = None
        self._calls: Counter[str] = Counter()
        self._last_error: anthropic.APIStatusError | None = None

    # ------------------------------------------------------------------------------------------------- process

    @keyword("Start Emulator Process")
    def start_emulator_process(
        self, processing_seconds: float = 1.0, timeout: float = 120.0, state_file: str | None = None
    ) -> str:
        """Start `lowtide emulator --port 0` and return the base URL announced on its first stdout line.

        With `state_file`, the emulator keeps its state there (`--state-file`); when the file already exists, the
        emulator carries on from it, counters included, so this library's count of calls carries on too."""
        script = Path(sys.executable).parent / "lowtide"
        command = [str(script)] if script.is_file() else [sys.executable, "-m", "lowtide.cli"]
        argv = [*command, "emulator", "--port", "0", "--processing-seconds", f"{processing_seconds:g}"]
        if state_file is not None:
            argv += ["--state-file", state_file]
        if state_file is None or not Path(state_file).exists():
            self._calls.clear()
        stdout = self._workdir / "emulator.stdout"
        stderr = self._workdir / "emulator.stderr"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            # Files rather than pipes: the server can never block on a full pipe nobody reads.
            self._process = subprocess.Popen(
                argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=dict(os.environ)
            )
        logger.info(f"Started {' '.join(argv)} (pid {self._process.pid})")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            printed = stdout.read_text()
            announced = LISTENING.match(printed)
            if announced:
                if printed != announced.group(0):
                    raise AssertionError(f"The emulator printed more than its one line: {printed!r}")
                url = self._url = announced.group(1)
                self._client = anthropic.Anthropic(base_url=url, api_key="any-key", max_retries=0)
                return url
            if self._process.poll() is not None:
                raise AssertionError(f"The emulator exited early ({self._process.returncode}): {stderr.read_text()}")
            time.sleep(0.05)
        raise AssertionError(f"The emulator did not announce its address within {timeout:g} s: {stderr.read_text()}")

    @keyword("Stop Emulator Process")
    def stop_emulator_process(self) -> int | None:
        """SIGTERM, then wait; returns the exit code (None if no emulator was started). Safe in a teardown."""
        if self._client is not None:
            self._client.close()
            self._client = None
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
        logger.info(
            f"The emulator exited with {process.returncode}; stderr:\n{(self._workdir / 'emulator.stderr').read_text()}"
        )
        return process.returncode

    @keyword("Kill Emulator Process")
    def kill_emulator_process(self) -> None:
        """SIGKILL: the emulator gets no chance to save anything more than it already had."""
        if self._client is not None:
            self._client.close()
            self._client = None
        process, self._process = self._process, None
        assert process is not None, "no emulator is running"
        process.kill()
        process.wait(timeout=15)
        logger.info(f"Killed the emulator (pid {process.pid}): {process.returncode}")

    @keyword("New State File Path")
    def new_state_file_path(self) -> str:
        """A path in this suite's scratch folder where no file exists yet."""
        path = self._workdir / f"state-{time.monotonic_ns()}.json"
        assert not path.exists(), path
        return str(path)

    @keyword("Emulator Port Should Be Closed")
    def emulator_port_should_be_closed(self) -> None:
        try:
            httpx2.get(f"{self._base()}/_emulator/stats", timeout=2)
        except httpx2.TransportError:
            return
        raise AssertionError("The emulator still answers.")

    # ------------------------------------------------------------------------------------------------ messages

    @keyword("Send Message")
    def send_message(self, text: str, max_tokens: int = 256) -> str:
        """`POST /v1/messages` with one user turn; returns the reply's text."""
        self._calls["messages.create"] += 1
        reply = self._sdk().messages.create(
            model=MODEL, max_tokens=max_tokens, messages=[{"role": "user", "content": text}]
        )
        assert reply.type == "message", reply
        assert reply.id.startswith("msg_"), reply
        assert reply.usage.service_tier == "standard", reply.usage
        block = reply.content[0]
        assert block.type == "text", reply.content
        return block.text

    @keyword("Stream Message")
    def stream_message(self, text: str) -> str:
        """The same call streamed: returns the text rebuilt from the server-sent events."""
        self._calls["messages.create"] += 1
        with self._sdk().messages.stream(
            model=MODEL, max_tokens=256, messages=[{"role": "user", "content": text}]
        ) as stream:
            message = stream.get_final_message()
        block = message.content[0]
        assert block.type == "text", message.content
        return block.text

    @keyword("Message Should Fail With")
    def message_should_fail_with(self, exception: str, status: int) -> None:
        """A `POST /v1/messages` that must fail with the SDK exception `exception` and HTTP `status`."""
        self._calls["messages.create"] += 1
        failure: anthropic.APIStatusError | None = None
        try:
            self._sdk().messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hello"}])
        except anthropic.APIStatusError as error:
            failure = error
        if failure is None:
            raise AssertionError(f"The call succeeded; expected {exception}.")
        assert type(failure).__name__ == exception, type(failure).__name__
        assert failure.status_code == status, failure.status_code
        assert failure.request_id is not None, failure.request_id
        assert failure.request_id.startswith("req_"), failure.request_id
        self._last_error = failure

    @keyword("Last Error Header Should Be")
    def last_error_header_should_be(self, name: str, value: str) -> None:
        assert self._last_error is not None, "no call has failed yet"
        assert self._last_error.response.headers.get(name) == value, dict(self._last_error.response.headers)

    @keyword("Count Tokens")
    def count_tokens(self, text: str) -> int:
        """`POST /v1/messages/count_tokens` for one user turn; returns the count."""
        self._calls["messages.count_tokens"] += 1
        counted = self._sdk().messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": text}])
        return counted.input_tokens

    @keyword("Input Tokens Billed For")
    def input_tokens_billed_for(self, text: str) -> int:
        """`POST /v1/messages` with one user turn; returns the input its usage reports, cached or not."""
        self._calls["messages.create"] += 1
        usage = (
            self._sdk().messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": text}]).usage
        )
        return usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)

    # --------------------------------------------------------------------------------------------------- files

    @keyword("Upload File")
    def upload_file(self, filename: str, text: str) -> str:
        """`POST /v1/files`, a multipart upload of `text` as a plain text file; returns the file id."""
        self._calls["files.upload"] += 1
        uploaded = self._sdk().files.upload(file=(filename, text.encode(), "text/plain"))
        assert uploaded.id.startswith("file_"), uploaded
        assert (uploaded.filename, uploaded.mime_type, uploaded.size_bytes) == (filename, "text/plain", len(text))
        assert uploaded.downloadable is False, uploaded
        return uploaded.id

    @keyword("Create Batch Reading File")
    def create_batch_reading_file(self, file_id: str, question: str, count: int, prefix: str) -> str:
        """A batch of `count` requests, each asking `question` about the file as a citation-enabled document."""
        self._calls["batches.create"] += 1
        document = {"type": "document", "source": {"type": "file", "file_id": file_id}, "citations": {"enabled": True}}
        params = {
            "model": MODEL,
            "max_tokens": 256,
            "messages": [{"role": "user", "content": [document, {"type": "text", "text": question}]}],
        }
        requests: list[Any] = [{"custom_id": f"{prefix}{index}", "params": params} for index in range(count)]
        return self._sdk().messages.batches.create(requests=requests).id

    @keyword("Every Result Should Quote The File")
    def every_result_should_quote_the_file(self, batch_id: str, file_id: str, sentence: str) -> None:
        """Each result succeeded, quoting `sentence` from the file with a citation naming the file."""
        self._calls["batches.retrieve"] += 1
        self._calls["batches.results"] += 1
        results = list(self._sdk().messages.batches.results(batch_id))
        assert results, batch_id
        for line in results:
            assert line.result.type == "succeeded", line
            cited = [block for block in line.result.message.content if block.type == "text" and block.citations]
            assert cited, line.result.message.content
            assert cited[0].text.strip() == sentence, cited[0]
            citations = cited[0].citations or []
            assert citations, cited[0]
            citation = citations[0]
            assert not isinstance(citation, CitationsWebSearchResultLocation | CitationsSearchResultLocation), citation
            assert citation.file_id == file_id, citations

    # ------------------------------------------------------------------------------------------------- batches

    @keyword("Create Batch")
    def create_batch(self, count: int, prefix: str = "r") -> str:
        """`POST /v1/messages/batches` with `count` requests r0..r{count-1} (or PREFIX0..); returns the batch id."""
        self._calls["batches.create"] += 1
        batch = self._sdk().messages.batches.create(requests=_requests(count, prefix))
        assert batch.processing_status == "in_progress", batch
        assert batch.request_counts.processing == count, batch.request_counts
        assert batch.results_url is None, batch
        assert batch.id.startswith("msgbatch_"), batch
        return batch.id

    @keyword("Create Batch Should Lose Its Answer")
    def create_batch_should_lose_its_answer(self, count: int, prefix: str) -> None:
        """The same create, which must fail as a lost connection does: `APIConnectionError` (not a timeout)."""
        self._calls["batches.create"] += 1
        lost: anthropic.APIConnectionError | None = None
        try:
            batch = self._sdk().messages.batches.create(requests=_requests(count, prefix))
        except anthropic.APIConnectionError as error:
            lost = error
        else:
            raise AssertionError(f"The create was answered: {batch}")
        logger.info(f"The create lost its answer: {lost!r}, caused by {lost.__cause__!r}")
        assert not isinstance(lost, anthropic.APITimeoutError), f"The create timed out: {lost!r}"
        assert isinstance(lost.__cause__, httpx2.RemoteProtocolError), repr(lost.__cause__)

    @keyword("Newest Batch Should Hold")
    def newest_batch_should_hold(self, count: int) -> str:
        """`GET /v1/messages/batches?limit=1`: the newest batch, which must hold `count` requests; returns its id."""
        self._calls["batches.list"] += 1
        page = self._sdk().messages.batches.list(limit=1)
        assert len(page.data) == 1, page
        batch = page.data[0]
        assert sum(batch.request_counts.model_dump().values()) == count, batch.request_counts
        return batch.id

    @keyword("Batch Status Should Be")
    def batch_status_should_be(self, batch_id: str, status: str) -> None:
        self._calls["batches.retrieve"] += 1
        batch = self._sdk().messages.batches.retrieve(batch_id)
        assert batch.processing_status == status, batch

    @keyword("Wait Until Batch Has Ended")
    def wait_until_batch_has_ended(self, batch_id: str, timeout: float = 120.0) -> dict[str, int]:
        """Poll `GET /v1/messages/batches/{id}` until it has ended; returns its request counts."""
        deadline = time.monotonic() + timeout
        while True:
            self._calls["batches.retrieve"] += 1
            batch = self._sdk().messages.batches.retrieve(batch_id)
            if batch.processing_status == "ended":
                assert batch.ended_at is not None, batch
                assert batch.results_url == f"{self._base()}/v1/messages/batches/{batch_id}/results", batch.results_url
                return batch.request_counts.model_dump()
            if time.monotonic() > deadline:
                raise AssertionError(f"Batch {batch_id} is still {batch.processing_status} after {timeout:g} s.")
            time.sleep(0.1)

    @keyword("Cancel Batch")
    def cancel_batch(self, batch_id: str) -> str:
        """`POST /v1/messages/batches/{id}/cancel`; returns the processing status it answers with."""
        self._calls["batches.cancel"] += 1
        batch = self._sdk().messages.batches.cancel(batch_id)
        assert batch.cancel_initiated_at is not None, batch
        return batch.processing_status

    @keyword("Delete Batch")
    def delete_batch(self, batch_id: str) -> None:
        """`DELETE /v1/messages/batches/{id}`, then check the batch is gone (404)."""
        self._calls["batches.delete"] += 1
        deleted = self._sdk().messages.batches.delete(batch_id)
        assert deleted.id == batch_id, deleted
        assert deleted.type == "message_batch_deleted", deleted
        self._calls["batches.retrieve"] += 1
        try:
            self._sdk().messages.batches.retrieve(batch_id)
        except anthropic.NotFoundError:
            return
        raise AssertionError(f"Batch {batch_id} can still be retrieved after deletion.")

    @keyword("Results Should Be")
    def results_should_be(self, batch_id: str, result_type: str, count: int, prefix: str = "r") -> None:
        """`GET .../results` through the SDK: `count` lines, one per custom_id, each of `result_type`; a succeeded
        one must answer its own request."""
        self._calls["batches.retrieve"] += 1
        self._calls["batches.results"] += 1
        results = {line.custom_id: line.result for line in self._sdk().messages.batches.results(batch_id)}
        assert sorted(results) == sorted(f"{prefix}{index}" for index in range(count)), sorted(results)
        for custom_id, result in results.items():
            assert result.type == result_type, (custom_id, result)
            if result.type == "succeeded":
                block = result.message.content[0]
                assert block.type == "text", result.message
                question = f"Question {custom_id.removeprefix(prefix)}"
                assert block.text.startswith(f'Emulated reply to "{question}": '), block.text
                assert result.message.usage.service_tier == "batch", result.message.usage

    @keyword("Download Results")
    def download_results(self, batch_id: str) -> bytes:
        """`GET .../results` as raw bytes, the JSONL file exactly as served."""
        self._calls["batches.results"] += 1
        response = httpx2.get(
            f"{self._base()}/v1/messages/batches/{batch_id}/results",
            headers={"x-api-key": "any-key", "anthropic-version": "2023-06-01"},
        )
        assert response.status_code == 200, response.text
        return response.content

    @keyword("Listing Should Show Every Batch Newest First")
    def listing_should_show_every_batch_newest_first(self, page_size: int, *batch_ids: str) -> None:
        """`GET /v1/messages/batches` page by page (the SDK follows `last_id`): `batch_ids`, oldest given first,
        must come back newest first, each once."""
        first = self._sdk().messages.batches.list(limit=page_size)
        listed: list[str] = []
        for page in first.iter_pages():
            self._calls["batches.list"] += 1
            listed.extend(batch.id for batch in page.data)
        expected = list(reversed(batch_ids))
        assert listed[: len(expected)] == expected, listed
        assert len(set(listed)) == len(listed), listed

    # --------------------------------------------------------------------------------------------------- admin

    @keyword("Arm Fault")
    def arm_fault(self, route: str, status: int, retry_after: float | None = None) -> None:
        """`POST /_emulator/faults`: the next call to `route` fails with `status`."""
        body: dict[str, Any] = {"route": route, "status": status}
        if retry_after is not None:
            body["retry_after"] = retry_after
        response = httpx2.post(f"{self._base()}/_emulator/faults", json=body)
        assert response.status_code == 200, response.text

    @keyword("Arm Fault Of Kind")
    def arm_fault_of_kind(self, route: str, kind: str, seconds: float | None = None, times: int = 1) -> None:
        """`POST /_emulator/faults {"route", "kind", "seconds", "times"}`: `drop_after_commit` or `delay_after_commit`
        (`times` calls), or `slow` (every call)."""
        body: dict[str, Any] = {"route": route, "kind": kind}
        if kind != "slow":
            body["times"] = times
        if seconds is not None:
            body["seconds"] = seconds
        response = httpx2.post(f"{self._base()}/_emulator/faults", json=body)
        assert response.status_code == 200, response.text
        assert response.json()["kind"] == kind, response.text

    @keyword("Emulator Should Have Created Each Once")
    def emulator_should_have_created_each_once(self, prefix: str, count: int) -> None:
        """`GET /_emulator/stats`: each of PREFIX0..PREFIX{count-1} was created in exactly one batch."""
        created = httpx2.get(f"{self._base()}/_emulator/stats").json()["created_custom_ids"]
        mine = {custom_id: times for custom_id, times in created.items() if custom_id.startswith(prefix)}
        assert mine == {f"{prefix}{index}": 1 for index in range(count)}, mine

    @keyword("Emulator Should Have Counted Every Call")
    def emulator_should_have_counted_every_call(self) -> None:
        """`GET /_emulator/stats` must show, route by route, exactly the API calls this library made."""
        stats = httpx2.get(f"{self._base()}/_emulator/stats").json()
        logger.info(f"Emulator stats: {stats}; calls made: {dict(self._calls)}")
        assert stats["calls"] == dict(self._calls), (stats["calls"], dict(self._calls))

    # ------------------------------------------------------------------------------------------------- helpers

    def _sdk(self) -> anthropic.Anthropic:
        if self._client is None:
            raise AssertionError("Start the emulator process first.")
        return self._client

    def _base(self) -> str:
        if self._url is None:
            raise AssertionError("Start the emulator process first.")
        return self._url


def _requests(count: int, prefix: str) -> list[Any]:
    return [
        {
            "custom_id": f"{prefix}{index}",
            "params": {
                "model": MODEL,
                "max_tokens": 64,
                "messages": [{"role": "user", "content": f"Question {index}"}],
            },
        }
        for index in range(count)
    ]
