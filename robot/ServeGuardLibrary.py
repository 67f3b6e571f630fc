"""Robot keywords for what a real `lowtide serve` process refuses, and what `--access-log` writes: `lowtide emulator`
and two `lowtide serve` processes (an Anthropic and an OpenAI actor, each with its API's default body limit), every
one started with `--access-log`, driven over raw sockets where the bytes on the wire matter (a body streamed past the
limit, a Content-Length over it with no body at all) and over HTTP otherwise."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from robot.api import logger
from robot.api.deco import keyword, library

from _processes import Process, emulator_argv, lowtide_command, stop_all, wait_until_listening

CLIENT_KEY = "robot-guard-secret"
UPSTREAM_KEY = "sk-upstream-guard-never-shown"
UPSTREAM_ENV = "LOWTIDE_ROBOT_GUARD_UPSTREAM_KEY"
MODELS = {"anthropic": "claude-haiku-5-5", "openai": "gpt-5.4-mini"}
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
_SERVE_LISTENING = "lowtide serve listening on "
_ACCESS_LINE = re.compile(r"^lowtide: info: (?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d{3}|-) (?P<ms>\d+\.\d) ms$")
_CHUNK = 1024 * 1024


@library(scope="SUITE", auto_keywords=False)
class ServeGuardLibrary:
    def __init__(self) -> None:
        self._workdir = Path()
        self._processes: dict[str, Process] = {}
        self._urls: dict[str, str] = {}

    @keyword("Start Emulator And Servers With Access Logs")
    def start(self, timeout: float = 120.0) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-serve-guard-"))
        argv = [*emulator_argv(lowtide_command(), processing_seconds=0.2), "--access-log"]
        emulator = self._processes["emulator"] = Process(argv, self._workdir, "emulator", os.environ)
        emulator_url = wait_until_listening(emulator, timeout)
        env = {**os.environ, UPSTREAM_ENV: UPSTREAM_KEY}
        for provider, base_url in (("anthropic", emulator_url), ("openai", f"{emulator_url}/v1")):
            actor_file = self._workdir / f"{provider}.yaml"
            actor_file.write_text(
                f"name: guarded-{provider}\nprovider: {provider}\nmodel: {MODELS[provider]}\nmax_tokens: 64\n"
                f"batch_processing: batch\nbase_url: {base_url}\napi_key_env: {UPSTREAM_ENV}\n"
                "batch:\n  poll_interval: 0.1\n  coalesce_window: 0.1\n",
                encoding="utf-8",
            )
            argv = [
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
                "--access-log",
            ]
            process = self._processes[provider] = Process(argv, self._workdir, f"serve-{provider}", env)
            self._urls[provider] = _wait_for_serve(process, timeout)

    @keyword("Stop Emulator And Servers")
    def stop(self) -> None:
        processes = list(reversed(self._processes.values()))
        stop_all(processes, with_stderr=True)
        self._check_output(processes)
        shutil.rmtree(self._workdir, ignore_errors=True)

    def _check_output(self, processes: list[Process]) -> None:
        for process in processes:
            output = process.stdout + process.stderr
            for secret in (UPSTREAM_KEY, CLIENT_KEY):
                assert secret not in output, f"{process.name} printed a key"
            assert "Traceback" not in output, f"{process.name} printed a traceback:\n{process.stderr[-3000:]}"

    # ------------------------------------------------------------------------------------------------- requests

    def _address(self, provider: str) -> tuple[str, int]:
        host, port = self._urls[provider].removeprefix("http://").split(":")
        return host, int(port)

    def _head(self, provider: str, *, length: int | None) -> bytes:
        host, port = self._address(provider)
        framing = f"content-length: {length}" if length is not None else "transfer-encoding: chunked"
        return (
            f"POST {PATHS[provider]} HTTP/1.1\r\nhost: {host}:{port}\r\nx-api-key: {CLIENT_KEY}\r\n"
            f"content-type: application/json\r\nanthropic-version: 2023-06-01\r\n{framing}\r\n\r\n"
        ).encode()

    @keyword("Send Only Headers Declaring A Body Of")
    def send_only_headers(self, provider: str, size: int) -> dict[str, Any]:
        """A request whose Content-Length says `size` bytes, its headers alone: the answer must come without the
        body ever being sent."""
        with socket.create_connection(self._address(provider), timeout=30) as sock:
            sock.sendall(self._head(provider, length=int(size)))
            return _read_answer(sock)

    @keyword("Stream A Body Of")
    def stream_a_body(self, provider: str, megabytes: int) -> dict[str, Any]:
        """A chunked body of up to `megabytes` MiB (the opening of a JSON string, then filler), sent a MiB at a time
        until the server answers; returns the answer, with how many bytes were sent before it came."""
        sent = 0
        total = int(megabytes) * _CHUNK
        with socket.create_connection(self._address(provider), timeout=60) as sock:
            sock.sendall(self._head(provider, length=None))
            opening = b'{"model": "' + MODELS[provider].encode() + b'", "messages": [{"role": "user", "content": "'
            filler = b"x" * _CHUNK
            while sent < total:
                chunk = opening if sent == 0 else filler
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    break
            answer = _read_answer(sock)
        answer["sent_bytes"] = sent
        logger.info(f"{provider}: {sent} bytes sent before the answer {answer['status']}")
        return answer

    @keyword("Send")
    def send(self, provider: str, method: str = "POST", prompt: str = "What is a tide?") -> dict[str, Any]:
        body: dict[str, Any] = {"model": MODELS[provider], "messages": [{"role": "user", "content": prompt}]}
        if provider == "anthropic":
            body["max_tokens"] = 32
        response = httpx.request(
            method,
            f"{self._urls[provider]}{PATHS[provider]}",
            json=body if method == "POST" else None,
            headers={"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01"},
            timeout=60,
        )
        return {"status": response.status_code, "headers": dict(response.headers), "body": response.json()}

    # ------------------------------------------------------------------------------------------------- processes

    @keyword("Peak Memory Of Serve")
    def peak_memory(self, provider: str) -> int:
        """The most resident memory the serve process has held so far, in bytes (Linux: VmHWM)."""
        status = Path(f"/proc/{self._processes[provider].popen.pid}/status").read_text(encoding="ascii")
        found = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
        assert found, status
        peak = int(found.group(1)) * 1024
        logger.info(f"serve-{provider}: peak resident memory {peak / 2**20:.1f} MiB")
        return peak

    @keyword("Access Log Should Show")
    def access_log_should_show(
        self, name: str, method: str, path: str, status: str, timeout: float = 30.0
    ) -> list[dict[str, str]]:
        """Wait until `name` (emulator, anthropic, openai) has logged the access line of a request (a line is written
        once its answer has been sent, so it may follow the answer by a moment); returns every access line so far,
        each of which must be one: method, path, status, duration, and nothing else."""
        process = self._processes[name]
        deadline = time.monotonic() + float(timeout)
        while True:
            lines = [line for line in process.stderr.splitlines() if line.startswith("lowtide: info: ")]
            parsed: list[dict[str, str]] = []
            for line in lines:
                found = _ACCESS_LINE.match(line)
                assert found, f"not an access log line: {line!r}"
                parsed.append(found.groupdict())
            wanted = {"method": method, "path": path, "status": str(status)}
            if any(wanted.items() <= line.items() for line in parsed):
                logger.info(f"{name}: " + json.dumps(parsed, indent=1))
                return parsed
            assert time.monotonic() < deadline, f"{name} logged no {wanted} in {timeout} s: {parsed}"
            time.sleep(0.05)

    @keyword("Stderr Of")
    def stderr_of(self, name: str) -> str:
        return self._processes[name].stderr


def _read_answer(sock: socket.socket) -> dict[str, Any]:
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
    return {"status": int(status_line.split()[1]), "headers": headers, "body": json.loads(rest[:length])}


def _wait_for_serve(process: Process, timeout: float) -> str:
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
