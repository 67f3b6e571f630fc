"""How `ledger-v5.sqlite3` and `ledger-v5.json` were made: run with lowtide at commit e99e18a (schema 5) on the path,

    PYTHONPATH=<checkout at e99e18a>/src python features/data/ledger_v5.py features/data

It writes a ledger whose requests are in every place a request can be (answered, failed, in a batch the API has, in
an intent, requeued for a retry and sent again, requeued and waiting, back from a refused create, back from an
intent given up, claimed and pending, answered live in a run), and what schema 5's lowtide read from it: each
request's record, each batch's members and attempts, a run's items, and the rows a copy takes. The migration scenario
reads the same from it with the current lowtide.
"""

# pyright: reportCallIssue=false
# (Written against the lowtide of the commit above, whose `record_intent` took its fields as keywords: it is run with
# that lowtide, never this one.)

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path
from typing import Any

from lowtide.ledger.records import BatchState, NewRequest, OutcomeRow, RequestState
from lowtide.ledger.runs import LiveAnswer, NewItem
from lowtide.ledger.sqlite import Ledger


def answer(text: str) -> dict[str, Any]:
    return {"id": f"msg_{text}", "text": text, "stop_reason": "end_turn"}


def main(folder: Path) -> None:
    path = folder / "ledger-v5.sqlite3"
    path.unlink(missing_ok=True)
    ledger = Ledger(path)
    keys = "abcdefghi"
    new = [
        NewRequest(key=k, custom_id=f"c-{k}", actor="old", model="claude-haiku-4-5", params={"prompt": k},
                   max_attempts=3, worst_case_usd=Decimal("0.01"))
        for k in keys
    ]  # fmt: skip
    ledger.claim(new, owner="host:1", until=100.0, now=1.0)
    member = {k: f"c-{k}" for k in keys}

    def intent(batch: str, ks: str, now: float) -> None:
        ledger.record_intent(batch, provider="anthropic", endpoint="https://api.anthropic.com",
                             members=[(k, member[k]) for k in ks], request_bytes=10, owner="host:1", until=100.0,
                             now=now)  # fmt: skip

    intent("b1", "abci", 2.0)
    ledger.record_submitted("b1", provider_batch_id="msgbatch_1", phase="running", now=3.0)
    ledger.record_status("b1", phase="ended", counts={"succeeded": 1}, ended_at=4.0)
    ledger.record_outcomes(
        "b1",
        [
            OutcomeRow("a", RequestState.SUCCEEDED, answer("a"), cost_usd=Decimal("0.001"),
                       live_cost_usd=Decimal("0.002")),
            OutcomeRow("b", RequestState.PENDING, error={"type": "overloaded_error"}),
            OutcomeRow("c", RequestState.FAILED, error={"type": "invalid_request_error", "message": "bad"}),
            OutcomeRow("i", RequestState.PENDING, error={"type": "expired"}),
        ],
        now=5.0,
    )  # fmt: skip
    ledger.requeue(["b", "i"], owner="host:1", until=100.0, now=5.0)
    ledger.record_collected("b1", state=BatchState.COLLECTED, now=5.0)
    intent("b2", "bd", 6.0)
    ledger.record_submitted("b2", provider_batch_id="msgbatch_2", phase="running", now=7.0)
    intent("b3", "e", 8.0)
    ledger.record_refused("b3", note="refused: 400", now=9.0)
    intent("b4", "f", 10.0)
    ledger.record_unknown("b4", note="the create's answer was lost")
    intent("b5", "h", 11.0)
    ledger.record_unknown("b5", note="the create's answer was lost")
    ledger.give_up_intent("b5", note="no batch found", owner="host:2", until=200.0, now=12.0)
    runs = ledger.run_store
    runs.create("run-1", actor="old", configuration={}, options={}, fingerprint="f",
                items=[NewItem(i, None, {"prompt": k}, k) for i, k in enumerate(keys + "j")], now=13.0)  # fmt: skip
    runs.record_live("run-1", [LiveAnswer(9, "j", "old", "claude-haiku-4-5", {"prompt": "j"}, RequestState.SUCCEEDED,
                                          answer("j"), None, Decimal("0.002"))], now=14.0)  # fmt: skip

    expected = what_it_reads(ledger)
    ledger.close()
    (folder / "ledger-v5.json").write_text(json.dumps(expected, indent=1, default=str) + "\n")


def what_it_reads(ledger: Ledger) -> dict[str, Any]:
    """What a lowtide reads from the ledger written by `main` (as JSON holds it)."""
    read = {
        "requests": [_record(r) for r in ledger.requests()],
        "members_and_attempts": {
            b: [sorted(m.items()), sorted([k, list(v)] for k, v in a.items())]
            for b in ("b1", "b2", "b3", "b4", "b5")
            for m, a in [ledger.members_and_attempts(b)]
        },
        "run_items": [[i.key, i.request_state, i.batch_id] for i in ledger.run_store.items("run-1")],
        "copied_requests": [list(row) for chunk in ledger.export_rows("requests") for row in chunk],
        "committed_usd": str(ledger.committed_usd("old")),
    }
    return json.loads(json.dumps(read, default=str))


def _record(record: Any) -> dict[str, Any]:
    fields = asdict(record)
    return {name: fields[name] for name in ("key", "state", "batch_id", "attempts", "max_attempts", "owner",
                                            "owner_until", "response", "error", "cost_usd", "updated_at")}  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]))
