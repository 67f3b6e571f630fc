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
    # The eight official SDKs, each answered by the emulator at the one address.
    The Output Of The Block Holding    genai.Client(api_key="anything"
    ...    anthropic: Emulated reply to "When is high tide?"    openai: Emulated reply to "When is high tide?"
    ...    azure_openai: Emulated reply to "When is high tide?"    gemini: Emulated reply to "When is high tide?"
    ...    bedrock: Emulated reply to "When is high tide?"    mistral: Emulated reply to "When is high tide?"
    ...    groq: Emulated reply to "When is high tide?"    together: Emulated reply to "When is high tide?"
    # The durable agent parks, its process exits, and two `resume --once` processes take it to its end.
    The Output Of The Block Holding    triage.start(    parked
    The Output Of The Block Holding    lowtide agents list    triage-42    finished

The README's Example That Moves The Ledger Into PostgreSQL Runs As Written
    [Documentation]    The one block whose behaviour depends on the store (`lowtide ledger copy` of the default ledger
    ...    into `$DATABASE_URL`, then `lowtide status` on it), after the block that fills the default ledger as a
    ...    reader's holds it (a planner's batch, its answer and a budgeted run). The other blocks act on the SQLite
    ...    default ledger whatever `DATABASE_URL` says: they run once, in the test above; the PostgreSQL ledger's
    ...    behaviour is the `@stores` scenarios' on PostgreSQL and `features/ledger_copy.feature`'s `@postgres` ones.
    [Tags]    postgres
    ${database}=    Create PostgreSQL Database
    Run The README's Examples    ${database}    planner.submit(    lowtide ledger copy
    The Examples Not Run Should Be
    The Output Of The Block Holding    lowtide ledger copy
    ...    Copied 2 request(s), 2 batch(es), 2 result(s), 0 run(s) from
    ...    ledger postgresql://lowtide:***@    plan-issue-42    actor planner: 2 request(s) (collected 2)
