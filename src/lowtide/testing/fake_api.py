"""`FakeBatchAPI`: a provider's batch API in the test's memory, what a real service keeps on its side: the batches
created, each request's outcome as the test scripts it, batch phases over the test's clock, and creates that go
wrong (an answer lost, a create lost on its way, a refusal). No HTTP: `FakeBatchProvider` reaches it through the
codec and backend seam.

Its shapes are its own, as any provider's are: a request is named by `<key>@<ledger identity>`, a batch is
`validating`, then `in_progress`, then `ended` (or `canceling` until it is), and a result line says `reply`,
`failure` or `ended` (expired, canceled).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from lowtide import APIConnectionError, Clock, InvalidRequestError

__all__ = ["Ending", "Failure", "FakeBatch", "FakeBatchAPI", "FakeOutcome", "FakeRequest", "Reply", "key_of"]

Ending = Literal["expired", "canceled"]
"""A request the API never answered: its batch expired, or was canceled, before it was processed."""


@dataclass(frozen=True)
class Reply:
    """The model answered; `text` None stands for the API's `respond` (by default the prompt, echoed)."""

    text: str | None = None


@dataclass(frozen=True)
class Failure:
    """The API answered this request with an error of its own (`BatchRequestErrored`); `retryable` says whether the
    same request may succeed in a later batch."""

    error_type: str = "rejected"
    message: str = "the fake API refused this request"
    retryable: bool = False


FakeOutcome = Reply | Failure | Ending
"""What one request of a batch comes to, as a test scripts it."""

_Fault = Literal["answer", "create", "refuse"]


@dataclass(frozen=True)
class FakeRequest:
    """One request of a batch, as the fake API received it."""

    key: str
    """The key the request was made under (the custom id's part before its ledger identity)."""
    custom_id: str
    model: str
    prompt: str
    """The text of the conversation's last user turn."""
    system: str | None
    max_tokens: int


@dataclass
class FakeBatch:
    """One batch, as the API keeps it."""

    id: str
    requests: list[FakeRequest]
    created_at: float
    ends_at: float
    intent_id: str | None
    """lowtide's intent id, from the create's metadata, when the API echoes it (`FakeBatchAPI.echoes_intent`)."""
    outcomes: dict[str, FakeOutcome] = field(default_factory=dict[str, FakeOutcome])
    """Each request's outcome by custom id, decided when the batch was created."""
    canceled_at: float | None = None


def key_of(custom_id: str) -> str:
    """The key a fake custom id was made from (`<key>@<ledger identity>`)."""
    return custom_id.rpartition("@")[0]


