*** Settings ***
Documentation       Anthropic's and OpenAI's crash tests:
...                 `__init__.robot` says what each checks.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
Anthropic: Killed After The Intent Was Committed, Before The Create Was Sent
                      anthropic       after-intent          ${REQUESTS}
OpenAI: Killed After The Intent Was Committed, Before The Create Was Sent
                      openai          after-intent          ${REQUESTS}

Anthropic: Killed While The Create Is In Flight And The Batch Exists
                      anthropic       during-create         ${REQUESTS}
Anthropic: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      anthropic       after-create          ${REQUESTS}
Anthropic: Killed While Polling The Batch
                      anthropic       while-polling         ${REQUESTS}
Anthropic: Killed While Storing The Results
                      anthropic       while-streaming       ${STREAMED}
Anthropic: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      anthropic       after-results         ${REQUESTS}
Anthropic: A Create Whose Answer Is Lost Is Reconciled, Not Sent Again
    [Documentation]    The emulator commits the batch and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the batch exists, finds it in the API's list and adopts it.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    anthropic       reconciled with the API's
OpenAI: A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    openai          by its metadata
