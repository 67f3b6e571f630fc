"""A run's input known again by its bytes (`InputDigest`): the digest of the raw bytes its jobs were read from and of
what reading them depended on, so that a resumed run whose input and settings are byte for byte the ones it was
recorded with is found without checking and fingerprinting every job again (the fingerprint needs each job's JSON).

The digest is taken as the loader reads (`jsonl.jsonl_inputs`, `csv_rows.load_csv`): the bytes digested are the
bytes the jobs were made from, whatever the file holds by the time the run looks.
"""

from __future__ import annotations

import hashlib

from lowtide._version import __version__
from lowtide.ledger.records import stored_json

__all__ = ["InputDigest"]


class InputDigest:
    """The digest of an input's raw bytes, fed as a loader reads them (`update`), and of what reading them depended on
    (`reading`, which the loader says first: the format and its options, the folder a job's relative file path is
    found in; and the version of lowtide, whose loaders made the jobs): the same digest, the same jobs. Given to a
    loader, then to `BulkRun.add_jobs` with the jobs it read."""

    __slots__ = ("_hash",)

    def __init__(self) -> None:
        self._hash = hashlib.sha256(f"lowtide {__version__}\x00".encode())

    def reading(self, **how: str | None) -> None:
        """What the bytes that follow are read as."""
        self._hash.update(stored_json(how).encode() + b"\x00")

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