@dataclass
class FakeBatchAPI:
    """A batch API in memory, driven by `clock` (share it with the actor: a `ManualClock` or `VirtualClock`, so that
    no test waits for real). Every batch ends `processing_seconds` after its create; until then it is validating
    (its first tenth) or in progress.

    Each request's outcome is scripted by its key (`script`); one with no script left is answered by `respond`
    (the prompt, echoed, by default). `price_per_request` is what a request costs at batch prices (twice that live).
    """

    clock: Clock
    processing_seconds: float = 30.0
    respond: Callable[[FakeRequest], str] = lambda request: f"fake: {request.prompt}"
    echoes_intent: bool = True
    """Whether the API keeps lowtide's intent id with the batch (its metadata), so that a create whose answer was
    lost is found exactly; without it, lowtide reconciles by when and how many, then by the batch's results."""
    price_per_request: Decimal = Decimal("0.001")

    batches: dict[str, FakeBatch] = field(default_factory=dict[str, FakeBatch], init=False)
    """Every batch created, by id, oldest first."""
    created: Counter[str] = field(default_factory=Counter[str], init=False)
    """How many times each key was sent in a batch that was created."""
    creates: int = field(default=0, init=False)
    """Creates asked of the API (made, lost on their way, or refused)."""
    _scripts: dict[str, list[FakeOutcome]] = field(default_factory=dict[str, list[FakeOutcome]], init=False, repr=False)
    _faults: list[_Fault] = field(default_factory=list[_Fault], init=False, repr=False)

    # -- what a test arranges --------------------------------------------------------------------------------------

    def script(self, key: str, *outcomes: FakeOutcome) -> None:
        """The outcomes of the request made under `key`, one per batch it travels in (a retried request travels
        again), in order; after them it is answered by `respond`."""
        self._scripts.setdefault(key, []).extend(outcomes)

    def drop_create_answer(self, times: int = 1) -> None:
        """The next `times` creates make their batch, then lose their answer (a dropped connection): lowtide
        cannot tell whether the batch exists, and must find it rather than send its requests again."""
        self._arm("answer", times)

    def drop_create(self, times: int = 1) -> None:
        """The next `times` creates are lost on their way (a dropped connection): no batch is made, and lowtide
        cannot tell; once its grace period has passed with no such batch listed, it sends the requests again."""
        self._arm("create", times)

    def refuse_create(self, times: int = 1) -> None:
        """The next `times` creates are refused (400): nothing is made, and the calls waiting on them get the
        `InvalidRequestError`."""
        self._arm("refuse", times)

    def _arm(self, fault: _Fault, times: int) -> None:
        self._faults.extend(fault for _ in range(times))

    # -- what the provider's backend calls -------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    def create(self, body: bytes, *, intent_id: str) -> FakeBatch:
        """Make a batch of the JSON lines of `body` (`{"custom_id", "body"}`), unless a fault says otherwise."""
        self.creates += 1
        fault = self._faults.pop(0) if self._faults else None
        if fault == "refuse":
            raise InvalidRequestError("The fake API refused the batch.", status_code=400)
        if fault == "create":
            raise APIConnectionError("The connection dropped before the create reached the fake API.")
        now = self.now()
        requests = [_request(json.loads(line)) for line in body.splitlines() if line.strip()]
        batch = FakeBatch(
            # Unique across fake APIs and processes: a ledger holds each provider batch id once.
            id=f"fake-batch-{len(self.batches) + 1:04d}-{uuid.uuid4().hex[:12]}",
            requests=requests,
            created_at=now,
            ends_at=now + self.processing_seconds,
            intent_id=intent_id if self.echoes_intent else None,
        )
        for request in requests:
            script = self._scripts.get(request.key)
            batch.outcomes[request.custom_id] = script.pop(0) if script else Reply()
        self.batches[batch.id] = batch
        self.created.update(request.key for request in requests)
        if fault == "answer":
            raise APIConnectionError("The connection dropped after the fake API created the batch.")
        return batch

    def status(self, batch: FakeBatch) -> str:
        """`validating`, `in_progress`, `canceling` or `ended`, by the clock."""
        now = self.now()
        if now >= batch.ends_at:
            return "ended"
        if batch.canceled_at is not None:
            return "canceling"
        return "validating" if now < batch.created_at + self.processing_seconds / 10 else "in_progress"

    def cancel(self, batch: FakeBatch) -> None:
        """Cancel the batch: it ends at once, its requests canceled before they were processed."""
        if self.status(batch) != "ended":
            batch.canceled_at = batch.ends_at = self.now()

    def outcome(self, batch: FakeBatch, request: FakeRequest) -> FakeOutcome:
        """What `request` came to in its ended batch: canceled when the batch was canceled, else as scripted."""
        scripted = batch.outcomes[request.custom_id]
        return "canceled" if batch.canceled_at is not None and isinstance(scripted, Reply) else scripted

    def results(self, batch: FakeBatch) -> list[dict[str, object]]:
        """The result lines of an ended batch, in the order of its requests."""
        return [self._line(request, self.outcome(batch, request)) for request in batch.requests]

    def _line(self, request: FakeRequest, outcome: FakeOutcome) -> dict[str, object]:
        match outcome:
            case Reply(text=text):
                answer = self.respond(request) if text is None else text
                tokens = {"input": len(request.prompt.split()), "output": len(answer.split())}
                return {"custom_id": request.custom_id, "reply": {"text": answer, "model": request.model, **tokens}}
            case Failure():
                error = {"type": outcome.error_type, "message": outcome.message, "retryable": outcome.retryable}
                return {"custom_id": request.custom_id, "failure": error}
            case "expired" | "canceled":
                return {"custom_id": request.custom_id, "ended": outcome}


def _request(line: Mapping[str, Any]) -> FakeRequest:
    custom_id = str(line["custom_id"])
    body: Mapping[str, Any] = line["body"]
    said = [str(turn["text"]) for turn in body["messages"] if turn["role"] == "user"]
    return FakeRequest(
        key=key_of(custom_id),
        custom_id=custom_id,
        model=str(body["model"]),
        prompt=said[-1] if said else "",
        system=body.get("system"),
        max_tokens=int(body["max_tokens"]),
    )
