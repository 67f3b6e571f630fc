"""`EnvelopeCodec`: the mechanics of a token-priced codec whose batch input is JSONL, a line a request, the custom id
and the stored body each under a field its provider names, and whose custom ids are `ledger_custom_id`'s; plus the
outcomes every such codec reads alike (a whole batch's cancel or expiry, a line it cannot read). Each provider's
codec gives its own field names, id rule and codes, and reads its own answers and errors."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, cast

from pydantic import BaseModel

from lowtide.batching.backend import ResultLine, Settled
from lowtide.batching.token_priced import TokenPricedCodec
from lowtide.core.custom_ids import CustomIdParts, ledger_custom_id, parts_of_ledger_custom_id
from lowtide.errors import BatchRequestCanceled, BatchRequestExpired, BatchRequestUnreadable
from lowtide.messages.structured import parse_response
from lowtide.types import ActorResponse

__all__ = ["EnvelopeCodec", "ended_outcome", "unreadable_outcome"]


class EnvelopeCodec(TokenPricedCodec):
    """A codec whose input lines are `{<id_field>: <custom id>, <body_field>: <stored body>}` and whose batches take
    one model each. A subclass names the fields and its id rule (`plain_id`, `hashed`, `digits`, as
    `ledger_custom_id` takes them) in its class statement, and says the rest (its requests, its bodies' models and
    bounds, its lines)."""

    id_field: ClassVar[str]
    """The field of an input (and result) line that holds its custom id."""
    body_field: ClassVar[str]
    """The field of an input line that holds the stored body."""
    plain_id: ClassVar[re.Pattern[str]]
    """What the API takes as a custom id: a key and ledger that fit it travel as they are."""
    hashed: ClassVar[str]
    """The prefix of a custom id made as a digest (a character of it outside `plain_id`)."""
    digits: ClassVar[int]
    """How many hex digits of the digest a hashed custom id holds."""

    def __init_subclass__(
        cls, *, id_field: str, body_field: str, plain_id: re.Pattern[str], hashed: str = "h:", digits: int = 48
    ) -> None:
        """A provider's codec names its line's fields and its id rule in its class statement:
        `class MyCodec(EnvelopeCodec, id_field="custom_id", body_field="body", plain_id=...)`."""
        super().__init_subclass__()
        cls.id_field, cls.body_field, cls.plain_id, cls.hashed, cls.digits = (
            id_field,
            body_field,
            plain_id,
            hashed,
            digits,
        )

    def custom_id_for(self, key: str, ledger: str | None) -> str:
        """The key and the ledger's identity, `<key>_<ledger>`, when that is a plain id (the key alone outside any
        ledger); otherwise `hashed` and a digest of both, which a plain id can never equal."""
        return ledger_custom_id(key, ledger, plain=self.plain_id, hashed=self.hashed, digits=self.digits)

    def custom_id_parts(self, custom_id: str) -> CustomIdParts | None:
        return parts_of_ledger_custom_id(custom_id, plain=self.plain_id, hashed=self.hashed, digits=self.digits)

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """A line of the JSONL input: its custom id and its body as stored."""
        custom_id, body = line.get(self.id_field), line.get(self.body_field)
        if not isinstance(custom_id, str) or not isinstance(body, Mapping):
            return None
        return custom_id, cast("Mapping[str, Any]", body)

    def request_size(self, custom_id: str, params_json: str) -> int:
        envelope = len(f'{{"{self.id_field}":"","{self.body_field}":}}') + 1  # the newline after it
        return len(params_json.encode()) + len(custom_id.encode()) + envelope

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The JSONL input: a line a request, the stored body under `body_field`, its custom id under `id_field`."""
        head, middle = f'{{"{self.id_field}":"', f'","{self.body_field}":'
        return "".join(f"{head}{custom_id}{middle}{params}}}\n" for custom_id, params in entries).encode()

    def batch_group(self, params: Mapping[str, object] | str, model: str) -> str:
        """A batch takes one model (its create names it)."""
        return model

    def custom_id_of(self, line: ResultLine) -> str | None:
        custom_id = line.get(self.id_field)
        return custom_id if isinstance(custom_id, str) else None

    def parse(self, response: ActorResponse[object], response_model: type[BaseModel]) -> ActorResponse[object]:
        return parse_response(response, response_model)


def ended_outcome(
    code: object, batch_id: str, custom_id: str, *, canceled: str, expired: str
) -> BatchRequestCanceled | BatchRequestExpired | None:
    """The outcome of a request its whole batch ended unanswered, when `code` is the code lowtide writes for that
    (`canceled`, `expired`: the provider's `unanswered_line`); None for any other code."""
    if code == canceled:
        return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id)
    if code == expired:
        return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id)
    return None


def unreadable_outcome(line: ResultLine, batch_id: str, custom_id: str, reason: str) -> tuple[Settled, None]:
    """A result line read as JSON but holding none of what its provider answers with: its request fails alone, the
    line kept as it came (a newer lowtide may read it)."""
    return BatchRequestUnreadable(
        batch_id=batch_id,
        custom_id=custom_id,
        raw_line=json.dumps(line, ensure_ascii=False, separators=(",", ":")),
        reason=reason,
    ), None
