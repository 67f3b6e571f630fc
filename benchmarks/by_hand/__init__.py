"""The official SDK of each provider driven by hand: what a careful user of it writes to run one batch (create,
poll, read the results), the baseline lowtide is measured against. One module per provider, `<provider>_batches.py`
(not named as the SDK it imports), each with its `BY_HAND`.

A provider's module holds everything the benchmark must know of that provider's API (its model, the SDK to import,
its batch list for the phases, the emulator's count of custom ids created); the orchestrator knows none of it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from by_hand.floor import Respond
    from harness import Emulator

Outcome = tuple[float, float, dict[str, str]]
"""A contender's run: when it started (epoch seconds), its wall seconds, and the answer texts by key."""
ByHandRun = Callable[[str, int, float], Coroutine[Any, Any, Outcome]]
"""One batch of `n` requests at the emulator's root URL, polled every `poll_interval` seconds."""


class FloorRun(Protocol):
    """The floor's run of one batch (`floor.FloorLedger` at `ledger`), and with `respond` the contract's work on each
    answer as well (`floor-responses`)."""

    def __call__(
        self, base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
    ) -> Coroutine[Any, Any, Outcome]: ...


PROVIDERS = (
    "anthropic",
    "openai",
    "gemini",
    "azure_openai",
    "bedrock",
    "mistral",
    "groq",
    "together",
    "fireworks",
    "vertex",
)


@dataclass(frozen=True)
class BatchTimes:
    created_at: float
    ended_at: float | None


@dataclass(frozen=True)
class ByHand:
    provider: str
    model: str
    sdk: str
    """The SDK's module: imported before a contender's baseline is taken, so "at start" includes it."""
    base_path: str
    """What lowtide's `base_url` adds to the emulator's root for this provider."""
    raw_sdk: ByHandRun
    batch_times: Callable[[Emulator], list[BatchTimes]]
    """The batches the emulator holds, with their create and end times (for the phases)."""
    created_ids_stat: str | None
    """The emulator's stats entry counting each custom id created (none: not checked)."""
    floor: FloorRun | None = None
    """The least a durable client must do with the same API calls (`floor.FloorLedger`): Anthropic's, the
    OpenAI-shaped APIs' (`openai_shaped.floor_batch`), Mistral's and Together's; with `respond`, `floor-responses`."""
    bulk: Callable[[str, int, float, int, int], Coroutine[Any, Any, Outcome]] | None = None
    """The bulk run by hand (Anthropic's only)."""
    provider_options: dict[str, Any] = field(default_factory=dict[str, Any])
    """lowtide's actor's `provider_options` for this provider (Bedrock's S3 bucket and role, say)."""
    environment: dict[str, str] = field(default_factory=dict[str, str])
    """What every contender's process has in its environment (AWS credentials of no meaning, say): both read it."""


def by_hand(provider: str) -> ByHand:
    by_hand_of: ByHand = importlib.import_module(f"by_hand.{provider}_batches").BY_HAND
    return by_hand_of


def chat_text(line: dict[str, Any]) -> str:
    """The answer text of one Chat Completions result line (`response.body.choices[0].message.content`), the shape
    of the OpenAI-compatible batch APIs' output files (Azure OpenAI, Groq, Together) and of Mistral's."""
    body = cast("dict[str, Any]", line["response"]["body"])
    return str(body["choices"][0]["message"]["content"] or "")
