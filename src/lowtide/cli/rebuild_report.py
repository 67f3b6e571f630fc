"""What `lowtide ledger rebuild` says: the identities found (`surveyed`), what a rebuild records and what it cannot
(`planned`, said before anything is written), why it stopped (`refused_unseen`), and what it wrote (`written`); as
text, or as JSON (`--json`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from lowtide.batching.backend import RemoteBatch
from lowtide.rebuild import Counted, Owner, Plan, Source, Survey

__all__ = ["planned", "refused_unseen", "surveyed", "written"]

_OTHERS = {
    Owner.HASHED: "custom ids all hashed: whose ledger they were cannot be read",
    Owner.UNSEEN: "still running: nothing of them can be read until they end",
    Owner.GONE: "ended, and nothing of them can be read any more",
}


def _when(moment: float | None) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "-"


def _account(source: Source) -> str:
    return f"{source.provider} at {source.endpoint}"


def _counted(counted: Counted) -> dict[str, Any]:
    return {"batches": counted.batches, "requests": counted.requests, "newest": counted.newest}


def _json(value: dict[str, Any]) -> str:
    from lowtide.bulk.outputs.results import exact_json

    return exact_json(value, indent=True)


def surveyed(found: Sequence[Survey], *, json_output: bool) -> str:
    """The identities the custom ids of each account's batches carry, newest first, for the user to choose."""
    if json_output:
        return _json(
            {
                "accounts": [
                    {
                        "provider": seen.source.provider,
                        "endpoint": seen.source.endpoint,
                        "identities": {identity: _counted(c) for identity, c in _newest_first(seen.identities)},
                        **{str(owner): _counted(c) for owner, c in seen.others.items()},
                    }
                    for seen in found
                ]
            }
        )
    lines = ["The identities of the ledgers whose batches the providers' APIs hold (a ledger's identity is in every"
             " custom id it gives):"]  # fmt: skip
    for seen in found:
        lines.append(f"  {_account(seen.source)}:")
        if not seen.identities and not seen.others:
            lines.append("    no batch of lowtide's")
        for identity, counted in _newest_first(seen.identities):
            newest = _when(counted.newest)
            lines.append(f"    {identity}  {counted.batches} batch(es), {counted.requests} request(s), newest {newest}")
        for owner, counted in seen.others.items():
            lines.append(f"    ({owner})  {counted.batches} batch(es), {counted.requests} request(s): {_OTHERS[owner]}")
    lines.append("Nothing was written. Choose the lost ledger's identity and run again with --identity ID.")
    return "\n".join(lines)


def _newest_first(identities: dict[str, Counted]) -> list[tuple[str, Counted]]:
    return sorted(identities.items(), key=lambda item: -(item[1].newest or 0.0))


def _batches(batches: Sequence[tuple[Source, RemoteBatch]]) -> str:
    return ", ".join(f"{batch.id} ({source.provider}, {batch.counts.total} request(s))" for source, batch in batches)


def refused_unseen(plan: Plan) -> str:
    """Why nothing was written: batches still running whose requests cannot be read."""
    requests = sum(batch.counts.total for _, batch in plan.unseen)
    return (
        f"lowtide: {len(plan.unseen)} batch(es) still running hold {requests} request(s) that cannot be read until"
        f" they end (their API shows a batch's requests only in its results): {_batches(plan.unseen)}. Whose they"
        " are, and which requests they hold, is unknown, and a rerun that did not know them would send those requests"
        " again. Nothing was written: run again with --wait (it waits for them to end, then records them), or once"
        " they have ended."
    )


def _notes(plan: Plan) -> list[str]:
    """What a rebuild cannot recover, or records only in part: said before anything is written."""
    notes: list[str] = []
    rebuilt = plan.rebuilt
    if plan.hashed:
        requests = sum(len(batch.requests) for batch in plan.hashed)
        notes.append(
            f"{len(plan.hashed)} batch(es) ({requests} request(s)) carry only hashed custom ids (keys the provider's id"
            " rule does not take as they are), so whose ledger they were cannot be read: recorded all the same, each"
            " request under its custom id; a rerun's request takes one over only if it is that request (its key and"
            f" this ledger's identity make that custom id): {', '.join(b.remote.id for b in plan.hashed)}."
        )
    if rebuilt.left_out["retry"]:
        notes.append(
            f"{rebuilt.left_out['retry']} request(s) whose last attempt ended in an error a later attempt may not meet"
            " (an expiry, a server's error), with attempts left, are not recorded: unanswered, they are sent by the"
            " rerun, as the lost ledger's program would have sent them again."
        )
    if rebuilt.left_out["unanswered"]:
        notes.append(
            f"{rebuilt.left_out['unanswered']} request(s) their ended batches gave no result for are not recorded:"
            " the rerun sends them."
        )
    gone = [batch for batch in plan.found if batch.results_gone]
    if gone:
        notes.append(
            f"Cannot be recovered: the {rebuilt.left_out['gone']} request(s) of {len(gone)} ended batch(es) of this"
            " ledger whose results the API no longer holds (past its retention); a rerun sends them, and pays for"
            f" them, again: {', '.join(batch.remote.id for batch in gone)}."
        )
    if plan.gone:
        requests = sum(batch.counts.total for _, batch in plan.gone)
        notes.append(
            f"Cannot be recovered: {len(plan.gone)} ended batch(es) ({requests} request(s)) of which the APIs show"
            f" nothing any more (past their retention), so whose they were cannot be told: {_batches(plan.gone)}."
            " If they were the lost ledger's, a rerun sends their requests again."
        )
    return notes


