*** Settings ***
# Stuck, not slow: each block has a hang bound of its own (5 minutes, features/support/readme.py); its 22 blocks in a
# row, each starting processes, took over 10 minutes at a load average of 20, and a run may first wait for another
# run of the examples on the machine to give back the ports they name (the postgres session's): the whole test has 45.
Test Timeout        45 minutes
Documentation       README.md's examples run as written: every python and bash block, in order, in a copy of the
...                 checkout, against a `lowtide emulator` process (its address, keys, a home directory of their own
...                 and a short poll interval given by the environment, never by editing a block). The pydantic-ai
...                 and LangChain examples run in those frameworks' nox sessions
...                 (`features/integrations/readme_examples.feature`); the PostgreSQL one in the `postgres` session.

Library             ReadmeLibrary.py
Library             PostgresLibrary.py

Test Teardown       Clean Up README Examples


*** Test Cases ***
Every Example In The README Runs As Written
    Run The README's Examples
    The Examples Not Run Should Be
    ...    the test suite itself
    ...    it reads the batches of a lost ledger at the real APIs (robot/ledger_rebuild.robot runs it against the emulator)
    ...    needs pydantic-ai
    ...    needs langchain
    ...    needs postgres

The README's Examples Run With A PostgreSQL Ledger Too
    [Documentation]    The same blocks in order, and the one that moves the ledger into a PostgreSQL database.
    [Tags]    postgres
    ${database}=    Create PostgreSQL Database
    Run The README's Examples    ${database}
    The Examples Not Run Should Be
    ...    the test suite itself
    ...    it reads the batches of a lost ledger at the real APIs (robot/ledger_rebuild.robot runs it against the emulator)
    ...    needs pydantic-ai
    ...    needs langchain
