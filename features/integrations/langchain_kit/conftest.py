"""The kit's session is checked for what a user of `LowtideChatModel` would see in their logs: an asyncio task or
async generator an actor left behind ("Task was destroyed but it is pending", "Event loop is closed", "exception was
never retrieved") fails the session, after every test has run and the garbage collector has had its turn."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator

import pytest

_LEFT_BEHIND = ("Task was destroyed but it is pending", "Event loop is closed", "exception was never retrieved")


class _Records(logging.Handler):
    """The asyncio logger's records, kept."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="session", autouse=True)
def asyncio_log_stays_quiet() -> Iterator[None]:
    """Fail the session when asyncio logged a task or loop an actor left behind."""
    records = _Records()
    logger = logging.getLogger("asyncio")
    logger.addHandler(records)
    try:
        yield
        gc.collect()  # the models' loops and the generators they hold, gone as in a program that drops them
    finally:
        logger.removeHandler(records)
    messages = [record.getMessage() for record in records.records]
    left = [message for message in messages if any(words in message for words in _LEFT_BEHIND)]
    assert not left, "asyncio logged what an actor left behind:\n" + "\n".join(left)
