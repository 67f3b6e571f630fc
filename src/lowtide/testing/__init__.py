"""Test doubles for programs that use lowtide, shipped with it (as pydantic-ai ships `TestModel`): typed, documented
and covered by lowtide's own scenarios.

`FakeBatchProvider` is a complete minimal batch provider whose batch API (`FakeBatchAPI`) lives in the test's
memory: register it under a name of the test's choice, make actors of it, and script each request's outcome (`Reply`,
`Failure`, `"expired"`, `"canceled"`), batch phases over the test's virtual clock, and creates that go wrong. No
HTTP and no key; for the providers' own APIs over HTTP, `lowtide.emulator` is the fake. It is written against
`lowtide.providers` alone, so it doubles as an example of a provider.
"""

from lowtide.testing.fake_api import Ending, Failure, FakeBatch, FakeBatchAPI, FakeOutcome, FakeRequest, Reply
from lowtide.testing.fake_provider import FakeBatchBackend, FakeBatchCodec, FakeBatchProvider

__all__ = [
    "Ending",
    "Failure",
    "FakeBatch",
    "FakeBatchAPI",
    "FakeBatchBackend",
    "FakeBatchCodec",
    "FakeBatchProvider",
    "FakeOutcome",
    "FakeRequest",
    "Reply",
]
