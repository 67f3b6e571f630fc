*** Settings ***
Documentation       The Anthropic crash tests on a PostgreSQL ledger (tag `postgres`: `nox -s postgres` runs them):
...                 `__init__.robot` says what each checks.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
PostgreSQL Ledger: Killed After The Intent Was Committed, Before The Create Was Sent
    [Tags]    postgres
    anthropic       after-intent          ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed While The Create Is In Flight And The Batch Exists
    [Tags]    postgres
    anthropic       during-create         ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed After The Create Answered, Before Its Batch Id Was Recorded
    [Tags]    postgres
    anthropic       after-create          ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed While Polling The Batch
    [Tags]    postgres
    anthropic       while-polling         ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed While Storing The Results
    [Tags]    postgres
    anthropic       while-streaming       ${STREAMED}        store=postgres
PostgreSQL Ledger: Killed After Every Result Was Stored, Before The Batch Was Said Collected
    [Tags]    postgres
    anthropic       after-results         ${REQUESTS}        store=postgres
