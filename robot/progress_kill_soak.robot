*** Settings ***
Test Timeout        ${TEST_TIMEOUT}    # stuck, not slow
Documentation       The progress-timed soak: the shapes of the reliability trials. Each client runs an Anthropic actor
...                 and a Mistral actor at once, reaching one `lowtide emulator` at the same address with the same key,
...                 each with keys of its own. Its clients are SIGKILLed at moments timed by their progress, read from
...                 outside (`_progress.py`): right after the API committed a create of theirs (the emulator's
...                 counters), while they poll a batch, right after their first answer is stored (the ledger, opened
...                 read-only by the test), and at random. Every round then runs a finishing client per group of keys
...                 and asks each provider's API, through its own SDK, whether every request was created exactly once
...                 and at its own provider; every key must be answered with the reply to its own question, and no
...                 batch may be left outstanding in the ledger.
...
...                 The PostgreSQL variant (tagged `postgres`: `nox -s postgres`) runs three hosts on one database of a
...                 throwaway cluster, sharing keys so that they gather and wait on each other's batches. Seeded: a
...                 failing round names the seed and round that replay it. The `soak` nox session runs 200 rounds of
...                 each (`docs/reliability.md`); tests tagged `long` run there only.

Library             ProgressSoakLibrary.py
Library             PostgresLibrary.py

Suite Setup         Start Emulator    processing_seconds=${PROCESSING}
Suite Teardown      Clean Up And Stop PostgreSQL


*** Variables ***
${ROUNDS}           ${NONE}    # two rounds on SQLite, one of three hosts on PostgreSQL (about 2 minutes each)
${FIRST_ROUND}      1
${SEED}             lowtide
${PROCESSING}       1
${TEST_TIMEOUT}     10 minutes


*** Test Cases ***
One Process Of Two Providers At One Address, Killed By Its Progress, Pays Once At Each Provider
    Run Progress Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1

Two Processes Of Two Providers On One Ledger, Killed By Their Progress, Pay Once At Each Provider
    [Tags]    long
    Run Progress Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2

Three Hosts Of Two Providers On One PostgreSQL Ledger, Sharing Keys And Killed By Their Progress, Pay Once
    [Tags]    postgres
    Run Progress Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=3    store=postgres


*** Keywords ***
Clean Up And Stop PostgreSQL
    Clean Up
    Stop PostgreSQL