def _plan_json(plan: Plan) -> dict[str, Any]:
    rebuilt = plan.rebuilt
    return {
        "identity": plan.identity,
        "batches": [
            {
                "provider": batch.source.provider,
                "endpoint": batch.source.endpoint,
                "batch_id": batch.remote.id,
                "status": batch.remote.status,
                "ended": batch.ended,
                "requests": len(batch.requests),
                "hashed": batch.owner is Owner.HASHED,
            }
            for batch in plan.found
        ],
        "answered": rebuilt.answered,
        "waiting": rebuilt.waiting,
        "unkeyed": rebuilt.unkeyed,
        "left_for_the_rerun": dict(rebuilt.left_out),
        "gone": [{"provider": s.provider, "batch_id": b.id, "requests": b.counts.total} for s, b in plan.gone],
        "other_identities": {identity: _counted(c) for identity, c in plan.others.items()},
    }


def planned(plan: Plan, *, dry_run: bool, json_output: bool) -> str:
    """What the rebuild records (or, `dry_run`, would), account by account, and what it cannot."""
    if json_output:
        return _json({"dry_run": dry_run, **_plan_json(plan)})
    if not plan.found:
        lines = [f"No batch of the ledger {plan.identity} is held by the providers' APIs: there is nothing to rebuild."]
        if plan.others:
            found = ", ".join(sorted(plan.others))
            lines.append(f"The batches found carry other identities ({found}): lowtide ledger rebuild lists them.")
        lines += _notes(plan)
        lines.append("Nothing was written.")
        return "\n".join(lines)
    would = "would record" if dry_run else "records"
    lines = [f"The rebuild of the ledger {plan.identity} {would}:"]
    accounts: dict[int, list[Any]] = {}
    for batch in plan.found:
        accounts.setdefault(id(batch.source), [batch.source, [], []])[1 if batch.ended else 2].append(batch)
    for source, ended, running in accounts.values():
        lines.append(
            f"  {_account(source)}: {len(ended)} ended batch(es) ({sum(len(b.requests) for b in ended)} request(s)),"
            f" {len(running)} running ({sum(len(b.requests) for b in running)} request(s))"
        )
        for batch in sorted([*ended, *running], key=lambda b: b.remote.created_at):
            remote, hashed = batch.remote, ", its custom ids hashed" if batch.owner is Owner.HASHED else ""
            created = _when(remote.created_at)
            lines.append(
                f"    {remote.id}  {remote.status}, created {created}, {len(batch.requests)} request(s){hashed}"
            )
    rebuilt = plan.rebuilt
    lines.append(
        f"  {rebuilt.requests} request(s) in {rebuilt.batches} batch(es): {rebuilt.answered} answered,"
        f" {rebuilt.waiting} in batches still running"
        + (f" ({rebuilt.unkeyed} of them keyed by their custom ids alone)" if rebuilt.unkeyed else "")
    )
    lines += [f"  {note}" for note in _notes(plan)]
    if plan.others:
        lines.append(f"  Left alone: the batches of other ledgers ({', '.join(sorted(plan.others))}).")
    if dry_run:
        lines.append("Nothing was written (--dry-run).")
    return "\n".join(lines)


def written(plan: Plan, location: str, counts: dict[str, int], *, json_output: bool) -> str:
    """What was written, and what to do next."""
    if json_output:
        return _json({"ledger": location, "rows": counts, **_plan_json(plan)})
    return (
        f"Recorded {counts.get('batches', 0)} batch(es), {counts.get('requests', 0)} request(s) and"
        f" {counts.get('results', 0)} result(s) in {location}, which now has the identity {plan.identity}. Run your"
        " program again with this ledger: it is answered from what was answered, waits for the batches still running,"
        " and sends only what was never sent."
    )
