"""What makes a bulk run the run it is: the settings its fingerprint digests beside every job's JSON
(`fingerprint_settings`), and the digest of its input's bytes and those settings (`input_key`), recorded with the run,
by which a resume of the same bytes and settings finds it (`known_run`) without making the fingerprint again."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel

from lowtide.ledger.records import stored_json
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.runs import RunRecord

__all__ = ["INPUT_OPTION", "fingerprint_settings", "input_key", "known_run", "qualified"]

INPUT_OPTION = "input_digest"
"""The run's recorded option holding `input_key` (None: jobs not read from one input, or a run recorded before)."""

# The settings that shape what is sent; the others (polling, ledger, endpoint, key variable) do not make a new run.
_SENT_SETTINGS = (
    "model",
    "system_prompt",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "thinking",
    "tool_choice",
    "output_config",
    "cache_control",
    "extra_params",
)


def fingerprint_settings(
    actor: str,
    configuration: dict[str, Any],
    *,
    defaults: dict[str, Any],
    response_model: type[BaseModel] | None,
    citations: bool,
    live: bool,
) -> dict[str, Any]:
    """A run's settings that make it what it is (with its jobs, its fingerprint)."""
    return {
        "actor": actor,
        "settings": {name: configuration.get(name) for name in _SENT_SETTINGS},
        "defaults": defaults,
        "response_model": qualified(response_model),
        "citations": citations,
        **({"mode": "live"} if live else {}),  # batch runs keep the ids they always had
    }


def input_key(settings: dict[str, Any], digest: str) -> str:
    """The digest of a run's settings (`fingerprint_settings`) and of the input its jobs were all read from
    (`InputDigest`): the same key, the same jobs and settings, so the same fingerprint."""
    return hashlib.sha256(stored_json(settings).encode() + b"\x00" + digest.encode()).hexdigest()


def known_run(store: RunLedger, run_id: str | None, key: str, count: int) -> RunRecord | None:
    """The run of `count` items recorded with `key`: the one of `run_id`, or when none is given (its id derived from
    its fingerprint, which is what is not made again) the one among the ledger's runs whose id is so derived."""
    if run_id is not None:
        record = store.run(run_id)
        found = [record] if record is not None else []
    else:
        found = [record for record in store.runs() if record.id == f"run-{record.fingerprint[:16]}"]
    return next((r for r in found if r.options.get(INPUT_OPTION) == key and r.item_count == count), None)


def qualified(model: type[BaseModel] | None) -> str | None:
    """A response model as the run records it: `module:Class`."""
    return f"{model.__module__}:{model.__qualname__}" if model is not None else None
