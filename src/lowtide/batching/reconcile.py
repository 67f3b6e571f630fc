"""Deciding which of the API's batches an intent with an unknown create outcome is, without ever guessing.

The Message Batches API has no idempotency key and no metadata: a batch can be told apart from another only by
when it was created, how many requests it holds, and (once it has ended) the custom ids in its results. An intent
whose create outcome is unknown may own any listed batch that no ledger record has claimed, was created after the
intent (less the clock skew) and holds as many requests. So may every other unresolved intent of the same size:
one whose create is still in flight (in this process or another sharing the ledger), or another unknown one.

`decide` is the pure rule, applied again on every look until it adopts or sends again:

1. A candidate that an in-flight create could own: wait. That create will come back with its batch id (and the
   batch is claimed, so no longer a candidate) or with an unknown outcome of its own.
2. Exactly one candidate could be this intent's, and no other unresolved intent could own it: adopt it.
3. Several intents, or several candidates, could match: let the candidates end, then read the first custom id
   of each ended one's results (`peek`): the custom id names the request, and the ledger names its intent.
4. No candidate at all: before `reconcile_grace` has passed since the intent, wait; after, the create never took
   effect and the requests are sent again. Never while a candidate that might hold them is unresolved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Action", "Candidate", "Decision", "Unresolved", "could_own", "decide"]


@dataclass(frozen=True, slots=True)
class Unresolved:
    """An intent of the ledger whose batch id is not known."""

    id: str
    request_count: int
    intent_at: float
    in_flight: bool
    """Its create has not come back yet (a live process is waiting for it); else its outcome is unknown."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A batch the API lists that no ledger record has claimed."""

    id: str
    request_count: int
    created_at: float
    ended: bool


Action = Literal["adopt", "peek", "resend", "wait-create", "wait-listing", "wait-end"]


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    """`adopt` the one candidate; `peek` at the ended candidates' results; `resend` the requests; or wait: for a
    create in flight to come back, for the batch to be listed (within the grace period), for candidates to end."""
    candidates: tuple[Candidate, ...] = ()
    """`adopt`: the one batch to adopt; `peek`: the ended candidates whose results say whose they are."""
    reason: str = ""


def could_own(intent: Unresolved, candidate: Candidate, *, skew: float) -> bool:
    """Whether `candidate` may be the batch `intent`'s create made."""
    return candidate.request_count == intent.request_count and candidate.created_at >= intent.intent_at - skew


def decide(
    intent: Unresolved,
    others: Sequence[Unresolved],
    candidates: Sequence[Candidate],
    *,
    now: float,
    grace: float,
    skew: float,
) -> Decision:
    """What to do next for `intent`, given the other unresolved intents and the unclaimed batches the API lists."""
    mine = sorted((c for c in candidates if could_own(intent, c, skew=skew)), key=lambda c: (c.created_at, c.id))
    if not mine:
        if now < intent.intent_at + grace:
            return Decision("wait-listing", reason="no batch of this size listed yet")
        return Decision("resend", reason="no batch of this size listed within the grace period")
    rivals = {c.id: [o for o in others if o.id != intent.id and could_own(o, c, skew=skew)] for c in mine}
    if any(o.in_flight for c in mine for o in rivals[c.id]):
        return Decision("wait-create", reason="a create of the same size is still in flight")
    if len(mine) == 1 and not rivals[mine[0].id]:
        return Decision("adopt", (mine[0],), reason="the only batch this intent can own")
    ended = tuple(c for c in mine if c.ended)
    if ended:
        return Decision("peek", ended, reason="several intents or batches of the same size: read their custom ids")
    return Decision("wait-end", reason="several intents or batches of the same size: waiting for them to end")
