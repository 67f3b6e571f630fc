"""What the rebuild scenarios (features/ledger_rebuild.feature) share: any of the providers' batch APIs served by
the emulator on a loopback socket, on the scenario's clock, reached by an actor as a program builds it (its base URL
and its key's variable, the SDK's own HTTP); programs that run on an event loop of their own and are gone after; the
ledger's files deleted as a lost ledger's are; and the emulator's own count of what each API created."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml
from _socket_emulator import SocketEmulator
from _support import World, set_env

from lowtide import Actor
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.store import close_ledgers, open_ledger
from lowtide.rebuild import Plan, Source, look, record, sources_of

__all__ = ["MODELS", "RebuildWorld", "delete_ledger_files", "keys_created"]

T = TypeVar("T")

KEY_VARIABLE = "LOWTIDE_REBUILD_SCENARIO_KEY"
MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5.4-mini",
    "azure_openai": "gpt-4o-mini",
    "groq": "llama-3.1-8b-instant",
    "together": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    "openai_compatible": "gpt-4o-mini",
    "gemini": "gemini-2.5-flash",
    "bedrock": "amazon.nova-micro-v1:0",
    "mistral": "mistral-small-latest",
}
"""Each provider's model (Azure's: a deployment named after its model, as the emulator's resource has)."""
OPTIONS: dict[str, dict[str, Any]] = {
    "": {},
    "sending files": {"mistral": {"batch_inline_bytes": 0}},
}
"""What an example's `options` column names: how the actor's batches go (a Mistral job as an uploaded file, say)."""
_AWS = {
    "AWS_ACCESS_KEY_ID": "AKIDREBUILD",
    "AWS_SECRET_ACCESS_KEY": "rebuild-scenario",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "LOWTIDE_EMULATOR_BEDROCK_MIN_RECORDS": "1",
}
"""Credentials of no meaning for boto3's chain (the emulator checks no signature), and an account that takes jobs of
any size."""


@dataclass
class RebuildWorld:
    """The emulator on a socket, one actor's configuration against it, what the programs did."""

    socket: SocketEmulator
    provider: str = "anthropic"
    configuration: dict[str, Any] = field(default_factory=dict[str, Any])
    identity: str = ""
    """The identity of the ledger that was lost."""
    plan: Plan | None = None
    written: dict[str, int] = field(default_factory=dict[str, int])
    asked: dict[str, Any] = field(default_factory=dict[str, Any])
    prompts: dict[str, str] = field(default_factory=dict[str, str])

    @classmethod
    def serve(cls, w: World, seconds: float) -> RebuildWorld:
        """The emulator on a loopback socket, on the scenario's clock, its batches taking `seconds`."""
        socket = SocketEmulator("LOWTIDE_REBUILD_EMULATOR", processing_seconds=seconds, clock=w.clock)
        for variable, value in _AWS.items():
            set_env(w, variable, value)
        socket.serve(w)
        set_env(w, KEY_VARIABLE, "emulator-key")
        return cls(socket)

    def actor_named(self, name: str, provider: str, options: str = "", **extra: Any) -> dict[str, Any]:
        """An actor's configuration as a program's actor file gives it: the provider at the emulator's address."""
        provider_options = {**OPTIONS[options]}
        if provider == "bedrock":
            bucket = {
                "s3_bucket": "lowtide-batch",
                "role_arn": "arn:aws:iam::123456789012:role/rebuild",
                "min_records": 1,
            }
            provider_options["bedrock"] = bucket
        openai_wire = provider in ("openai", "openai_compatible")
        if provider == "openai_compatible":
            # The endpoint as data: the emulator's OpenAI wire at its address, the key in the scenario's variable.
            endpoint = {"base_url": f"{self.socket.url}/v1", "api_key_env": KEY_VARIABLE, "lacks": ["metadata"]}
            provider_options["openai_compatible"] = endpoint
        return {
            "name": name,
            "provider": provider,
            "model": MODELS[provider],
            "max_tokens": 64,
            "batch_processing": "batch",
            "base_url": self.socket.url + ("/v1" if openai_wire else ""),
            "api_key_env": KEY_VARIABLE,
            "batch": {"poll_interval": 10, "coalesce_window": 0.1, "max_wait": 100_000, "reconcile_grace": 2},
            **({"provider_options": provider_options} if provider_options else {}),
            **extra,
        }

    def use(self, provider: str, options: str = "") -> None:
        self.provider = provider
        self.configuration = self.actor_named("crew", provider, options)

    def actor_file(self, w: World) -> Path:
        """The actor file of the programs (what `lowtide ledger rebuild --actors` is given)."""
        path = w.path("actors.yaml")
        path.write_text(yaml.safe_dump({"actors": [self.configuration]}), encoding="utf-8")
        return path

    def program(
        self, w: World, work: Callable[[Actor], Coroutine[Any, Any, T]], *, ledger: LedgerStore | str | None = None
    ) -> T:
        """`work` done by a program of its own: its actor (on the scenario's ledger, or `ledger`), its event loop, gone
        at its end as a process is (what it left running stops; what it recorded stays)."""

        async def run() -> T:
            actor = Actor(self.configuration, clock=w.clock, ledger=ledger)
            try:
                return await work(actor)
            finally:
                await actor.aclose()

        return w.in_program(run)

    def rebuild(self, w: World, into: LedgerStore, *, wait: bool, page: int = 1) -> Plan:
        """The lost ledger rebuilt into `into` through the API (as the command does), its listing read `page`
        batches a page."""

        async def rebuilt(actor: Actor) -> Plan:
            backend = actor.batch_backend()
            backend.list_page = page
            sources: list[Source] = sources_of(
                [(backend, actor.name, self.configuration["model"], actor.configuration.batch)]
            )
            plan = await look(sources, self.identity, clock=w.clock, wait=wait)
            if not plan.unseen:
                self.written = record(plan, into)
            return plan

        self.plan = self.program(w, rebuilt)
        return self.plan

    def stats(self) -> dict[str, Any]:
        response = httpx.get(self.socket.url + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    def created(self) -> Counter[str]:
        """How many times each custom id was created, at every API the emulator serves."""
        created: Counter[str] = Counter()
        for name, counted in self.stats().items():
            if name.endswith("created_custom_ids") and isinstance(counted, dict):
                created.update({str(custom_id): int(times) for custom_id, times in counted.items()})
        return created


def keys_created(created: Counter[str]) -> Counter[str]:
    """How many times each key was created: a custom id is its key, `_`, and its ledger's identity."""
    keys: Counter[str] = Counter()
    for custom_id, times in created.items():
        keys[custom_id.rsplit("_", 1)[0]] += times
    return keys


def delete_ledger_files(path: Path) -> None:
    """The ledger's file gone, its -wal and -shm with it (before a checkpoint, what the -wal held is gone too), as a
    lost ledger's are; the process's open store dropped first, as a process that ended holds none."""
    close_ledgers()
    for suffix in ("", "-wal", "-shm"):
        there = path.with_name(path.name + suffix)
        if there.exists():
            os.remove(there)


def the_ledger() -> LedgerStore:
    return open_ledger(os.environ["LOWTIDE_LEDGER"])


async def gather(*calls: Coroutine[Any, Any, Any]) -> list[Any]:
    return list(await asyncio.gather(*calls, return_exceptions=True))
