"""Robot keywords that run `lowtide emulator` and two `lowtide serve` processes in front of it (one for an Anthropic
actor, one for an OpenAI actor, each configured by an actor file), and drive the servers over real sockets with
unmodified clients: the official `anthropic` and `openai` Python SDKs (only their base URL changed), and, for the
`serve-client` suite, the official TypeScript SDKs under node (Google's `@google/genai` against a third server, for
an actor speaking Gemini's wire) and `curl`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
from robot.api import logger
from robot.api.deco import keyword, library

from _processes import Process, emulator_argv, lowtide_command, stop_all, wait_until_listening
from _tidegem import GEMINI_MODEL, start_tidegem_serve

ANTHROPIC_MODEL = "claude-haiku-5-5"
OPENAI_MODEL = "gpt-5.4-mini"
CLIENT_KEY = "robot-serve-secret"
UPSTREAM_ENV = "LOWTIDE_ROBOT_UPSTREAM_KEY"
_SERVE_LISTENING = "lowtide serve listening on "
_TOOL = "get_tide"
_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"port": {"type": "string"}},
    "required": ["port"],
    "additionalProperties": False,
}


@library(scope="SUITE", auto_keywords=False)
class ServeLibrary:
    """One emulator and two `lowtide serve` processes per suite."""

    def __init__(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-serve-robot-"))
        self._processes: list[Process] = []
        self._emulator_url = ""
        self._urls: dict[str, str] = {}

    # ------------------------------------------------------------------------------------------------- processes

    @keyword("Start Emulator And Servers")
    def start_emulator_and_servers(
        self, processing_seconds: float = 0.5, timeout: float = 120.0, gemini: bool = False
    ) -> None:
        """Start `lowtide emulator --port 0`, then `lowtide serve --port 0` for an Anthropic and for an OpenAI actor
        (actor files pointing at the emulator, the upstream key in the environment only), and with `gemini` one more
        for a batch actor speaking Gemini's wire (`_tidegem.py`)."""
        argv = emulator_argv(lowtide_command(), processing_seconds=processing_seconds)
        emulator = Process(argv, self._workdir, "emulator", os.environ)
        self._processes.append(emulator)
        self._emulator_url = wait_until_listening(emulator, timeout)
        env = {**os.environ, UPSTREAM_ENV: "sk-upstream-robot-never-shown"}
        for provider, model, base_url in (
            ("anthropic", ANTHROPIC_MODEL, self._emulator_url),
            ("openai", OPENAI_MODEL, f"{self._emulator_url}/v1"),
        ):
            actor_file = self._workdir / f"{provider}.yaml"
            actor_file.write_text(
                f"name: served-{provider}\nprovider: {provider}\nmodel: {model}\nmax_tokens: 256\n"
                f"batch_processing: batch\nbase_url: {base_url}\napi_key_env: {UPSTREAM_ENV}\n"
                "batch:\n  poll_interval: 0.1\n  coalesce_window: 1.0\n",
                encoding="utf-8",
            )
            serve_argv = [
                *lowtide_command(),
                "serve",
                "--actor",
                str(actor_file),
                "--port",
                "0",
                "--client-key",
                CLIENT_KEY,
                "--ledger",
                str(self._workdir / f"{provider}.sqlite3"),
            ]
            process = Process(serve_argv, self._workdir, f"serve-{provider}", env)
            self._processes.append(process)
            self._urls[provider] = wait_for_serve(process, timeout)
        if gemini:
            process = start_tidegem_serve(self._workdir, CLIENT_KEY, self._workdir / "gemini.sqlite3")
            self._processes.append(process)
            self._urls["gemini"] = wait_for_serve(process, timeout)

    @keyword("Stop Emulator And Servers")
    def stop_emulator_and_servers(self) -> None:
        """Stop every process (servers first) and check that no upstream key reached their output."""
        processes, self._processes = list(reversed(self._processes)), []
        stop_all(processes, with_stderr=True)
        for process in processes:
            leaked = "sk-upstream-robot-never-shown"
            assert leaked not in process.stdout + process.stderr, f"{process.name} printed the upstream key"

    @keyword("Serve URL")
    def serve_url(self, provider: str) -> str:
        return self._urls[provider]

    @keyword("Reset Emulator Counters")
    def reset_emulator_counters(self) -> None:
        httpx.post(f"{self._emulator_url}/_emulator/reset", timeout=10).raise_for_status()

    @keyword("Emulator Should Have Created")
    def emulator_should_have_created(self, provider: str, batches: int, requests: int) -> None:
        """The emulator's own counters: batches created, requests in them, and no live call at all."""
        stats = httpx.get(f"{self._emulator_url}/_emulator/stats", timeout=10).json()
        prefix = "openai_" if provider == "openai" else ""
        created = stats[f"{prefix}created_batches"]
        held = sum(stats[f"{prefix}created_custom_ids"].values())
        logger.info(f"{provider}: {created} batch(es) holding {held} request(s); calls {stats['calls']}")
        assert created == int(batches), f"{created} batches created, expected {batches}"
        assert held == int(requests), f"{held} requests in batches, expected {requests}"
        live = {"messages.create", "openai.chat.completions.create", "openai.responses.create"}
        assert not any(stats["calls"].get(name) for name in live), stats["calls"]

    # ------------------------------------------------------------------------------------------------- Python SDKs

    def _anthropic(self, **options: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self._urls["anthropic"], api_key=CLIENT_KEY, max_retries=0, **options)

    def _openai(self, **options: Any) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self._urls['openai']}/v1", api_key=CLIENT_KEY, max_retries=0, **options)

    @keyword("Ask With The Anthropic SDK")
    def ask_with_the_anthropic_sdk(self, prompt: str, stream: bool = False) -> str:
        """A message asked of `lowtide serve`, plain or through `messages.stream`; returns its id."""
        messages: Any = [{"role": "user", "content": prompt}]
        with self._anthropic() as client:
            if stream:
                with client.messages.stream(model=ANTHROPIC_MODEL, max_tokens=64, messages=messages) as events:
                    text = "".join(events.text_stream)
                    message = events.get_final_message()
                assert text == message.content[0].text, (text, message)  # pyright: ignore[reportAttributeAccessIssue]
            else:
                message = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=64, messages=messages)
        assert message.type == "message", message
        assert message.content, message
        return message.id

    @keyword("Ask For A Tool Call With The Anthropic SDK")
    def ask_for_a_tool_call_with_the_anthropic_sdk(self, prompt: str) -> str:
        tools: Any = [{"name": _TOOL, "description": "The next tide.", "input_schema": _TOOL_SCHEMA}]
        messages: Any = [{"role": "user", "content": f"{prompt} [[emulator:tool:{_TOOL}]]"}]
        with self._anthropic() as client:
            message = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=128, messages=messages, tools=tools)
        assert message.stop_reason == "tool_use", message
        [call] = [block for block in message.content if block.type == "tool_use"]
        return call.name

    @keyword("Ask With The OpenAI SDK")
    def ask_with_the_openai_sdk(self, prompt: str, api: str = "chat", stream: bool = False) -> str:
        """A chat completion or a response asked of `lowtide serve`, plain or streamed; returns its id."""
        with self._openai() as client:
            if api == "chat":
                messages: Any = [{"role": "user", "content": prompt}]
                if stream:
                    chunks = list(client.chat.completions.create(model=OPENAI_MODEL, messages=messages, stream=True))
                    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
                    assert text, chunks
                    return chunks[0].id
                completion = client.chat.completions.create(model=OPENAI_MODEL, messages=messages)
                assert completion.choices[0].message.content, completion
                return completion.id
            if stream:
                events = list(client.responses.create(model=OPENAI_MODEL, input=prompt, stream=True))
                final = events[-1]
                assert final.type == "response.completed", final
                deltas = "".join(event.delta for event in events if event.type == "response.output_text.delta")
                assert deltas == final.response.output_text, (deltas, final)
                return final.response.id
            response = client.responses.create(model=OPENAI_MODEL, input=prompt)
            assert response.status == "completed", response
            assert response.output_text, response
            return response.id

    @keyword("Ask For A Tool Call With The OpenAI SDK")
    def ask_for_a_tool_call_with_the_openai_sdk(self, prompt: str) -> str:
        """A chat completion offered a function tool, then its result sent back; returns the tool's name."""
        tools: Any = [{"type": "function", "function": {"name": _TOOL, "parameters": _TOOL_SCHEMA}}]
        messages: Any = [{"role": "user", "content": f"{prompt} [[emulator:tool:{_TOOL}]]"}]
        with self._openai() as client:
            first = client.chat.completions.create(model=OPENAI_MODEL, messages=messages, tools=tools)
            assert first.choices[0].finish_reason == "tool_calls", first
            [call] = first.choices[0].message.tool_calls or []
            messages += [
                {"role": "assistant", "tool_calls": [call.model_dump(exclude_none=True)]},
                {"role": "tool", "tool_call_id": call.id, "content": "High tide at 14:02"},
            ]
            second = client.chat.completions.create(model=OPENAI_MODEL, messages=messages, tools=tools)
            assert second.choices[0].finish_reason == "stop", second
        return call.function.name  # pyright: ignore[reportAttributeAccessIssue]

    @keyword("Ask Concurrently")
    def ask_concurrently(self, provider: str, count: int) -> int:
        """`count` different requests sent at once with the provider's async SDK; returns how many distinct answers
        came back."""

        prompts = [f"Concurrent question {index} at {time.time_ns()}" for index in range(int(count))]

        async def all_at_once() -> list[str]:
            # One client, as one program would hold, so that the requests leave within the coalescing window.
            if provider == "anthropic":
                async with anthropic.AsyncAnthropic(
                    base_url=self._urls["anthropic"], api_key=CLIENT_KEY, max_retries=0
                ) as claude:
                    messages = await asyncio.gather(
                        *(
                            claude.messages.create(
                                model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}]
                            )
                            for prompt in prompts
                        )
                    )
                    return [message.id for message in messages]
            base_url = f"{self._urls['openai']}/v1"
            async with openai.AsyncOpenAI(base_url=base_url, api_key=CLIENT_KEY, max_retries=0) as gpt:
                completions = await asyncio.gather(
                    *(
                        gpt.chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": prompt}])
                        for prompt in prompts
                    )
                )
                return [completion.id for completion in completions]

        return len(set(asyncio.run(all_at_once())))

    @keyword("Ask And Give Up Before The Batch Ends")
    def ask_and_give_up_before_the_batch_ends(self, provider: str, prompt: str, timeout: float = 0.2) -> None:
        """A client that stops waiting (its own timeout) while the request's batch is still in progress."""
        try:
            if provider == "anthropic":
                self.ask_with_the_anthropic_sdk_timeout(prompt, timeout)
            else:
                with self._openai(timeout=float(timeout)) as client:
                    client.chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": prompt}])
        except (anthropic.APITimeoutError, openai.APITimeoutError):
            return
        raise AssertionError("the request was answered before the client gave up")

    def ask_with_the_anthropic_sdk_timeout(self, prompt: str, timeout: float) -> None:
        with self._anthropic(timeout=float(timeout)) as client:
            client.messages.create(model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}])

    @keyword("Ask With A Wrong Key")
    def ask_with_a_wrong_key(self, provider: str) -> int:
        """The status code a client with a wrong key gets."""
        try:
            if provider == "anthropic":
                anthropic.Anthropic(base_url=self._urls["anthropic"], api_key="wrong", max_retries=0).messages.create(
                    model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
                )
            else:
                openai.OpenAI(
                    base_url=f"{self._urls['openai']}/v1", api_key="wrong", max_retries=0
                ).chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": "Hi"}])
        except (anthropic.AuthenticationError, openai.AuthenticationError) as error:
            return error.status_code
        raise AssertionError("a wrong key was accepted")

    # ------------------------------------------------------------------------------------------------- other clients

    @keyword("Run Client")
    def run_client(self, *argv: str, timeout: float = 120.0) -> dict[str, Any]:
        """Run a client program (node, curl, ...) with the servers' URLs and the client key in its environment;
        returns the JSON object it prints last."""
        env = {
            **os.environ,
            "LOWTIDE_SERVE_ANTHROPIC_URL": self._urls["anthropic"],
            "LOWTIDE_SERVE_OPENAI_URL": self._urls["openai"],
            "LOWTIDE_SERVE_KEY": CLIENT_KEY,
            "ANTHROPIC_MODEL": ANTHROPIC_MODEL,
            "OPENAI_MODEL": OPENAI_MODEL,
            "LOWTIDE_SERVE_GEMINI_URL": self._urls.get("gemini", ""),
            "GEMINI_MODEL": GEMINI_MODEL,
        }
        program = shutil.which(argv[0]) or argv[0]
        done = subprocess.run(
            [program, *argv[1:]], env=env, capture_output=True, text=True, timeout=float(timeout), check=False
        )
        logger.info(f"{' '.join(argv)} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        assert done.returncode == 0, f"{argv[0]} failed ({done.returncode}):\n{done.stderr}\n{done.stdout}"
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        assert lines, "the client printed nothing"
        result: dict[str, Any] = json.loads(lines[-1])
        return result


def wait_for_serve(process: Process, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in process.stdout.splitlines():
            if line.startswith(_SERVE_LISTENING):
                return line.removeprefix(_SERVE_LISTENING).strip()
        if process.popen.poll() is not None:
            raise AssertionError(f"{process.name} exited with {process.popen.returncode}:\n{process.stderr}")
        time.sleep(0.05)
    process.stop()
    raise AssertionError(f"{process.name} did not print its listening line within {timeout:g} s:\n{process.stderr}")
